"""`## Probing`: every probing.csv under the report's input folders, summarised as the best layer
per (model, task) with its controls (docs/design.md, "Analysis outputs")."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from stability.core.markdown import num, table
from stability.core.probetable import find_probing_tables, read_probing_table
from stability.report.context import Context
from stability.report.section import Built


def best_layers(table: pd.DataFrame) -> pd.DataFrame:
    """Per (model, task): the layer with the highest seed-mean accuracy, and its controls there."""
    means = table.groupby(["model", "task", "layer"], sort=True).agg(
        n_seeds=("test_acc", "size"), test_acc=("test_acc", "mean"), selectivity=("selectivity", "mean"),
        random_init_acc=("random_init_acc", "mean"), majority_acc=("majority_acc", "mean")).reset_index()
    best = means.loc[means.groupby(["model", "task"], sort=True)["test_acc"].idxmax()]
    return best.reset_index(drop=True)


def probing_section(paths: list[Path]) -> str:
    """`## Probing` for the probing.csv files under the folders among `paths`; empty when none."""
    found = [path for root in paths if root.is_dir() for path in find_probing_tables(root)]
    if not found:
        return ""
    rows = [[path.parent, r.model, r.task, r.layer, r.n_seeds, num(r.test_acc), num(r.selectivity),
             num(r.random_init_acc), num(r.majority_acc)]
            for path in found for r in best_layers(read_probing_table(path)).itertuples()]
    return ("## Probing\n\nLayer-wise probes (`python -m probing`): per encoder and task, the layer whose "
            "probe is most accurate on the diagnostic set (mean over seeds), with selectivity (accuracy − "
            "control task), the random-init encoder and the majority class at that layer. Figures and "
            "intervals are in each folder's probing.md.\n\n"
            + table(["probing folder", "model", "task", "best layer", "seeds", "accuracy", "selectivity",
                     "random-init", "majority"], rows))


def build(context: Context) -> Built | None:
    """None when no input folder holds a probing.csv."""
    text = probing_section(context.paths)
    return Built(text) if text else None
