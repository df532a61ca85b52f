"""``verl-focal cues``: cue sequence, signature and cluster of each trace."""

from __future__ import annotations

import json

import cue_corpus

from verl_focal.cli import main


def test_cues_command_json(tmp_path, capsys):
    texts, methods = cue_corpus.group("right_triangle_altitude")
    paths = []
    for i, t in enumerate(texts):
        p = tmp_path / f"t{i}.txt"
        p.write_text(t)
        paths.append(str(p))
    jl = tmp_path / "more.jsonl"
    jl.write_text(json.dumps({"response": texts[0]}) + "\n" + json.dumps(texts[2]) + "\n")
    assert main(["cues", *paths, str(jl), "--json", "--steps"]) == 0
    out = json.loads(capsys.readouterr().out)
    clusters = [t["cluster"] for t in out["traces"]]
    assert clusters[0] == clusters[1] == clusters[4] and clusters[2] == clusters[3] == clusters[5]
    assert clusters[0] != clusters[2]
    assert out["traces"][0]["signature"].startswith("math_v1:")
    assert "met" in out["suppressed"]  # Pythagoras appears in every trace of this group
    assert all(t["steps"] for t in out["traces"])


def test_cues_command_text_and_errors(tmp_path, capsys):
    p = tmp_path / "a.txt"
    p.write_text("Case 1: x is even. Case 2: x is odd.")
    assert main(["cues", str(p)]) == 0
    assert "math_v1:cw" in capsys.readouterr().out
    assert main(["cues", str(tmp_path / "missing.txt")]) == 2
    assert "missing.txt" in capsys.readouterr().err
    bad = tmp_path / "b.jsonl"
    bad.write_text(json.dumps({"text": "x"}) + "\n")
    assert main(["cues", str(bad)]) == 2
    assert "--field" in capsys.readouterr().err


def test_cues_reads_a_json_array_and_json_lines_as_separate_traces(tmp_path, capsys):
    """A JSON array (in a .json file, or any file whose text is one) and JSON lines are several traces, not
    one text: each gets its own cluster and cue vector, and no cue of one is suppressed by the other."""
    texts, _ = cue_corpus.group("right_triangle_altitude")
    arr = tmp_path / "traces.json"
    arr.write_text(json.dumps([texts[0], {"response": texts[2]}]))
    txt = tmp_path / "traces.txt"
    txt.write_text(json.dumps([texts[0], texts[2]]))
    lines = tmp_path / "lines.json"  # JSON lines in a .json file
    lines.write_text(json.dumps(texts[0]) + "\n" + json.dumps({"response": texts[2]}) + "\n")
    results = []
    for f in (arr, txt, lines):
        assert main(["cues", str(f), "--json"]) == 0
        out = capsys.readouterr()
        assert "warning" not in out.err
        results.append(json.loads(out.out))
    for res in results:
        assert len(res["traces"]) == 2
        c0, c2 = (t["cluster"] for t in res["traces"])
        assert c0 != c2  # the two methods of this group (test_cues_command_json) are two clusters
        assert all(t["vector"] for t in res["traces"])
    assert [t["name"] for t in results[0]["traces"]] == [f"{arr}[0]", f"{arr}[1]"]
    assert [t["name"] for t in results[2]["traces"]] == [f"{lines}:1", f"{lines}:2"]
    # the same traces as two files give the same signatures
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(texts[0])
    b.write_text(texts[2])
    assert main(["cues", str(a), str(b), "--json"]) == 0
    sigs = [t["signature"] for t in json.loads(capsys.readouterr().out)["traces"]]
    assert sigs == [t["signature"] for t in results[0]["traces"]]


def test_cues_warns_on_a_single_trace_saying_how_it_was_read(tmp_path, capsys):
    texts, _ = cue_corpus.group("right_triangle_altitude")
    one = tmp_path / "one.txt"
    one.write_text(texts[0])
    assert main(["cues", str(one)]) == 0
    out = capsys.readouterr()
    warn = [ln for ln in out.err.splitlines() if ln.strip()]
    assert warn == [f"verl-focal cues: warning: one trace (read {one} as one plain-text trace): its cues are in all "
                    "of the group's traces, so ρ suppresses every one and its vector is empty; give two or more "
                    "traces (files, .jsonl lines or a JSON array) to compare them"]
    assert "(empty: residual cluster)" in out.out and "1 cluster(s) among 1 trace(s)" in out.out
    single = tmp_path / "single.json"
    single.write_text(json.dumps([{"response": texts[0]}]))
    assert main(["cues", str(single)]) == 0
    assert f"read {single} as a JSON array of 1 trace(s)" in capsys.readouterr().err
    # JSON that holds no trace is refused in one line naming the file and the element
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(["fine", 3]))
    assert main(["cues", str(bad)]) == 2
    assert f"{bad}[1]: a trace must be a string or an object" in capsys.readouterr().err
    (tmp_path / "empty.json").write_text("[]")
    assert main(["cues", str(tmp_path / "empty.json")]) == 2
    assert "no trace" in capsys.readouterr().err
    notjson = tmp_path / "broken.json"
    notjson.write_text('["a", ')
    assert main(["cues", str(notjson)]) == 2
    assert f"{notjson}: not JSON (line 1" in capsys.readouterr().err
