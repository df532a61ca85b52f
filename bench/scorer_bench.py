"""Scorer fidelity and cost on the graded equivalence corpus (issues 13 and 26).

For ours (``verl_focal.reward.compute_score``), ours with the rules off (``equivalence_rules=False``:
the math-verify-only check of earlier versions), and verl 0.9.1's ``math_verify``, ``prime_math``
and ``math_dapo`` scorers, all in this one run, on tests/reward/equivalence_corpus.py:

* recall (accepted / positives) and false-positive rate (accepted / negatives) per answer class,
  on the physics/engineering-style classes together, and on issue 26's classes together (primes,
  angle marks, congruences, inequalities against intervals, constant expressions, Unicode forms);
* false positives of each prediction scored against another item's reference ("another problem's
  answer", at four offsets: ~2,500 pairs; pairs whose two references are the same answer are
  skipped), and those together with the integer-reference near misses (the answer ± 1, in several
  forms) of the ``integers`` class;
* per-call CPU time on long responses (~30 KB of reasoning before the box), ours against ours with
  the rules off, interleaved, as a ratio.

Every response is a boxed answer after some text.  verl's scorers take one reference string: a
list of accepted forms is given to them one form at a time, and any match counts.

    PYTHONPATH=$PWD python bench/scorer_bench.py [--out outputs/scorer_bench.json] [--long-n 40] [--markdown]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "reward"))
sys.path.insert(0, str(ROOT))

from equivalence_corpus import CORPUS, ISSUE26_CLASSES, PHYSICS_CLASSES, boxed, cross_pairs  # noqa: E402

MATH = "verl_focal/deepscaler"
CROSS_STRIDES = (7, 13, 31, 101)  # each positive against the references 7, 13, 31 and 101 items on


def _forms(ref):
    return ref if isinstance(ref, list) else [ref]


def make_scorers() -> dict:
    from verl.utils.reward_score import math_dapo, math_verify, prime_math

    from verl_focal.reward import compute_score

    def ours(resp, ref):
        return compute_score(MATH, resp, ref)["acc"] == 1.0

    def ours_rules_off(resp, ref):
        return compute_score(MATH, resp, ref, equivalence_rules=False)["acc"] == 1.0

    def verl_math_verify(resp, ref):
        return any(float(math_verify.compute_score(resp, str(f))) > 0 for f in _forms(ref))

    def verl_prime_math(resp, ref):
        return any(bool(prime_math.compute_score(resp, str(f))[0]) for f in _forms(ref))

    def verl_math_dapo(resp, ref):
        return any(bool(math_dapo.compute_score(resp, str(f))["acc"]) for f in _forms(ref))

    return {"ours": ours, "ours_rules_off": ours_rules_off, "verl_math_verify": verl_math_verify,
            "verl_prime_math": verl_prime_math, "verl_math_dapo": verl_math_dapo}


def _safe(fn, resp, ref) -> bool:
    try:
        return bool(fn(resp, ref))
    except Exception:  # a scorer that crashes on an answer rejects it
        return False


def fidelity(scorers: dict) -> dict:
    out: dict = {}
    for name, fn in scorers.items():
        per_class, tot = {}, {"tp": 0, "pos": 0, "fp": 0, "neg": 0}
        phys = {"tp": 0, "pos": 0}
        new = {"tp": 0, "pos": 0, "fp": 0, "neg": 0}
        t0 = time.perf_counter()
        for cls, items in CORPUS.items():
            c = {"tp": 0, "pos": 0, "fp": 0, "neg": 0}
            for it in items:
                got = _safe(fn, boxed(it.pred), it.ref)
                if it.ok:
                    c["pos"] += 1
                    c["tp"] += got
                else:
                    c["neg"] += 1
                    c["fp"] += got
            per_class[cls] = {"recall": c["tp"] / c["pos"], "fp_rate": c["fp"] / c["neg"], **c}
            for k in tot:
                tot[k] += c[k]
            if cls in PHYSICS_CLASSES:
                phys["tp"] += c["tp"]
                phys["pos"] += c["pos"]
            if cls in ISSUE26_CLASSES:
                for k in new:
                    new[k] += c[k]
        cross_n = cross_fp = 0
        for pred, own_ref, other_ref in (p for stride in CROSS_STRIDES for p in cross_pairs(stride)):
            if _same_answer(own_ref, other_ref):
                continue
            cross_n += 1
            cross_fp += _safe(fn, boxed(pred), other_ref)
        out[name] = {"per_class": per_class, "recall": tot["tp"] / tot["pos"], "fp_rate": tot["fp"] / tot["neg"],
                     "physics_recall": phys["tp"] / phys["pos"], "cross_fp_rate": cross_fp / max(cross_n, 1),
                     "issue26_recall": new["tp"] / new["pos"], "issue26_fp_rate": new["fp"] / new["neg"],
                     "cross_pairs": cross_n, "cross_fp": cross_fp,
                     "cross_and_int_fp": cross_fp + per_class["integers"]["fp"],
                     "cross_and_int_n": cross_n + per_class["integers"]["neg"],
                     "wall_s": time.perf_counter() - t0}
        print(f"  scored the corpus with {name} ({out[name]['wall_s']:.0f} s)", file=sys.stderr)
    return out


_SAME: dict = {}


def _same_answer(a, b) -> bool:
    """The two references denote the same answer (equal text, the same list of accepted forms, or
    ours accepts each as the other): a match against it is not a false positive.  The same pairs
    are skipped for every scorer."""
    if not isinstance(a, str) or not isinstance(b, str):
        fa, fb = ({"".join(str(f).split()) for f in _forms(x)} for x in (a, b))
        return bool(fa & fb)
    key = (a, b)
    if key not in _SAME:
        from verl_focal.reward import compute_score

        _SAME[key] = "".join(a.split()) == "".join(b.split()) or (
            compute_score(MATH, boxed(b), a)["acc"] == 1.0 and compute_score(MATH, boxed(a), b)["acc"] == 1.0)
    return _SAME[key]


FILLER = (r"Let $f(x) = \frac{x^2 + 3x}{2}$; then $f'(x) = x + \frac{3}{2}$ and the tangent at "
          r"$x_0 = 1$ is $y = \frac{5}{2}(x - 1) + 2$. Checking $\boxed{\text{draft}}$ is not final. ")


def long_response(pred: str, size: int = 30_000) -> str:
    body = (FILLER * (size // len(FILLER) + 1))[:size]
    return body + "\n\nTherefore the final answer is $\\boxed{" + pred + "}$."


def timing(n: int, repeats: int) -> dict:
    from verl_focal.reward import compute_score

    items = [it for items in CORPUS.values() for it in items]
    step = max(1, len(items) // n)
    sample = items[::step][:n]
    resps = [(long_response(it.pred), it.ref) for it in sample]
    for resp, ref in resps[:3]:  # warm imports and caches for both paths
        compute_score(MATH, resp, ref)
        compute_score(MATH, resp, ref, equivalence_rules=False)
    cpu = {"ours": 0.0, "ours_rules_off": 0.0}
    for _ in range(repeats):
        for resp, ref in resps:
            for name, rules in (("ours_rules_off", False), ("ours", True)):
                t = time.process_time()
                compute_score(MATH, resp, ref, equivalence_rules=rules)
                cpu[name] += time.process_time() - t
    calls = repeats * len(resps)
    per = {k: v / calls for k, v in cpu.items()}
    return {"calls": calls, "response_chars": len(resps[0][0]), "cpu_s_per_call": per,
            "ratio_ours_over_rules_off": per["ours"] / per["ours_rules_off"]}


def markdown(fid: dict, names: list, classes: list) -> str:
    """The recall / false-positive table as Markdown (one row per class, one column per scorer)."""
    rows = ["| class (positives / negatives) | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for cls in classes:
        c0 = fid[names[0]]["per_class"][cls]
        cells = [f"{fid[n]['per_class'][cls]['recall']:.3f} / {fid[n]['per_class'][cls]['fp_rate']:.3f}" for n in names]
        rows.append(f"| {cls} ({c0['pos']} / {c0['neg']}) | " + " | ".join(cells) + " |")
    rows.append("| **issue-26 classes** | "
                + " | ".join(f"{fid[n]['issue26_recall']:.3f} / {fid[n]['issue26_fp_rate']:.3f}" for n in names) + " |")
    rows.append("| **all classes** | " + " | ".join(f"{fid[n]['recall']:.3f} / {fid[n]['fp_rate']:.3f}" for n in names)
                + " |")
    rows.append("| cross-problem FP | " + " | ".join(f"{fid[n]['cross_fp']} / {fid[n]['cross_pairs']}" for n in names)
                + " |")
    rows.append("| cross-problem + integer ± 1 FP | "
                + " | ".join(f"{fid[n]['cross_and_int_fp']} / {fid[n]['cross_and_int_n']}" for n in names) + " |")
    return "\n".join(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(ROOT / "outputs" / "scorer_bench.json"), help="JSON result path")
    ap.add_argument("--long-n", type=int, default=40, help="corpus items timed on 30 KB responses")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--scorers", default="", help="comma-separated subset (default: all)")
    ap.add_argument("--markdown", action="store_true", help="also print the table as Markdown")
    args = ap.parse_args(argv)
    os.environ.setdefault("VERL_FOCAL_REWARD_WORKERS", "1")
    scorers = make_scorers()
    if args.scorers:
        scorers = {k: v for k, v in scorers.items() if k in args.scorers.split(",")}
    fid = fidelity(scorers)
    tim = timing(args.long_n, args.repeats)
    classes = list(CORPUS)
    names = list(fid)
    print(f"{'class':<16}" + "".join(f"{n:>22}" for n in names))
    print(f"{'':<16}" + "".join(f"{'recall / FP':>22}" for _ in names))
    for cls in classes:
        print(
            f"{cls:<16}"
            + "".join(
                f"{fid[n]['per_class'][cls]['recall']:>12.3f} / {fid[n]['per_class'][cls]['fp_rate']:.3f}"
                for n in names
            )
        )
    print(f"{'ALL':<16}" + "".join(f"{fid[n]['recall']:>12.3f} / {fid[n]['fp_rate']:.3f}" for n in names))
    print(f"{'physics recall':<16}" + "".join(f"{fid[n]['physics_recall']:>22.3f}" for n in names))
    print(f"{'issue-26 classes':<16}"
          + "".join(f"{fid[n]['issue26_recall']:>12.3f} / {fid[n]['issue26_fp_rate']:.3f}" for n in names))
    print(f"{'cross FP':<16}" + "".join(f"{fid[n]['cross_fp']:>14d} / {fid[n]['cross_pairs']:<5d}" for n in names))
    print(f"{'cross+int±1 FP':<16}"
          + "".join(f"{fid[n]['cross_and_int_fp']:>14d} / {fid[n]['cross_and_int_n']:<5d}" for n in names))
    if args.markdown:
        print(markdown(fid, names, classes))
    print(
        f"\n30 KB responses, {tim['calls']} calls each: ours {1e3 * tim['cpu_s_per_call']['ours']:.2f} ms CPU/call, "
        f"rules off {1e3 * tim['cpu_s_per_call']['ours_rules_off']:.2f} ms; "
        f"ratio {tim['ratio_ours_over_rules_off']:.2f}x"
    )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"fidelity": fid, "timing_30kb": tim, "corpus_items": sum(map(len, CORPUS.values()))},
                              indent=2))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
