"""When to stop adding seeds: group-sequential boundaries with Lan–DeMets alpha spending, and the
precision rule, as pure array functions the adaptive sweep and the report share.

Public API (arrays in, arrays out; nothing here reads or writes files):

- `SPENDING`: the spending functions, ("obrien-fleming", "pocock").
- `spent(fractions, alpha, spending) -> ndarray`: cumulative one-sided α spent by each information
  fraction (`alpha` one-sided; a two-sided design spends `spent(t, α/2)` on each side).
- `boundaries(fractions, alpha=0.05, spending="obrien-fleming", sides=2) -> ndarray`: the critical
  |z| (sides=1: z) of each look; a look that spends nothing has ∞.
- `crossing_probabilities(bounds, fractions, drift=0.0, sides=2) -> ndarray`: the probability of
  stopping first at each look (drift 0: the α each look spends; a drift θ, E Z_k = θ √t_k: power).
- `information_fractions(looks) -> ndarray`: seeds per arm at each look over the last look's.
- `welch_z(a, b) -> ndarray`: Welch's t of mean(b) − mean(a) per row (seeds on the last axis), as
  the normal z with the same two-sided p-value.
- `compare_at_looks(a, b, looks, bounds) -> Comparison`: the decision rule on seed runs: per row
  (a category) of two arms' seed scores in run order, Welch z at each look both arms have reached
  (the first n_k seeds of each), and the decision ("reject", "accept", "continue") with the look it
  stopped at.
- `stopping_look(z, bounds) -> ndarray`: per row of z-statistics at the looks taken so far, the first
  look (0-based) whose |z| reaches its bound; the number of looks taken where none does.
- `decision(z, bounds) -> str`: "reject" (a boundary crossed), "accept" (every look taken, none
  crossed: equal at the design's α), or "continue".
- `interval_bounds(scores, statistic, method, confidence) -> (low, high)` and `interval_width(...)`:
  the interval of "mean" (method "t") or "σ" ("chi2", "bonett") per row of seed scores.
- `condition_open(widths, seeds, target, max_seeds) -> ndarray`: a condition still needs seeds:
  some category's interval is wider than `target` (or undefined) and it has fewer than `max_seeds`.

**The boundaries.** Z_1, …, Z_K at information fractions t_1 < … < t_K have, under the null, the
canonical joint distribution (independent increments, Cov(Z_j, Z_k) = √(t_j / t_k)). Look k's
critical value c_k solves P(|Z_1| < c_1, …, |Z_{k−1}| < c_{k−1}, |Z_k| ≥ c_k) = α(t_k) − α(t_{k−1})
(Lan & DeMets 1983, Biometrika 70:659–663), the probability computed by the recursive numerical
integration of Armitage, McPherson & Rowe (1969, JRSS A 132:235–244), as Jennison & Turnbull (2000,
*Group Sequential Methods with Applications to Clinical Trials*, ch. 19) lay it out: the sub-density
of Z_{k−1} on its continuation region, integrated by Simpson's rule against the normal transition
to Z_k, and c_k found by `scipy.optimize.brentq`. Spending functions (one-sided, level a):
O'Brien–Fleming type a(t) = 2 − 2 Φ(Φ⁻¹(1 − a/2) / √t), Pocock type a(t) = a ln(1 + (e − 1) t). A
two-sided design of level α is symmetric and spends a = α/2 on each side, as rpact's and gsDesign's
two-sided designs do (so its bounds at 3 equal looks, α = 0.05, are rpact's one-sided α = 0.025
ones to four decimals: 3.7103, 2.5114, 1.9930).

Why not a library: no maintained Python package computes these. On PyPI, `gsdesign` (0.1.5, alpha)
has gsDesign's integration grid but no spending functions or boundaries; `sequential-analysis` is
AGPL-3.0, which this Apache-2.0 project cannot depend on; the R packages (rpact, gsDesign, ldbounds)
are the references the tests check these bounds against.

**Seeds, not patients.** A look is a number of seeds per arm fixed before the first run; its
information fraction is n_k / n_K (the variance of a difference of means is ∝ 1/n). The statistic
is Welch's t, whose σ is estimated from 3–10 seeds: compared with a normal boundary it would reject
far too often, so each look's t is turned into the z with the same two-sided p-value (the
significance-level approach Jennison & Turnbull give for t-tests), and the calibration simulator
(`sequential_calibration`) measures the false-positive rate that results in the runs' own worlds.

**Precision.** A condition (lang × setup × variant) stops when the calibrated interval of the chosen
statistic is at most `target` wide in every category, or at its maximum seeds; the widths are those
of the intervals the report prints (`intervals`: χ², Bonett; the t interval of the mean), and the
simulator measures their coverage under this stopping rule, which can fall below nominal because
stopping when the sample σ happens to be small also narrows the interval.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats
from scipy.optimize import brentq

from stability.statistics.intervals import bonett_std_interval, chi2_std_interval

SPENDING = ("obrien-fleming", "pocock")
STATISTICS = {"mean": ("t",), "σ": ("chi2", "bonett")}   # statistic → its interval methods
REJECT, ACCEPT, CONTINUE = "reject", "accept", "continue"
GRID_PER_UNIT = 100      # Simpson points per unit of z: bounds within 1e-6 of rpact's (tests)
_FAR = 10.0              # the one-sided continuation region's lower end: P(Z < −10) ≈ 8e-24
_LARGEST = 40.0          # no bound is larger (a look that spends < 1e-300 gets ∞)


def spent(fractions: ArrayLike, alpha: float, spending: str) -> np.ndarray:
    """Cumulative one-sided α spent by each information fraction in (0, 1] (a(1) = `alpha`)."""
    t = np.asarray(fractions, float)
    if spending == "obrien-fleming":
        return 2 - 2 * stats.norm.cdf(stats.norm.isf(alpha / 2) / np.sqrt(t))
    if spending == "pocock":
        return alpha * np.log1p((np.e - 1) * t)
    raise ValueError(f"spending {spending!r} is not one of {SPENDING}")


def information_fractions(looks: ArrayLike) -> np.ndarray:
    """Seeds per arm at each look over the last look's: the information fractions of a difference
    of means with equal arms."""
    looks = np.asarray(looks, float)
    if looks.ndim != 1 or len(looks) == 0 or looks[0] < 2 or np.any(np.diff(looks) <= 0):
        raise ValueError(f"looks must be increasing seed counts of at least 2, got {looks.tolist()}")
    return looks / looks[-1]


def _check_fractions(fractions: ArrayLike) -> np.ndarray:
    t = np.asarray(fractions, float)
    if t.ndim != 1 or len(t) == 0 or t[0] <= 0 or t[-1] > 1 or np.any(np.diff(t) <= 0):
        raise ValueError(f"information fractions must increase within (0, 1], got {t.tolist()}")
    return t


def _simpson(low: float, high: float) -> tuple[np.ndarray, np.ndarray]:
    """Simpson's rule on [low, high]: an odd number of points, about `GRID_PER_UNIT` a unit."""
    count = 2 * max(int(np.ceil((high - low) * GRID_PER_UNIT / 2)), 1) + 1
    z = np.linspace(low, high, count)
    weights = np.ones(count)
    weights[1:-1:2], weights[2:-1:2] = 4, 2
    return z, weights * (z[1] - z[0]) / 3


class _Recursion:
    """The sub-density of Z_k on the continuation region of looks 1..k (none before look 1)."""

    def __init__(self, drift: float, sides: int) -> None:
        if sides not in (1, 2):
            raise ValueError(f"sides must be 1 or 2, got {sides}")
        self.drift, self.sides = drift, sides
        self.z = self.mass = None   # grid and Simpson weight × density; None before the first look
        self.t = 0.0

    def _transition(self, t: float) -> tuple[np.ndarray, float]:
        """Mean (per grid point, or the first look's) and σ of Z_k given Z_{k−1}."""
        increment = t - self.t
        if self.z is None:
            return np.array([self.drift * np.sqrt(t)]), 1.0
        return (self.z * np.sqrt(self.t) + self.drift * increment) / np.sqrt(t), np.sqrt(increment / t)

    def crossing(self, bound: float, t: float) -> float:
        """P(still going at look k − 1 and crossing `bound` at look k, information fraction t)."""
        mean, sd = self._transition(t)
        weight = np.ones(1) if self.mass is None else self.mass
        beyond = stats.norm.sf((bound - mean) / sd)
        if self.sides == 2:
            beyond = beyond + stats.norm.cdf((-bound - mean) / sd)
        return float(weight @ beyond)

    def advance(self, bound: float, t: float) -> None:
        """Move to look k: the sub-density of Z_k on its continuation region below `bound`."""
        mean, sd = self._transition(t)
        # beyond _FAR of the drift's mean Z_k has no mass worth a grid point (P < 1e-23): a look whose
        # bound is larger (or ∞, one that spends nothing) is integrated to there, not to its bound,
        # so a design of many looks costs a grid of 20 units a look, not 80 (and its square in memory)
        shift = self.drift * np.sqrt(t)
        top = min(bound, _FAR + max(0.0, shift))
        low = -top if self.sides == 2 else -_FAR + min(0.0, shift)
        grid, weights = _simpson(low, top)
        weight = np.ones(1) if self.mass is None else self.mass
        density = stats.norm.pdf((grid[:, None] - mean[None, :]) / sd) @ weight / sd
        self.z, self.mass, self.t = grid, weights * density, t


def boundaries(fractions: ArrayLike, alpha: float = 0.05, spending: str = "obrien-fleming",
               sides: int = 2) -> np.ndarray:
    """The critical value of each look: reject at look k when |Z_k| ≥ c_k (sides=1: Z_k ≥ c_k).
    `alpha` is the design's level (two-sided: α/2 spent on each side). The last look spends
    a(t_K), all of α when t_K = 1."""
    t = _check_fractions(fractions)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    side = alpha / 2 if sides == 2 else alpha
    increments = np.diff(sides * spent(t, side, spending), prepend=0.0)
    recursion, bounds = _Recursion(0.0, sides), []
    for fraction, increment in zip(t, increments):
        if increment <= 1e-300 or recursion.crossing(_LARGEST, fraction) >= increment:
            bound = np.inf
        else:
            bound = brentq(lambda c: recursion.crossing(c, fraction) - increment, 0.0, _LARGEST, xtol=1e-12)
        bounds.append(bound)
        recursion.advance(bound, fraction)
    return np.array(bounds)


def crossing_probabilities(bounds: ArrayLike, fractions: ArrayLike, drift: float = 0.0, sides: int = 2) -> np.ndarray:
    """P(the first crossing is at look k) for each look, with E Z_k = drift · √t_k."""
    t = _check_fractions(fractions)
    recursion, out = _Recursion(drift, sides), []
    for bound, fraction in zip(np.asarray(bounds, float), t):
        out.append(recursion.crossing(min(bound, _LARGEST), fraction))
        recursion.advance(bound, fraction)
    return np.array(out)


def welch_z(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """Welch's t of mean(b) − mean(a) per row (seeds on the last axis, rows broadcast), as the normal
    z with the same two-sided p-value and sign; NaN where it is undefined (every seed equal on both
    sides), which crosses no boundary."""
    with np.errstate(invalid="ignore", divide="ignore"), np.testing.suppress_warnings() as quiet:
        quiet.filter(RuntimeWarning)
        test = stats.ttest_ind(np.asarray(b, float), np.asarray(a, float), axis=-1, equal_var=False)
    return np.sign(test.statistic) * stats.norm.isf(test.pvalue / 2)


def stopping_look(z: ArrayLike, bounds: ArrayLike) -> np.ndarray:
    """Per row of z at the looks taken (last axis, at most len(bounds)), the first look (0-based)
    where |z| ≥ its bound; the number of looks taken where none does (NaN never crosses)."""
    z = np.asarray(z, float)
    bounds = np.asarray(bounds, float)[: z.shape[-1]]
    with np.errstate(invalid="ignore"):
        crossed = np.abs(z) >= bounds
    if z.shape[-1] == 0:
        return np.zeros(z.shape[:-1], int)
    return np.where(crossed.any(axis=-1), crossed.argmax(axis=-1), z.shape[-1])


def decision(z: ArrayLike, bounds: ArrayLike) -> str:
    """One comparison's state after the looks in `z`: "reject" at the first crossing, "accept" once
    every look is taken without one, "continue" otherwise."""
    z = np.atleast_1d(np.asarray(z, float))
    if len(z) > len(bounds):
        raise ValueError(f"{len(z)} looks taken, the design has {len(bounds)}")
    if stopping_look(z, bounds) < len(z):
        return REJECT
    return ACCEPT if len(z) == len(bounds) else CONTINUE


@dataclass(frozen=True)
class Comparison:
    """Where two arms' comparisons stand after the looks both arms have reached."""

    z: np.ndarray            # (rows, looks taken) Welch z at each look taken
    decision: np.ndarray     # (rows,) "reject", "accept" or "continue"
    stopped_at: np.ndarray   # (rows,) the look (0-based) that rejected; the looks taken where none did


def compare_at_looks(a: ArrayLike, b: ArrayLike, looks: ArrayLike, bounds: ArrayLike) -> Comparison:
    """The sequential decision per row of two arms' seed scores (seeds on the last axis, in the order
    they ran; rows broadcast): look k takes the first `looks[k]` seeds of each arm, once both have
    them. Seeds beyond the last look reached are not used until the next look."""
    a, b = np.atleast_1d(np.asarray(a, float)), np.atleast_1d(np.asarray(b, float))
    looks = np.asarray(looks, int)
    information_fractions(looks)
    if len(bounds) != len(looks):
        raise ValueError(f"{len(looks)} looks but {len(bounds)} bounds")
    reached = looks[looks <= min(a.shape[-1], b.shape[-1])]
    shape = np.broadcast_shapes(a.shape[:-1], b.shape[:-1])
    z = np.stack([welch_z(a[..., :k], b[..., :k]) for k in reached], axis=-1) if len(reached) \
        else np.zeros((*shape, 0))
    z = np.broadcast_to(z, (*shape, len(reached)))
    stopped = stopping_look(z, bounds)
    last = ACCEPT if len(reached) == len(looks) else CONTINUE
    return Comparison(z, np.where(stopped < len(reached), REJECT, last), stopped)


def interval_bounds(scores: ArrayLike, statistic: str = "mean", method: str = "t",
                    confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """The interval of `statistic` per row of seed scores (seeds on the last axis, no NaN): the mean
    by t, σ by χ² or Bonett (`intervals`); NaN where undefined (< 2 seeds, Bonett below 5)."""
    if method not in STATISTICS.get(statistic, ()):
        raise ValueError(f"no interval {statistic!r} by {method!r}: choose from {STATISTICS}")
    scores = np.asarray(scores, float)
    n = scores.shape[-1]
    if n < 2:
        nan = np.full(scores.shape[:-1], np.nan)
        return nan, nan.copy()
    std = scores.std(axis=-1, ddof=1)
    if statistic == "mean":
        half = stats.t.ppf(1 - (1 - confidence) / 2, n - 1) * std / np.sqrt(n)
        mean = scores.mean(axis=-1)
        return mean - half, mean + half
    if method == "chi2":
        return chi2_std_interval(std, n, confidence)
    return bonett_std_interval(scores, confidence)


def interval_width(scores: ArrayLike, statistic: str = "mean", method: str = "t",
                   confidence: float = 0.95) -> np.ndarray:
    """high − low of `interval_bounds` per row."""
    low, high = interval_bounds(scores, statistic, method, confidence)
    return high - low


def condition_open(widths: ArrayLike, seeds: ArrayLike, target: float, max_seeds: int) -> np.ndarray:
    """Per condition (rows of `widths`, its categories on the last axis; `seeds` its seeds per
    condition): still open when some category's interval is wider than `target` or undefined, and it
    has fewer than `max_seeds` seeds."""
    widths = np.asarray(widths, float)
    with np.errstate(invalid="ignore"):
        wide = ~(widths <= target)
    return wide.any(axis=-1) & (np.asarray(seeds) < max_seeds)
