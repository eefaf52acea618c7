"""Schema of an NLI dataset read through Hugging Face `datasets` (`stability.data.hub`): a Hub id
with a config and a split, a `save_to_disk` folder, or data files (json, csv, parquet).

The same node describes the training data (`data.train_set`), the validation data
(`data.validation_set`), the data mixed in (`data.mix`) and each extra evaluation set
(`data.extra_eval`); the `nli` config group (`conf/nli/*.yaml`) holds ready-made ones (XNLI). A
node whose `path` is null is unused. `delimiter` and `where` read one file that holds several
splits, as SICK's does (tab-separated, the split in a column): the csv separator, and the rows
kept by a column's value. `configs` lists the configs a dataset has, so that a run language the
dataset lacks (XNLI has no Swedish) is one line when the config is composed, not a failed
download halfway through a sweep.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from stability.core.errors import UserError
from stability.core.schemas.checks import at_least

# The record fields a dataset's columns are mapped to; `idx` is optional (null: the row number).
COLUMNS = ("premise", "hypothesis", "label", "idx")
# Lower-case, ending in a letter: `rte+<name><N>` must read back as name and size.
NAME = re.compile(r"^[a-z](?:[a-z0-9-]*[a-z])?$")
TAB = "\t"
ESCAPED_TAB = "\\t"   # a command line cannot pass a tab: `delimiter=\t` arrives as backslash and t


def _default_columns() -> Dict[str, str]:
    return {"premise": "premise", "hypothesis": "hypothesis", "label": "label"}


@dataclass
class NliSet:
    """Where the pairs are and how their columns and labels read as the project's records."""

    name: Optional[str] = None          # short name: setup names, metrics.json, tables
    path: Optional[str] = None          # Hub id | save_to_disk folder | json, csv or parquet (+ data_files)
    config: Optional[str] = None        # the Hub config (XNLI: the language)
    configs: Optional[List[str]] = None  # the configs the dataset has (checked against `config`)
    split: str = "train"
    data_files: Optional[List[str]] = None  # with path=json|csv|parquet
    columns: Dict[str, str] = field(default_factory=_default_columns)  # record field -> column
    labels: Dict[str, str] = field(default_factory=dict)  # label as text -> entailment | neutral | ...
    lang: Optional[str] = None          # the pairs' language; null: the run's
    released_size: Optional[int] = None  # pairs in the split, for `nli-stability plan` without the data
    delimiter: Optional[str] = None     # with path=csv: the column separator, one character or \t (null: a comma)
    where: Dict[str, str] = field(default_factory=dict)  # column -> value: only the rows that have it

    def separator(self) -> Optional[str]:
        """The delimiter as the csv reader takes it: `\\t` (how a command line writes a tab) is a tab."""
        return TAB if self.delimiter == ESCAPED_TAB else self.delimiter

    def __post_init__(self) -> None:
        if self.path is None:
            return
        described = f"the NLI dataset path={self.path}"
        if self.name is None or not NAME.match(self.name):
            raise UserError(f"{described} has name={self.name!r}",
                            fix="name it with lower-case letters, digits and '-', ending in a letter (e.g. name=xnli)")
        if self.configs is not None and self.config not in self.configs:
            raise UserError(f"{self.name} has no config {self.config!r} (it has {', '.join(self.configs)})",
                            fix=f"run a language {self.name} has (lang=...) or set its config to one of them")
        wrong = sorted(set(self.columns) - set(COLUMNS)) or [key for key in COLUMNS[:3] if key not in self.columns]
        if wrong:
            raise UserError(f"{self.name}: columns.{wrong[0]} is {'no record field' if wrong[0] in self.columns else 'missing'}",
                            fix="map premise, hypothesis, label (and optionally idx) to the dataset's columns")
        at_least(f"{self.name}.released_size", self.released_size, 1, optional=True)
        if self.delimiter is not None and (self.path != "csv" or len(self.separator() or "") != 1):
            raise UserError(f"{self.name}: delimiter={self.delimiter!r} needs path=csv and one character",
                            fix="set path=csv and delimiter to one character, or \\t for a tab")

