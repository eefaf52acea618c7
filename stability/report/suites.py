"""Per-template and per-feature accuracy of runs scored on generated test suites.

A suite item carries its template id and the features its template varied
({"name1.GENDER": "FEM"}), so beside the category MCC the report can say where runs fail:
which template, and which feature value ("fails when the subject is feminine"). Accuracy,
not MCC: every item of a template has the same gold label. Accuracy is computed per seed,
then averaged (σ: sample standard deviation over seeds, ddof = 1).
"""
from __future__ import annotations

import pandas as pd

from stability.core.records import LABEL_NAMES
from stability.statistics.seeds import GROUP_KEY

ACCURACY_COLUMNS = ["lang", "setup", "variant", "template", "label", "categories", "feature", "value", "n_items",
                    "n_seeds", "accuracy_mean", "accuracy_std"]
GAP_COLUMNS = ["lang", "setup", "variant", "template", "feature", "low_value", "low_accuracy", "low_n",
               "high_value", "high_accuracy", "high_n", "gap"]
ALL_TEMPLATES = "all templates"
_LABELS = dict(enumerate(LABEL_NAMES))


def suite_accuracy(predictions: pd.DataFrame) -> pd.DataFrame:
    """Rows per (lang, setup, variant, template): the whole template (feature empty), each feature value
    within it, and each feature value pooled over templates (template = "all templates")."""
    items = predictions[predictions["template"].notna()]
    if items.empty:
        return pd.DataFrame(columns=ACCURACY_COLUMNS)
    items = items.assign(correct=(items["label"] == items["pred"]).astype(float))
    whole = items.assign(feature="", value="")
    features = pd.DataFrame(
        [(index, name, value) for index, found in items["features"].items() if isinstance(found, dict)
         for name, value in found.items()], columns=["index", "feature", "value"]).set_index("index")
    by_feature = items.join(features, how="inner")
    pooled = by_feature.assign(template=ALL_TEMPLATES)
    keys = GROUP_KEY + ["template", "feature", "value"]
    per_seed = pd.concat([whole, by_feature, pooled]).groupby(keys + ["seed"], sort=False) \
        .agg(correct=("correct", "mean"), n_items=("correct", "size")).reset_index()
    table = per_seed.groupby(keys, sort=True).agg(
        n_items=("n_items", "max"), n_seeds=("seed", "nunique"),
        accuracy_mean=("correct", "mean"), accuracy_std=("correct", lambda x: x.std(ddof=1))).reset_index()
    about = items.groupby("template").agg(label=("label", "first"), categories=("categories", "first"))
    table = table.join(about, on="template")
    table["label"] = table["label"].map(_LABELS).fillna("")
    table["categories"] = table["categories"].fillna("")
    return table[ACCURACY_COLUMNS]


def feature_gaps(table: pd.DataFrame) -> pd.DataFrame:
    """Per (lang, setup, variant, template, feature): the values with the lowest and highest accuracy."""
    rows = []
    values = table[table["feature"] != ""]
    for (lang, setup, variant, template, feature), group in values.groupby(GROUP_KEY + ["template", "feature"]):
        if len(group) < 2:
            continue
        ranked = group.sort_values(["accuracy_mean", "value"])
        low, high = ranked.iloc[0], ranked.iloc[-1]
        rows.append([lang, setup, variant, template, feature, low.value, low.accuracy_mean, low.n_items, high.value,
                     high.accuracy_mean, high.n_items, high.accuracy_mean - low.accuracy_mean])
    return pd.DataFrame(rows, columns=GAP_COLUMNS).sort_values(GROUP_KEY + ["gap"], ascending=[True, True, True, False])
