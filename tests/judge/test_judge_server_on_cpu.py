"""The real judge client against a real loopback HTTP server playing scripted judges."""

from __future__ import annotations

import json
import time

import pytest

from verl_focal.partition import get_partitioner
from verl_focal.partition.base import Partitioner, register_partitioner
from verl_focal.partition.judge import FALLBACK_REASONS, JudgePartitioner

SOLS = ["Use the quadratic formula.", "Factor the polynomial.", "Apply the quadratic formula directly."]
GOOD = {"groups": [{"label": "formula", "members": [1, 3]}, {"label": "factoring", "members": [2]}]}


def make(judge_server, **kw) -> JudgePartitioner:
    base = dict(base_url=judge_server.base_url, model="judge-model", timeout_s=2.0, max_retries=0,
                backoff_s=0.01, fallback="singleton")
    base.update(kw)
    return JudgePartitioner(**base)


def fallback_counts(m: dict) -> dict:
    return {r: m[f"judge/fallback/{r}"] for r in FALLBACK_REASONS if m[f"judge/fallback/{r}"]}


def test_registered_and_built_by_name(judge_server):
    p = get_partitioner("judge", base_url=judge_server.base_url, model="judge-model", fallback="single")
    assert isinstance(p, JudgePartitioner)
    p.close()


def test_correct_judge(judge_server):
    judge_server.script("ok", ("json", GOOD))
    with make(judge_server) as p:
        assert p.partition(SOLS, "[[ok]] Solve x^2-3x+2=0.") == [0, 1, 0]
        m = p.pop_metrics()
    assert m["judge/groups"] == 1 and m["judge/requests"] == 1 and m["judge/retries"] == 0
    assert m["judge/fallback_rate"] == 0 and m["judge/cache_hit_rate"] == 0 and fallback_counts(m) == {}
    assert m["judge/latency_p50"] > 0 and m["judge/latency_p95"] >= m["judge/latency_p50"]
    assert m["judge/wall_s"] > 0
    body = judge_server.log[0]["body"]
    assert body["model"] == "judge-model" and body["response_format"] == {"type": "json_object"}
    user = body["messages"][-1]["content"]
    for i, s in enumerate(SOLS, start=1):  # numbered from 1, each text present
        assert f"=== Solution {i} ===\n{s}" in user
    assert "Solve x^2-3x+2=0." in user
    # pop_metrics resets
    m2 = p.pop_metrics()
    assert m2["judge/groups"] == 0 and m2["judge/requests"] == 0 and "judge/latency_p50" not in m2


def test_reasoning_wrapped_json(judge_server):
    reply = (
        "<think>Solutions 1 and 3 use \\frac{-b}{2a}; draft: {\"groups\": [[1, 2, 3]]}</think>\n"
        "Final answer:\n```json\n" + json.dumps(GOOD) + "\n```\nHope this helps {not json}."
    )
    judge_server.script("wrap", ("text", reply))
    with make(judge_server) as p:
        assert p.partition(SOLS, "[[wrap]]") == [0, 1, 0]
        assert p.pop_metrics()["judge/fallback_rate"] == 0


def test_invalid_indices_repaired(judge_server):
    # 7 is out of range, 3 is listed twice (kept in its first group), 5 is missing (own cluster):
    # damage 1 + 1 + 1 = 3 <= 0.5 * 6 -> repaired.
    reply = {"groups": [{"label": "a", "members": [1, 3, 7]}, {"label": "b", "members": [2, 3, 4, 6]}]}
    judge_server.script("rep", ("json", reply))
    with make(judge_server) as p:
        h = p.submit_groups([("[[rep]]", ["s1", "s2", "s3", "s4", "s5", "s6"])])
        assert h.result() == [[0, 1, 0, 1, 2, 1]]
        o = h.outcomes()[0]
        assert o.source == "judge" and o.repaired and o.names == ["a", "b", "(unassigned)"]
        m = p.pop_metrics()
    assert m["judge/repaired"] == 1 and m["judge/fallback_rate"] == 0


def test_invalid_indices_trigger_fallback(judge_server):
    # n=4: indices 5, 6, 9 invalid and 2, 3, 4 missing -> damage 6 > 2 -> fallback (singleton).
    judge_server.script("bad", ("json", {"groups": [[1, 5, 6], [9]]}))
    with make(judge_server) as p:
        h = p.submit_groups([("[[bad]]", ["a", "b", "c", "d"])])
        assert h.result() == [[0, 1, 2, 3]]
        assert h.outcomes()[0].reason == "bad_indices"
        m = p.pop_metrics()
    assert fallback_counts(m) == {"bad_indices": 1} and m["judge/fallback_rate"] == 1


def test_slow_judge_times_out(judge_server):
    """The server holds the request until the test opens the gate, after the call: only the client's
    timeout can end the call (without it, it would never return)."""
    judge_server.script("slow", ("gate", "slow_released", ("json", GOOD)))
    with make(judge_server, timeout_s=0.3, fallback="single") as p:
        assert p.partition(SOLS, "[[slow]]") == [0, 0, 0]
        m = p.pop_metrics()
    judge_server.open_gate("slow_released")
    assert fallback_counts(m) == {"timeout": 1} and m["judge/requests"] == 1


def test_500s_retried_then_success(judge_server):
    judge_server.script("flaky", ("status", 500, {}, b"{}"), ("status", 503, {}, b"{}"), ("json", GOOD))
    with make(judge_server, max_retries=2) as p:
        assert p.partition(SOLS, "[[flaky]]") == [0, 1, 0]
        m = p.pop_metrics()
    assert m["judge/requests"] == 3 and m["judge/retries"] == 2 and m["judge/fallback_rate"] == 0
    t = [e["t"] for e in judge_server.requests_for("flaky")]
    assert t[1] - t[0] >= 0.01 and t[2] - t[1] >= 0.02  # backoff_s * 2**k


def test_500s_exhaust_retries(judge_server):
    judge_server.script("down5", ("status", 500, {}, b"{}"))
    with make(judge_server, max_retries=1) as p:
        assert p.partition(SOLS, "[[down5]]") == [0, 1, 2]
        m = p.pop_metrics()
    assert fallback_counts(m) == {"http_5xx": 1} and m["judge/requests"] == 2


def test_429_honours_retry_after(judge_server):
    judge_server.script("rl", ("status", 429, {"Retry-After": "0.4"}, b"{}"), ("json", GOOD))
    with make(judge_server, max_retries=1, backoff_s=0.0) as p:
        assert p.partition(SOLS, "[[rl]]") == [0, 1, 0]
        m = p.pop_metrics()
    t = [e["t"] for e in judge_server.requests_for("rl")]
    assert len(t) == 2 and t[1] - t[0] >= 0.4
    assert m["judge/retries"] == 1 and m["judge/fallback_rate"] == 0


def test_429_with_long_retry_after_falls_back_at_once(judge_server):
    judge_server.script("rl_long", ("status", 429, {"Retry-After": "120"}, b"{}"))
    with make(judge_server, max_retries=3, max_backoff_s=1.0) as p:
        h = p.submit_groups([("[[rl_long]]", SOLS)])
        assert h.result() == [[0, 1, 2]]
        # it gave up on the Retry-After itself, before any wait (and made no second request)
        assert "exceeds max_backoff_s" in h.outcomes()[0].detail
        m = p.pop_metrics()
    assert fallback_counts(m) == {"http_429": 1} and m["judge/requests"] == 1


def test_dropped_connection(judge_server):
    judge_server.script("drop", ("drop",))
    judge_server.script("drop_once", ("drop",), ("json", GOOD))
    with make(judge_server, max_retries=0) as p:
        assert p.partition(SOLS, "[[drop]]") == [0, 1, 2]
        assert fallback_counts(p.pop_metrics()) == {"dropped": 1}
    with make(judge_server, max_retries=1) as p:
        assert p.partition(SOLS, "[[drop_once]]") == [0, 1, 0]
        m = p.pop_metrics()
        assert m["judge/fallback_rate"] == 0 and m["judge/retries"] == 1


def test_server_down(closed_port_url):
    p = JudgePartitioner(base_url=closed_port_url, model="m", timeout_s=1.0, max_retries=1, backoff_s=0.01,
                         fallback="singleton")
    assert p.partition_groups([("q", ["a", "b"]), ("q2", ["c", "d", "e"])]) == [[0, 1], [0, 1, 2]]
    m = p.pop_metrics()
    p.close()
    assert fallback_counts(m) == {"connect": 2} and m["judge/fallback_rate"] == 1 and m["judge/requests"] == 4


def test_empty_and_malformed_replies(judge_server):
    judge_server.script("empty", ("text", "   "))
    judge_server.script("prose", ("text", "They all use algebra."))
    judge_server.script("notjson", ("raw", b"<html>gateway</html>"))
    judge_server.script("nochoices", ("raw", b'{"object": "error"}'))
    groups = [(f"[[{t}]]", ["a", "b"]) for t in ("empty", "prose", "notjson", "nochoices")]
    with make(judge_server, fallback="single") as p:
        h = p.submit_groups(groups)
        assert h.result() == [[0, 0]] * 4
        assert [o.reason for o in h.outcomes()] == ["empty", "malformed", "malformed", "malformed"]
        m = p.pop_metrics()
    assert fallback_counts(m) == {"empty": 1, "malformed": 3}
    assert m["judge/requests"] == 4  # content errors are not retried


def test_faults_fall_back_per_group_only(judge_server):
    judge_server.script("g_ok", ("json", GOOD))
    judge_server.script("g_500", ("status", 500, {}, b"{}"))
    judge_server.script("g_slow", ("sleep", 5.0, ("json", GOOD)))
    judge_server.script("g_junk", ("text", "no idea"))
    groups = [(f"[[{t}]]", list(SOLS)) for t in ("g_ok", "g_500", "g_slow", "g_junk")]
    groups.append(("[[g_trivial]]", ["only one"]))
    with make(judge_server, timeout_s=1.5) as p:  # roomy for the good group on a loaded machine
        labels = p.partition_groups(groups)
        m = p.pop_metrics()
    assert labels == [[0, 1, 0], [0, 1, 2], [0, 1, 2], [0, 1, 2], [0]]
    assert m["judge/groups"] == 4  # the one-solution group needs no judge
    assert m["judge/fallback_rate"] == pytest.approx(3 / 4)
    assert fallback_counts(m) == {"http_5xx": 1, "timeout": 1, "malformed": 1}
    assert judge_server.requests_for("g_trivial") == []


def _wait_until(predicate, timeout: float = 60.0) -> bool:
    """Re-check ``predicate`` until it holds or ``timeout`` passes (a deadline, never a fixed wait)."""
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


def test_concurrency_bound_and_overlap(judge_server):
    """max_concurrency=3: three requests overlap at the server, never a fourth (events, no timing)."""
    judge_server.script("c", ("gate", "c", ("json", {"groups": [[1, 2]]})))
    groups = [(f"[[c]] problem {i}", ["a", "b"]) for i in range(6)]
    with make(judge_server, max_concurrency=3) as p:
        h = p.submit_groups(groups)
        assert judge_server.wait_until(lambda j: j.inflight == 3)  # three held at once: they overlap
        # while the three are held, no fourth may arrive (a breach would show within this wait)
        assert not judge_server.wait_until(lambda j: j.inflight > 3, timeout=1.0)
        judge_server.open_gate("c")
        assert h.result() == [[0, 0]] * 6
    assert judge_server.max_inflight == 3 and len(judge_server.requests_for("c")) == 6


def test_submit_is_non_blocking(judge_server):
    """submit_groups returns while the server holds the request (a gate the test opens afterwards)."""
    judge_server.script("nb", ("gate", "nb_released", ("json", {"groups": [[1], [2]]})))
    with make(judge_server) as p:
        t_submit = time.perf_counter()
        h = p.submit_groups([("[[nb]]", ["a", "b"])])
        assert judge_server.wait_until(lambda j: j.inflight == 1)  # it reached the server, and we are back
        assert not h.done()
        judge_server.open_gate("nb_released")  # the caller worked meanwhile (e.g. old log-probs)
        assert _wait_until(h.done)
        t_result = time.perf_counter()
        assert h.result() == [[0, 1]]
        assert h.result() == [[0, 1]]  # idempotent, counted once
        m = p.pop_metrics()
    assert m["judge/groups"] == 1
    # wall_s runs from submit to the answer, not to the late result() call; the answer was in when asked
    assert m["judge/wait_s"] <= m["judge/wall_s"] <= t_result - t_submit


def test_cache_memory_disk_and_key(judge_server, tmp_path, closed_port_url):
    judge_server.script("k", ("json", GOOD))
    with make(judge_server, cache_dir=str(tmp_path)) as p:
        assert p.partition(SOLS, "[[k]]") == [0, 1, 0]
        assert p.partition(SOLS, "[[k]]") == [0, 1, 0]
        m = p.pop_metrics()
    assert len(judge_server.requests_for("k")) == 1
    assert m["judge/groups"] == 2 and m["judge/cache_hit_rate"] == 0.5 and m["judge/requests"] == 1
    # A resumed run (new process, same cache_dir) needs no server at all.
    q = JudgePartitioner(base_url=closed_port_url, model="judge-model", cache_dir=str(tmp_path), fallback="single")
    assert q.partition(SOLS, "[[k]]") == [0, 1, 0]
    assert q.pop_metrics()["judge/cache_hit_rate"] == 1
    # Another model is another key: a miss (and here a fallback, the server being down).
    r = JudgePartitioner(base_url=closed_port_url, model="other", cache_dir=str(tmp_path), fallback="single",
                         max_retries=0)
    assert r.partition(SOLS, "[[k]]") == [0, 0, 0]
    assert r.pop_metrics()["judge/cache_hit_rate"] == 0
    q.close(), r.close()


def test_identical_groups_share_one_request(judge_server):
    judge_server.script("dup", ("json", GOOD))
    with make(judge_server) as p:
        assert p.partition_groups([("[[dup]]", SOLS)] * 3) == [[0, 1, 0]] * 3
        m = p.pop_metrics()
    assert len(judge_server.requests_for("dup")) == 1 and m["judge/requests"] == 1 and m["judge/groups"] == 3


def test_step_deadline(judge_server):
    """The request is held at the server until after the call: only the step deadline can end it."""
    judge_server.script("late", ("gate", "late_released", ("json", GOOD)))
    with make(judge_server, timeout_s=600.0, step_deadline_s=0.3) as p:
        assert p.partition(SOLS, "[[late]]") == [0, 1, 2]
        m = p.pop_metrics()
    judge_server.open_gate("late_released")
    assert fallback_counts(m) == {"deadline": 1} and m["judge/requests"] == 1


def test_api_key_sent_never_shown(judge_server, monkeypatch):
    secret = "sk-test-0123456789"
    monkeypatch.setenv("JUDGE_TEST_KEY", secret)
    judge_server.required_key = secret
    judge_server.script("auth", ("json", GOOD))
    with make(judge_server, api_key_env="JUDGE_TEST_KEY") as p:
        assert p.partition(SOLS, "[[auth]]") == [0, 1, 0]
        assert secret not in repr(p) and secret not in repr(p.config) and secret not in repr(p._client)
        assert secret not in json.dumps(p.pop_metrics())
    assert judge_server.log[0]["headers"]["Authorization"] == f"Bearer {secret}"
    # a wrong key is a 401: no retry, fallback counted
    monkeypatch.setenv("JUDGE_TEST_KEY", "sk-wrong")
    with make(judge_server, api_key_env="JUDGE_TEST_KEY", max_retries=2) as p:
        assert p.partition(SOLS, "[[auth]]") == [0, 1, 2]
        m = p.pop_metrics()
    assert fallback_counts(m) == {"http_4xx": 1} and m["judge/requests"] == 1


def test_missing_key_variable_is_a_startup_error(judge_server, monkeypatch):
    monkeypatch.delenv("JUDGE_ABSENT_KEY", raising=False)
    with pytest.raises(ValueError, match=r"algorithm\.cue\.judge\.api_key_env='JUDGE_ABSENT_KEY'.*not set"):
        make(judge_server, api_key_env="JUDGE_ABSENT_KEY")


def test_server_without_json_mode(judge_server):
    judge_server.reject_response_format = True
    judge_server.script("nojm", ("json", GOOD))
    with make(judge_server) as p:
        assert p.partition(SOLS, "[[nojm]]") == [0, 1, 0]
        assert p.partition(["x", "y"], "[[nojm]] again") == [0, 1]  # remembered: one request
        assert p.pop_metrics()["judge/fallback_rate"] == 0
    bodies = [e["body"] for e in judge_server.log]
    assert len(bodies) == 3
    assert "response_format" in bodies[0] and "response_format" not in bodies[1] and "response_format" not in bodies[2]


@register_partitioner("_judge_test_boom")
class _Boom(Partitioner):
    def partition(self, texts, problem=None):
        raise RuntimeError("fallback broke")


def test_broken_fallback_gives_one_cluster(closed_port_url):
    p = JudgePartitioner(base_url=closed_port_url, model="m", max_retries=0, fallback="_judge_test_boom")
    assert p.partition_groups([("q", ["a", "b", "c"])]) == [[0, 0, 0]]
    m = p.pop_metrics()
    p.close()
    assert m["judge/fallback_errors"] == 1 and fallback_counts(m) == {"connect": 1}


def test_one_shared_instance_per_setting_with_the_sections_fallback(judge_server):
    from verl_focal.config.schema import validate_algorithm_config
    from verl_focal.partition.controls import SingletonPartitioner
    from verl_focal.partition.factory import partitioner_for, partitioner_kwargs

    judge = {"base_url": judge_server.base_url, "model": "judge-model", "fallback": "singleton"}
    cue = validate_algorithm_config({"cue": {"partitioner": "judge", "epsilon": 0.4, "judge": judge}})["cue"]
    a, b = partitioner_for(cue, "judge"), partitioner_for(cue)
    assert a is b and isinstance(a.fallback_partitioner, SingletonPartitioner)
    judge_server.script("sh", ("json", GOOD))
    assert a.partition(SOLS, "[[sh]]") == [0, 1, 0]
    assert b.partition(SOLS, "[[sh]]") == [0, 1, 0]  # same cache
    assert len(judge_server.requests_for("sh")) == 1
    a.close()
    # strategy_cue / random fallbacks take the section's own cue settings; others take none
    section = {"cue_set": "math_v1", "epsilon": 0.4, "rho": 0.6, "seed": 3, "partitioner_kwargs": {"x": 1}}
    assert partitioner_kwargs(section, "strategy_cue") == {"cue_set": "math_v1", "epsilon": 0.4, "rho": 0.6}
    assert partitioner_kwargs(section, "random") == {"cue_set": "math_v1", "epsilon": 0.4, "rho": 0.6, "seed": 3}
    assert partitioner_kwargs(section, "single") == {}
    assert partitioner_kwargs(cue, "strategy_cue")["epsilon"] == 0.4  # a CueConfig works too


def test_fallback_instance_can_be_injected(closed_port_url):
    from verl_focal.partition.controls import SingletonPartitioner

    inst = SingletonPartitioner()
    p = JudgePartitioner(base_url=closed_port_url, model="m", max_retries=0, fallback="single",
                         fallback_partitioner=inst)
    assert p.partition(["a", "b"], "q") == [0, 1]  # the instance, not the name, was used
    p.close()


def test_prefetch_then_prepare_joins_the_request(judge_server):
    judge_server.script("pf", ("sleep", 0.4, ("json", GOOD)))
    with make(judge_server) as p:
        p.prefetch([("[[pf]]", SOLS)])  # e.g. when the step's rewards are known
        assert p.partition_groups([("[[pf]]", SOLS)]) == [[0, 1, 0]]  # later, at advantage time
        m = p.pop_metrics()
    # it joined the request in flight: no second request
    assert len(judge_server.requests_for("pf")) == 1
    assert m["judge/inflight_joins"] == 1 and m["judge/requests"] == 1 and m["judge/fallback_rate"] == 0


def test_prepare_after_prefetch_reuses_its_cache_keys(judge_server, monkeypatch):
    """The submission after a prefetch takes the prefetched groups' cache keys instead of hashing their texts again
    (the texts' JSON and SHA-256: 0.1 s per step at 2,048 x 8,192); the keys are those ``cache_key`` gives, a group
    the prefetch did not send is hashed, and the kept keys are dropped by that submission."""
    import verl_focal.partition.judge.partitioner as mod
    from verl_focal.partition.judge.cache import cache_key

    hashed = []
    monkeypatch.setattr(mod, "cache_key", lambda *a: hashed.append(a[0]) or cache_key(*a))
    judge_server.script("rk", ("json", GOOD))
    judge_server.script("rk2", ("json", GOOD))
    with make(judge_server) as p:
        p.prefetch([("[[rk]]", SOLS)])
        assert hashed == ["[[rk]]"]
        # equal texts in other string objects: found by content, not hashed again
        copies = ["".join(list(t)) for t in SOLS]
        assert copies == SOLS and all(c is not t for c, t in zip(copies, SOLS))
        h = p.submit_groups([("[[rk]]", copies), ("[[rk2]]", SOLS)])
        assert h.result() == [[0, 1, 0], [0, 1, 0]]
        assert hashed == ["[[rk]]", "[[rk2]]"]  # only the group the prefetch did not send
        assert [r.source for r in h.outcomes()] in (["cache", "judge"], ["judge", "judge"])
        # the kept keys were dropped by that submission: hashed again, and cache_key's key finds the answer
        again = p.submit_groups([("[[rk]]", SOLS)])
        assert again.result() == [[0, 1, 0]] and again.outcomes()[0].source == "cache"
        assert hashed == ["[[rk]]", "[[rk2]]", "[[rk]]"]
    assert len(judge_server.requests_for("rk")) == 1


def test_shared_request_survives_one_holders_deadline(judge_server):
    judge_server.script("sh2", ("sleep", 0.5, ("json", GOOD)))
    with make(judge_server) as p:
        a = p.submit_groups([("[[sh2]]", SOLS)])
        b = p.submit_groups([("[[sh2]]", SOLS)])
        assert a.result(timeout=0.05) == [[0, 1, 2]]  # a gives up: deadline fallback (singleton)
        assert a.outcomes()[0].reason == "deadline"
        assert b.result() == [[0, 1, 0]]  # b still gets the judge's answer: a did not cancel it
        m = p.pop_metrics()
    assert len(judge_server.requests_for("sh2")) == 1
    assert m["judge/requests"] == 1 and m["judge/groups"] == 2 and m["judge/fallback/deadline"] == 1


def test_last_holder_cancels_an_unfinished_request(judge_server):
    judge_server.script("cx", ("sleep", 1.0, ("json", GOOD)))
    with make(judge_server) as p:
        h = p.submit_groups([("[[cx]]", SOLS)])
        assert h.result(timeout=0.05) == [[0, 1, 2]]
        req = h.requests[next(iter(h.requests))]
        assert req.future.cancelled() or req.future.done()
        assert len(p.inflight) == 0


def test_prefetch_nobody_joins_still_counted_and_cached(judge_server):
    judge_server.script("orph", ("json", GOOD))
    with make(judge_server) as p:
        p.prefetch([("[[orph]]", SOLS)])
        assert _wait_until(lambda: p.metrics.requests_since_pop() == 1)  # recorded when the reply lands
        m = p.pop_metrics()
        assert m["judge/requests"] == 1 and m["judge/groups"] == 0  # counted, though no step collected it
        assert p.partition(SOLS, "[[orph]]") == [0, 1, 0]
        assert p.pop_metrics()["judge/cache_hit_rate"] == 1
    assert len(judge_server.requests_for("orph")) == 1


def test_reply_cut_by_max_tokens_is_reported_as_truncated(judge_server):
    # a completion that stopped at the token limit in the middle of its JSON
    body = json.dumps({"choices": [{"message": {"role": "assistant", "content": '{"groups": [{"label": "a", "mem'},
                                    "finish_reason": "length"}]}).encode()
    judge_server.script("cut", ("raw", body))
    with make(judge_server) as p:
        assert p.partition(SOLS, "[[cut]]") == [0, 1, 2]
        m = p.pop_metrics()
    assert fallback_counts(m) == {"truncated": 1}


def test_server_rejecting_max_tokens_and_temperature(judge_server):
    judge_server.reject_params = {"max_tokens", "temperature"}
    judge_server.script("newapi", ("json", GOOD))
    with make(judge_server, max_retries=0) as p:
        assert p.partition(SOLS, "[[newapi]]") == [0, 1, 0]
        assert p.partition(["x", "y"], "[[newapi]] again") == [0, 1]  # adaptations remembered: one request
        m = p.pop_metrics()
    bodies = [e["body"] for e in judge_server.log]
    assert len(bodies) == 4  # rejected, rejected, accepted; then one
    assert "max_tokens" in bodies[0] and "max_completion_tokens" in bodies[1] and "temperature" in bodies[1]
    assert "temperature" not in bodies[2] and bodies[2]["max_completion_tokens"] == 1024
    assert "max_tokens" not in bodies[3]
    assert m["judge/fallback_rate"] == 0 and m["judge/retries"] == 0


def test_circuit_breaker_skips_a_dead_judge_then_probes_again(judge_server, closed_port_url):
    with make(judge_server, base_url=closed_port_url, breaker_cooldown_s=0.6) as p:
        assert p.partition_groups([("q1", ["a", "b"]), ("q2", ["c", "d"])]) == [[0, 1], [0, 1]]
        m = p.pop_metrics()
        assert fallback_counts(m) == {"connect": 2} and m["judge/breaker_trips"] == 1 and m["judge/breaker_open"] == 1
        assert p.partition_groups([("q3", ["e", "f"])]) == [[0, 1]]  # open: no request at all
        m = p.pop_metrics()
        assert fallback_counts(m) == {"circuit_open": 1} and m["judge/requests"] == 0
        now = time.monotonic() + 0.7
        p.breaker.clock = lambda: now  # cool-down over: the next step tries the server again
        p.partition_groups([("q4", ["g", "h"])])
        m = p.pop_metrics()
        assert fallback_counts(m) == {"connect": 1} and m["judge/requests"] == 1 and m["judge/breaker_trips"] == 1


def test_breaker_ignores_content_faults_and_partial_failures(judge_server):
    judge_server.script("bk_ok", ("json", GOOD))
    judge_server.script("bk_500", ("status", 500, {}, b"{}"))
    judge_server.script("bk_junk", ("text", "no json here"))
    with make(judge_server) as p:
        p.partition_groups([("[[bk_ok]]", SOLS), ("[[bk_500]]", SOLS)])  # one success: stays closed
        p.partition_groups([("[[bk_junk]]", SOLS)])  # the server answers, the reply is bad: stays closed
        m = p.pop_metrics()
        assert m["judge/breaker_trips"] == 0 and m["judge/breaker_open"] == 0
        p.partition_groups([("[[bk_500]]", ["x", "y"])])  # a whole step of 5xx: opens
        assert p.pop_metrics()["judge/breaker_trips"] == 1
    with make(judge_server, breaker_cooldown_s=0.0) as p:  # disabled
        p.partition_groups([("[[bk_500]]", ["x", "y"])])
        p.partition_groups([("[[bk_500]]", ["x", "z"])])
        m = p.pop_metrics()
        assert m["judge/breaker_trips"] == 0 and fallback_counts(m) == {"http_5xx": 2}
