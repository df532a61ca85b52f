"""Length-normalised negative log-likelihood of responses under a causal LM (transformers).

``NLL(y | x) = -(1/|y|) * sum_t log p(y_t | x, y_<t)`` over the response tokens only
(F-GRPO Sec. 5, the rare-correct set: "length-normalised NLL under the base model").
Prompt and response are tokenised separately and concatenated (prompt ids + response
ids, as in verl's rollouts).  Items are sorted by length and packed into batches under a
token budget, so padding waste stays small; results come back in the input order.
"""

from __future__ import annotations

from collections.abc import Sequence


def _batches_by_length(lengths: Sequence[int], max_tokens: int, max_batch: int) -> list[list[int]]:
    """Indices grouped so that ``len(batch) * max(length in batch) <= max_tokens`` (longest first)."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches: list[list[int]] = []
    cur: list[int] = []
    cur_max = 0
    for i in order:
        L = lengths[i]
        new_max = max(cur_max, L)
        if cur and (new_max * (len(cur) + 1) > max_tokens or len(cur) >= max_batch):
            batches.append(cur)
            cur, new_max = [], L
        cur.append(i)
        cur_max = new_max
    if cur:
        batches.append(cur)
    return batches


def response_nll(
    model,
    tokenizer,
    prompts: Sequence[str],
    responses: Sequence[str],
    max_tokens_per_batch: int = 16384,
    max_batch: int = 64,
    device: str = "cpu",
    progress: bool = False,
) -> list[float]:
    """Length-normalised NLL (nats per response token) of each response given its prompt.

    Empty responses (no tokens) get ``nan``.
    """
    import torch
    from tqdm import tqdm

    if len(prompts) != len(responses):
        raise ValueError(f"{len(prompts)} prompts but {len(responses)} responses")
    p_ids = [tokenizer(p, add_special_tokens=False)["input_ids"] for p in prompts]
    r_ids = [tokenizer(r, add_special_tokens=False)["input_ids"] for r in responses]
    lengths = [len(a) + len(b) for a, b in zip(p_ids, r_ids)]
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (tokenizer.eos_token_id or 0)
    out = [float("nan")] * len(prompts)
    batches = _batches_by_length(lengths, max_tokens_per_batch, max_batch)
    model.eval()
    for batch in tqdm(batches, disable=not progress, desc="nll", unit="batch"):
        batch = [i for i in batch if len(r_ids[i]) > 0]
        if not batch:
            continue
        L = max(lengths[i] for i in batch)
        ids = torch.full((len(batch), L), pad, dtype=torch.long)
        att = torch.zeros((len(batch), L), dtype=torch.long)
        resp = torch.zeros((len(batch), L), dtype=torch.bool)
        for row, i in enumerate(batch):
            seq = p_ids[i] + r_ids[i]
            ids[row, : len(seq)] = torch.tensor(seq)
            att[row, : len(seq)] = 1
            resp[row, len(p_ids[i]) : len(seq)] = True
        ids, att, resp = ids.to(device), att.to(device), resp.to(device)
        with torch.no_grad():
            logits = model(input_ids=ids, attention_mask=att).logits.float()
        # token t is predicted by position t-1
        logp = torch.log_softmax(logits[:, :-1], dim=-1).gather(-1, ids[:, 1:, None]).squeeze(-1)
        mask = resp[:, 1:]
        nll = -(logp * mask).sum(1) / mask.sum(1)
        for row, i in enumerate(batch):
            out[i] = float(nll[row])
    return out


def load_model(path: str, device: str = "cpu", dtype: str = "auto"):
    """``(model, tokenizer)`` from a local Hugging Face folder (a verl checkpoint merged to HF format)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    torch_dtype = "auto" if dtype == "auto" else getattr(torch, dtype)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch_dtype).to(device).eval()
    return model, tok
