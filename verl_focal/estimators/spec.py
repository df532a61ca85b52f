"""What each of our estimators declares besides its function: the per-row fields and group-level steps.

The hooks read a spec to know what to fetch for a step and what to run before verl's advantage call;
:mod:`verl_focal.integration.registration` writes each spec's function into verl's estimator registry.
No verl import.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["EstimatorSpec"]


@dataclass(frozen=True)
class EstimatorSpec:
    """One estimator of ours.

    Attributes:
        name: the ``algorithm.adv_estimator`` value (also registered as ``verl_focal.<name>``).
        fn: the estimator, in verl's calling convention ``fn(token_level_rewards, response_mask,
            config, index, **kwargs) -> (advantages, returns)``.
        needs: the per-row fields the hook fetches: ``"acc"``, ``"responses"``, ``"problems"``,
            ``"old_log_probs"`` or the name of another reward extra; a fixed set, or a function of
            the step's :class:`~verl_focal.config.schema.AlgorithmSettings`.
        prepare: ``prepare(ctx, settings)``, group-level work run before verl's advantage call
            (the cue estimators' partition).
        prefetch: ``prefetch(ctx, settings)``, the early start of that work, run in the background
            from the old-log-prob pass (judge requests, strategy cues); it must never raise.
        startup_check: ``startup_check(config)`` on the whole trainer config, for checks that span
            sections (``algorithm.passk.k`` against ``actor_rollout_ref.rollout.n``).
        sections: our ``algorithm.*`` sections the estimator reads (``verl-focal check`` names them).
        also_reads: keys of other sections it reads too, as ``section.key`` (``cue_grpo``: ``focal.base``);
            the correctness keys of ``algorithm.focal`` (:data:`~verl_focal.estimators.inputs.CORRECTNESS_KEYS`)
            are read by every estimator of ours.
        min_rollouts: the smallest ``actor_rollout_ref.rollout.n`` with which the estimator changes anything.
    """

    name: str
    fn: Callable[..., Any]
    needs: frozenset[str] | Callable[[Any], frozenset[str]] = frozenset()
    prepare: Callable[[Any, Any], None] | None = None
    prefetch: Callable[[Any, Any], None] | None = None
    startup_check: Callable[[Any], None] | None = None
    sections: frozenset[str] = frozenset()
    also_reads: frozenset[str] = frozenset()
    min_rollouts: int = 2

    def reads(self, section: str, key: str) -> bool:
        """Whether the estimator reads ``algorithm.<section>.<key>``."""
        from verl_focal.estimators.inputs import CORRECTNESS_KEYS

        return (section in self.sections or f"{section}.{key}" in self.also_reads
                or (section == "focal" and key in CORRECTNESS_KEYS))

    def needs_for(self, settings: Any) -> frozenset[str]:
        """The per-row fields to fetch for ``settings`` (an ``AlgorithmSettings``, or an untyped
        ``algorithm`` config, parsed here)."""
        if not callable(self.needs):
            return frozenset(self.needs)
        from verl_focal.config.schema import parse_settings

        return frozenset(self.needs(parse_settings(settings)))
