"""Pure parts of the judge: reply parsing, fair truncation, config validation, cache keys, check_judge."""

from __future__ import annotations

import dataclasses
import json

import pytest

from verl_focal.partition.judge import JudgeConfig, JudgeReplyError, check_judge, coerce_judge_config, parse_reply
from verl_focal.partition.judge.cache import PartitionCache, cache_key
from verl_focal.partition.judge.client import retry_after_seconds
from verl_focal.partition.judge.prompt import build_messages, clip_text, fair_caps


# ------------------------------------------------------------------ parsing
@pytest.mark.parametrize(
    "groups",
    [
        [{"label": "x", "members": [1, 2]}, {"label": "y", "members": [3]}],
        [{"name": "x", "solutions": ["1", "#2"]}, {"strategy": "y", "indices": ["Solution 3"]}],
        [[1, 2], [3]],
        {"x": [1, 2], "y": [3]},
        [{"label": "x", "ids": [1.0, 2]}, {"label": "y", "members": 3}],
    ],
)
def test_accepted_shapes(groups):
    assert parse_reply(json.dumps({"groups": groups}), 3).labels == [0, 0, 1]


def test_labels_are_canonical_in_solution_order():
    r = parse_reply('{"groups": [{"label": "late", "members": [3]}, {"label": "early", "members": [2, 1]}]}', 3)
    assert r.labels == [0, 0, 1] and r.names == ["early", "late"] and not r.repaired


def test_zero_based_reply_is_recognised():
    r = parse_reply('{"groups": [[0, 2], [1]]}', 3)
    assert r.zero_based and r.labels == [0, 1, 0]
    # with n present, 0 is simply out of range (1-based): dropped
    r = parse_reply('{"groups": [[0, 1, 3], [2]]}', 3)
    assert not r.zero_based and r.labels == [0, 1, 0] and r.dropped == 1


def test_last_json_wins_and_think_is_skipped():
    text = ('<think>{"groups": [[1], [2], [3]]}</think> first {"groups": [[1, 2, 3]]} '
            'then, reconsidering, {"groups": [[1, 2], [3]]} with \\sqrt{2} and {broken')
    assert parse_reply(text, 3).labels == [0, 0, 1]
    # think-only reply: the draft inside is used when nothing follows
    assert parse_reply('<think>{"groups": [[1, 3], [2]]}</think>', 3).labels == [0, 1, 0]


@pytest.mark.parametrize(
    "groups, n, expected_damage",
    [
        ([[1, 2, 9], [3]], 4, 2),  # 9 dropped, 4 missing
        ([[1, 2], [2, 3]], 3, 1),  # 2 in two groups
        ([[1, 1, 2], [3]], 3, 0),  # a repeat inside one group is no damage
        ([[1, "x"], [2, 3]], 3, 1),  # unreadable entry
    ],
)
def test_damage_count(groups, n, expected_damage):
    r = parse_reply(json.dumps({"groups": groups}), n, max_repair_fraction=1.0)
    assert r.dropped + r.duplicates + r.missing == expected_damage


def test_repair_threshold_is_inclusive():
    # n=4, damage 2: allowed at fraction 0.5 (2 <= 2), rejected at 0.49
    text = json.dumps({"groups": [[1, 2]]})
    assert parse_reply(text, 4, 0.5).labels == [0, 0, 1, 2]
    with pytest.raises(JudgeReplyError) as e:
        parse_reply(text, 4, 0.49)
    assert e.value.reason == "bad_indices"


@pytest.mark.parametrize(
    "text, reason",
    [
        (None, "empty"),
        ("  \n", "empty"),
        ("They are all the same.", "malformed"),
        ('{"clusters": [[1, 2]]}', "malformed"),
        ('{"groups": 3}', "malformed"),
        ('{"groups": [{"label": "a"}]}', "malformed"),
        ('{"groups": [[7, 8]]}', "bad_indices"),
        ('{"groups": []}', "bad_indices"),
    ],
)
def test_rejected_replies(text, reason):
    with pytest.raises(JudgeReplyError) as e:
        parse_reply(text, 2)
    assert e.value.reason == reason


# ------------------------------------------------------------------ prompt / truncation
def test_fair_caps_water_filling():
    lengths = [10, 50, 400, 1000, 30]
    caps = fair_caps(lengths, 100)  # total budget 500
    budget = 500
    assert sum(caps) <= budget
    short = [i for i, L in enumerate(lengths) if caps[i] == L]
    cut = [i for i, L in enumerate(lengths) if caps[i] < L]
    assert set(short) == {0, 1, 4} and set(cut) == {2, 3}
    t = caps[2]
    assert caps[3] == t  # long ones share one cap
    # t is the largest common cap that fits: one more character each would exceed the budget
    assert sum(min(L, t + 1) for L in lengths) > budget
    assert t == (500 - 10 - 50 - 30) // 2
    assert fair_caps([5, 6], 100) == [5, 6]  # fits: untouched


def test_clip_text_keeps_head_and_tail():
    text = "A" * 500 + "B" * 500
    out = clip_text(text, 90)
    assert out.startswith("A" * 60) and out.endswith("B" * 30)
    assert "[... 910 characters omitted ...]" in out
    assert clip_text("short", 90) == "short"


def test_prompt_is_bounded_and_numbered():
    sols = ["x" * 10_000, "y" * 50, "z" * 10_000]
    msgs = build_messages("P", sols, 1000)
    user = msgs[-1]["content"]
    # the long ones share what the short one leaves: (3*1000 - 50) // 2 = 1475 characters each
    # head round(2/3 * 1475) = 984, tail 491, omitted 10000 - 1475 = 8525
    for ch in "xz":
        assert f"\n{ch * 984}\n[... 8525 characters omitted ...]\n{ch * 491}\n" in user
    assert user.count("omitted") == 2
    assert user.index("=== Solution 1 ===") < user.index("=== Solution 2 ===") < user.index("=== Solution 3 ===")
    assert "y" * 50 in user
    assert "from 1 to 3" in user
    with pytest.raises(ValueError, match="prompt_version='v0'"):
        build_messages("P", sols, 1000, "v0")


# ------------------------------------------------------------------ config
def test_defaults_validate_once_model_is_set():
    c = coerce_judge_config({"model": "m"})
    assert c.fallback == "strategy_cue" and c.api_key_env == "" and c.prompt_version == "v1"
    assert c == coerce_judge_config(None, model="m") == coerce_judge_config(c)


@pytest.mark.parametrize(
    "key, value, fix",
    [
        ("base_url", "localhost:8000", "API root"),
        ("model", "", "served model name"),
        ("api_key_env", "sk-abc/def+123", "NAME of an environment variable"),
        ("timeout_s", 0, "must be > 0.0"),
        ("max_retries", -1, "must be >= 0"),
        ("max_retries", 1.5, "must be an integer"),
        ("max_concurrency", 0, "must be >= 1"),
        ("max_chars_per_solution", 10, "must be >= 64"),
        ("prompt_version", "v9", "is not one of ['v1']"),
        ("fallback", "judge", "must not be the judge"),
        ("max_repair_fraction", 1.5, "must be <= 1.0"),
        ("step_deadline_s", -1, "must be >= 0.0"),
        ("json_mode", "yes", "must be true or false"),
    ],
)
def test_bad_values_name_key_and_fix(key, value, fix):
    with pytest.raises(ValueError) as e:
        coerce_judge_config({"model": "m", key: value})
    msg = str(e.value)
    assert f"algorithm.cue.judge.{key}" in msg and fix in msg
    if key == "api_key_env":
        assert value not in msg  # something that looks like a key is never echoed


def test_prompt_versions_match_schema_choices():
    from verl_focal.partition.judge.prompt import PROMPT_VERSIONS

    (f,) = [f for f in dataclasses.fields(JudgeConfig) if f.name == "prompt_version"]
    assert set(f.metadata["choices"]) == set(PROMPT_VERSIONS)


def test_yaml_section_equals_schema_defaults():
    from pathlib import Path

    import yaml

    import verl_focal.config as config_pkg

    text = (Path(config_pkg.__file__).parent / "sections" / "focal.yaml").read_text()
    judge = yaml.safe_load(text)["algorithm"]["cue"]["judge"]
    assert judge == dataclasses.asdict(JudgeConfig())


def test_schema_validates_judge_section_in_algorithm_config():
    from verl_focal.config.schema import validate_algorithm_config

    out = validate_algorithm_config({"cue": {"judge": {"model": "m", "max_retries": 0}}})
    assert out["cue"].judge.model == "m" and out["cue"].judge.max_retries == 0
    with pytest.raises(ValueError, match=r"algorithm\.cue\.judge\.fallback='judge'"):
        validate_algorithm_config({"cue": {"judge": {"fallback": "judge"}}})


def test_derived_deadline():
    c = coerce_judge_config({"model": "m", "timeout_s": 2.0, "max_retries": 3, "max_backoff_s": 1.5})
    assert c.derived_deadline_s() == 4 * 2.0 + 3 * 1.5 + 1.0
    assert coerce_judge_config({"model": "m", "step_deadline_s": 7.0}).derived_deadline_s() == 7.0


def test_unknown_key_is_an_error():
    with pytest.raises(ValueError, match=r"algorithm\.cue\.judge\.modle"):
        coerce_judge_config({"modle": "m"})


def test_omegaconf_section_accepted():
    from omegaconf import OmegaConf

    node = OmegaConf.create({"model": "m", "timeout_s": 3, "cache_dir": None})
    c = coerce_judge_config(node)
    assert c.timeout_s == 3.0 and c.cache_dir == ""
    assert dataclasses.asdict(coerce_judge_config(c)) == dataclasses.asdict(c)


# ------------------------------------------------------------------ cache
def test_cache_key_covers_every_input():
    base = ("p", ["a", "b"], "m", "v1", 100)
    k = cache_key(*base)
    for i, alt in enumerate([("q",), (["a", "c"],), ("m2",), ("v2",), (101,)]):
        args = list(base)
        args[i] = alt[0]
        assert cache_key(*args) != k
    assert cache_key(*base) == k
    assert cache_key("p", ["a b"], "m", "v1", 100) != cache_key("p", ["a", "b"], "m", "v1", 100)


def test_cache_lru_and_corrupt_disk_entry(tmp_path):
    c = PartitionCache(max_entries=2, directory=tmp_path)
    for key in ("k1", "k2", "k3"):
        c.put(key * 8, [0, 1], ["a", "b"])
    assert len(c) == 2
    assert c.get("k1" * 8, 2) == {"labels": [0, 1], "names": ["a", "b"]}  # from disk
    assert c.get("k1" * 8, 3) is None  # wrong size: not used
    path = tmp_path / ("k2" * 8)[:2] / f"{'k2' * 8}.json"
    path.write_text("{not json")
    c2 = PartitionCache(max_entries=0, directory=tmp_path)
    assert c2.get("k2" * 8, 2) is None and c2.disk_errors == 1


def test_retry_after_forms():
    assert retry_after_seconds("2.5") == 2.5
    assert retry_after_seconds(None) is None and retry_after_seconds("soon") is None
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == pytest.approx(10.0)


# ------------------------------------------------------------------ check_judge
def test_check_ok(judge_server):
    assert check_judge({"base_url": judge_server.base_url, "model": "judge-model", "fallback": "single"}) == []


def test_check_unknown_model(judge_server):
    (msg,) = check_judge({"base_url": judge_server.base_url, "model": "gpt-9", "fallback": "single"})
    assert "algorithm.cue.judge.model='gpt-9' is not served" in msg and "judge-model" in msg


def test_check_unreachable(closed_port_url):
    (msg,) = check_judge({"base_url": closed_port_url, "model": "m", "fallback": "single"})
    assert f"algorithm.cue.judge.base_url={closed_port_url!r} is unreachable" in msg


def test_check_missing_and_wrong_key(judge_server, monkeypatch):
    judge_server.required_key = "sk-right"
    monkeypatch.delenv("JUDGE_CHECK_KEY", raising=False)
    cfg = {"base_url": judge_server.base_url, "model": "judge-model", "api_key_env": "JUDGE_CHECK_KEY",
           "fallback": "single"}
    msgs = check_judge(cfg)
    assert any("JUDGE_CHECK_KEY is not set" in m for m in msgs) and any("HTTP 401" in m for m in msgs)
    monkeypatch.setenv("JUDGE_CHECK_KEY", "sk-wrong")
    (msg,) = check_judge(cfg)
    assert "refused the key in $JUDGE_CHECK_KEY" in msg and "sk-wrong" not in msg
    monkeypatch.setenv("JUDGE_CHECK_KEY", "sk-right")
    assert check_judge(cfg) == []


def test_check_base_url_without_v1(judge_server):
    (msg,) = check_judge({"base_url": judge_server.base_url[:-3], "model": "judge-model", "fallback": "single"})
    assert "returned 404" in msg and "/v1" in msg


def test_check_bad_values_and_fallback():
    (msg,) = check_judge({"model": ""})
    assert "algorithm.cue.judge.model" in msg
    msgs = check_judge({"base_url": "http://127.0.0.1:1/v1", "model": "m", "fallback": "no_such_partitioner"},
                       timeout_s=0.5)
    assert any("algorithm.cue.judge.fallback='no_such_partitioner'" in m for m in msgs)


def test_docs_config_table_matches_schema():
    from pathlib import Path

    from verl_focal.config.schema import _rows

    doc = (Path(__file__).resolve().parents[2] / "docs" / "judge.md").read_text()
    table = doc.split("<!-- judge-config-table:start -->\n")[1].split("<!-- judge-config-table:end -->")[0]
    assert table.strip().splitlines()[2:] == list(_rows(JudgeConfig, "algorithm.cue.judge")), (
        "docs/judge.md's config table is stale: regenerate it from verl_focal.config.schema"
    )


def test_judge_package_does_not_import_verl():
    import subprocess
    import sys

    code = ("import sys, verl_focal.partition.judge, verl_focal.lab.agreement; "
            "from verl_focal.partition import get_partitioner; get_partitioner('judge', model='m', fallback='single'); "
            "bad = [m for m in sys.modules if m == 'verl' or m.startswith('verl.')]; assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_check_offline_subset(monkeypatch, closed_port_url):
    monkeypatch.delenv("JUDGE_OFFLINE_KEY", raising=False)
    cfg = {"base_url": closed_port_url, "model": "m", "api_key_env": "JUDGE_OFFLINE_KEY", "fallback": "single"}
    (msg,) = check_judge(cfg, network=False)  # the unreachable URL is not contacted
    assert "JUDGE_OFFLINE_KEY is not set" in msg
    # the process that reads it, on its node, and where to set it on a cluster (gpu-readiness §6)
    import os
    import socket

    assert f"(pid {os.getpid()} on {socket.gethostname()})" in msg and "before `ray start` on every node" in msg
    monkeypatch.setenv("JUDGE_OFFLINE_KEY", "k")
    assert check_judge(cfg, network=False) == []
    assert "unreachable" in check_judge(cfg)[0]


def test_trailing_commas_tolerated_in_the_final_answer():
    text = '<think>{"groups": [[1], [2], [3]]}</think> {"groups": [[1, 3,], [2],],}'
    assert parse_reply(text, 3).labels == [0, 1, 0]  # the final answer, not the strict draft in <think>
