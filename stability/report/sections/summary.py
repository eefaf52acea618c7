"""`## Summary`: per (lang, setup, variant) mean ± σ over seeds and RS corr., over all and non-failed seeds."""
from __future__ import annotations

from stability.core.markdown import num, table
from stability.report.consistency import NON_FAILED
from stability.report.context import Context
from stability.report.failed import failed_counts
from stability.report.section import Built, pm, with_variant


def build(context: Context) -> Built:
    """summary.csv, and a table row per group, followed by its non-failed row when seeds failed."""
    failed = {(r.lang, r.setup, r.variant): int(r.n_failed) for r in failed_counts(context.failed).itertuples()}
    excluded, variants = context.options.exclude_failed, context.has_variants
    nonfailed = {(r.lang, r.setup, r.variant): r for r in context.summary_nonfailed.itertuples()} \
        if context.summary_nonfailed is not None and not excluded else {}

    def row(r, runs: str) -> list[str]:
        group = with_variant([r.lang, r.setup], r.variant, variants)
        return [*(name if runs != NON_FAILED else "" for name in group), runs, r.n_seeds,
                pm(r.overall_mcc_mean, r.overall_mcc_std), pm(r.mean_category_mcc_mean, r.mean_category_mcc_std),
                num(r.rs_corr), f"{r.rs_corr_pairs} / {r.rs_corr_skipped}"]

    rows = []
    for r in context.summary.itertuples():
        n_failed = failed.get((r.lang, r.setup, r.variant))
        label = "non-failed" if excluded else "all seeds"
        rows.append(row(r, label) + ["–" if n_failed is None else str(n_failed)])
        if n_failed and (r.lang, r.setup, r.variant) in nonfailed:
            rows.append(row(nonfailed[(r.lang, r.setup, r.variant)], NON_FAILED) + [""])
    text = ("## Summary\n\nMean ± σ over seeds (σ: sample standard deviation, ddof = 1). "
            "RS corr.: mean Pearson r between two seeds' category-MCC vectors over all seed pairs; "
            "pairs where a vector is constant are skipped. Groups with failed runs (see *Failed runs*) get "
            "a second row over the non-failed seeds.\n\n"
            + table(with_variant(["lang", "setup"], "variant", variants) + ["runs", "seeds", "overall MCC", "mean category MCC", "RS corr.",
                     "pairs used / skipped", "failed"], rows))
    return Built(text, {"summary.csv": context.summary})
