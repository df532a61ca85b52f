"""The ``verl-focal`` command line.

Each sub-command lives in its own module, which defines

* ``add_arguments(parser: argparse.ArgumentParser) -> None`` and
* ``run(args: argparse.Namespace) -> int`` (the exit code).

Modules are imported only when their sub-command is chosen, so ``verl-focal sim``
never pays for ``import verl`` (7-10 s).
"""

from __future__ import annotations

import argparse
import importlib
import sys

# name -> (module path, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "check": ("verl_focal.integration.check", "pre-flight: verl import, registration, config validation"),
    "demo": ("verl_focal.demo.cli", "CPU-scale RLVR experiment: GRPO vs F-GRPO vs Cue-GRPO"),
    "cues": ("verl_focal.partition.cli", "show the strategy-cue sequence and signature of each trace"),
    "agreement": ("verl_focal.partition.agreement", "compare judge and strategy-cue partitions (adjusted Rand index)"),
    "sim": ("verl_focal.theory.cli_sim", "the F-GRPO App. J categorical simulation (three regimes in N)"),
    "tail-miss": ("verl_focal.theory.cli_tail_miss", "tail-miss probability table and peak N"),
    "prep-data": ("verl_focal.data.cli", "prepare DeepScaleR / evaluation parquet files for verl"),
    "eval": ("verl_focal.eval.cli", "generate, score and report pass@k; rare-correct NLL"),
}


def _top_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="verl-focal",
        description="Focal and rarity-aware advantage estimators for verl.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="commands:\n" + "\n".join(f"  {k:<11} {v[1]}" for k, v in COMMANDS.items()),
    )
    p.add_argument("command", choices=sorted(COMMANDS), metavar="command", help="one of the commands below")
    return p


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in COMMANDS:
        parser = _top_parser()
        if not argv or argv[0] in ("-h", "--help"):
            parser.print_help()
            return 0 if argv else 2
        parser.parse_args(argv[:1])  # prints "invalid choice" and exits 2
        return 2
    name, rest = argv[0], argv[1:]
    module_path, help_line = COMMANDS[name]
    module = importlib.import_module(module_path)
    sub = argparse.ArgumentParser(prog=f"verl-focal {name}", description=help_line)
    module.add_arguments(sub)
    args = sub.parse_args(rest)
    return int(module.run(args) or 0)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
