"""The run record: the only code that knows a run directory's files; old records still read."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from stability.core.config import compose_config
from stability.core.errors import UserError
from stability.core.runrecord import (
    SCHEMA_VERSION,
    Prediction,
    RunDir,
    RunRecord,
    config_fingerprint,
    iter_runs,
)
from stability.core.taxonomy import FINE_CATEGORIES
from stability.report.cli import main as report_main
from stability.report.collect import collect

# A smoke run written by main at commit 807686d, before metrics.json carried a schema.
OLD_RUN = Path(__file__).parent.parent / "fixtures" / "run_main_807686d"


def test_a_run_written_by_main_before_schemas_still_reads():
    run = RunDir(OLD_RUN)
    record = run.read_record(require=("overall_mcc", "category_mcc"))
    assert (record.lang, record.setup, record.seed, record.schema) == ("en", "rte", 0, 1)
    assert record.overall_mcc == pytest.approx(0.03660663023549092)
    assert record.category_mcc["Quantifiers"] == 0.5 and set(record.category_mcc) == set(FINE_CATEGORIES)
    assert (record.epochs_trained, record.best_epoch, record.n_items) == (10, 8, 83)
    assert record.val_majority is None and record.saved_model is None   # fields it did not have
    predictions = run.read_predictions()
    assert len(predictions) == 83
    assert predictions[0] == Prediction("0", 1, 1, 0.012824619188904762, ("Negation",))
    assert [entry["epoch"] for entry in run.read_train_log()] == list(range(1, 11))


def test_the_report_reads_the_old_run(tmp_path):
    shutil.copytree(OLD_RUN, tmp_path / "old" / "en" / "rte" / "seed0")
    collected = collect([tmp_path / "old"])
    overall = collected.results[collected.results["level"] == "all"].iloc[0]
    assert overall["mcc"] == pytest.approx(0.03660663023549092)
    assert len(collected.predictions) == 83


def test_unknown_schema_is_one_line_and_status_2(tmp_path, capsys):
    run = tmp_path / "runs" / "seed0"
    shutil.copytree(OLD_RUN, run)
    metrics = json.loads((run / "metrics.json").read_text())
    (run / "metrics.json").write_text(json.dumps({**metrics, "schema": 99}))
    with pytest.raises(UserError, match=r"unknown metrics.json schema 99 \(this version reads 1, 2, 3, 4, 5, 6, 7\)"):
        RunDir(run).read_record()
    with pytest.raises(SystemExit) as exit_info:
        report_main([f"runs={tmp_path / 'runs'}", f"out={tmp_path / 'report'}"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith(f"error: {run / 'metrics.json'}: unknown metrics.json schema 99")


def test_write_then_read_round_trip_and_only_finished_runs_listed(tmp_path):
    done, killed = RunDir(tmp_path / "a" / "seed0"), RunDir(tmp_path / "a" / "seed1")
    record = RunRecord(lang="fr", setup="rte", seed=0, overall_mcc=0.25, category_mcc={"Negation": 0.5},
                       val_accuracy=0.6, val_majority=0.55, saved_model="model")
    predictions = [Prediction("7", 0, 1, 0.3, ("Negation",), template="neg-1", features={"name.GENDER": "FEM"})]
    done.write_train_log([{"epoch": 1, "loss": 0.5}])
    done.append_epoch({"epoch": 2, "loss": 0.4})
    done.write_predictions(predictions)
    done.write_record(record)
    killed.write_train_log([{"epoch": 1, "loss": 0.5}])            # no record: unfinished
    assert [run.path for run in iter_runs(tmp_path)] == [done.path]
    assert done.read_record() == record and done.read_record().schema == SCHEMA_VERSION
    assert done.read_predictions() == predictions
    assert [e["epoch"] for e in done.read_train_log()] == [1, 2]
    assert not killed.is_finished()


def test_missing_required_field_names_the_file(tmp_path):
    run = RunDir(tmp_path / "r")
    run.write_record(RunRecord(lang="fr", setup="rte", seed=0))
    with pytest.raises(UserError, match=r"metrics.json lacks overall_mcc, category_mcc \(fix: delete"):
        run.read_record(require=("overall_mcc", "category_mcc"))


def test_suite_settings_change_the_fingerprint_only_when_a_suite_is_scored():
    def fingerprint(*overrides: str) -> str:
        return config_fingerprint(compose_config(["experiment=smoke", "seed=0", *overrides]))

    ordinary, generated = fingerprint(), fingerprint("data.diagnostic=generated")
    assert fingerprint("data.suite.name=logic", "data.suite.n=7", "data.suite.seed=3") == ordinary
    assert generated != ordinary
    assert fingerprint("data.diagnostic=generated", "data.suite.n=7") != generated
    assert fingerprint("data.diagnostic=generated", "data.suite.seed=3") != generated
