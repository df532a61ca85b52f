"""verl PR #7237's move, reproduced on the installed verl, and what each trainer family does with our estimators.

The PR ("move shared PPO helpers out of ray trainer") moves ``compute_advantage`` and ``compute_response_mask``
from ``verl.trainer.ppo.ray_trainer`` into a new module ``verl.trainer.ppo.trainer_utils``, re-exports them from
``ray_trainer``, and has the v1 trainer's ``utils`` and the separated trainers' module (whose
``_fit_compute_advantage`` the one-step-off and fully-async trainers inherit) import them from the new module.
:func:`moved_copy` makes that change in a copy of the installed ``verl`` (hard links; the changed files written
anew), and a fresh process with the copy first on ``sys.path`` runs, for each trainer family and each of our
estimators:

1. the start-up check (``validate_start``, what ``verl-focal check``, our entry points, our TaskRunners and the
   hooked v1 trainer run before any model loads): a refusal is recorded with its text;
2. else the family's advantage step on a batch whose ``acc`` column disagrees with ``reward > correct_threshold``
   in both groups: legacy -- the ``compute_advantage`` that ``RayPPOTrainer.fit`` resolves, called as ``fit`` calls
   it; v1 -- the hooked trainer's ``_compute_old_log_prob`` and ``_compute_advantage`` over a real TransferQueue
   (the actor worker group faked at the GPU boundary, tests/verl_harness.py); one-step-off / fully-async -- the
   trainer's ``_fit_compute_advantage`` (the trainer built without its constructor, which starts GPU pools);
3. the advantages against two references on the same rows: ``hooked`` -- our wrapper of ``compute_advantage``
   with the context built from the batch's ``acc`` (the path the suite checks against the formulas), and
   ``silent-wrong`` -- verl's own function, which calls the estimator without a context (p̂ from the threshold); an
   exception at the step is ``crash``.

``python tests/integration/moved_layout.py [--code DIR] [--no-follow] [--table]``: DIR is the verl-focal tree to
test (default: this one), e.g. an export of an older commit for a before/after table; ``--no-follow`` leaves the
wrapper where 0.9.1 defines the function (``ray_trainer``) only, for the refusals.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
FAMILIES = ("legacy", "v1", "one_step_off", "fully_async")
ESTIMATORS = ("f_grpo", "cue_grpo", "f_cue_grpo", "passk_grpo", "maxrl", "unlikely_grpo", "ds_grpo")
MOVED = ("compute_response_mask", "compute_advantage")
#: the modules that import the moved names from the new module, as in the PR
IMPORTERS = ("trainer/ppo/v1/utils.py", "experimental/separation/ray_trainer.py")

#: (uid, reward, acc, token log-probs): p's threshold count is 1 of 4 and acc's 2; q's 2 and 1
ROWS = [("p", 0.1, 1, [-0.1, -0.2, -0.3]), ("p", 1.0, 1, [-0.4, -0.1, -0.1]), ("p", -1.0, 0, [-0.2, -0.2, -0.2]),
        ("p", -1.0, 0, [-0.5, -0.5, -0.1]), ("q", 1.0, 1, [-0.3, -0.3, -0.3]), ("q", -1.0, 0, [-0.1, -0.1, -0.1]),
        ("q", 0.6, 0, [-0.6, -0.2, -0.2]), ("q", -1.0, 0, [-0.9, -0.1, -0.1])]
TEXTS = ["Let x = 2, so by induction the sum is 4.", "We factor: (x-1)(x+1) = 0, hence x = 1.",
         "Guess 3.", "Maybe 5.", "Substitute y = x^2 and solve the quadratic: 7.", "It is 2.",
         "By symmetry the answer is 9.", "No idea, 8."]
MICRO = ["actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4",
         "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=8",
         "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=8"]


def overrides(family: str, est: str) -> list[str]:
    out = [f"algorithm.adv_estimator={est}", "actor_rollout_ref.rollout.n=4", "trainer.logger=[console]", *MICRO]
    if family == "legacy":
        out.append("trainer.use_v1=false")
    if family == "v1":
        out += ["actor_rollout_ref.rollout.calculate_log_probs=false",
                "transfer_queue.backend.SimpleStorage.num_data_storage_units=1"]
    if est == "passk_grpo":
        out.append("algorithm.passk.k=2")
    if "cue" in est:
        out.append("algorithm.cue.source=signature")
    return out


def moved_copy(dest: Path) -> None:
    """The installed verl and transfer_queue copied into ``dest`` with #7237's move of :data:`MOVED`."""
    import importlib.util

    for name in ("verl", "transfer_queue"):
        src = Path(importlib.util.find_spec(name).submodule_search_locations[0])
        shutil.copytree(src, dest / name, copy_function=os.link, ignore=shutil.ignore_patterns("__pycache__"))
    ppo = dest / "verl" / "trainer" / "ppo"
    rt_path = ppo / "ray_trainer.py"
    text = rt_path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    tree = ast.parse(text)
    defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    tops = [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)]
    first_def = min(n.lineno - len(n.decorator_list) for n in tops)
    header = "".join(lines[: first_def - 1])  # ray_trainer's imports: what the moved bodies use
    spans = sorted(((defs[n].lineno, defs[n].end_lineno) for n in MOVED), reverse=True)
    moved = "".join("".join(lines[a - 1:b]) + "\n\n" for a, b in sorted(spans))
    for a, b in spans:
        del lines[a - 1:b]
    reexport = f"from verl.trainer.ppo.trainer_utils import {', '.join(MOVED)}  # noqa: F401\n"
    rt_path.unlink()
    rt_path.write_text(header + reexport + "".join(lines[first_def - 1:]), encoding="utf-8")
    (ppo / "trainer_utils.py").write_text(header + "\n\n" + moved, encoding="utf-8")
    for rel in IMPORTERS:
        path = dest / "verl" / rel
        src = path.read_text(encoding="utf-8")
        new = src.replace("from verl.trainer.ppo.ray_trainer import compute_advantage\n",
                          "from verl.trainer.ppo.trainer_utils import compute_advantage\n")
        new = new.replace(
            "from verl.trainer.ppo.ray_trainer import RayPPOTrainer, apply_kl_penalty, compute_advantage, "
            "compute_response_mask\n",
            "from verl.trainer.ppo.ray_trainer import RayPPOTrainer, apply_kl_penalty\n"
            "from verl.trainer.ppo.trainer_utils import compute_advantage, compute_response_mask\n")
        if new == src:
            raise RuntimeError(f"moved_copy: no import of compute_advantage to move in {rel}")
        path.unlink()
        path.write_text(new, encoding="utf-8")


def _batch(rows, with_extras: bool):
    """A DataProto of ``rows`` as a DataProto trainer holds it at the advantage step (``with_extras``: the reward
    extras and rewards merged in, as the legacy trainer holds it), and its reward tensor."""
    import numpy as np
    import torch
    from verl import DataProto

    from verl_focal.partition.cues import signature

    n, L = len(rows), 3
    rewards = torch.zeros(n, L)
    rewards[:, -1] = torch.tensor([r[1] for r in rows])
    lp = torch.tensor([r[3] for r in rows])
    non = {"uid": np.array([r[0] for r in rows], dtype=object)}
    if with_extras:
        non["acc"] = np.array([float(r[2]) for r in rows])
        non["cue_sig"] = np.array([signature(r[4]) for r in rows], dtype=object)
    data = DataProto.from_dict(
        tensors={"responses": torch.ones(n, L, dtype=torch.long), "response_mask": torch.ones(n, L),
                 "attention_mask": torch.ones(n, 3 + L), "prompts": torch.ones(n, 3, dtype=torch.long),
                 "old_log_probs": lp.clone(), "rollout_log_probs": lp.clone(),
                 **({"token_level_rewards": rewards.clone(), "token_level_scores": rewards.clone()} if with_extras
                    else {})},
        non_tensors=non)
    return data, rewards


def _references(rows, est, algorithm):
    """(our wrapper's advantages with the context from ``acc``, verl's own function's or the exception)."""
    import inspect

    from verl.trainer.ppo import ray_trainer

    data, _ = _batch(rows, True)
    ours = ray_trainer.compute_advantage(data, adv_estimator=est, config=algorithm).batch["advantages"][:, -1]
    try:
        data, _ = _batch(rows, True)
        verls = inspect.unwrap(ray_trainer.compute_advantage)(data, adv_estimator=est, config=algorithm)
        verls = verls.batch["advantages"][:, -1]
    except Exception as e:  # noqa: BLE001 - the estimator without its context
        verls = e
    return ours, verls


def _step(family, est, config, tq):
    """The family's advantage step; (the rows in the output's order, the last-token advantages)."""
    import numpy as np

    from verl_harness import (
        ActorWorkerGroup,
        Rollout,
        first_token_advantages,
        put_rollouts,
        separated_trainer,
        v1_trainer,
    )

    rows = [(*r, t) for r, t in zip(ROWS, TEXTS)]
    if family == "v1":
        from verl_focal.partition.cues import signature

        rollouts = [Rollout(u, [4, 5, 6], reward, {"acc": float(acc), "cue_sig": signature(t)}, session=i)
                    for i, (u, reward, acc, _, t) in enumerate(rows)]
        meta = put_rollouts(tq, rollouts, partition=f"train_{est}", rng=np.random.default_rng(0))
        by_key = {ro.key: r for ro, r in zip(rollouts, rows)}
        trainer = v1_trainer(config, worker=ActorWorkerGroup(tq, {k: r[3] for k, r in by_key.items()}))
        metrics: dict = {}
        trainer._compute_old_log_prob(meta, metrics)
        trainer._compute_advantage(meta, metrics)
        return [by_key[k] for k in meta.keys], first_token_advantages(tq, meta)
    data, rewards = _batch(rows, family == "legacy")
    if family == "legacy":
        from verl.trainer.ppo.ray_trainer import RayPPOTrainer

        from verl_focal.integration.hooks.dataproto_hook import install_legacy_hook

        install_legacy_hook(lambda: None)  # what our legacy TaskRunner does in its actor
        compute = RayPPOTrainer.fit.__globals__["compute_advantage"]  # what fit calls
        alg = config.algorithm
        out = compute(data, adv_estimator=alg.adv_estimator, gamma=alg.gamma, lam=alg.lam, num_repeat=4,
                      norm_adv_by_std_in_grpo=alg.get("norm_adv_by_std_in_grpo", True), config=alg)
    else:
        from verl_focal.partition.cues import signature

        extras = {"acc": [float(r[2]) for r in rows], "cue_sig": [signature(r[4]) for r in rows]}
        out = separated_trainer(family, config, None, rewards, extras)._fit_compute_advantage(data)
    return rows, out.batch["advantages"][:, -1].tolist()


def child() -> list[dict]:
    """Every family x estimator in this process (the moved copy first on sys.path)."""
    import torch

    if os.environ.get("VERL_FOCAL_MOVED_FOLLOW") == "0":  # the hook does not follow the move: refusals, not runs
        from verl_focal.integration.hooks import dataproto_hook

        dataproto_hook.follow_compute_advantage = lambda: []
    import verl.trainer.ppo.ray_trainer as rt

    import verl_focal.plugin  # noqa: F401 - as verl's entry point loads it
    from verl_focal.config.errors import UserError
    from verl_focal.integration.startup.compose import compose_config
    from verl_focal.integration.startup.validate import validate_start

    assert rt.compute_advantage.__wrapped__.__module__ == "verl.trainer.ppo.trainer_utils", "not the moved layout"
    results, tq, started = [], None, False
    for family in FAMILIES:
        for est in ESTIMATORS:
            trainer = family if family in ("one_step_off", "fully_async") else "ppo"
            res = {"family": family, "estimator": est}
            results.append(res)
            config = compose_config(overrides(family, est), trainer=trainer)
            try:
                validate_start(config, trainer)
            except UserError as e:
                res.update(outcome="refused", message=str(e))
                continue
            if family == "v1" and tq is None:
                import transfer_queue

                from verl_harness import start_transfer_queue

                started, tq = start_transfer_queue(config), transfer_queue
            try:
                rows, got = _step(family, est, config, tq)
            except Exception as e:  # noqa: BLE001 - a step-1 crash: the very thing under test
                res.update(outcome="crash", message=f"{type(e).__name__}: {e}"[:300])
                continue
            ours, verls = _references(rows, est, config.algorithm)
            got = torch.tensor(got, dtype=ours.dtype)
            discriminates = isinstance(verls, Exception) or not torch.allclose(ours, verls, atol=1e-5)
            if torch.allclose(got, ours, atol=1e-5):
                res["outcome"] = "hooked" if discriminates else "hooked (batch does not discriminate)"
            elif not isinstance(verls, Exception) and torch.allclose(got, verls, atol=1e-5):
                res["outcome"] = "silent-wrong"
            else:
                res.update(outcome="differs", message=f"got {got.tolist()}, ours {ours.tolist()}")
    if tq is not None:
        from verl_harness import stop_transfer_queue

        stop_transfer_queue(started)
    return results


def run(code: Path | None = None, follow: bool = True) -> list[dict]:
    """:func:`child` in a fresh process: the moved copy, then ``code`` (a verl-focal tree), then the tests;
    ``follow=False``: with ``dataproto_hook.follow_compute_advantage`` a no-op (this tree only), so that only the
    function ``ray_trainer`` re-exports is wrapped, as before the hook followed the move."""
    code = code or HERE.parents[1]
    with tempfile.TemporaryDirectory(prefix="verl-moved-") as tmp:
        moved_copy(Path(tmp))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([tmp, str(code), str(HERE.parent), str(HERE)]),
               "VERL_FOCAL_MOVED_CHILD": "1", "VERL_FOCAL_MOVED_FOLLOW": "1" if follow else "0"}
        proc = subprocess.run([sys.executable, __file__], capture_output=True, text=True, env=env, timeout=1500)
    rows = [json.loads(ln) for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not rows:
        raise RuntimeError(f"moved-layout child failed ({proc.returncode}): {proc.stderr[-3000:]}")
    return rows


def table(results: list[dict]) -> str:
    head = "| trainer family | " + " | ".join(f"`{e}`" for e in ESTIMATORS) + " |"
    out = [head, "|---" * (len(ESTIMATORS) + 1) + "|"]
    for family in FAMILIES:
        cells = {r["estimator"]: r["outcome"] for r in results if r["family"] == family}
        out.append(f"| {family} | " + " | ".join(cells.get(e, "?") for e in ESTIMATORS) + " |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    if os.environ.get("VERL_FOCAL_MOVED_CHILD") == "1":
        for r in child():
            print(json.dumps(r), flush=True)
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--code", type=Path, help="the verl-focal tree to run (default: this one)")
    ap.add_argument("--table", action="store_true", help="print the markdown table instead of JSON lines")
    ap.add_argument("--no-follow", action="store_true", help="the compute_advantage hook does not follow the move")
    args = ap.parse_args(argv)
    results = run(args.code, follow=not args.no_follow)
    print(table(results) if args.table else "\n".join(json.dumps(r) for r in results))
    if args.table:
        for r in results:
            if "message" in r:
                print(f"- {r['family']} / {r['estimator']}: {r['outcome']}: {r['message']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
