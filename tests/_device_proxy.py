"""A CPU stand-in for "this tensor lives on the GPU", for the tests of the step's host reads (issue 55).

What it models: a CUDA tensor refuses to become host data (``numpy()``, ``np.asarray``, ``__array__``:
``TypeError: can't convert cuda:0 device type tensor to numpy``) until ``.cpu()`` copies it.  The proxy
refuses those, and ``tolist()`` and ``item()`` as well -- which CUDA allows, with a device sync per call --
so that every host read on the step's path is made deliberately, once, with ``.cpu()`` first.  Scalar
conversions used for control flow and metrics (``bool``, ``int``, ``float``, indexing) are allowed, as on
CUDA.

How: :class:`OnDevice` is a ``torch.Tensor`` subclass (``__torch_function__``).  Every torch op with an
``OnDevice`` input returns ``OnDevice`` (subclass propagation), and so does iterating or indexing one.
Its ``.device`` reads ``cpu:0``, a device the real CPU tensors never report, so a tensor made *with*
``device=x.device`` (a factory, ``.to(x.device)``) is an ``OnDevice`` too, as it would be on the GPU, while
``.cpu()``, ``.to("cpu")`` and ``.to(torch.device("cpu"))`` give a plain tensor.  A factory called without
``device=`` gives a plain CPU tensor: that bug is the factory probe's (test_device_agnostic.py).

The message of the refusal starts as CUDA's does, so a test that expects the real failure matches both.
"""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["DEVICE", "OnDevice", "on_device", "plain"]

#: what ``OnDevice.device`` reports: a CPU device with an index, which no plain CPU tensor reports
DEVICE = torch.device("cpu", 0)

_HOST_READS = {torch.Tensor.numpy, torch.Tensor.__array__, torch.Tensor.tolist, torch.Tensor.item}
_HOST = torch.device("cpu")
_DEVICE_GET = torch.Tensor.device.__get__


def _refuse(func) -> TypeError:
    name = getattr(func, "__name__", str(func))
    return TypeError(
        "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory "
        f"first. (tests/_device_proxy.py: Tensor.{name} on a tensor standing for the GPU)")


def _is_host(device: Any) -> bool:
    """Whether ``device`` (a ``to``/``cpu`` argument) names the plain host, not :data:`DEVICE`."""
    if device is None:
        return False
    if isinstance(device, str):
        device = torch.device(device)
    return isinstance(device, torch.device) and device == _HOST


def _to_target(args, kwargs) -> Any:
    """The device of a ``Tensor.to`` call, or None when it names none (a dtype only, ``other=``...)."""
    if "device" in kwargs:
        return kwargs["device"]
    for a in args[1:]:
        if isinstance(a, (str, torch.device)):
            return a
        if isinstance(a, torch.Tensor):  # .to(other): other's device
            return a.device
    return None


def _wrap(out: Any) -> Any:
    if isinstance(out, torch.Tensor) and not isinstance(out, OnDevice):
        return out.as_subclass(OnDevice)
    if isinstance(out, (tuple, list)):
        return type(out)(_wrap(o) for o in out)
    return out


class OnDevice(torch.Tensor):
    """A CPU tensor standing for one on the GPU (module docstring)."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in _HOST_READS:
            raise _refuse(func)
        if func == _DEVICE_GET:
            return DEVICE
        if func is torch.Tensor.cpu:
            return plain(args[0]).clone()
        if func is torch.Tensor.to and _is_host(_to_target(args, kwargs)):
            return plain(torch.Tensor.to(plain(args[0]), *args[1:], **kwargs))
        if kwargs.get("device") == DEVICE:
            kwargs = {**kwargs, "device": _HOST}
        return super().__torch_function__(func, types, args, kwargs)


class _Factories(torch.overrides.TorchFunctionMode):
    """Tensors made with ``device=DEVICE`` (a factory, ``Tensor.to``) are :class:`OnDevice`."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        target = kwargs.get("device")
        if target is None and func is torch.Tensor.to:
            target = _to_target(args, kwargs)
        if target is not None and torch.device(target) == DEVICE:
            kwargs = {**kwargs, "device": _HOST} if "device" in kwargs else kwargs
            if func is torch.Tensor.to and "device" not in kwargs:
                args = tuple(_HOST if isinstance(a, (str, torch.device)) and torch.device(a) == DEVICE else a
                             for a in args)
            return _wrap(func(*args, **kwargs))
        return func(*args, **kwargs)


def on_device(x: torch.Tensor) -> OnDevice:
    """``x`` as a tensor standing for the GPU (shares its storage)."""
    return x.as_subclass(OnDevice)


def plain(x: torch.Tensor) -> torch.Tensor:
    """``x`` as a plain CPU tensor (shares its storage)."""
    return x.as_subclass(torch.Tensor)


#: enter around a step: factories and ``.to`` calls with ``device=DEVICE`` then give :class:`OnDevice`
factories = _Factories
