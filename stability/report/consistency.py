"""Cross-lingual consistency: does the model decide the same way on the same item in two languages?

The translated diagnostic sets share `idx`, labels and categories, so an item is one
meaning in several languages. For two runs A and B (docs/design.md, "Analysis outputs"), on
the items
both predicted (matched by `idx`):

- consistency = share of items with pred_A == pred_B;
- Cohen's κ of the two prediction vectors (`stability.core.metrics.kappa_from_counts`):
  agreement corrected for chance. Two runs that answer "entailment" everywhere agree
  100 % and mean nothing; κ is 0 there (undefined, scored 0.0 like a degenerate MCC);
- consistency_correct / consistency_incorrect: agreement on the items A got right / wrong
  (weighted by those item counts they give back the total);
- the 2 × 2 transitions pred_A → pred_B (n_ent_ent, n_ent_not, n_not_ent, n_not_not).

Runs are compared within one condition (setup, variant), never across variants, and two languages
only where their diagnostic sets are translations of one another (`report.alignment`).
Cross-language pairs are two languages of the same (setup, variant, seed), written in both
directions (the correct/incorrect split depends on which language is A). The *seed
baseline* pairs two seeds of one language (seed_a < seed_b, lang_a == lang_b): run-to-run
agreement. A language pair as consistent as its languages' seed baselines is as consistent
as the model is with itself.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from itertools import combinations, permutations
from typing import Callable

import numpy as np
import pandas as pd

from stability.core.metrics import kappa_defined, kappa_from_counts
from stability.core.taxonomy import COARSE_CATEGORIES, COARSE_OF, FINE_CATEGORIES
from stability.report.agreement import ALL_ITEMS
from stability.report.alignment import GROUP, with_groups
from stability.report.compare import Condition
from stability.report.failed import failed_keys
from stability.statistics.membership import coarse_membership, fine_membership

log = logging.getLogger(__name__)

CONSISTENCY_COLUMNS = ["setup", "variant", "lang_a", "lang_b", "seed_a", "seed_b", "n_items", "consistency", "kappa",
                       "consistency_correct", "consistency_incorrect",
                       # beyond the documented contract: split sizes, transitions, κ definedness, failed flags
                       "n_correct_a", "n_ent_ent", "n_ent_not", "n_not_ent", "n_not_not", "kappa_defined",
                       "constant_a", "constant_b", "failed_a", "failed_b"]
BY_CATEGORY_COLUMNS = ["setup", "variant", "lang_a", "lang_b", "runs", "level", "category", "coarse", "n_items", "n_pairs",
                       "consistency_mean", "consistency_std", "kappa_mean", "kappa_std",
                       "consistency_correct_mean", "consistency_incorrect_mean"]
SUMMARY_COLUMNS = ["setup", "variant", "lang_a", "lang_b", "runs", "n_pairs", "n_items", "consistency_mean",
                   "consistency_std", "kappa_mean", "kappa_std", "consistency_correct_mean",
                   "consistency_incorrect_mean", "n_ent_ent", "n_ent_not", "n_not_ent", "n_not_not",
                   "kappa_baseline", "kappa_minus_baseline", "n_constant_pairs"]
ALL_RUNS, NON_FAILED = "all", "non-failed"
# Mean and σ over run pairs, the same in the per-category and the per-pair table (named aggregations).
_OVER_PAIRS: dict[str, tuple[str, str]] = {
    "consistency_mean": ("consistency", "mean"), "consistency_std": ("consistency", "std"),
    "kappa_mean": ("kappa", "mean"), "kappa_std": ("kappa", "std"),
    "consistency_correct_mean": ("consistency_correct", "mean"),
    "consistency_incorrect_mean": ("consistency_incorrect", "mean"),
}
_GROUPS: tuple[tuple[str, str], ...] = tuple(("fine", name) for name in FINE_CATEGORIES) \
    + tuple(("coarse", name) for name in COARSE_CATEGORIES) + (("all", ALL_ITEMS),)


@dataclass(frozen=True)
class Consistency:
    """The tables of one report: run pairs, per-category and per-pair statistics (all / non-failed runs)."""

    pairs: pd.DataFrame
    by_category: pd.DataFrame
    summary: pd.DataFrame

    @property
    def n_constant(self) -> int:
        """Run pairs where a run gave one label on every shared item (κ = 0 by construction)."""
        return int((self.pairs["constant_a"] | self.pairs["constant_b"]).sum())


@dataclass(frozen=True)
class _Run:
    """One run's predictions in idx order, with each item's membership of the category groups."""

    idx: np.ndarray
    labels: np.ndarray
    preds: np.ndarray
    membership: np.ndarray
    aligned_with: str    # the language's alignment group (`report.alignment`): runs of one group may be paired

    def pairs_with(self, other: _Run) -> bool:
        return self.aligned_with == other.aligned_with


# Per condition (setup, variant) with predictions in ≥ 2 languages: its runs by (lang, seed).
SetupRuns = dict[tuple[str, str], dict[tuple[str, int], _Run]]


def _membership(categories: pd.Series) -> np.ndarray:
    """(items, groups) bool in `_GROUPS` order: fine categories, coarse categories, all items."""
    fine = fine_membership(categories)
    return np.column_stack([fine, coarse_membership(fine), np.ones(len(fine), bool)])


def _runs(group: pd.DataFrame) -> dict[tuple[str, int], _Run]:
    """One condition's runs. Membership depends only on an item's categories string, so it is built
    once per distinct string of the condition, not once per run."""
    codes, distinct = pd.factorize(group["categories"].fillna(""))
    membership = _membership(pd.Series(distinct))
    runs = {}
    for (lang, seed), items in group.assign(_categories=codes).groupby(["lang", "seed"], sort=True):
        items = items.drop_duplicates("idx").sort_values("idx")
        runs[(lang, int(seed))] = _Run(items["idx"].astype(str).to_numpy(), items["label"].to_numpy(np.int64),
                                       items["pred"].to_numpy(np.int64), membership[items["_categories"].to_numpy()],
                                       str(items[GROUP].iloc[0]))
    return runs


def setup_runs(predictions: pd.DataFrame) -> SetupRuns:
    """The runs of every condition (setup, variant) with ≥ 2 languages, built once for `consistency`
    and `flagged_consistency`."""
    return {condition: _runs(group) for condition, group in with_groups(predictions).groupby(["setup", "variant"],
                                                                                              sort=True)
            if group["lang"].nunique() >= 2}


def pair_counts(a: _Run, b: _Run, membership: Callable[[np.ndarray], np.ndarray] | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """On the shared items, per group: the 2 × 2 counts (tp, fp, fn, tn) of pred_A vs pred_B,
    items A got right, and items A got right on which B agrees.

    Groups are A's category groups, or the columns of `membership(shared idx)` when given.
    """
    shared, at_a, at_b = np.intersect1d(a.idx, b.idx, return_indices=True)
    pa, pb, gold = a.preds[at_a].astype(bool), b.preds[at_b].astype(bool), a.labels[at_a].astype(bool)
    member = (a.membership[at_a] if membership is None else membership(shared)).astype(float)
    outcomes = np.column_stack([pa & pb, ~pa & pb, pa & ~pb, ~pa & ~pb]).astype(float)
    correct = pa == gold
    return member.T @ outcomes, member.T @ correct, member.T @ (correct & (pa == pb))


def _shares(agree: np.ndarray, total: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, agree / np.where(total > 0, total, 1), np.nan)


def _agreement(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per group of 2 × 2 counts (tp, fp, fn, tn): items, consistency and κ; both NaN without
    items, where κ would otherwise read 0 like a real chance-level agreement."""
    tp, fp, fn, tn = counts.T
    n = counts.sum(axis=1)
    return n, _shares(tp + tn, n), np.where(n > 0, kappa_from_counts(tp, fp, fn, tn), np.nan)


def _pair_rows(condition: tuple[str, str], runs: dict[tuple[str, int], _Run],
               failed: set[tuple[str, str, str, int]]) -> tuple[list[dict], list[pd.DataFrame]]:
    """consistency.csv rows and per-group frames for every cross-language and seed-baseline pair."""
    langs = sorted({lang for lang, _ in runs})
    seeds = {lang: sorted(seed for code, seed in runs if code == lang) for lang in langs}
    pairs = [((a, s), (b, s)) for a, b in permutations(langs, 2) for s in seeds[a]
             if s in seeds[b] and runs[(a, s)].pairs_with(runs[(b, s)])]
    pairs += [((lang, s), (lang, t)) for lang in langs for s, t in combinations(seeds[lang], 2)]
    setup, variant = condition
    rows, groups = [], []
    for (lang_a, seed_a), (lang_b, seed_b) in pairs:
        counts, correct, agree_correct = pair_counts(runs[(lang_a, seed_a)], runs[(lang_b, seed_b)])
        tp, fp, fn, tn = counts.T
        n, consistency, kappa = _agreement(counts)
        split_correct = _shares(agree_correct, correct)
        split_incorrect = _shares(tp + tn - agree_correct, n - correct)
        key = {"setup": setup, "variant": variant, "lang_a": lang_a, "lang_b": lang_b, "seed_a": seed_a, "seed_b": seed_b}
        rows.append({**key, "n_items": int(n[-1]), "consistency": consistency[-1], "kappa": kappa[-1],
                     "consistency_correct": split_correct[-1], "consistency_incorrect": split_incorrect[-1],
                     "n_correct_a": int(correct[-1]), "n_ent_ent": int(tn[-1]), "n_ent_not": int(fp[-1]),
                     "n_not_ent": int(fn[-1]), "n_not_not": int(tp[-1]),
                     "kappa_defined": bool(kappa_defined(tp[-1], fp[-1], fn[-1], tn[-1])),
                     "constant_a": bool(min(tp[-1] + fn[-1], fp[-1] + tn[-1]) == 0),
                     "constant_b": bool(min(tp[-1] + fp[-1], fn[-1] + tn[-1]) == 0),
                     "failed_a": (lang_a, setup, variant, seed_a) in failed,
                     "failed_b": (lang_b, setup, variant, seed_b) in failed})
        groups.append(pd.DataFrame({
            **key, "level": [level for level, _ in _GROUPS], "category": [name for _, name in _GROUPS],
            "n_items": n.astype(int), "consistency": consistency, "kappa": kappa,
            "consistency_correct": split_correct, "consistency_incorrect": split_incorrect,
            "failed": rows[-1]["failed_a"] or rows[-1]["failed_b"],
        }))
    return rows, groups


def _subsets(table: pd.DataFrame, failed_column: pd.Series) -> list[tuple[str, pd.DataFrame]]:
    """(all runs) and, when a run failed, (non-failed runs) — every statistic is given for both."""
    parts = [(ALL_RUNS, table)]
    if failed_column.any():
        parts.append((NON_FAILED, table[~failed_column]))
    return parts


def _by_category(groups: pd.DataFrame) -> pd.DataFrame:
    frames = []
    for runs, part in _subsets(groups, groups["failed"]):
        scored = part[part["n_items"] > 0]
        stats = scored.groupby(["setup", "variant", "lang_a", "lang_b", "level", "category"], sort=False).agg(
            n_items=("n_items", "max"), n_pairs=("n_items", "size"), **_OVER_PAIRS).reset_index()
        frames.append(stats.assign(runs=runs))
    table = pd.concat(frames, ignore_index=True)
    table["coarse"] = table["category"].map(COARSE_OF).fillna(table["category"])
    return table[BY_CATEGORY_COLUMNS]


def _summary(pairs: pd.DataFrame) -> pd.DataFrame:
    frames = []
    for runs, part in _subsets(pairs, pairs["failed_a"] | pairs["failed_b"]):
        stats = part.assign(constant=part["constant_a"] | part["constant_b"]).groupby(
            ["setup", "variant", "lang_a", "lang_b"], sort=True).agg(
            n_pairs=("n_items", "size"), n_items=("n_items", "max"), **_OVER_PAIRS,
            n_ent_ent=("n_ent_ent", "sum"), n_ent_not=("n_ent_not", "sum"),
            n_not_ent=("n_not_ent", "sum"), n_not_not=("n_not_not", "sum"),
            n_constant_pairs=("constant", "sum"),
        ).reset_index()
        own = stats[stats["lang_a"] == stats["lang_b"]].set_index(["setup", "variant", "lang_a"])["kappa_mean"]
        # both languages' baselines, or none: one language's alone would pass for the pair's
        baseline = [(own.get((s, v, a), np.nan) + own.get((s, v, b), np.nan)) / 2
                    for s, v, a, b in stats[["setup", "variant", "lang_a", "lang_b"]].itertuples(index=False)]
        stats["kappa_baseline"] = baseline
        stats["kappa_minus_baseline"] = stats["kappa_mean"] - stats["kappa_baseline"]
        frames.append(stats.assign(runs=runs))
    order = {ALL_RUNS: 0, NON_FAILED: 1}
    table = pd.concat(frames, ignore_index=True)
    return table.assign(_runs=table["runs"].map(order)).sort_values(["setup", "variant", "lang_a", "lang_b", "_runs"]) \
        .reset_index(drop=True)[SUMMARY_COLUMNS]


def consistency(predictions: pd.DataFrame, failed: pd.DataFrame | None = None) -> Consistency | None:
    """All consistency tables of the runs' predictions; None unless some condition has ≥ 2 languages."""
    return consistency_of_runs(setup_runs(predictions), failed)


def consistency_of_runs(runs: SetupRuns, failed: pd.DataFrame | None = None) -> Consistency | None:
    """`consistency` for runs already built by `setup_runs` (the report reuses them for the
    data-QA comparison)."""
    failed_runs = failed_keys(failed) if failed is not None else set()
    rows, groups = [], []
    for condition, by_run in runs.items():
        setup_rows, setup_groups = _pair_rows(condition, by_run, failed_runs)
        rows += setup_rows
        groups += setup_groups
    if not rows:
        return None
    pairs = pd.DataFrame(rows, columns=CONSISTENCY_COLUMNS)
    if (pairs["n_items"] == 0).any():
        log.warning("warning: %d run pairs share no diagnostic item (idx): their consistency is empty",
                    int((pairs["n_items"] == 0).sum()))
    result = Consistency(pairs, _by_category(pd.concat(groups, ignore_index=True)), _summary(pairs))
    if result.n_constant:
        log.warning("warning: %d of %d run pairs include a run with constant predictions on the shared items: "
                    "κ is 0 there, and their raw consistency only reflects label shares",
                    result.n_constant, len(pairs))
    return result


def kappa_matrix(summary: pd.DataFrame, condition: tuple[str, str], runs: str = ALL_RUNS,
                 value: str = "kappa_mean") -> pd.DataFrame:
    """Language × language matrix of a pair statistic in one (setup, variant) (symmetric; the
    diagonal is the seed baseline)."""
    part = summary[Condition(*condition).rows(summary) & (summary["runs"] == runs)]
    langs = sorted(set(part["lang_a"]) | set(part["lang_b"]))
    return part.pivot(index="lang_a", columns="lang_b", values=value).reindex(index=langs, columns=langs)


def lowest_kappa_pair(summary: pd.DataFrame, condition: tuple[str, str]) -> tuple[str, str] | None:
    """The cross-language pair of a (setup, variant) with the lowest mean κ (all runs): the default
    bar chart."""
    part = summary[Condition(*condition).rows(summary) & (summary["runs"] == ALL_RUNS)
                   & (summary["lang_a"] < summary["lang_b"])].sort_values(["kappa_mean", "lang_a", "lang_b"])
    return None if part.empty else (part.iloc[0]["lang_a"], part.iloc[0]["lang_b"])


FLAGGED_COLUMNS = ["setup", "variant", "lang_a", "lang_b", "runs", "n_pairs", "n_items_flagged", "n_items_unflagged",
                   "consistency_flagged", "consistency_unflagged", "kappa_flagged", "kappa_unflagged",
                   "consistency_difference"]


def flagged_consistency(runs: SetupRuns, flagged: dict[str, set[str]],
                        failed: pd.DataFrame | None = None) -> pd.DataFrame:
    """Is agreement lower on items whose translation was flagged? Per condition and language pair
    (lang_a < lang_b, same seed): consistency and κ on items flagged in either language's
    diagnostic file vs the other items, mean over seeds, for all and non-failed runs.

    `runs` comes from `setup_runs`; `flagged` maps a language to the idx of its flagged diagnostic items.
    """
    failed_runs = failed_keys(failed) if failed is not None else set()
    rows = []
    for (setup, variant), by_run in runs.items():
        langs = sorted({lang for lang, _ in by_run})
        for lang_a, lang_b in combinations(langs, 2):
            items = flagged.get(lang_a, set()) | flagged.get(lang_b, set())

            def split(shared: np.ndarray, items: set[str] = items) -> np.ndarray:
                hit = np.isin(shared, list(items))
                return np.column_stack([hit, ~hit])

            for seed in sorted(seed for lang, seed in by_run if lang == lang_a and (lang_b, seed) in by_run
                               and by_run[(lang, seed)].pairs_with(by_run[(lang_b, seed)])):
                counts, _, _ = pair_counts(by_run[(lang_a, seed)], by_run[(lang_b, seed)], split)
                n, agree, kappa = _agreement(counts)
                rows.append({"setup": setup, "variant": variant, "lang_a": lang_a, "lang_b": lang_b,
                             "failed": (lang_a, setup, variant, seed) in failed_runs
                             or (lang_b, setup, variant, seed) in failed_runs,
                             "n_flagged": n[0], "n_unflagged": n[1],
                             "consistency_flagged": agree[0], "consistency_unflagged": agree[1],
                             "kappa_flagged": kappa[0], "kappa_unflagged": kappa[1]})
    if not rows:
        return pd.DataFrame(columns=FLAGGED_COLUMNS)
    table = pd.DataFrame(rows)
    frames = []
    for runs_name, part in _subsets(table, table["failed"]):
        stats = part.groupby(["setup", "variant", "lang_a", "lang_b"], sort=True).agg(
            n_pairs=("failed", "size"), n_items_flagged=("n_flagged", "max"), n_items_unflagged=("n_unflagged", "max"),
            consistency_flagged=("consistency_flagged", "mean"), consistency_unflagged=("consistency_unflagged", "mean"),
            kappa_flagged=("kappa_flagged", "mean"), kappa_unflagged=("kappa_unflagged", "mean"),
        ).reset_index()
        frames.append(stats.assign(runs=runs_name))
    result = pd.concat(frames, ignore_index=True)
    result["consistency_difference"] = result["consistency_flagged"] - result["consistency_unflagged"]
    result[["n_items_flagged", "n_items_unflagged"]] = result[["n_items_flagged", "n_items_unflagged"]].astype(int)
    return result[FLAGGED_COLUMNS]
