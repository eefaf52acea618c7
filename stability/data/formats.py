"""Readers for every released file format of docs/design.md, "Data contract", all returning `Example`s.

The format is recognised from the file itself (suffix, then the header or the fields of
each JSON line), so a user can point a language config at any released copy.
"""
from __future__ import annotations

import csv
import difflib
import json
from pathlib import Path
from typing import Iterator, Sequence

from stability.core.errors import UserError, open_text
from stability.core.records import Example, parse_label
from stability.core.taxonomy import COARSE_FIELDS, TAXONOMY

# GLUE's diagnostic-full.tsv names the coarse columns by their display names.
_TSV_COARSE_COLUMNS = {name: name for name in TAXONOMY}
_PREMISE_KEYS = ("premise", "sentence1")
_HYPOTHESIS_KEYS = ("hypothesis", "sentence2")
_LABEL_KEYS = ("label", "gold_label")
_IDX_KEYS = ("idx", "pairID", "index")
# the columns a TSV header must name, each by one of its names: GLUE's (MNLI's gold_label) or,
# in diagnostic-full.tsv, capitalised
_TSV_COLUMNS = {"premise": _PREMISE_KEYS, "hypothesis": _HYPOTHESIS_KEYS, "label": _LABEL_KEYS}
_DIAGNOSTIC_TSV_COLUMNS = {"premise": ("Premise",), "hypothesis": ("Hypothesis",), "label": ("Label",)}
# MNLI marks pairs without annotator consensus with "-"; every MNLI reader drops them.
_NO_GOLD_LABEL = "-"


def read_examples(path: str | Path, lang: str, source: str | None = None, *,
                  unique_idx: bool = True) -> list[Example]:
    """Read a dataset file in any released format; a user error names file, line and fix.
    A repeated idx is refused in every split (predictions, scores and cross-language pairs
    are keyed by idx; no released file repeats one) unless `unique_idx` is off: data QA reads
    such a file to report it."""
    path = Path(path)
    if not path.is_file():
        raise UserError("file not found", path=path,
                        fix="check the path, or set data.root to the folder that holds the files")
    if path.stat().st_size == 0:
        raise UserError("file is empty", path=path, fix="replace it with a complete copy of the release")
    source = source or path.stem
    rows = list(_read_tsv(path, lang, source) if path.suffix == ".tsv" else _read_jsonl(path, lang, source))
    if not rows:
        raise UserError("file holds no examples", path=path, fix="replace it with a complete copy")
    lines, examples = [line for line, _ in rows], [example for _, example in rows]
    repeats = repeated_idx(examples) if unique_idx else []
    if repeats:
        at, before = repeats[0]
        raise UserError(f"idx '{examples[at].idx}' repeats line {lines[before]}", path=path, line=lines[at],
                        fix="give every item its own idx: predictions and cross-language pairs are keyed by it")
    return examples


def repeated_idx(examples: Sequence[Example]) -> list[tuple[int, int]]:
    """(position, position of the first item with that idx) of every item whose idx came before."""
    first: dict[str, int] = {}
    return [(i, first[example.idx]) for i, example in enumerate(examples)
            if first.setdefault(example.idx, i) != i]


def _read_jsonl(path: Path, lang: str, source: str) -> Iterator[tuple[int, Example]]:
    with open_text(path) as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as err:
                raise UserError(f"malformed JSON ({err.msg} at column {err.colno})", path=path,
                                line=line_no, fix="repair or remove this line") from None
            if not isinstance(row, dict):
                raise UserError("a JSON line must be an object", path=path, line=line_no,
                                fix="write one {...} object per line")
            example = _example_from_row(row, path, line_no, lang, source, default_idx=line_no - 1)
            if example is not None:
                yield line_no, example


def _read_tsv(path: Path, lang: str, source: str) -> Iterator[tuple[int, Example]]:
    with open_text(path, newline="") as handle:
        reader = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader, None)
        if not header:
            raise UserError("file is empty", path=path, fix="replace it with a complete copy")
        header = [column.strip() for column in header]
        diagnostic = "Premise" in header and "Hypothesis" in header
        _check_tsv_header(path, header, _DIAGNOSTIC_TSV_COLUMNS if diagnostic else _TSV_COLUMNS)
        for line_no, cells in enumerate(reader, start=2):
            if not any(cell.strip() for cell in cells):
                continue
            if len(cells) < len(header):
                raise UserError(f"expected {len(header)} tab-separated columns, found {len(cells)}",
                                path=path, line=line_no, fix="repair this line")
            row = dict(zip(header, cells))
            if diagnostic:
                row = _diagnostic_tsv_row(row)
            example = _example_from_row(row, path, line_no, lang, source, default_idx=line_no - 2)
            if example is not None:
                yield line_no, example


def _check_tsv_header(path: Path, header: list[str], columns: dict[str, tuple[str, ...]]) -> None:
    """A header lacking a column is refused at line 1 (else every row would say its field is
    missing, at line 2), naming the column names the readers know."""
    for field, names in columns.items():
        if not any(name in header for name in names):
            raise UserError(f"the header has no {field} column (it has {', '.join(header)})", path=path, line=1,
                            fix="name the columns as GLUE does: index, sentence1, sentence2, label "
                                "(diagnostic-full.tsv: Premise, Hypothesis, Label)")


def _diagnostic_tsv_row(row: dict[str, str]) -> dict[str, str]:
    """Rename GLUE diagnostic-full.tsv columns to the jsonl field names."""
    renamed = {"premise": row["Premise"], "hypothesis": row["Hypothesis"], "label": row["Label"]}
    for field, coarse in COARSE_FIELDS.items():
        if row.get(coarse, "").strip():
            renamed[field] = row[coarse]
    return renamed


def _first(row: dict, keys: tuple[str, ...]) -> object | None:
    for key in keys:
        if key in row and row[key] is not None:
            return row[key]
    return None


def _example_from_row(row: dict, path: Path, line_no: int, lang: str, source: str,
                      default_idx: int) -> Example | None:
    premise = _first(row, _PREMISE_KEYS)
    hypothesis = _first(row, _HYPOTHESIS_KEYS)
    raw_label = _first(row, _LABEL_KEYS)
    for name, value in (("premise", premise), ("hypothesis", hypothesis), ("label", raw_label)):
        if value is None:
            raise UserError(f"missing field '{name}'", path=path, line=line_no,
                            fix=f"add '{name}' to this line or point the config at a labelled file")
    if raw_label == _NO_GOLD_LABEL and "gold_label" in row:
        return None
    label = parse_label(raw_label)
    if label is None:
        raise UserError(f"unknown label {raw_label!r}", path=path, line=line_no,
                        fix="use entailment / not_entailment (or neutral / contradiction, 0 / 1)")
    idx = _first(row, _IDX_KEYS)
    categories, coarse = _categories(row, path, line_no)
    features = row.get("features")
    if features is not None and not isinstance(features, dict):
        raise UserError("'features' must be an object of feature -> value", path=path, line=line_no,
                        fix='write e.g. "features": {"subject.GENDER": "FEM"} or leave it out')
    return Example(
        idx=str(default_idx if idx is None else idx), premise=str(premise),
        hypothesis=str(hypothesis), label=label, lang=lang, source=source,
        categories=categories, coarse=coarse,
        template=None if row.get("template") is None else str(row["template"]),
        features=None if features is None else {str(k): str(v) for k, v in features.items()},
    )


def _categories(row: dict, path: Path, line_no: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Split each coarse field on ';' and check every name against the taxonomy."""
    fine: list[str] = []
    coarse: list[str] = []
    for field, coarse_name in COARSE_FIELDS.items():
        value = row.get(field)
        if not value or not str(value).strip():
            continue
        names = [name.strip() for name in str(value).split(";") if name.strip()]
        allowed = TAXONOMY[coarse_name]
        for name in names:
            if name not in allowed:
                close = difflib.get_close_matches(name, allowed, n=1)
                hint = f"did you mean '{close[0]}'?" if close else f"use one of: {', '.join(allowed)}"
                raise UserError(f"unknown category '{name}' in field '{field}'", path=path,
                                line=line_no, fix=hint)
            if name not in fine:
                fine.append(name)
        if names:
            coarse.append(coarse_name)
    return tuple(fine), tuple(coarse)
