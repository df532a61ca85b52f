"""The README's `eval frontier` figure is what the lines the README names produce: they are run here as written (in a
scratch folder) and the figure they write is compared pixel for pixel with docs/figures/eval_frontier_example.png.
When the figure's content changes (a new line under the axes, say), this fails until the figure is made again with
those lines."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import numpy as np
from PIL import Image

from verl_focal.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]


def test_the_readme_figure_is_what_its_lines_produce(tmp_path, monkeypatch):
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Equal pass@1 on your own runs"):]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    lines = [ln.split("#")[0].strip() for ln in block.splitlines() if ln.strip()]
    cp = next(ln for ln in lines if ln.startswith("cp "))
    figure = shlex.split(cp)[1]
    assert shlex.split(cp)[2] == "docs/figures/eval_frontier_example.png"
    monkeypatch.chdir(tmp_path)
    for ln in lines:
        if ln.startswith("verl-focal "):
            assert cli_main(shlex.split(ln)[1:]) == 0, ln
    made = np.asarray(Image.open(tmp_path / figure).convert("RGB"))
    kept = np.asarray(Image.open(ROOT / "docs" / "figures" / "eval_frontier_example.png").convert("RGB"))
    assert made.shape == kept.shape and np.array_equal(made, kept), \
        f"docs/figures/eval_frontier_example.png is not what `{lines[1]}` draws; run the README's lines again"
