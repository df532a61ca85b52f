"""The engine rule with vLLM installed (.venv-vllm, vLLM's CPU build): vLLM's own config classes refuse, before any
engine starts, what they would refuse on the GPU node after Ray and the actor are up -- a tensor parallelism that
does not divide the model's attention heads, a memory fraction above 1, a context longer than the model's -- and a
context that caps responses is a warning with its numbers.  No GPU: vLLM validates its config on CPU."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.vllm

BASE = ["actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2",
        "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=2",
        "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=2",
        "actor_rollout_ref.rollout.name=vllm", "trainer.logger=[console]",
        "data.max_prompt_length=512", "data.max_response_length=1024"]


@pytest.fixture(scope="module")
def model_28_heads(tmp_path_factory):
    """A model folder as a 28-head model's (Qwen2.5-7B's head count) with a 4,096-token context: config only."""
    d = tmp_path_factory.mktemp("m28")
    (d / "config.json").write_text(json.dumps({
        "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 28 * 64, "intermediate_size": 256,
        "num_attention_heads": 28, "num_key_value_heads": 4, "num_hidden_layers": 2, "vocab_size": 512,
        "max_position_embeddings": 4096, "torch_dtype": "bfloat16"}))
    return str(d)


def _engine_findings(model, *overrides):
    from verl_focal.integration.startup.admit import admit
    from verl_focal.integration.startup.compose import compose_config

    args = [*BASE, f"actor_rollout_ref.model.path={model}", *overrides]
    report = admit("check", compose_config(args), overrides=args)
    return [(f.level, f.message) for f in report.findings if f.rule == "engine"], report


def test_vllm_is_here():
    import importlib.util

    assert importlib.util.find_spec("vllm") is not None


@pytest.mark.parametrize("override,needle", [
    ("actor_rollout_ref.rollout.tensor_model_parallel_size=3",
     "Total number of attention heads (28) must be divisible by tensor parallel size (3)"),
    ("actor_rollout_ref.rollout.gpu_memory_utilization=1.5", "less than or equal to 1"),
    ("actor_rollout_ref.rollout.max_model_len=8192", "greater than the derived max_model_len"),
])
def test_what_vllm_refuses_is_refused_before_start(model_28_heads, override, needle):
    found, report = _engine_findings(model_28_heads, override)
    assert report.first_refusal is not None and report.first_refusal.rule == "engine", report.findings
    (level, message), = found
    assert level == "refuse" and needle in message and "\n" not in message, message
    assert message.startswith("vLLM refuses the rollout section that verl would pass it: ")
    assert override.lstrip("+").split("=")[0] in message  # names the key verl passes


def test_a_valid_rollout_passes_and_a_capping_context_warns(model_28_heads):
    assert _engine_findings(model_28_heads, "actor_rollout_ref.rollout.tensor_model_parallel_size=4")[0] == []
    found, report = _engine_findings(model_28_heads, "data.max_response_length=4000")
    assert report.first_refusal is None
    (level, message), = found
    assert level == "warn" and "= 4512 tokens exceed the rollout's context of 4096" in message, message
    assert "a prompt over 96 tokens gets a shorter response" in message


def test_a_hub_name_is_checked_where_the_model_is(model_28_heads):
    (level, message), = _engine_findings("Qwen/Qwen2.5-7B")[0]
    assert level == "info" and "is not a local model folder" in message
