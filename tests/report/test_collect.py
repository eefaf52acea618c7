"""Reading run directories and tidy CSVs; user errors name the file, the line and the fix."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from report_runs import write_metrics

from stability.core.errors import UserError
from stability.core.taxonomy import FINE_CATEGORIES, TAXONOMY
from stability.report.collect import OVERALL, collect, read_tidy_csv


def write_csv(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_run_directory_gives_fine_coarse_and_overall_rows(tmp_path):
    write_metrics(tmp_path / "out", "fr", "rte+mnli10000", 3, [0.01 * i for i in range(33)], 0.42,
                  n_added=10000)
    (tmp_path / "out" / "killed_run").mkdir()          # no metrics.json: ignored
    results = collect([tmp_path / "out"]).results
    assert list(results.columns) == ["lang", "setup", "variant", "seed", "level", "category", "n_items", "mcc",
                                     "n_added"]
    assert (results["level"].value_counts().to_dict()) == {"fine": 33, "coarse": 4, "all": 1}
    assert list(results.loc[results["level"] == "fine", "category"]) == list(FINE_CATEGORIES)
    overall = results[results["level"] == "all"].iloc[0]
    assert (overall["category"], overall["mcc"], overall["n_items"]) == (OVERALL, 0.42, 100)
    assert (results["n_added"] == 10000).all() and (results["seed"] == 3).all()


def test_minimal_csv(tmp_path):
    table = read_tidy_csv(write_csv(tmp_path / "r.csv", "lang,setup,seed,category,mcc\nfr,rte,0,Negation,0.25\n"))
    row = table.iloc[0]
    assert (row["level"], row["seed"], row["mcc"], row["n_added"]) == ("fine", 0, 0.25, 0)
    assert pd.isna(row["n_items"])


@pytest.mark.parametrize("text, message, line", [
    ("lang,setup,seed,mcc\nfr,rte,0,0.1\n", "missing columns: category", None),
    ("lang,seed,category\nfr,0,Negation\n", "missing columns: setup, mcc", None),
    ("lang,setup,seed,category,mcc\nfr,rte,0,Negation,0.1\nfr,rte,1,Negation,high\n", "mcc is not a number", 3),
    ("lang,setup,seed,category,mcc\nfr,rte,0,Negation,\n", "mcc is not a number", 2),
    ("lang,setup,seed,category,mcc\nfr,rte,0,Negation,12\n", "mcc outside [-1, 1]", 2),
    ("lang,setup,seed,category,mcc\nfr,rte,x,Negation,0.1\n", "seed is not an integer", 2),
    ("lang,setup,seed,category,mcc\nfr,rte,0,Negations,0.1\n", "unknown fine category 'Negations'", 2),
    ("lang,setup,seed,level,category,mcc\nfr,rte,0,total,overall,0.1\n", "level must be fine", 2),
    ("lang,setup,seed,category,mcc\n", "CSV holds no rows", None),
])
def test_bad_csv_names_file_and_line(tmp_path, text, message, line):
    path = write_csv(tmp_path / "bad.csv", text)
    with pytest.raises(UserError) as err:
        read_tidy_csv(path)
    where = f"{path}:{line}: " if line else f"{path}: "
    assert str(err.value).startswith(where + message)
    assert "(fix: " in str(err.value)


def test_same_run_twice_is_an_error(tmp_path):
    write_metrics(tmp_path / "out", "fr", "rte", 0, [0.1] * 33, 0.1)
    with pytest.raises(UserError, match="appears more than once"):
        collect([tmp_path / "out", tmp_path / "out"])


def test_missing_path_and_empty_folder(tmp_path):
    with pytest.raises(UserError, match="no such file or directory"):
        collect([tmp_path / "nope"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="no run directories"):
        collect([tmp_path / "empty"])


def test_coarse_rows_from_metrics(tmp_path):
    write_metrics(tmp_path, "de", "rte", 1, [0.0] * 33, 0.0, coarse_mcc={name: 0.5 for name in TAXONOMY})
    results = collect([tmp_path]).results
    assert list(results.loc[results["level"] == "coarse", "category"]) == list(TAXONOMY)
