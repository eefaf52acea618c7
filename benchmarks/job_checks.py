"""What checking a sweep's jobs costs before it starts: `job_configs` as shipped against the same with
one of its two measured choices undone, alternating, in one process:

- `whole`: each job's config resolved whole by `OmegaConf.resolve` (Hydra's help texts included,
  Hydra's node first) instead of `resolve_job`;
- `deepcopy`: each job's config a deepcopy of its composed base instead of unpickled from the base
  pickled once.

    python benchmarks/job_checks.py [--preset translate_train] [--rounds 3]

Prints each round's seconds each way, the jobs, the milliseconds a job and the ratio of each
alternative to the shipped path. Nothing runs or is written: the plan of
`nli-stability train experiment=<preset> data.root=/data`.
"""
from __future__ import annotations

import argparse
import copy
import os
import pickle
import statistics
import tempfile
import time
from contextlib import contextmanager, nullcontext
from types import SimpleNamespace
from typing import Callable, ContextManager, Iterator

from omegaconf import OmegaConf

from stability.core import jobs


@contextmanager
def _replaced(name: str, value: object) -> Iterator[None]:
    """`stability.core.jobs.<name>` is `value` meanwhile."""
    shipped = getattr(jobs, name)
    setattr(jobs, name, value)
    try:
        yield
    finally:
        setattr(jobs, name, shipped)


# `pickle` as `_compose_jobs` uses it, but each "unpickling" a deepcopy of the base itself
_DEEPCOPY = SimpleNamespace(HIGHEST_PROTOCOL=pickle.HIGHEST_PROTOCOL, dumps=lambda obj, protocol: obj,
                            loads=copy.deepcopy)
ARMS: dict[str, Callable[[], ContextManager[None]]] = {
    "shipped": nullcontext,
    "whole": lambda: _replaced("resolve_job", OmegaConf.resolve),
    "deepcopy": lambda: _replaced("pickle", _DEEPCOPY),
}


def _check(arguments: list[str], arm: str) -> tuple[float, int]:
    """Seconds of one `job_configs` the way `arm` does it, and the jobs it checked."""
    with ARMS[arm]():
        started = time.perf_counter()
        configs = jobs.job_configs(arguments)
        return time.perf_counter() - started, len(configs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="translate_train", help="an experiment preset (default: 192 jobs)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds each way, alternating (>= 1)")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    os.chdir(tempfile.mkdtemp())      # job_configs checks the folders a sweep would write: none here
    arguments = [f"experiment={args.preset}", "data.root=/data"]
    _check(arguments, "shipped")      # warm: imports, Hydra's config search path
    seconds: dict[str, list[float]] = {arm: [] for arm in ARMS}
    for _ in range(args.rounds):
        for arm in ARMS:
            spent, count = _check(arguments, arm)
            seconds[arm].append(spent)
    for arm, rounds in seconds.items():
        print(f"{arm:8s} {', '.join(f'{s:.2f}' for s in rounds)} s: {1000 * statistics.median(rounds) / count:.1f} ms "
              f"a job ({count} jobs, median)")
    shipped = statistics.median(seconds["shipped"])
    print(", ".join(f"ratio {arm}/shipped {statistics.median(seconds[arm]) / shipped:.2f}" for arm in ARMS
                    if arm != "shipped"))


if __name__ == "__main__":
    main()
