"""``verl-focal check [hydra overrides...]``: a pre-flight of a training config.

verl swallows plugin import errors (DEBUG level), so a broken install shows up
only later as "Unknown advantage estimator".  This command:

1. imports verl in a *fresh* Python process (no explicit ``import verl_focal``)
   and verifies that the ``verl.plugins`` entry point registered our estimators
   and the hooked trainer modes;
2. composes our packaged config (``--trainer``: that trainer's) with your overrides and validates our sections
   and verl's own config checks
   (:func:`verl_focal.integration.startup.validate.validate_all`: estimator name, our
   sections, the partitioner resolved and its kwargs, name collisions, verl's
   ``validate_config``);
3. for the judge partitioner, checks that the server is reachable, the key
   variable is set and the model is known;
4. warns (one line each) where the installed engine, torch or transformers differ
   from verl's own pins;
5. prints what it checked and the resolved ``algorithm`` section (``--verbose``: the
   whole config); exits 2 on any problem, and says OK only when nothing failed.

``import verl`` costs seconds (torch), so it happens once: steps 1-4 run in the
fresh process, while this process composes the config without importing verl (an
override typo is reported at once).  ``--skip-probe`` runs steps 2-4 here instead.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import warnings

__all__ = ["EXAMPLE", "add_arguments", "run", "validate_here"]

#: ``verl-focal check -h``'s example: passes as written on a machine without a W&B key or an engine
EXAMPLE = """  verl-focal check algorithm.adv_estimator=f_grpo algorithm.focal.gamma=0.5 trainer.logger=[console] \\
      actor_rollout_ref.rollout.name=vllm actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4 \\
      actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=8 \\
      actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=8"""

#: runs in a fresh interpreter: `import verl` first (the probe: only the entry point may load us), then the checks
_PROBE = r"""
import json, sys
out = {"ok": True, "problems": []}
try:
    import verl
    out["verl_version"] = verl.__version__
    out["plugin_loaded"] = "verl_focal.plugin" in sys.modules
    from verl_focal.integration.compat import available, disabled
    try:  # verl's registry module: the plugin registers our estimators when it is imported
        import verl.trainer.ppo.core_algos
    except Exception:  # a verl without it: available("estimators") below says so
        pass
    from verl_focal.integration.registration import collisions, get_spec, registered_names
    out["estimators"] = [n for n in registered_names(aliases=True) if get_spec(n) is not None]
    out["collisions"] = collisions()
    available("separated")  # imports the separated trainers' module: the plugin's hook installs there
    if available("v1"):  # imports verl's v1 trainer: likewise
        from verl.trainer.ppo.v1 import trainer_base
        out["trainer_modes"] = sorted(n for n in trainer_base.TRAINER_REGISTRY if n.startswith("focal_"))
    out["disabled"] = disabled()
    if available("estimators"):
        from verl_focal.integration.registration import register_all
        out["expected"] = register_all()  # after the snapshot above: what the plugin should have registered
except Exception as e:
    out["ok"] = False
    out["problems"].append(f"{type(e).__name__}: {e}")
if len(sys.argv) > 1 and out["ok"]:  # the checks, on the config the parent composed (YAML on stdin)
    from verl_focal.check import validate_here
    req = json.loads(sys.argv[1])
    out["checks"] = validate_here(req["overrides"], skip_judge=req["skip_judge"], verbose=req["verbose"],
                                  config_yaml=sys.stdin.read() or None, trainer=req.get("trainer", "ppo"))
print("VERL_FOCAL_PROBE " + json.dumps(out), flush=True)
import os
os._exit(0)  # skip the interpreter's teardown of torch, ray & co. (over a second of CPU); nothing is left to save
"""


def _parse_probe(proc_stdout: str, returncode: int, stderr: str) -> dict:
    for line in proc_stdout.splitlines():
        if line.startswith("VERL_FOCAL_PROBE "):
            return json.loads(line[len("VERL_FOCAL_PROBE ") :])
    last = [ln.strip() for ln in stderr.splitlines() if ln.strip()][-1:] or ["no output"]
    return {"ok": False, "problems": [f"the fresh `import verl` process exited {returncode}: {last[0][-500:]} "
                                      f"(run `python -c 'import verl'` to see the whole error)"]}


#: the name of our ``verl.plugins`` entry point (pyproject.toml), as ``VERL_USE_EXTERNAL_PLUGINS`` lists it
ENTRY_POINT_NAME = "verl_focal"


def plugins_policy_skips_us(environ: dict | None = None) -> str | None:
    """The ``VERL_USE_EXTERNAL_PLUGINS`` value when it leaves our entry point out (verl's ``__init__``: "none", or a
    list without ours), else None."""
    env = os.environ if environ is None else environ
    raw = env.get("VERL_USE_EXTERNAL_PLUGINS", "auto")
    policy = raw.strip().lower()
    if policy == "auto":
        return None
    if policy == "none" or ENTRY_POINT_NAME not in {n.strip() for n in policy.split(",")}:
        return raw
    return None


def _plugin_problems(probe: dict, environ: dict | None = None) -> tuple[list[str], list[str]]:
    """(problems, warnings) of the fresh-process probe.  A plugin that ``VERL_USE_EXTERNAL_PLUGINS`` left out on
    purpose is a warning: our entry point's TaskRunners arrange the hooks themselves, so its runs are hooked."""
    problems = list(probe.get("problems", []))
    if not probe.get("ok", False):
        return problems, []
    skipped = plugins_policy_skips_us(environ)
    if not probe.get("plugin_loaded") and skipped is not None:
        return problems, [
            f"VERL_USE_EXTERNAL_PLUGINS={skipped} leaves verl_focal.plugin out of `import verl`: python -m "
            "verl_focal.main_ppo hooks its runs all the same (its TaskRunners arrange the hooks), but a stock "
            "python -m verl.trainer.main_ppo run is not hooked unless it passes "
            "+ray_kwargs.ray_init.runtime_env.env_vars.VERL_USE_EXTERNAL_MODULES=verl_focal.plugin"]
    if not probe.get("plugin_loaded"):
        problems.append(
            "`import verl` did not load verl_focal.plugin: the `verl.plugins` entry point is missing "
            "(reinstall with `pip install -e .` / `pip install verl-focal`)"
        )
    held = probe.get("collisions", {})
    for name in probe.get("expected", []):  # (a renamed verl name: the config check names it, per estimator)
        if name not in probe.get("estimators", []) and name not in held:
            problems.append(
                f"estimator {name!r} is not registered after `import verl`; run "
                "`python -c 'import verl_focal.plugin'` to see the import error verl swallowed"
            )
    if "trainer_modes" in probe and "focal_sync" not in probe["trainer_modes"]:
        problems.append("trainer mode 'focal_sync' was not registered when verl's v1 trainer was imported")
    return problems, []


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("overrides", nargs="*", help="Hydra overrides, as for python -m verl_focal.main_ppo")
    parser.add_argument("--trainer", default="ppo", metavar="NAME",
                        help="the trainer the config is for, as in python -m verl_focal.main_ppo --trainer: "
                             "ppo (default), one_step_off or fully_async")
    parser.add_argument("--skip-probe", action="store_true",
                        help="skip the fresh-process plugin probe and run the checks in this process")
    parser.add_argument("--skip-judge", action="store_true", help="do not contact the judge server")
    parser.add_argument("--verbose", "-v", action="store_true",
                        help="print the whole resolved config, not only the algorithm section")


def _warning_line(w: warnings.WarningMessage) -> str:
    """One line per warning, naming where it comes from (verl's warnings are verl's, not ours)."""
    text = " ".join(str(w.message).split())
    src = str(w.filename)
    if text.startswith("verl: ") or "/verl/" in src or src.startswith("verl."):
        return "verl: " + text.removeprefix("verl: ")
    return text


def _worth_reporting(w: warnings.WarningMessage) -> bool:
    """verl's config-check warnings and other user-facing ones; not import-time deprecation notices of
    libraries (hidden by Python's default filters too) or the optional-engine notices."""
    if str(w.message).startswith("verl: "):
        return True
    if issubclass(w.category, (DeprecationWarning, PendingDeprecationWarning, FutureWarning, ImportWarning)):
        return False
    return "engine is not available" not in str(w.message)


def _hooks_line() -> str:
    """Which hooks are installed in this process, and which are not (a verl name missing: docs/architecture.md)."""
    from verl_focal.integration.compat import FEATURES, disabled

    off = disabled()
    on = [f for f in ("advantage", "v1", "separated") if f not in off]
    line = "hooks: " + ", ".join(on) if on else "hooks: none"
    return line + "".join(f"; NOT installed: {FEATURES[f]} ({why})" for f, why in off.items())


def validate_here(overrides: list[str], skip_judge: bool = False, verbose: bool = False,
                  config_yaml: str | None = None, trainer: str = "ppo") -> dict:
    """Steps 2-4 in this process (which imports verl): ``{"problems", "warnings", "checked", "algorithm", "full"}``.

    ``config_yaml``: the config already composed from ``overrides`` (by the parent process), else it is
    composed here; ``trainer``: as ``python -m verl_focal.main_ppo --trainer``.

    verl's own prints (``[validate_config] All configuration checks passed``) are dropped, and its warnings
    are returned as lines naming verl, so that a later failure is never preceded by a "passed".
    """
    from omegaconf import OmegaConf

    from verl_focal.config.errors import UserError
    from verl_focal.integration.startup.admit import admit
    from verl_focal.integration.startup.compose import compose_config
    from verl_focal.integration.startup.quiet import quiet_optional_engines

    quiet_optional_engines()
    out: dict = {"problems": [], "warnings": [], "checked": [], "algorithm": None, "full": None}
    report = None
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("always")
        quiet_optional_engines()
        try:
            config = OmegaConf.create(config_yaml) if config_yaml is not None else compose_config(overrides,
                                                                                                  trainer=trainer)
            report = admit("check", config, overrides=overrides, trainer=trainer, skip_judge=skip_judge)
        except UserError as e:  # the composition itself (an override Hydra refuses)
            out["problems"].append(f"config: {e}")
    out["warnings"] += [_warning_line(w) for w in caught if _worth_reporting(w)]
    if report is None:
        return out
    out["problems"] += [m if m.startswith("judge: ") else f"config: {m}" for m in report.refusals]
    out["warnings"] = report.warnings + out["warnings"]
    info = [f"{f.rule}: {f.message}" for f in report.findings if f.level == "info"]
    sections = report.sections
    if out["problems"] or sections is None:
        return out
    est = str(config.algorithm.adv_estimator)
    out["checked"].append(_hooks_line())
    from verl_focal.integration.registration import get_spec

    spec = get_spec(config.algorithm.adv_estimator)
    used = spec.sections if spec is not None else frozenset()
    ours = ", ".join(f"algorithm.{s}" for s in sorted(used)) or "none used"
    out["checked"].append(f"config: algorithm.adv_estimator={est}; our sections ({ours}) and verl's validate_config")
    uses_cue = spec is not None and spec.prepare is not None
    if uses_cue:
        part = sections["cue"].partitioner
        out["checked"].append(f"partitioner: {part!r} resolved, its kwargs bind, cue set "
                              f"{sections['cue'].cue_set!r} loads")
        if part == "judge":  # contacted by the judge_online rule
            out["checked"].append("judge: not contacted (--skip-judge)" if skip_judge else
                                  f"judge: {sections['cue'].judge.base_url} serves {sections['cue'].judge.model!r}")
    from verl_focal.config.schema import SECTIONS

    out["checked"] += info  # what could not be checked here, and where it is
    algo = OmegaConf.to_container(config.algorithm, resolve=True)
    out["algorithm"] = {k: v for k, v in algo.items() if k not in SECTIONS or k in used}
    out["unused_sections"] = [k for k in SECTIONS if k in algo and k not in used]
    out["our_sections"] = list(SECTIONS)  # for the parent's report, which must not import the schema (torch)
    if verbose:
        out["full"] = OmegaConf.to_yaml(config, resolve=True)
    return out


def _scalar(v) -> str:
    return json.dumps(v) if isinstance(v, (bool, dict, list)) or v is None else str(v)


def _compact(algorithm: dict, sections: list[str]) -> list[str]:
    """The algorithm section in few lines: verl's nested sections on one line each, ours (``sections``, the
    schema's names, as the checks' process found them) in block form (the judge sub-section only when the judge
    partitions)."""
    lines = []
    for key, val in algorithm.items():
        if key == "_target_":
            continue
        if not isinstance(val, dict):
            lines.append(f"  {key}: {_scalar(val)}")
            continue
        val = {k: v for k, v in val.items() if k != "_target_"}
        if key not in sections:
            lines.append(f"  {key}: {json.dumps(val)}")
            continue
        lines.append(f"  {key}:")
        for k, v in val.items():
            if key == "cue" and k == "judge" and val.get("partitioner") != "judge":
                lines.append(f"    judge: (not used: partitioner={val.get('partitioner')})")
            elif isinstance(v, dict) and k == "judge":
                lines.append("    judge:")
                lines += [f"      {a}: {_scalar(b)}" for a, b in v.items()]
            else:
                lines.append(f"    {k}: {_scalar(v)}")
    return lines


def _report(problems: list[str], warns: list[str], checked: list[str], result: dict | None, verbose: bool) -> int:
    """FAILED and the problems (nothing else), or OK, the warnings, what was checked and the algorithm section."""
    if not problems:
        for w in dict.fromkeys(warns):  # once each, in order
            print(f"[warning] {w}", file=sys.stderr)
    if len(problems) == 1:
        print(f"verl-focal check FAILED: {problems[0]}", file=sys.stderr)
        return 2
    if problems:
        print("verl-focal check FAILED:", file=sys.stderr)
        for p in problems:
            print(f"  - {p}", file=sys.stderr)
        return 2
    print("verl-focal check: OK")
    for c in checked:
        print(f"  checked {c}")
    if result and result.get("algorithm") is not None:
        unused = result.get("unused_sections") or []
        note = f"not shown: {', '.join(unused)}, which this estimator does not read; " if unused else ""
        print(f"resolved algorithm section ({note}--verbose prints the whole config):")
        print("\n".join(_compact(result["algorithm"], result.get("our_sections", []))))
    if verbose and result and result.get("full"):
        print("resolved config:")
        print(result["full"], end="")
    return 0


def run(args: argparse.Namespace) -> int:
    from verl_focal.config.errors import UserError
    from verl_focal.integration.startup.compose import check_trainer_name, compose_config

    try:
        check_trainer_name(args.trainer)
    except UserError as e:
        return _report([str(e)], [], [], None, args.verbose)
    if args.skip_probe:
        res = validate_here(args.overrides, skip_judge=args.skip_judge, verbose=args.verbose, trainer=args.trainer)
        return _report(res["problems"], res["warnings"], res["checked"], res, args.verbose)

    request = json.dumps({"overrides": list(args.overrides), "skip_judge": bool(args.skip_judge),
                          "verbose": bool(args.verbose), "trainer": args.trainer})
    child = subprocess.Popen([sys.executable, "-c", _PROBE, request], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    try:  # while the child imports verl: compose here, without `import verl`; an override typo is reported now
        from omegaconf import OmegaConf

        config_yaml = OmegaConf.to_yaml(compose_config(args.overrides, trainer=args.trainer))
    except UserError as e:
        child.kill()
        child.communicate()
        return _report([f"config: {e}"], [], [], None, args.verbose)
    try:
        stdout, stderr = child.communicate(input=config_yaml, timeout=300)
    except subprocess.TimeoutExpired:
        child.kill()
        stdout, stderr = child.communicate()
    probe = _parse_probe(stdout, child.returncode, stderr)
    problems, plugin_warnings = _plugin_problems(probe)
    res = probe.get("checks") or {"problems": [], "warnings": [], "checked": []}
    checked = []
    if not problems and not plugin_warnings:
        modes = ", ".join(probe.get("trainer_modes", []))
        ours = [e for e in probe.get("estimators", []) if not e.startswith("verl_focal.")]
        checked.append(f"plugin: `import verl` (verl {probe.get('verl_version', '?')}) in a fresh process loaded "
                       f"verl_focal.plugin: estimators {', '.join(ours)} (+ verl_focal.* aliases); "
                       f"trainer modes {modes}")
    return _report(problems + res["problems"], plugin_warnings + res["warnings"], checked + res["checked"], res,
                   args.verbose)
