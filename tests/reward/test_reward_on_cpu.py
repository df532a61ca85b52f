"""verl_focal.reward: answer table, key stability, time bound in and off the main thread."""

from __future__ import annotations

import concurrent.futures as cf
import signal
import threading

import pytest

from verl_focal import reward
from verl_focal.grading.extract import extract_choice, last_boxed
from verl_focal.reward import compute_score

MATH = "verl_focal/deepscaler"


@pytest.fixture(autouse=True)
def _one_pool_worker(monkeypatch):
    # 2 shared CPU cores here: one spawned verifier process is enough for these tests
    monkeypatch.setenv("VERL_FOCAL_REWARD_WORKERS", "1")

GPQA = "verl_focal/gpqa_diamond"
KEYS = {"score", "acc", "pred", "verify_timeout"}

# (ground truth, response, expected acc) -- each row is a case a naive string match gets wrong
MATH_TABLE = [
    # fractions
    (r"\frac{1}{2}", r"so the answer is \boxed{\frac12}", 1.0),
    (r"\frac{1}{2}", r"\boxed{\dfrac{1}{2}}", 1.0),
    (r"\frac{1}{2}", r"\boxed{1/2}", 1.0),
    (r"\frac{1}{2}", r"\boxed{0.5}", 1.0),
    (r"\frac{1}{2}", r"\boxed{\frac{1}{3}}", 0.0),
    ("1/2", r"\boxed{\frac{1}{2}}", 1.0),
    # \boxed variants
    ("7", r"\fbox{7}", 1.0),
    ("7", r"\boxed { 7 }", 1.0),
    (r"\frac{1}{2}", r"\boxed{\frac{1}{{2}}}", 1.0),
    (r"\frac{\sqrt{3}}{2}", r"\boxed{\frac{\sqrt{3}}{2}}", 1.0),
    ("2", r"first \boxed{1}, corrected: \boxed{2}", 1.0),  # the LAST box is the answer
    ("1", r"first \boxed{1}, corrected: \boxed{2}", 0.0),
    ("3", r"\boxed{x = 3}", 1.0),
    ("3", r"\boxed{3", 0.0),  # never closed: no answer (see test_truncated_last_box_gives_no_answer)
    # units and degrees
    ("5", r"\boxed{5\text{ cm}}", 1.0),
    ("5", r"\boxed{5 \, \mathrm{cm}}", 1.0),
    (r"30^\circ", r"\boxed{30}", 1.0),
    ("30", r"\boxed{30^\circ}", 1.0),
    (r"10\%", r"\boxed{10}", 1.0),
    ("10", r"\boxed{10\%}", 1.0),
    # digit grouping and LaTeX spacing
    ("1000", r"\boxed{1,000}", 1.0),
    ("1000", r"\boxed{1\,000}", 1.0),
    ("1000", r"\boxed{1{,}000}", 1.0),
    (r"x^2+1", r"\boxed{1 + x^{2}}", 1.0),
    (r"\left(1,2\right)", r"\boxed{( 1 , 2 )}", 1.0),
    ("-3", r"\boxed{-3}", 1.0),
    ("-3", r"\boxed{3}", 0.0),
    (r"\pi", r"\boxed{3.14}", 0.0),
    # no box: math-verify's own extraction on the answer's tail
    (r"\frac{1}{2}", "The final answer is $0.5$.", 1.0),
    ("7", "I could not solve it.", 0.0),
    # reasoning traces: only the text after </think> counts
    ("4", r"<think>maybe \boxed{3}</think> The answer is \boxed{4}.", 1.0),
    ("3", r"<think>maybe \boxed{3}</think> The answer is \boxed{4}.", 0.0),
    ("3", r"<think>maybe \boxed{3} and then the length limit hit", 0.0),
]


@pytest.mark.parametrize("gt,resp,want", MATH_TABLE)
def test_math_table(gt, resp, want):
    out = compute_score(MATH, resp, gt)
    assert set(out) == KEYS
    assert out["acc"] == want, out
    assert out["score"] == out["acc"]
    assert isinstance(out["pred"], str)
    assert out["verify_timeout"] == 0.0


def test_truncated_last_box_gives_no_answer():
    # A response cut at the length limit inside its last box has no answer: an earlier, closed box
    # must not be rewarded (a policy could learn to box a guess early, then ramble).
    early = r"Guess: \boxed{3}. Let me check again ... so the answer is \boxed{\frac{7"
    assert last_boxed(early) is None
    assert last_boxed(r"\boxed{3") is None
    for require_boxed in (False, True):
        out = compute_score(MATH, early, "3", require_boxed=require_boxed)
        assert out["acc"] == 0.0 and out["pred"] == "", out
    # the same response with the box closed is graded on its last box
    assert compute_score(MATH, early + "}}", r"\frac{7}{}")["pred"] == r"\frac{7}"
    assert compute_score(MATH, r"\boxed{\boxed{3}}", "3")["acc"] == 1.0


def test_require_boxed_rejects_unboxed_answer():
    resp = "The final answer is $0.5$."
    assert compute_score(MATH, resp, "1/2")["acc"] == 1.0
    assert compute_score(MATH, resp, "1/2", require_boxed=True)["acc"] == 0.0


def test_pred_is_the_boxed_text():
    assert compute_score(MATH, r"so \boxed{\frac{a}{b}} done", "x")["pred"] == r"\frac{a}{b}"
    assert compute_score(MATH, "nothing here", "x")["pred"] == ""


def test_last_boxed_nested_braces():
    assert last_boxed(r"a \boxed{\frac{1}{\sqrt{2}}} b") == r"\frac{1}{\sqrt{2}}"
    assert last_boxed(r"\boxed{1} \fbox{{2}}") == "{2}"
    assert last_boxed("no box") is None


MC_TABLE = [
    ("B", r"... so \boxed{B}", "B", 1.0),
    ("B", r"\boxed{(B)}", "B", 1.0),
    ("B", r"\boxed{\text{B}}", "B", 1.0),
    ("B", r"\boxed{B. 42 kelvin}", "B", 1.0),
    ("C", r"\boxed{B}", "B", 0.0),
    ("D", "Therefore, the answer is (D).", "D", 1.0),
    ("A", "Answer: A", "A", 1.0),
    ("A", "The answer is **A**", "A", 1.0),
    ("A", "The answer is (B). Wait, no: the answer is (A)", "A", 1.0),
    ("C", r"<think>\boxed{C}</think> \boxed{A}", "A", 0.0),
    ("A", "I do not know", "", 0.0),
    ("A", r"\boxed{42}", "", 0.0),
]


@pytest.mark.parametrize("gt,resp,pred,want", MC_TABLE)
def test_multiple_choice_table(gt, resp, pred, want):
    out = compute_score(GPQA, resp, gt)
    assert set(out) == KEYS
    assert out["pred"] == pred
    assert out["acc"] == want


def test_multiple_choice_via_extra_info():
    out = compute_score("my/other_mc_set", r"\boxed{C}", "C", extra_info={"answer_type": "multiple_choice"})
    assert out["acc"] == 1.0 and out["pred"] == "C"
    # the same response on the math path: "C" is parsed as a symbol and compared to gold "C"
    assert compute_score(MATH, r"\boxed{C}", "D")["acc"] == 0.0


def test_extract_choice_ignores_words_starting_with_letters():
    assert extract_choice("The answer is Because of X") == ""


def test_verl_kwargs_are_accepted():
    # verl passes extra_info with its own fields and sometimes reward_router_address
    out = compute_score(MATH, r"\boxed{2}", "2", extra_info={"num_turns": None, "rollout_reward_scores": {}},
                        reward_router_address=None, reward_model_tokenizer=None)
    assert out["acc"] == 1.0


def test_bad_timeout_is_rejected():
    with pytest.raises(ValueError, match="timeout_s"):
        compute_score(MATH, r"\boxed{2}", "2", timeout_s=0)


# 2^(2^(2^(2^2))) vs 3^(3^(3^3)): sympy spends well over 5 s comparing these (measured), so a
# small bound must cut it short.
SLOW_GT = r"2^{2^{2^{2^{2}}}}"
SLOW_RESP = r"\boxed{3^{3^{3^{3}}}}"


def test_time_bound_main_thread_and_outer_alarm_restored():
    fired = []
    old = signal.signal(signal.SIGALRM, lambda *a: fired.append(1))
    signal.setitimer(signal.ITIMER_REAL, 30.0)
    try:
        out = compute_score(MATH, SLOW_RESP, SLOW_GT, timeout_s=0.5)
        remaining, _ = signal.getitimer(signal.ITIMER_REAL)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert out == {"score": 0.0, "acc": 0.0, "pred": "", "verify_timeout": 1.0}  # cut short by the bound
    assert 0.0 < remaining <= 30.0  # the caller's alarm is armed again (not reset, not lost)
    assert not fired


def test_off_main_thread_uses_pool_and_is_bounded():
    """verl's reward loop calls the scorer from an executor thread, where signals cannot be set."""
    with cf.ThreadPoolExecutor(max_workers=2) as ex:
        good = ex.submit(compute_score, MATH, r"\boxed{\frac12}", r"\frac{1}{2}").result(timeout=120)
        slow = ex.submit(compute_score, MATH, SLOW_RESP, SLOW_GT, timeout_s=0.5).result()
    assert good["acc"] == 1.0 and good["verify_timeout"] == 0.0
    assert slow["verify_timeout"] == 1.0 and slow["acc"] == 0.0  # cut short: it never finishes by itself


def test_hard_bound_kills_a_stuck_worker(monkeypatch):
    """A worker that never returns (C-level hang) is abandoned after timeout + grace and the
    pool is rebuilt; the next call works."""
    result: dict = {}

    def call():
        # the inner alarm (60 s) cannot fire first: only the outer wait (2 s) can end this call
        result["out"] = compute_score(MATH, SLOW_RESP, SLOW_GT, timeout_s=60.0, hard_timeout_s=2.0)

    th = threading.Thread(target=call)
    th.start()
    th.join()
    assert result["out"]["verify_timeout"] == 1.0  # the hard bound ended it: nothing else could
    th2_out = {}
    th2 = threading.Thread(target=lambda: th2_out.setdefault("o", compute_score(MATH, r"\boxed{3}", "3")))
    th2.start()
    th2.join(120)
    assert th2_out["o"]["acc"] == 1.0


def test_cue_signature_matches_partitioner():
    from verl_focal.partition.cues import signature

    text = r"Case 1: substitute $x=2$. By the Pythagorean theorem, \sqrt{2}. \boxed{2}"
    out = compute_score(MATH, text, "2", cue_set="math_v1")
    assert set(out) == KEYS | {"cue_sig"}
    assert out["cue_sig"] == signature(text, "math_v1")
    assert out["cue_sig"].startswith("math_v1:")
    # from a verl reward thread too (the scorer runs the signature in the calling thread)
    with cf.ThreadPoolExecutor(max_workers=1) as ex:
        assert (
            ex.submit(compute_score, MATH, text, "2", cue_set="math_v1").result(timeout=120)["cue_sig"]
            == out["cue_sig"]
        )


def test_unknown_cue_set_is_a_configuration_error():
    with pytest.raises(ValueError):
        compute_score(MATH, r"\boxed{2}", "2", cue_set="no_such_catalogue_v9")


def test_a_wrong_answer_gets_a_residual_signature_without_extraction(monkeypatch):
    """Only correct rollouts are partitioned, so a wrong answer's text is not read: it gets the
    failure form '<version>:!wrong' (same keys for every response, as verl requires)."""
    from verl_focal.partition import cues
    from verl_focal.partition.cues import parse_signature, signature

    text = r"Case 1: substitute $x=2$. By the Pythagorean theorem, \sqrt{2}. \boxed{3}"
    compute_score(MATH, text, "2", cue_set="math_v1")  # warm: the cue set is validated once per process
    calls = []
    real = cues.signature
    monkeypatch.setattr(cues, "signature", lambda *a, **k: calls.append(a) or real(*a, **k))
    out = compute_score(MATH, text, "2", cue_set="math_v1")
    assert out["acc"] == 0.0 and set(out) == KEYS | {"cue_sig"}
    assert out["cue_sig"] == "math_v1:!wrong" and parse_signature(out["cue_sig"]) == ("math_v1", [], "wrong")
    assert calls == []  # nothing extracted
    right = compute_score(MATH, text.replace("boxed{3}", "boxed{2}"), "2", cue_set="math_v1")
    assert right["cue_sig"] == signature(text.replace("boxed{3}", "boxed{2}"), "math_v1") and calls


def test_cue_signature_failure_on_one_response_is_recoverable(monkeypatch):
    """An extraction that raises on one response gives the residual form '<version>:!error'; the
    answer is still scored."""
    from verl_focal.partition import cues

    def flaky(text, cue_set):
        raise RuntimeError("bad trace")

    monkeypatch.setattr(cues, "signature", flaky)
    out = compute_score(MATH, r"\boxed{2}", "2", cue_set="math_v1")
    assert out["cue_sig"] == "math_v1:!error" and out["acc"] == 1.0


def test_data_source_prefix_not_claimed_by_verl():
    """Our data_source names must not be graded by verl's built-in rules when the custom scorer is
    missing from the config: verl's default_compute_score must refuse them."""
    from verl.utils.reward_score import default_compute_score

    with pytest.raises(NotImplementedError):
        default_compute_score(MATH, r"\boxed{2}", "2")
    assert reward.DATA_SOURCE_PREFIX == "verl_focal/"
