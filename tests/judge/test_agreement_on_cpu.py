"""``verl-focal agreement`` end to end against the loopback scripted judge."""

from __future__ import annotations

import json
from collections import Counter
from math import comb

import pytest

from verl_focal.cli import main


def ari(a: list[int], b: list[int]) -> float:
    """Adjusted Rand index from the contingency table (Hubert & Arabie), written out independently."""
    n = len(a)
    pairs = sum(comb(c, 2) for c in Counter(zip(a, b)).values())
    pa = sum(comb(c, 2) for c in Counter(a).values())
    pb = sum(comb(c, 2) for c in Counter(b).values())
    expected = pa * pb / comb(n, 2)
    top = (pa + pb) / 2
    return 1.0 if top == expected else (pairs - expected) / (top - expected)


@pytest.mark.parametrize("a,b,want", [
    ([0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2], 8 / 33),  # index 2, R 6, K 3, E 18/15: (2 - 1.2) / (4.5 - 1.2)
    ([0, 0, 1, 1], [0, 1, 0, 1], -0.5),  # index 0, R = K = 2, E 4/6: below chance
    ([0, 0, 1, 1], ["x", "x", "y", "y"], 1.0),  # the same partition under other names
    ([0, 0, 0], [5, 5, 5], 1.0),  # one cluster each: 0/0, the same partition
    ([0, 1, 2], [2, 0, 1], 1.0),  # all singletons each
    ([0, 0, 1, 1], [0, 1, 2, 3], 0.0),  # a partition against all singletons
])
def test_adjusted_rand_index_by_hand(a, b, want):
    from verl_focal.lab.agreement import adjusted_rand_index

    assert adjusted_rand_index(a, b) == pytest.approx(want, abs=1e-12)
    assert adjusted_rand_index(b, a) == pytest.approx(want, abs=1e-12)  # symmetric


def test_adjusted_rand_index_is_the_contingency_formula_on_random_labelings():
    import random

    from verl_focal.lab.agreement import adjusted_rand_index

    rng = random.Random(0)
    for _ in range(200):
        n = rng.randint(2, 12)
        a, b = [rng.randint(0, 3) for _ in range(n)], [rng.randint(0, 4) for _ in range(n)]
        assert adjusted_rand_index(a, b) == pytest.approx(ari(a, b), abs=1e-12), (a, b)
    with pytest.raises(ValueError, match="same n >= 2"):
        adjusted_rand_index([0, 1], [0])


def write(tmp_path, groups) -> str:
    path = tmp_path / "groups.jsonl"
    path.write_text("\n".join(json.dumps(g) for g in groups) + "\n")
    return str(path)


def test_agreement_against_singleton(judge_server, tmp_path, capsys):
    judge_server.script("a", ("json", {"groups": [[1, 2], [3, 4]]}))
    judge_server.script("b", ("json", {"groups": [[1], [2], [3]]}))
    judge_server.script("c", ("status", 500, {}, b"{}"))
    groups = [
        {"problem": "[[a]]", "solutions": ["w", "x", "y", "z"]},
        {"problem": "[[b]]", "responses": ["p", "q", "r"]},
        {"problem": "[[c]]", "solutions": ["s", "t"]},
        {"problem": "[[d]]", "solutions": ["only"]},
    ]
    out = tmp_path / "rows.jsonl"
    cfg = tmp_path / "trainer.yaml"  # a trainer-style config; the flags below override its judge section
    cfg.write_text("algorithm:\n  cue:\n    judge:\n      model: other\n      max_retries: 0\n")
    rc = main(["agreement", write(tmp_path, groups), "--config", str(cfg), "--base-url", judge_server.base_url,
               "--model", "judge-model", "--against", "singleton", "--out", str(out), "--json"])
    assert rc == 0
    s = json.loads(capsys.readouterr().out)
    expected = [ari([0, 0, 1, 1], [0, 1, 2, 3]), ari([0, 1, 2], [0, 1, 2])]
    assert expected[1] == 1.0
    assert s["groups"] == 4 and s["compared"] == 2 and s["judge_failed"] == {"http_5xx": 1}
    assert len(judge_server.requests_for("c")) == 1  # max_retries: 0 came from --config
    assert {e["body"]["model"] for e in judge_server.log} == {"judge-model"}
    assert s["ari_mean"] == pytest.approx(sum(expected) / 2)
    assert s["identical_frac"] == 0.5
    assert s["clusters_judge_mean"] == pytest.approx((2 + 3) / 2)
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert rows[0]["judge"] == [0, 0, 1, 1] and rows[0]["ari"] == pytest.approx(expected[0])
    assert rows[2]["skipped"].startswith("judge failed") and rows[3]["skipped"].startswith("fewer")


def test_agreement_judge_down(closed_port_url, tmp_path, capsys):
    path = write(tmp_path, [{"problem": "q", "solutions": ["a", "b"]}])
    cfg = tmp_path / "judge.yaml"  # a bare judge section
    cfg.write_text("max_retries: 0\n")
    rc = main(["agreement", path, "--config", str(cfg), "--base-url", closed_port_url, "--model", "m",
               "--against", "single"])
    assert rc == 2  # refused before any request, naming the URL
    err = capsys.readouterr().err
    assert f"base_url={closed_port_url!r} is unreachable" in err and "Traceback" not in err


def test_agreement_bad_input(tmp_path, capsys):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"problem": "q", "solutions": "not a list"}\n')
    assert main(["agreement", str(path), "--model", "m"]) == 2
    assert "bad.jsonl:1" in capsys.readouterr().err
    path.write_text('{"solutions": ["a"]}\n')
    assert main(["agreement", str(path)]) == 2  # no model configured
    assert "algorithm.cue.judge.model" in capsys.readouterr().err


def test_agreement_default_is_strategy_cue(judge_server, tmp_path, capsys):
    from verl_focal.partition import get_partitioner

    sols = ["Case 1: x is even. Case 2: x is odd. So the answer is 4.",
            "We substitute y = x^2 and solve the quadratic. The answer is 4.",
            "Case 1: n even; Case 2: n odd; hence 4.",
            "By the Pythagorean theorem the side is 5, so 4."]
    judge_server.script("sc", ("json", {"groups": [[1, 3], [2], [4]]}))
    path = write(tmp_path, [{"problem": "[[sc]]", "solutions": sols}])
    assert main(["agreement", path, "--base-url", judge_server.base_url, "--model", "judge-model", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    other = get_partitioner("strategy_cue").partition(sols)
    assert s["compared"] == 1 and s["ari_mean"] == pytest.approx(ari([0, 1, 0, 2], other))  # judge: {1,3},{2},{4}
