"""Failed runs: seeds whose fine-tuning learned nothing, told apart so statistics can leave them out.

Fine-tuning BERT-style encoders on RTE-sized data fails outright on some seeds (Dodge et
al., 2020; Mosbach et al., 2021): the run answers one class. Averaged in, such a run's 33
category MCCs of 0.0 look like ordinary results. A run is *failed* when

- its validation accuracy is not above the validation set's majority-class share plus
  `margin` (it did no better than always answering the most frequent label), or
- its diagnostic predictions are constant: the most frequent predicted label covers at
  least `constant_share` of the items (1.0 = every item).

Records written before `val_majority` existed (and hand-written ones) are judged by their
predictions only; tidy CSV inputs carry neither and are not judged. `judged_by` says which
evidence each verdict rests on.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from stability.statistics.seeds import GROUP_KEY

FAILED_COLUMNS = ["lang", "setup", "variant", "seed", "failed", "reason", "judged_by", "val_accuracy", "val_majority",
                  "majority_pred_share", "n_items"]
RUN_KEY = GROUP_KEY + ["seed"]


@dataclass(frozen=True)
class FailedRule:
    """The two thresholds of a failed run (report options failed_margin, constant_share)."""

    margin: float = 0.0
    constant_share: float = 1.0


def _majority_pred_share(predictions: pd.DataFrame) -> pd.DataFrame:
    """Per run: diagnostic items and the share of the most frequent predicted label."""
    if predictions.empty:
        return pd.DataFrame(columns=RUN_KEY + ["n_items", "majority_pred_share"])
    grouped = predictions.groupby(RUN_KEY)["pred"]
    share_positive = grouped.mean()
    table = pd.DataFrame({"n_items": grouped.size(),
                          "majority_pred_share": share_positive.where(share_positive >= 0.5, 1 - share_positive)})
    return table.reset_index()


def _verdict(row: pd.Series, rule: FailedRule) -> tuple[bool, str, str]:
    """(failed, reason, judged_by) of one run."""
    has_val = not (pd.isna(row["val_accuracy"]) or pd.isna(row["val_majority"]))
    has_preds = not pd.isna(row["majority_pred_share"])
    reasons = []
    if has_val and row["val_accuracy"] <= row["val_majority"] + rule.margin:
        reasons.append(f"validation accuracy {row['val_accuracy']:.3f} not above the majority share "
                       f"{row['val_majority']:.3f}" + (f" + {rule.margin:g}" if rule.margin else ""))
    if has_preds and row["majority_pred_share"] >= rule.constant_share - 1e-12:
        reasons.append("constant diagnostic predictions" if math.isclose(row["majority_pred_share"], 1.0)
                       else f"{row['majority_pred_share']:.1%} of diagnostic predictions are one label")
    judged_by = " and ".join(name for name, present in (("validation", has_val), ("predictions", has_preds))
                             if present) or "nothing (no validation majority share, no predictions)"
    return bool(reasons), "; ".join(reasons), judged_by


def failed_runs(runs: pd.DataFrame, predictions: pd.DataFrame, rule: FailedRule) -> pd.DataFrame:
    """One row per run directory with its verdict (FAILED_COLUMNS); empty for CSV-only inputs."""
    if runs.empty:
        return pd.DataFrame(columns=FAILED_COLUMNS).astype({"failed": bool})
    table = runs.merge(_majority_pred_share(predictions), on=RUN_KEY, how="left")
    for column in ("val_accuracy", "val_majority", "majority_pred_share"):
        table[column] = pd.to_numeric(table[column], errors="coerce")
    verdicts = table.apply(lambda row: _verdict(row, rule), axis=1, result_type="expand")
    table[["failed", "reason", "judged_by"]] = verdicts
    table["failed"] = table["failed"].astype(bool)
    table["n_items"] = table["n_items"].astype("Int64")
    return table.sort_values(RUN_KEY).reset_index(drop=True)[FAILED_COLUMNS]


def failed_keys(failed: pd.DataFrame) -> set[tuple[str, str, str, int]]:
    """(lang, setup, variant, seed) of every failed run."""
    rows = failed[failed["failed"]]
    return {(lang, setup, variant, int(seed)) for lang, setup, variant, seed in rows[RUN_KEY].itertuples(index=False)}


def without_failed(table: pd.DataFrame, failed: pd.DataFrame) -> pd.DataFrame:
    """The rows of a table keyed by lang, setup, variant, seed that do not belong to a failed run."""
    keys = failed_keys(failed)
    if not keys or table.empty:
        return table
    runs = pd.MultiIndex.from_frame(table[RUN_KEY].astype({"seed": int}))
    return table[~runs.isin(list(keys))]


def failed_counts(failed: pd.DataFrame) -> pd.DataFrame:
    """Per (lang, setup, variant): runs judged, failed, and runs judged without a validation majority share."""
    if failed.empty:
        return pd.DataFrame(columns=GROUP_KEY + ["n_runs", "n_failed", "n_predictions_only"])
    return failed.assign(predictions_only=failed["judged_by"] == "predictions").groupby(GROUP_KEY).agg(
        n_runs=("seed", "size"), n_failed=("failed", "sum"), n_predictions_only=("predictions_only", "sum"),
    ).reset_index()
