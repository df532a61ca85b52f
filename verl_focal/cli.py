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
import re
import sys

# name -> (module path, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "check": ("verl_focal.check", "pre-flight: verl import, registration, config validation"),
    "demo": ("verl_focal.lab.demo.cli", "CPU-scale RLVR experiment: GRPO vs F-GRPO vs Cue-GRPO"),
    "cues": ("verl_focal.partition.cli", "show the strategy-cue sequence and signature of each trace"),
    "agreement": ("verl_focal.lab.agreement", "compare judge and strategy-cue partitions (adjusted Rand index)"),
    "sim": ("verl_focal.lab.theory.cli_sim", "the F-GRPO App. J categorical simulation (three regimes in N)"),
    "tail-miss": ("verl_focal.lab.theory.cli_tail_miss", "tail-miss probability table and peak N"),
    "prep-data": ("verl_focal.data.cli", "prepare DeepScaleR / evaluation parquet files for verl"),
    "eval": ("verl_focal.lab.eval.cli", "generate, score and report pass@k; frontier, plan, families, interpolate: "
                                        "methods against controls at equal pass@1; rare-correct NLL"),
}

#: what the research wing's commands (those whose module is under verl_focal.lab) need beyond the base install: the
#: ``[lab]`` extra of pyproject.toml, as import name -> distribution (tests/cli/test_lab_extra.py holds them equal)
LAB_EXTRA: dict[str, str] = {"matplotlib": "matplotlib", "PIL": "pillow", "safetensors": "safetensors"}


def missing_lab_extra() -> list[str]:
    """The ``[lab]`` extra's distributions that this interpreter cannot import (empty when the extra is installed).
    Looks them up without importing them."""
    import importlib.util

    missing = []
    for module, dist in LAB_EXTRA.items():
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # a blocked or half-removed package counts as missing
            found = False
        if not found:
            missing.append(dist)
    return missing


def lab_extra_error(name: str) -> str | None:
    """The one line a lab command prints when the ``[lab]`` extra is not installed here, else None."""
    if not COMMANDS[name][0].startswith("verl_focal.lab."):
        return None
    missing = missing_lab_extra()
    if not missing:
        return None
    return (f"verl-focal {name}: error: this command is part of the lab and needs its extra ({', '.join(missing)} "
            "not installed); run: pip install 'verl-focal[lab]'")


def _versions() -> str:
    import importlib.metadata as md

    def v(name: str) -> str:
        try:
            return md.version(name)
        except md.PackageNotFoundError:
            return "not installed"

    return f"verl-focal {v('verl-focal')} (verl {v('verl')}, torch {v('torch')}, ray {v('ray')})"


_INVALID_CHOICE = re.compile(r"invalid choice: '(?P<value>[^']*)' \(choose from (?P<choices>.*)\)")


def with_suggestion(message: str) -> str:
    """argparse's "invalid choice" message with a did-you-mean for the closest choice.

    >>> with_suggestion("argument command: invalid choice: 'chek' (choose from 'check', 'cues')")
    "unknown command: 'chek' (did you mean 'check'?); choose from check, cues"
    >>> with_suggestion("argument --backend: invalid choice: 'vlm' (choose from 'vllm', 'sglang')")
    "argument --backend: invalid choice: 'vlm' (did you mean 'vllm'?); choose from vllm, sglang"
    """
    from verl_focal.config.errors import did_you_mean

    m = _INVALID_CHOICE.search(message)
    if not m:
        return message
    choices = [c.strip().strip("'") for c in m.group("choices").split(",")]
    hint = did_you_mean(m.group("value"), choices)
    head = message[: m.start()]
    what = "invalid choice"
    if re.fullmatch(r"argument (command|\{[^}]*\}): ", head):  # a (nested) sub-command
        head, what = "", "unknown command"
    return f"{head}{what}: {m.group('value')!r}{hint}; choose from {', '.join(choices)}{message[m.end():]}"


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error in one line (the full usage stays under -h) and a did-you-mean for a
    mistyped choice (sub-command or option value).  A value that starts like a negative number (``-3-2``,
    ``-1e-3``) is taken as a value, as Python 3.13's argparse does, so the option's own check can name it
    (3.11 treats ``--seeds -3-2`` as a missing value)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = re.compile(r"^-\.?\d")

    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {with_suggestion(message)} (see {self.prog} -h)\n")


def _top_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="verl-focal",
        description="Focal and rarity-aware advantage estimators for verl.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="commands:\n" + "\n".join(f"  {k:<11} {v[1]}" for k, v in COMMANDS.items())
        + "\n\nuser errors print one line and exit 2; add --debug (or set VERL_FOCAL_DEBUG=1) for the traceback"
        + "\noutput folders are --out-dir DIR, single output files --out FILE; ranges are LO-HI (e.g. --seeds 0-23)",
    )
    p.add_argument("--version", action="version", version=_versions(),
                   help="print the versions of verl-focal, verl, torch and ray, and exit")
    p.add_argument("command", choices=sorted(COMMANDS), metavar="command", help="one of the commands below")
    return p


def _describe_nested(parser: argparse.ArgumentParser) -> None:
    """Give every nested sub-command its one-line help as description too (``eval score -h``)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for name, sub in action.choices.items():
                if not sub.description and helps.get(name):
                    sub.description = helps[name]
                _describe_nested(sub)


def build_parser(name: str) -> argparse.ArgumentParser:
    """The parser of sub-command ``name`` (imports its module)."""
    module_path, help_line = COMMANDS[name]
    module = importlib.import_module(module_path)
    example = getattr(module, "EXAMPLE", "")  # a command's own example line(s), shown under -h
    epilog = (f"example:\n{example}\n\n" if example else "") + (
        "--debug (or VERL_FOCAL_DEBUG=1) shows the traceback of a user error")
    sub = _Parser(prog=f"verl-focal {name}", description=help_line,
                  formatter_class=argparse.RawDescriptionHelpFormatter, epilog=epilog)
    module.add_arguments(sub)
    _describe_nested(sub)
    return sub


def main(argv: list[str] | None = None) -> int:
    from verl_focal.config.errors import UserError, debug_enabled, report_user_error
    from verl_focal.integration.startup.quiet import quiet_optional_engines

    argv = list(sys.argv[1:] if argv is None else argv)
    debug = debug_enabled(argv)
    argv = [a for a in argv if a != "--debug"]  # accepted anywhere, by every sub-command
    if not argv or argv[0] in ("-h", "--help", "--version") or argv[0] not in COMMANDS:
        parser = _top_parser()
        if not argv or argv[0] in ("-h", "--help"):
            parser.print_help()
            return 0 if argv else 2
        parser.parse_args(argv[:1])  # --version, or "invalid choice" and exit 2
        return 2
    quiet_optional_engines()  # only in our own command, never at plugin import
    name, rest = argv[0], argv[1:]
    no_lab = lab_extra_error(name)
    if no_lab:  # before the command's module is imported (it would fail later, at its first plot)
        print(no_lab, file=sys.stderr)
        return 2
    sub = build_parser(name)
    prog = f"verl-focal {name}"
    nested = [a for a in sub._actions if isinstance(a, argparse._SubParsersAction)]
    if rest and nested and rest[0] in nested[0].choices:
        prog += f" {rest[0]}"
    args = sub.parse_args(rest)
    try:
        return int(sub_run(name, args) or 0)
    except KeyboardInterrupt:  # Ctrl-C: one line, the shell's status for SIGINT, no traceback
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except UserError as e:
        return report_user_error(prog, e, debug=debug)
    except OSError as e:  # a path the user gave that cannot be read or written: name it, no traceback
        if not e.filename:
            raise
        where = f"{e.filename}" + (f" -> {e.filename2}" if e.filename2 else "")
        err = UserError(f"{where}: {e.strerror or e}; check the path (and its permissions)")
        return report_user_error(prog, err.with_traceback(e.__traceback__), debug=debug)
    except SystemExit as e:  # a module's `raise SystemExit("message")` is a user error too
        if isinstance(e.code, str):
            err = UserError(e.code.removeprefix(prog + ": ").removeprefix(f"verl-focal {name}: "))
            return report_user_error(prog, err.with_traceback(e.__traceback__), debug=debug)
        raise


def sub_run(name: str, args: argparse.Namespace) -> int:
    return importlib.import_module(COMMANDS[name][0]).run(args)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
