"""Any NLI dataset through Hugging Face `datasets`, as the project's records (`data.container`).

`NliSet.path` says where the pairs are, the way `datasets` itself takes it:
- a folder written by `save_to_disk` (a Dataset, or a DatasetDict whose `split` is read);
- `json`, `csv` or `parquet` with `data_files` (local files; csv with its `delimiter`);
- otherwise a Hub id (`facebook/xnli`) with its `config` and `split`. Offline
  (`HF_DATASETS_OFFLINE=1`) `datasets` answers from its cache (`HF_DATASETS_CACHE`), where a
  first online use put the data.
`where` keeps the rows whose columns have the given values (one file holding several splits).
`columns` maps the record fields to the dataset's columns; a label is read as its
`ClassLabel` name (XNLI: entailment / neutral / contradiction) or as itself, mapped through
`labels` and collapsed as MNLI's are (`core.records.parse_label`). Rows labelled -1 or "-"
(no gold label, the `datasets` and MNLI conventions) are dropped, as MNLI's readers do.
Anything missing or malformed is one line saying what to download or where to put it; a row
that cannot be a record (a csv row of another width than its header, an empty premise,
hypothesis, label or idx, an idx another row has) names its file and line (`data.rows`).
"""
from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import datasets
import pyarrow.compute as pc
from datasets import ClassLabel, Dataset, DatasetDict, load_dataset, load_from_disk

from stability.core.errors import UserError, first_line, require_utf8
from stability.core.records import parse_label
from stability.core.schemas.nli import TAB, NliSet
from stability.data.container import RECORD_FEATURES
from stability.data.delimited import data_lines
from stability.data.rows import RowOrigin

FILE_FORMATS = ("json", "csv", "parquet")
_NO_GOLD = ("-1", "-")
# what `save_to_disk` writes: a DatasetDict's index, or a Dataset's state
_SAVED_MARKERS = ("dataset_dict.json", "state.json")


def load_nli_set(spec: NliSet, run_lang: str, key: str = "data.train_set") -> Dataset:
    """The split `spec` names as records in `spec.lang` (the run's language when null); `key` is
    where the config holds `spec` (`data.mix`, `data.extra_eval.0`), for the fixes' overrides.
    A repeated idx is refused over every row read, before `where` (a file's idx, like a released
    file's, name one pair each: runs and their predictions are keyed by it)."""
    raw, origin = _read(spec)
    _refuse_repeated_idx(raw, spec, origin)
    if spec.where:
        raw, origin = _rows_where(raw, spec, origin)
    return to_records(raw, spec, spec.lang or run_lang, key, origin)


def _where(spec: NliSet) -> str:
    config = f" config {spec.config}" if spec.config else ""
    return f"{spec.name} ({spec.path}{config}, split {spec.split})"


def saved_folder(spec: NliSet) -> Path | None:
    """The `save_to_disk` folder `spec.path` names, or None when it names none."""
    folder = Path(spec.path).expanduser()
    return folder if folder.is_dir() and any((folder / marker).is_file() for marker in _SAVED_MARKERS) else None


def load_raw(spec: NliSet) -> Dataset:
    """The split `spec` names as `datasets` reads it, its `where` rows, before its columns become records."""
    raw, origin = _read(spec)
    return _rows_where(raw, spec, origin)[0] if spec.where else raw


def _read(spec: NliSet) -> tuple[Dataset, RowOrigin]:
    folder = saved_folder(spec)
    if folder is not None:
        return _from_disk(spec, folder), RowOrigin()
    if spec.path in FILE_FORMATS:
        return _from_files(spec)
    return _from_hub(spec), RowOrigin()


def _rows_where(raw: Dataset, spec: NliSet, origin: RowOrigin) -> tuple[Dataset, RowOrigin]:
    """The rows whose `where` columns hold the given values (compared as text: a csv column of
    numbers is read as numbers), and their origin."""
    missing = [column for column in spec.where if column not in raw.column_names]
    if missing:
        raise UserError(f"{_where(spec)} has no column {missing[0]} to select rows by (it has "
                        f"{', '.join(raw.column_names)})", fix=_separator_fix(spec, raw) or "name one of its columns in where")
    wanted = {column: str(value) for column, value in spec.where.items()}

    def keep(batch: dict[str, list]) -> list[bool]:
        return [all(str(batch[column][i]) == value for column, value in wanted.items())
                for i in range(len(batch[next(iter(wanted))]))]

    kept = raw.filter(keep, batched=True, keep_in_memory=True, desc=f"rows of {spec.name}")
    if len(kept) == 0:
        for column, value in wanted.items():
            found = sorted({str(v) for v in raw.unique(column)})
            if value not in found:
                raise UserError(f"{_where(spec)}: no row has {column}={value} (its values: {', '.join(found[:10])})",
                                fix=f"set where.{column} to one of them")
        raise UserError(f"{_where(spec)}: no row has {' and '.join(f'{c}={v}' for c, v in wanted.items())}",
                        fix="select by fewer columns")
    if not origin.files:
        return kept, origin
    mask = keep(raw.select_columns(list(wanted)).to_dict())
    return kept, origin.select([row for row, chosen in enumerate(mask) if chosen])


def _refuse_repeated_idx(raw: Dataset, spec: NliSet, origin: RowOrigin) -> None:
    column = spec.columns.get("idx")
    if column is None or column not in raw.column_names:
        return  # no idx column: the row numbers are the idx; a missing column is named with the others
    first: dict[str, int] = {}
    for row, value in enumerate(raw[column]):
        before = first.setdefault(str(value), row)
        if before != row and value is not None:
            raise origin.error(row, f"{_where(spec)}: idx {str(value)!r} ({column}) repeats "
                                    f"{origin.named_from(before, row)}",
                               fix="give every row its own idx: runs and their predictions are keyed by it")


def _separator_fix(spec: NliSet, raw: Dataset) -> str | None:
    """The fix when a csv's header was read as one column (a tab or ; between its names): the delimiter."""
    if spec.path == "csv" and any(mark in name for name in raw.column_names for mark in (TAB, ";")):
        return "set delimiter to the file's separator (\\t for a tab): its header was read as one column"
    return None


def _from_disk(spec: NliSet, folder: Path) -> Dataset:
    saved = load_from_disk(str(folder))
    if isinstance(saved, DatasetDict):
        if spec.split not in saved:
            raise UserError(f"{_where(spec)}: the saved DatasetDict has no split {spec.split!r}", path=folder,
                            fix=f"set the split to one of: {', '.join(saved)}")
        return saved[spec.split]
    return saved


def _from_files(spec: NliSet) -> tuple[Dataset, RowOrigin]:
    if not spec.data_files:
        raise UserError(f"{_where(spec)}: path={spec.path} reads data_files, and none are given",
                        fix="list the files, e.g. data_files=[/data/train.parquet]")
    missing = [name for name in spec.data_files if not Path(name).expanduser().is_file()]
    if missing:
        raise UserError(f"{_where(spec)}: missing data file", path=missing[0],
                        fix="put the file there or point data_files at it")
    files = [Path(name).expanduser() for name in spec.data_files]
    if spec.path != "parquet":  # json, csv: text, whose parser would not say the encoding is wrong
        for name in files:
            require_utf8(name)
    # a csv's rows' shape, which pandas would pad or refuse in a message of its own
    lines = [data_lines(name, spec.separator() or ",") for name in files] if spec.path == "csv" else []
    try:
        options = {"delimiter": spec.separator()} if spec.delimiter is not None else {}
        with _quiet_datasets():
            raw = load_dataset(spec.path, data_files={spec.split: [str(name) for name in files]}, split=spec.split,
                               **options)
    except Exception as err:  # the format's parser: any error is the file's
        raise UserError(f"{_where(spec)}: cannot read the data files ({first_line(err.__cause__ or err)})",
                        fix=f"check that they are {spec.path} files of one shape"
                            + (", and set delimiter (\\t for a tab) if not comma-separated" if spec.path == "csv"
                               else "")) from None
    if not lines or sum(map(len, lines)) != len(raw):  # parquet, json; a csv pandas splits otherwise: row numbers
        return raw, RowOrigin()
    file_of = [number for number, file_lines in enumerate(lines) for _ in file_lines]
    return raw, RowOrigin(tuple(files), file_of, [line for file_lines in lines for line in file_lines])


@contextmanager
def _quiet_datasets() -> Iterator[None]:
    """`datasets` logs a parser's error before raising it: the error, said once as a UserError, is enough."""
    level = datasets.logging.get_verbosity()
    datasets.logging.set_verbosity(datasets.logging.CRITICAL)
    try:
        yield
    finally:
        datasets.logging.set_verbosity(level)


def _from_hub(spec: NliSet) -> Dataset:
    try:
        return load_dataset(spec.path, spec.config, split=spec.split)
    except Exception as err:  # no network, not cached, unknown id, config or split: all say the same
        offline = " offline (HF_DATASETS_OFFLINE=1)" if datasets.config.HF_HUB_OFFLINE else ""
        raise UserError(f"cannot load {_where(spec)}{offline}: {first_line(err)}",
                        fix="load it once online so that `datasets` caches it (HF_DATASETS_CACHE), "
                            "or point path at a save_to_disk folder or at json/csv/parquet data_files") from None


def to_records(raw: Dataset, spec: NliSet, lang: str, key: str = "data.train_set",
               origin: RowOrigin = RowOrigin()) -> Dataset:
    """The record columns of `raw`, its labels mapped and collapsed, rows without gold dropped;
    `key` as for `load_nli_set`, `origin` where `raw`'s rows came from. A row without a premise,
    hypothesis, label or idx (an empty csv field, a missing json key) is refused, naming it."""
    missing = [f"{field}={column}" for field, column in spec.columns.items() if column not in raw.column_names]
    if missing:
        raise UserError(f"{_where(spec)} has no column {missing[0]} (it has {', '.join(raw.column_names)})",
                        fix=_separator_fix(spec, raw)
                        or f"map the record field to one of its columns, e.g. columns.{missing[0].split('=')[0]}=...")
    _refuse_empty_fields(raw, spec, origin)
    names = raw.features[spec.columns["label"]]
    label_text = names.int2str if isinstance(names, ClassLabel) else str

    def records(batch: dict[str, list], indices: list[int]) -> dict[str, list]:
        kept: dict[str, list[Any]] = {name: [] for name in RECORD_FEATURES}
        ids = batch[spec.columns["idx"]] if "idx" in spec.columns else indices
        for i, raw_label in enumerate(batch[spec.columns["label"]]):
            read = str(raw_label) if raw_label == -1 else label_text(raw_label)
            text = spec.labels.get(read, read)
            if text in _NO_GOLD:
                continue
            label = parse_label(text)
            if label is None:  # `++`: a new key of the label map needs `+`, a mapped one `++` replaces
                mapped = f" (mapped from {read!r})" if text != read else ""
                raise origin.error(indices[i], f"{_where(spec)}: unknown label {text!r}{mapped}",
                                   fix=f"map it, e.g. ++{key}.labels.{read}=entailment (or not_entailment, "
                                       "neutral, contradiction)")
            for name, value in (("idx", str(ids[i])), ("premise", batch[spec.columns["premise"]][i]),
                                ("hypothesis", batch[spec.columns["hypothesis"]][i]), ("label", label),
                                ("lang", lang), ("source", spec.name)):
                kept[name].append(value)
        return kept

    return raw.map(records, batched=True, with_indices=True, remove_columns=raw.column_names,
                   features=RECORD_FEATURES, keep_in_memory=True, desc=f"records of {spec.name}")


def _refuse_empty_fields(raw: Dataset, spec: NliSet, origin: RowOrigin) -> None:
    """A row without a premise, hypothesis, label or idx (an empty csv field, a missing json key),
    which no record may have, named by its place; over the whole split, before any row is mapped."""
    columns = raw.with_format("arrow")
    for field, column in spec.columns.items():
        values = columns[column]
        if values.null_count:
            row = pc.index(values.is_null(), True).as_py()
            raise origin.error(row, f"{_where(spec)}: no {field} (its column {column} is empty)",
                               fix=f"give the row its {field}, or remove the row")
