"""The regex and Hyperscan backends give identical cue sequences; timeouts and fallback."""

from __future__ import annotations

import random
import sys

import cue_corpus
import pytest

from verl_focal.partition.cues import Extractor, engine, hyperscan_available, load_catalogue, signature

CAT = load_catalogue("math_v1")
needs_hs = pytest.mark.skipif(not hyperscan_available(), reason="Hyperscan not installed (x86-only wheels)")


def _mixed_texts(n=60, seed=0):
    """Shuffled concatenations of corpus lines and catalogue examples, with odd spacing."""
    rng = random.Random(seed)
    lines = [ln for t in cue_corpus.all_texts() for ln in t.splitlines()]
    lines += [s for c in CAT.cues for s in c.positive + c.negative]
    seps = ["\n", " ", "  \n\n", "\t", ". ", "\r\n", ""]
    return ["".join(rng.choice(lines) + rng.choice(seps) for _ in range(rng.randint(1, 40))) for _ in range(n)]


TEXTS = [s for c in CAT.cues for s in c.positive + c.negative] + cue_corpus.all_texts() + _mixed_texts()


@needs_hs
@pytest.mark.parametrize("include_generic", [False, True])
def test_backends_agree_on_examples_corpus_and_mixtures(include_generic):
    rx = Extractor(CAT, backend="regex", include_generic=include_generic)
    hs = Extractor(CAT, backend="hyperscan", include_generic=include_generic)
    for t in TEXTS:
        assert rx.step_labels(t) == hs.step_labels(t), t
        assert rx.sequence(t) == hs.sequence(t), t
    # the comparison is not vacuous
    assert sum(bool(rx.sequence(t)) for t in TEXTS) > len(TEXTS) // 2


def test_skipping_generic_cues_never_changes_a_sequence():
    full = Extractor(CAT, backend="regex", include_generic=True)
    fast = Extractor(CAT, backend="regex")
    assert not fast.include_generic  # math_v1's generic cues rank below every specific one
    assert any("gen" in full.step_labels(t) or "frc" in full.step_labels(t) for t in TEXTS)
    for t in TEXTS:
        assert fast.sequence(t) == full.sequence(t), t


def test_auto_falls_back_to_regex_without_hyperscan(monkeypatch):
    monkeypatch.setitem(sys.modules, "hyperscan", None)  # import hyperscan -> ImportError
    ex = Extractor(CAT, backend="auto")
    assert ex.backend == "regex" and ex.hyperscan_error
    assert ex.sequence(r"Case 1: \binom{4}{2}.") == ["cw"]
    with pytest.raises(RuntimeError, match="backend=auto"):
        Extractor(CAT, backend="hyperscan")


def test_bad_backend_is_named():
    with pytest.raises(ValueError, match="algorithm.cue.backend"):
        Extractor(CAT, backend="re2")


def test_regex_timeout_gives_failure_signature(monkeypatch):
    # A long trace (300 KB) with a tiny budget: extraction must stop, not stall.
    text = ("x = 1 + 1 " * 30_000) + "\nCase 1: done."
    sig = signature(text, "math_v1", backend="regex", timeout=1e-4)
    assert sig == "math_v1:!timeout"
    # with a normal budget the same text is fine
    assert signature(text, "math_v1", backend="regex", timeout=30.0) == "math_v1:cw"


def test_signature_never_raises_on_non_text():
    assert signature(None) == "math_v1:!error"  # type: ignore[arg-type]


def test_normalise_ends_steps_at_lines_and_sentences():
    assert engine.normalise("a.  b\r\n\n  c! d\te? f.g") == b"a.\n b\r\n\n  c!\nd\te?\nf.g"
