"""The categorical-policy simulation of F-GRPO App. J behind ``verl-focal sim`` (docs/methods.md §4).

A softmax policy over K actions (logits anchor / other-correct / incorrect = 5 / 3 / 0)
takes ``steps`` group-relative updates for each group size N and focal exponent gamma;
the retained correct mass M_ret after training shows the three regimes in N.  One
concept per module:

* :mod:`.config`  -- :class:`SimConfig`, the paper / quick presets, the initial policy, N grids;
* :mod:`.kernels` -- one update step (NumPy reference, batched torch forms);
* :mod:`.run`     -- sampling with common random numbers, the run loop, M_ret;
* :mod:`.result`  -- :class:`SimResult`, the per-(N, gamma) summary and the regimes;
* :mod:`.output`  -- CSV / JSON files of a run and reading them back;
* :mod:`.plot`    -- the figure (matplotlib is imported only when plotting).
"""

from . import config as _config
from .config import *  # noqa: F403 (its __all__ is the first part of ours)
from .kernels import numpy_reference_step, torch_step
from .output import read_results, write_csv, write_json
from .plot import plot_results
from .result import SimResult, regimes, summarise
from .run import retained_correct_mass, run_simulation

#: the config module's names, then the run's, the kernels', the files' and the figure's
__all__ = [*_config.__all__, "SimResult", "retained_correct_mass", "run_simulation", "numpy_reference_step",
           "torch_step", "write_csv", "write_json", "read_results", "plot_results", "summarise", "regimes"]
