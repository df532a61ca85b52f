"""``--seeds`` of the lab's commands (``verl-focal demo``, ``verl-focal sim``): one parser, one error text."""

from __future__ import annotations

import re


def parse_seeds(tokens: list[str], example: str = "0-23") -> tuple[int, ...]:
    """Seeds from ``0 1 2`` and/or inclusive ranges ``LO-HI`` (``LO..HI`` is accepted too), in the order given.

    Raises ValueError naming the bad token and what is accepted (``example`` is the range the message shows).

    >>> parse_seeds(["0-2", "7", "9..10"])
    (0, 1, 2, 7, 9, 10)
    """
    out: list[int] = []
    for tok in tokens:
        m = re.fullmatch(r"(\d+)(?:-|\.\.)(\d+)", tok)
        if m and int(m.group(2)) >= int(m.group(1)):
            out.extend(range(int(m.group(1)), int(m.group(2)) + 1))
        elif re.fullmatch(r"\d+", tok):
            out.append(int(tok))
        else:
            raise ValueError(f"--seeds: {tok!r} is not a seed; give integers >= 0 and/or inclusive ranges LO-HI with "
                             f"LO <= HI, e.g. --seeds {example} or --seeds 0 5 7")
    return tuple(out)
