"""The old import paths (the lab wing, ``step/``, ``integration/{hooks,startup}/``) still work for one release: the
same module objects as the new ones, with a DeprecationWarning naming the new path (verl_focal/_moved.py); a split
module's old name finds each of its names where it lives now.  The cases run in a fresh interpreter, one after the
other, so each old name is imported for the first time there (the test process may have imported the new modules long
before); the new modules of the cases before it are loaded by then, as in a program that imports both."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from verl_focal._moved import MOVED, SPLIT, new_name

_CHECK = """
import importlib, json, sys, warnings

results = {}
for old, new in CASES:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(f"import {old}")  # an import statement, as users write it
    mod = sys.modules[old]
    moved = [str(w.message) for w in caught
             if issubclass(w.category, DeprecationWarning) and " has moved to " in str(w.message)]
    real = importlib.import_module(new)
    results[old] = {"same": mod is real and sys.modules[old] is real, "name": mod.__name__, "spec": mod.__spec__.name,
                    "warned": moved, "where": [w.filename for w in caught if " has moved to " in str(w.message)]}
print(json.dumps(results))
"""

CASES = [
    ("verl_focal.demo", "verl_focal.lab.demo"),
    ("verl_focal.demo.rl", "verl_focal.lab.demo.rl"),
    ("verl_focal.demo.frontier_report", "verl_focal.lab.demo.frontier_report"),
    ("verl_focal.theory", "verl_focal.lab.theory"),
    ("verl_focal.theory.sim.kernels", "verl_focal.lab.theory.sim.kernels"),
    ("verl_focal.stats.verdict", "verl_focal.lab.stats.verdict"),
    ("verl_focal.eval.metrics", "verl_focal.lab.eval.metrics"),
    ("verl_focal.eval.val_metrics", "verl_focal.validation"),
    ("verl_focal.partition.agreement", "verl_focal.lab.agreement"),
    ("verl_focal.estimators.step", "verl_focal.step.seam"),
    ("verl_focal.estimators.decode", "verl_focal.step.decode"),
    ("verl_focal.estimators.sessions", "verl_focal.step.sessions"),
    ("verl_focal.integration.dataproto_hook", "verl_focal.integration.hooks.dataproto_hook"),
    ("verl_focal.integration.runner", "verl_focal.integration.hooks.runner"),
    ("verl_focal.integration.post_import", "verl_focal.integration.hooks.post_import"),
    ("verl_focal.integration.modes", "verl_focal.integration.hooks.modes"),
    ("verl_focal.integration.arrange", "verl_focal.integration.hooks.arrange"),
    ("verl_focal.integration.compose", "verl_focal.integration.startup.compose"),
    ("verl_focal.integration.no_signal", "verl_focal.integration.startup.no_signal"),
    ("verl_focal.integration.unread", "verl_focal.integration.startup.unread"),
    ("verl_focal.integration.versions", "verl_focal.integration.startup.versions"),
    ("verl_focal.integration.quiet", "verl_focal.integration.startup.quiet"),
    ("verl_focal.integration.run_size", "verl_focal.integration.startup.run_size"),
    ("verl_focal.config.liveness", "verl_focal.integration.startup.liveness"),
    ("verl_focal.config.no_update", "verl_focal.integration.startup.no_update"),
    ("verl_focal.config.tracking", "verl_focal.integration.startup.tracking"),
    ("verl_focal.config.ray_env", "verl_focal.integration.startup.ray_env"),
    ("verl_focal.data.local_inputs", "verl_focal.integration.startup.local_inputs"),
]

#: split modules: old name -> (names imported from it, the module each must come from now)
SPLIT_CASES = {
    "verl_focal.estimators.rows": {"context_from_rows": "verl_focal.step.rows", "as_list": "verl_focal.step.columns",
                                   "sequence_log_prob_columns": "verl_focal.estimators.old_log_probs",
                                   "OLD_LOG_PROB_SUM": "verl_focal.estimators.old_log_probs",
                                   "SIGNATURE_EXTRA": "verl_focal.partition.signatures:SIG_KEY"},
    "verl_focal.integration.preflight": {"validate_start": "verl_focal.integration.startup.validate",
                                         "compose_config": "verl_focal.integration.startup.compose",
                                         "check_local_paths": "verl_focal.integration.startup.local_inputs"},
    "verl_focal.integration.late_checks": {"check_reward_function": "verl_focal.integration.startup.verl_checks",
                                           "config_get": "verl_focal.config.key_names"},
    "verl_focal.integration.trainer": {"FocalHookMixin": "verl_focal.integration.hooks.trainer",
                                       "tq_rows": "verl_focal.step.tq_rows"},
}


def _fresh(code: str) -> dict:
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_every_moved_name_has_a_case_and_maps_where_the_table_says():
    assert {new_name(o) for o, _ in CASES} == {n for _, n in CASES}
    assert {o.rsplit(".", 1)[0] if o not in MOVED else o for o, _ in CASES} | set(SPLIT_CASES) >= set(MOVED)
    assert set(SPLIT_CASES) == set(SPLIT) and not {o for o, _ in CASES} & set(SPLIT)
    assert new_name("verl_focal.lab.demo") is None and new_name("verl_focal.estimators") is None


@pytest.fixture(scope="module")
def moved_results() -> dict:
    """Every case of CASES in one fresh interpreter (one verl_focal import instead of one per case)."""
    return _fresh(_CHECK.replace("CASES:", f"{CASES!r}:"))


@pytest.mark.parametrize("old,new", CASES, ids=[o for o, _ in CASES])
def test_an_old_path_is_the_new_module_with_a_deprecation_warning(moved_results, old, new):
    out = moved_results[old]
    assert out["same"] and out["name"] == new and out["spec"] == new, out  # one module object, its own spec kept
    assert f"{old} has moved to {new}; import it from there (the old path goes in the next release)" in out["warned"]
    assert set(out["where"]) == {"<string>"}, out  # the warning points at the importing line, not at importlib


def test_the_old_names_people_import_by_still_resolve():
    code = ("import json, warnings\nwarnings.simplefilter('ignore')\n"
            "from verl_focal.eval.metrics import pass_at_k, default_ks\n"
            "from verl_focal.core.pass_at_k import pass_at_k as p, default_ks as d\n"
            "from verl_focal.eval import pass_at_k_curve\n"
            "from verl_focal.lab.eval.metrics import pass_at_k_curve as c\n"
            "import verl_focal.demo.rl, verl_focal.lab.demo.rl\n"
            "from verl_focal.theory import tail_miss_probability\n"
            "from verl_focal.stats.frontier import frontier_claims\n"
            "import verl_focal.lab.stats.frontier as f\n"
            "print(json.dumps([pass_at_k is p, default_ks is d, pass_at_k_curve is c,\n"
            "                  verl_focal.demo.rl is verl_focal.lab.demo.rl, frontier_claims is f.frontier_claims,\n"
            "                  callable(tail_miss_probability)]))")
    assert _fresh(code) == [True] * 6


_SPLIT_CHECK = """
import importlib, json, warnings

results = {}
for old, names in SPLIT_CASES.items():
    found = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(f"from {old} import {', '.join(names)}", {}, found)
    out = {}
    for name, home in names.items():
        module, _, attr = home.partition(":")
        out[name] = found[name] is getattr(importlib.import_module(module), attr or name)
    results[old] = {"same": out, "warned": [str(w.message) for w in caught if " has moved to " in str(w.message)]}
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def split_results() -> dict:
    """Every split module's case in one fresh interpreter, in the order of SPLIT_CASES."""
    return _fresh(_SPLIT_CHECK.replace("SPLIT_CASES.items()", f"{SPLIT_CASES!r}.items()"))


@pytest.mark.parametrize("old", sorted(SPLIT_CASES))
def test_a_split_modules_old_path_finds_each_name_where_it_lives_now(split_results, old):
    names = SPLIT_CASES[old]
    out = split_results[old]
    assert set(out["same"]) == set(names) and all(out["same"].values()), out
    homes = " and ".join((new_name(old), *SPLIT[old]))
    assert out["warned"] == [f"{old} has moved to {homes}; import it from there (the old path goes in the next "
                             "release)"], out


def test_the_old_import_of_the_pre_flight_still_runs_it():
    code = ("import json, warnings\nwarnings.simplefilter('ignore')\n"
            "from verl_focal.integration.preflight import validate_start\n"
            "from verl_focal.integration.startup import validate\n"
            "print(json.dumps([validate_start is validate.validate_start]))")
    assert _fresh(code) == [True]
