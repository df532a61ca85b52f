"""``verl-focal check [hydra overrides...]``: a loud pre-flight.

verl swallows plugin import errors (DEBUG level), so a broken install shows up
only later as "Unknown advantage estimator".  This command:

1. imports verl in a *fresh* Python process (no explicit ``import verl_focal``)
   and verifies that the ``verl.plugins`` entry point registered our estimators
   and the hooked trainer modes;
2. composes our packaged config with your overrides and validates our sections
   and verl's own config checks;
   (:func:`verl_focal.integration.preflight.validate_start`: estimator name, our
   sections, the partitioner resolved and its kwargs, name collisions);
3. for the judge partitioner, checks that the server is reachable, the key
   variable is set and the model is known;
4. warns (one line each) where the installed engine, torch or transformers differ
   from verl's own pins;
5. prints the resolved ``algorithm`` section; exits 2 on any problem.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

__all__ = ["add_arguments", "run", "probe_fresh_process"]

_PROBE = r"""
import json, sys
out = {"ok": True, "problems": []}
try:
    import verl
    out["verl_version"] = verl.__version__
    out["plugin_loaded"] = "verl_focal.plugin" in sys.modules
    from verl_focal.integration.registration import collisions, get_spec, registered_names
    out["estimators"] = [n for n in registered_names(aliases=True) if get_spec(n) is not None]
    out["collisions"] = collisions()
    from verl.trainer.ppo.v1 import trainer_base
    out["trainer_modes"] = sorted(n for n in trainer_base.TRAINER_REGISTRY if n.startswith("focal_"))
except Exception as e:
    out["ok"] = False
    out["problems"].append(f"{type(e).__name__}: {e}")
print("VERL_FOCAL_PROBE " + json.dumps(out))
"""


def probe_fresh_process(timeout: float = 300.0) -> dict:
    """Import verl in a new interpreter and report what our plugin registered."""
    env = dict(os.environ)
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=timeout, env=env, check=False
    )
    for line in proc.stdout.splitlines():
        if line.startswith("VERL_FOCAL_PROBE "):
            return json.loads(line[len("VERL_FOCAL_PROBE ") :])
    return {"ok": False, "problems": [f"probe process exited {proc.returncode}: {proc.stderr.strip()[-2000:]}"]}


def _plugin_problems(probe: dict) -> list[str]:
    from verl_focal.integration.registration import register_all

    problems = list(probe.get("problems", []))
    if not probe.get("ok", False):
        return problems
    if not probe.get("plugin_loaded"):
        problems.append(
            "`import verl` did not load verl_focal.plugin: the `verl.plugins` entry point is missing "
            "(reinstall with `pip install -e .` / `pip install verl-focal`) or disabled by VERL_USE_EXTERNAL_PLUGINS"
        )
    held = probe.get("collisions", {})
    for name in register_all():
        if name not in probe.get("estimators", []) and name not in held:
            problems.append(
                f"estimator {name!r} is not registered after `import verl`; run "
                "`python -c 'import verl_focal.plugin'` to see the import error verl swallowed"
            )
    if "focal_sync" not in probe.get("trainer_modes", []):
        problems.append("trainer mode 'focal_sync' was not registered when verl's v1 trainer was imported")
    return problems


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("overrides", nargs="*", help="Hydra overrides, as for python -m verl_focal.main_ppo")
    parser.add_argument("--skip-probe", action="store_true",
                        help="skip the fresh-process plugin probe (saves one `import verl`, ~10 s)")
    parser.add_argument("--skip-judge", action="store_true", help="do not contact the judge server")


def run(args: argparse.Namespace) -> int:
    from verl_focal.integration.registration import collisions, register_all
    from verl_focal.integration.versions import version_mismatches

    problems: list[str] = []
    if not args.skip_probe:
        probe = probe_fresh_process()
        problems += _plugin_problems(probe)
        print(
            f"[plugin] verl {probe.get('verl_version', '?')}; estimators registered by `import verl`: "
            f"{probe.get('estimators', [])}; trainer modes: {probe.get('trainer_modes', [])}"
        )

    from omegaconf import OmegaConf

    from verl_focal.config.errors import UserError
    from verl_focal.integration.preflight import compose_config, validate_all

    register_all()
    for name, other in sorted(collisions().items()):
        print(f"[warning] verl's estimator {name!r} is {other}, not verl-focal's; use "
              f"algorithm.adv_estimator=verl_focal.{name.split('.')[-1]} for ours", file=sys.stderr)
    for line in version_mismatches():
        print(f"[warning] {line}", file=sys.stderr)
    config = None
    try:
        config = compose_config(args.overrides)
        sections = validate_all(config)
    except UserError as e:
        problems.append(f"config: {e}")
        sections = None

    if sections is not None and config is not None:
        from verl_focal.integration.registration import get_spec

        spec = get_spec(config.algorithm.adv_estimator)
        uses_cue = spec is not None and spec.prepare is not None
        if uses_cue and sections["cue"].partitioner == "judge" and not args.skip_judge:
            from verl_focal.partition.judge import check_judge

            problems += [f"judge: {p}" for p in check_judge(sections["cue"].judge)]
        print("[config] resolved algorithm section:")
        print(OmegaConf.to_yaml(config.algorithm, resolve=True))

    if problems:
        print("verl-focal check FAILED:", file=sys.stderr)
        for p in problems:
            print(f"  - {p}", file=sys.stderr)
        return 2
    print("verl-focal check OK")
    return 0
