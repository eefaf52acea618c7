"""`## Per-item agreement`: which diagnostic items the seeds disagree on (needs predictions.jsonl)."""
from __future__ import annotations

import logging

from stability.core.markdown import num, table
from stability.report.agreement import ALL_ITEMS, agreement_by_category, flip_items, item_agreement
from stability.report.context import Context
from stability.report.failed import without_failed
from stability.report.section import LISTED, Built, with_variant
from stability.statistics.seeds import GROUP_KEY, group_rows

log = logging.getLogger(__name__)


def build(context: Context) -> Built | None:
    """item_agreement.csv, agreement_by_category.csv, flip_items.csv (and item_agreement_nonfailed.csv
    when a run failed); None without predictions."""
    predictions = context.predictions
    if predictions.empty:
        log.info("note: no predictions.jsonl in the inputs: per-item agreement and bootstrap intervals skipped")
        return None
    items = item_agreement(predictions)
    by_category = agreement_by_category(items)
    tables = {"item_agreement.csv": items, "agreement_by_category.csv": by_category,
              "flip_items.csv": flip_items(items, context.options.flip_top)}
    kept = None
    if context.failed["failed"].any():
        kept = tables["item_agreement_nonfailed.csv"] = item_agreement(without_failed(predictions, context.failed))
    rows, variants = [], context.has_variants
    for (lang, setup, variant), group in items.groupby(GROUP_KEY, sort=True):
        categories = group_rows(by_category, (lang, setup, variant))
        lowest = categories[categories["category"] != ALL_ITEMS] \
            .sort_values(["agreement_mean", "category"]).head(LISTED)
        nonfailed = group_rows(kept, (lang, setup, variant))["agreement"] if kept is not None else None
        rows.append(with_variant([lang, setup], variant, variants)
                    + [len(group), int(group["n_seeds"].max()), num(group["agreement"].mean()),
                       "–" if nonfailed is None else num(nonfailed.mean()), num((group["agreement"] == 1).mean()),
                       ", ".join(f"{r.category} ({num(r.agreement_mean)})" for r in lowest.itertuples())])
    text = ("## Per-item agreement\n\nShare of seed pairs that predict the same label for an item, "
            "averaged over items (all seeds, and without failed runs); `flip_items.csv` lists the items the "
            "seeds disagree on most.\n\n"
            + table(with_variant(["lang", "setup"], "variant", variants)
                    + ["items", "seeds", "mean agreement (all seeds)", "(non-failed seeds)",
                       "items all seeds agree on", "lowest-agreement categories"], rows))
    return Built(text, tables)
