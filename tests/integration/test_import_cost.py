"""The plugin costs its host nothing at import (the module budget), and still registers every estimator.

verl imports the ``verl.plugins`` entry point inside every ``import verl``.  These tests count modules, not
seconds, so a slow or loaded machine cannot fail them (the seconds are measured by ``bench/import_cost.py``,
docs/bench.md).  Each runs fresh interpreters: the test process has long imported verl's registry.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from verl_focal.cli import LAB_EXTRA
from verl_focal.estimators import all_specs

#: modules ``import verl`` may load on top of verl's own because of the plugin.  Measured: +8 (verl_focal,
#: verl_focal._moved, verl_focal.plugin, verl_focal.integration, .compat, .hooks, .hooks.arrange, .hooks.post_import;
#: bench/import_cost.py).  The budget leaves
#: room for a few more small modules of ours, and is far below what importing verl's trainer stack costs
#: (verl.trainer.ppo.core_algos alone loads about 1,360 modules: scipy, pandas, scikit-learn, transformers).
MODULE_BUDGET = 30

#: packages the plugin must not load into ``import verl`` (verl alone loads none of them)
HEAVY = ("scipy", "pandas", "sklearn", "accelerate", "verl.trainer")


def _fresh(code: str, plugin: bool = True) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "VERL_USE_EXTERNAL_PLUGINS"}
    if not plugin:
        env["VERL_USE_EXTERNAL_PLUGINS"] = "none"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


_MODULES = "import json, sys\nimport verl\nprint(json.dumps(sorted(sys.modules)))"


def test_import_verl_loads_at_most_the_budget_more_modules_and_nothing_heavy():
    with_plugin, without = set(_fresh(_MODULES)), set(_fresh(_MODULES, plugin=False))
    assert "verl_focal.plugin" in with_plugin and "verl_focal.plugin" not in without  # the arms differ as meant
    extra = with_plugin - without
    assert len(extra) <= MODULE_BUDGET, sorted(extra)
    heavy = sorted(m for m in extra if m.split(".")[0] in HEAVY or m.startswith(HEAVY))
    assert heavy == [], heavy


def test_a_fresh_process_that_imports_only_verl_and_core_algos_finds_every_estimator():
    names = sorted(s.name for s in all_specs())
    code = (
        "import json\nimport verl\nfrom verl.trainer.ppo import core_algos\n"
        f"names = {names!r}\n"
        "out = {}\n"
        "for n in names:\n"
        "    for key in (n, 'verl_focal.' + n):\n"
        "        fn = core_algos.get_adv_estimator_fn(key)\n"
        "        out[key] = fn.__module__ + '.' + fn.__qualname__\n"
        "print(json.dumps(out))"
    )
    found = _fresh(code)
    expected = {}
    for spec in all_specs():
        for key in (spec.name, "verl_focal." + spec.name):
            expected[key] = f"{spec.fn.__module__}.{spec.fn.__qualname__}"
    assert found == expected


def test_without_the_plugin_verls_registry_holds_none_of_ours():
    """The control of the test above: the names come from the plugin, not from anything else verl imports."""
    code = ("import json\nimport verl\nfrom verl.trainer.ppo import core_algos\n"
            "print(json.dumps(sorted(core_algos.ADV_ESTIMATOR_REGISTRY)))")
    held = set(_fresh(code, plugin=False))
    assert held and not held & {s.name for s in all_specs()}


#: what a TaskRunner process imports, then the start-up checks on our example config and the validation hook's
#: metric, as the v1 trainer runs them (`trainer.logger=[console]`: no W&B key on a test machine)
_TRAINER_PROCESS = """
import json, sys
import verl
import verl.trainer.main_ppo, verl.trainer.ppo.ray_trainer, verl.trainer.ppo.core_algos
if PLUGIN:
    import verl_focal.integration.hooks.runner, verl_focal.integration.hooks.trainer
    import verl_focal.integration.hooks.dataproto_hook
    from verl_focal.integration.startup.compose import compose_config
    from verl_focal.integration.startup.validate import validate_all
    from verl_focal.validation import unbiased_pass_at_k_metrics

    validate_all(compose_config(["algorithm.adv_estimator=f_grpo", "trainer.logger=[console]",
                                 "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2",
                                 "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=2",
                                 "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=2"]))
    assert unbiased_pass_at_k_metrics(["a", "a"], [1.0, 0.0])["val-aux/all/unbiased_pass@1"] == 0.5
print(json.dumps(sorted(sys.modules)))
"""

#: the lab's own packages (its [lab] extra); verl itself loads pillow, never matplotlib
LAB_PACKAGES = tuple(LAB_EXTRA)


def test_a_trainer_process_loads_nothing_of_the_lab():
    """The training wing reaches the lab by no import path: after a TaskRunner's imports, our hooks, the start-up
    checks and the validation metric, no ``verl_focal.lab`` module and none of the lab's packages that verl does not
    load itself (tests/architecture/test_import_layers.py forbids the imports; this checks the process)."""
    ours = set(_fresh(_TRAINER_PROCESS.replace("PLUGIN", "True")))
    verls = set(_fresh(_TRAINER_PROCESS.replace("PLUGIN", "False"), plugin=False))
    assert {"verl_focal.integration.hooks.trainer", "verl_focal.validation",
            "verl_focal.integration.startup.admit"} <= ours
    assert sorted(m for m in ours if m == "verl_focal.lab" or m.startswith("verl_focal.lab.")) == []
    assert sorted(m for m in ours if m.split(".")[0] == "matplotlib") == []
    assert sorted(m for m in ours - verls if m.split(".")[0] in LAB_PACKAGES) == []
