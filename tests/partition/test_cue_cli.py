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
