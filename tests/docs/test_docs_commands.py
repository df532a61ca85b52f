"""README and docs cite only commands that parse, and links that lead somewhere.

Every ``verl-focal ...`` line of a code block (fenced, or indented by four spaces) is parsed with the
command's real argparse parser, without running it; every ``python -m verl_focal.main_ppo`` line has known
flags and keys of our sections; every ``bash recipes/...sh`` line is expanded by the recipe helper's
``--print-overrides`` (bash only, no Python).  Relative links must name an existing file, and
an ``#anchor`` a heading of that file.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "recipes" / "deepscaler" / "README.md"]


def code_lines(text: str) -> list[tuple[int, str]]:
    """(line number, command) for every line of a fenced or indented code block, continuations joined.

    >>> code_lines("text\\n```bash\\nverl-focal sim \\\\\\n  --quick   # c\\n```\\n\\n    $ verl-focal cues a.txt\\n")
    [(3, 'verl-focal sim --quick   # c'), (7, 'verl-focal cues a.txt')]
    """
    out: list[tuple[int, str]] = []
    fenced = False
    pending: tuple[int, str] | None = None
    for i, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced and not line.startswith("    "):
            pending = None
            continue
        body = line.strip()
        if pending is not None:
            body = pending[1] + " " + body
            start = pending[0]
        else:
            start = i
        if body.endswith("\\"):
            pending = (start, body[:-1].rstrip())
            continue
        pending = None
        body = body.removeprefix("$ ")
        if body:
            out.append((start, body))
    return out


def _tokens(cmd: str) -> list[str]:
    try:
        toks = shlex.split(cmd, comments=True)
    except ValueError:
        return []
    while toks and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", toks[0]):  # VAR=value prefixes
        toks = toks[1:]
    if toks[:1] == ["time"] or toks[:2] == ["/usr/bin/time", "-v"]:
        toks = toks[1:] if toks[0] == "time" else toks[2:]
    return toks


def cited(kind: str) -> list[tuple[str, list[str]]]:
    """(``page:line``, argv) of every cited ``verl-focal`` (kind ``cli``) or recipe (kind ``recipe``) command."""
    found = []
    for page in PAGES:
        for lineno, cmd in code_lines(page.read_text(encoding="utf-8")):
            toks = _tokens(cmd)
            where = f"{page.relative_to(ROOT)}:{lineno}"
            if kind == "cli":
                if toks[:1] and (toks[0] == "verl-focal" or toks[0].endswith("/verl-focal")):
                    found.append((where, toks[1:]))
                elif toks[:3] == ["python", "-m", "verl_focal.cli"]:
                    found.append((where, toks[3:]))
            elif kind == "recipe" and len(toks) >= 2 and toks[0] == "bash" and toks[1].startswith("recipes/"):
                found.append((where, toks[1:]))
            elif kind == "main_ppo" and toks[:3] == ["python", "-m", "verl_focal.main_ppo"]:
                found.append((where, toks[3:]))
    return found


CLI = cited("cli")
RECIPES = cited("recipe")
MAIN_PPO = cited("main_ppo")


def test_the_pages_cite_commands():
    assert len(CLI) >= 40 and len(RECIPES) >= 2 and len(MAIN_PPO) >= 4  # the extraction itself works
    assert {argv[0] for _, argv in CLI if argv} >= {"check", "demo", "eval", "prep-data", "sim", "tail-miss", "cues"}


def parse_cli(argv: list[str]) -> str | None:
    """None when ``verl-focal ARGV`` passes argument parsing, else the parser's message."""
    from verl_focal.cli import COMMANDS, _top_parser, build_parser

    argv = [a for a in argv if a != "--debug"]
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            if not argv or argv[0].startswith("-") or argv[0] not in COMMANDS:
                _top_parser().parse_args(argv[:1])
            else:
                build_parser(argv[0]).parse_args(argv[1:])
    except SystemExit as e:
        return None if e.code in (0, None) else err.getvalue().strip() or f"exit {e.code}"
    return None


@pytest.mark.parametrize("where,argv", CLI, ids=[w for w, _ in CLI])
def test_cited_verl_focal_command_parses(where, argv):
    assert parse_cli(argv) is None, f"{where}: verl-focal {' '.join(argv)}\n{parse_cli(argv)}"


def test_a_command_that_does_not_parse_is_caught():
    assert parse_cli(["eval", "score", "--runs", "r", "--out-dir", "o"]) is None
    assert "did you mean 'score'" in parse_cli(["eval", "scor", "--runs", "r"])
    assert "--no-such-flag" in parse_cli(["sim", "--no-such-flag"])
    assert "did you mean 'check'" in parse_cli(["chek"])


def main_ppo_problems(argv: list[str]) -> list[str]:
    """What is wrong with ``python -m verl_focal.main_ppo ARGV`` without composing: its flags, the trainer
    name, and the keys of overrides under our ``algorithm.*`` sections (``...`` stands for "more overrides")."""
    from verl_focal.integration.startup.compose import TRAINERS, _schema_keys

    out, it = [], iter(argv)
    for a in it:
        if a in ("...", "--dry-run", "--debug", "-h", "--help"):
            continue
        if a == "--trainer" or a.startswith("--trainer="):
            name = a.split("=", 1)[1] if "=" in a else next(it, "")
            if name not in TRAINERS:
                out.append(f"--trainer {name!r}")
            continue
        key, eq, _ = a.partition("=")
        if not eq or a.startswith("-"):
            out.append(f"{a!r} is neither a flag nor key=value")
            continue
        parent, _, leaf = key.lstrip("+~").rpartition(".")
        ours = _schema_keys(parent)
        if ours is not None and leaf not in ours:
            out.append(f"unknown key {key}")
    return out


def test_main_ppo_problems_are_caught():
    assert main_ppo_problems(["--dry-run", "algorithm.focal.gamma=1", "..."]) == []
    assert main_ppo_problems(["algorithm.focal.gama=1", "--trainer", "async", "--dryrun"]) == [
        "unknown key algorithm.focal.gama", "--trainer 'async'", "'--dryrun' is neither a flag nor key=value"]


@pytest.mark.parametrize("where,argv", MAIN_PPO, ids=[w for w, _ in MAIN_PPO])
def test_cited_main_ppo_command_parses(where, argv):
    assert main_ppo_problems(argv) == [], f"{where}: python -m verl_focal.main_ppo {' '.join(argv)}"


@pytest.mark.parametrize("where,argv", RECIPES, ids=[w for w, _ in RECIPES])
def test_cited_recipe_command_expands(where, argv):
    script, *args = argv
    assert (ROOT / script).is_file(), f"{where}: no such recipe {script}"
    args = [a for a in args if a != "--dry-run"]
    env = dict(os.environ, HOME="/nonexistent-home", PYTHON="/bin/false")
    proc = subprocess.run(["bash", str(ROOT / script), *args, "--print-overrides"], capture_output=True, text=True,
                          env=env, timeout=60, cwd=ROOT)
    assert proc.returncode == 0, f"{where}: {' '.join(argv)}\n{proc.stderr}"


def _anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    h = heading.strip().lower()
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def test_relative_links_lead_to_files_and_headings():
    bad = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists():
                bad.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
                continue
            if anchor and dest.suffix == ".md":
                heads = {_anchor(h) for h in re.findall(r"^#+ (.+)$", dest.read_text(encoding="utf-8"), re.M)}
                if anchor not in heads:
                    bad.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert bad == []


def test_readme_is_short_and_has_no_development_notes():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    notes = re.compile(r"no GPU was lent|closing note|before this release|this task|this session", re.I)
    hits = [f"{p.relative_to(ROOT)}: {m.group(0)}" for p in PAGES if p.name != "demo.md"
            for m in notes.finditer(p.read_text(encoding="utf-8"))]
    assert hits == []
