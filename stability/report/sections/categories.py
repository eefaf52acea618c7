"""`## Stability per category`: the most and least stable categories, seed and language heat maps."""
from __future__ import annotations

from stability.core.markdown import num, table
from stability.report import figures
from stability.report.context import Context
from stability.report.failed import failed_keys
from stability.report.section import LISTED, Built, figure_links, with_variant
from stability.statistics.figures import seed_heatmaps
from stability.statistics.seeds import GROUP_KEY


def build(context: Context) -> Built:
    """category_stats.csv; per (lang, setup, variant) the categories with the smallest and largest σ."""
    stats, variants = context.category_stats, context.has_variants
    rows = []
    for (lang, setup, variant), group in stats.groupby(GROUP_KEY, sort=True):
        # a category without items has σ = 0 by construction, which says nothing about stability
        scored = group[group["n_items"].fillna(1) > 0]
        ranked = scored.dropna(subset=["mcc_std"]).sort_values(["mcc_std", "category"])
        listing = [", ".join(f"{r.category} ({num(r.mcc_std)})" for r in part.itertuples())
                   for part in (ranked.head(LISTED), ranked.tail(LISTED)[::-1])]
        rows.append(with_variant([lang, setup], variant, variants) + (listing if len(ranked) else ["–", "–"]))
    drawn = []
    if context.options.figures:
        drawn = seed_heatmaps(stats, context.out, context.fine_flags, failed_keys(context.failed)) \
            + figures.language_heatmaps(stats, context.out, context.fine_flags)
    text = ("## Stability per category\n\nCategories with the smallest and largest σ of MCC across "
            "seeds (σ in parentheses); categories without diagnostic items are left out.\n\n"
            + table(with_variant(["lang", "setup"], "variant", variants) + ["most stable", "least stable"], rows) + "\n" + figure_links(drawn))
    return Built(text, {"category_stats.csv": stats}, drawn)
