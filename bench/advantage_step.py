r"""The whole advantage step at production scale: verl's stock step against ours, per estimator.

It goes through the v1 trainer's real ``_compute_advantage`` -- verl's own for the baseline,
our hooked trainer mode (``focal_sync``) for the rest -- with a real TransferQueue on a local
Ray cluster, as tests/integration does.  Only the trainer's GPU-bound ``__init__`` is skipped
(the object is built with ``__new__``).  Rows are written as verl's agent loop writes them
(``AgentLoopOutput.as_dict`` -> ``list_of_dict_to_tensordict`` -> ``kv_batch_put``: prompt and
response token ids, response mask, ``rm_scores``, the reward extras ``acc`` / ``score`` /
``cue_sig`` in ``extra_fields["reward_extra_info"]``), then ``old_log_probs`` as verl's
old-log-prob pass writes them.  Responses are long competition-maths solutions
(bench/math_text.py) tokenised with a byte-level BPE trained here, every row cut (or tiled) to
exactly the response length, the answer kept at the end.

Arms (each timed for one step; the step is repeated ``--repeats`` times, arms interleaved):

* ``grpo``        verl's stock ``grpo`` in the stock ``sync`` trainer mode: the baseline
* ``f_grpo``      through the hook
* ``cue_sig``     ``cue_grpo``, clusters from the reward-side ``cue_sig`` extras (``source=auto``)
* ``cue_text``    ``cue_grpo`` with ``algorithm.cue.source=text``: the hook decodes, the cues are extracted
* ``f_cue``       ``f_cue_grpo`` (``source=auto``, signatures present)
* ``cue_judge``   ``cue_grpo`` with the judge partitioner against a loopback judge (``--judge-latency``
                  per request)
* ``passk``       ``passk_grpo`` with ``algorithm.passk.k=4`` (needs only ``acc``)
* ``unlikely``    ``unlikely_grpo`` (β = 0.25): the hook also reads ``old_log_probs`` and
                  ``response_mask`` back from TransferQueue at advantage time (counted in ``fetch``)

Every step runs as in the trainer: the hook's prefetch (what ``_compute_old_log_prob`` calls
before verl's log-prob pass; a background thread for the cue estimators), ``--overlap-s`` of
stand-in old-log-prob time (not charged to the wall time), then ``_compute_advantage``.

Per arm: wall and CPU time of the step (CPU = this process's user+system time, all threads;
the TransferQueue storage actor and the judge run in other processes) and the ratio to the
baseline; the split read from the step's own metrics (``verl_focal/fetch_s``,
``verl_focal/decode_s``, ``verl_focal/prepare_s``, ``cue/partition_time_s``, and ``join``: the
time the step blocked on the prefetch thread and the judge) plus the time
spent inside the registered estimator and in the credit rule (measured by wrapping the
functions); peak extra RSS of this process during the step over its RSS just before, from a
sampling thread (every 2 ms, ``/proc/self/statm``).

Reward side: per response, the time ``verl_focal.reward.compute_score`` takes without and with
``cue_set`` (the extra is the ``cue_sig``), on a sample of the same responses, main thread.

    PYTHONPATH=$PWD python bench/advantage_step.py                       # both sizes
    PYTHONPATH=$PWD python bench/advantage_step.py --sizes 2048x8192     # one size
    PYTHONPATH=$PWD python bench/advantage_step.py --quick               # smoke test (seconds)
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
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

import math_text  # noqa: E402

ARMS = ("grpo", "f_grpo", "cue_sig", "cue_text", "f_cue", "cue_judge", "passk", "unlikely")
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

    def wrap(self, label: str, fn: Callable) -> Callable:
        if getattr(fn, "_bench_label", None):
            return fn

        def timed(*a, **k):
            t0 = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                self.t[label] = self.t.get(label, 0.0) + time.perf_counter() - t0

        timed._bench_label = label  # type: ignore[attr-defined]
        timed.__wrapped__ = fn  # type: ignore[attr-defined]
        return timed


def install_timers(timers: Timers) -> None:
    """Time the estimators (verl's registry and verl's direct GRPO call) and the credit rule.

    The credit functions are replaced wherever a module imported them by name, so this keeps
    working when the code that calls them moves."""
    from verl.trainer.ppo import core_algos

    import verl_focal.core.credit as credit
    import verl_focal.partition.diagnostics as diag

    core_algos.compute_grpo_outcome_advantage = timers.wrap("estimator", core_algos.compute_grpo_outcome_advantage)
    for name in ("f_grpo", "cue_grpo", "f_cue_grpo", "passk_grpo", "unlikely_grpo"):
        core_algos.ADV_ESTIMATOR_REGISTRY[name] = timers.wrap("estimator", core_algos.ADV_ESTIMATOR_REGISTRY[name])
    targets = {id(credit.credit_multipliers_batch): credit.credit_multipliers_batch,
               id(diag.credit_diagnostics): diag.credit_diagnostics}
    for mod in list(sys.modules.values()):
        if mod is None or not getattr(mod, "__name__", "").startswith("verl_focal"):
            continue
        for attr, value in list(vars(mod).items()):
            if id(value) in targets and callable(value):
                setattr(mod, attr, timers.wrap("credit", targets[id(value)]))


# --------------------------------------------------------------------------- tokenizer and rows
def build_tokenizer(vocab_size: int, seed: int = 0):
    """A byte-level BPE trained here on generated solutions, as a transformers fast tokenizer."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    texts = math_text.corpus(600, seed=seed, min_chars=3000)
    tok.train_from_iterator(texts, trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=["<|pad|>", "<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<|pad|>", eos_token="<|endoftext|>")
    chars = sum(len(t) for t in texts[:50])
    tokens = sum(len(x) for x in fast(texts[:50], add_special_tokens=False)["input_ids"])
    return fast, chars / tokens


@dataclass
class Batch:
    meta: Any
    size: Size
    n_correct: int
    n_mixed_groups: int
    samples: list[tuple[str, str]] = field(default_factory=list)  # (response text, ground truth) for the reward side
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


def generate_rows(tok, chars_per_token: float, size: Size, seed: int, chunk: int = 256) -> dict:
    """Token ids (rows x length, the answer kept at the end), correctness, signatures, prompts."""
    import numpy as np

    from verl_focal.partition.cues import signature

    rng = random.Random(seed)
    L = size.length
    min_chars = int(L * chars_per_token * 1.15)
    plan = []  # one entry per row: (group, problem, correct, method)
    problems, answers = [], []
    for g in range(size.rows // size.group):
        prob, correct, methods = _group_plan(rng, size.group)
        problems.append(prob.text)
        answers.append(prob.answer)
        plan += [(g, prob, c, m) for c, m in zip(correct, methods)]
    ids = np.zeros((size.rows, L), dtype=np.uint16 if len(tok) < 2**16 else np.int32)
    sigs = []
    for start in range(0, len(plan), chunk):
        part = plan[start:start + chunk]
        bodies, tails = zip(*(math_text.make_response(rng, p, c, min_chars, method=m) for _, p, c, m in part))
        enc = tok(list(bodies) + list(tails), add_special_tokens=False)["input_ids"]
        for k, (b, t) in enumerate(zip(enc[: len(part)], enc[len(part):])):
            need = L - len(t)
            while len(b) < need:  # tile a short reasoning part up to the budget
                b = b + b
            row = b[:need] + t
            ids[start + k] = row
            # what the reward workers' compute_score(cue_set=...) adds, on the text they see
            sigs.append(signature(tok.decode(row, skip_special_tokens=True), "math_v1"))
    return {"ids": ids, "group": np.array([r[0] for r in plan]), "acc": np.array([float(r[2]) for r in plan]),
            "sigs": np.array(sigs, dtype=object), "problems": np.array(problems, dtype=object),
            "answers": np.array(answers, dtype=object)}


def cached_rows(tok, chars_per_token: float, size: Size, seed: int, cache_dir: Path | None) -> tuple[dict, bool]:
    """:func:`generate_rows`, kept under ``cache_dir`` (keyed by size, seed and the tokenizer's content)."""
    import hashlib

    import numpy as np

    if cache_dir is None:
        return generate_rows(tok, chars_per_token, size, seed), True
    digest = hashlib.sha1(tok.backend_tokenizer.to_str().encode()).hexdigest()[:10]
    path = cache_dir / f"rows_{size.label}_g{size.group}_s{seed}_{digest}.npz"
    if path.exists():
        with np.load(path, allow_pickle=True) as z:
            return {k: z[k] for k in z.files}, False
    data = generate_rows(tok, chars_per_token, size, seed)
    cache_dir.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    np.savez(tmp, **data)
    tmp.replace(path)
    return data, True


def write_rows(tq, tok, chars_per_token: float, size: Size, partition: str, seed: int,
               cache_dir: Path | None = None, chunk: int = 256, n_samples: int = 32) -> Batch:
    """Write ``size.rows`` rollouts into TransferQueue as verl's agent loop does; return the batch meta."""
    import numpy as np
    import torch
    from tensordict import TensorDict
    from transfer_queue.metadata import KVBatchMeta
    from verl.experimental.agent_loop.agent_loop import AgentLoopMetrics, AgentLoopOutput
    from verl.utils.tensordict_utils import list_of_dict_to_tensordict

    t_start = time.perf_counter()
    data, generated = cached_rows(tok, chars_per_token, size, seed, cache_dir)
    ids, group, acc, sigs = data["ids"], data["group"], data["acc"], data["sigs"]
    L = size.length
    suffix = " Let's think step by step and output the final answer within \\boxed{}."
    prompt_ids = tok([str(p) for p in data["problems"]], add_special_tokens=False)["input_ids"]
    sessions = np.zeros(size.rows, dtype=np.int64)
    for g in np.unique(group):
        sessions[group == g] = np.arange(int((group == g).sum()))
    keys: list[str] = []
    for start in range(0, size.rows, chunk):
        rows = range(start, min(start + chunk, size.rows))
        fields, chunk_keys = [], []
        for i in rows:
            g = int(group[i])
            uid = f"p{seed}x{g:05d}"
            out = AgentLoopOutput(prompt_ids=prompt_ids[g], response_ids=ids[i].tolist(), response_mask=[1] * L,
                                  reward_score=float(acc[i]), num_turns=2, metrics=AgentLoopMetrics(),
                                  extra_fields={"reward_extra_info": {"acc": float(acc[i]), "score": float(acc[i]),
                                                                      "cue_sig": str(sigs[i])}})
            row = out.as_dict()
            row.update({"uid": uid, "raw_prompt": [{"role": "user", "content": str(data["problems"][g]) + suffix}]})
            fields.append(row)
            chunk_keys.append(f"{uid}_{int(sessions[i])}_0")
        tq.kv_batch_put(keys=chunk_keys, partition_id=partition, fields=list_of_dict_to_tensordict(fields))
        # what verl's old-log-prob pass writes back before the advantage step
        lp = torch.randn(len(rows), L, dtype=torch.float32).mul_(0.5).sub_(1.0)
        nested = torch.nested.as_nested_tensor(list(lp.unbind()), layout=torch.jagged)
        tq.kv_batch_put(keys=chunk_keys, partition_id=partition,
                        fields=TensorDict({"old_log_probs": nested}, batch_size=len(rows)))
        keys += chunk_keys
        del fields, lp, nested
    # reward-side samples: the first rows in order (whole groups, as a reward worker sees them)
    samples = [(tok.decode(ids[i].tolist(), skip_special_tokens=True), str(data["answers"][int(group[i])]))
               for i in range(min(n_samples, size.rows))]
    n_groups = size.rows // size.group
    n_pos = np.bincount(group, weights=acc > 0.5, minlength=n_groups)
    n_mixed = int(((n_pos >= 2) & (n_pos < size.group)).sum())
    order = np.random.default_rng(seed).permutation(len(keys))  # batches need not be grouped
    keys = [keys[i] for i in order]
    meta = KVBatchMeta(keys=keys, tags=[{} for _ in keys], partition_id=partition)
    del data, ids
    release_memory()
    return Batch(meta, size, int((acc > 0.5).sum()), n_mixed, samples, time.perf_counter() - t_start, generated)


# --------------------------------------------------------------------------- arms
def arm_overrides(arm: str, judge_url: str, size: Size, run: int = 0) -> list[str]:
    """Config overrides of ``arm``.  The judge's model name changes with ``run``: the judge cache is
    keyed by it, so every timed step sends its requests (a repeated step would be a cache hit)."""
    common = [f"actor_rollout_ref.rollout.n={size.group}"]
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
                f"algorithm.cue.judge.model=bench-{size.label}-{run}",
                "algorithm.cue.judge.max_concurrency=128",
                "algorithm.cue.judge.timeout_s=60",
                "algorithm.cue.judge.max_retries=0",
            ],
            "passk": ["algorithm.adv_estimator=passk_grpo", f"algorithm.passk.k={min(4, size.group)}"],
            "unlikely": ["algorithm.adv_estimator=unlikely_grpo", "algorithm.unlikely.beta=0.25"],
        }[arm]
    )


def make_trainer(arm: str, config, tokenizer):
    from verl.trainer.ppo.v1.trainer_base import get_trainer_cls

    from verl_focal.integration.trainer import hooked_trainer_cls

    cls = get_trainer_cls("sync") if arm == "grpo" else hooked_trainer_cls("sync")
    trainer = object.__new__(cls)
    trainer.config = config
    trainer.tokenizer = tokenizer
    return trainer


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


def run_arm(arm: str, trainer, batch: Batch, timers: Timers, overlap_s: float) -> dict:
    """One step as the trainer runs it: ``_focal_prefetch`` (what ``_compute_old_log_prob`` calls
    first; a background thread for the cue estimators, nothing for the others), ``overlap_s`` of
    stand-in old-log-prob time, then ``_compute_advantage``.  Wall time excludes the stand-in
    window; CPU time includes whatever ran in the background during it."""
    release_memory()
    timers.t.clear()
    metrics: dict = {}
    with PeakRSS() as mem:
        c0, t0 = time.process_time(), time.perf_counter()
        if hasattr(trainer, "_focal_prefetch"):
            trainer._focal_prefetch(batch.meta)
        prefetch_wall = time.perf_counter() - t0
        time.sleep(overlap_s)  # the old-log-prob pass: not charged to the step's wall time
        t0 = time.perf_counter()
        trainer._compute_advantage(batch.meta, metrics)
        wall = time.perf_counter() - t0 + prefetch_wall
        cpu = time.process_time() - c0
    split = {k: float(metrics[v]) for k, v in SPLIT_KEYS.items() if v in metrics}
    split["estimator"] = timers.t.get("estimator", 0.0)
    split["credit"] = timers.t.get("credit", 0.0)
    split["join"] = split.get("prefetch_wait", 0.0) + split.get("judge_wait", 0.0)
    extra = {k: float(v) for k, v in metrics.items()
             if k in ("verl_focal/decoded_rows", "verl_focal/prefetched", "cue/groups_from_signatures",
                      "cue/groups_from_text", "judge/fallback_rate", "judge/requests", "verl_focal/advantage_s",
                      "passk/groups", "unlikely/correct_rows", "unlikely/nonfinite_logprob_rows")}
    return {"arm": arm, "wall_s": wall, "cpu_s": cpu, "peak_extra_rss_mib": mem.extra / 2**20,
            "split": split, "metrics": extra}


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


# --------------------------------------------------------------------------- reward side
def reward_side(samples: list[tuple[str, str]]) -> dict:
    """Per response, in batch order and once each (as a reward worker meets them): our
    ``compute_score`` without ``cue_set`` (the math-verify check), then the ``cue_sig`` it adds with
    ``cue_set`` (``verl_focal.partition.cues.signature``).  verl's own math-verify scorer
    (which parses the whole response) is timed on the same responses for reference."""
    from verl.utils.reward_score import math_verify as verl_math_verify

    from verl_focal.partition.cues import signature
    from verl_focal.reward import compute_score

    warm = "<think>warm up</think> The answer is $\\boxed{\\frac{1}{2}}$."
    compute_score("verl_focal/math", warm, "\\frac{1}{2}", cue_set="math_v1")  # imports, catalogue
    verl_math_verify.compute_score(warm, "\\frac{1}{2}")
    plain, sig, verl_mv = [], [], []
    for text, gt in samples:
        t0 = time.perf_counter()
        compute_score("verl_focal/math", text, gt)
        t1 = time.perf_counter()
        signature(text, "math_v1")
        t2 = time.perf_counter()
        plain.append(t1 - t0)
        sig.append(t2 - t1)
    for text, gt in samples:
        t0 = time.perf_counter()
        verl_math_verify.compute_score(text, gt)
        verl_mv.append(time.perf_counter() - t0)
    mv, ex = statistics.median(plain), statistics.median(sig)
    return {"responses": len(samples), "chars_median": statistics.median(len(t) for t, _ in samples),
            "math_verify_ms_median": 1e3 * mv, "cue_sig_ms_median": 1e3 * ex,
            "fraction_median": ex / mv if mv else float("nan"),
            "fraction_of_totals": sum(sig) / sum(plain) if sum(plain) else float("nan"),
            "verl_math_verify_ms_median": 1e3 * statistics.median(verl_mv),
            "fraction_of_verl_math_verify": sum(sig) / sum(verl_mv) if sum(verl_mv) else float("nan")}


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
def fmt_table(size: Size, results: dict[str, dict]) -> str:
    base = results.get("grpo")
    cols = ["fetch", "decode", "partition", "prepare", "credit", "estimator"]
    head = (f"{'arm':<10} {'wall s':>8} {'x base':>7} {'+s':>7} {'cpu s':>8} {'x base':>7} {'+cpu s':>7} "
            + " ".join(f"{c:>9}" for c in cols) + f" {'join s':>7} {'+RSS MiB':>9}")
    lines = [f"== {size.label} ({size.rows // size.group} prompts x {size.group}) ==", head]
    for arm, r in results.items():
        sp = r["split"]
        w, c = r["wall_s"], r["cpu_s"]
        bw = base["wall_s"] if base else float("nan")
        bc = base["cpu_s"] if base else float("nan")
        lines.append(
            f"{arm:<10} {w:8.3f} {w / bw:7.3f} {w - bw:+7.2f} {c:8.3f} {c / bc:7.3f} {c - bc:+7.2f} "
            + " ".join(f"{sp.get(k, 0.0):9.3f}" for k in cols)
            + f" {sp.get('join', 0.0):7.3f} {r['peak_extra_rss_mib']:9.0f}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default=None, help=f"ROWSxTOKENS[/GROUP],... (default {DEFAULT_SIZES})")
    ap.add_argument("--quick", action="store_true", help=f"tiny smoke run: --sizes {QUICK_SIZES}, one repeat")
    ap.add_argument("--arms", default=",".join(ARMS), help=f"comma-separated subset of {','.join(ARMS)}")
    ap.add_argument("--repeats", type=int, default=None, help="steps per arm (median reported; default 3, --quick 1)")
    ap.add_argument("--judge-latency", type=float, default=0.5, help="loopback judge seconds per request")
    ap.add_argument("--overlap-s", type=float, default=None,
                    help="stand-in old-log-prob time between prefetch and step (default 4, --quick 1)")
    ap.add_argument("--vocab", type=int, default=4096, help="BPE vocabulary size")
    ap.add_argument("--reward-samples", type=int, default=32, help="responses timed on the reward side (0: skip)")
    ap.add_argument("--json", default="outputs/advantage_step.json", help="where to write the results")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cache-dir", default="outputs/cache", help="generated rows are kept here for the next run")
    ap.add_argument("--no-cache", action="store_true", help="generate the rows afresh and keep nothing")
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
        if "grpo" in arms:
            arms = ["grpo"] + [a for a in arms if a != "grpo"]
        repeats = args.repeats if args.repeats is not None else (1 if args.quick else 3)
        if repeats < 1:
            raise UserError(f"--repeats={repeats} must be >= 1")
        overlap = args.overlap_s if args.overlap_s is not None else (1.0 if args.quick else 4.0)
    except UserError as e:
        print(f"advantage_step.py: {e}", file=sys.stderr)
        return 2

    t_all = time.perf_counter()
    import ray
    import transfer_queue as tq
    import verl  # noqa: F401
    from omegaconf import open_dict

    import verl_focal.integration.trainer  # noqa: F401  (the hooked trainer modes; loaded before any timing)
    import verl_focal.partition.judge  # noqa: F401  (registers the judge partitioner)
    from verl_focal.integration.preflight import compose_config

    tok, cpt = build_tokenizer(args.vocab, seed=args.seed)
    cfg = compose_config(["transfer_queue.backend.SimpleStorage.num_data_storage_units=1"])
    started_ray = not ray.is_initialized()
    if started_ray:
        ray.init(num_cpus=16, include_dashboard=False, log_to_driver=False)
    with open_dict(cfg):
        cfg.transfer_queue.enable = True
    tq.init(cfg.transfer_queue)
    judge_proc, judge_url = start_judge(args.judge_latency) if "cue_judge" in arms else (None, "")
    timers = Timers()
    report: dict[str, Any] = {
        "command": " ".join([Path(sys.argv[0]).name] + (argv if argv is not None else sys.argv[1:])),
        "machine": {"cpus": os.cpu_count(), "load_avg_start": os.getloadavg()},
        "tokenizer": {
            "kind": "byte-level BPE trained on bench/math_text.py",
            "vocab": args.vocab,
            "chars_per_token": cpt,
        },
        "rss": "peak RSS of this process (sampling thread, every 2 ms, /proc/self/statm) "
               "minus RSS just before the step",
        "cpu": "process user+system time of this (driver) process, all threads",
        "judge": {"latency_s": args.judge_latency, "overlap_s": overlap},
        "sizes": {},
    }
    try:
        install_timers(timers)
        for size in sizes:
            batch = write_rows(tq, tok, cpt, size, partition="train", seed=args.seed + size.rows,
                               cache_dir=None if args.no_cache else Path(args.cache_dir),
                               n_samples=args.reward_samples or 1)
            print(
                f"[{size.label}] {'generated and ' if batch.generated else ''}"
                f"wrote {size.rows} rows in {batch.write_s:.1f} s "
                f"({batch.n_correct} correct, {batch.n_mixed_groups} groups with >= 2 correct and >= 1 wrong)",
                flush=True,
            )
            def trainer(a: str, run: int, size=size):  # called within this iteration only
                return make_trainer(a, compose_config(arm_overrides(a, judge_url, size, run)), tok)

            runs: dict[str, list[dict]] = {a: [] for a in arms}
            # one untimed warm-up step per arm (imports, first-call caches), then interleaved repeats
            for a in arms:
                run_arm(a, trainer(a, 0), batch, timers, overlap)
            for rep in range(1, repeats + 1):
                for a in arms:
                    runs[a].append(run_arm(a, trainer(a, rep), batch, timers, overlap))
                    r = runs[a][-1]
                    print(
                        f"  {a:<10} wall {r['wall_s']:7.3f} s  cpu {r['cpu_s']:7.3f} s  "
                        f"+rss {r['peak_extra_rss_mib']:6.0f} MiB  "
                        f"{json.dumps({k: round(v, 3) for k, v in r['split'].items()})}",
                        flush=True,
                    )
            results = {a: summarise(runs[a]) for a in arms}
            report["sizes"][size.label] = {"rows": size.rows, "tokens": size.length, "group": size.group,
                                           "correct_rows": batch.n_correct, "mixed_groups": batch.n_mixed_groups,
                                           "arms": results}
            print(fmt_table(size, results), flush=True)
            if args.reward_samples and "reward_side" not in report:
                report["reward_side"] = rs = reward_side(batch.samples[: args.reward_samples])
                print(f"reward side ({rs['responses']} responses, median {rs['chars_median']:.0f} chars): "
                      f"compute_score (math-verify) {rs['math_verify_ms_median']:.2f} ms, cue_sig adds "
                      f"{rs['cue_sig_ms_median']:.3f} ms = {100 * rs['fraction_median']:.1f}% per response "
                      f"(sums: {100 * rs['fraction_of_totals']:.1f}%; of verl's math_verify scorer, "
                      f"{rs['verl_math_verify_ms_median']:.1f} ms: {100 * rs['fraction_of_verl_math_verify']:.1f}%)",
                      flush=True)
            tq.kv_clear(keys=batch.meta.keys, partition_id="train")
            del batch
            release_memory()
    finally:
        if judge_proc is not None:
            judge_proc.stdin.close()
            judge_proc.wait(timeout=10)
        tq.close()
        if started_ray:
            ray.shutdown()
    report["machine"]["load_avg_end"] = os.getloadavg()
    report["total_s"] = time.perf_counter() - t_all
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    print(f"wrote {out} ({report['total_s']:.0f} s in all)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
