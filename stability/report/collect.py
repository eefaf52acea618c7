"""Read run directories and tidy CSVs into one tidy results table (docs/design.md, "Results table").

Everything downstream works on this table (plus the per-item predictions of run
directories), so results produced elsewhere are analysed exactly like our own runs.

The level-`all` row of a run has category `overall` and holds `overall_mcc`. Besides
the contract columns the table carries `n_added` (MNLI examples added to the training
data): from metrics.json for runs, from an `n_added` column or the setup name for CSVs.

Runs are grouped by (lang, setup, variant): `variant` comes from the run record ("" for
records written before variants existed) or from an optional `variant` column of a CSV
(absent or empty: ""), and two variants are never pooled.

Which MCCs were undefined (degenerate, scored 0.0) travels beside the table as
`Collected.degenerate` and is written to results.csv as an optional last column
`degenerate` (true / false / empty = unknown), so figures can tell "undefined" from 0.00
and a results.csv read back keeps the flag. `Collected.runs` holds one row per run directory
(none for CSV inputs): what the failed-run check needs (validation accuracy and majority
share), and the run's seed design, so a seed_init × seed_order grid can be analysed as one
*variant family*: `family` is the variant without its `init<N>`/`order<N>` items
(`stability.core.identity.variant_family`), `seed_init`/`seed_order` the record's seeds (NA
in records written before they were stored). Grouping by (lang, setup, family) and
decomposing over (seed_init, seed_order) separates initialisation from data order.

A run scored in other languages as well (`data.eval_langs`, setup `<setup>@<its language>`) gives
rows, predictions and a `runs` row in each language it was scored in (`RunRecord.scored_in`),
`train_lang` naming the language it trained in: every section then reads it as it reads runs of
that language, and its setup keeps it apart from the runs trained there.

Which code made each run travels beside the table too, as `Collected.provenance` (`commit`,
`dirty`: the record's git commit and whether its tree had uncommitted changes, NA when not
recorded), written to results.csv after `n_added` and read back from it. Runs of one
(lang, setup, variant) that read different inputs are refused (`provenance.check_same_inputs`);
`runs.inputs_recorded` tells which records hold their input hashes. So are runs of one (lang,
setup, variant) that trained in different precisions (`provenance.check_same_precision`), by
different engines (`provenance.check_same_engine`) or with configs that differ in more than the seeds
(`provenance.check_same_config`).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from stability.core.errors import UserError, first_line
from stability.core.runrecord import RunDir, RunRecord, iter_runs
from stability.core.identity import variant_family
from stability.core.setups import n_added_from_setup
from stability.core.taxonomy import COARSE_CATEGORIES, FINE_CATEGORIES
from stability.report.provenance import check_same_config, check_same_engine, check_same_inputs, check_same_precision
from stability.statistics.seeds import CONDITION_SEPARATOR, TIDY_COLUMNS

RESULT_COLUMNS = TIDY_COLUMNS + ["n_added"]
REQUIRED_COLUMNS = ["lang", "setup", "seed", "category", "mcc"]
OVERALL = "overall"
KEY = ["lang", "setup", "variant", "seed", "level", "category"]
PREDICTION_COLUMNS = ["lang", "setup", "variant", "seed", "idx", "label", "pred", "prob_entailment", "categories",
                      "template", "features"]
_CATEGORIES_OF_LEVEL = {"fine": set(FINE_CATEGORIES), "coarse": set(COARSE_CATEGORIES)}
RUN_COLUMNS = ["lang", "setup", "variant", "family", "seed", "seed_init", "seed_order", "val_accuracy",
               "val_majority", "inputs_recorded", "source", "train_lang"]
# one row per (run, extra evaluation set) of run records of schema 3 (`data.extra_eval`)
EXTRA_COLUMNS = ["lang", "setup", "variant", "seed", "set", "n_items", "accuracy", "mcc", "degenerate", "source"]
DEGENERATE = "degenerate"
# per run, on every row of results.csv: the git commit and whether the tree was dirty (NA: unknown)
PROVENANCE = ["commit", "dirty"]
_RECORD_KEYS = ("overall_mcc", "category_mcc")
_FLAGS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}
_CSV_FIX = "the header must name lang, setup, seed, category, mcc (optional: variant, level, n_items)"


@dataclass(frozen=True)
class Collected:
    """Everything read from the PATHs: the tidy table and the runs' per-item predictions."""

    results: pd.DataFrame
    predictions: pd.DataFrame
    n_runs: int
    n_csv: int
    degenerate: pd.Series       # aligned with `results`: MCC undefined (True), defined, or unknown (NA)
    provenance: pd.DataFrame    # aligned with `results`: PROVENANCE of the row's run
    runs: pd.DataFrame          # RUN_COLUMNS, one row per run directory and language scored (none for CSV inputs)
    extra: pd.DataFrame         # EXTRA_COLUMNS: scores on extra evaluation sets (none for CSV inputs)

    def results_with_flags(self) -> pd.DataFrame:
        """The tidy table plus its runs' commit and dirty and its optional `degenerate` column,
        as results.csv holds it."""
        return pd.concat([self.results, self.provenance], axis=1).assign(**{DEGENERATE: self.degenerate})


def collect(paths: list[Path]) -> Collected:
    """Read every PATH (run-directory tree or tidy CSV) into one table; user errors name the file."""
    frames, predictions, records, extra, recorded, n_runs, n_csv = [], [], [], [], [], 0, 0
    for path in paths:
        if path.is_dir():
            runs = list(iter_runs(path))
            if not runs:
                raise UserError("no run directories (folders with a finished run record) found", path=path,
                                fix="point at the output folder of nli-stability train, or at a tidy CSV")
            for run in runs:
                trained = run.read_record(require=_RECORD_KEYS)
                for code in trained.languages:
                    rows, items, record = read_run(run, trained, code)
                    frames.append(rows)
                    records.append((record.lang, record.setup, record.variant, variant_family(record.variant),
                                    record.seed, record.seed_init, record.seed_order, record.val_accuracy,
                                    record.val_majority, bool(record.inputs), str(run.path), trained.lang))
                    recorded.append((run.path, record))
                    extra += [(record.lang, record.setup, record.variant, record.seed, name, scores.get("n_items"),
                               scores.get("accuracy"), scores.get("mcc"), scores.get("degenerate"), str(run.path))
                              for name, scores in record.extra_eval.items()]
                    if not items.empty:
                        predictions.append(items)
            n_runs += len(runs)
        elif path.is_file():
            frames.append(read_tidy_csv(path))
            n_csv += 1
        else:
            raise UserError("no such file or directory", path=path,
                            fix="pass run-output folders or tidy CSV files")
    results = pd.concat(frames, ignore_index=True)
    _check_duplicates(results)
    check_same_inputs(recorded)
    check_same_precision(recorded)
    check_same_engine(recorded)
    check_same_config(recorded)
    results["n_added"] = results["n_added"].astype("Int64")
    results = _sorted(results)
    return Collected(
        results=results[RESULT_COLUMNS],
        predictions=pd.concat(predictions, ignore_index=True) if predictions
        else pd.DataFrame(columns=PREDICTION_COLUMNS),
        n_runs=n_runs, n_csv=n_csv,
        degenerate=results[DEGENERATE].astype("boolean"),
        provenance=results[PROVENANCE].astype({"commit": "string", "dirty": "boolean"}),
        runs=pd.DataFrame(records, columns=RUN_COLUMNS).astype({"seed_init": "Int64", "seed_order": "Int64"}),
        extra=pd.DataFrame(extra, columns=EXTRA_COLUMNS).astype({"n_items": "Int64", "accuracy": float, "mcc": float,
                                                                  "degenerate": "boolean"}),
    )


def _sorted(results: pd.DataFrame) -> pd.DataFrame:
    """Rows by lang, setup, variant, seed, then fine/coarse/all in canonical category order."""
    rank = {name: i for i, name in enumerate(FINE_CATEGORIES + COARSE_CATEGORIES)}
    order = results.assign(_level=results["level"].map({"fine": 0, "coarse": 1, "all": 2}),
                           _category=results["category"].map(rank))
    return order.sort_values(["lang", "setup", "variant", "seed", "_level", "_category", "category"]) \
        .reset_index(drop=True)


def read_run(run: RunDir, trained: RunRecord, code: str) -> tuple[pd.DataFrame, pd.DataFrame, RunRecord]:
    """Tidy rows from the run's record `trained` as scored in language `code` (its own or one of its
    `eval_langs`), per-item rows from those predictions (empty if absent), that language's record."""
    record = trained.scored_in(code)
    undefined = set(record.degenerate)
    rows = [(level, name, n_items.get(name), mcc, name in undefined)
            for level, scores, n_items in (("fine", record.category_mcc, record.category_n),
                                           ("coarse", record.coarse_mcc, record.coarse_n))
            for name, mcc in scores.items()]
    rows.append(("all", OVERALL, record.n_items, record.overall_mcc, OVERALL in undefined))
    try:
        table = pd.DataFrame(rows, columns=["level", "category", "n_items", "mcc", DEGENERATE])
        table["n_items"] = pd.to_numeric(table["n_items"]).astype("Int64")
        table["mcc"] = table["mcc"].astype(float)
        n_added = float(record.n_added) if record.n_added is not None else n_added_from_setup(record.setup)
    except (AttributeError, TypeError, ValueError) as err:
        raise UserError(f"malformed run record ({err})", path=run.path,
                        fix="delete the run directory and run it again") from None
    _check_categories(table, run.path)
    table = table.assign(lang=record.lang, setup=record.setup, variant=record.variant, seed=record.seed,
                         source=str(run.path), n_added=n_added, commit=record.environment.get("git_commit"),
                         dirty=record.environment.get("git_dirty"))
    return table, _predictions_table(run, record, None if code == trained.lang else code), record


def _predictions_table(run: RunDir, record: RunRecord, scored_in: str | None) -> pd.DataFrame:
    """Per-item predictions (on `scored_in`'s diagnostic set; None: the run's own); categories kept as a
    `;`-joined string like the released files."""
    rows = [(p.idx, p.label, p.pred, p.prob_entailment, ";".join(p.categories), p.template,
             p.features) for p in run.read_predictions(scored_in)]
    table = pd.DataFrame(rows, columns=["idx", "label", "pred", "prob_entailment", "categories",
                                        "template", "features"])
    return table.assign(lang=record.lang, setup=record.setup, variant=record.variant,
                        seed=record.seed)[PREDICTION_COLUMNS]


def read_tidy_csv(path: Path) -> pd.DataFrame:
    """A tidy results CSV, checked cell by cell so an error names the line to repair."""
    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
        raise UserError(f"not a readable CSV ({first_line(err)})", path=path,
                        fix=_CSV_FIX) from None
    table.columns = [str(column).strip() for column in table.columns]
    missing = [column for column in REQUIRED_COLUMNS if column not in table.columns]
    if missing:
        raise UserError(f"missing columns: {', '.join(missing)}", path=path, fix=_CSV_FIX)
    if table.empty:
        raise UserError("CSV holds no rows", path=path, fix="add one row per (lang, setup, seed, category)")
    for column in ["lang", "setup", "category"]:
        table[column] = table[column].str.strip()
        _reject(table[column] == "", path, f"empty {column}", "fill in every lang, setup and category")
    table["variant"] = table["variant"].str.strip() if "variant" in table.columns else ""
    _reject(table["variant"].str.contains(CONDITION_SEPARATOR, regex=False), path,
            f"variant contains {CONDITION_SEPARATOR!r}", "name a variant with letters, digits and . + - _ only")
    if "level" not in table.columns:
        table["level"] = "fine"
    table["level"] = table["level"].str.strip().replace("", "fine")
    _reject(~table["level"].isin(["fine", "coarse", "all"]), path, "level must be fine, coarse or all",
            "leave level empty for fine categories")
    table["mcc"] = _numbers(table["mcc"], path, "mcc is not a number", "write the MCC as a decimal number",
                            allow_empty=False)
    _reject(table["mcc"].abs() > 1, path, "mcc outside [-1, 1]", "write the MCC itself, not a percentage",
            cells=table["mcc"].astype(str))
    seeds = _numbers(table["seed"], path, "seed is not an integer", "write the seed as an integer",
                     allow_empty=False)
    _reject(seeds % 1 != 0, path, "seed is not an integer", "write the seed as an integer")
    table["seed"] = seeds.astype(np.int64)
    table["n_items"] = _numbers(_optional(table, "n_items"), path, "n_items is not a number",
                                "write a count or leave it empty", allow_empty=True).astype("Int64")
    n_added = _numbers(_optional(table, "n_added"), path, "n_added is not a number", "write a count or leave it empty",
                       allow_empty=True)
    table["n_added"] = n_added.fillna(table["setup"].map(n_added_from_setup))
    table[DEGENERATE] = _flags(_optional(table, DEGENERATE), path)
    table["commit"] = _optional(table, "commit").str.strip().replace("", pd.NA)
    table["dirty"] = _flags(_optional(table, "dirty"), path, "dirty")
    _check_categories(table, path, first_row_line=2)
    return table.assign(source=str(path))


def _numbers(cells: pd.Series, path: Path, problem: str, fix: str, *, allow_empty: bool) -> pd.Series:
    """Parse a column of numbers, failing on the first bad cell with its CSV line number."""
    cells = cells.str.strip()
    values = pd.to_numeric(cells, errors="coerce")
    bad = values.isna() | np.isinf(values)
    if allow_empty:
        bad &= cells.ne("")
    _reject(bad, path, problem, fix, cells=cells)
    return values


def _optional(table: pd.DataFrame, column: str) -> pd.Series:
    """An optional column of a CSV read as strings; all empty when absent."""
    return table[column] if column in table.columns else pd.Series("", index=table.index)


def _flags(cells: pd.Series, path: Path, column: str = DEGENERATE) -> pd.Series:
    """An optional true/false column (`degenerate`, `dirty`; also 1/0, yes/no), empty = unknown."""
    cells = cells.str.strip().str.lower()
    _reject(cells.ne("") & ~cells.isin(list(_FLAGS)), path, f"{column} must be true or false",
            "write true, false or leave it empty", cells=cells)
    return cells.map(_FLAGS).astype("boolean")


def _reject(bad: pd.Series, path: Path, problem: str, fix: str, cells: pd.Series | None = None) -> None:
    """Raise for the first flagged row; CSV line = row position + 2 (header is line 1)."""
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        detail = f" ({cells.iloc[row]!r})" if cells is not None else ""
        raise UserError(problem + detail, path=path, line=row + 2, fix=fix)


def _check_categories(table: pd.DataFrame, path: Path, first_row_line: int | None = None) -> None:
    """Fine and coarse rows must use the canonical names, or the 33-vectors would not align."""
    for level, names in _CATEGORIES_OF_LEVEL.items():
        bad = (table["level"] == level) & ~table["category"].isin(names)
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise UserError(f"unknown {level} category {table['category'].iloc[row]!r}", path=path,
                            line=None if first_row_line is None else row + first_row_line,
                            fix='use the canonical names of docs/design.md, "Taxonomy"')


def _check_duplicates(results: pd.DataFrame) -> None:
    """One value per (lang, setup, variant, seed, level, category); two would silently double-count a seed."""
    duplicated = results.duplicated(KEY, keep=False)
    if duplicated.any():
        clash = results[duplicated]
        first = clash.iloc[0]
        sources = sorted(set(clash[(clash[KEY] == first[KEY]).all(axis=1)]["source"]))
        variant = f" variant={first['variant']}" if first["variant"] else ""
        raise UserError(f"lang={first['lang']} setup={first['setup']}{variant} seed={first['seed']} "
                        f"{first['category']!r} appears more than once", path=" and ".join(sources),
                        fix="pass each run once; experiments that share lang, setup, variant and seed need "
                            "separate reports (point at one experiment folder each)")
