"""Holm's adjustment as the report makes it (`stability.statistics.multiplicity.holm`) against
statsmodels' `multipletests(method="holm")`, whose Holm branch runs `gc.collect()` on every call, in a
process holding what a report's process holds (torch, transformers, pandas, the report's modules) and
a family the size of the study's (5 languages × 33 fine categories), alternating, with the values
checked equal.

    python benchmarks/holm.py [--family 165] [--calls 20] [--rounds 3]

Prints each round's milliseconds a call both ways and the ratio statsmodels/ours (medians).
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch  # noqa: F401  (the heap of a report's process: what gc.collect() walks)
import transformers.modeling_utils  # noqa: F401
from statsmodels.stats.multitest import multipletests

import stability.report.cli  # noqa: F401
from stability.statistics.multiplicity import holm


def _milliseconds(adjust, p: np.ndarray, calls: int) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        adjust(p)
    return 1000 * (time.perf_counter() - started) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", type=int, default=165, help="p-values in the family (>= 1)")
    parser.add_argument("--calls", type=int, default=20, help="calls timed per round (>= 1)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds each way, alternating (>= 1)")
    args = parser.parse_args()
    if min(args.family, args.calls, args.rounds) < 1:
        parser.error("--family, --calls and --rounds must be at least 1")
    p = np.random.default_rng(0).random(args.family) ** 3
    np.testing.assert_array_equal(holm(p), multipletests(p, method="holm")[1])
    arms = {"ours": holm, "statsmodels": lambda values: multipletests(values, method="holm")[1]}
    times: dict[str, list[float]] = {name: [] for name in arms}
    for _ in range(args.rounds):
        for name, adjust in arms.items():
            times[name].append(_milliseconds(adjust, p, args.calls))
    for name, rounds in times.items():
        print(f"{name:11s} {', '.join(f'{ms:.3f}' for ms in rounds)} ms a call")
    print(f"ratio statsmodels/ours {statistics.median(times['statsmodels']) / statistics.median(times['ours']):.0f}")


if __name__ == "__main__":
    main()
