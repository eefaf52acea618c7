"""`## Failed runs`: which runs learned nothing, and the seed statistics again without them."""
from __future__ import annotations

from stability.core.markdown import table
from stability.report.context import Context
from stability.report.failed import failed_counts
from stability.report.section import Built, with_variant
from stability.statistics.seeds import category_stats


def build(context: Context) -> Built | None:
    """failed_runs.csv, category_stats_nonfailed.csv, summary_nonfailed.csv; None when no run
    directory was judged (tidy CSV inputs only)."""
    failed = context.failed
    if failed.empty:
        return None
    variants = context.has_variants
    rows = [with_variant([r.lang, r.setup], r.variant, variants) + [f"{r.n_failed} of {r.n_runs}", r.n_predictions_only]
            for r in failed_counts(failed).itertuples()]
    listed = [with_variant([r.lang, r.setup], r.variant, variants) + [r.seed, r.reason]
              for r in failed[failed["failed"]].itertuples()]
    group = with_variant(["lang", "setup"], "variant", variants)
    treatment = ("They are left out of every table and figure (`exclude_failed=true`)." if context.options.exclude_failed
                 else "Their columns are hatched in the seed heat maps; the summary, `category_stats_nonfailed.csv`, "
                 "`summary_nonfailed.csv`, per-item agreement and consistency give each statistic over all seeds "
                 "and over the non-failed ones; bootstrap intervals, comparisons and size curves use all runs "
                 "(`exclude_failed=true` leaves failed runs out of everything).")
    text = ("## Failed runs\n\nA run is *failed* when its validation accuracy is not above the validation "
            "set's majority-class share, or its diagnostic predictions are constant (thresholds: "
            "`failed_margin`, `constant_share`). Such a run learned nothing: its category MCCs are 0.0 or "
            f"undefined, not evidence about the categories. {treatment} Runs recorded before the majority "
            "share was stored are judged by their predictions only (last column).\n\n"
            + table(group + ["failed", "judged by predictions only"], rows))
    if listed:
        text += "\n" + table(group + ["seed", "why"], listed)
    tables = {"failed_runs.csv": failed, "category_stats_nonfailed.csv": category_stats(context.nonfailed_results),
              "summary_nonfailed.csv": context.summary_nonfailed}
    return Built(text, tables)
