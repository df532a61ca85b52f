"""The judge is called from the TaskRunner's node, not the driver's (gpu-readiness finding 3, T8).

Before: a loopback ``base_url`` or a ``cache_dir`` on a two-node run passed start-up silently, and only the driver
probed the judge, so a TaskRunner on another node fell back to strategy cues for every group (the run quietly
became ``cue_grpo``).  Now start-up warns on both, and our TaskRunner probes the judge itself before any model loads.
"""

from __future__ import annotations

import warnings

import pytest

from verl_focal.config.errors import ConfigError
from verl_focal.integration.startup.validate import validate_start

JUDGE = ["algorithm.adv_estimator=cue_grpo", "algorithm.cue.partitioner=judge", "algorithm.cue.judge.model=judge-model"]


def _warnings(composed_config, overrides):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        validate_start(composed_config([*JUDGE, *overrides]))
    return [str(w.message) for w in caught if "algorithm.cue.judge." in str(w.message)]


def test_loopback_url_and_local_cache_warn_on_several_nodes(composed_config, tmp_path):
    url = "http://127.0.0.1:8000/v1"
    two = _warnings(composed_config, [f"algorithm.cue.judge.base_url={url}", "trainer.nnodes=2",
                                      f"algorithm.cue.judge.cache_dir={tmp_path}"])
    assert len(two) == 2, two
    assert two[0].startswith(f"algorithm.cue.judge.base_url='{url}' is a loopback address and trainer.nnodes=2")
    assert "give the judge host's address" in two[0]
    assert two[1].startswith(f"algorithm.cue.judge.cache_dir='{tmp_path}' with trainer.nnodes=2")
    # one node: loopback is the right address, and the cache is that node's
    assert _warnings(composed_config, [f"algorithm.cue.judge.base_url={url}", "trainer.nnodes=1",
                                       f"algorithm.cue.judge.cache_dir={tmp_path}"]) == []
    # the fix the warning names silences it
    assert _warnings(composed_config, ["algorithm.cue.judge.base_url=http://judge-host:8000/v1",
                                       "trainer.nnodes=2"]) == []


def test_the_taskrunner_probes_the_judge_from_its_own_process(composed_config, judge_server, closed_port_url):
    from verl_focal.integration.hooks.runner import check_here

    ok = composed_config([*JUDGE, f"algorithm.cue.judge.base_url={judge_server.base_url}"])
    check_here(ok)
    judge_server.models = ["another-model"]  # the probe really asks the server: now it serves another model
    with pytest.raises(ConfigError, match="judge-model"):
        check_here(ok)
    down = composed_config([*JUDGE, f"algorithm.cue.judge.base_url={closed_port_url}"])
    with pytest.raises(ConfigError) as e:
        check_here(down)
    assert str(e.value).startswith("algorithm.cue.judge, probed from the TaskRunner on ")
    assert "\n" not in str(e.value)
