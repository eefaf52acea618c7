"""`## Test suites`: accuracy per template and feature of runs scored on generated test suites."""
from __future__ import annotations

import pandas as pd

from stability.core.markdown import num, table
from stability.report.context import Context
from stability.report.section import Built, pm
from stability.report.suites import ALL_TEMPLATES, feature_gaps, suite_accuracy
from stability.statistics.seeds import GROUP_KEY, condition_name, group_rows

_GAPS_LISTED = 10


def build(context: Context) -> Built | None:
    """template_accuracy.csv and the section; None unless some run was scored on a test suite."""
    accuracy = suite_accuracy(context.predictions)
    if accuracy.empty:
        return None
    return Built(suite_section(accuracy, context.category_stats), {"template_accuracy.csv": accuracy})


def _gap_rows(gaps: pd.DataFrame, with_template: bool) -> list[list[str]]:
    return [([r.template] if with_template else [])
            + [r.feature, f"{r.low_value} {num(r.low_accuracy)} (n={r.low_n})",
               f"{r.high_value} {num(r.high_accuracy)} (n={r.high_n})", num(r.gap)] for r in gaps.itertuples()]


def suite_section(accuracy: pd.DataFrame, category_stats: pd.DataFrame) -> str:
    """The report.md section: templates by accuracy beside their category's MCC, then the
    feature values that separate success from failure, pooled and within templates."""
    mcc = category_stats.set_index(GROUP_KEY + ["category"])
    gaps = feature_gaps(accuracy)
    text = ("## Test suites: accuracy per template and feature\n\n"
            "Runs scored on generated test suites. Accuracy of each template's items (all share one "
            "gold label), mean ± σ over seeds, beside the MCC of the template's category. A feature "
            "gap is the accuracy of a feature's best value minus its worst (e.g. `name.GENDER`: "
            "FEM 0.40, MASC 0.90 reads \"fails when the name is feminine\"); with few items per value "
            "a gap may be noise, so the item counts are given. Every row is in `template_accuracy.csv`.\n")
    for (lang, setup, variant), group in accuracy.groupby(GROUP_KEY, sort=True):
        templates = group[(group["feature"] == "") & (group["template"] != ALL_TEMPLATES)] \
            .sort_values(["accuracy_mean", "template"])
        rows = []
        for r in templates.itertuples():
            names = [name for name in r.categories.split(";") if name]
            scores = [pm(*mcc.loc[(lang, setup, variant, name), ["mcc_mean", "mcc_std"]])
                      if (lang, setup, variant, name) in mcc.index else "–" for name in names]
            rows.append([r.template, r.label, "; ".join(names), "; ".join(scores), r.n_items,
                         pm(r.accuracy_mean, r.accuracy_std)])
        text += (f"\n### {lang}, {condition_name(setup, variant)}\n\nTemplates, lowest accuracy first:\n\n"
                 + table(["template", "label", "category", "category MCC", "items", "accuracy"], rows))
        mine = group_rows(gaps, (lang, setup, variant))
        pooled = mine[mine["template"] == ALL_TEMPLATES]
        within = mine[mine["template"] != ALL_TEMPLATES].head(_GAPS_LISTED)
        header = ["feature", "lowest value: accuracy (items)", "highest value: accuracy (items)", "gap"]
        if len(pooled):
            text += "\nFeatures over all templates:\n\n" + table(header, _gap_rows(pooled, False))
        if len(within):
            text += (f"\nLargest gaps within a template (top {_GAPS_LISTED}):\n\n"
                     + table(["template"] + header, _gap_rows(within, True)))
    return text
