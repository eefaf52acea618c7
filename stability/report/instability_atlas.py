"""Instability atlas: which diagnostic items flip, between seeds, late in training, and across languages,
and what the items that flip have in common (runs that recorded training dynamics only).

Three flip rates per diagnostic item of a (lang, setup, variant):

* *between seeds*: the share of seed pairs whose final predictions (predictions.jsonl) differ, i.e.
  1 − the pairwise agreement of `stability.report.agreement.item_agreement`; defined from 2 seeds.
  `flips_between_seeds` is "not every seed predicts the same label".
* *across the last validations*: per run, over its last `LAST_VALIDATIONS` validations (all when it
  has fewer), the share of consecutive validation pairs at which the item's predicted label changes
  (`Dynamics.pred`); the mean over the group's seeds. An item that still flips at the end of training
  is one whose final label depends on where training happened to stop.
* *across languages*: per (setup, variant, seed) predicted in ≥ 2 languages, the share of language
  pairs (items aligned by idx) whose final predictions differ; the mean over those seeds. It belongs
  to (setup, variant, idx) and is repeated on each language's row; NaN with fewer than 2 languages.
  Only languages whose diagnostic sets are translations of one another are paired
  (`report.alignment`): a language whose set is another one counts among its own group's.

The atlas joins them with the item's gold label and categories, its text in that language
(`Dynamics.items`) and the features the project's rule-based annotator finds in that text
(`report.annotation`: an optional extra; when it cannot load, the feature columns are left out).
A logistic regression of `flips_between_seeds` on the 4 coarse categories, the detected features and
the language (`instability_regression`) says which of them go with instability, all else held fixed.
Its rows are not independent (one item in every language; items that share a sentence), so with the
report's item clusters its standard errors are cluster-robust over groups that join an item's rows
across languages and the items of one cluster (`regression_groups`).
"""
from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from stability.core.taxonomy import COARSE_CATEGORIES, COARSE_OF, FINE_CATEGORIES
from stability.report.agreement import item_agreement, pairwise_agreement
from stability.report.alignment import GROUP, with_groups
from stability.report.annotation import Annotate, by_language
from stability.report.clusters import NO_CLUSTERS, ItemClusters
from stability.report.dynamics import RunDynamics
from stability.statistics.clusters import components
from stability.statistics.seeds import GROUP_KEY

log = logging.getLogger(__name__)

LAST_VALIDATIONS = 3        # validations at the end of a run whose consecutive pairs count for the late flip rate
CONDITION = ["setup", "variant"]
RUN_KEY = GROUP_KEY + ["seed"]
ATLAS_COLUMNS = ["lang", "setup", "variant", "idx", "label", "categories", "coarse", "n_seeds", "flip_rate_seeds",
                 "flips_between_seeds", "last_validations", "flip_rate_validations", "n_languages",
                 "flip_rate_languages", GROUP]
FEATURE_COLUMNS = ["features", "unsupported_features"]
TEXT_COLUMNS = ["premise", "hypothesis"]
REGRESSION_COLUMNS = ["setup", "variant", "term", "coef", "std_err", "z", "p_value", "ci_low", "ci_high",
                      "odds_ratio", "n_obs"]
INTERCEPT = "intercept"

def known_features(found: list[Any]) -> tuple[str, ...]:
    """The features the annotator knows (detectable in some language or not), in the taxonomy's order."""
    known = {name for item in found for name in (*item.supported, *item.unsupported)}
    return tuple(name for name in FINE_CATEGORIES if name in known)


@dataclass(frozen=True)
class Atlas:
    """`table`: ATLAS_COLUMNS (+ FEATURE_COLUMNS when annotated) + TEXT_COLUMNS, one row per
    (lang, setup, variant, idx); `notes`: why features are missing, one line each."""

    table: pd.DataFrame
    notes: list[str] = field(default_factory=list)


def dynamics_predictions(predictions: pd.DataFrame, runs: list[RunDynamics], scored: pd.DataFrame) -> pd.DataFrame:
    """The final diagnostic predictions of the runs that recorded dynamics (one source for every rate), in
    every language each was scored in (`scored`: collect's runs table, one row per run and language)."""
    keys = scored.loc[scored["source"].isin({r.source for r in runs}), RUN_KEY].astype({"seed": int}) \
        .drop_duplicates()
    if predictions.empty or keys.empty:
        return predictions.iloc[0:0]
    merged = predictions.astype({"seed": int}).merge(keys, on=RUN_KEY, how="inner")
    return merged.reset_index(drop=True)


def seed_flips(predictions: pd.DataFrame) -> pd.DataFrame:
    """Per (lang, setup, variant, idx): label, categories, n_seeds, flip_rate_seeds = 1 − pairwise seed
    agreement, flips_between_seeds (NA below 2 seeds)."""
    items = item_agreement(predictions)
    flips = items.assign(flip_rate_seeds=1.0 - items["agreement"])
    flips["flips_between_seeds"] = (flips["flip_rate_seeds"] > 0).astype("boolean").where(
        flips["flip_rate_seeds"].notna(), pd.NA)
    return flips[GROUP_KEY + ["idx", "label", "categories", "n_seeds", "flip_rate_seeds", "flips_between_seeds"]]


def run_validation_flips(pred: np.ndarray, last: int = LAST_VALIDATIONS) -> tuple[np.ndarray, int]:
    """Per column of `pred` (validations × items): the share of consecutive pairs among the last `last`
    validations whose label changes (pairs with an unknown label, -1, skipped; NaN when none), and
    how many validations were used."""
    window = np.asarray(pred)[-last:]
    used = len(window)
    if used < 2:
        return np.full(window.shape[1], np.nan), used
    before, after = window[:-1], window[1:]
    known = (before >= 0) & (after >= 0)
    changed = ((before != after) & known).sum(axis=0)
    counted = known.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counted > 0, changed / np.maximum(counted, 1), np.nan), used


def validation_flips(runs: list[RunDynamics], last: int = LAST_VALIDATIONS) -> pd.DataFrame:
    """Per (lang, setup, variant, idx): flip_rate_validations (mean over the group's seeds of
    `run_validation_flips` on the diagnostic columns) and last_validations (the fewest used by a seed)."""
    frames = []
    for run in runs:
        columns = run.dynamics.columns("diagnostic")
        rates, used = run_validation_flips(run.dynamics.pred[:, columns], last)
        frames.append(pd.DataFrame({
            "lang": run.lang, "setup": run.setup, "variant": run.variant, "seed": run.seed,
            "idx": run.dynamics.items["idx"].to_numpy()[columns].astype(str), "rate": rates, "used": used}))
    if not frames:
        return pd.DataFrame(columns=GROUP_KEY + ["idx", "last_validations", "flip_rate_validations"])
    table = pd.concat(frames, ignore_index=True)
    return table.groupby(GROUP_KEY + ["idx"], sort=True).agg(
        last_validations=("used", "min"), flip_rate_validations=("rate", "mean")).reset_index()


def language_flips(predictions: pd.DataFrame) -> pd.DataFrame:
    """Per (lang, setup, variant, idx): its `language_group` and, over the group's languages,
    n_languages (most languages predicting it with one seed) and flip_rate_languages = mean over seeds
    of the share of language pairs whose final predictions differ (NaN when no seed has it in 2 languages)."""
    grouped = with_groups(predictions)
    per_seed = grouped.assign(not_entailment=grouped["pred"] == 1).groupby(
        CONDITION + [GROUP, "seed", "idx"], sort=True).agg(k=("lang", "nunique"), c=("not_entailment", "sum")) \
        .reset_index()
    per_seed["rate"] = 1 - pairwise_agreement(per_seed["k"], per_seed["c"])
    flips = per_seed.groupby(CONDITION + [GROUP, "idx"], sort=True).agg(
        n_languages=("k", "max"), flip_rate_languages=("rate", "mean")).reset_index()
    return grouped.drop_duplicates(GROUP_KEY + ["idx"])[GROUP_KEY + [GROUP, "idx"]] \
        .merge(flips, on=CONDITION + [GROUP, "idx"])


def diagnostic_texts(runs: list[RunDynamics]) -> pd.DataFrame:
    """Per (lang, idx): the diagnostic item's premise and hypothesis (from the first run of the language)."""
    frames, seen = [], set()
    for run in runs:
        if run.lang in seen:
            continue
        seen.add(run.lang)
        items = run.dynamics.items.iloc[run.dynamics.columns("diagnostic")]
        frames.append(pd.DataFrame({"lang": run.lang, "idx": items["idx"].astype(str).to_numpy(),
                                    "premise": items["premise"].astype(str).to_numpy(),
                                    "hypothesis": items["hypothesis"].astype(str).to_numpy()}))
    if not frames:
        return pd.DataFrame(columns=["lang", "idx", *TEXT_COLUMNS])
    return pd.concat(frames, ignore_index=True).drop_duplicates(["lang", "idx"])


def annotate_items(texts: pd.DataFrame, annotate: Annotate | None = None) -> tuple[pd.DataFrame | None, list[str]]:
    """Per (lang, idx): `features` and `unsupported_features` (";"-joined, canonical order) that the
    annotator finds in the pair, and a note per language it could not annotate (its features are then
    all unsupported). None when no language could be annotated: the feature columns are left out."""
    parts = {str(lang): part for lang, part in texts.groupby("lang", sort=True)}
    annotated, unavailable = by_language({lang: list(zip(part["premise"], part["hypothesis"]))
                                          for lang, part in parts.items()}, annotate)
    order = known_features([item for found in annotated.values() for item in found[:1]])
    frames = []
    for lang, found in annotated.items():
        frames.append(pd.DataFrame({
            "lang": lang, "idx": parts[lang]["idx"].to_numpy(),
            "features": [";".join(f for f in order if f in item.features) for item in found],
            "unsupported_features": [";".join(f for f in order if f not in item.supported) for item in found]}))
    failed: dict[str, list[str]] = {}
    for lang, reason in unavailable.items():
        failed.setdefault(reason, []).append(lang)
    notes = [f"the feature annotator is unavailable for {', '.join(langs)} ({reason}), so "
             f"{'no item has' if not frames else 'their items have no'} feature columns; install the annotator "
             "extra and its spaCy/pymorphy3 models for them" for reason, langs in failed.items()]
    for note in notes:
        log.warning("instability atlas: %s", note)
    if not frames:
        return None, notes
    return pd.concat(frames, ignore_index=True), notes


def instability_atlas(predictions: pd.DataFrame, runs: list[RunDynamics], annotate: Annotate | None = None,
                      last: int = LAST_VALIDATIONS, other_texts: pd.DataFrame | None = None) -> Atlas:
    """The atlas of the runs in `runs`, from their final `predictions` (`dynamics_predictions`);
    `other_texts` (lang, idx, premise, hypothesis) holds the items of languages the runs were scored in
    beside their own (`data.eval_langs`), whose text their dynamics do not hold."""
    table = seed_flips(predictions)
    table["coarse"] = table["categories"].map(coarse_of)
    table = table.merge(validation_flips(runs, last), on=GROUP_KEY + ["idx"], how="left") \
        .merge(language_flips(predictions), on=GROUP_KEY + ["idx"], how="left")
    texts = diagnostic_texts(runs)
    if other_texts is not None:
        texts = pd.concat([texts, other_texts[~other_texts["lang"].isin(texts["lang"])]], ignore_index=True)
    features, notes = annotate_items(texts, annotate)
    columns = list(ATLAS_COLUMNS)
    if features is not None:
        table = table.merge(features, on=["lang", "idx"], how="left")
        unannotated = table["unsupported_features"].isna()
        table.loc[unannotated, "unsupported_features"] = ";".join(_named(features))
        columns += FEATURE_COLUMNS
    table = table.merge(texts, on=["lang", "idx"], how="left")
    table["last_validations"] = table["last_validations"].astype("Int64")
    table["n_languages"] = table["n_languages"].astype("Int64")
    return Atlas(_by_item(table)[columns + TEXT_COLUMNS].reset_index(drop=True), notes)


def coarse_of(categories: str) -> str:
    """The ";"-joined coarse categories of ";"-joined fine ones, in canonical order."""
    names = {COARSE_OF.get(name) for name in str(categories).split(";") if name}
    return ";".join(name for name in COARSE_CATEGORIES if name in names)


def _idx_order(idx: pd.Series) -> pd.Series:
    """Numeric idx sort numerically ("2" before "10"), others after them."""
    return pd.to_numeric(idx, errors="coerce")


def _by_item(table: pd.DataFrame) -> pd.DataFrame:
    return table.assign(_idx=_idx_order(table["idx"])).sort_values(GROUP_KEY + ["_idx", "idx"]).drop(columns="_idx")


# --- regression -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Design:
    """The regression of one (setup, variant): `X` with an `intercept` column, `y` 0/1, and the terms
    left out (term → why)."""

    X: pd.DataFrame
    y: pd.Series
    dropped: dict[str, str]


def _named(table: pd.DataFrame) -> list[str]:
    """Every feature named in the `features` or `unsupported_features` cells, in the taxonomy's order."""
    named = {name for column in FEATURE_COLUMNS for cell in table[column].dropna() for name in cell.split(";")}
    return [name for name in FINE_CATEGORIES if name in named]


def regression_design(rows: pd.DataFrame) -> Design:
    """Intercept, `coarse[C]` for the 4 coarse categories, `feature[F]` for the features detectable in
    every language of `rows` (when annotated), `lang[L]` treatment-coded against the alphabetically first
    language; over the rows where `flips_between_seeds` is defined. Constant columns, indicators whose
    1s or 0s all share one outcome (the MLE would be ±∞) and columns collinear with earlier ones are
    dropped, in that order."""
    rows = rows[rows["flips_between_seeds"].notna()].reset_index(drop=True)
    y = rows["flips_between_seeds"].astype(int).rename("flips_between_seeds")
    columns: dict[str, np.ndarray] = {INTERCEPT: np.ones(len(rows))}
    coarse = rows["coarse"].fillna("").str.split(";")
    for name in COARSE_CATEGORIES:
        columns[f"coarse[{name}]"] = coarse.map(lambda names, n=name: n in names).to_numpy(float)
    if "features" in rows.columns:
        unsupported = {name for cell in rows["unsupported_features"].fillna("") for name in cell.split(";") if name}
        detected = rows["features"].fillna("").str.split(";")
        for name in _named(rows):
            if name not in unsupported:
                columns[f"feature[{name}]"] = detected.map(lambda names, n=name: n in names).to_numpy(float)
    for lang in sorted(rows["lang"].unique())[1:]:
        columns[f"lang[{lang}]"] = (rows["lang"] == lang).to_numpy(float)
    X = pd.DataFrame(columns, index=rows.index)
    dropped: dict[str, str] = {}
    if rows.empty:
        return Design(X[[INTERCEPT]], y, dropped)
    outcome = y.to_numpy()
    for term in list(X.columns[1:]):
        values = X[term].to_numpy()
        if np.all(values == values[0]):
            dropped[term] = "constant"
        elif any(len(np.unique(outcome[values == side])) == 1 for side in (0.0, 1.0)):
            dropped[term] = "separates the outcome"
    X = X.drop(columns=list(dropped))
    kept = [INTERCEPT]
    for term in X.columns[1:]:
        if np.linalg.matrix_rank(X[kept + [term]].to_numpy()) > len(kept):
            kept.append(term)
        else:
            dropped[term] = "collinear with earlier terms"
    return Design(X[kept], y, dropped)


class FitFailed(Exception):
    """The logistic regression has no (finite) maximum-likelihood estimate."""


def regression_groups(rows: pd.DataFrame, clusters: ItemClusters) -> np.ndarray:
    """(rows,) group ids of a regression's rows (lang, idx, language_group): one item's rows in every
    language of its language group are one group, joined with the other items of its cluster in any
    language (`clusters.of`)."""
    idx = rows["idx"].astype(str).to_numpy(dtype=object)
    item = (rows[GROUP].astype(str) + ":" + rows["idx"].astype(str)).to_numpy(dtype=object) if GROUP in rows \
        else idx
    in_cluster = np.full(len(rows), None, dtype=object)
    for lang, at in rows.groupby("lang").indices.items():
        ids = clusters.of(lang, idx[at])
        if ids is not None:
            in_cluster[at] = [f"{lang}:{cluster}" for cluster in ids]
    return components(np.column_stack([item, in_cluster]))


def fit_logit(design: Design, confidence: float, groups: np.ndarray | None = None) -> pd.DataFrame:
    """statsmodels' Logit (Newton) of `design`: term, coef, std_err, z, p_value, ci_low, ci_high (Wald,
    at `confidence`), odds_ratio, n_obs; with `groups` (one id per row of the design) the standard
    errors are cluster-robust over them (`cov_type="cluster"`). FitFailed on perfect separation, a
    singular Hessian or no convergence."""
    import statsmodels.api as sm
    from statsmodels.tools.sm_exceptions import (ConvergenceWarning, HessianInversionWarning,
                                                 PerfectSeparationError, PerfectSeparationWarning)

    if design.y.nunique() < 2:
        raise FitFailed("no item flips between seeds" if design.y.sum() == 0 else "every item flips between seeds")
    try:
        with warnings.catch_warnings():
            for category in (ConvergenceWarning, HessianInversionWarning, PerfectSeparationWarning):
                warnings.simplefilter("error", category)
            robust = {} if groups is None else {"cov_type": "cluster", "cov_kwds": {"groups": groups}}
            result = sm.Logit(design.y, design.X).fit(disp=0, maxiter=100, **robust)
    except (PerfectSeparationError, PerfectSeparationWarning) as err:
        raise FitFailed(f"perfect separation ({err})") from None
    except np.linalg.LinAlgError as err:
        raise FitFailed(f"singular design ({err})") from None
    except (ConvergenceWarning, HessianInversionWarning) as err:
        raise FitFailed(f"no convergence ({str(err).splitlines()[0]})") from None
    if not result.mle_retvals.get("converged", False):
        raise FitFailed("no convergence")
    if not np.all(np.isfinite(result.bse)):
        raise FitFailed("standard errors undefined (singular information matrix)")
    interval = result.conf_int(alpha=1 - confidence)
    return pd.DataFrame({
        "term": design.X.columns, "coef": result.params.to_numpy(), "std_err": result.bse.to_numpy(),
        "z": result.tvalues.to_numpy(), "p_value": result.pvalues.to_numpy(),
        "ci_low": interval.iloc[:, 0].to_numpy(), "ci_high": interval.iloc[:, 1].to_numpy(),
        "odds_ratio": np.exp(result.params.to_numpy()), "n_obs": int(result.nobs)})


def instability_regression(atlas: pd.DataFrame, confidence: float, clusters: ItemClusters | None = None
                           ) -> tuple[pd.DataFrame, dict[tuple[str, str], list[str]]]:
    """REGRESSION_COLUMNS per (setup, variant), pooled over its items × languages; per (setup, variant)
    the notes (terms dropped and why, or why there is no fit). With `clusters` (other than
    `cluster=none`) the standard errors are cluster-robust over `regression_groups`."""
    frames, notes = [], {}
    for (setup, variant), rows in atlas.groupby(CONDITION, sort=True):
        design = regression_design(rows)
        reasons: dict[str, list[str]] = {}
        for term, why in design.dropped.items():
            reasons.setdefault(why, []).append(term)
        lines = [f"left out ({why}): {', '.join(terms)}" for why, terms in reasons.items()]
        if design.y.empty:
            lines.append("no fit: no language has 2 seeds, so no item can flip between seeds")
        else:
            try:
                groups = None if clusters is None or clusters.option == NO_CLUSTERS else \
                    regression_groups(rows[rows["flips_between_seeds"].notna()], clusters)
                frames.append(fit_logit(design, confidence, groups).assign(setup=setup, variant=variant))
            except FitFailed as err:
                lines.append(f"no fit: {err}")
        notes[(setup, variant)] = lines
    if not frames:
        return pd.DataFrame(columns=REGRESSION_COLUMNS), notes
    return pd.concat(frames, ignore_index=True)[REGRESSION_COLUMNS], notes


# --- summaries ----------------------------------------------------------------------------------------------

def top_items(atlas: pd.DataFrame, top: int) -> pd.DataFrame:
    """Per (setup, variant, language_group): the `top` items with the highest seed flip rate (mean over
    the group's languages; ties by idx), items no seed pair disagrees on in any language left out: rank,
    idx, label, categories, flip_rate_mean, and per language flip_rate_<lang>, premise_<lang>,
    hypothesis_<lang>."""
    frames = []
    for (setup, variant, group), rows in atlas.groupby(CONDITION + [GROUP], sort=True):
        langs = sorted(rows["lang"].unique())
        wide = rows.pivot(index="idx", columns="lang", values=["flip_rate_seeds", *TEXT_COLUMNS])
        first = rows.groupby("idx").agg(label=("label", "first"), categories=("categories", "first"))
        first["flip_rate_mean"] = rows.groupby("idx")["flip_rate_seeds"].mean()
        for lang in langs:
            first[f"flip_rate_{lang}"] = wide[("flip_rate_seeds", lang)]
            first[f"premise_{lang}"] = wide[("premise", lang)]
            first[f"hypothesis_{lang}"] = wide[("hypothesis", lang)]
        first = first[first["flip_rate_mean"] > 0].reset_index()
        first = first.assign(_idx=_idx_order(first["idx"])).sort_values(
            ["flip_rate_mean", "_idx", "idx"], ascending=[False, True, True]).drop(columns="_idx").head(top)
        frames.append(first.assign(setup=setup, variant=variant, rank=range(1, len(first) + 1), **{GROUP: group}))
    head = ["setup", "variant", GROUP, "rank", "idx", "label", "categories", "flip_rate_mean"]
    if not frames:
        return pd.DataFrame(columns=head)
    table = pd.concat(frames, ignore_index=True)
    return table[head + [c for c in table.columns if c not in head]]


def language_summary(atlas: pd.DataFrame) -> pd.DataFrame:
    """Per (lang, setup, variant): items, seeds, items flipping between seeds (of those with ≥ 2 seeds) and
    the mean of each flip rate."""
    return atlas.groupby(GROUP_KEY, sort=True).agg(
        n_items=("idx", "size"), n_seeds=("n_seeds", "max"),
        n_defined=("flips_between_seeds", "count"),
        n_flipping=("flips_between_seeds", lambda s: int(s.dropna().astype(bool).sum())),
        flip_rate_seeds=("flip_rate_seeds", "mean"), flip_rate_validations=("flip_rate_validations", "mean"),
        flip_rate_languages=("flip_rate_languages", "mean")).reset_index()


@dataclass(frozen=True)
class Shared:
    """Items of one (setup, variant, language_group) with a defined seed flip in every one of its ≥ 2 languages: how many
    flip in every language, in at least one, and how many would flip in every language if the languages
    flipped independently at their own rates (n × Π share_l)."""

    n_items: int
    n_languages: int
    in_all: int
    in_any: int
    expected_all: float


def shared_flips(rows: pd.DataFrame) -> Shared | None:
    """`Shared` for the atlas rows of one (setup, variant, language_group); None with fewer than 2 languages."""
    flips = rows[rows["flips_between_seeds"].notna()].pivot(index="idx", columns="lang",
                                                            values="flips_between_seeds")
    if flips.shape[1] < 2:
        return None
    flips = flips.dropna().astype(bool)
    n = len(flips)
    shares = flips.mean(axis=0) if n else pd.Series(0.0, index=flips.columns)
    return Shared(n, flips.shape[1], int(flips.all(axis=1).sum()), int(flips.any(axis=1).sum()),
                  float(n * np.prod(shares.to_numpy())))
