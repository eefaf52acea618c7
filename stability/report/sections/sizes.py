"""`## Training-data size`: seed statistics against the number of added examples (MNLI or a mixed-in dataset)."""
from __future__ import annotations

from stability.core.markdown import num, table
from stability.report import figures
from stability.report.context import Context
from stability.report.section import Built, figure_links, pm, with_variant
from stability.report.sizes import size_curve


def build(context: Context) -> Built | None:
    """size_curve.csv and its figure; None unless a setup family has two sizes."""
    curve = size_curve(context.summary, context.results)
    if curve.empty:
        return None
    drawn = [figures.size_curve_plot(curve, context.out)] if context.options.figures else []
    variants = context.has_variants
    rows = [[r.lang, r.family, f"{r.n_added:,}", *with_variant([r.setup], r.variant, variants), pm(r.overall_mcc_mean, r.overall_mcc_std),
             pm(r.mean_category_mcc_mean, r.mean_category_mcc_std), num(r.rs_corr)]
            for r in curve.itertuples()]
    text = ("## Training-data size\n\nSetups of one family differing only in the number of added MNLI "
            "examples, or of examples of another mixed-in dataset (family `rte+<name>`, e.g. translate-train "
            "`rte+xnli`, which starts at `rte` too).\n\n"
            + table(["lang", "family", "MNLI added", *with_variant(["setup"], "variant", variants), "overall MCC", "mean category MCC", "RS corr."], rows)
            + ("\n" + figure_links(drawn) if drawn else ""))
    return Built(text, {"size_curve.csv": curve}, drawn)
