"""The sections on training dynamics as the page's views: each group's seed-averaged data map as a
scatter whose points show their training item, and the instability atlas as one searchable table
of every diagnostic item with its flip rates (data_map.csv's and instability_atlas.csv's values)."""
from __future__ import annotations

import pandas as pd

from stability.core.markdown import num
from stability.report.context import Context
from stability.report.data_map import AMBIGUOUS_VARIABILITY, EASY_CONFIDENCE, HARD_CONFIDENCE, REGIONS
from stability.report.data_map_figure import data_map_path
from stability.report.page.view import Tables, View
from stability.report.sections.instability_atlas import ATLAS_FILE
from stability.statistics.seeds import GROUP_KEY, condition_name

LABELS = ("entailment", "not_entailment")   # gold 0 and 1 (docs/design.md, "Data contract")
ATLAS_SHOWN = ["lang", "setup", "variant", "idx", "label", "categories", "flip_rate_seeds", "flip_rate_validations",
               "flip_rate_languages", "premise", "hypothesis"]


def data_map_views(context: Context, tables: Tables) -> list[View]:
    """Per (lang, setup, variant) the seed-averaged map: variability, confidence and correctness as
    data_map.csv rounds them in report.md (3 decimals), the region, the gold label and the text."""
    views = []
    for (lang, setup, variant), items in context.data_maps.items.groupby(GROUP_KEY, sort=True):
        mapped = items.dropna(subset=["variability"])
        views.append(View("datamap", {
            "lang": lang, "setup": setup, "variant": variant, "condition": condition_name(setup, variant),
            "regions": list(REGIONS), "bounds": [AMBIGUOUS_VARIABILITY, EASY_CONFIDENCE, HARD_CONFIDENCE],
            "unmapped": int(len(items) - len(mapped)),
            "columns": ["idx", "variability", "confidence", "correctness", "region", "label", "premise", "hypothesis"],
            "points": [[str(r.idx), num(r.variability), num(r.confidence), num(r.correctness),
                        REGIONS.index(r.region), LABELS[int(r.label)], _text(r.premise), _text(r.hypothesis)]
                       for r in mapped.itertuples(index=False)]},
            data_map_path(context.out, lang, setup, variant).name))
    return views


def atlas_views(context: Context, tables: Tables) -> list[View]:
    """instability_atlas.csv's rows, its rates as report.md prints them (3 decimals)."""
    atlas = tables.get(ATLAS_FILE)
    if atlas is None or atlas.empty:
        return []
    rows = [[r["lang"], r["setup"], r["variant"], str(r["idx"]), LABELS[int(r["label"])],
             str(r["categories"]).replace(";", ", "), num(r["flip_rate_seeds"]), num(r["flip_rate_validations"]),
             num(r["flip_rate_languages"]), _text(r["premise"]), _text(r["hypothesis"])]
            for r in atlas[ATLAS_SHOWN].to_dict("records")]
    header = ["lang", "setup", "variant", "idx", "gold", "categories", "seed flip rate", "late flip rate",
              "language flip rate", "premise", "hypothesis"]
    return [View("atlas", {"header": header, "rows": rows})]


def _text(value: object) -> str:
    return "–" if value is None or (isinstance(value, float) and pd.isna(value)) else str(value)
