"""bench/advantage_step.py loaded once as a module for the bench tests (it is a script, not a package)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "advantage_step.py"


@pytest.fixture(scope="session")
def bench():
    """The ``advantage_step`` module; registered in ``sys.modules`` first, since its dataclasses look it up."""
    mod = sys.modules.get("advantage_step")
    if mod is None:
        spec = importlib.util.spec_from_file_location("advantage_step", BENCH)
        mod = importlib.util.module_from_spec(spec)
        sys.modules["advantage_step"] = mod
        spec.loader.exec_module(mod)
    return mod
