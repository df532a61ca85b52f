"""bench/advantage_step.py loaded once as a module for the bench tests (it is a script, not a package).

A helper module of its own name: a second ``conftest.py`` here would clash with tests/conftest.py under
pytest's rootdir imports.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "advantage_step.py"


def load():
    """The ``advantage_step`` module, loaded on first use; registered in ``sys.modules`` before it runs,
    since its dataclasses look their module up."""
    mod = sys.modules.get("advantage_step")
    if mod is None:
        spec = importlib.util.spec_from_file_location("advantage_step", BENCH)
        mod = importlib.util.module_from_spec(spec)
        sys.modules["advantage_step"] = mod
        spec.loader.exec_module(mod)
    return mod
