"""Cue extraction: step segmentation and per-step labelling (Cue-GRPO, docs/methods.md §6 steps 2-3).

Pipeline for one response text:

1. **Steps.**  The text is encoded as UTF-8; steps are its lines, and a sentence end
   (``. ! ?`` followed by a space or tab) also ends a step: that blank is rewritten
   to ``\\n`` (one vectorised numpy pass).  Blank lines are empty steps and
   extra blanks never touch a match, so whitespace edits do not change the result.
2. **Matching.**  Every cue pattern is matched against the whole buffer once.  No
   pattern can match ``\\n`` (catalogue rule), so every match lies inside one step,
   identified by the position of its last byte.
3. **Labels.**  A step's label is its highest-ranked matching cue (priority, then the
   earlier-listed cue).  Generic labels are dropped, then consecutive duplicates
   collapsed.  The result is the response's *cue sequence*.

Backends
--------
``regex``      the portable backend: one search per cue and step over ``bytes``, under a
               time budget per response (``regex``'s per-call ``timeout``), so a
               pathological input cannot stall a training step.  A cue none of whose
               required literals (:func:`.catalogue.required_literals`) occurs in the
               response is skipped without a scan.
``hyperscan``  the fast backend (x86 only): all patterns in one database, one scan.
               Hyperscan runs in linear time and needs no timeout.
``auto``       Hyperscan when it imports and compiles the catalogue, else ``regex``.

Why the two agree: a step s has cue c iff some match of c ends inside s.  Hyperscan
reports every end offset of every match.  ``finditer`` reports non-overlapping
leftmost matches; since no match crosses a ``\\n``, any match found before step s
ends before s starts, so the scan reaches s's first byte and finds a match inside s
whenever one exists.  Both engines work on the same bytes with ASCII ``\\b`` and ASCII
case folding.  ``tests/partition/test_cue_backends.py`` checks it on the catalogue's
examples and on the test corpus.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import regex

from verl_focal.config.choices import CUE_BACKENDS
from verl_focal.partition.cues.catalogue import Catalogue, load_catalogue, required_literals

__all__ = ["CueTimeout", "Extractor", "get_extractor", "hyperscan_available", "normalise", "BACKENDS"]

BACKENDS = CUE_BACKENDS  # the allowed values live in verl_focal.config.choices

# A sentence end: one of . ! ? followed by a blank; the blank becomes a newline.
_PUNCT = np.zeros(256, dtype=bool)
_PUNCT[[ord("."), ord("!"), ord("?")]] = True
_BLANK = np.zeros(256, dtype=bool)
_BLANK[[ord(" "), ord("\t")]] = True


class CueTimeout(RuntimeError):
    """Cue extraction of one response exceeded its time budget (regex backend)."""


def hyperscan_available() -> bool:
    try:
        import hyperscan  # noqa: F401
    except Exception:  # ImportError, or a broken native library
        return False
    return True


def normalise(text: str | bytes) -> bytes:
    """UTF-8 bytes in which every step ends with ``\\n`` (step 1 above; one vectorised pass)."""
    buf = text if isinstance(text, bytes) else text.encode("utf-8", "replace")
    a = np.frombuffer(buf, dtype=np.uint8)
    if a.size < 2:
        return buf
    ends = _PUNCT[a[:-1]] & _BLANK[a[1:]]
    if not ends.any():
        return buf
    out = a.copy()
    out[1:][ends] = 10
    return out.tobytes()


class Extractor:
    """Turns response texts into cue sequences for one catalogue and one backend."""

    def __init__(
        self,
        catalogue: Catalogue | str = "math_v1",
        backend: str = "auto",
        timeout: float = 2.0,
        include_generic: bool | None = None,
    ):
        if backend not in BACKENDS:
            raise ValueError(f"algorithm.cue.backend={backend!r}: choose one of {list(BACKENDS)}")
        if not (isinstance(timeout, (int, float)) and timeout > 0):
            raise ValueError(f"algorithm.cue.extract_timeout={timeout!r}: must be a number of seconds > 0")
        self.catalogue = load_catalogue(catalogue) if isinstance(catalogue, str) else catalogue
        self.timeout = float(timeout)
        cues = self.catalogue.cues
        self._rank = np.asarray(self.catalogue.rank, dtype=np.int64)
        # rank -> cue index, and whether a rank is generic
        self._cue_of_rank = np.argsort(self._rank)
        self._generic_rank = np.array([cues[i].generic for i in self._cue_of_rank], dtype=bool)
        # Generic cues only ever label steps that are then dropped.  When every generic cue
        # ranks below every specific one they cannot change any cue sequence, so by default
        # they are not matched at all (they are the most frequent matches: 'therefore', \\frac).
        gen = [c.priority for c in cues if c.generic]
        spec = [c.priority for c in cues if not c.generic]
        harmless = not gen or not spec or max(gen) < min(spec)
        if include_generic is None:
            include_generic = not harmless
        self.include_generic = bool(include_generic)
        self._active = np.array([i for i, c in enumerate(cues) if self.include_generic or not c.generic],
                                dtype=np.int64)
        self._regex = [
            regex.compile(cues[i].pattern.encode("ascii"), regex.IGNORECASE if cues[i].caseless else 0)
            for i in self._active
        ]
        # regex backend prefilter: a cue none of whose required literals occurs is not scanned
        self._lits = [required_literals(cues[i].pattern, cues[i].caseless) for i in self._active]
        self._caseless = [cues[i].caseless for i in self._active]
        self._hs = None
        self._hs_local = threading.local()
        self.hyperscan_error: str | None = None
        if backend in ("auto", "hyperscan"):
            try:
                self._hs = self._compile_hyperscan()
            except Exception as e:  # unavailable or a pattern outside its dialect
                self.hyperscan_error = f"{type(e).__name__}: {e}"
                if backend == "hyperscan":
                    raise RuntimeError(
                        f"algorithm.cue.backend='hyperscan' but Hyperscan cannot be used ({self.hyperscan_error}); "
                        "set algorithm.cue.backend=auto (falls back to regex) or regex"
                    ) from e
        self.backend = "hyperscan" if self._hs is not None else "regex"

    # ------------------------------------------------------------------ backends
    def _compile_hyperscan(self):
        import hyperscan as hs

        cues = [self.catalogue.cues[i] for i in self._active]
        db = hs.Database(mode=hs.HS_MODE_BLOCK)
        db.compile(
            expressions=[c.pattern.encode("ascii") for c in cues],
            ids=list(range(len(cues))),
            elements=len(cues),
            flags=[hs.HS_FLAG_CASELESS if c.caseless else 0 for c in cues],
        )
        return db

    def _matches_hyperscan(self, buf: bytes) -> tuple[list[int], list[int]]:
        ids: list[int] = []
        ends: list[int] = []
        add_id, add_end = ids.append, ends.append

        def on_match(i, _start, end, _flags, _ctx):
            add_id(i)
            add_end(end)

        scratch = getattr(self._hs_local, "scratch", None)
        if scratch is None:  # one scratch per thread (Hyperscan scratch is not thread-safe)
            import hyperscan as hs

            scratch = self._hs_local.scratch = hs.Scratch(self._hs)
        self._hs.scan(buf, match_event_handler=on_match, scratch=scratch)
        return ids, ends

    def _matches_regex(self, buf: bytes, deadline: float) -> tuple[list[int], list[int]]:
        ids: list[int] = []
        ends: list[int] = []
        low = None
        for i, pat in enumerate(self._regex):
            lits = self._lits[i]
            if lits is not None:
                if self._caseless[i]:
                    low = buf.lower() if low is None else low
                    hay = low
                else:
                    hay = buf
                if not any(lit in hay for lit in lits):
                    continue
            pos = 0
            n = len(buf)
            while pos < n:
                left = deadline - time.perf_counter()
                if left <= 0:
                    raise CueTimeout(f"cue extraction exceeded {self.timeout:g} s")
                try:
                    m = pat.search(buf, pos, timeout=left)
                except TimeoutError:
                    raise CueTimeout(f"cue extraction exceeded {self.timeout:g} s") from None
                if m is None:
                    break
                ids.append(i)
                ends.append(m.end())
                # one match per step is enough: continue at the next step
                nl = buf.find(b"\n", m.end())
                pos = n if nl < 0 else nl + 1
        return ids, ends

    # ------------------------------------------------------------------ public
    def step_labels(self, text: str | bytes, backend: str | None = None) -> list[str]:
        """Codes of the best cue of each labelled step, in order (before dropping/collapsing)."""
        ranks = self._step_ranks(text, backend)
        return [self.catalogue.cues[i].code for i in self._cue_of_rank[ranks]]

    def _step_ranks(self, text: str | bytes, backend: str | None) -> np.ndarray:
        start = time.perf_counter()
        buf = normalise(text)
        use = backend or self.backend
        if use == "hyperscan":
            if self._hs is None:
                raise RuntimeError(f"Hyperscan backend unavailable: {self.hyperscan_error}")
            ids, ends = self._matches_hyperscan(buf)
        elif use == "regex":
            ids, ends = self._matches_regex(buf, start + self.timeout)
        else:
            raise ValueError(f"backend={use!r}: choose 'regex' or 'hyperscan'")
        if not ids:
            return np.zeros(0, dtype=np.int64)
        nl = np.flatnonzero(np.frombuffer(buf, dtype=np.uint8) == 10)
        step = np.searchsorted(nl, np.asarray(ends, dtype=np.int64) - 1, side="left")
        rank = self._rank[self._active[np.asarray(ids, dtype=np.int64)]]
        # best rank per step: sort by (step, rank) and keep the last row of each step
        order = np.lexsort((rank, step))
        step, rank = step[order], rank[order]
        last = np.ones(step.size, dtype=bool)
        last[:-1] = step[1:] != step[:-1]
        return rank[last]

    def sequence(self, text: str | bytes, backend: str | None = None) -> list[str]:
        """The cue sequence of one response: step labels, generic ones dropped, runs collapsed.

        Raises :class:`CueTimeout` when the regex backend exceeds its budget.
        """
        ranks = self._step_ranks(text, backend)
        ranks = ranks[~self._generic_rank[ranks]]
        if ranks.size:
            keep = np.ones(ranks.size, dtype=bool)
            keep[1:] = ranks[1:] != ranks[:-1]
            ranks = ranks[keep]
        cues = self.catalogue.cues
        return [cues[i].code for i in self._cue_of_rank[ranks]]

    def matches_step(self, cue_code: str, step: str, backend: str | None = None) -> bool:
        """Whether cue ``cue_code`` matches somewhere in ``step`` (used by the catalogue tests)."""
        i = self.catalogue.code_index[cue_code]
        buf = normalise(step)
        use = backend or self.backend
        if use == "hyperscan":
            ids, _ = self._matches_hyperscan(buf)
        else:
            ids, _ = self._matches_regex(buf, time.perf_counter() + self.timeout)
        if i not in self._active:
            raise ValueError(
                f"cue {cue_code!r} is generic and not matched by this extractor; build it with include_generic=True"
            )
        return int(np.flatnonzero(self._active == i)[0]) in ids


_CACHE: dict[tuple, Extractor] = {}
_CACHE_LOCK = threading.Lock()


def get_extractor(cue_set: str = "math_v1", backend: str = "auto", timeout: float = 2.0) -> Extractor:
    """A cached :class:`Extractor` per (cue_set, backend, timeout) in this process."""
    key = (cue_set, backend, float(timeout))
    ex = _CACHE.get(key)
    if ex is None:
        with _CACHE_LOCK:
            ex = _CACHE.get(key)
            if ex is None:
                ex = _CACHE[key] = Extractor(cue_set, backend=backend, timeout=timeout)
    return ex

