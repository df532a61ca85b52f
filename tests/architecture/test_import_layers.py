"""The package's import map: imports point downward, the only cycle is the partition registry's, and nothing outside
the lab wing (``verl_focal.lab``) imports it.

Layers, lowest first (a module may import from its own layer or any lower one):

0. the package root and ``_moved`` (the old paths), ``deadline``, ``pool``, ``config.errors``, ``config.choices``,
   ``lab`` (the wing's ``__init__``) -- no verl_focal import of their own
1. ``core`` -- the papers' maths (and the unbiased pass@k); ``lab.stats`` -- the statistics of the comparisons
2. ``grading``, ``validation`` (the validation hook's pass@k); ``lab.theory``, ``lab.frontier_report``
3. ``ood``
4. ``config`` (the schema)
5. ``partition``
6. ``reward`` -- the verl-facing scorer entry
7. ``data``; ``lab.eval``, ``lab.agreement`` -- they score with ``reward`` / partition with ``partition``
8. ``estimators`` -- our estimators and their input type (the context); no verl import
9. ``step`` -- one step's machinery: verl's rows into the estimators' context, the seam every trainer calls;
   no verl import (``step.tq_rows`` alone imports ``transfer_queue``, which imports no verl)
10. ``integration`` -- the verl glue, on three floors of its own: the contract (``compat``) and ``registration``
11. ``integration.startup`` -- the start-up checks (composition, the pre-flight, verl's late checks, ...)
12. ``integration.hooks`` -- the hooks (post-import, trainers, the ``compute_advantage`` hook, TaskRunners); they
    run the start-up checks, never the other way round
13. ``plugin``, ``check`` (the ``verl-focal check`` sub-command over the start-up checks); ``lab.demo``
14. ``main_ppo``, ``cli`` -- entry points: nothing imports them

The lab's modules keep their place in the floors (so ``lab.stats`` still imports nothing above ``core``), and one
more rule walls the wing off: no module outside ``verl_focal.lab`` imports it, and only two name it at all -- the
CLI's lazy dispatch (``cli.COMMANDS``) and the old import paths (``_moved.MOVED``).

Every import counts, also one inside a function (a lazy import is still a dependency).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "verl_focal"

ROOT = "verl_focal"  # the package's __init__: layer 0 (a name in LAYERS would be a prefix of every module)
LAB = "verl_focal.lab"

LAYERS = [
    ("verl_focal._moved", "verl_focal.deadline", "verl_focal.pool", "verl_focal.config.errors",
     "verl_focal.config.choices", LAB),
    ("verl_focal.core", "verl_focal.lab.stats"),
    ("verl_focal.grading", "verl_focal.validation", "verl_focal.lab.theory", "verl_focal.lab.frontier_report"),
    ("verl_focal.ood",),
    ("verl_focal.config",),
    ("verl_focal.partition",),
    ("verl_focal.reward",),
    ("verl_focal.data", "verl_focal.lab.eval", "verl_focal.lab.agreement"),
    ("verl_focal.estimators",),
    ("verl_focal.step",),
    ("verl_focal.integration",),
    ("verl_focal.integration.startup",),
    ("verl_focal.integration.hooks",),
    ("verl_focal.plugin", "verl_focal.check", "verl_focal.lab.demo"),
    ("verl_focal.main_ppo", "verl_focal.cli"),
]

#: the only modules outside the lab that name a lab module (as a string, never an import): the CLI's lazy command
#: dispatch and the old import paths
NAME_THE_LAB = {"verl_focal.cli": "COMMANDS", "verl_focal._moved": "MOVED"}

#: the partition registry resolves built-in names lazily (base -> controls / strategy_cue / judge -> base)
ALLOWED_CYCLE_PREFIX = "verl_focal.partition"


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _layer(module: str) -> int:
    if module == ROOT:
        return 0
    best, best_len = None, -1
    for i, names in enumerate(LAYERS):
        for n in names:
            if (module == n or module.startswith(n + ".")) and len(n) > best_len:
                best, best_len = i, len(n)
    assert best is not None, f"{module} is in no layer: add it to LAYERS in {__file__}"
    return best


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    is_pkg = path.name == "__init__.py"
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in modules else mod for a in node.names]
        for t in targets:
            while t not in modules and "." in t:
                t = t.rsplit(".", 1)[0]
            if t in modules and t != name and t.startswith("verl_focal"):
                out.add(t)
    return out


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def test_no_module_imports_upward():
    graph = _graph()
    upward = [f"{a} -> {b}" for a, deps in graph.items() for b in deps if _layer(b) > _layer(a)]
    assert not upward, "imports that point up a layer (see this file's docstring):\n" + "\n".join(sorted(upward))


def test_the_only_cycle_is_the_partition_registry():
    graph = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    bad = [c for c in cycles if not all(m.startswith(ALLOWED_CYCLE_PREFIX) for m in c)]
    assert not bad, f"import cycles outside the partition registry: {bad}"
    assert any("verl_focal.partition.base" in c for c in cycles)  # the map is read: the known cycle is found


def test_below_the_glue_nothing_imports_verl():
    """verl is imported by ``integration`` (the glue), the demo and the entry points only; ``transfer_queue`` also by
    the v1 trainer's row reader (``step.tq_rows``)."""
    glue = ("verl_focal.integration", "verl_focal.lab.demo", "verl_focal.plugin", "verl_focal.check",
            "verl_focal.main_ppo", "verl_focal.cli")
    found = []
    for name, path in _modules().items():
        if name.startswith(glue):
            continue
        allowed = ("transfer_queue",) if name == "verl_focal.step.tq_rows" else ()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            found += [f"{name} imports {m}" for m in mods
                      if (m == "verl" or m.startswith(("verl.", "transfer_queue"))) and m.split(".")[0] not in allowed]
    assert not found, "\n".join(found)


def _in_lab(module: str) -> bool:
    return module == LAB or module.startswith(LAB + ".")


def test_nothing_outside_the_lab_imports_the_lab():
    """The training wing never loads the lab, not even lazily: a trainer process needs none of its modules or its
    ``[lab]`` extra (matplotlib, scikit-learn)."""
    graph = _graph()
    assert any(_in_lab(a) for a in graph) and any(_in_lab(b) for deps in graph.values() for b in deps)  # map is read
    inward = [f"{a} -> {b}" for a, deps in graph.items() if not _in_lab(a) for b in deps if _in_lab(b)]
    assert not inward, "imports of verl_focal.lab from outside it:\n" + "\n".join(sorted(inward))


def test_only_the_cli_dispatch_and_the_old_paths_name_lab_modules():
    """A module named as a string (``importlib.import_module("verl_focal.lab...")``) is an import the AST walk above
    cannot see: outside the lab, only :data:`NAME_THE_LAB` may write one, and each of them does."""
    import re

    name = re.compile(r"verl_focal\.lab(\.\w+)*")
    found: dict[str, set[str]] = {}
    for mod, path in _modules().items():
        if _in_lab(mod):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and name.fullmatch(node.value):
                found.setdefault(mod, set()).add(node.value)
    assert set(found) == set(NAME_THE_LAB), {m: sorted(v) for m, v in found.items() if m not in NAME_THE_LAB}
    import verl_focal._moved as moved
    import verl_focal.cli as cli

    assert found["verl_focal.cli"] == {m for m, _ in cli.COMMANDS.values() if _in_lab(m)}
    assert found["verl_focal._moved"] == {m for m in moved.MOVED.values() if _in_lab(m)}


def test_the_statistics_are_plain_numpy_and_scipy():
    """``stats`` (shared by the demo and ``eval frontier``) imports numpy, scipy and the standard library only."""
    found = []
    for name, path in _modules().items():
        if not name.startswith("verl_focal.lab.stats"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            found += [f"{name} imports {m}" for m in mods if m.split(".")[0] in ("torch", "verl", "matplotlib")]
    assert not found, "\n".join(found)
