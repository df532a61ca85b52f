"""`verl-focal eval frontier` on runs whose answer is known, against values computed here with plain loops from the
formulas (unbiased pass@k, D = ȳ − f(x̄) on the polyline), under both uncertainty modes; every refusal in one line;
the example runs of `eval example` end to end."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

from verl_focal.cli import main as cli_main

N = 16  # samples per problem
SRC = "verl_focal/aime24"
#: per policy: P(correct) on the easy half and the hard half of the problems
POLICY = {"ref": (0.9, 0.0), "p1": (0.7, 0.02), "p2": (0.5, 0.05),   # the control family, away from ref
          "on": (0.7, 0.02),                                         # p1's rates, its own runs: D near 0
          "above": (0.55, 0.2),                                      # far more pass@16 at pass@1 between p1 and ref
          "outside": (0.95, 0.05)}                                   # more pass@1 than ref: right of every point
SEEDS = (1, 2, 3, 4)
PROBLEMS = 120


def _counts(policy: str, seed: int) -> list[int]:
    easy, hard = POLICY[policy]
    rng = np.random.default_rng([seed, list(POLICY).index(policy)])
    return [int(rng.binomial(N, easy if i < PROBLEMS // 2 else hard)) for i in range(PROBLEMS)]


def _write_run(path: Path, counts: dict[str, list[int]], n: int = N) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        for src, cs in counts.items():
            for i, c in enumerate(cs):
                for j in range(n):
                    fh.write(json.dumps({"uid": f"{src}-{i}", "sample": j, "data_source": src,
                                         "acc": float(j < c)}) + "\n")


def _pass(c: int, k: int, n: int = N) -> float:
    """1 − C(n−c, k)/C(n, k), Chen et al. Eq. 1."""
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def _value(counts: list[int], k: int) -> float:
    return sum(_pass(c, k) for c in counts) / len(counts)


def _interp(xs: list[float], ys: list[float], x: float) -> float:
    pts = sorted(zip(xs, ys))
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        if x0 <= x <= x1:
            return y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    raise AssertionError("outside")


@pytest.fixture
def design(tmp_path):
    """Runs of every policy at 4 seeds ("on": its own runs drawn at p1's rates, so its D is near 0; a method on p1's
    own runs is refused) and the families files of both modes."""
    runs = tmp_path / "runs"
    for pol in POLICY:
        for s in SEEDS:
            _write_run(runs / f"{pol}-s{s}.jsonl", {SRC: _counts(pol, s)})

    def doc(one: bool) -> dict:
        def r(pol):
            if one:
                return {"run": f"{pol}-s1"}
            return {"seeds": {s: f"{pol}-s{s}" for s in SEEDS}}

        return {"reference": {"name": "GRPO", **r("ref")},
                "controls": [{"family": "lower lr", "knob": "lr", "points": [{"value": "5e-7", **r("p1")},
                                                                               {"value": "2e-7", **r("p2")}]}],
                "methods": [{"name": "on", **r("on")}, {"name": "above", **r("above")},
                            {"name": "outside", **r("outside")}]}

    for name, one in (("seeds", False), ("one", True)):
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(doc(one), allow_unicode=True))
    return tmp_path


def _frontier(tmp_path, families: str, *extra: str, out: str = "out") -> dict:
    rc = cli_main(["eval", "frontier", "--families", str(tmp_path / families), "--runs", str(tmp_path / "runs"),
                   "--y", "pass@16", "--n-boot", "1000", "--out-dir", str(tmp_path / out), *extra])
    assert rc == 0
    return json.loads((tmp_path / out / "frontier.json").read_text())


@pytest.mark.parametrize("families,mode", [("seeds.yaml", "seeds"), ("one.yaml", "problems")])
def test_on_above_and_outside_get_their_verdicts_in_both_modes(design, families, mode):
    fr = _frontier(design, families)
    assert fr["resampled"] == mode
    by = {c["method"]: c for c in fr["claims"]}
    assert abs(by["on"]["estimate"]) < 0.03 and by["on"]["verdict"] == "not detected"
    assert by["on"]["ci_low"] < 0 < by["on"]["ci_high"]
    assert by["above"]["verdict"] == "better" and by["above"]["estimate"] > 0.2
    assert by["outside"]["verdict"] == "outside the grid" and by["outside"]["x"] > 0
    assert all(c["resampled"] == mode for c in fr["claims"])
    md = (design / "out" / "frontier.md").read_text()
    if mode == "problems":  # said in the table and in the figure's note (the same sentence)
        assert "training-run variance is NOT in these intervals" in md
    else:
        assert "paired bootstrap over seeds" in md and "NOT" not in md
    assert (design / "out" / "frontier.png").stat().st_size > 5_000


def test_points_and_d_equal_the_formulas_over_seeds(design):
    fr = _frontier(design, "seeds.yaml")
    val = {(p, s): (_value(_counts(p, s), 1), _value(_counts(p, s), 16)) for p in POLICY for s in SEEDS}

    def mean_delta(p: str, i: int) -> float:
        return sum(val[(p, s)][i] - val[("ref", s)][i] for s in SEEDS) / len(SEEDS)

    pts = {p["policy"]: p for p in fr["points"]}
    fx, fy = [0.0], [0.0]
    for p in ("p1", "p2"):
        name = f"lower lr lr={'5e-7' if p == 'p1' else '2e-7'}"
        assert pts[name]["pass@1"]["mean"] == pytest.approx(mean_delta(p, 0), abs=1e-12)
        assert pts[name]["pass@16"]["mean"] == pytest.approx(mean_delta(p, 1), abs=1e-12)
        d = [val[(p, s)][1] - val[("ref", s)][1] for s in SEEDS]  # the Student-t interval over seeds
        sd = math.sqrt(sum((v - sum(d) / 4) ** 2 for v in d) / 3)
        from scipy import stats

        assert pts[name]["pass@16"]["ci_high"] == pytest.approx(sum(d) / 4 + stats.t.ppf(0.975, 3) * sd / 2,
                                                                 abs=1e-12)
        fx.append(mean_delta(p, 0))
        fy.append(mean_delta(p, 1))
    c = next(c for c in fr["claims"] if c["method"] == "above")
    x, y = mean_delta("above", 0), mean_delta("above", 1)
    assert c["x"] == pytest.approx(x, abs=1e-12) and c["estimate"] == pytest.approx(y - _interp(fx, fy, x), abs=1e-12)


def test_runs_on_other_problems_are_compared_on_the_shared_ones_and_the_output_says_so(design):
    runs = design / "runs"
    counts = _counts("above", 1)
    _write_run(runs / "above-s1.jsonl", {SRC: counts + [N, N, N]})  # three problems nobody else has
    fr = _frontier(design, "one.yaml")
    assert fr["problems"][SRC.split("/")[-1]] == {"shared": PROBLEMS, "left_out": {"above-s1": 3}}
    c = next(c for c in fr["claims"] if c["method"] == "above")
    ref = _value(_counts("ref", 1), 1)
    assert c["x"] == pytest.approx(_value(counts, 1) - ref, abs=1e-12)  # the extra problems are not in it
    md = (design / "out" / "frontier.md").read_text()
    assert "aime24: 120 problems shared by every run, left out: above-s1 3" in md


def _refused(capsys, argv: list[str]) -> str:
    assert cli_main(argv) == 2
    err = [ln for ln in capsys.readouterr().err.splitlines() if "(run with --debug" not in ln]
    assert len(err) == 1, err
    return err[0]


def _edit(design: Path, name: str, fn) -> Path:
    doc = yaml.safe_load((design / "seeds.yaml").read_text())
    fn(doc)
    (design / name).write_text(yaml.safe_dump(doc, allow_unicode=True))
    return design / name


def _args(design: Path, families: Path, *extra: str) -> list[str]:
    return ["eval", "frontier", "--families", str(families), "--runs", str(design / "runs"), "--y", "pass@16",
            "--out-dir", str(design / "o"), *extra]


def test_bad_input_is_refused_in_one_line_naming_the_file_run_or_key(design, capsys):
    f = _edit(design, "nopoint.yaml", lambda d: d["controls"][0].update(points=[]))
    assert "controls[0] 'lower lr': the family has no point" in _refused(capsys, _args(design, f))

    f = _edit(design, "missing.yaml", lambda d: d["methods"][1]["seeds"].update({2: "abvoe-s2"}))
    msg = _refused(capsys, _args(design, f))
    assert "run 'abvoe-s2' (method 'above') is not in --runs" in msg and "did you mean 'above-s2'" in msg

    f = _edit(design, "seeds_differ.yaml", lambda d: d["methods"][1]["seeds"].pop(4))
    msg = _refused(capsys, _args(design, f))
    assert "method 'above' has seeds [1, 2, 3], the reference 'GRPO' has [1, 2, 3, 4]" in msg

    assert "--y pass@32: run 'ref-s1' has only 16 samples per problem on 'aime24'" in _refused(
        capsys, _args(design, design / "seeds.yaml", "--y", "pass@32"))

    _write_run(design / "runs" / "above-s3.jsonl", {"verl_focal/math500": _counts("above", 3)})
    msg = _refused(capsys, _args(design, design / "seeds.yaml"))
    assert "run 'above-s3' is scored on another benchmark set than the reference run 'ref-s1' (missing aime24) " \
           "(extra math500)" in msg

    f = _edit(design, "typo.yaml", lambda d: d.update(method=d.pop("methods")))
    assert "top level: unknown key 'method' (did you mean 'methods'?)" in _refused(capsys, _args(design, f))


def test_verl_dumps_are_read_at_the_step_asked_for_and_a_missing_step_is_refused(design, capsys):
    before = _frontier(design, "one.yaml", out="from-jsonl")
    for run in ("ref-s1", "p1-s1", "p2-s1", "on-s1", "above-s1", "outside-s1"):
        dump = design / "runs" / run  # a verl validation_data_dir: <step>.jsonl lines in verl's own keys
        dump.mkdir()
        recs = [json.loads(ln) for ln in (design / "runs" / f"{run}.jsonl").read_text().splitlines()]
        for step in (100, 200):
            with open(dump / f"{step}.jsonl", "w") as fh:
                for r in recs:
                    acc = r["acc"] if step == 200 else 0.0  # step 100: nothing solved
                    fh.write(json.dumps({"input": r["uid"], "output": "x", "gts": "1", "score": acc, "step": step,
                                         "data_source": SRC, "uid": f"u_{r['uid']}_{r['sample']}"}) + "\n")
        (design / "runs" / f"{run}.jsonl").unlink()
    msg = _refused(capsys, _args(design, design / "one.yaml", "--step", "150"))
    assert "run 'ref-s1'" in msg and "--step 150: no 150.jsonl in this verl validation dump (steps: 100, 200)" in msg
    after = _frontier(design, "one.yaml", "--step", "200", out="from-dumps")
    assert [(c["method"], c["estimate"], c["verdict"]) for c in after["claims"]] == [
        (c["method"], c["estimate"], c["verdict"]) for c in before["claims"]]


def test_an_outside_cell_prints_its_outside_share_unless_the_point_itself_is_outside():
    from verl_focal.lab.stats.frontier import claim_cell

    inside = {"verdict": "outside the grid", "grid": [-0.106, 0.0], "x": -0.033, "estimate": 0.0412,
              "outside_share": 0.3105}
    assert claim_cell(inside) == ("outside the grid in 31.1% of resamples (over 2.5%; pass@1 -0.033; grid -0.106 to "
                                  "+0.000): D +0.041 at the point, no interval")
    beyond = dict(inside, x=0.013, estimate=None, outside_share=1.0)
    assert claim_cell(beyond) == "outside the grid (pass@1 +0.013; grid -0.106 to +0.000)"


def test_example_runs_report_and_frontier_offline(tmp_path):
    assert cli_main(["eval", "example", "--out-dir", str(tmp_path)]) == 0
    runs = tmp_path / "runs"
    assert cli_main(["eval", "report", "--runs", str(runs), "--baseline", "grpo-s1", "--k-max", "16",
                     "--iterations", "200", "--out-dir", str(tmp_path / "report")]) == 0
    for fam, mode in (("families.yaml", "seeds"), ("families_one_seed.yaml", "problems")):
        out = tmp_path / f"frontier-{mode}"
        assert cli_main(["eval", "frontier", "--families", str(tmp_path / fam), "--runs", str(runs), "--y", "pass@16",
                         "--out-dir", str(out)]) == 0
        fr = json.loads((out / "frontier.json").read_text())
        assert fr["resampled"] == mode and len(fr["claims"]) == 4 and (out / "frontier.png").stat().st_size > 10_000
        assert fr["benchmarks"] == ["aime24", "math500"]
        # issue 45: "outside the grid" with the method's point inside the family's range says why: its outside share
        md = (out / "frontier.md").read_text()
        for c in fr["claims"]:
            if c["verdict"] == "outside the grid" and c["estimate"] is not None:
                lo, hi = c["grid"]
                assert lo <= c["x"] <= hi and c["outside_share"] > 0.025
                assert (f"outside the grid in {c['outside_share']:.1%} of resamples (over 2.5%; pass@1 "
                        f"{c['x']:+.3f}; grid {lo:+.3f} to {hi:+.3f}): D {c['estimate']:+.3f} at the point, no "
                        "interval") in md
        # issue 45: the power line, by hand from each printed interval: half-width h = q_{0.975} · se, so the
        # smallest D detected with 80% power is h · (q_{0.975} + q_{0.80}) / q_{0.975} (t with n − 1 df over seeds,
        # the normal over problems)
        from scipy import stats as st

        n = len(fr["seeds"])
        q975, q80 = ((st.t.ppf(0.975, n - 1), st.t.ppf(0.80, n - 1)) if mode == "seeds"
                     else (st.norm.ppf(0.975), st.norm.ppf(0.80)))
        by_hand = []
        for c in fr["claims"]:
            if c["ci_low"] is None:
                assert f"D {c['estimate']:+.3f} at the point, no interval; detects" not in md
                continue
            h = (c["ci_high"] - c["ci_low"]) / 2
            d = h * (q975 + q80) / q975
            by_hand.append(d)
            assert f"[{c['ci_low']:+.3f}, {c['ci_high']:+.3f}] **{c['verdict']}**; detects ≥ {d:.3f}" in md, (d, md)
        assert by_hand
        line = next(ln for ln in md.splitlines() if ln.startswith("Power: "))
        assert (f"is {float(np.median(by_hand)):.3f} [{min(by_hand):.3f}, {max(by_hand):.3f}] (median [range] over "
                f"the {len(by_hand)} comparisons inside the grid") in line, line
    assert any(c["verdict"] == "outside the grid" and c["estimate"] is not None for c in fr["claims"])  # one seed
    # the same bytes on every call
    first = (runs / "grpo-s1.jsonl").read_bytes()
    assert cli_main(["eval", "example", "--out-dir", str(tmp_path)]) == 0
    assert (runs / "grpo-s1.jsonl").read_bytes() == first


def test_points_whose_paired_differences_are_all_zero_are_refused_naming_both(tmp_path, capsys):
    """Copies of a control point's runs under new names given as a method (the names differ, so the families file
    passes): its paired differences from that point are all zero, D would be 0 with a zero-width interval; refused.
    The same for a copy of the reference's runs as a control point."""
    assert cli_main(["eval", "example", "--out-dir", str(tmp_path)]) == 0
    runs = tmp_path / "runs"
    for s in SEEDS:
        shutil.copy(runs / f"grpo-lr7e-7-s{s}.jsonl", runs / f"copy-s{s}.jsonl")
        shutil.copy(runs / f"grpo-s{s}.jsonl", runs / f"refcopy-s{s}.jsonl")
    doc = yaml.safe_load((tmp_path / "families.yaml").read_text())
    doc["methods"] = [{"name": "F-GRPO γ=1", "seeds": {s: f"copy-s{s}" for s in SEEDS}}]
    (tmp_path / "cheat.yaml").write_text(yaml.safe_dump(doc, allow_unicode=True))
    capsys.readouterr()
    argv = ["eval", "frontier", "--runs", str(runs), "--y", "pass@16", "--out-dir", str(tmp_path / "fr")]
    assert cli_main([*argv, "--families", str(tmp_path / "cheat.yaml")]) == 2
    first = capsys.readouterr().err.splitlines()[0]
    assert first.endswith("cheat.yaml: control 'lower lr' point lr=7e-7 and method 'F-GRPO γ=1' have the same pass@1 "
                          "and pass@16 at every seed (their paired differences are all zero): the same runs under "
                          "two names? give each point its own runs")
    doc = yaml.safe_load((tmp_path / "families.yaml").read_text())
    doc["controls"][1]["points"][0] = {"value": 0.01, "seeds": {s: f"refcopy-s{s}" for s in SEEDS}}
    (tmp_path / "cheat2.yaml").write_text(yaml.safe_dump(doc, allow_unicode=True))
    assert cli_main([*argv, "--families", str(tmp_path / "cheat2.yaml")]) == 2
    assert "cheat2.yaml: the reference and control 'KL to SFT' point kl_loss_coef=0.01 have the same pass@1" in \
        capsys.readouterr().err
    # and the runs used twice by name: refused when the file is read, before any run
    doc = yaml.safe_load((tmp_path / "families.yaml").read_text())
    doc["methods"] = [{"name": "F-GRPO γ=1", "seeds": {s: f"grpo-s{s}" for s in SEEDS}}]
    (tmp_path / "cheat3.yaml").write_text(yaml.safe_dump(doc, allow_unicode=True))
    assert cli_main([*argv, "--families", str(tmp_path / "cheat3.yaml")]) == 2
    assert "cheat3.yaml: run 'grpo-s1' is used by two points, the reference and method 'F-GRPO γ=1'" in \
        capsys.readouterr().err
