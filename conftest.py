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


#: the files whose tests take minutes (trainer starts, renamed copies of verl): collected first, so that pytest-xdist's
#: file-by-file scheduling (``make test``: ``--dist loadfile``) starts them on both workers at once and the short files
#: fill in around them, instead of one long file starting last on one worker
_LONG_FIRST = ("tests/e2e/test_main_ppo_cpu.py", "tests/e2e/test_separated_cpu.py", "tests/e2e/test_vllm_cpu.py",
               "tests/integration/test_host_safety.py")


def pytest_collection_modifyitems(session, config, items) -> None:
    def rank(item) -> int:
        path = Path(str(item.fspath)).resolve().relative_to(_TESTS.parent).as_posix()
        return _LONG_FIRST.index(path) if path in _LONG_FIRST else len(_LONG_FIRST)

    items.sort(key=rank)  # stable: every file keeps its own order
