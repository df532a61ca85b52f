"""The suite's own layout: pytest imports test files by basename (the test folders have no ``__init__.py``,
rootdir-relative "rootdir" import mode), so two files of one name in two folders stop the whole collection on
the second one ("import file mismatch"); a new file must take a name no other folder uses."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_every_test_file_basename_is_unique():
    by_name: dict[str, list[str]] = defaultdict(list)
    for p in TESTS.rglob("test_*.py"):
        by_name[p.name].append(str(p.relative_to(TESTS)))
    clashes = {n: sorted(ps) for n, ps in by_name.items() if len(ps) > 1}
    assert not clashes, f"test files sharing a basename (rename one): {clashes}"
    assert len(by_name) > 100  # the walk found the suite
