"""The demo's verdict rows stay identical byte for byte: the controls section, the equal-pass@1 replication and the
paired claims' replication of two small synthetic runs (tests/_verdict_rows.py), against the rows the code wrote
before the frontier maths moved to verl_focal.lab.stats (tests/stats/data/verdict_rows.md)."""

from pathlib import Path

from _verdict_rows import verdict_rows

PINNED = Path(__file__).parent / "data" / "verdict_rows.md"


def test_verdict_rows_are_the_pinned_bytes():
    rows = verdict_rows()
    for v in ("**better**", "**worse**", "**not detected**", "**outside the grid**", "| holds |", "not established"):
        assert v in rows  # every verdict and both replication states are pinned
    assert rows == PINNED.read_text(encoding="utf-8")
