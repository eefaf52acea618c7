"""`## Extra evaluation sets`: each run's accuracy and MCC on the labelled sets of `data.extra_eval`
(e.g. XNLI test in the run's language), mean ± σ over seeds per (lang, setup, variant, set)."""
from __future__ import annotations

from stability.core.markdown import table
from stability.report.context import Context
from stability.report.section import Built, pm, with_variant
from stability.report.stats import extra_summary


def build(context: Context) -> Built | None:
    """extra_eval.csv (one row per run and set), extra_eval_summary.csv and its table; None when no
    run was scored on an extra set."""
    if context.extra.empty:
        return None
    stats = extra_summary(context.extra)
    variants = context.has_variants
    rows = [[*with_variant([r.lang, r.setup], r.variant, variants), r.set, r.n_seeds, f"{r.n_items:,}",
             pm(r.accuracy_mean, r.accuracy_std), pm(r.mcc_mean, r.mcc_std), r.n_degenerate]
            for r in stats.itertuples()]
    text = ("## Extra evaluation sets\n\nEvery run scored on labelled sets besides the diagnostic "
            "(`data.extra_eval`): accuracy and MCC, mean ± σ over seeds (σ: sample standard deviation, "
            "ddof = 1), like the summary's overall MCC. MCC undefined: seeds whose predictions (or gold "
            "labels) were all one class, scored 0.0.\n\n"
            + table(with_variant(["lang", "setup"], "variant", variants)
                    + ["set", "seeds", "pairs", "accuracy", "MCC", "MCC undefined"], rows))
    return Built(text, {"extra_eval.csv": context.extra, "extra_eval_summary.csv": stats})
