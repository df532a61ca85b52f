"""What the start-up rules find, and the one way it is shown.

A :class:`Finding` is one rule's word on one config: a refusal (the run must not start), a warning (it starts, and
the user should know) or an info line (the run's size).  :func:`~verl_focal.integration.startup.admit.admit`
gathers them in a :class:`Report`; every entry point renders that report here and nowhere else
(:meth:`Report.render`, :meth:`Report.warn`), so a dry run, a launch and a TaskRunner show the same lines in one
format.  No verl import.
"""

from __future__ import annotations

import sys
import warnings
from dataclasses import dataclass, field

from verl_focal.config.errors import ConfigError

__all__ = ["LEVELS", "Finding", "Report"]

#: a finding's levels, the weightiest first
LEVELS = ("refuse", "warn", "info")


@dataclass(frozen=True)
class Finding:
    """``rule`` (its row in :data:`~verl_focal.integration.startup.rules.RULES`) found ``message`` at ``level``."""

    rule: str
    level: str
    message: str

    def __post_init__(self) -> None:
        if self.level not in LEVELS:
            raise ValueError(f"Finding.level={self.level!r}: one of {LEVELS}")


@dataclass
class Report:
    """The findings of one admission, in the order the rules ran."""

    stage: str
    findings: list[Finding] = field(default_factory=list)
    #: our validated ``algorithm.*`` sections, when that rule ran
    sections: dict | None = None

    def add(self, rule: str, level: str, message: str) -> None:
        finding = Finding(rule, level, " ".join(str(message).split()))
        if finding not in self.findings:  # two rules that reach the same fault say it once
            self.findings.append(finding)

    def at(self, level: str) -> list[str]:
        return [f.message for f in self.findings if f.level == level]

    @property
    def refusals(self) -> list[str]:
        return self.at("refuse")

    @property
    def warnings(self) -> list[str]:
        return self.at("warn")

    @property
    def first_refusal(self) -> Finding | None:
        return next((f for f in self.findings if f.level == "refuse"), None)

    def raise_first(self) -> Report:
        """Raise :class:`ConfigError` with the first refusal's message; return ``self`` when there is none."""
        first = self.first_refusal
        if first is not None:
            raise ConfigError(first.message)
        return self

    def render(self, prog: str, file=None) -> None:
        """The warnings and info lines, one each, under ``prog`` (stderr): ``prog: warning: ...``, ``prog: ...``."""
        out = sys.stderr if file is None else file
        for f in self.findings:
            if f.level == "warn":
                print(f"{prog}: warning: {f.message}", file=out)
            elif f.level == "info":
                print(f"{prog}: {f.message}", file=out)

    def warn(self) -> None:
        """The warnings as Python ``UserWarning``s: for callers of the library functions (``validate_start``),
        where a warning filter, not a terminal, decides what is shown."""
        for message in self.warnings:
            warnings.warn(message, UserWarning, stacklevel=3)
