"""`## Language-wise correlation`: do languages agree on which categories are hard?"""
from __future__ import annotations

import math

from stability.core.markdown import num, table
from stability.report.context import Context
from stability.report.section import Built, with_variant
from stability.report.stats import MEAN, language_corr


def build(context: Context) -> Built:
    """language_corr.csv (always); the markdown table when some setup has two languages."""
    corr = language_corr(context.category_stats)
    if corr.empty:
        return Built(tables={"language_corr.csv": corr})
    langs = sorted(set(corr["lang_a"]) - {MEAN})
    rows = []
    variants = context.has_variants
    for (setup, variant), group in corr.groupby(["setup", "variant"], sort=True):
        means = group[group["lang_b"] == MEAN].set_index("lang_a")["pearson"]
        rows.append(with_variant([setup], variant, variants) + [num(means.get(MEAN, math.nan))]
                    + [num(means.get(lang, math.nan)) for lang in langs])
    text = ("## Language-wise correlation\n\nPearson r between languages' seed-averaged category-MCC "
            "vectors: the mean over all language pairs, and each language's mean r with the others.\n\n"
            + table(with_variant(["setup"], "variant", variants) + ["all pairs"] + langs, rows))
    return Built(text, {"language_corr.csv": corr})
