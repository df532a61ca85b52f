"""What verl-focal costs a process that imports verl: ``import verl`` with and without the plugin.

    python bench/import_cost.py [--runs 7] [--registry] [--ray]

verl imports its ``verl.plugins`` entry points inside ``import verl``, in every process (driver,
TaskRunner, each Ray worker).  Each run here is a fresh interpreter that times ``import verl`` and counts
``sys.modules``; "with" is the default environment, "without" sets ``VERL_USE_EXTERNAL_PLUGINS=none``
(verl then loads no plugin).  The two are interleaved (with, without, with, ...) so that a machine that
slows down during the bench slows both alike; the table gives medians and the ratio of medians.

``--registry`` adds the same pair for ``import verl; import verl.trainer.ppo.core_algos`` (a process that
reaches verl's estimator registry, where ours are registered).  ``--ray`` adds one Ray worker start: the
wall time from asking Ray for a fresh actor (``num_cpus=1``) to that actor having imported verl, with and
without the plugin in the worker's environment (``runtime_env`` env_vars), interleaved, one Ray session, after
one untimed actor (Ray's own first start).
It is the closest honest figure for "every Ray worker pays it" on two cores: Ray's own start-up is in both
arms alike.  Run it on an idle machine; the figures in docs/bench.md name the date and the load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

_PROBE = r"""
import json, sys, time
t0 = time.perf_counter()
import verl
{extra}
dt = time.perf_counter() - t0
tops = {{}}
for name in sys.modules:
    tops[name.split(".")[0]] = tops.get(name.split(".")[0], 0) + 1
print(json.dumps({{"s": dt, "modules": len(sys.modules), "tops": tops}}))
"""

_NO_PLUGIN = {"VERL_USE_EXTERNAL_PLUGINS": "none"}


def probe(extra: str = "", plugin: bool = True) -> dict:
    """One fresh interpreter: seconds to import verl (and ``extra``), the modules then loaded, by top package."""
    env = dict(os.environ)
    env.pop("VERL_USE_EXTERNAL_PLUGINS", None)
    if not plugin:
        env.update(_NO_PLUGIN)
    out = subprocess.run([sys.executable, "-c", _PROBE.format(extra=extra)], env=env, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def pair(label: str, runs: int, extra: str = "") -> None:
    """Interleaved runs with and without the plugin; prints medians, their ratio, and the extra modules."""
    res: dict[bool, list[dict]] = {True: [], False: []}
    for _ in range(runs):
        for plugin in (True, False):
            res[plugin].append(probe(extra, plugin))
    med = {p: statistics.median(r["s"] for r in res[p]) for p in res}
    mods = {p: res[p][-1]["modules"] for p in res}
    print(f"{label}: with plugin {med[True]:.2f} s, without {med[False]:.2f} s (medians of {runs}), "
          f"ratio {med[True] / med[False]:.3f}; modules {mods[True]} vs {mods[False]} (+{mods[True] - mods[False]})")
    extra_tops = {k: v - res[False][-1]["tops"].get(k, 0) for k, v in res[True][-1]["tops"].items()}
    extra_tops = {k: v for k, v in sorted(extra_tops.items(), key=lambda kv: -kv[1]) if v > 0}
    print(f"  extra modules by package: {extra_tops or 'none'}")


def ray_pair(runs: int) -> None:
    """Wall time from asking Ray for a fresh actor to that actor having imported verl, with and without the plugin."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)

    @ray.remote(num_cpus=1)
    class Worker:
        def ready(self) -> int:
            import verl  # noqa: F401

            return len(sys.modules)

    times: dict[bool, list[float]] = {True: [], False: []}
    mods: dict[bool, int] = {}
    try:
        warm = Worker.remote()  # Ray's own first start (its worker pool), paid once outside the timed pairs
        ray.get(warm.ready.remote())
        ray.kill(warm)
        for _ in range(runs):
            for plugin in (True, False):
                env = {} if plugin else _NO_PLUGIN
                t0 = time.perf_counter()
                actor = Worker.options(runtime_env={"env_vars": env} if env else None).remote()
                mods[plugin] = ray.get(actor.ready.remote())
                times[plugin].append(time.perf_counter() - t0)
                ray.kill(actor)
    finally:
        ray.shutdown()
    med = {p: statistics.median(times[p]) for p in times}
    print(f"Ray worker start + import verl: with plugin {med[True]:.2f} s, without {med[False]:.2f} s (medians of "
          f"{runs}), ratio {med[True] / med[False]:.3f}; modules {mods[True]} vs {mods[False]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7, help="interleaved pairs per figure (default 7)")
    ap.add_argument("--registry", action="store_true", help="also: import verl + verl.trainer.ppo.core_algos")
    ap.add_argument("--ray", action="store_true", help="also: one Ray worker start (see the module docstring)")
    args = ap.parse_args()
    print(f"python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.2f}")
    pair("import verl", args.runs)
    if args.registry:
        pair("import verl + core_algos", args.runs, extra="import verl.trainer.ppo.core_algos")
    if args.ray:
        ray_pair(args.runs)


if __name__ == "__main__":
    main()
