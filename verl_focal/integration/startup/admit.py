"""The one door into start-up: :func:`admit` runs the rules of a stage over a config and returns their report.

Every entry point calls it once and renders the :class:`~verl_focal.integration.startup.findings.Report`:
``verl-focal check`` (stage ``check``), ``python -m verl_focal.main_ppo --dry-run`` (``dry_run``), the launch
(``launch``, every trainer, with or without Hydra's flags), our TaskRunners (``actor``) and the hooked v1 trainer
(``trainer``).  The rules and their order are :data:`~verl_focal.integration.startup.rules.RULES`, so the same config
is refused for the same reason first wherever it enters.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from verl_focal.config.errors import ConfigError
from verl_focal.integration.startup.findings import Report
from verl_focal.integration.startup.rules import RULES, STAGES, Admission

__all__ = ["admit"]


def admit(stage: str, config: Any, *, overrides: Iterable[str] = (), trainer: str = "ppo",
          skip_judge: bool = False) -> Report:
    """Run :data:`RULES`' rows for ``stage`` over ``config``, in table order; return the report.

    ``overrides``: the user's command line (the unread-key rule reads it); ``trainer``: as ``--trainer``;
    ``skip_judge``: ``check --skip-judge``.  A rule's :class:`ConfigError` is a finding at the rule's level in this
    stage; its returned lines are findings at ``rule.lines`` (a ``(level, line)`` pair sets its own).  Every stage
    stops at the first refusal (one line to fix at a time, the same one wherever the config enters); a rule whose
    ``after`` rules failed at a lower level is skipped.  The report's ``sections`` hold our validated
    ``algorithm.*`` sections when that rule ran.
    """
    if stage not in STAGES:
        raise ValueError(f"admit: no stage {stage!r}; stages: {STAGES}")
    a = Admission(stage, config, tuple(overrides), trainer, skip_judge)
    report = Report(stage)
    failed: set[str] = set()
    for rule in RULES:
        level = rule.levels.get(stage)
        if level is None or failed.intersection(rule.after):
            continue
        try:
            lines = rule.run(a) or ()
        except ConfigError as e:
            report.add(rule.name, level, str(e))
            failed.add(rule.name)
            if level == "refuse":
                break
            continue
        for line in lines:  # a line, at the rule's level; or (level, line)
            level_of, text = line if isinstance(line, tuple) else (rule.lines, line)
            report.add(rule.name, level_of, text)
    report.sections = a.sections
    return report
