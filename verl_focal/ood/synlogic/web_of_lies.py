r"""SynLogic ``web_of_lies``: for each asked person, does they tell the truth?

Answer: on the last line, the bold ``**...**`` part or what follows "The answer is"; else the
last run of yes/no words in the answer text.  It is read as a sequence of truth values (yes /
true / truth / 是 / 真 -> true; no / false / lie / 否 / 假 / 谎 -> false, whole words).
Correct when the sequence equals the gold one.
"""

from __future__ import annotations

import re

NEEDS_ANSWER = True
_TOKEN = re.compile(r"\b(yes|true|truth|no|false|lie)\b|(是|真话|真|否|假话|假|谎)", re.IGNORECASE)
_TRUE = {"yes", "true", "truth", "是", "真话", "真"}
_RUN = re.compile(r"(?:\b(?:yes|no)\b[,，\s]*)+", re.IGNORECASE)


def truths(s: str) -> list[bool]:
    return [(m.group(1) or m.group(2)).lower() in _TRUE for m in _TOKEN.finditer(s)]


def extract(text: str) -> str:
    m = list(re.finditer(r"(?:[Tt]he answer is|答案是)\s*[：:=]?\s*\*\*([^*]+)\*\*", text))
    if m:
        return m[-1].group(1)
    last = text.strip().split("\n")[-1]
    bold = re.search(r"\*\*([^*]+)\*\*", last)
    if bold:
        return bold.group(1)
    said = re.search(r"(?:答案是|[Tt]he answer is)[：:=]?\s*(.*?)(?:[.。]|$)", last)
    if said:
        return said.group(1)
    runs = _RUN.findall(text)
    return runs[-1] if runs else ""


def verify(text: str, answer, metadata: dict) -> tuple[bool, str]:
    got = truths(extract(text))
    gold = truths(str(answer))
    return bool(got) and got == gold, ",".join("yes" if t else "no" for t in got)
