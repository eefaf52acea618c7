"""`## Instability atlas`: which diagnostic items flip between seeds, late in training and across
languages, what they have in common (logistic regression on category, feature, language), and the most
unstable items with their text (`stability.report.instability_atlas`; runs with training dynamics only)."""
from __future__ import annotations

import logging

import pandas as pd

from stability.core.markdown import num, table
from stability.report.alignment import GROUP
from stability.report.clusters import NO_CLUSTERS
from stability.report.context import Context
from stability.report.instability_atlas import (CONDITION, INTERCEPT, LAST_VALIDATIONS, TEXT_COLUMNS,
                                                dynamics_predictions,
                                                instability_atlas, instability_regression, language_summary,
                                                shared_flips, top_items)
from stability.report.section import Built, figure_links
from stability.statistics.seeds import condition_name

log = logging.getLogger(__name__)

ATLAS_FILE = "instability_atlas.csv"
REGRESSION_FILE = "instability_regression.csv"
TOP_FILE = "instability_top.csv"
_SHOWN = 5          # top items shown inline
_TEXT = 90          # characters of a premise / hypothesis shown inline


def build(context: Context) -> Built | None:
    """instability_atlas.csv, instability_regression.csv, instability_top.csv and
    instability_atlas_<condition>.png; None when no run recorded dynamics."""
    runs = context.dynamics
    if not runs:
        return None
    predictions = dynamics_predictions(context.predictions, runs, context.collected.runs)
    if predictions.empty:
        log.info("note: the runs with training dynamics have no predictions.jsonl: instability atlas skipped")
        return Built("## Instability atlas\n\nThe runs that recorded training dynamics have no diagnostic "
                     "predictions (predictions.jsonl), so no item's flips can be counted.\n")
    options = context.options
    atlas = instability_atlas(predictions, runs, context.annotate,
                              other_texts=scored_texts(context, {run.lang for run in runs}, set(predictions["lang"])))
    regression, regression_notes = instability_regression(atlas.table, options.confidence, context.clusters)
    top = top_items(atlas.table, options.flip_top)
    drawn = []
    if options.figures:
        from stability.report.instability_atlas_figure import instability_figures

        drawn = instability_figures(atlas.table, context.out)
    text = _markdown(atlas.table, regression, regression_notes, top, atlas.notes, options.confidence,
                     options.flip_top, options.cluster != NO_CLUSTERS)
    if drawn:
        text += figure_links(drawn)
    return Built(text, {ATLAS_FILE: atlas.table, REGRESSION_FILE: regression, TOP_FILE: top}, drawn)


def scored_texts(context: Context, trained: set[str], scored: set[str]) -> pd.DataFrame | None:
    """The items (lang, idx, premise, hypothesis) of the languages the runs were scored in but did not
    train in (`data.eval_langs`), read again from their files (`Context.records_of`); None without any."""
    frames = []
    for lang in sorted(scored - trained):
        records, why = context.records_of(lang)
        if records is None:
            log.info("note: instability atlas: no text of %s's items (%s)", lang, why)
            continue
        frames.append(records.assign(lang=lang, idx=records["idx"].astype(str))[["lang", "idx", *TEXT_COLUMNS]])
    return pd.concat(frames, ignore_index=True) if frames else None


def _markdown(atlas: pd.DataFrame, regression: pd.DataFrame, notes: dict[tuple[str, str], list[str]],
              top: pd.DataFrame, feature_notes: list[str], confidence: float, flip_top: int, clustered: bool) -> str:
    alpha = 1 - confidence
    features = "features" in atlas.columns
    terms = ", the features of the rule-based annotator (those detectable in every language)" if features else ""
    text = ("## Instability atlas\n\nRuns with training dynamics only. Per diagnostic item: *seed flip rate*, the "
            "share of seed pairs whose final predictions differ (an item *flips* when not every seed predicts the "
            f"same label); *late flip rate*, the share of consecutive pairs among a run's last {LAST_VALIDATIONS} "
            "validations at which its predicted label changes (mean over seeds); *language flip rate*, the share "
            "of language pairs (same seed, items aligned by idx) whose final predictions differ (mean over seeds). "
            f"A logistic regression of *flips between seeds* on the 4 coarse categories"
            f"{terms} and the "
            "language (against the alphabetically first), pooled over items × languages, says what goes with "
            "instability; odds ratio > 1: more likely to flip"
            + (" (cluster-robust standard errors: an item's rows in every language and the items of its cluster "
               "form one group)" if clustered else "") + f". `{ATLAS_FILE}` has every item, "
            f"`{REGRESSION_FILE}` every coefficient, `{TOP_FILE}` the {flip_top} least stable items of each "
            "condition with their text in every language.\n\n")
    text += "".join(f"Note: {line}.\n\n" for line in feature_notes)
    if not features and not feature_notes:
        text += "Note: the feature annotator is not installed; the regression has no feature terms.\n\n"
    summary = language_summary(atlas)
    for (setup, variant), rows in atlas.groupby(CONDITION, sort=True):
        part = summary[(summary["setup"] == setup) & (summary["variant"] == variant)]
        text += f"**{condition_name(setup, variant)}**\n\n" + table(
            ["lang", "items", "seeds", "items flipping between seeds (share)", "mean seed flip rate",
             "mean late flip rate"],
            [[r.lang, r.n_items, r.n_seeds,
              "–" if r.n_defined == 0 else f"{r.n_flipping} ({num(r.n_flipping / r.n_defined, 2)})",
              num(r.flip_rate_seeds), num(r.flip_rate_validations)]
             for r in part.itertuples()]) + "\n"
        groups = rows.groupby(GROUP, sort=True)
        for group, members in groups:
            shared = shared_flips(members)
            if shared is not None and shared.n_items:
                across = members.drop_duplicates("idx")["flip_rate_languages"].mean()
                named = f" ({group.replace('+', ', ')}: translations of one another)" if len(groups) > 1 else ""
                text += (f"Across languages{named}: of the {shared.n_items} items with a defined seed flip in all "
                         f"{shared.n_languages} languages, {shared.in_all} flip in every language "
                         f"({num(shared.expected_all, 1)} expected if the languages flipped independently at their "
                         f"own rates) and {shared.in_any} in at least one; mean language flip rate {num(across)}.\n\n")
        if len(groups) > 1:
            text += ("Languages whose diagnostic sets are not translations of one another (other labels or "
                     "categories under one idx) are not paired item by item: "
                     + " | ".join(group for group, _ in groups) + ".\n\n")
        langs = sorted(rows["lang"].unique())
        text += _regression(regression, notes.get((setup, variant), []), setup, variant, langs[0], alpha,
                            confidence)
        if rows["flip_rate_seeds"].notna().any():   # else the regression's note says why nothing flips
            text += _top(top, setup, variant)
    return text


def _regression(regression: pd.DataFrame, notes: list[str], setup: str, variant: str, reference: str,
                alpha: float, confidence: float) -> str:
    part = regression[(regression["setup"] == setup) & (regression["variant"] == variant)]
    text = ""
    if not part.empty:
        level = f"{confidence:.0%}"
        rows = [[term, num(r.coef), num(r.odds_ratio), f"[{num(r.ci_low)}, {num(r.ci_high)}]",
                 f"{r.p_value:.3g}" + (" *" if r.p_value < alpha else "")]
                for term, r in zip(part["term"], part.itertuples())]
        text += (f"Logistic regression of *flips between seeds* ({int(part['n_obs'].iloc[0])} items × languages; "
                 f"* p < {alpha:g}; `{INTERCEPT}`: an item of {reference} in none of the categories, with none of the "
                 "features):\n\n"
                 + table(["term", "coef (log odds)", "odds ratio",
                          f"{level} CI (coef; Wald, cluster-robust where items cluster; coverage not simulated)", "p"],
                         rows) + "\n")
    if notes:
        text += "Regression: " + "; ".join(notes) + ".\n\n"
    return text


def _top(top: pd.DataFrame, setup: str, variant: str) -> str:
    listed = top[(top["setup"] == setup) & (top["variant"] == variant)]
    part = listed.sort_values(["flip_rate_mean", "rank"], ascending=[False, True], kind="stable").head(_SHOWN)
    if part.empty:
        return "No item flips between seeds.\n\n"
    rows = []
    for r in part.to_dict("records"):
        for i, lang in enumerate(lang for lang in str(r[GROUP]).split("+") if pd.notna(r.get(f"premise_{lang}"))
                                 or pd.notna(r.get(f"flip_rate_{lang}"))):
            first = i == 0
            rows.append([r["idx"] if first else "", ("not_entailment" if r["label"] == 1 else "entailment")
                         if first else "", _short(str(r["categories"]).replace(";", ", ")) if first else "",
                         num(r["flip_rate_mean"]) if first else "", lang, num(r.get(f"flip_rate_{lang}")),
                         _short(r.get(f"premise_{lang}")), _short(r.get(f"hypothesis_{lang}"))])
    return (f"Least stable items (highest mean seed flip rate; all {len(listed)} in `{TOP_FILE}`):\n\n"
            + table(["idx", "gold", "categories", "mean seed flip rate", "lang", "seed flip rate", "premise",
                     "hypothesis"], rows) + "\n")


def _short(value: object) -> str:
    """The text on one line, cut to `_TEXT` characters."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "–"
    text = " ".join(str(value).split())
    return text if len(text) <= _TEXT else text[:_TEXT - 1] + "…"
