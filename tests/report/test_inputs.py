"""The report never pools runs of one condition that read different inputs, and says which code
the pooled runs came from (report.md's commit sentence, results.csv's commit and dirty)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from forked_cli import run_module
from report_runs import write_metrics

from stability.report.cli import main

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
FAST = ["bootstrap=0", "figures=false", "calibration_sims=0"]   # none of them is what these tests check
TRAIN, OTHER_TRAIN = "a1b2c3d4" + "0" * 56, "9f8e7d6c" + "0" * 56
MODEL = {"source": "bert-base-multilingual-cased", "sha256": "5" * 64}
COMMIT_A, COMMIT_B = "1234567" + "a" * 33, "89abcde" + "b" * 33


def run_of(root: Path, seed: int, *, lang: str = "fr", inputs: dict | None = None, commit: str | None = None,
           dirty: bool | None = None) -> Path:
    """A hand-made run of lang / rte as schema 4 writes it: its input hashes and environment."""
    run = write_metrics(root, lang, "rte", seed, np.linspace(-0.5, 0.5, 33) * (seed + 1) / 4, 0.1 * (seed + 1))
    metrics = json.loads((run / "metrics.json").read_text())
    metrics.update(schema=4, inputs=inputs or {}, environment={"git_commit": commit, "git_dirty": dirty})
    (run / "metrics.json").write_text(json.dumps(metrics))
    return run


def train(sha256: str, source: str = "fr/train.jsonl") -> dict:
    return {"train": {"source": source, "sha256": sha256}, "model": MODEL}


def report(runs: Path | str, out: Path) -> str:
    main([f"runs={runs}", f"out={out}", *FAST])
    return (out / "report.md").read_text(encoding="utf-8")


def test_runs_of_one_condition_that_read_other_inputs_are_refused_in_one_line(tmp_path):
    runs = tmp_path / "runs"
    run_of(runs, 0, inputs=train(TRAIN))
    run_of(runs, 1, inputs=train(OTHER_TRAIN))
    run_of(runs, 2)                                    # not recorded: matches either
    env = {key: value for key, value in os.environ.items() if key != "NLI_STABILITY_TRACEBACK"}
    done = run_module("stability.cli", ["report", f"runs={runs}", *FAST], tmp_path, env=env, timeout=300)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        f"error: {runs}: 3 runs of fr / rte read other inputs: train (fr/train.jsonl) a1b2c3d4 in fr_rte_seed0 vs "
        "9f8e7d6c in fr_rte_seed1 (fix: rerun the runs of old inputs with force=true, or report them from "
        "separate folders)"]
    assert not (runs / "report").exists()


def test_every_differing_role_is_named_and_both_sources_when_they_differ(tmp_path, capsys):
    run_of(tmp_path, 0, inputs={**train(TRAIN), "validation": {"source": "fr/val.jsonl", "sha256": "1" * 64}})
    run_of(tmp_path, 1, inputs={**train(OTHER_TRAIN, "elsewhere/train.jsonl"),
                                "validation": {"source": "fr/val.jsonl", "sha256": "2" * 64}})
    with pytest.raises(SystemExit) as stop:
        main([f"runs={tmp_path}", *FAST])
    assert stop.value.code == 2
    assert ("read other inputs: train (fr/train.jsonl) a1b2c3d4 in fr_rte_seed0 vs (elsewhere/train.jsonl) "
            "9f8e7d6c in fr_rte_seed1; validation (fr/val.jsonl) 11111111 in fr_rte_seed0 vs 22222222 in "
            "fr_rte_seed1 (fix:") in capsys.readouterr().err


def test_same_hashes_unrecorded_runs_other_roles_and_other_cells_are_pooled(tmp_path):
    run_of(tmp_path, 0, inputs=train(TRAIN))
    run_of(tmp_path, 1, inputs=train(TRAIN, "copy/of/train.jsonl"))     # same content read from elsewhere
    run_of(tmp_path, 2)                                                # written before input hashes
    run_of(tmp_path, 3, inputs={"model": MODEL})                       # no train recorded: nothing to compare
    for seed in range(2):                                              # another cell may read other data
        run_of(tmp_path, seed, lang="de", inputs=train(OTHER_TRAIN))
    page = report(tmp_path, tmp_path / "report")
    summary = pd.read_csv(tmp_path / "report" / "summary.csv").set_index("lang")
    assert summary.loc["fr", "n_seeds"] == 4 and summary.loc["de", "n_seeds"] == 2
    assert "; inputs not recorded: 1 run (written before input hashes)." in page
    assert "code commits" not in page                                  # no run recorded its commit


def test_runs_of_two_commits_are_pooled_and_named(tmp_path):
    run_of(tmp_path, 0, inputs=train(TRAIN), commit=COMMIT_A, dirty=False)
    run_of(tmp_path, 1, inputs=train(TRAIN), commit=COMMIT_A, dirty=True)
    run_of(tmp_path, 2, inputs=train(TRAIN), commit=COMMIT_B, dirty=False)
    out = tmp_path / "report"
    page = report(tmp_path, out)
    assert ("Runs of 2 code commits are pooled: 1234567 (2 runs), 89abcde (1 run); 1 ran from a tree with "
            "uncommitted changes.") in page
    assert "inputs not recorded" not in page
    results = pd.read_csv(out / "results.csv", dtype={"commit": str})
    assert list(results.columns)[8:] == ["n_added", "commit", "dirty", "degenerate"]
    per_run = results.drop_duplicates("seed").set_index("seed")
    assert list(per_run["commit"]) == [COMMIT_A, COMMIT_A, COMMIT_B]
    assert list(per_run["dirty"]) == [False, True, False]
    # read back from results.csv: the same table, the same sentence
    again = report(out / "results.csv", tmp_path / "again")
    pd.testing.assert_frame_equal(results, pd.read_csv(tmp_path / "again" / "results.csv", dtype={"commit": str}))
    assert "Runs of 2 code commits are pooled" in again


def test_one_commit_from_a_clean_tree_needs_no_sentence_but_a_dirty_tree_does(tmp_path):
    for seed in range(2):
        run_of(tmp_path, seed, commit=COMMIT_A, dirty=False)
    clean = report(tmp_path, tmp_path / "clean")
    assert "ran commit" not in clean and "code commits" not in clean
    run_of(tmp_path, 2, commit=COMMIT_A, dirty=True)
    assert "All 3 runs ran commit 1234567; 1 ran from a tree with uncommitted changes." in \
        report(tmp_path, tmp_path / "dirty")


@pytest.mark.parametrize("fixture", ["smoke_main_041fde0", "run_main_807686d"])
def test_stored_old_runs_still_report_their_inputs_unrecorded(tmp_path, fixture):
    runs = FIXTURES / fixture
    page = report(runs, tmp_path / "report")
    n_runs = len(list(runs.rglob("metrics.json")))
    assert f"inputs not recorded: {n_runs} run{'s' if n_runs > 1 else ''} (written before input hashes)" in page
    commit = pd.read_csv(tmp_path / "report" / "results.csv", dtype={"commit": str})["commit"]
    assert commit.str.startswith(fixture[-7:]).all()
