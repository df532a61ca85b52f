"""The plugin never breaks its host: each verl name of the contract renamed, in a copy of the installed verl.

For every name of ``verl_focal.integration.compat.CONTRACT`` (fields aside: their identifiers are generic
words that verl could not rename without renaming Python's own), a copy of the installed ``verl`` and
``transfer_queue`` packages gets that identifier renamed in every source file, as an upstream refactor
would (every identifier token and every string literal equal to it; the YAML configs too), and a fresh
process with the copy first on ``sys.path``:

1. imports ``verl``, ``verl.trainer.ppo.v1``, ``verl.experimental.separation.ray_trainer`` and
   ``verl.trainer.main_ppo`` with our plugin installed (the ``verl.plugins`` entry point);
2. runs verl's stock ``grpo`` through verl's ``compute_advantage`` and compares it with the formula;
3. records our WARNING lines;
4. runs the pre-flight (``validate_all``, what ``verl-focal check`` and our entry point run) on a config
   that needs the name's feature -- it must refuse in one line naming the name -- and on one that does
   not -- it must pass (the demo's feature: the demo's own start-up check).

Run as a script for the table in docs/architecture.md (``--table``); ``tests/integration/test_host_safety.py``
runs it for every name.  To keep it fast, one driver process imports verl's third-party dependencies once
and forks one child per rename (imports only; two at a time).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import sys
import tempfile
import tokenize
from pathlib import Path

SUFFIX = "_renamed"
PACKAGES = ("verl", "transfer_queue")
MICRO = [
    "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4",
    "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=8",
    "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=8",
]
F_GRPO = "algorithm.adv_estimator=f_grpo"
GRPO = "algorithm.adv_estimator=grpo"
#: the configs the pre-flight is run on, as (trainer, overrides): each needs the features
#: ``compat.features_for`` (or, for the demo, ``demo.experiment.require_verl``) names
CONFIGS: list[tuple[str, list[str]]] = [
    ("ppo", [F_GRPO]),
    ("ppo", [F_GRPO, "trainer.use_v1=false"]),
    ("one_step_off", [F_GRPO]),
    ("ppo", [GRPO]),
    ("one_step_off", [GRPO]),
    ("fully_async", [GRPO]),
    ("demo", []),
]


def needs(config: tuple[str, list[str]]) -> set[str]:
    """The features a pre-flight config needs."""
    from verl_focal.integration.compat import features_for

    trainer, overrides = config
    if trainer == "demo":
        return {"demo", "estimators", "advantage"}
    return set(features_for(trainer, "trainer.use_v1=false" not in overrides, F_GRPO in overrides))


def leaf(name: str) -> str:
    """The identifier a rename of ``name`` changes: its last component."""
    return name.rsplit(":", 1)[-1].rsplit(".", 1)[-1]


def affected(touch) -> set[str]:
    """The features a rename of ``touch``'s identifier takes away: every contract name with it as a component."""
    from verl_focal.integration.compat import CONTRACT

    ident = leaf(touch.name)
    return {t.feature for t in CONTRACT if ident in t.name.replace(":", ".").split(".")}


def cases(touch) -> tuple[tuple[str, list[str]], tuple[str, list[str]] | None]:
    """A config that needs ``touch``'s feature, and one that needs none of the features the rename takes away
    (None when every config needs one: our entry point's own names)."""
    gone = affected(touch)
    need = next(c for c in CONFIGS if touch.feature in needs(c))
    other = next((c for c in CONFIGS if not needs(c) & gone), None)
    return need, other


#: the modules a host process imports (item 1)
HOST_IMPORTS = ("verl", "verl.trainer.ppo.v1", "verl.experimental.separation.ray_trainer", "verl.trainer.main_ppo")


def package_dirs() -> dict[str, Path]:
    import importlib.util

    return {p: Path(importlib.util.find_spec(p).submodule_search_locations[0]) for p in PACKAGES}


def _rename_python(text: str, leaf: str) -> str:
    """``text`` with every NAME token ``leaf`` and every string literal equal to it renamed."""
    hits: list[tuple[int, int, int, str]] = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.NAME and tok.string == leaf:
            hits.append((tok.start[0], tok.start[1], tok.end[1], leaf + SUFFIX))
        elif tok.type == tokenize.STRING and tok.string in (f'"{leaf}"', f"'{leaf}'"):
            q = tok.string[0]
            hits.append((tok.start[0], tok.start[1], tok.end[1], f"{q}{leaf}{SUFFIX}{q}"))
    lines = text.splitlines(keepends=True)
    for row, a, b, new in sorted(hits, reverse=True):
        line = lines[row - 1]
        lines[row - 1] = line[:a] + new + line[b:]
    return "".join(lines)


def renamed_copy(leaf: str, dest: Path) -> int:
    """Copy the packages into ``dest`` (hard links; a changed file is written anew, never through its link)
    with ``leaf`` renamed; returns the number of files changed."""
    changed = 0
    for name, src in package_dirs().items():
        shutil.copytree(src, dest / name, copy_function=os.link, ignore=shutil.ignore_patterns("__pycache__"))
        for path in (dest / name).rglob("*"):
            if path.suffix not in (".py", ".yaml") or not path.is_file():
                continue
            text = path.read_text(encoding="utf-8")
            if leaf not in text:
                continue
            new = _rename_python(text, leaf) if path.suffix == ".py" else re.sub(
                rf"\b{re.escape(leaf)}\b", leaf + SUFFIX, text)
            if new != text:
                path.unlink()
                path.write_text(new, encoding="utf-8")
                changed += 1
    return changed


def _grpo_works() -> str | None:
    """verl's stock grpo through verl's own compute_advantage, against the formula; None when it matches."""
    import numpy as np
    import torch
    import verl.protocol as protocol
    from omegaconf import OmegaConf
    from verl.trainer.ppo import ray_trainer

    proto = getattr(protocol, "DataProto", None) or getattr(protocol, "DataProto" + SUFFIX)
    from_dict = getattr(proto, "from_dict", None) or getattr(proto, "from_dict" + SUFFIX)
    compute = getattr(ray_trainer, "compute_advantage", None) or getattr(ray_trainer, "compute_advantage" + SUFFIX)
    scores = torch.tensor([1.0, 0.0, 0.0, 1.0, 1.0, 0.0])
    uid = np.array(["a", "a", "a", "b", "b", "b"], dtype=object)
    rewards = torch.zeros(6, 3)
    rewards[:, -1] = scores
    data = from_dict(tensors={"token_level_rewards": rewards, "response_mask": torch.ones(6, 3)},
                     non_tensors={"uid": uid})
    out = compute(data, adv_estimator="grpo", config=OmegaConf.create({"norm_adv_by_std_in_grpo": True}))
    want = [(s - scores[torch.as_tensor(uid == u)].mean()) / (scores[torch.as_tensor(uid == u)].std() + 1e-6)
            for s, u in zip(scores, uid)]
    got = out.batch["advantages"][:, 0]
    return None if torch.allclose(got, torch.stack(want), atol=1e-5) else f"grpo gave {got.tolist()}"


def _preflight(case: tuple[str, list[str]]) -> str | None:
    """The pre-flight of ``case``: None when it passes, else the refusal's text."""
    from verl_focal.config.errors import UserError

    trainer, overrides = case
    try:
        if trainer == "demo":
            from verl_focal.lab.demo.experiment import require_verl

            require_verl()
            return None
        from verl_focal.integration.startup.compose import compose_config
        from verl_focal.integration.startup.validate import validate_all

        validate_all(compose_config([*overrides, *MICRO], trainer=trainer), trainer)
    except UserError as e:
        return str(e)
    return None


def child(name: str, feature: str) -> dict:
    """Steps 1-4 in this (fresh, forked) process; the result as a dict."""
    import logging

    records: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record):
            if record.name.startswith("verl_focal") and record.levelno >= logging.WARNING:
                records.append(record.getMessage())

    logging.getLogger().addHandler(Keep())
    out: dict = {"name": name, "feature": feature, "import_errors": {}, "grpo": None}
    for mod in HOST_IMPORTS:
        try:
            __import__(mod)
        except Exception as e:  # noqa: BLE001 - the host broke: the very thing under test
            out["import_errors"][mod] = f"{type(e).__name__}: {e}"
    try:
        out["grpo"] = _grpo_works()
    except Exception as e:  # noqa: BLE001
        out["grpo"] = f"{type(e).__name__}: {e}"
    from verl_focal.integration.compat import CONTRACT

    need, other = cases(next(t for t in CONTRACT if t.name == name))
    out["refusal"] = _preflight(need)
    out["other"] = None if other is None else _preflight(other)
    out["configs"] = [need, other]
    out["warnings"] = records
    return out


def _prime() -> None:
    """Import, in this driver, the third-party modules the verl stack imports (not verl, transfer_queue or
    verl_focal), so that each forked child imports only the (renamed) verl."""
    import subprocess

    probe = ("import sys; import verl, verl.trainer.ppo.v1, verl.experimental.separation.ray_trainer, "
             "verl.trainer.main_ppo, verl.workers.rollout.hf_rollout; "
             "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))")
    env = {**os.environ, "VERL_USE_EXTERNAL_PLUGINS": "none"}
    names = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env,
                           check=True).stdout.split()
    for n in names:
        if n not in PACKAGES and not n.startswith(("verl", "_")) and n != "__main__":
            try:
                __import__(n)
            except Exception:  # noqa: BLE001 - an optional module some branch tried; the child will too
                pass


def run(names: list[str] | None = None, jobs: int = 2) -> list[dict]:
    """Every renameable contract name (or ``names``), one forked child each; the children's results.  Run it in
    a process that has not imported verl (the children import the renamed copy)."""
    if "verl" in sys.modules:
        raise RuntimeError("host_safety.run needs a process without verl imported: run this file as a script")
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from verl_focal.integration.compat import CONTRACT

    touches = [t for t in CONTRACT if not t.field and (names is None or t.name in names)]
    _prime()
    results, running = [], {}
    with tempfile.TemporaryDirectory(prefix="verl-renamed-") as tmp:
        pending = list(enumerate(touches))
        while pending or running:
            while pending and len(running) < jobs:
                i, t = pending.pop(0)
                dest = Path(tmp) / str(i)
                renamed_copy(leaf(t.name), dest)
                r, w = os.pipe()
                pid = os.fork()
                if pid == 0:  # the child: the renamed copy first on the path, fresh imports
                    os.close(r)
                    devnull = os.open(os.devnull, os.O_WRONLY)
                    os.dup2(devnull, 1)  # verl's own prints ("[validate_config] ... passed") and warnings
                    os.dup2(devnull, 2)
                    sys.path.insert(0, str(dest))
                    try:
                        res = child(t.name, t.feature)
                    except BaseException as e:  # noqa: BLE001
                        res = {"name": t.name, "feature": t.feature, "crash": f"{type(e).__name__}: {e}"}
                    os.write(w, json.dumps(res).encode())
                    os._exit(0)
                os.close(w)
                running[pid] = (r, dest)
            pid, _ = os.wait()
            r, dest = running.pop(pid)
            with os.fdopen(r) as f:
                data = f.read()
            results.append(json.loads(data) if data else {"name": "?", "crash": f"child {pid} wrote nothing"})
            shutil.rmtree(dest, ignore_errors=True)
    return results


def table(results: list[dict]) -> str:
    """Markdown, one row per name: the host's imports and grpo, our warning, the refusal's first words."""
    rows = ["| verl name renamed | feature | verl imports, stock grpo | our WARNING | pre-flight of a config "
            "that needs it | one that does not |", "|---|---|---|---|---|---|"]
    for r in sorted(results, key=lambda r: r["name"]):
        host = "ok" if not r.get("import_errors") and r.get("grpo") is None else "BROKEN"
        warn = f"{len(r.get('warnings', []))} line" + ("s" if len(r.get("warnings", [])) != 1 else "")
        refusal = (r.get("refusal") or "PASSED (wrong)")[:60].replace("|", "/")
        other = ("— (every config needs it)" if r.get("configs", [None, None])[1] is None
                 else "passes" if r.get("other") is None else "REFUSED")
        rows.append(f"| `{r['name']}` | {r['feature']} | {host} | {warn} | exit 2: {refusal}… | {other} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--names", nargs="*", help="only these contract names")
    ap.add_argument("--table", action="store_true", help="print the markdown table instead of JSON lines")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    results = run(args.names, args.jobs)
    print(table(results) if args.table else "\n".join(json.dumps(r) for r in results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
