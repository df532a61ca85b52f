"""How likely a tiny-model cue run partitions nothing: the sizing behind ``test_cue_grpo_main_ppo``'s rollout count.

Cue-GRPO partitions only groups with at least two correct rollouts.  The tiny model of :mod:`tiny_assets` names the
right digit rarely, so a run whose steps find no such group checks nothing of the partition path.  This script
samples each of the first training prompts ``--samples`` times with the initial weights (the rollout's settings:
temperature 1, no top-p/top-k, ``data.max_response_length`` new tokens), grades them with the package's scorer
(``verl_focal.reward.compute_score``, as the run does), and prints each prompt's success rate p and, for each
rollout count n, the chance that none of a step's groups has two correct (the product over its prompts of
P(Binomial(n, p) <= 1)).  Step 2 samples from updated weights, so its line is an estimate.

    .venv/bin/python tests/e2e/partition_odds.py [--samples 512] [--batch 4] [--n 16 32 48 64] [--scorer test]
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from launch import MAX_RESPONSE_LENGTH  # noqa: E402


def success_rates(assets: dict[str, str], prompts: int, samples: int, scorer: str = "package",
                  seed: int = 0) -> list[float]:
    """Each of the first ``prompts`` training prompts' share of correct responses among ``samples``.

    ``scorer``: ``"package"`` (``verl_focal.reward``, the last number; ``test_cue_grpo_main_ppo``) or ``"test"``
    (``reward_fn``, the answer digit anywhere; the other cue runs)."""
    import pandas as pd
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if scorer == "package":
        from verl_focal.reward import compute_score
    else:
        from reward_fn import compute_score

    tok = AutoTokenizer.from_pretrained(assets["model"])
    model = AutoModelForCausalLM.from_pretrained(assets["model"]).eval()
    rows = pd.read_parquet(assets["train"]).head(prompts)
    rates = []
    for i, row in enumerate(rows.itertuples()):
        text = tok.apply_chat_template(list(row.prompt), add_generation_prompt=True, tokenize=False)
        ids = torch.tensor([tok(text, add_special_tokens=False)["input_ids"]] * samples)
        torch.manual_seed(seed + i)
        with torch.no_grad():
            out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=MAX_RESPONSE_LENGTH,
                                 do_sample=True, temperature=1.0, top_p=1.0, top_k=0,
                                 pad_token_id=model.config.pad_token_id, eos_token_id=model.config.eos_token_id)
        answers = tok.batch_decode(out[:, ids.shape[1]:], skip_special_tokens=True)
        truth = row.reward_model["ground_truth"]
        correct = sum(compute_score(row.data_source, a, truth, dict(row.extra_info))["acc"] for a in answers)
        rates.append(correct / samples)
    return rates


def no_partition_odds(rates: list[float], n: int) -> float:
    """P(no group has >= 2 correct of n rollouts) = prod_i P(Binomial(n, p_i) <= 1)."""
    from scipy.stats import binom

    return math.prod(float(binom.cdf(1, n, p)) for p in rates)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--samples", type=int, default=512, help="responses per prompt (default 512)")
    ap.add_argument("--batch", type=int, default=4, help="prompts per step (launch.base_overrides: 4)")
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--n", type=int, nargs="+", default=[16, 32, 48, 64], help="rollout counts to size")
    ap.add_argument("--scorer", choices=("package", "test"), default="package",
                    help="verl_focal.reward (default) or tests/e2e/reward_fn.py")
    args = ap.parse_args()
    from tiny_assets import build_all

    with tempfile.TemporaryDirectory() as tmp:
        rates = success_rates(build_all(tmp, seed=0), args.batch * args.steps, args.samples, args.scorer)
    print("p per prompt:", " ".join(f"{p:.3f}" for p in rates))
    for n in args.n:
        per_step = [no_partition_odds(rates[s * args.batch:(s + 1) * args.batch], n) for s in range(args.steps)]
        print(f"n={n}: no partition in " + ", ".join(f"step {s + 1} {q:.2g}" for s, q in enumerate(per_step))
              + f"; in every step {math.prod(per_step):.2g}")


if __name__ == "__main__":
    main()
