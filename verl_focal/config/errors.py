"""User errors: the exceptions a command turns into one or two lines and exit code 2.

A :class:`UserError` means the user can fix it (a key, a value, a path); its message
names the thing and the fix.  Anything else escaping a command is a bug of ours and
keeps its traceback.  ``--debug`` or ``VERL_FOCAL_DEBUG=1`` shows the traceback of a
user error too.  No verl import here.
"""

from __future__ import annotations

import difflib
import os
import sys
import traceback
from collections.abc import Iterable

__all__ = [
    "UserError",
    "ConfigError",
    "InputError",
    "EXIT_USER_ERROR",
    "did_you_mean",
    "debug_enabled",
    "report_user_error",
]

#: exit status of a command refused because of the user's input (argparse uses 2 too)
EXIT_USER_ERROR = 2


class UserError(Exception):
    """Something the user typed or pointed at is wrong; the message says what and how to fix it."""


class ConfigError(UserError, ValueError):
    """A config value is missing, unknown or out of range.  The message names the key and the fix."""


class InputError(UserError, ValueError):
    """A file, folder, URL or command-line value is missing or unreadable.  The message names it."""


def did_you_mean(value: object, choices: Iterable[str], cutoff: float = 0.6) -> str:
    """``" (did you mean 'x'?)"`` for the closest of ``choices`` to ``value``, or ``""``.

    >>> did_you_mean("gama", ["gamma", "base"])
    " (did you mean 'gamma'?)"
    >>> did_you_mean("zzz", ["gamma"])
    ''
    """
    if not isinstance(value, str):
        return ""
    pool = [str(c) for c in choices]
    close = difflib.get_close_matches(value, pool, n=1, cutoff=cutoff)
    if not close:  # case slips: "GRPO" for "grpo"
        close = [c for c in pool if c.lower() == value.lower()][:1]
    return f" (did you mean {close[0]!r}?)" if close and close[0] != value else ""


def debug_enabled(argv: list[str] | None = None) -> bool:
    """True with ``--debug`` in ``argv`` or ``VERL_FOCAL_DEBUG`` set to a true value."""
    if argv is not None and "--debug" in argv:
        return True
    return os.environ.get("VERL_FOCAL_DEBUG", "").strip().lower() not in ("", "0", "false", "no")


def report_user_error(prog: str, exc: BaseException, debug: bool = False) -> int:
    """Print ``prog: error: <message>`` (with the traceback when ``debug``); return :data:`EXIT_USER_ERROR`."""
    if debug:
        traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
    msg = str(exc).strip() or type(exc).__name__
    print(f"{prog}: error: {msg}", file=sys.stderr)
    if not debug:
        print(f"{prog}: (run with --debug or VERL_FOCAL_DEBUG=1 for the traceback)", file=sys.stderr)
    return EXIT_USER_ERROR
