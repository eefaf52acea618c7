"""Which diagnostic items every item-level bootstrap of the report resamples together.

`cluster=sentences` (the default): per language, items sharing a premise or a hypothesis after
whitespace normalisation are one cluster (`statistics.clusters.sentence_clusters`); the text
comes from the diagnostic set a run of that language was scored on, read again from its
config (the command hands in the reader). `cluster=<column>`: items with one value of that
column of the diagnostic records (e.g. `template` for generated test suites) are one cluster.
`cluster=none`: every item on its own, the item bootstrap. Where a language's diagnostic text
cannot be read (runs made elsewhere, the data moved), its items are resampled one by one and
the report says so; a named column that no language's records have is an error.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from stability.core.errors import UserError
from stability.statistics.clusters import ClusterSizes, column_clusters, sentence_clusters

SENTENCES = "sentences"
NO_CLUSTERS = "none"
SUMMARY_COLUMNS = ["lang", "n_items", "n_clusters", "mean_size", "largest", "items_in_clusters"]

# reads one run directory's diagnostic records in one of the languages it was scored in
# (`stability.data.run_items.run_diagnostic_records`)
ReadRecords = Callable[[Path, str], pd.DataFrame]


@dataclass(frozen=True)
class ItemClusters:
    """Per language, each item's cluster id (by idx); `unknown` says per language why its items are
    resampled one by one."""

    option: str = NO_CLUSTERS
    by_lang: dict[str, pd.Series] = field(default_factory=dict)
    unknown: dict[str, str] = field(default_factory=dict)

    def of(self, lang: str, idx: np.ndarray) -> np.ndarray | None:
        """(items,) cluster ids of `idx` in `lang` (an idx without a known cluster on its own); None
        where the language's items are resampled one by one."""
        known = self.by_lang.get(lang)
        if known is None:
            return None
        ids = known.reindex(pd.Index(np.asarray(idx).astype(str), dtype=object)).to_numpy(dtype=float)
        missing = np.isnan(ids)
        start = int(np.nanmax(ids)) + 1 if (~missing).any() else 0
        ids[missing] = start + np.arange(missing.sum())
        return ids.astype(np.int64)

    def summary(self, predictions: pd.DataFrame) -> pd.DataFrame:
        """SUMMARY_COLUMNS per language with known clusters, over the items it has predictions for."""
        rows = []
        for lang, group in predictions.groupby("lang", sort=True):
            clusters = self.of(lang, group["idx"].unique())
            if clusters is not None:
                sizes = ClusterSizes.of(clusters)
                rows.append([lang, sizes.n_items, sizes.n_clusters, sizes.mean_size, sizes.largest, sizes.in_clusters])
        return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)

    def described(self, predictions: pd.DataFrame) -> str:
        """The report's sentences on how items were resampled."""
        if self.option == NO_CLUSTERS:
            return "Items resampled one by one (`cluster=none`)."
        grouping = ("items sharing a premise or a hypothesis (after whitespace normalisation) form one cluster"
                    if self.option == SENTENCES else f"items with one value of `{self.option}` form one cluster")
        lines = [f"Items resampled by cluster: {grouping}, and a sample draws clusters with replacement "
                 "(`cluster=none`: items one by one)."]
        lines += [f"{row.lang}: {row.n_items} items in {row.n_clusters} clusters (mean size {row.mean_size:.2f}, "
                  f"largest {row.largest}; {row.items_in_clusters} items share a cluster)."
                  for row in self.summary(predictions).itertuples()]
        lines += [f"{lang}: items resampled one by one ({why})." for lang, why in sorted(self.unknown.items())]
        return " ".join(lines)


def drawn_units(option: str) -> str:
    """What a bootstrap sample draws under `cluster=option`, for the report's sentences."""
    return "items" if option == NO_CLUSTERS else "item clusters"


def item_clusters(option: str, predictions: pd.DataFrame, runs: pd.DataFrame,
                  read_records: ReadRecords | None) -> ItemClusters:
    """The clusters of every language with predictions, by `option` (module docstring). `runs` are
    the run directories (`Collected.runs`: lang, source)."""
    if option == NO_CLUSTERS or predictions.empty:
        return ItemClusters(option)
    by_lang, unknown = {}, {}
    for lang, group in predictions.groupby("lang", sort=True):
        items = group.drop_duplicates("idx").set_index("idx")
        if option != SENTENCES and option in items.columns:
            by_lang[lang] = _ids(items.index, column_clusters(_as_text(items[option])))
            continue
        records, why = language_records(lang, runs, read_records)
        if records is None:
            if option != SENTENCES:
                raise UserError(f"cluster={option}: cannot read the diagnostic records of {lang} ({why})",
                                fix="make the runs' diagnostic files readable here, or pass cluster=sentences "
                                    "or cluster=none")
            unknown[lang] = why
            continue
        records = records.drop_duplicates("idx").set_index("idx")
        records = records.loc[records.index.intersection(items.index)]
        if option == SENTENCES:
            by_lang[lang] = _ids(records.index, sentence_clusters(records["premise"], records["hypothesis"]))
        elif option in records.columns:
            by_lang[lang] = _ids(records.index, column_clusters(_as_text(records[option])))
        else:
            names = sorted(set(records.columns) - {"idx"})
            raise UserError(f"cluster={option}: the diagnostic records of {lang} have no column {option!r}",
                            fix=f"name one of {', '.join(names)}, or pass cluster=sentences or cluster=none")
    return ItemClusters(option, by_lang, unknown)


def remembered(read_records: ReadRecords | None) -> ReadRecords | None:
    """`read_records` reading each run's set in a language once: the clusters, the instability atlas and
    the report's page (its items' text) ask for the same runs' records."""
    if read_records is None:
        return None
    read: dict[tuple[Path, str], pd.DataFrame | UserError] = {}

    def once(path: Path, lang: str) -> pd.DataFrame:
        if (path, lang) not in read:
            try:
                read[(path, lang)] = read_records(path, lang)
            except UserError as err:
                read[(path, lang)] = err
        found = read[(path, lang)]
        if isinstance(found, UserError):
            raise found
        return found

    return once


def language_records(lang: str, runs: pd.DataFrame,
                     read_records: ReadRecords | None) -> tuple[pd.DataFrame | None, str]:
    """The diagnostic records of the first run of `lang` whose set can be read, or None and why not."""
    if read_records is None:
        return None, "no reader of diagnostic sets"
    why = "no run directory"
    for source in runs.loc[runs["lang"] == lang, "source"]:
        try:
            return read_records(Path(source), lang), ""
        except UserError as err:
            why = f"diagnostic text not readable: {err}"
    return None, why


def _ids(idx: pd.Index, clusters: np.ndarray) -> pd.Series:
    return pd.Series(clusters, index=pd.Index(idx.astype(str), dtype=object))


def _as_text(values: pd.Series) -> pd.Series:
    """Column values as comparable text: lists and mappings as JSON (sorted keys), missing kept missing."""
    return values.map(lambda value: json.dumps(value, sort_keys=True) if isinstance(value, (list, dict, tuple))
                      else value)
