r"""The whole step around the advantage at production scale: verl's stock step against ours, per estimator.

Each step is what the v1 trainer runs from the old-log-prob pass to the advantages: verl's own
``_compute_old_log_prob`` then ``_compute_advantage`` -- verl's stock trainer (``sync``) for the
baseline, our hooked trainer mode (``focal_sync``) for the rest -- with a real TransferQueue on a
local Ray cluster, as tests/integration does.  Only the trainer's GPU-bound ``__init__`` is skipped
(the object is built with ``__new__``), and the actor worker group is faked: it is the GPU boundary,
and it writes what the real workers write, ``log_probs`` and ``entropy`` for the batch's keys
(:class:`ActorWorkerGroup`), then stands in ``--overlap-s`` more of GPU time.  verl's pass around it
is the real one: it reads those back with ``response_mask``, writes ``old_log_probs`` and
``entropy``, and computes the entropy metric.  With ``--ref-pass`` every step also runs verl's
``_compute_ref_log_prob`` (a reference model for a KL loss or reward) with the same faked group as the
reference's.  The step is charged the driver's part only (the worker group's time is taken off).

Rows are written as verl's agent loop writes them (``AgentLoopOutput.as_dict`` ->
``list_of_dict_to_tensordict`` -> ``kv_batch_put``: prompt and response token ids, response mask,
``rm_scores``, the reward extras ``acc`` / ``score`` / ``cue_sig`` in
``extra_fields["reward_extra_info"]``).  The rollout returns no log-probs
(``calculate_log_probs=false``) except in the bypass arm.  Responses are long competition-maths
solutions (bench/math_text.py) tokenised with a byte-level BPE trained here: a pool of 64 groups
per size, cut (or tiled) to exactly the response length with the answer kept at the end; the batch
repeats the pool's groups, each row with its own tag after ``<think>`` so that no two rows are the
same text.  The ``cue_sig`` extras are what the reward workers write with ``cue_set=math_v1``
(extracted from correct rows only).  The tokenizer and the pools are cached under ``--cache-dir``,
keyed by ``GEN_VERSION``.

Arms (each step timed; steps are repeated, arms interleaved and rotated by one place per repeat; at
sizes with one step per arm the baselines are timed three times, first, middle and last; first one
untimed warm-up step per arm on a small batch, and at each size one untimed step of the first arm):

* ``grpo``            verl's stock ``grpo`` in the stock ``sync`` trainer mode: the baseline
* ``f_grpo``          through the hook
* ``cue_sig``         ``cue_grpo``, clusters from the reward-side ``cue_sig`` extras (``source=auto``)
* ``cue_text``        ``cue_grpo`` with ``algorithm.cue.source=text``: the hook's prefetch decodes the
                      rows to partition and extracts their cues during the old-log-prob pass
* ``f_cue``           ``f_cue_grpo`` (``source=auto``, signatures present)
* ``cue_judge``       ``cue_grpo`` with the judge partitioner against a loopback judge
                      (``--judge-latency`` per request); the requests leave from the hook's prefetch,
                      started at the old-log-prob pass
* ``passk``           ``passk_grpo`` with ``algorithm.passk.k=4`` (needs only ``acc``)
* ``unlikely``        ``unlikely_grpo`` (beta = 0.25): the hook reduces ``old_log_probs`` to one number
                      per row from the DataProto verl's ``_compute_advantage`` hands ``compute_advantage``
* ``grpo_bypass``     verl's stock ``grpo`` in verl's bypass mode (``rollout_correction.bypass_mode=true``):
                      the pass only copies the rollout's log-probs (no worker call); the baseline of
                      the ``*_bypass`` arms
* ``unlikely_bypass`` ``unlikely_grpo`` in bypass mode: the old log-probs are the rollout's (verl's pass
                      copies them), reduced as in ``unlikely``
* ``maxrl``           ``maxrl`` (needs only ``acc``)
* ``ds_grpo``         ``ds_grpo`` (c+ = c- = 0.05): the old log-probs reduced as in ``unlikely``
* ``ds_grpo_bypass``  ``ds_grpo`` in bypass mode, as ``unlikely_bypass``

The cue arms' prefetch runs in a background thread from the start of the pass; the arms without
background work get no stand-in time.

Per arm: wall and CPU time of the step (CPU = this process's user+system time, all threads, less the
faked worker group's; the TransferQueue storage actor and the judge run in other processes) and the
ratio to the baseline (``grpo``; ``grpo_bypass`` for ``unlikely_bypass``), and the comparison
(:func:`compare`: the difference of the medians, the widest difference any two steps show, and whether
the arm is within ``MARGIN_S`` of its baseline: yes / no / ``?`` when the steps' noise is wider); the
split: ``olp pass`` (the driver's part of verl's old-log-prob pass) and ``adv step``
(``_compute_advantage``), and within the latter the step's own metrics (``verl_focal/fetch_s``,
``verl_focal/decode_s``, ``verl_focal/prepare_s``,
``cue/partition_time_s``, and ``join``: the time the step blocked on the prefetch thread, the
judge) plus the time spent inside the registered estimator, in the credit rule and in the old
log-probs' per-row reduction (``lp reduce``: ``unlikely_grpo``, ``ds_grpo``; measured by wrapping the
functions), and ``ours``: the hook's own time on the step's path, the two passes' wall
time less verl's own methods inside them (``PPOTrainer._compute_old_log_prob`` /
``_compute_advantage``, timed by wrapping them), plus the estimator and the log-prob reduction run
inside verl's; peak extra RSS of this process during the
step over its RSS just before, from a sampling thread (every 2 ms, ``/proc/self/statm``), and its
difference to the baseline's.

Reward side: per response, on the first ``--reward-samples`` rows of the first size, main thread:
``verl_focal.reward.compute_score`` without and with ``cue_set="math_v1"`` (which adds ``cue_sig``),
and verl's ``math_verify`` scorer.

    PYTHONPATH=$PWD python bench/advantage_step.py                       # both sizes
    PYTHONPATH=$PWD python bench/advantage_step.py --sizes 2048x8192     # one size
    PYTHONPATH=$PWD python bench/advantage_step.py --quick               # a tiny run
"""

from __future__ import annotations

import argparse
import copy
import ctypes
import gc
import json
import logging
import os
import random
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))  # verl_harness: the tests' TransferQueue and trainer set-up

import math_text  # noqa: E402

from verl_harness import start_transfer_queue, stop_transfer_queue, v1_trainer  # noqa: E402

ARMS = ("grpo", "f_grpo", "cue_sig", "cue_text", "f_cue", "cue_judge", "passk", "unlikely", "grpo_bypass",
        "unlikely_bypass", "maxrl", "ds_grpo", "ds_grpo_bypass")
#: verl's stock estimator in the stock trainer mode: the baselines (``*_bypass`` arms are compared with
#: ``grpo_bypass``)
STOCK_ARMS = ("grpo", "grpo_bypass")
#: above this many rows a size gets one timed step per arm by default (three below)
BIG_ROWS = 4096
DEFAULT_SIZES = "2048x8192/8,8192x8192/16"
QUICK_SIZES = "64x512/8"
PAGE = os.sysconf("SC_PAGE_SIZE")


class UserError(Exception):
    """A bad command-line value (exit code 2, one line)."""


# --------------------------------------------------------------------------- sizes
@dataclass(frozen=True)
class Size:
    rows: int
    length: int
    group: int

    @property
    def label(self) -> str:
        return f"{self.rows}x{self.length}"


def parse_sizes(text: str) -> list[Size]:
    """``ROWSxTOKENS[/GROUP]`` separated by commas (GROUP: rollouts per prompt, default 8)."""
    out = []
    for part in text.split(","):
        part = part.strip()
        try:
            dims, _, group = part.partition("/")
            rows, length = (int(x) for x in dims.lower().split("x"))
            g = int(group) if group else 8
        except ValueError:
            raise UserError(f"--sizes: {part!r} is not ROWSxTOKENS[/GROUP], e.g. 2048x8192/8") from None
        if rows < 1 or length < 16 or g < 2 or rows % g:
            raise UserError(
                f"--sizes: {part!r} needs rows >= 1, tokens >= 16, group >= 2 and rows a multiple of the group"
            )
        out.append(Size(rows, length, g))
    return out


# --------------------------------------------------------------------------- memory sampling
def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def release_memory() -> None:
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:  # not glibc
        pass


class PeakRSS:
    """Peak RSS of this process while the ``with`` block runs (a thread samples every ``interval`` s)."""

    def __init__(self, interval: float = 0.002) -> None:
        self.interval = interval
        self.start = self.peak = 0
        self._stop = threading.Event()

    def __enter__(self) -> PeakRSS:
        self.start = self.peak = rss_bytes()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, rss_bytes())
            time.sleep(self.interval)

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss_bytes())

    @property
    def extra(self) -> int:
        return self.peak - self.start


# --------------------------------------------------------------------------- timing wrappers
class Timers:
    """Wall time spent inside wrapped functions, by label, reset per step."""

    def __init__(self) -> None:
        self.t: dict[str, float] = {}
        self.end: dict[str, float] = {}  # perf_counter when the label's last call ended

    def wrap(self, label: str, fn: Callable) -> Callable:
        if getattr(fn, "_bench_label", None):
            return fn

        def timed(*a, **k):
            t0 = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                t1 = time.perf_counter()
                self.t[label] = self.t.get(label, 0.0) + t1 - t0
                self.end[label] = max(self.end.get(label, 0.0), t1)

        timed._bench_label = label  # type: ignore[attr-defined]
        timed.__wrapped__ = fn  # type: ignore[attr-defined]
        return timed


def install_timers(timers: Timers) -> None:
    """Time the estimators (verl's registry and verl's direct GRPO call) and the credit rule.

    The credit functions are replaced wherever a module imported them by name, so this keeps
    working when the code that calls them moves."""
    from verl.trainer.ppo import core_algos
    from verl.trainer.ppo.v1.trainer_base import PPOTrainer

    import verl_focal.core.credit as credit
    import verl_focal.partition.diagnostics as diag
    from verl_focal.step.seam import AdvantageStep

    # the background prefetch (and the reward-time one): when it ends tells whether it ran into verl's pass
    AdvantageStep.prefetch = timers.wrap("prefetch", AdvantageStep.prefetch)
    core_algos.compute_grpo_outcome_advantage = timers.wrap("estimator", core_algos.compute_grpo_outcome_advantage)
    # verl's own passes: what our overrides spend around them is the hook's time (split "ours")
    PPOTrainer._compute_old_log_prob = timers.wrap("verl_olp", PPOTrainer._compute_old_log_prob)
    PPOTrainer._compute_advantage = timers.wrap("verl_adv", PPOTrainer._compute_advantage)
    for name in ("f_grpo", "cue_grpo", "f_cue_grpo", "passk_grpo", "unlikely_grpo", "maxrl", "ds_grpo"):
        core_algos.ADV_ESTIMATOR_REGISTRY[name] = timers.wrap("estimator", core_algos.ADV_ESTIMATOR_REGISTRY[name])
    targets = {id(credit.credit_multipliers_batch): ("credit", credit.credit_multipliers_batch),
               id(diag.credit_diagnostics): ("credit", diag.credit_diagnostics)}
    try:  # the old-log-prob reduction the hook around compute_advantage runs inside verl's step
        import verl_focal.step.rows as rows

        targets[id(rows.attach_old_log_probs)] = ("lp_reduce", rows.attach_old_log_probs)
    except (ImportError, AttributeError):  # an older layout: the reduction ran elsewhere (in the passes)
        pass
    for mod in list(sys.modules.values()):
        if mod is None or not getattr(mod, "__name__", "").startswith("verl_focal"):
            continue
        for attr, value in list(vars(mod).items()):
            if id(value) in targets and callable(value):
                label, fn = targets[id(value)]
                setattr(mod, attr, timers.wrap(label, fn))


# --------------------------------------------------------------------------- tokenizer and rows
#: bump when bench/math_text.py or the row generator below changes: the cached tokenizer and pools
#: under --cache-dir carry it in their file names, so an old cache is never read
GEN_VERSION = 2
#: distinct groups generated per size; the batch tiles them (each row gets its own tag, see generate_pool)
POOL_GROUPS = 64
#: characters of reasoning generated per pooled response; the token budget is reached by repeating it
POOL_MAX_CHARS = 8000


def build_tokenizer(vocab_size: int, seed: int = 0, cache_dir: Path | None = None):
    """A byte-level BPE trained here on generated solutions, as a transformers fast tokenizer,
    and its characters per token; kept under ``cache_dir`` (keyed by ``GEN_VERSION``, vocabulary, seed)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    path = None if cache_dir is None else cache_dir / f"tokenizer_v{GEN_VERSION}_{vocab_size}_s{seed}.json"
    if path is not None and path.exists():
        tok = Tokenizer.from_str(path.read_text())
    else:
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        texts = math_text.corpus(max(60, min(600, vocab_size // 7)), seed=seed, min_chars=3000)
        tok.train_from_iterator(texts, trainers.BpeTrainer(
            vocab_size=vocab_size, special_tokens=["<|pad|>", "<|endoftext|>"],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(tok.to_str())
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<|pad|>", eos_token="<|endoftext|>")
    texts = math_text.corpus(50, seed=seed + 1, min_chars=3000)
    chars = sum(len(t) for t in texts)
    tokens = sum(len(x) for x in fast(texts, add_special_tokens=False)["input_ids"])
    return fast, chars / tokens


@dataclass
class Batch:
    meta: Any
    size: Size
    n_correct: int
    n_mixed_groups: int
    prompt_lens: Any  # per key of ``meta``, in its order (the faked worker group writes prompt + response)
    samples: list[tuple[str, str, bool]] = field(default_factory=list)  # (text, ground truth, correct): reward side
    write_s: float = 0.0
    generated: bool = True


def _group_plan(rng: random.Random, group: int) -> tuple[math_text.Problem, list[bool], list[str]]:
    prob = math_text.make_problem(rng)
    p = rng.betavariate(0.7, 0.7)  # per-prompt success rate: many all-right / all-wrong groups, many mixed
    methods = sorted(prob.methods)
    rng.shuffle(methods)
    weights = [0.65, 0.25, 0.10][: len(methods)]
    correct = [rng.random() < p for _ in range(group)]
    chosen = rng.choices(methods, weights=weights, k=group)
    return prob, correct, chosen


def _tag_ids(tok) -> tuple[int, list[int], int]:
    """Where the row tag goes (after ``<think>``), the token ids of the digits, and the tag width."""
    think = tok("<think>", add_special_tokens=False)["input_ids"]
    digits = tok.convert_tokens_to_ids(list("0123456789"))
    return len(think), digits, TAG_DIGITS + 3  # newline, hash, digits, newline


TAG_DIGITS = 7


def _tags(tok, rows: int):
    """Per row ``"\\n#NNNNNNN"``-style tags (newline, hash, the row index in digits, newline) as token ids."""
    import numpy as np

    _, digits, width = _tag_ids(tok)
    nl, hash_ = tok.convert_tokens_to_ids(["\u010a", "#"])  # byte-level BPE: "Ċ" is "\n"
    idx = np.arange(rows)
    out = np.empty((rows, width), dtype=np.int64)
    out[:, 0], out[:, 1] = nl, hash_
    for k in range(TAG_DIGITS):
        out[:, 2 + k] = np.asarray(digits)[(idx // 10 ** (TAG_DIGITS - 1 - k)) % 10]
    out[:, -1] = nl
    return out


def generate_pool(tok, chars_per_token: float, size: Size, seed: int, chunk: int = 256) -> dict:
    """``min(POOL_GROUPS, groups)`` distinct groups of responses, token ids cut (or tiled) to the
    response length less the row tag, the answer kept at the end; with each group's problem, answer,
    correctness, and the ``cue_sig`` the reward workers add with ``cue_set=math_v1`` (extracted from
    the correct rows only; wrong rows get ``"<version>:!wrong"``, as :func:`response_signature` does)."""
    import numpy as np

    from verl_focal.partition.cues import response_signature

    rng = random.Random(seed)
    n_pool = min(POOL_GROUPS, size.rows // size.group)
    width = _tag_ids(tok)[2]
    need_row = size.length - width
    min_chars = min(int(need_row * chars_per_token * 1.15), POOL_MAX_CHARS)
    plan, problems, answers = [], [], []
    for g in range(n_pool):
        prob, correct, methods = _group_plan(rng, size.group)
        problems.append(prob.text)
        answers.append(prob.answer)
        plan += [(g, prob, c, m) for c, m in zip(correct, methods)]
    ids = np.zeros((len(plan), need_row), dtype=np.uint16 if len(tok) < 2**16 else np.int32)
    for start in range(0, len(plan), chunk):
        part = plan[start:start + chunk]
        bodies, tails = zip(*(math_text.make_response(rng, p, c, min_chars, method=m) for _, p, c, m in part))
        enc = tok(list(bodies) + list(tails), add_special_tokens=False)["input_ids"]
        for k, (b, t) in enumerate(zip(enc[: len(part)], enc[len(part):])):
            need = max(need_row - len(t), 0)
            reps = -(-need // len(b))  # tile a short reasoning part up to the budget
            ids[start + k] = ((b * reps)[:need] + t)[-need_row:]  # a tiny budget keeps the answer's end
    acc = np.array([float(r[2]) for r in plan])
    texts = tok.batch_decode(ids[acc > 0.5].tolist(), skip_special_tokens=True) if (acc > 0.5).any() else []
    it = iter(texts)
    sigs = [response_signature(next(it) if c > 0.5 else "", "math_v1", correct=c > 0.5) for c in acc]
    return {"ids": ids, "acc": acc, "sigs": np.array(sigs, dtype=object),
            "problems": np.array(problems, dtype=object), "answers": np.array(answers, dtype=object)}


def cached_pool(tok, chars_per_token: float, size: Size, seed: int, cache_dir: Path | None) -> tuple[dict, bool]:
    """:func:`generate_pool`, kept under ``cache_dir`` (keyed by ``GEN_VERSION``, size, seed, tokenizer)."""
    import hashlib

    import numpy as np

    if cache_dir is None:
        return generate_pool(tok, chars_per_token, size, seed), True
    digest = hashlib.sha1(tok.backend_tokenizer.to_str().encode()).hexdigest()[:10]
    path = cache_dir / f"pool_v{GEN_VERSION}_{size.label}_g{size.group}_s{seed}_{digest}.npz"
    if path.exists():
        with np.load(path, allow_pickle=True) as z:
            return {k: z[k] for k in z.files}, False
    data = generate_pool(tok, chars_per_token, size, seed)
    cache_dir.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    np.savez(tmp, **data)
    tmp.replace(path)
    return data, True


def tile_rows(tok, pool: dict, size: Size):
    """The batch's token ids (rows x length) from the pool: group ``g`` is pool group ``g mod n``, and
    every row carries its own tag (``\\n#`` and its index in digits) right after ``<think>``, so no two
    rows have the same text.  The tag holds no cue, so the pooled ``cue_sig`` is the row's."""
    import numpy as np

    pos, _, width = _tag_ids(tok)
    n_pool = len(pool["ids"]) // size.group
    g = np.arange(size.rows) // size.group
    src = (g % n_pool) * size.group + np.arange(size.rows) % size.group
    ids = np.empty((size.rows, size.length), dtype=pool["ids"].dtype)
    ids[:, :pos] = pool["ids"][src, :pos]
    ids[:, pos:pos + width] = _tags(tok, size.rows)
    ids[:, pos + width:] = pool["ids"][src, pos:]
    return ids, g, src


def write_rows(tq, tok, chars_per_token: float, size: Size, partition: str, seed: int,
               cache_dir: Path | None = None, chunk: int = 256, n_samples: int = 32,
               rollout_log_probs: bool = False) -> Batch:
    """Write ``size.rows`` rollouts into TransferQueue as verl's agent loop does; return the batch meta.

    Each row is an ``AgentLoopOutput`` turned into a dict by its own ``as_dict`` (prompt and
    response ids, response mask, ``rm_scores``, the reward extras); ``rollout_log_probs`` (the
    rollout's log-probs, what verl's bypass mode uses) only when asked.  Nothing of the
    old-log-prob pass is written: the faked worker group writes that in every step."""
    import numpy as np
    import torch
    from transfer_queue.metadata import KVBatchMeta
    from verl.experimental.agent_loop.agent_loop import AgentLoopMetrics, AgentLoopOutput
    from verl.utils.tensordict_utils import list_of_dict_to_tensordict

    t_start = time.perf_counter()
    pool, generated = cached_pool(tok, chars_per_token, size, seed, cache_dir)
    ids, group, src = tile_rows(tok, pool, size)
    acc, sigs = pool["acc"][src], pool["sigs"][src]
    n_pool = len(pool["ids"]) // size.group
    problems = [str(pool["problems"][g % n_pool]) for g in range(size.rows // size.group)]
    answers = [str(pool["answers"][g % n_pool]) for g in range(size.rows // size.group)]
    L = size.length
    suffix = " Let's think step by step and output the final answer within \\boxed{}."
    prompt_ids = tok(problems, add_special_tokens=False)["input_ids"]
    sessions = np.arange(size.rows) % size.group
    keys: list[str] = []
    for start in range(0, size.rows, chunk):
        fields, chunk_keys = [], []
        rows = ids[start:start + chunk].astype(np.int64)
        for k, i in enumerate(range(start, start + len(rows))):
            g = int(group[i])
            uid = f"p{seed}x{g:05d}"
            # as_dict on a row with a short response: the field set and dtypes verl writes; then the
            # long tensors are set directly (as_dict's torch.tensor(list) of 8,192 ints is the slow part)
            out = AgentLoopOutput(prompt_ids=prompt_ids[g], response_ids=[0], response_mask=[1],
                                  reward_score=float(acc[i]), num_turns=2, metrics=AgentLoopMetrics(),
                                  response_logprobs=[0.0] if rollout_log_probs else None,
                                  extra_fields={"reward_extra_info": {"acc": float(acc[i]), "score": float(acc[i]),
                                                                      "cue_sig": str(sigs[i])}})
            row = out.as_dict()
            row["responses"] = torch.from_numpy(rows[k])
            row["response_mask"] = torch.ones(L, dtype=torch.int64)
            rm = torch.zeros(L, dtype=torch.float32)
            rm[-1] = float(acc[i])
            row["rm_scores"] = rm
            if rollout_log_probs:
                row["rollout_log_probs"] = torch.empty(L, dtype=torch.float32).normal_(-1.0, 0.5)
            row.update({"uid": uid, "raw_prompt": [{"role": "user", "content": problems[g] + suffix}]})
            fields.append(row)
            chunk_keys.append(f"{uid}_{int(sessions[i])}_0")
        tq.kv_batch_put(keys=chunk_keys, partition_id=partition, fields=list_of_dict_to_tensordict(fields))
        keys += chunk_keys
        del fields, rows
    # reward-side samples: the first rows in order (whole groups, as a reward worker sees them)
    take = range(min(n_samples, size.rows))
    samples = [(t, answers[int(group[i])], bool(acc[i] > 0.5))
               for i, t in zip(take, tok.batch_decode(ids[: len(take)].tolist(), skip_special_tokens=True))]
    n_groups = size.rows // size.group
    n_pos = np.bincount(group, weights=acc > 0.5, minlength=n_groups)
    n_mixed = int(((n_pos >= 2) & (n_pos < size.group)).sum())
    order = np.random.default_rng(seed).permutation(len(keys))  # batches need not be grouped
    keys = [keys[i] for i in order]
    prompt_lens = np.array([len(prompt_ids[int(group[i])]) for i in order])
    meta = KVBatchMeta(keys=keys, tags=[{} for _ in keys], partition_id=partition)
    n_correct = int((acc > 0.5).sum())
    del pool, ids
    release_memory()
    return Batch(meta, size, n_correct, n_mixed, prompt_lens, samples, time.perf_counter() - t_start, generated)


class ActorWorkerGroup:
    """The GPU boundary: stands in for verl's actor worker group in ``_compute_old_log_prob``.

    ``compute_log_prob`` writes what the real workers write for the batch's keys: ``log_probs`` and
    ``entropy`` over prompt + response (nested, one value per token, drawn here once per size), then
    waits ``overlap_s`` (the rest of the pass's GPU time).  Its wall and main-thread CPU time are
    kept so that the step is charged only the driver's part of the pass."""

    def __init__(self, tq, batch: Batch, overlap_s: float, seed: int = 0) -> None:
        import torch

        self.tq, self.overlap_s = tq, overlap_s
        lens = torch.as_tensor(batch.prompt_lens + batch.size.length, dtype=torch.int64)
        offsets = torch.zeros(len(lens) + 1, dtype=torch.int64)
        offsets[1:] = lens.cumsum(0)
        gen = torch.Generator().manual_seed(seed)
        values = torch.empty(int(offsets[-1]), dtype=torch.float32).normal_(-1.0, 0.5, generator=gen).clamp_(max=0.0)
        self.log_probs = torch.nested.nested_tensor_from_jagged(values, offsets)
        self.entropy = torch.nested.nested_tensor_from_jagged(values.neg(), offsets)
        self.keys = list(batch.meta.keys)
        self.wall = self.cpu = 0.0
        self.stand_in_end = 0.0  # when the last stand-in ended (the driver's own part of the pass starts)

    def compute_ref_log_prob(self, batch):
        """The reference worker group writes the same fields (``--ref-pass``)."""
        return self.compute_log_prob(batch, stand_in=False)

    def compute_log_prob(self, batch, stand_in: bool = True):
        from tensordict import TensorDict

        t0, c0 = time.perf_counter(), time.thread_time()
        if list(batch.keys) != self.keys:
            raise RuntimeError("the faked worker group was built for another batch")
        self.tq.kv_batch_put(keys=batch.keys, partition_id=batch.partition_id,
                             fields=TensorDict({"log_probs": self.log_probs, "entropy": self.entropy},
                                               batch_size=len(batch.keys)))
        self.cpu += time.thread_time() - c0
        if stand_in:
            time.sleep(self.overlap_s)
            self.stand_in_end = time.perf_counter()
        self.wall += time.perf_counter() - t0
        return batch


# --------------------------------------------------------------------------- arms

def arm_overrides(arm: str, judge_url: str, size: Size) -> list[str]:
    """Config overrides of ``arm``.  (The judge's model name is set anew for every step: the judge
    cache is keyed by it, so every timed step sends its requests.)
    The rollout returns no log-probs (``calculate_log_probs=false``): verl's old-log-prob pass then
    reads only ``log_probs``, ``entropy`` and ``response_mask``; in bypass mode the rollout's
    log-probs are the old ones, so there it returns them."""
    common = [f"actor_rollout_ref.rollout.n={size.group}",
              f"actor_rollout_ref.rollout.calculate_log_probs={str(arm.endswith('_bypass')).lower()}"]
    return (
        common
        + {
            "grpo": ["algorithm.adv_estimator=grpo"],
            "f_grpo": ["algorithm.adv_estimator=f_grpo"],
            "cue_sig": ["algorithm.adv_estimator=cue_grpo"],
            "cue_text": ["algorithm.adv_estimator=cue_grpo", "algorithm.cue.source=text"],
            "f_cue": ["algorithm.adv_estimator=f_cue_grpo"],
            "cue_judge": [
                "algorithm.adv_estimator=cue_grpo",
                "algorithm.cue.partitioner=judge",
                f"algorithm.cue.judge.base_url={judge_url}",
                f"algorithm.cue.judge.model=bench-{size.label}",
                "algorithm.cue.judge.max_concurrency=128",
                "algorithm.cue.judge.timeout_s=60",
                "algorithm.cue.judge.max_retries=0",
            ],
            "passk": ["algorithm.adv_estimator=passk_grpo", f"algorithm.passk.k={min(4, size.group)}"],
            "unlikely": ["algorithm.adv_estimator=unlikely_grpo", "algorithm.unlikely.beta=0.25"],
            "grpo_bypass": ["algorithm.adv_estimator=grpo", "algorithm.rollout_correction.bypass_mode=true"],
            "unlikely_bypass": ["algorithm.adv_estimator=unlikely_grpo", "algorithm.unlikely.beta=0.25",
                                "algorithm.rollout_correction.bypass_mode=true"],
            "maxrl": ["algorithm.adv_estimator=maxrl"],
            "ds_grpo": ["algorithm.adv_estimator=ds_grpo"],
            "ds_grpo_bypass": ["algorithm.adv_estimator=ds_grpo", "algorithm.rollout_correction.bypass_mode=true"],
        }[arm]
    )


def arm_config(base, overrides: list[str]):
    """``base`` (a composed trainer config) with ``KEY=VALUE`` overrides set as Hydra would set them
    (values parsed as YAML; struct mode refuses an unknown key): one Hydra composition serves every arm."""
    import yaml
    from omegaconf import OmegaConf

    cfg = copy.deepcopy(base)
    for item in overrides:
        key, _, value = item.partition("=")
        OmegaConf.update(cfg, key, yaml.safe_load(value), merge=False)
    return cfg


def make_trainer(arm: str, config, tokenizer, worker: ActorWorkerGroup):
    """verl's stock ``sync`` trainer for the baselines, our ``focal_sync`` for the rest (tests/verl_harness.py)."""
    return v1_trainer(config, tokenizer, worker, stock=arm in STOCK_ARMS)


def has_prefetch(config) -> bool:
    """Whether the hook starts background work at the old-log-prob pass for this config."""
    from verl_focal.integration.registration import get_spec

    spec = get_spec(config.algorithm.adv_estimator)
    return spec is not None and spec.prefetch is not None


SPLIT_KEYS = {
    "fetch": "verl_focal/fetch_s",
    "decode": "verl_focal/decode_s",
    "prepare": "verl_focal/prepare_s",
    "partition": "cue/partition_time_s",
    "extract": "cue/extract_time_s",
    "cluster": "cue/cluster_time_s",
    "judge_wait": "judge/wait_s",
    "prefetch_wait": "verl_focal/prefetch_wait_s",
}
METRICS_KEPT = ("judge/inflight_joins", "judge/cache_hit_rate",
                "verl_focal/decoded_rows", "verl_focal/prefetched", "cue/groups_from_signatures",
                "cue/groups_from_text", "cue/groups_prefetched", "judge/fallback_rate", "judge/requests",
                "verl_focal/advantage_s", "passk/groups", "unlikely/correct_rows",
                "unlikely/nonfinite_logprob_rows", "verl_focal/old_log_prob_rows_frac", "actor/entropy",
                "maxrl/groups", "ds_grpo/nonfinite_logprob_rows")


def run_arm(arm: str, trainer, batch: Batch, timers: Timers, worker: ActorWorkerGroup, overlap_s: float,
            ref_pass: bool = False) -> dict:
    """One step as the trainer runs it: verl's ``_compute_old_log_prob`` (ours wraps it: the hook's
    prefetch starts first, in a background thread for the cue estimators; the faked worker group
    writes the log-probs and stands in ``overlap_s`` more), with ``ref_pass`` verl's
    ``_compute_ref_log_prob`` (the same worker group as the reference's), then ``_compute_advantage``.

    The step is charged the driver's part only: wall time less the worker group's, CPU time (this
    process, all threads) less the worker group's main-thread CPU.  Arms with nothing in the
    background get no stand-in time (it would change nothing).

    ``prefetch_overhang`` in the split: how long the hook's background prefetch ran on after the
    worker group's stand-in ended, i.e. into the driver's own (timed) part of verl's pass."""
    release_memory()
    timers.t.clear()
    timers.end.clear()
    metrics: dict = {}
    worker.overlap_s = overlap_s if arm not in STOCK_ARMS and has_prefetch(trainer.config) else 0.0
    w0, wc0 = worker.wall, worker.cpu
    worker.stand_in_end = 0.0
    with PeakRSS() as mem:
        c0, t0 = time.process_time(), time.perf_counter()
        trainer._compute_old_log_prob(batch.meta, metrics)
        t1 = time.perf_counter()
        w1 = worker.wall
        if ref_pass:
            trainer._compute_ref_log_prob(batch.meta, metrics)
        tr = time.perf_counter()
        trainer._compute_advantage(batch.meta, metrics)
        t2 = time.perf_counter()
        cpu = time.process_time() - c0
    olp = t1 - t0 - (w1 - w0)
    ref = tr - t1 - (worker.wall - w1)
    split = {k: float(metrics[v]) for k, v in SPLIT_KEYS.items() if v in metrics}
    split["old_log_prob"] = olp  # the driver's part of verl's pass (with the hook's tap, if any)
    split["ref_pass"] = ref  # the driver's part of verl's reference pass (--ref-pass)
    split["advantage"] = t2 - tr
    split["estimator"] = timers.t.get("estimator", 0.0)
    split["credit"] = timers.t.get("credit", 0.0)
    split["lp_reduce"] = timers.t.get("lp_reduce", 0.0)  # the old log-probs' per-row reduction (inside verl's step)
    split["join"] = split.get("prefetch_wait", 0.0) + split.get("judge_wait", 0.0)
    # the hook's own time on the step's path: each pass less verl's own method inside it, plus our code that
    # verl's own runs (the estimator; the old-log-prob reduction in the hook around compute_advantage)
    split["ours"] = 0.0 if arm in STOCK_ARMS else (
        (t1 - t0) - timers.t.get("verl_olp", 0.0)  # verl's pass with its worker group inside
        + split["advantage"] - timers.t.get("verl_adv", 0.0) + split["estimator"] + split["lp_reduce"])
    if worker.stand_in_end and "prefetch" in timers.end:
        split["prefetch_overhang"] = max(0.0, timers.end["prefetch"] - worker.stand_in_end)
    extra = {k: float(v) for k, v in metrics.items() if k in METRICS_KEPT}
    return {"arm": arm, "wall_s": olp + ref + t2 - tr, "cpu_s": cpu - (worker.cpu - wc0),
            "peak_extra_rss_mib": mem.extra / 2**20, "split": split, "metrics": extra}


def summarise(runs: list[dict]) -> dict:
    """Median over repeats of every number."""
    def med(xs):
        return statistics.median(xs) if xs else 0.0

    keys = sorted({k for r in runs for k in r["split"]})
    return {
        "arm": runs[0]["arm"],
        "repeats": len(runs),
        "wall_s": med([r["wall_s"] for r in runs]),
        "cpu_s": med([r["cpu_s"] for r in runs]),
        "wall_s_all": [r["wall_s"] for r in runs],
        "cpu_s_all": [r["cpu_s"] for r in runs],
        "peak_extra_rss_mib": max(r["peak_extra_rss_mib"] for r in runs),
        "split": {k: med([r["split"].get(k, 0.0) for r in runs]) for k in keys},
        "metrics": runs[-1]["metrics"],
    }


#: the issue's bar: an arm's step is at most verl's stock step plus this many seconds
MARGIN_S = 0.1


def compare(arm: dict, base: dict) -> dict:
    """The arm's wall time against its baseline's, robust to single noisy steps.

    ``diff_s``: median of the arm's steps less the median of the baseline's; ``diff_lo_s`` /
    ``diff_hi_s``: the widest differences any pair of their steps shows (arm's fastest less the
    baseline's slowest, and the reverse); when both ran the same number of interleaved repeats, also
    the paired differences per repeat (``paired_diff_s``).  ``within_margin``: ``yes`` when even the
    widest difference is at most :data:`MARGIN_S`, ``no`` when even the smallest is above it, else ``?``
    (the steps' own noise is larger than the margin: rerun with more ``--repeats``)."""
    a, b = arm["wall_s_all"], base["wall_s_all"]
    lo, hi = min(a) - max(b), max(a) - min(b)
    out = {"diff_s": statistics.median(a) - statistics.median(b), "diff_lo_s": lo, "diff_hi_s": hi,
           "within_margin": "yes" if hi <= MARGIN_S + 1e-9 else "no" if lo > MARGIN_S + 1e-9 else "?"}
    if len(a) == len(b) and len(a) > 1:
        out["paired_diff_s"] = [x - y for x, y in zip(a, b)]
    return out


def schedule(arms: list[str], rep: int, baseline_steps: int) -> list[str]:
    """The arms' order in repeat ``rep`` (1-based): the baselines first, then the other arms rotated by
    one place per repeat (no arm always runs right after the same one); with ``baseline_steps`` 3 the
    baselines run again in the middle and at the end (sizes with one step per arm: their spread is
    the noise the comparison must see past)."""
    stock = [a for a in arms if a in STOCK_ARMS]
    others = [a for a in arms if a not in STOCK_ARMS]
    k = (rep - 1) % len(others) if others else 0
    others = others[k:] + others[:k]
    if baseline_steps >= 3 and stock and others:
        half = len(others) // 2
        return stock + others[:half] + stock + others[half:] + stock
    if baseline_steps == 2 and stock:
        return stock + others + stock
    return stock + others


# --------------------------------------------------------------------------- reward side
WARM_RESPONSE = "<think>warm up</think> The answer is $\\boxed{\\frac{1}{2}}$."

def reward_side(samples: list[tuple[str, str, bool]]) -> dict:
    """Per response, in batch order and once each (as a reward worker meets them): our
    ``compute_score`` without ``cue_set``, then with ``cue_set="math_v1"`` (which adds the
    ``cue_sig``: extracted from correct responses only; the two in turn in either order), then verl's
    ``math_verify`` scorer."""
    from verl.utils.reward_score import math_verify as verl_math_verify

    from verl_focal.reward import compute_score

    compute_score("verl_focal/math", WARM_RESPONSE, "\\frac{1}{2}", cue_set="math_v1")  # imports, catalogue
    verl_math_verify.compute_score(WARM_RESPONSE, "\\frac{1}{2}")
    plain, cue, verl_mv, correct = [], [], [], []
    for k, (text, gt, ok) in enumerate(samples):
        took = {}
        # every other response the other way round: a second call on the same text may find warm caches
        for cue_set in ((None, "math_v1") if k % 2 == 0 else ("math_v1", None)):
            t0 = time.perf_counter()
            r = compute_score("verl_focal/math", text, gt, cue_set=cue_set)
            took[cue_set] = time.perf_counter() - t0
        t0 = time.perf_counter()
        verl_math_verify.compute_score(text, gt)
        verl_mv.append(time.perf_counter() - t0)
        plain.append(took[None])
        cue.append(took["math_v1"])
        correct.append(bool(r["acc"] > 0))
        if correct[-1] != ok:
            raise RuntimeError(f"the scorer graded a generated response {'wrong' if ok else 'right'}: "
                               f"ground truth {gt!r}, ends {text[-120:]!r}")

    def ms(xs, sel=None):
        xs = [x for x, c in zip(xs, correct) if sel is None or c == sel]
        return {"median": 1e3 * statistics.median(xs), "mean": 1e3 * statistics.fmean(xs)} if xs else None

    return {"responses": len(samples), "correct": sum(correct),
            "chars_median": statistics.median(len(t) for t, _, _ in samples),
            "ours_ms": ms(plain), "ours_cue_set_ms": ms(cue), "verl_math_verify_ms": ms(verl_mv),
            "ours_ms_correct": ms(plain, True), "ours_cue_set_ms_correct": ms(cue, True),
            "ours_ms_wrong": ms(plain, False), "ours_cue_set_ms_wrong": ms(cue, False),
            "cue_set_extra_of_totals": sum(cue) / sum(plain) - 1 if sum(plain) else float("nan")}


def fmt_reward(rs: dict) -> str:
    def one(d):
        return "n/a" if d is None else f"{d['mean']:.2f} ms (median {d['median']:.2f})"

    return (f"reward side, per response ({rs['responses']} responses, {rs['correct']} correct, median "
            f"{rs['chars_median']:.0f} chars):\n"
            f"  ours {one(rs['ours_ms'])}; with cue_set {one(rs['ours_cue_set_ms'])} "
            f"(+{100 * rs['cue_set_extra_of_totals']:.1f}% of the sums)\n"
            f"  correct rows: ours {one(rs['ours_ms_correct'])}, with cue_set {one(rs['ours_cue_set_ms_correct'])}\n"
            f"  wrong rows:   ours {one(rs['ours_ms_wrong'])}, with cue_set {one(rs['ours_cue_set_ms_wrong'])}\n"
            f"  verl's math_verify scorer {one(rs['verl_math_verify_ms'])}")


# --------------------------------------------------------------------------- judge process
def start_judge(latency: float) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, str(HERE / "loopback_judge.py"), "--latency", str(latency)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline().strip()
    if not line.startswith("PORT "):
        proc.kill()
        raise RuntimeError(f"loopback judge did not start (got {line!r})")
    return proc, f"http://127.0.0.1:{line.split()[1]}/v1"


# --------------------------------------------------------------------------- report
def baseline(arm: str, results: dict[str, dict]) -> dict | None:
    """The arm's baseline: verl's stock ``grpo`` step (in bypass mode for a ``*_bypass`` arm)."""
    return results.get("grpo_bypass" if arm.endswith("_bypass") else "grpo")


def fmt_table(size: Size, results: dict[str, dict]) -> str:
    cols = ["old_log_prob", "ref_pass", "advantage", "fetch", "decode", "partition", "prepare", "credit", "estimator",
            "lp_reduce"]
    names = ["olp pass", "ref pass", "adv step", "fetch", "decode", "partition", "prepare", "credit", "estimator",
             "lp reduce"]
    head = (f"{'arm':<16} {'wall s':>8} {'x base':>7} {'+s':>7} {'+s range':>15} {'<=+0.1':>6} {'cpu s':>8} "
            f"{'x base':>7} {'+cpu s':>7} " + " ".join(f"{c:>9}" for c in names)
            + f" {'join s':>7} {'ours s':>7} {'overhang':>8} {'+RSS MiB':>9} {'vs base':>8}")
    lines = [f"== {size.label} ({size.rows // size.group} prompts x {size.group}) ==", head]
    for arm, r in results.items():
        sp = r["split"]
        w, c = r["wall_s"], r["cpu_s"]
        base = baseline(arm, results)
        bw = base["wall_s"] if base else float("nan")
        bc = base["cpu_s"] if base else float("nan")
        cmp = r.get("vs_baseline")
        rng = f"[{cmp['diff_lo_s']:+.2f},{cmp['diff_hi_s']:+.2f}]" if cmp else "-"
        lines.append(
            f"{arm:<16} {w:8.3f} {w / bw:7.3f} {(cmp['diff_s'] if cmp else 0.0):+7.2f} {rng:>15} "
            f"{(cmp['within_margin'] if cmp else '-'):>6} {c:8.3f} {c / bc:7.3f} {c - bc:+7.2f} "
            + " ".join(f"{sp.get(k, 0.0):9.3f}" for k in cols)
            + f" {sp.get('join', 0.0):7.3f} {sp.get('ours', 0.0):7.3f} {sp.get('prefetch_overhang', 0.0):8.3f}"
            + f" {r['peak_extra_rss_mib']:9.0f}"
            + f" {r['peak_extra_rss_mib'] - (base['peak_extra_rss_mib'] if base else float('nan')):+8.0f}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default=None, help=f"ROWSxTOKENS[/GROUP],... (default {DEFAULT_SIZES})")
    ap.add_argument("--quick", action="store_true", help=f"tiny smoke run: --sizes {QUICK_SIZES}, one repeat")
    ap.add_argument("--arms", default=",".join(ARMS), help=f"comma-separated subset of {','.join(ARMS)}")
    ap.add_argument("--repeats", type=int, default=None,
                    help=f"steps per arm (median reported; default 3 up to {BIG_ROWS} rows, 1 above, where the "
                         "baselines are timed --baseline-steps times; --quick 1)")
    ap.add_argument("--judge-latency", type=float, default=0.5, help="loopback judge seconds per request")
    ap.add_argument("--overlap-s", type=float, default=None,
                    help="extra stand-in time of the old-log-prob pass, not charged to the step "
                         "(default 4, --quick 1)")
    ap.add_argument("--baseline-steps", type=int, default=3,
                    help="at sizes with one step per arm, how often each baseline is timed (first, middle, "
                         "last: 3), so that the comparison sees the steps' own noise")
    ap.add_argument("--ref-pass", action="store_true",
                    help="every step also runs verl's reference log-prob pass (a KL loss or reward's), "
                         "between the old-log-prob pass and the advantage")
    ap.add_argument("--vocab", type=int, default=4096, help="BPE vocabulary size")
    ap.add_argument("--reward-samples", type=int, default=32, help="responses timed on the reward side (0: skip)")
    ap.add_argument("--json", default="outputs/advantage_step.json", help="where to write the results")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cache-dir", default="outputs/cache",
                    help="the tokenizer and the response pools are kept here for the next run")
    ap.add_argument("--no-cache", action="store_true", help="generate afresh and keep nothing")
    args = ap.parse_args(argv)
    try:
        sizes = parse_sizes(args.sizes or (QUICK_SIZES if args.quick else DEFAULT_SIZES))
        arms = [a.strip() for a in args.arms.split(",") if a.strip()]
        bad = [a for a in arms if a not in ARMS]
        if bad:
            import difflib

            hint = difflib.get_close_matches(bad[0], ARMS, n=1)
            raise UserError(f"--arms: unknown arm {bad[0]!r}" + (f" (did you mean {hint[0]!r}?)" if hint else "")
                            + f"; choose from {','.join(ARMS)}")
        arms = [a for a in STOCK_ARMS if a in arms] + [a for a in arms if a not in STOCK_ARMS]
        if args.repeats is not None and args.repeats < 1:
            raise UserError(f"--repeats={args.repeats} must be >= 1")
        overlap = args.overlap_s if args.overlap_s is not None else (1.0 if args.quick else 4.0)
        if overlap < 0:
            raise UserError(f"--overlap-s={overlap} must be >= 0")
        if args.baseline_steps < 1 or args.baseline_steps > 3:
            raise UserError(f"--baseline-steps={args.baseline_steps} must be 1, 2 or 3")
    except UserError as e:
        print(f"advantage_step.py: {e}", file=sys.stderr)
        return 2

    def repeats_for(size: Size) -> int:
        if args.repeats is not None:
            return args.repeats
        return 1 if args.quick or size.rows > BIG_ROWS else 3

    t_all = time.perf_counter()
    import transfer_queue as tq
    import verl  # noqa: F401

    if args.reward_samples:  # verl's math_verify scorer starts a process pool: let it start during the setup
        from verl.utils.reward_score import math_verify as verl_math_verify

        warm = threading.Thread(target=verl_math_verify.compute_score, args=(WARM_RESPONSE, "\\frac{1}{2}"),
                                daemon=True)
        warm.start()
    import verl_focal.integration.hooks.trainer  # noqa: F401  (the hooked trainer modes; loaded before any timing)
    import verl_focal.partition.judge  # noqa: F401  (registers the judge partitioner)
    from verl_focal.integration.startup.compose import compose_config

    cache_dir = None if args.no_cache else Path(args.cache_dir)
    tok, cpt = build_tokenizer(args.vocab, seed=args.seed, cache_dir=cache_dir)
    common_cfg = compose_config()
    tq_cfg = compose_config(["transfer_queue.backend.SimpleStorage.num_data_storage_units=1"])
    started_ray = start_transfer_queue(tq_cfg)
    # every kv_batch_get logs that it caps its threads at the machine's cores: once is enough
    logging.getLogger("transfer_queue.utils.common").setLevel(logging.ERROR)
    judge_proc, judge_url = start_judge(args.judge_latency) if "cue_judge" in arms else (None, "")
    timers = Timers()
    gc.freeze()  # what is loaded by now lives to the end: the collections between steps skip it
    setup_s = time.perf_counter() - t_all
    print(f"[setup] tokenizer, Ray, TransferQueue{', judge' if judge_proc else ''}: {setup_s:.1f} s", flush=True)
    report: dict[str, Any] = {
        "command": " ".join([Path(sys.argv[0]).name] + (argv if argv is not None else sys.argv[1:])),
        "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "machine": {"cpus": os.cpu_count(), "load_avg_start": os.getloadavg()},
        "tokenizer": {
            "kind": "byte-level BPE trained on bench/math_text.py",
            "vocab": args.vocab,
            "chars_per_token": cpt,
        },
        "generator_version": GEN_VERSION,
        "step": "driver time of verl's _compute_old_log_prob (faked actor worker group excluded) "
                "+ _compute_advantage",
        "rss": "peak RSS of this process (sampling thread, every 2 ms, /proc/self/statm) "
               "minus RSS just before the step",
        "cpu": "process user+system time of this (driver) process, all threads, less the faked worker "
               "group's main-thread CPU",
        "judge": {"latency_s": args.judge_latency, "overlap_s": overlap},
        "margin_s": MARGIN_S,
        "ref_pass": args.ref_pass,
        "setup_s": setup_s,
        "sizes": {},
    }
    try:
        install_timers(timers)
        # one untimed step per arm on a small batch first (imports, first-call caches)
        wsize = Size(min(8 * sizes[0].group, sizes[0].rows), min(256, sizes[0].length), sizes[0].group)
        wbatch = write_rows(tq, tok, cpt, wsize, partition="warmup", seed=args.seed, cache_dir=None,
                            rollout_log_probs=any(a.endswith("_bypass") for a in arms))
        wworker = ActorWorkerGroup(tq, wbatch, 0.0, seed=args.seed)
        for a in arms:
            run_arm(a, make_trainer(a, arm_config(common_cfg, arm_overrides(a, judge_url, wsize)), tok, wworker),
                    wbatch, timers, wworker, 0.0, args.ref_pass)
        tq.kv_clear(keys=wbatch.meta.keys, partition_id="warmup")
        del wbatch, wworker
        print(f"[warm-up] one step per arm at {wsize.label}: done at {time.perf_counter() - t_all:.1f} s", flush=True)
        for size in sizes:
            batch = write_rows(tq, tok, cpt, size, partition="train", seed=args.seed + size.rows,
                               cache_dir=cache_dir, n_samples=args.reward_samples or 1,
                               rollout_log_probs=any(a.endswith("_bypass") for a in arms))
            worker = ActorWorkerGroup(tq, batch, overlap, seed=args.seed)
            print(
                f"[{size.label}] {'generated and ' if batch.generated else ''}"
                f"wrote {size.rows} rows in {batch.write_s:.1f} s "
                f"({batch.n_correct} correct, {batch.n_mixed_groups} groups with >= 2 correct and >= 1 wrong)",
                flush=True,
            )

            base_cfg = {a: arm_config(common_cfg, arm_overrides(a, judge_url, size)) for a in arms}

            def trainer(a: str, run: int, size=size, worker=worker, base_cfg=base_cfg):  # this iteration only
                cfg = copy.deepcopy(base_cfg[a])
                if a == "cue_judge":  # the judge cache is keyed by the model name: a new one per step
                    cfg.algorithm.cue.judge.model = f"bench-{size.label}-{run}"
                return make_trainer(a, cfg, tok, worker)

            runs: dict[str, list[dict]] = {a: [] for a in arms}
            t_steps = time.perf_counter()
            # one untimed step at this size first: the first step to write a size's old_log_probs, entropy
            # and advantages into TransferQueue also grows the storage (a cost the later steps do not pay)
            first = run_arm(arms[0], trainer(arms[0], 0), batch, timers, worker, overlap, args.ref_pass)
            print(f"  (untimed first step, {arms[0]}: wall {first['wall_s']:.3f} s)", flush=True)
            n_rep = repeats_for(size)
            for rep in range(1, n_rep + 1):
                for a in schedule(arms, rep, args.baseline_steps if n_rep == 1 else 1):
                    runs[a].append(run_arm(a, trainer(a, rep), batch, timers, worker, overlap, args.ref_pass))
                    r = runs[a][-1]
                    print(
                        f"  {a:<16} wall {r['wall_s']:7.3f} s  cpu {r['cpu_s']:7.3f} s  "
                        f"+rss {r['peak_extra_rss_mib']:6.0f} MiB  "
                        f"{json.dumps({k: round(v, 3) for k, v in r['split'].items()})}",
                        flush=True,
                    )
            results = {a: summarise(runs[a]) for a in arms}
            for a, r in results.items():
                base = baseline(a, results)
                if base is not None:
                    r["baseline"] = base["arm"]
                    r["wall_x_baseline"] = r["wall_s"] / base["wall_s"]
                    r["cpu_x_baseline"] = r["cpu_s"] / base["cpu_s"]
                    r["peak_extra_rss_over_baseline_mib"] = r["peak_extra_rss_mib"] - base["peak_extra_rss_mib"]
                    if base is not r:
                        r["vs_baseline"] = compare(r, base)
            report["sizes"][size.label] = {"rows": size.rows, "tokens": size.length, "group": size.group,
                                           "correct_rows": batch.n_correct, "mixed_groups": batch.n_mixed_groups,
                                           "write_s": batch.write_s, "generated": batch.generated,
                                           "steps_s": time.perf_counter() - t_steps,
                                           "arms": results}
            print(fmt_table(size, results), flush=True)
            print(f"[{size.label}] steps: {report['sizes'][size.label]['steps_s']:.0f} s", flush=True)
            if args.reward_samples and "reward_side" not in report:
                report["reward_side"] = rs = reward_side(batch.samples[: args.reward_samples])
                print(fmt_reward(rs), flush=True)
            tq.kv_clear(keys=batch.meta.keys, partition_id="train")
            del batch, worker
            release_memory()
    finally:
        if judge_proc is not None:
            judge_proc.stdin.close()
            judge_proc.wait(timeout=10)
        stop_transfer_queue(started_ray)
    report["machine"]["load_avg_end"] = os.getloadavg()
    report["total_s"] = time.perf_counter() - t_all
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    print(f"wrote {out} ({report['total_s']:.0f} s in all)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
