"""The demo's experimental arms as data (pure Python, no verl import).

An :class:`Arm` is an estimator name, a group size N and the ``algorithm.*``
settings the estimator reads.  Adding an estimator to the demo is one line in
:data:`DEFAULT_ARMS`; an arm whose estimator is not registered in the running
install is reported as skipped, never silently dropped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ACTOR_KEYS", "Arm", "ARM_SETS", "BASE", "BASE_LR", "CONTROL_FAMILIES", "CONTROLS_SET", "DEFAULT_ARMS",
    "DS_COEF_GRID",
    "FAMILY_ARMS", "FOCAL_GAMMA_GRID", "FOCAL_REFERENCE_ARM", "MAXRL_EPSILON_GRID", "Family", "GROUP_SIZE_ARMS",
    "INTERPOLATION_ESTIMATOR", "INTERPOLATION_FAMILY", "INTERPOLATION_LAMBDAS",
    "LARGE_N_ARM", "MATCHED_LR", "METHOD_FAMILIES", "MIXTURE_ESTIMATOR", "MIXTURE_FAMILY", "MIXTURE_LAMBDAS",
    "REFERENCE_ARM", "REFERENCE_FAMILIES", "arms_by_name",
]


@dataclass(frozen=True)
class Arm:
    """One experimental arm: estimator name, group size N and its estimator settings.

    ``settings`` maps dotted keys under verl's ``algorithm`` section to values,
    e.g. ``{"focal.gamma": 1.0}`` or ``{"cue.alpha": 0.8}``; anything an
    estimator reads from ``algorithm.*`` can be set this way.  ``compare_with``
    names arms this one is also compared with (paired by seed) besides
    :data:`REFERENCE_ARM` and the base, when they ran in the same experiment.
    """

    name: str
    estimator: str
    n: int
    settings: Mapping[str, Any] = field(default_factory=dict)
    compare_with: tuple[str, ...] = ()
    #: keys under verl's ``actor_rollout_ref.actor`` that the recipes' controls set (:data:`ACTOR_KEYS`), e.g.
    #: ``{"entropy_coeff": 0.001}``; empty = the demo's defaults (lr ``DemoConfig.lr``, no entropy bonus, no KL)
    actor: Mapping[str, Any] = field(default_factory=dict)
    #: the focal weight taken apart (:mod:`verl_focal.lab.demo.focal_controls`): "shuffled", "batch-mean" or
    #: "renormalised" multiplies verl's GRPO advantages by the focal weights (1 − p̂)^γ (γ =
    #: ``settings["focal.gamma"]``) rearranged over each step's mixed groups; empty = plain advantages
    focal_weights: str = ""
    #: λ of the output mixture λ·π_GRPO N=8 + (1 − λ)·π_SFT (:data:`MIXTURE_FAMILY`): a reference computed exactly
    #: from GRPO N=8's and the seed's SFT policy's probabilities, never trained (estimator
    #: :data:`MIXTURE_ESTIMATOR`); None for every trained arm
    mixture: float | None = None
    #: λ of the weight interpolation θ_λ = λ·θ_GRPO N=8 + (1 − λ)·θ_SFT (:data:`INTERPOLATION_FAMILY`): a reference
    #: made from GRPO N=8's and the seed's SFT policy's parameters and evaluated as every arm is, never trained
    #: (estimator :data:`INTERPOLATION_ESTIMATOR`); None for every other arm
    interpolation: float | None = None

    def __post_init__(self) -> None:
        unknown = sorted(set(self.actor) - set(ACTOR_KEYS))
        if unknown:
            raise ValueError(f"arm {self.name!r}: actor keys {unknown} are not run by the demo; "
                             f"choose from {list(ACTOR_KEYS)}")
        if (self.mixture is not None or self.estimator == MIXTURE_ESTIMATOR) and not (
                self.estimator == MIXTURE_ESTIMATOR and self.mixture is not None and 0.0 < self.mixture < 1.0
                and self.n == 8 and not self.settings and not self.actor and not self.focal_weights):
            raise ValueError(f"arm {self.name!r}: an output mixture has estimator {MIXTURE_ESTIMATOR!r}, N = 8 (GRPO "
                             f"N=8's), 0 < λ < 1 (mixture={self.mixture!r}) and no settings")
        if (self.interpolation is not None or self.estimator == INTERPOLATION_ESTIMATOR) and not (
                self.estimator == INTERPOLATION_ESTIMATOR and self.interpolation is not None
                and 0.0 < self.interpolation < 1.0 and self.mixture is None and self.n == 8 and not self.settings
                and not self.actor and not self.focal_weights):
            raise ValueError(f"arm {self.name!r}: a weight interpolation has estimator {INTERPOLATION_ESTIMATOR!r}, "
                             f"N = 8 (GRPO N=8's), 0 < λ < 1 (interpolation={self.interpolation!r}) and no settings")
        if self.focal_weights:
            from verl_focal.lab.demo.focal_controls import MODES

            if self.focal_weights not in MODES or self.estimator != "grpo" or "focal.gamma" not in self.settings:
                raise ValueError(f"arm {self.name!r}: focal_weights={self.focal_weights!r} needs one of {list(MODES)}, "
                                 f"estimator 'grpo' and a settings['focal.gamma']")

    def as_json(self) -> dict[str, Any]:
        d = {"name": self.name, "estimator": self.estimator, "n": self.n, "settings": dict(self.settings),
             "compare_with": list(self.compare_with)}
        if self.actor:  # only the control arms carry actor settings (other arms' results.json keep their shape)
            d["actor"] = dict(self.actor)
        if self.focal_weights:  # likewise, only the focal weight's arms
            d["focal_weights"] = self.focal_weights
        if self.mixture is not None:  # and the output mixture's points
            d["mixture"] = self.mixture
        if self.interpolation is not None:  # and the weight interpolation's
            d["interpolation"] = self.interpolation
        return d

    @property
    def trained(self) -> bool:
        """False for the output mixture's and the weight interpolation's points (made from GRPO N=8 and the SFT
        policy), True for every arm that RL trains."""
        return self.mixture is None and self.interpolation is None


#: the ``actor_rollout_ref.actor`` keys an arm may set, as the recipes set them (grpo_low_lr.sh, grpo_entropy.sh,
#: grpo_kl.sh): the learning rate, verl's entropy bonus and verl's KL loss to the reference (SFT) policy
ACTOR_KEYS = ("optim.lr", "entropy_coeff", "use_kl_loss", "kl_loss_coef", "kl_loss_type")


#: the arm every other arm is compared with (paired by seed)
REFERENCE_ARM = "GRPO N=8"

#: the output mixture's "estimator": not one (nothing is trained); its points are computed from GRPO N=8's and the
#: seed's SFT policy's probabilities
MIXTURE_ESTIMATOR = "output_mixture"
#: the weight interpolation's "estimator": not one either; its points are GRPO N=8's and the SFT policy's parameters
#: interpolated, then evaluated
INTERPOLATION_ESTIMATOR = "weight_interpolation"

#: the row of each seed's SFT policy (no RL) in the results, the report and the claims
BASE = "base (SFT)"

#: the second baseline of the family arms: the F-GRPO setting whose gains over GRPO N=8 replicated (docs/demo.md)
FOCAL_REFERENCE_ARM = "F-GRPO N=8 γ=1"

#: the default run's arms: all at N = 8, the paper's comparison at equal rollout budget
DEFAULT_ARMS: tuple[Arm, ...] = (
    Arm("GRPO N=8", "grpo", 8),
    Arm("F-GRPO N=8 γ=0.5", "f_grpo", 8, {"focal.gamma": 0.5}),
    Arm("F-GRPO N=8 γ=1", "f_grpo", 8, {"focal.gamma": 1.0}),
    Arm("Cue-GRPO N=8", "cue_grpo", 8, {"cue.alpha": 0.8}),
    Arm("F-Cue-GRPO N=8", "f_cue_grpo", 8, {"focal.gamma": 0.5, "cue.alpha": 0.8}),
)

#: GRPO at the group sizes of the F-GRPO paper's sweep (``--arms n-sweep``), with the same 8 prompts per step
GROUP_SIZE_ARMS: tuple[Arm, ...] = (
    Arm("GRPO N=2", "grpo", 2),
    Arm("GRPO N=4", "grpo", 4),
    Arm("GRPO N=16", "grpo", 16),
    Arm("GRPO N=32", "grpo", 32),
)

#: the arm of the group-size set that F-GRPO N=8 is also compared with: the paper's "N=32 coverage at a quarter of
#: the rollouts" claim (the comparison with GRPO at the trough of the pass@256 curve is made in the report)
LARGE_N_ARM = "GRPO N=32"

#: the other published answers to the same problem (``--arms family``), at N = 8 with the settings fixed before
#: any result (docs/demo.md, "Family arms"): Pass@k Training with k = 4 = N/2, the unlikeliness reward with the
#: paper's β = 0.25, once ranked by the summed sequence log-probability (the paper's text) and once by the
#: per-token mean (the authors' released code; docs/methods.md §10).  Each is also compared with F-GRPO γ=1.
FAMILY_ARMS: tuple[Arm, ...] = (
    Arm("Pass@k-GRPO N=8 k=4", "passk_grpo", 8, {"passk.k": 4}, compare_with=(FOCAL_REFERENCE_ARM,)),
    Arm("Unlikely-GRPO N=8 β=0.25 sum", "unlikely_grpo", 8, {"unlikely.beta": 0.25, "unlikely.likelihood": "sum"},
        compare_with=(FOCAL_REFERENCE_ARM,)),
    Arm("Unlikely-GRPO N=8 β=0.25 mean", "unlikely_grpo", 8, {"unlikely.beta": 0.25, "unlikely.likelihood": "mean"},
        compare_with=(FOCAL_REFERENCE_ARM,)),
)



@dataclass(frozen=True)
class Family:
    """One knob turned over a grid fixed before any of its arms ran (docs/demo.md, "The controls").

    ``arms[i]`` runs the knob at ``labels[i]``, in increasing strength; GRPO N=8 (:data:`REFERENCE_ARM`) is every
    family's zero point (lr 5e-4, no entropy bonus, no KL, γ = α = β = 0, k = 1).  ``control``: one of the
    F-GRPO paper's controls (the curves a method is compared with at equal pass@1), else a method's own sweep."""

    name: str
    knob: str
    labels: tuple[str, ...]
    arms: tuple[Arm, ...]
    control: bool
    #: the knob's far end is the SFT policy itself (lr = 0: no update), whose metrics every seed has exactly
    ends_at_sft: bool = False
    #: a control-side reference, not a method and not one of the papers' controls (the output mixture): its points
    #: are compared with every control family as a method's are, and every method is compared with it as with a
    #: control family
    reference: bool = False


#: the lr of the demo's RL (``DemoConfig.lr``'s default reads it from here): the lower-lr family's zero point
BASE_LR = 5e-4
#: GRPO's lr scaled by F-GRPO γ=1's mean |Â| per update over GRPO's: 5e-4 × 0.464 (docs/demo.md, "The controls":
#: the token-mean |Â| of each update, averaged over the 60 updates, F-GRPO N=8 γ=1 over GRPO N=8, mean of the
#: per-seed ratios on seeds 0-11), rounded
MATCHED_LR = 2.3e-4
#: the grids, fixed before any control arm ran: the lr 0.68 × (the paper's 6.8e-7 for 1e-6), the matched lr,
#: then 1/4 and 1/10, and lr = 0 (the SFT policy); the KL loss from the paper's 0.001 up to where it binds at this
#: scale.  The entropy bonus (0.001, 0.03, 0.1, 0.3 in the first two rounds) is not run in the third: it collapsed
#: at 0.3 and sat at GRPO's point at 0.001, and its only "better" verdicts were the chord to the collapse
#: (docs/demo.md, "A constructed positive control": the set)
LR_GRID = (3.4e-4, MATCHED_LR, 1.25e-4, 5e-5)
KL_GRID = (0.001, 0.1, 0.3, 1.0)


def _g(v: float) -> str:
    return f"{v:g}"


def _sci(v: float) -> str:
    """3.4e-4, 1.25e-4, 5e-5: a learning rate as the recipes write it."""
    mantissa, exponent = f"{v:e}".split("e")
    return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"


#: the focal weight taken apart (``Arm.focal_weights``, :mod:`verl_focal.lab.demo.focal_controls`) runs at F-GRPO's
#: own γ grid, so that each F-GRPO arm has a twin with the same weights placed without regard to p̂ (a control) and
#: one with its allocation at GRPO's mean weight (a method); the second round's batch-mean twin is no longer run
FOCAL_GAMMA_GRID = (0.5, 1.0, 2.0)


def _focal_control(mode: str) -> Family:
    return Family(f"focal {mode}", "γ", tuple(_g(v) for v in FOCAL_GAMMA_GRID),
                  tuple(Arm(f"GRPO N=8 focal {mode} γ={_g(v)}", "grpo", 8, {"focal.gamma": v}, focal_weights=mode)
                        for v in FOCAL_GAMMA_GRID), True)


CONTROL_FAMILIES: tuple[Family, ...] = (
    Family("lower lr", "lr", tuple(_sci(v) for v in LR_GRID),
           tuple(Arm(f"GRPO N=8 lr={_sci(v)}", "grpo", 8, actor={"optim.lr": v}) for v in LR_GRID), True,
           ends_at_sft=True),
    Family("KL to SFT", "kl_loss_coef", tuple(_g(v) for v in KL_GRID),
           tuple(Arm(f"GRPO N=8 KL={_g(v)}", "grpo", 8,
                     actor={"use_kl_loss": True, "kl_loss_coef": v, "kl_loss_type": "low_var_kl"}) for v in KL_GRID),
           True),
    _focal_control("shuffled"),
)

#: MaxRL's ε (``algorithm.maxrl.epsilon``): the authors' 1e-6, then 1/N, where Â = (c − p̂)/(p̂ + ε) moves from
#: MaxRL's 1/p̂ weighting towards a mean-centred 0/1 reward (ε = 1, run in the second round, sat at GRPO's
#: pass@1 and outside the grids); DS-GRPO's c₊ = c₋ (``algorithm.ds_grpo.correct_coef``, ``incorrect_coef``) at 0.2
#: and 0.5: the second round's 0.025-0.1 did not move off GRPO
MAXRL_EPSILON_GRID = (1e-6, 0.125)
DS_COEF_GRID = (0.2, 0.5)

#: each method over its own knob, on the same seeds; the default runs' settings (γ = 1 and 0.5, α = 0.8, β = 0.25,
#: k = 4) are the same arms as in the default and family sets
METHOD_FAMILIES: tuple[Family, ...] = (
    Family("F-GRPO", "γ", ("0.5", "1", "2"),
           (DEFAULT_ARMS[1], DEFAULT_ARMS[2], Arm("F-GRPO N=8 γ=2", "f_grpo", 8, {"focal.gamma": 2.0})), False),
    Family("Cue-GRPO", "α", ("0.8", "1.6"),
           (DEFAULT_ARMS[3], Arm("Cue-GRPO N=8 α=1.6", "cue_grpo", 8, {"cue.alpha": 1.6})), False),
    Family("F-Cue-GRPO", "γ, α", ("0.5, 0.8",), (DEFAULT_ARMS[4],), False),
    Family("Unlikely-GRPO", "β", ("0.25", "0.5", "1"),
           (FAMILY_ARMS[1],
            Arm("Unlikely-GRPO N=8 β=0.5 sum", "unlikely_grpo", 8,
                {"unlikely.beta": 0.5, "unlikely.likelihood": "sum"}),
            Arm("Unlikely-GRPO N=8 β=1 sum", "unlikely_grpo", 8, {"unlikely.beta": 1.0, "unlikely.likelihood": "sum"})),
           False),
    Family("Pass@k-GRPO", "k", ("2", "4"),
           (Arm("Pass@k-GRPO N=8 k=2", "passk_grpo", 8, {"passk.k": 2}), FAMILY_ARMS[0]), False),
    Family("MaxRL", "ε", tuple(_g(v) for v in MAXRL_EPSILON_GRID),
           tuple(Arm(f"MaxRL N=8 ε={_g(v)}", "maxrl", 8, {"maxrl.epsilon": v}) for v in MAXRL_EPSILON_GRID), False),
    Family("DS-GRPO", "c₊ = c₋", tuple(_g(v) for v in DS_COEF_GRID),
           tuple(Arm(f"DS-GRPO N=8 c={_g(v)}", "ds_grpo", 8, {"ds_grpo.correct_coef": v, "ds_grpo.incorrect_coef": v})
                 for v in DS_COEF_GRID), False),
    # F-GRPO at GRPO's step size: its weights divided by their mean over the step's mixed groups (focal_controls.py)
    Family("F-GRPO renormalised", "γ", tuple(_g(v) for v in FOCAL_GAMMA_GRID),
           tuple(Arm(f"F-GRPO N=8 γ={_g(v)} renormalised", "grpo", 8, {"focal.gamma": v}, focal_weights="renormalised")
                 for v in FOCAL_GAMMA_GRID), False),
)

#: λ of the output mixture's points: GRPO N=8 at λ = 1, the SFT policy at λ = 0 (docs/demo.md, "A constructed
#: positive control"); its Δ pass@1 from GRPO N=8 is (1 − λ) times the SFT policy's, seed by seed, so the grid
#: spans the methods' pass@1 in steps of about 0.006-0.012, denser near both ends where the curve bends most (in a
#: pilot the chord between neighbouring points stayed within 0.0005 of the curve down to λ = 0.1)
MIXTURE_LAMBDAS = (0.975, 0.95, 0.9, 0.85, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1)
#: the output mixture λ·π_GRPO N=8 + (1 − λ)·π_SFT (one λ-coin per sample): a reference on the control side,
#: computed exactly per seed, never trained and never a method
MIXTURE_FAMILY = Family("output mixture", "λ", tuple(_g(v) for v in MIXTURE_LAMBDAS),
                        tuple(Arm(f"output mixture λ={_g(v)}", MIXTURE_ESTIMATOR, 8, mixture=v)
                              for v in MIXTURE_LAMBDAS), False, ends_at_sft=True, reference=True)
#: λ of the weight interpolation's points (docs/demo.md, "Weight interpolation"), fixed on a pilot seed (100, not in
#: the design): its pass@1 stays at GRPO's down to λ = 0.8 and falls about linearly below, so the grid is dense where
#: the methods' pass@1 lies (Δ −0.005 to −0.08 at λ 0.7 to 0.2) in steps of about 0.005-0.02 pass@1; λ = 1 is GRPO
#: N=8, λ = 0 the SFT policy
INTERPOLATION_LAMBDAS = (0.9, 0.8, 0.7, 0.65, 0.6, 0.55, 0.5, 0.45, 0.4, 0.3, 0.2, 0.1)
#: weight interpolation θ_λ = λ·θ_GRPO N=8 + (1 − λ)·θ_SFT (WiSE-FT; Dang et al., arXiv 2504.10478): a reference on
#: the control side, one evaluation per λ and seed, never trained and never a method
INTERPOLATION_FAMILY = Family("weight interpolation", "λ", tuple(_g(v) for v in INTERPOLATION_LAMBDAS),
                              tuple(Arm(f"weight interpolation λ={_g(v)}", INTERPOLATION_ESTIMATOR, 8,
                                        interpolation=v) for v in INTERPOLATION_LAMBDAS),
                              False, ends_at_sft=True, reference=True)
REFERENCE_FAMILIES: tuple[Family, ...] = (MIXTURE_FAMILY, INTERPOLATION_FAMILY)

#: ``--arms controls``: GRPO N=8, the four control families (the papers' three, focal shuffled), the methods' sweeps
#: (F-GRPO renormalised among them), all at N = 8 on the same seeds, the output mixture's points (computed) and the
#: weight interpolation's (interpolated, then evaluated)
CONTROLS_SET: tuple[Arm, ...] = (DEFAULT_ARMS[0],) + tuple(
    a for fam in CONTROL_FAMILIES + METHOD_FAMILIES + REFERENCE_FAMILIES for a in fam.arms)

_FOCAL_N8 = Arm("F-GRPO N=8 γ=1", "f_grpo", 8, {"focal.gamma": 1.0}, compare_with=(LARGE_N_ARM,))

#: the arm sets ``--arms`` accepts by name
ARM_SETS: dict[str, tuple[Arm, ...]] = {
    "default": DEFAULT_ARMS,
    "family": (DEFAULT_ARMS[0], DEFAULT_ARMS[2]) + FAMILY_ARMS,
    # GRPO at N = 2, 4, 8, 16, 32 and F-GRPO γ=1 at N = 8, also compared with GRPO N=32
    "n-sweep": (GROUP_SIZE_ARMS[0], GROUP_SIZE_ARMS[1], DEFAULT_ARMS[0], GROUP_SIZE_ARMS[2], GROUP_SIZE_ARMS[3],
                _FOCAL_N8),
    "controls": CONTROLS_SET,
}
ARM_SETS["all"] = tuple({a.name: a for a in DEFAULT_ARMS + GROUP_SIZE_ARMS + FAMILY_ARMS + CONTROLS_SET}.values())


def _merge(a: Arm, b: Arm) -> Arm:
    if ((a.estimator, a.n, dict(a.settings), dict(a.actor), a.focal_weights, a.mixture, a.interpolation)
            != (b.estimator, b.n, dict(b.settings), dict(b.actor), b.focal_weights, b.mixture, b.interpolation)):
        raise ValueError(f"arm {a.name!r} is defined twice with different settings")
    return Arm(a.name, a.estimator, a.n, a.settings, tuple(dict.fromkeys(a.compare_with + b.compare_with)), a.actor,
               a.focal_weights, a.mixture, a.interpolation)


def arms_by_name(names: list[str]) -> tuple[Arm, ...]:
    """Select arms by name or set (:data:`ARM_SETS`: ``default``; ``family`` = GRPO N=8, F-GRPO γ=1 and the
    family arms; ``n-sweep`` = GRPO at N = 2..32 and F-GRPO γ=1 N=8; ``controls`` = GRPO N=8, the control
    families, the methods' sweeps and the output mixture's points; ``all`` = every arm); unknown names raise
    with the valid list.  An arm named in two sets is taken once, with the comparisons of both."""
    table: dict[str, Arm] = {}
    for arm_set in ARM_SETS.values():
        for a in arm_set:
            table[a.name] = _merge(table[a.name], a) if a.name in table else a
    out: list[Arm] = []
    for n in names:
        if n in ARM_SETS:
            out.extend(table[a.name] for a in ARM_SETS[n] if table[a.name] not in out)
        elif n in table:
            if table[n] not in out:
                out.append(table[n])
        else:
            import difflib

            i = names.index(n)
            split = next((" ".join(names[i:j]) for j in range(len(names), i + 1, -1)
                          if " ".join(names[i:j]) in table), None)
            if split is not None:  # an arm name with spaces, given unquoted: the shell split it
                raise ValueError(f"--arms: {' '.join(repr(x) for x in names[i:i + len(split.split())])} are one arm "
                                 f"name split by the shell: quote it, --arms '{split}'")
            close = difflib.get_close_matches(n, list(table) + list(ARM_SETS), n=1)
            hint = f" (did you mean {close[0]!r}?; an arm name with spaces needs quotes)" if close else ""
            raise ValueError(
                f"--arms: unknown arm {n!r}{hint}; choose from {sorted(table)} or a set {sorted(ARM_SETS)}"
            )
    return tuple(out)
