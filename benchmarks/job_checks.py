"""What checking a sweep's jobs costs before it starts: `job_configs` as shipped (`resolve_job`) vs
the same with each job's config resolved whole by `OmegaConf.resolve` (Hydra's help texts included,
Hydra's node first), alternating, in one process.

    python benchmarks/job_checks.py [--preset translate_train] [--rounds 3]

Prints each round's seconds both ways, the jobs, the milliseconds a job and the ratio whole/shipped.
Nothing runs or is written: the plan of `nli-stability train experiment=<preset> data.root=/data`.
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

from omegaconf import OmegaConf

from stability.core import jobs


def _check(arguments: list[str], resolve) -> tuple[float, int]:
    """Seconds of one `job_configs` with `resolve` as its resolution, and the jobs it checked."""
    shipped = jobs.resolve_job
    jobs.resolve_job = resolve
    try:
        started = time.perf_counter()
        configs = jobs.job_configs(arguments)
        return time.perf_counter() - started, len(configs)
    finally:
        jobs.resolve_job = shipped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="translate_train", help="an experiment preset (default: 192 jobs)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds each way, alternating (>= 1)")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    os.chdir(tempfile.mkdtemp())      # job_configs checks the folders a sweep would write: none here
    arguments = [f"experiment={args.preset}", "data.root=/data"]
    _check(arguments, jobs.resolve_job)       # warm: imports, Hydra's config search path
    seconds: dict[str, list[float]] = {"shipped": [], "whole": []}
    for _ in range(args.rounds):
        for name, resolve in (("shipped", jobs.resolve_job), ("whole", OmegaConf.resolve)):
            spent, count = _check(arguments, resolve)
            seconds[name].append(spent)
    for name, rounds in seconds.items():
        print(f"{name:8s} {', '.join(f'{s:.2f}' for s in rounds)} s: {1000 * statistics.median(rounds) / count:.1f} ms "
              f"a job ({count} jobs, median)")
    print(f"ratio whole/shipped {statistics.median(seconds['whole']) / statistics.median(seconds['shipped']):.2f}")


if __name__ == "__main__":
    main()
