"""probing.csv (docs/design.md, "Analysis outputs"): the table `nli-stability probe` writes and the report reads.

One row per (model, seed, task, layer). `model` is `pretrained` for the encoder the runs
started from, `fine-tuned:<setup>` (or `fine-tuned:<setup>/<variant>` for a run of a variant,
so two learning rates are never pooled into one seed statistic) for a run's saved weights (`seed` is empty for
`pretrained`). Accuracies are on the diagnostic set; `control_acc` is the same probe
trained on labels permuted within the training split, `selectivity = test_acc −
control_acc`, `random_init_acc` the same probe on a randomly initialised encoder of the
same architecture, `majority_acc` the accuracy of always answering the training split's
majority label.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from stability.core.atomic import atomic_path
from stability.core.errors import UserError

PROBING_FILE = "probing.csv"
PROBING_COLUMNS = ["model", "seed", "task", "layer", "dev_acc", "test_acc", "majority_acc", "control_acc",
                   "selectivity", "random_init_acc", "best_l2", "n_train", "n_test"]
PRETRAINED = "pretrained"
FINE_TUNED = "fine-tuned"


def fine_tuned_model(setup: str, variant: str = "") -> str:
    """The `model` value of a run's saved weights: `fine-tuned:<setup>[/<variant>]`."""
    return f"{FINE_TUNED}:{setup}" + (f"/{variant}" if variant else "")


def write_probing_table(table: pd.DataFrame, folder: Path) -> Path:
    """`folder/probing.csv` with the contract's columns, in their order, written atomically."""
    path = folder / PROBING_FILE
    with atomic_path(path) as tmp:
        table[PROBING_COLUMNS].to_csv(tmp, index=False)
    return path


def find_probing_tables(root: Path) -> list[Path]:
    """Every probing.csv under the folder `root`, in path order."""
    return sorted(root.rglob(PROBING_FILE))


def read_probing_table(path: Path) -> pd.DataFrame:
    """A probing.csv; a file lacking contract columns is a user error naming them."""
    try:
        table = pd.read_csv(path, dtype={"model": str, "task": str})
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as err:
        raise UserError(f"unreadable {PROBING_FILE} ({err})", path=path,
                        fix="rerun nli-stability probe to write it again") from None
    missing = [column for column in PROBING_COLUMNS if column not in table.columns]
    if missing:
        raise UserError(f"{PROBING_FILE} lacks columns {', '.join(missing)}", path=path,
                        fix=f"write the columns {', '.join(PROBING_COLUMNS)}")
    table["seed"] = table["seed"].astype("Int64")
    return table
