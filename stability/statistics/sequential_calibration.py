"""The sequential rules' error rates in simulated seed studies: the calibration's worlds
(`calibration.draw`: normal, heavy, failed, resampling) run through the same stopping rules the
adaptive sweep uses (`sequential`).

Public API:

- `sequential_tests(a, b, looks, bounds, alpha=0.05) -> SequentialTests`: for two arms' seed scores
  (cells, sims, seeds), seeds in the order they are run, the rejections of the group-sequential
  Welch test (looks at `looks` seeds per arm, `bounds` from `sequential.boundaries`), of naive
  repeated fixed-n Welch tests at the same looks (reject when any look's p < α: what a researcher
  who peeks does), and the seeds per arm each study spent.
- `decision_false_positives(world, cells, looks, bounds, *, sims, rng) -> SequentialTests`: the same
  in A/A studies, both arms from `cells`' world (normal and heavy in standard units, shared by every
  cell: the tests are location-scale invariant), so every rejection is a false positive.
- `family_false_differ(world, cells, looks, bounds, *, sims, rng) -> ndarray`: the A/A rejections of
  a condition's cells tested together (a decision goal's coarse categories), each simulated run one
  run of every cell, so the family's rate (any cell) is measured with the cells' own dependence.
- `precision_stops(samples, looks, target, statistic, method, confidence, groups=None) -> ndarray`:
  the look (0-based) at which each study stops for precision: the first whose interval is at most
  `target` wide, in every cell of its group (a condition's categories) when `groups` is given, else
  the last look.
- `coverage_at_stop(samples, looks, stops, truth, statistic, method, confidence) -> ndarray`: whether
  the interval at each study's stopping look holds the truth.
- `precision_coverage(world, cells, looks, target, *, statistic, method, confidence, sims, rng,
  groups=None) -> PrecisionRun`: both, in `world` fitted to each cell (the target is absolute, so
  no standard units here).
- `decision_rows(...)`, `precision_rows(...)`: the calibration's long rows (`calibration.rows`,
  Wilson Monte-Carlo intervals) of these events, for the report's calibration table.

Why a simulation: the boundaries are exact for normal z-statistics with known variance; a seed study
has Welch's t with σ estimated from 3–10 seeds, non-normal seeds and failed runs, and a precision
rule that stops when the sample σ is small narrows the interval exactly when it is too narrow. How
much either costs is measured here at the runs' own design, never assumed.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats

from stability.statistics.calibration import (ALPHA, COVERAGE, DELTA, FALSE_POSITIVES, SCALE_FREE, UNIT, Fit, draw,
                                              rows)
from stability.statistics.sequential import interval_bounds, stopping_look, welch_z

SEQUENTIAL, NAIVE = "sequential", "naive repeated"


@dataclass(frozen=True)
class SequentialTests:
    """(cells, sims) events of one batch of simulated two-arm studies."""

    sequential: np.ndarray   # bool: the group-sequential test rejected
    naive: np.ndarray        # bool: some look's fixed-n Welch p < α
    seeds: np.ndarray        # int: seeds per arm when the sequential test stopped


@dataclass(frozen=True)
class PrecisionRun:
    """(cells, sims) events of studies stopped for precision."""

    covered: np.ndarray      # bool: the interval at the stop holds the truth
    seeds: np.ndarray        # int: seeds at the stop


def _looks(looks: ArrayLike) -> np.ndarray:
    looks = np.asarray(looks, int)
    if looks.ndim != 1 or len(looks) == 0 or looks[0] < 2 or np.any(np.diff(looks) <= 0):
        raise ValueError(f"looks must be increasing seed counts of at least 2, got {looks.tolist()}")
    return looks


def sequential_tests(a: np.ndarray, b: np.ndarray, looks: ArrayLike, bounds: ArrayLike,
                     alpha: float = ALPHA) -> SequentialTests:
    """Both tests on arms `a`, `b` (cells, sims, ≥ last look seeds), the first k seeds at a look of k."""
    looks = _looks(looks)
    if len(bounds) != len(looks):
        raise ValueError(f"{len(looks)} looks but {len(bounds)} bounds")
    z = np.stack([welch_z(a[..., :k], b[..., :k]) for k in looks], axis=-1)
    stop = stopping_look(z, bounds)
    with np.errstate(invalid="ignore"):
        naive = (2 * stats.norm.sf(np.abs(z)) < alpha).any(axis=-1)
    return SequentialTests(stop < len(looks), naive, looks[np.minimum(stop, len(looks) - 1)])


def decision_false_positives(world: str, cells: Fit, looks: ArrayLike, bounds: ArrayLike, *, sims: int,
                             rng: np.random.Generator, alpha: float = ALPHA) -> SequentialTests:
    """A/A studies of `world`: one row in standard units for the normal and heavy worlds, else a row
    per cell of `cells`."""
    source = UNIT if world in SCALE_FREE else cells
    n = int(_looks(looks)[-1])
    first, second = draw(world, source, n, sims, rng), draw(world, source, n, sims, rng)
    return sequential_tests(first.samples, second.samples, looks, bounds, alpha)


def family_false_differ(world: str, cells: Fit, looks: ArrayLike, bounds: ArrayLike, *, sims: int,
                        rng: np.random.Generator) -> np.ndarray:
    """(cells, sims) rejections in A/A studies of a family of cells tested together, as a decision
    goal tests a pair's categories: both arms from `cells`' world, each simulated run a run of every
    cell (`draw(shared=True)`: its resampled run and its failure shared, the cells' correlation in the
    resampling world kept); normal and heavy cells independent, in standard units. A study declares the
    pair to differ where any of its cells rejects."""
    count = len(cells.mean)
    source = (Fit(np.zeros((count, 1)), np.zeros((count, 1), bool), np.zeros(count), np.ones(count))
              if world in SCALE_FREE else cells)
    n = int(_looks(looks)[-1])
    first, second = (draw(world, source, n, sims, rng, shared=True) for _ in range(2))
    return sequential_tests(first.samples, second.samples, looks, bounds).sequential


def _intervals(samples: np.ndarray, looks: np.ndarray, statistic: str, method: str,
               confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """(low, high), each (cells, sims, looks): the interval on the first k seeds at each look."""
    bounds = [interval_bounds(samples[..., :k], statistic, method, confidence) for k in looks]
    return np.stack([low for low, _ in bounds], axis=-1), np.stack([high for _, high in bounds], axis=-1)


def precision_stops(samples: np.ndarray, looks: ArrayLike, target: float, statistic: str = "mean",
                    method: str = "t", confidence: float = 0.95, groups: ArrayLike | None = None) -> np.ndarray:
    """(cells, sims) the stopping look of each study; with `groups` (cells,) labels, a group's cells
    stop together, at the first look where all of them are narrow enough (an undefined interval never
    is)."""
    looks = _looks(looks)
    low, high = _intervals(samples, looks, statistic, method, confidence)
    with np.errstate(invalid="ignore"):
        narrow = (high - low) <= target                     # (cells, sims, looks)
    if groups is not None:
        groups = np.asarray(groups)
        for label in np.unique(groups):
            members = groups == label
            narrow[members] = narrow[members].all(axis=0)
    return np.where(narrow.any(axis=-1), narrow.argmax(axis=-1), len(looks) - 1)


def coverage_at_stop(samples: np.ndarray, looks: ArrayLike, stops: np.ndarray, truth: np.ndarray,
                     statistic: str = "mean", method: str = "t", confidence: float = 0.95) -> np.ndarray:
    """(cells, sims) the interval at each study's stopping look holds the cell's `truth` (cells,)."""
    low, high = _intervals(samples, _looks(looks), statistic, method, confidence)
    pick = stops[..., None]
    low, high = np.take_along_axis(low, pick, -1)[..., 0], np.take_along_axis(high, pick, -1)[..., 0]
    with np.errstate(invalid="ignore"):
        return (low <= truth[:, None]) & (truth[:, None] <= high)


def precision_coverage(world: str, cells: Fit, looks: ArrayLike, target: float, *, statistic: str = "mean",
                       method: str = "t", confidence: float = 0.95, sims: int, rng: np.random.Generator,
                       groups: ArrayLike | None = None) -> PrecisionRun:
    """Studies of `world` fitted to each cell, stopped for precision, and their coverage at the stop."""
    looks = _looks(looks)
    sample = draw(world, cells, int(looks[-1]), sims, rng)
    stops = precision_stops(sample.samples, looks, target, statistic, method, confidence, groups)
    truth = sample.mean if statistic == "mean" else sample.std
    covered = coverage_at_stop(sample.samples, looks, stops, truth, statistic, method, confidence)
    return PrecisionRun(covered, looks[stops])


def decision_rows(tests: SequentialTests, cells: np.ndarray, world: str, spending: str,
                  alpha: float = ALPHA) -> pd.DataFrame:
    """The calibration's long rows of the A/A rejections: the sequential test (method: the spending)
    and naive repeated testing."""
    measured = {(DELTA, f"{SEQUENTIAL} {spending}"): tests.sequential, (DELTA, NAIVE): tests.naive}
    return rows(measured, cells, world, FALSE_POSITIVES, alpha)


def precision_rows(run: PrecisionRun, cells: np.ndarray, world: str, statistic: str, method: str,
                   confidence: float) -> pd.DataFrame:
    """The calibration's long rows of the coverage under the precision rule."""
    return rows({(statistic, f"{method}, stopped for precision"): run.covered}, cells, world, COVERAGE, confidence)
