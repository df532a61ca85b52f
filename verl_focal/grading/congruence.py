r"""A congruence's modulus written after an answer: ``42 \pmod{100}``, ``42 (mod 100)``.

:func:`split_modulus` splits the residue from the modulus.  The policy, as for units
(:mod:`.units`): a modulus written on one side only is dropped (``42 \pmod{100}`` against ``42``
compares ``42`` with ``42``); when both sides carry one, the moduli must be equal, and then the
residues must be equal, or congruent when both are integers (``142 \pmod{100}`` against
``42 \pmod{100}``).
"""

from __future__ import annotations

import regex

# \pmod{n}, \pmod n, (\mod n), (\bmod n), (mod n), (\text{mod } n), (\operatorname{mod} n), \mod n
_MOD_WORD = r"(?:\\(?:text|mathrm|operatorname|textrm|rm)\s*\{\s*mod\s*\}|\\b?mod(?![A-Za-z])|mod(?![A-Za-z]))"
_MODULUS = regex.compile(
    r"(?:\\pmod\s*(?:\{(?P<m>(?:[^{}]|\{[^{}]*\})+)\}|(?P<m>[A-Za-z0-9]+))"
    rf"|\(\s*{_MOD_WORD}\s*(?P<m>[^()]+?)\s*\)"
    rf"|(?<!\()(?:\\mod(?![A-Za-z])|\\text\s*\{{\s*mod\s*\}})\s*(?:\{{(?P<m>[^{{}}]+)\}}|(?P<m>[A-Za-z0-9]+)))"
    r"(?:\s|\\[,;:! ]|~)*$"
)
_LEADING_EQUIV = regex.compile(r"^\s*\\equiv(?![A-Za-z])\s*")


def split_modulus(text: str) -> tuple[str, str] | None:
    r"""``(residue, modulus)`` for an answer ending in a modulus (see the module docstring), a
    leading ``\equiv`` dropped from the residue; None when there is no modulus or no residue."""
    if "mod" not in text:
        return None
    m = _MODULUS.search(text)
    if not m:
        return None
    residue = regex.sub(r"(?:\s|\\[,;:! ]|~)+$", "", _LEADING_EQUIV.sub("", text[:m.start()])).strip()
    if not residue:
        return None
    return residue, m.group("m").strip()
