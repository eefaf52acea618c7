"""A/A false-positive rates of the data maps' Fisher tests at their own design, by simulation.

The data maps test, per annotator feature of a group's training items, "the ambiguous share is the same
with and without the feature" by Fisher's exact test, Holm over the group's features. Fisher's test
conditions on the margins and is exact for independent items, but the training pairs are not all
independent: pairs that share a premise or a hypothesis share much of what makes them ambiguous, and
the features that come from that sentence. This module measures, at the group's design (its items,
their features, their clusters, the observed ambiguous share), how often the test rejects when no
feature goes with ambiguity, in two *item worlds*:

- `independent items`: every item ambiguous on its own, with the observed share (Fisher's own null);
- `clustered items`: every item cluster (items sharing a sentence, `clusters.sentence_clusters`)
  ambiguous as a whole with the observed share: the features stay the items' own, so a feature that
  comes with a cluster's sentence is tested as if the cluster's items were independent; only where
  some cluster has more than one item.

Measured per group and world, each with its Monte-Carlo interval (Wilson, 95 %): `uncorrected`, the
share of the group's (feature, study) tests with p < 0.05 (tests of one study share its items, so the
interval, which counts them as independent, is a little narrow), and `Holm`, the share of studies in
which any feature's Holm-adjusted p is below 0.05 (the family-wise rate the section's Holm controls).

Vectorised over the simulated studies: the studies' ambiguous flags are one (sims, items) array, the
2×2 tables of every feature one matrix product, and Fisher's two-sided p-value `fisher_two_sided`
computed from the hypergeometric pmf on each feature's support at once (scipy's `fisher_exact`
takes one table per call: for 200 studies × 40 features × 5 groups that is 40,000 calls, the measured
reason for this function; it equals scipy's on every table, tests/statistics/test_fisher_calibration.py).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import gammaln

from stability.statistics.rates import wilson_interval

ALPHA = 0.05
INDEPENDENT, CLUSTERED = "independent items", "clustered items"
ITEM_WORLDS = (INDEPENDENT, CLUSTERED)
FISHER = "Fisher, data map features"
UNCORRECTED, HOLM = "uncorrected", "Holm"
_RELATIVE = 1 + 1e-7   # pmf values within this factor of the observed table's count as equally likely


def _log_choose(n: np.ndarray, k: np.ndarray) -> np.ndarray:
    return gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)


def fisher_two_sided(x: np.ndarray, with_feature: int, ambiguous: np.ndarray, total: int) -> np.ndarray:
    """Two-sided p of Fisher's exact test for the tables [[x, with_feature − x], [ambiguous − x, …]] of
    `total` items: the summed hypergeometric probability of every table with the same margins that is
    at most as likely as the observed one (scipy's definition; 1 where a margin is 0).

    `x` and `ambiguous` broadcast (one table per element); `with_feature` and `total` are the design's.
    """
    x, ambiguous = np.broadcast_arrays(np.asarray(x, float), np.asarray(ambiguous, float))
    support = np.arange(with_feature + 1, dtype=float)
    k = ambiguous[..., None]
    feasible = (support <= k) & (k - support <= total - with_feature)
    with np.errstate(invalid="ignore"):
        log_pmf = (_log_choose(with_feature, support) + _log_choose(total - with_feature, np.maximum(k - support, 0))
                   - _log_choose(total, k))
    pmf = np.where(feasible, np.exp(log_pmf), 0.0)
    observed = np.take_along_axis(pmf, x.astype(int)[..., None], axis=-1)
    p = np.where(pmf <= observed * _RELATIVE, pmf, 0.0).sum(axis=-1)
    degenerate = (ambiguous == 0) | (ambiguous == total) | (with_feature == 0) | (with_feature == total)
    return np.where(degenerate, 1.0, np.minimum(p, 1.0))


def holm_any(p: np.ndarray, alpha: float = ALPHA) -> np.ndarray:
    """Per row (a study's family of p-values on the last axis): whether Holm rejects any of them,
    i.e. the smallest p is below α / m (Holm's first step; `multipletests(method="holm")` agrees)."""
    return p.min(axis=-1) < alpha / p.shape[-1]


@dataclass(frozen=True)
class FeatureDesign:
    """One group's design: `has` (features, items) bool of the tested features (items with and
    without each), the items' `clusters`, and the observed ambiguous share."""

    has: np.ndarray
    clusters: np.ndarray
    ambiguous_share: float


def ambiguous_draws(world: str, design: FeatureDesign, sims: int, rng: np.random.Generator) -> np.ndarray:
    """(sims, items) bool: which items are ambiguous in each simulated study of `world`."""
    share = design.ambiguous_share
    if world == INDEPENDENT:
        return rng.random((sims, design.has.shape[1])) < share
    if world == CLUSTERED:
        return (rng.random((sims, int(design.clusters.max()) + 1)) < share)[:, design.clusters]
    raise ValueError(f"no item world {world!r}")


def worlds_of(design: FeatureDesign) -> tuple[str, ...]:
    """The item worlds that differ for this design: `clustered items` only where some cluster has
    more than one item."""
    clustered = len(design.clusters) and np.bincount(design.clusters).max() > 1
    return ITEM_WORLDS if clustered else (INDEPENDENT,)


def rejections(ambiguous: np.ndarray, has: np.ndarray) -> np.ndarray:
    """(sims, features) Fisher p-values of every feature in every study."""
    counts = ambiguous.astype(float) @ has.T.astype(float)          # (sims, features): ambiguous with the feature
    total_ambiguous = ambiguous.sum(axis=-1)
    total = has.shape[1]
    return np.stack([fisher_two_sided(counts[:, f], int(has[f].sum()), total_ambiguous, total)
                     for f in range(has.shape[0])], axis=-1)


def calibrate_features(design: FeatureDesign, *, sims: int, rng: np.random.Generator) -> pd.DataFrame:
    """Long rows (statistic, method, world, measure, nominal, sims, hits, measured, mc_low, mc_high) of the
    group's A/A false-positive rates, uncorrected per test and family-wise after Holm."""
    rows = []
    for world in worlds_of(design):
        p = rejections(ambiguous_draws(world, design, sims, rng), design.has)
        for method, hits, total in ((UNCORRECTED, int((p < ALPHA).sum()), p.size),
                                    (HOLM, int(holm_any(p).sum()), sims)):
            low, high = wilson_interval(hits, total, 0.95)
            rows.append({"statistic": FISHER, "method": method, "world": world, "measure": "false positives",
                         "nominal": ALPHA, "sims": total, "hits": hits, "measured": hits / total,
                         "mc_low": float(low), "mc_high": float(high), "threshold": np.nan})
    return pd.DataFrame(rows)
