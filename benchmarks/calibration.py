"""Speed of the report's calibration (stability.statistics.calibration) at the study's design vs a
per-simulation loop over the same statistics.

The design: 5 languages × 2 setups × 34 cells (33 categories + overall) × 6 seeds, a failed run in 3 of
the 10 conditions; every cell in the four worlds, `--sims` simulated studies per world; the pairs are
the second setup against the first per language and cell (coverage of σ ratio and Δ, and the A/A
tests with almost stochastic order at the report's 100 iterations). The baseline computes each
simulated study's statistics one study at a time with the report's own per-cell functions (scipy's
bootstrap, the interval functions, scipy's tests, deepsig's `aso`), on a few studies, extrapolated
to the design's count. Both run in this process; the closed-form intervals of the baseline's studies
are checked against the vectorised ones on the same draws.

    python benchmarks/calibration.py [--sims 1000] [--loop-studies 20]
"""
from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
from scipy import stats

from stability.statistics import calibration as sim
from stability.statistics.intervals import (bonett_ratio_interval, bonett_std_interval, chi2_std_interval,
                                            f_ratio_interval)
from stability.statistics.rates import wilson_interval
from stability.statistics.spread import std_interval, std_ratio_interval

LANGS, SETUPS, CELLS, SEEDS = 5, 2, 34, 6


def design(rng: np.random.Generator) -> tuple[sim.Fit, sim.Fit, sim.Fit]:
    """(every condition's cells, the first setup's cells, the second's), seed MCCs of the study's spread."""
    conditions = LANGS * SETUPS
    mean = rng.uniform(0.1, 0.6, (conditions, CELLS))
    spread = rng.uniform(0.02, 0.1, (conditions, CELLS))
    scores = mean[..., None] + spread[..., None] * rng.standard_normal((conditions, CELLS, SEEDS))
    failed = np.zeros(scores.shape, bool)
    failed[::3, :, 0] = True   # one failed run (MCC 0 everywhere) in 3 of the 10 conditions
    scores[failed] = 0.0
    flat = sim.fit(scores.reshape(-1, SEEDS), failed.reshape(-1, SEEDS))
    first = np.arange(conditions) % SETUPS == 0
    sides = [sim.fit(scores[side].reshape(-1, SEEDS), failed[side].reshape(-1, SEEDS)) for side in (first, ~first)]
    return flat, sides[0], sides[1]


def vectorised(cells: sim.Fit, first: sim.Fit, second: sim.Fit, sims: int, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    timings = {}
    for name, run in (("conditions", lambda: sim.calibrate_conditions(cells, sims=sims, confidence=0.95, rng=rng)),
                      ("pairs", lambda: sim.calibrate_pairs(first, second, sims=sims, confidence=0.95, rng=rng,
                                                            aso_iterations=100))):
        wall, cpu = time.perf_counter(), time.process_time()
        run()
        timings[name] = time.perf_counter() - wall
        timings[f"{name} cpu"] = time.process_time() - cpu
    return timings


def loop_condition(study: np.ndarray, failed: np.ndarray) -> list:
    """One simulated study of one condition, statistic by statistic as the report computes a cell."""
    n = len(study)
    s = np.std(study, ddof=1)
    half = stats.t.ppf(0.975, n - 1) * s / np.sqrt(n)
    mean = stats.bootstrap((study,), np.mean, n_resamples=sim.SIM_RESAMPLES, method="percentile",
                           random_state=0).confidence_interval
    return [std_interval(study, sim.SIM_RESAMPLES, 0.95, 0), chi2_std_interval(s, n, 0.95),
            bonett_std_interval(study, 0.95), (study.mean() - half, study.mean() + half), mean,
            wilson_interval(failed.sum(), n, 0.95)]


def loop_pair(a: np.ndarray, b: np.ndarray, deepsig) -> list:
    """One simulated study of a pair: the ratio's and Δ's intervals, then the A/A tests with deepsig's ASO."""
    out = [std_ratio_interval(b, a, sim.SIM_RESAMPLES, 0.95, 0),
           f_ratio_interval(np.std(b, ddof=1), len(b), np.std(a, ddof=1), len(a), 0.95),
           bonett_ratio_interval(b, a, 0.95), stats.ttest_ind(b, a, equal_var=False).confidence_interval(0.95),
           stats.ttest_ind(b, a, equal_var=False).pvalue, stats.levene(a, b, center="median").pvalue]
    out.append(deepsig.aso(b, a, confidence_level=0.95, num_bootstrap_iterations=100, show_progress=False, seed=0))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sims", type=int, default=1000, help="simulated studies per world")
    parser.add_argument("--loop-studies", type=int, default=20, help="studies run by the loop baseline, per kind")
    args = parser.parse_args()
    import deepsig

    rng = np.random.default_rng(0)
    cells, first, second = design(rng)
    timings = vectorised(cells, first, second, args.sims, 1)
    fast = timings["conditions"] + timings["pairs"]

    worlds = len(sim.WORLDS)
    condition_studies = len(cells.mean) * args.sims * worlds
    pair_studies = len(first.mean) * args.sims * worlds   # each: a coverage study and an A/A study
    sample = sim.draw("normal", cells.rows(np.arange(1)), SEEDS, args.loop_studies, np.random.default_rng(2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        looped = [loop_condition(study, failed) for study, failed in zip(sample.samples[0], sample.failed[0])]
        per_condition = (time.perf_counter() - start) / args.loop_studies
        k = max(1, args.loop_studies // 4)
        start = time.perf_counter()
        for a, b in zip(sample.samples[0][:k], sample.samples[0][k:2 * k]):
            loop_pair(a, b, deepsig)
        per_pair = (time.perf_counter() - start) / k
    slow = per_condition * condition_studies + 2 * per_pair * pair_studies
    chi2 = np.array([row[1] for row in looped], float)
    vector = np.stack(chi2_std_interval(sample.samples[0].std(axis=-1, ddof=1), SEEDS, 0.95), axis=-1)
    load = os.getloadavg()[0]

    print(f"design: {LANGS} languages x {SETUPS} setups x {CELLS} cells x {SEEDS} seeds, {args.sims} studies per "
          f"world x {worlds} worlds ({condition_studies} condition studies, {pair_studies} pairs x 2)")
    print(f"vectorised: {fast:.1f} s wall ({timings['conditions']:.1f} s conditions, {timings['pairs']:.1f} s pairs "
          f"with ASO); {timings['conditions cpu'] + timings['pairs cpu']:.1f} s CPU on {os.cpu_count()} cores, "
          f"load average {load:.1f}")
    print(f"loop: {1000 * per_condition:.1f} ms per condition study, {1000 * per_pair:.0f} ms per pair study "
          f"(deepsig aso, 100 iterations), measured on {args.loop_studies} and {k}; extrapolated {slow / 3600:.1f} h")
    print(f"speed-up: {slow / fast:.0f}x")
    print(f"max |vectorised - loop| of the χ² bounds on the same studies: {np.abs(vector - chi2).max():.1e}")


if __name__ == "__main__":
    main()
