"""Repository-level pytest hook: where ``--doctest-modules`` looks.

``pyproject.toml`` turns doctests on for the whole run (``testpaths = ["tests",
"verl_focal"]``).  Every module of the ``verl_focal`` package is imported at collection
and its docstring examples run.  None needs to be ignored: the optional packages (vLLM,
SGLang, Hyperscan) and matplotlib are imported inside the functions that use them.

Under ``tests/`` only ``test_*.py`` (and ``conftest.py``, loaded as a plugin) are
collected: the helper modules there are not doctest material, and some must not be
imported into the test process at all -- ``tests/e2e/verl_cpu_backend`` patches verl's
process-group setup and registers a rollout on import, which only the e2e subprocesses
may do.
"""

from __future__ import annotations

from pathlib import Path

_TESTS = Path(__file__).resolve().parent / "tests"


def pytest_ignore_collect(collection_path: Path, config) -> bool | None:
    if (collection_path.suffix == ".py" and _TESTS in collection_path.resolve().parents
            and not collection_path.name.startswith("test_") and collection_path.name != "conftest.py"):
        return True
    return None
