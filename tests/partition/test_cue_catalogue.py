"""The packaged cue catalogue: structure, dialect rules and every example it carries."""

from __future__ import annotations

import json

import pytest

from verl_focal.partition.cues import Extractor, hyperscan_available, list_cue_sets, load_catalogue
from verl_focal.partition.cues.catalogue import lint_pattern

BACKENDS = ["regex"] + (["hyperscan"] if hyperscan_available() else [])
CAT = load_catalogue("math_v1")


def test_math_v1_shape():
    assert "math_v1" in list_cue_sets()
    assert CAT.version == "math_v1"
    assert len(CAT.cues) == 27
    kinds = [c.kind for c in CAT.cues]
    assert kinds.count("symbolic") >= 12 and kinds.count("natural") >= 12
    assert len({c.code for c in CAT.cues}) == 27
    # the triggers named in docs/methods.md §6 are covered
    ex = Extractor(CAT, backend="regex")
    for text, code in [(r"a \pmod{7}", "mod"), (r"\binom{5}{2}", "bin"), (r"\sqrt{2}", "rad"), (r"\sum_{k} k", "sum"),
                       (r"\sin x", "trg"), ("Case 1: x is odd.", "cw"), ("Substitute y = 2x.", "sub"),
                       ("By the Pythagorean theorem", "met")]:
        assert ex.matches_step(code, text), (code, text)
    # every cue has examples of both kinds, and generic cues exist and are low priority
    assert all(c.positive and c.negative for c in CAT.cues)
    generic = [c for c in CAT.cues if c.generic]
    assert generic and max(c.priority for c in generic) < min(c.priority for c in CAT.cues if not c.generic)


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_positive_matches_and_every_negative_does_not(backend):
    ex = Extractor(CAT, backend=backend, include_generic=True)
    assert ex.backend == backend
    failures = []
    for c in CAT.cues:
        failures += [("missed", c.code, s) for s in c.positive if not ex.matches_step(c.code, s)]
        failures += [("false hit", c.code, s) for s in c.negative if ex.matches_step(c.code, s)]
    assert failures == []


def test_rank_prefers_priority_then_catalogue_order():
    ex = Extractor(CAT, backend="regex")
    # casework (90) beats binomial (60) in one step; binomial alone labels its own step
    assert ex.step_labels(r"Case 1: \binom{5}{2} ways.") == ["cw"]
    assert ex.step_labels(r"Choose in \binom{5}{2} ways.") == ["bin"]


@pytest.mark.parametrize(
    "pattern,why",
    [
        (r"foo\s+bar", "newline"),
        (r"foo.bar", "'.'"),
        (r"[^a]+", "negated class"),
        (r"(?i)foo", "(?:"),
        (r"(?=x)foo", "(?:"),
        (r"^foo", "anchors"),
        (r"(a)\1", "backreference"),
        ("caf\u00e9", "ASCII"),
    ],
)
def test_lint_rejects_patterns_outside_the_shared_dialect(pattern, why):
    msg = lint_pattern(pattern)
    assert msg is not None and why.lower() in msg.lower()


@pytest.mark.parametrize("pattern", [r"\\sum(?:\b|_)", r"[^=\n]*x", r"a\.b", r"[ \t]+", r"\bcase[ \t]*[0-9]+\b"])
def test_lint_accepts_dialect(pattern):
    assert lint_pattern(pattern) is None


def _write(tmp_path, cues, version="t1"):
    p = tmp_path / "cat.json"
    p.write_text(json.dumps({"version": version, "cues": cues}))
    return str(p)


def _cue(**kw):
    base = dict(name="a", code="a", kind="natural", priority=1, pattern=r"\bfoo\b")
    base.update(kw)
    return base


def test_load_from_path_and_errors(tmp_path):
    load_catalogue.cache_clear()
    cat = load_catalogue(_write(tmp_path, [_cue()]))
    assert cat.version == "t1" and cat.cues[0].code == "a"
    with pytest.raises(ValueError, match="unknown catalogue"):
        load_catalogue("math_v999")
    with pytest.raises(ValueError, match="file not found"):
        load_catalogue(str(tmp_path / "nope.yaml"))
    bad = [
        ([_cue(), _cue(name="b")], "code"),
        ([_cue(kind="other")], "kind"),
        ([_cue(priority="high")], "priority"),
        ([_cue(pattern=r"x*")], "empty string"),
        ([_cue(pattern=r"foo\sbar")], "dialect"),
        ([_cue(pattern=r"(?:foo")], "does not compile"),
        ([_cue(colour="red")], "unknown keys"),
    ]
    for i, (cues, match) in enumerate(bad):
        d = tmp_path / f"b{i}"
        d.mkdir()
        with pytest.raises(ValueError, match=match):
            load_catalogue(_write(d, cues))


@pytest.mark.parametrize(
    "pattern,caseless,expected",
    [
        (r"\bcase[ \t]*[0-9]+\b|\bcasework\b", True, (b"case", b"casework")),
        (r"\\sum(?:\b|_)|\\prod(?:\b|_)", False, (b"\\prod", b"\\sum")),
        (r"\b[a-z]_\{?n\+1\}?[ \t]*=", False, (b"n+1",)),
        (r"\bAM[- \t]?GM\b", True, (b"am",)),
        (r"x?y*z{0,2}", False, None),  # nothing required
        (r"(?:ab|cd)e", False, (b"e",)),
        (r"a{2,3}bc", False, (b"bc",)),
    ],
)
def test_required_literals(pattern, caseless, expected):
    from verl_focal.partition.cues.catalogue import required_literals

    assert required_literals(pattern, caseless) == expected


def test_required_literals_occur_in_every_positive_example():
    from verl_focal.partition.cues.catalogue import required_literals

    for c in CAT.cues:
        lits = required_literals(c.pattern, c.caseless)
        for s in c.positive:
            hay = s.encode().lower() if c.caseless else s.encode()
            assert lits is None or any(lit in hay for lit in lits), (c.code, s)
