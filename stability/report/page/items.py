"""The diagnostic items the page lists when a category is clicked: per language each item's premise,
hypothesis, gold label and categories, and per condition each seed's prediction and P(entailment)
as predictions.jsonl has them, aligned with the language's items so that they travel as a string and
a list of integers rather than one object per prediction (66,240 at the study's size)."""
from __future__ import annotations

import pandas as pd

from stability.core.taxonomy import FINE_CATEGORIES
from stability.report.context import Context

MISSING = "-"        # a seed without a prediction for the item


def item_data(context: Context) -> dict:
    """{"categories": names, "langs": {lang: items}, "conditions": {"lang|setup|variant": predictions}};
    an item's categories as their numbers in `FINE_CATEGORIES` (predictions hold them `;`-joined)."""
    predictions = context.predictions
    langs, conditions = {}, {}
    for lang, rows in predictions.groupby("lang", sort=True):
        items = rows.drop_duplicates("idx")
        order = pd.Index(items["idx"].astype(str))
        records, why = context.records_of(lang)
        texts = None if records is None else \
            records.assign(idx=records["idx"].astype(str)).drop_duplicates("idx").set_index("idx").reindex(order)
        langs[lang] = {
            "idx": list(order), "label": items["label"].astype(int).tolist(),
            "categories": [[FINE_CATEGORIES.index(name) for name in str(names).split(";") if name in FINE_CATEGORIES]
                           for names in items["categories"]],
            "premise": None if texts is None else _texts(texts["premise"]),
            "hypothesis": None if texts is None else _texts(texts["hypothesis"]),
            "why": why}
        for (setup, variant), condition in rows.groupby(["setup", "variant"], sort=True):
            conditions["|".join((lang, setup, variant))] = _seed_predictions(condition, order)
    return {"categories": list(FINE_CATEGORIES), "langs": langs, "conditions": conditions}


def _seed_predictions(rows: pd.DataFrame, order: pd.Index) -> dict:
    """Per seed the predictions ("0"/"1", MISSING) as one string and P(entailment) in thousandths
    (None where not recorded: the three decimals report.md prints, as digits), in the order of the
    language's items."""
    seeds, preds, probs = [], [], []
    for seed, part in rows.groupby("seed", sort=True):
        part = part.assign(idx=part["idx"].astype(str)).drop_duplicates("idx").set_index("idx").reindex(order)
        seeds.append(int(seed))
        preds.append("".join(MISSING if pd.isna(p) else str(int(p)) for p in part["pred"]))
        probs.append([None if pd.isna(p) else int(f"{p:.3f}".replace(".", "")) for p in part["prob_entailment"]])
    return {"seeds": seeds, "pred": preds, "prob": probs}


def _texts(column: pd.Series) -> list[str | None]:
    return [None if pd.isna(text) else str(text) for text in column]
