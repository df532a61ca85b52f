"""A stand-in for Ray on the GPU smoke's machine, which has no Ray (its wheel alone is over the 64 MiB a device call
may carry; docs/gpu.md).  verl imports Ray at module level almost everywhere; the smoke's code paths are in-process
and never start a cluster.  This package gives every ``ray`` and ``ray.*`` name a permissive stand-in: attributes,
calls, decorators (``@ray.remote`` returns what it decorates) and base classes all work, and a Ray call that would
start or reach a cluster (``ray.init``, ``ray.get``, ``ray.put``, ``ray.wait``) raises.  Put ``gpu/stub`` first on
``PYTHONPATH``; never on a machine where Ray is installed for real.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types

__version__ = "0.0.0+verl-focal-stub"
_REFUSED = ("init", "get", "put", "wait", "kill", "get_actor")


class _Meta(type):
    def __getattr__(cls, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return _stand_in(f"{cls.__qualname__}.{name}")

    def __call__(cls, *args, **kwargs):
        if len(args) == 1 and not kwargs and (callable(args[0]) or isinstance(args[0], type)):
            return args[0]  # used as a decorator: @ray.remote, @ray.method(...), ...
        return _stand_in(f"{cls.__qualname__}()")

    def __instancecheck__(cls, obj) -> bool:
        return False

    def __bool__(cls) -> bool:
        return False

    def __iter__(cls):
        return iter(())


def _stand_in(name: str) -> type:
    """A class that is also a permissive value: usable as a base, an annotation, a decorator or a call."""
    return _Meta(name.rsplit(".", 1)[-1], (), {"__qualname__": name, "__module__": "ray"})


def _refuse(name: str):
    def refused(*args, **kwargs):
        raise RuntimeError(f"ray.{name}: this is verl-focal's Ray stand-in (gpu/stub); no cluster can start here")

    return refused


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    if name in _REFUSED:
        return _refuse(name)
    if name == "is_initialized":
        return lambda: False
    return _stand_in(f"ray.{name}")


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Makes any ``ray.<sub>`` module on import: a module whose every attribute is a stand-in."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.startswith("ray.") and fullname not in sys.modules:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        mod = types.ModuleType(spec.name)
        mod.__path__ = []
        mod.__getattr__ = lambda name, _m=spec.name: (_ for _ in ()).throw(AttributeError(name)) if name.startswith(
            "__") else _stand_in(f"{_m}.{name}")
        return mod

    def exec_module(self, module):
        return None


sys.meta_path.insert(0, _Finder())
