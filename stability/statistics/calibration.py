"""How often the seed-level intervals and tests are wrong at the user's own design, by simulation.

A seed study has 3–10 seeds per condition, and at those sizes an interval labelled "95 %" may
cover far less often, a test at α = 0.05 may reject far more often. This module measures both at
the design the runs have, in *worlds* with a known truth fitted to each cell (a condition's seed
scores in one category):

- `normal`: seeds normal with the cell's mean and σ (of its non-failed runs);
- `heavy`: Laplace seeds with the same mean and σ (kurtosis 6: a few seeds far out);
- `failed`: the normal world with the condition's observed failed-run rate mixed in, a failed seed
  scoring chance (MCC 0); only where some run failed;
- `resampling`: seeds drawn with replacement from the cell's own runs (failed ones included): no
  model at all; its truth is that empirical distribution (σ with ddof = 0).

For two conditions (a method against the reference, B against A) every world is fitted to each side
for intervals of their difference; the *A/A* checks of the tests draw both pseudo-conditions from
the first condition's world (the resampling world: from its own runs), so every rejection is a
false positive.

Measured, each over `sims` simulated studies with its Monte-Carlo interval (Wilson, `rates`):
coverage of σ's interval (percentile bootstrap, χ², Bonett: `intervals`), the mean's (t,
percentile bootstrap over seeds), the failed rate's (Wilson), the σ ratio's (percentile bootstrap,
F, Bonett) and the difference of means' (Welch, percentile bootstrap); the false-positive rate of
Welch's t-test, the Brown–Forsythe test, the seed bootstrap's two-sided p-value (the form of
`multiplicity.p_two_sided`) and almost stochastic order at ε_min < 0.2 (`aso_core`), each with the
threshold (p-value, ε) that would give 5 % false positives; and for a comparison's whole family of
cells the A/A rate of some cell significant before and after Holm and BH (`family_false_positives`).
Everything is vectorised over cells × simulations (one batch
per seed count): the bootstraps are one matrix product with shared resampling counts
(`bootstrap.draw_counts`), so no Python loop runs per simulation. The `normal` and `heavy` worlds
are location-scale families, and every interval here is location-scale equivariant (the σ ratio's
in each side's scale, the tests invariant when both sides share a world): their coverage and
false-positive rates are the same for every cell with the same seed counts, so those worlds are
simulated once per seed count in standard units and shared by the cells (the difference of means,
whose coverage depends on the two sides' σ ratio, is simulated per cell from the same draws). The percentile bootstraps inside
the simulation draw `resamples` resamples, each study its own. The report passes its own
`bootstrap`, so the interval simulated is the one it prints (the count changes the interval: at 3
normal seeds, 4,000 studies, the mean's percentile interval covers 71 % with 200 resamples, 74 %
with 1,000; σ's 44 % with either), and costs what its own bootstraps cost; `SIM_RESAMPLES`, the
report's default, where a caller gives no count. With none (`bootstrap=0`) the report prints no
percentile interval and no bootstrap test, and none is simulated.
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable
import numpy as np
import pandas as pd
from scipy import stats

from stability.statistics.aso_core import epsilon_min
from stability.statistics.bootstrap import draw_counts
from stability.statistics.intervals import (MIN_SEEDS_BONETT, bonett_ratio_interval, bonett_std_interval,
                                            chi2_std_interval, f_ratio_interval)
from stability.statistics.rates import wilson_interval
from stability.statistics.spread import brown_forsythe_p

WORLDS = ("normal", "heavy", "failed", "resampling")
CHANCE = 0.0             # a failed run's score: MCC at chance
SIM_RESAMPLES = 1000     # percentile-bootstrap resamples inside each simulated study: the report's default `bootstrap`
ASO_THRESHOLD = 0.2      # deepsig's recommended ε_min threshold
ALPHA = 0.05
FLOOR = 0.90             # below this measured coverage no interval is printed
MAX_SEEDS = 40           # the largest seed count `seeds_for_coverage` tries
_CHUNK = 4_000_000       # floats per bootstrap block (cells × sims × resamples)

COVERAGE, FALSE_POSITIVES = "coverage", "false positives"
SIGMA, MEAN, FAILED_RATE = "σ", "mean MCC", "failed rate"
RATIO, DELTA = "σ ratio", "Δ mean"
WELCH_TEST, SPREAD_TEST, BOOTSTRAP_TEST, ASO = "Welch's t-test", "Brown–Forsythe", "bootstrap Δ p", "ASO ε_min"
FAMILY_TEST = "bootstrap Δ p, whole family"   # any cell of a comparison's family, after its correction
UNCORRECTED, HOLM, BH = "uncorrected", "Holm", "BH"
CALIBRATION_COLUMNS = ["statistic", "method", "world", "measure", "nominal", "sims", "hits", "measured", "mc_low",
                       "mc_high", "threshold"]


@dataclass(frozen=True)
class Fit:
    """Cells (rows) of one condition each, fitted: every run's score and failed verdict, and the
    mean and σ of the non-failed runs (the normal and heavy worlds' parameters)."""

    scores: np.ndarray     # (cells, runs), no NaN
    failed: np.ndarray     # (cells, runs) bool
    mean: np.ndarray       # (cells,)
    std: np.ndarray        # (cells,)

    @property
    def failed_rate(self) -> np.ndarray:
        return self.failed.mean(axis=-1)

    def rows(self, index: np.ndarray) -> Fit:
        return Fit(self.scores[index], self.failed[index], self.mean[index], self.std[index])


def fit(scores: np.ndarray, failed: np.ndarray) -> Fit:
    """The worlds' parameters of each row: mean and σ (ddof = 1) of its non-failed runs (NaN with
    fewer than two)."""
    scores, failed = np.asarray(scores, float), np.asarray(failed, bool)
    kept = np.where(failed, np.nan, scores)
    count = (~failed).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, np.nansum(kept, axis=-1) / np.maximum(count, 1), np.nan)
        squares = np.nansum((kept - mean[:, None]) ** 2, axis=-1)
        std = np.where(count > 1, np.sqrt(squares / np.maximum(count - 1, 1)), np.nan)
    return Fit(scores, failed, mean, std)


UNIT = Fit(np.zeros((1, 1)), np.zeros((1, 1), bool), np.zeros(1), np.ones(1))   # standard units
SCALE_FREE = ("normal", "heavy")


@dataclass(frozen=True)
class Draw:
    """Simulated studies of one world: (cells, sims, n) scores, which seeds failed, and the truth."""

    samples: np.ndarray
    failed: np.ndarray
    mean: np.ndarray      # (cells,) the world's true mean
    std: np.ndarray       # (cells,) the world's true σ
    rate: np.ndarray      # (cells,) the world's true failed-run rate


def fitted(world: str, cells: Fit) -> np.ndarray:
    """Which cells `world` can be fitted to: σ > 0 of the non-failed runs (resampling: of all runs);
    the failed world only where some run failed."""
    if world == "resampling":
        return cells.scores.std(axis=-1) > 0
    spread = np.nan_to_num(cells.std) > 0
    return spread & (cells.failed_rate > 0) if world == "failed" else spread


def draw(world: str, cells: Fit, n: int, sims: int, rng: np.random.Generator, shared: bool = False) -> Draw:
    """`sims` studies of `n` seeds per cell of `cells` in `world`. `shared`: the cells are categories of
    one condition, so a simulated run is one run of every cell: which of the condition's runs it
    resamples, and whether it failed, is the same for all of them (the normal noise stays independent)."""
    count = len(cells.mean)
    shape = (count, sims, n)
    per_run = (1, sims, n) if shared else shape
    rate = cells.failed_rate
    if world == "resampling":
        picks = np.broadcast_to(rng.integers(0, cells.scores.shape[1], per_run), shape)
        rows = np.arange(count)[:, None, None]
        return Draw(cells.scores[rows, picks], cells.failed[rows, picks], cells.scores.mean(axis=-1),
                    cells.scores.std(axis=-1), rate)
    noise = rng.laplace(0, 1 / np.sqrt(2), shape) if world == "heavy" else rng.standard_normal(shape)
    samples = cells.mean[:, None, None] + cells.std[:, None, None] * noise
    if world in SCALE_FREE:
        return Draw(samples, np.zeros(shape, bool), cells.mean, cells.std, np.zeros(count))
    if world != "failed":
        raise ValueError(f"no world {world!r}")
    failed = rng.random(per_run) < rate[:, None, None]
    truth_std = np.sqrt((1 - rate) * cells.std ** 2 + rate * (1 - rate) * (cells.mean - CHANCE) ** 2)
    return Draw(np.where(failed, CHANCE, samples), failed, (1 - rate) * cells.mean + rate * CHANCE, truth_std, rate)


def _counts(rng: np.random.Generator, sims: int, n: int, resamples: int) -> np.ndarray:
    """(sims, resamples, n) resampling counts: each simulated study its own `resamples` resamples,
    shared by the cells. One set shared by every study would bias all of them alike (measured: 200
    resamples shared by 4,000 studies of 3 seeds gave the mean's percentile interval 70 % coverage,
    200 per study 71 %)."""
    return draw_counts(rng, sims * resamples, n).reshape(sims, resamples, n).astype(float)


def _resampled_means(samples: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The mean of every resample: (cells, sims, resamples), from the resampling counts (sims,
    resamples, n). einsum, not `@`: with an inner dimension of a few seeds BLAS is slower (measured 4x
    on 2 cores)."""
    return np.einsum("csn,sbn->csb", samples, counts) / samples.shape[-1]


def _resampled_stds(samples: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """σ (ddof = 1) of every resample: (cells, sims, resamples), about each study's own mean so the
    sums stay exact."""
    n = samples.shape[-1]
    centred = samples - samples.mean(axis=-1, keepdims=True)
    sums = np.einsum("csn,sbn->csb", centred, counts)
    squares = np.einsum("csn,sbn->csb", centred * centred, counts)
    sums *= sums
    sums /= -n
    sums += squares
    np.maximum(sums, 0, out=sums)
    sums /= n - 1
    return np.sqrt(sums, out=sums)


def _each_block(work: Callable[[slice], None], cells: int, sims: int, per_study: int) -> None:
    """`work(block)` for blocks of cells of about `_CHUNK` floats each, on every core: numpy's
    einsum, sort and partition release the GIL, so threads share the blocks (2 cores: 1.7x)."""
    size = max(1, _CHUNK // max(sims * per_study, 1))
    blocks = [slice(start, start + size) for start in range(0, cells, size)]
    if not blocks:
        return
    with ThreadPoolExecutor(max_workers=min(len(blocks), os.cpu_count() or 1)) as pool:
        for done in pool.map(work, blocks):
            assert done is None


def _percentile(values: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """The percentile interval along the last axis (linear interpolation, numpy's default), NaN
    resamples left out and ∞ kept as `spread.std_ratio_interval` does. Without NaN a partial
    partition at the four order statistics needed; `np.nanquantile` would loop over rows in Python."""
    alpha = 1 - confidence
    size = values.shape[-1]
    if not np.isnan(values).any():
        positions = [q * (size - 1) for q in (alpha / 2, 1 - alpha / 2)]
        kth = sorted({min(int(np.floor(p)) + step, size - 1) for p in positions for step in (0, 1)})
        ordered = np.partition(values, kth, axis=-1)
        bounds = []
        for position in positions:
            below = int(np.floor(position))
            low, high = ordered[..., below], ordered[..., min(below + 1, size - 1)]
            with np.errstate(invalid="ignore"):
                bounds.append(np.where(np.isinf(high), high, low + (position - below) * (high - low)))
        return bounds[0], bounds[1]
    ordered = np.sort(values, axis=-1)
    valid = (~np.isnan(ordered)).sum(axis=-1, keepdims=True)
    bounds = []
    for q in (alpha / 2, 1 - alpha / 2):
        position = q * np.maximum(valid - 1, 0)
        below = np.floor(position).astype(int)
        above = np.minimum(below + 1, np.maximum(valid - 1, 0))
        low, high = (np.take_along_axis(ordered, index, axis=-1)[..., 0] for index in (below, above))
        with np.errstate(invalid="ignore"):
            value = np.where(np.isinf(high), high, low + (position - below)[..., 0] * (high - low))
        bounds.append(np.where(valid[..., 0] > 0, value, np.nan))
    return bounds[0], bounds[1]


def _covers(low: np.ndarray, high: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """(cells, sims) bool: the interval holds the truth; an undefined interval does not."""
    truth = truth[:, None]
    with np.errstate(invalid="ignore"):
        return (low <= truth) & (truth <= high)


Measured = dict[tuple[str, str], np.ndarray]   # (statistic, method) → (cells, sims) bool


def condition_coverage(sample: Draw, confidence: float, rng: np.random.Generator, resamples: int) -> Measured:
    """Coverage events of every single-condition interval in one world's studies, the percentile
    bootstrap's with `resamples` resamples (none with 0)."""
    samples = sample.samples
    cells, sims, n = samples.shape
    std = samples.std(axis=-1, ddof=1)
    mean = samples.mean(axis=-1)
    boot_std, boot_mean = np.zeros((cells, sims), bool), np.zeros((cells, sims), bool)
    if resamples:
        counts = _counts(rng, sims, n, resamples)

        def work(block: slice) -> None:
            boot_std[block] = _covers(*_percentile(_resampled_stds(samples[block], counts), confidence),
                                      sample.std[block])
            boot_mean[block] = _covers(*_percentile(_resampled_means(samples[block], counts), confidence),
                                       sample.mean[block])

        _each_block(work, cells, sims, resamples)
    hits: Measured = {(SIGMA, "percentile"): boot_std,
                      (SIGMA, "chi2"): _covers(*chi2_std_interval(std, n, confidence), sample.std)}
    if n >= MIN_SEEDS_BONETT:
        hits[(SIGMA, "bonett")] = _covers(*bonett_std_interval(samples, confidence), sample.std)
    half = stats.t.ppf(1 - (1 - confidence) / 2, n - 1) * std / np.sqrt(n)
    hits[(MEAN, "t")] = _covers(mean - half, mean + half, sample.mean)
    hits[(MEAN, "percentile")] = boot_mean
    if (sample.rate > 0).any():
        low, high = wilson_interval(sample.failed.sum(axis=-1), np.full((cells, sims), n), confidence)
        hits[(FAILED_RATE, "wilson")] = _covers(low, high, sample.rate)
    return hits if resamples else _without_percentile(hits)


def _without_percentile(measured: Measured) -> Measured:
    """`measured` but for the percentile bootstrap's events: with no resamples there are none."""
    return {key: events for key, events in measured.items() if key[1] != "percentile"}


def ratio_coverage(reference: Draw, method: Draw, confidence: float, rng: np.random.Generator,
                   resamples: int) -> Measured:
    """Coverage events of the σ ratio's intervals (method / reference), each side its own world; the
    percentile bootstrap's with `resamples` resamples (none with 0)."""
    a, b = reference.samples, method.samples
    cells, sims, n_a = a.shape
    n_b = b.shape[-1]
    truth = method.std / np.where(reference.std > 0, reference.std, np.nan)
    boot = np.zeros((cells, sims), bool)
    if resamples:
        counts_a, counts_b = _counts(rng, sims, n_a, resamples), _counts(rng, sims, n_b, resamples)

        def work(block: slice) -> None:
            stds_a, stds_b = _resampled_stds(a[block], counts_a), _resampled_stds(b[block], counts_b)
            with np.errstate(invalid="ignore", divide="ignore"):
                ratios = np.where(stds_a > 0, stds_b / stds_a, np.where(stds_b > 0, np.inf, np.nan))
            boot[block] = _covers(*_percentile(ratios, confidence), truth[block])

        _each_block(work, cells, sims, resamples)
    std_a, std_b = a.std(axis=-1, ddof=1), b.std(axis=-1, ddof=1)
    hits: Measured = {(RATIO, "percentile"): boot,
                      (RATIO, "F"): _covers(*f_ratio_interval(std_b, n_b, std_a, n_a, confidence), truth)}
    if min(n_a, n_b) >= MIN_SEEDS_BONETT:
        hits[(RATIO, "bonett")] = _covers(*bonett_ratio_interval(b, a, confidence), truth)
    return hits if resamples else _without_percentile(hits)


def delta_coverage(reference: Draw, method: Draw, confidence: float, rng: np.random.Generator, resamples: int,
                   scales: tuple[np.ndarray, np.ndarray] | None = None) -> Measured:
    """Coverage events of the intervals of Δ = method − reference (Welch, percentile bootstrap over
    each side's seeds with `resamples` resamples, none with 0). `scales`: the two draws are one
    standard-unit study each, and every cell's sides are them times its (σ_reference, σ_method)."""
    a, b = reference.samples, method.samples
    truth = method.mean - reference.mean if scales is None else np.zeros(len(scales[0]))
    boot = _delta_percentile(a, b, truth, confidence, rng, resamples, scales) if resamples else None
    if scales is not None:
        a, b = scales[0][:, None, None] * a, scales[1][:, None, None] * b
    with np.errstate(invalid="ignore", divide="ignore"), np.testing.suppress_warnings() as quiet:
        quiet.filter(RuntimeWarning)   # studies whose seeds are all equal (all failed): no interval
        welch = stats.ttest_ind(b, a, axis=-1, equal_var=False).confidence_interval(confidence)
    hits: Measured = {(DELTA, "welch"): _covers(welch.low, welch.high, truth)}
    if boot is not None:
        hits[(DELTA, "percentile")] = boot
    return hits


def _delta_percentile(a: np.ndarray, b: np.ndarray, truth: np.ndarray, confidence: float, rng: np.random.Generator,
                      resamples: int, scales: tuple[np.ndarray, np.ndarray] | None) -> np.ndarray:
    """(cells, sims) coverage events of Δ's percentile bootstrap, `resamples` resamples of each side's
    seeds; with `scales` (`delta_coverage`) each resample's mean of the standard-unit draws is scaled
    per cell, not recomputed."""
    counts_a = _counts(rng, a.shape[1], a.shape[-1], resamples)
    counts_b = _counts(rng, b.shape[1], b.shape[-1], resamples)
    if scales is not None:
        scale_a, scale_b = (scale[:, None, None] for scale in scales)
        unit_a, unit_b = _resampled_means(a, counts_a), _resampled_means(b, counts_b)
    cells, sims = len(truth), a.shape[1]
    boot = np.zeros((cells, sims), bool)

    def work(block: slice) -> None:
        if scales is None:
            deltas = _resampled_means(b[block], counts_b) - _resampled_means(a[block], counts_a)
        else:
            deltas = scale_b[block] * unit_b - scale_a[block] * unit_a
        boot[block] = _covers(*_percentile(deltas, confidence), truth[block])

    _each_block(work, cells, sims, resamples)
    return boot


@dataclass(frozen=True)
class Tests:
    """A/A rejections per test, (cells, sims) bool, and per test the A/A studies' statistic whose
    small values reject (p-values; ε_min for ASO), (cells, sims)."""

    rejected: Measured
    statistics: dict[tuple[str, str], np.ndarray]


def bootstrap_p(a: np.ndarray, b: np.ndarray, rng: np.random.Generator, resamples: int = SIM_RESAMPLES) -> np.ndarray:
    """(cells, sims) two-sided p of the seed bootstrap of Δ = mean(b) − mean(a) (the form of
    `multiplicity.p_two_sided`), each study its own `resamples` resamples of each side's seeds."""
    cells, sims, n_a = a.shape
    counts_a, counts_b = _counts(rng, sims, n_a, resamples), _counts(rng, sims, b.shape[-1], resamples)
    p = np.full((cells, sims), np.nan)

    def work(block: slice) -> None:
        deltas = _resampled_means(b[block], counts_b) - _resampled_means(a[block], counts_a)
        below, above = (deltas <= 0).sum(axis=-1), (deltas >= 0).sum(axis=-1)
        p[block] = np.minimum(1, 2 * (np.minimum(below, above) + 1) / (resamples + 1))

    _each_block(work, cells, sims, resamples)
    return p


def family_false_positives(units: list[tuple[np.ndarray, int]], *, sims: int, rng: np.random.Generator,
                           resamples: int = SIM_RESAMPLES) -> Measured:
    """A/A events, (1, sims), of a comparison's whole family of cells as the tests sections correct it:
    any cell with the seed bootstrap's p (`resamples` resamples) < 0.05 `uncorrected`, after `Holm`
    (family-wise error), after `BH` (any discovery; under the A/A null every one is false).

    `units` are the A sides of the family, each its (cells, runs) scores (runs in seed order, shared by
    its cells) and the B side's run count. In the resampling world both pseudo-sides draw whole runs
    with replacement from the unit's own runs, every category of a run together, so the family's cells
    keep the correlation their shared seeds give them (a per-cell simulation cannot)."""
    p_values = []
    for scores, n_b in units:
        runs = scores.shape[1]
        picks_a, picks_b = rng.integers(0, runs, (sims, runs)), rng.integers(0, runs, (sims, n_b))
        p_values.append(bootstrap_p(scores[:, picks_a], scores[:, picks_b], rng, resamples))
    p = np.concatenate(p_values, axis=0).T            # (sims, family)
    family = p.shape[1]
    ordered = np.sort(p, axis=1)
    events = {UNCORRECTED: ordered[:, 0] < ALPHA, HOLM: ordered[:, 0] < ALPHA / family,
              BH: (ordered <= ALPHA * np.arange(1, family + 1) / family).any(axis=1)}
    return {(FAMILY_TEST, method): hits[None, :] for method, hits in events.items()}


def aa_tests(first: Draw, second: Draw, confidence: float, rng: np.random.Generator,
             aso_iterations: int | None, resamples: int) -> Tests:
    """Rejections of every seed-level test at α = 0.05 when both sides come from one world (A/A), the
    seed bootstrap's with `resamples` resamples (not measured with 0); ε_min (the smaller of both
    directions) of almost stochastic order with `aso_iterations` bootstrap iterations (None: not
    measured)."""
    a, b = first.samples, second.samples
    cells, sims, n_a = a.shape
    n_b = b.shape[-1]
    with np.errstate(invalid="ignore", divide="ignore"), np.testing.suppress_warnings() as quiet:
        quiet.filter(RuntimeWarning)   # constant samples (all failed): NaN p, no rejection
        welch = stats.ttest_ind(b, a, axis=-1, equal_var=False).pvalue
        spread = brown_forsythe_p(a, b)
    values = {(WELCH_TEST, "welch"): welch, (SPREAD_TEST, "brown-forsythe"): spread}
    if resamples:
        values[(BOOTSTRAP_TEST, "percentile")] = bootstrap_p(a, b, rng, resamples)
    rejected = {key: value < ALPHA for key, value in values.items()}
    if aso_iterations:
        draws_a = rng.integers(0, n_a, (aso_iterations, n_a))
        draws_b = rng.integers(0, n_b, (aso_iterations, n_b))
        eps = np.empty((cells, sims))

        def dominance(block: slice) -> None:
            a_over_b, b_over_a = epsilon_min(a[block], b[block], draws_a, draws_b, confidence)
            eps[block] = np.minimum(a_over_b, b_over_a)

        _each_block(dominance, cells, sims, aso_iterations * (n_a + n_b))
        key = (ASO, f"ε_min < {ASO_THRESHOLD:g}")
        rejected[key], values[key] = eps < ASO_THRESHOLD, eps
    return Tests(rejected, values)


def eps_threshold(values: np.ndarray, rate: float = ALPHA) -> np.ndarray:
    """Per cell, the largest threshold such that at most `rate` of the A/A studies have a statistic
    (ε_min, or a p-value) below it: the ⌊rate · sims⌋-th smallest (0-based; NaN counts as never
    rejecting); NaN where that is 0 (then more than `rate` of the studies sit at 0, and no threshold
    above 0 keeps false positives at `rate`)."""
    k = int(np.floor(rate * values.shape[-1]))
    threshold = np.partition(np.nan_to_num(values, nan=np.inf), k, axis=-1)[..., k]
    return np.where(threshold > 0, threshold, np.nan)


def rows(measured: Measured, cells: np.ndarray, world: str, measure: str, nominal: float) -> pd.DataFrame:
    """Long rows (cell, statistic, method, world, …) of measured rates with Monte-Carlo intervals
    (Wilson, 95 %), for the cell numbers `cells`; events of one standard-unit row apply to all."""
    frames = []
    for (statistic, method), events in measured.items():
        hits = np.broadcast_to(events.sum(axis=-1), len(cells))
        sims = np.full(len(cells), events.shape[-1])
        low, high = wilson_interval(hits, sims, 0.95)
        frames.append(pd.DataFrame({"cell": cells, "statistic": statistic, "method": method, "world": world,
                                    "measure": measure, "nominal": nominal, "sims": sims, "hits": hits,
                                    "measured": hits / sims, "mc_low": low, "mc_high": high, "threshold": np.nan}))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["cell", *CALIBRATION_COLUMNS])


def calibrate_conditions(cells: Fit, *, sims: int, confidence: float, rng: np.random.Generator,
                         worlds: tuple[str, ...] = WORLDS, resamples: int = SIM_RESAMPLES) -> pd.DataFrame:
    """Coverage of the single-condition intervals per cell of `cells` (all with the same run count)
    in every world, the percentile bootstrap's with `resamples` resamples: long rows with `cell` the
    row of `cells`."""
    n = cells.scores.shape[1]
    frames = []
    for world in worlds:
        index = np.flatnonzero(fitted(world, cells))
        if not len(index):
            continue
        sample = draw(world, UNIT if world in SCALE_FREE else cells.rows(index), n, sims, rng)
        frames.append(rows(condition_coverage(sample, confidence, rng, resamples), index, world, COVERAGE, confidence))
    return pd.concat(frames, ignore_index=True) if frames else rows({}, np.array([]), "", COVERAGE, confidence)


def calibrate_pairs(reference: Fit, method: Fit, *, sims: int, confidence: float, rng: np.random.Generator,
                    aso_iterations: int | None, worlds: tuple[str, ...] = WORLDS,
                    resamples: int = SIM_RESAMPLES) -> pd.DataFrame:
    """Per cell (row of both fits): coverage of the σ-ratio and Δ intervals (each side its own
    world) and the A/A false-positive rates of the tests (both sides from `reference`'s world, with
    `method`'s run count); `threshold` is the p-value (ASO: the ε_min) below which a test rejects 5 %
    of the A/A studies, the level that would make it hold its nominal rate here. The percentile
    bootstrap's intervals and test draw `resamples` resamples (none with 0)."""
    n_a, n_b = reference.scores.shape[1], method.scores.shape[1]
    frames = []
    for world in worlds:
        if world == "failed":   # a side without failed runs is its normal world
            spread = fitted("normal", reference) & fitted("normal", method)
            both = np.flatnonzero(spread & (fitted(world, reference) | fitted(world, method)))
        else:
            both = np.flatnonzero(fitted(world, reference) & fitted(world, method))
        own = np.flatnonzero(fitted(world, reference))
        if world in SCALE_FREE:
            unit_a, unit_b = draw(world, UNIT, n_a, sims, rng), draw(world, UNIT, n_b, sims, rng)
            ratio = ratio_coverage(unit_a, unit_b, confidence, rng, resamples)
            delta = delta_coverage(unit_a, unit_b, confidence, rng, resamples, (reference.std[both], method.std[both]))
            tests = aa_tests(unit_a, unit_b, confidence, rng, aso_iterations, resamples)
        else:
            a, b = draw(world, reference.rows(both), n_a, sims, rng), draw(world, method.rows(both), n_b, sims, rng)
            ratio = ratio_coverage(a, b, confidence, rng, resamples)
            delta = delta_coverage(a, b, confidence, rng, resamples)
            null_a = draw(world, reference.rows(own), n_a, sims, rng)
            tests = aa_tests(null_a, draw(world, reference.rows(own), n_b, sims, rng), confidence, rng, aso_iterations,
                             resamples)
        if len(both):
            frames += [rows(ratio, both, world, COVERAGE, confidence), rows(delta, both, world, COVERAGE, confidence)]
        if len(own):
            measured = rows(tests.rejected, own, world, FALSE_POSITIVES, ALPHA)
            for (statistic, name), values in tests.statistics.items():
                chosen = ((measured["statistic"] == statistic) & (measured["method"] == name)).to_numpy()
                measured.loc[chosen, "threshold"] = np.broadcast_to(eps_threshold(values), len(own))
            frames.append(measured)
    return pd.concat(frames, ignore_index=True) if frames else rows({}, np.array([]), "", COVERAGE, confidence)


def seeds_for_coverage(cell: Fit, statistic: str, method: str, world: str, *, sims: int, confidence: float,
                       rng: np.random.Generator, floor: float = FLOOR, resamples: int = SIM_RESAMPLES) -> float:
    """The fewest seeds (more than the cell's runs) at which `statistic`'s `method` interval covers
    at least `floor` in `world` fitted to the single cell `cell`; NaN beyond `MAX_SEEDS`."""
    for n in range(cell.scores.shape[1] + 1, MAX_SEEDS + 1):
        sample = draw(world, UNIT if world in SCALE_FREE else cell, n, sims, rng)
        events = condition_coverage(sample, confidence, rng, resamples).get((statistic, method))
        if events is not None and events.mean() >= floor:
            return float(n)
    return float("nan")
