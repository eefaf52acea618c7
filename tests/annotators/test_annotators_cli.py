"""python -m annotators (= nli-stability annotate) action=annotate / stats / evaluate: output files,
columns, exit status 2."""
import json
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from forked_cli import run_module

from annotators import FEATURES
from annotators.cli import main

DIAGNOSTIC = [
    {"idx": "0", "label": "not_entailment", "sentence1": "Katten satt på mattan.",
     "sentence2": "Katten satt inte på mattan.", "logic": "Negation"},
    {"idx": "1", "label": "entailment", "sentence1": "Tom eller Maria kom.", "sentence2": "Någon kom.",
     "logic": "Disjunction;Existential"},
    {"idx": "2", "label": "entailment", "sentence1": "Tom och Maria kom.", "sentence2": "Tom kom.",
     "logic": "Conjunction", "knowledge": "Common sense"},
    {"idx": "3", "label": "not_entailment", "sentence1": "Om det regnar stannar vi.",
     "sentence2": "Vi stannar.", "logic": "Conditionals"},
]


def write_jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture
def diagnostic(tmp_path) -> Path:
    return write_jsonl(tmp_path / "diag_sw.jsonl", DIAGNOSTIC)


def test_annotate_to_file(diagnostic, tmp_path):
    main(["action=annotate", "lang=sv", f"files=[{diagnostic}]", f"out={tmp_path / 'out'}"])
    out = tmp_path / "out" / "diag_sw.features.jsonl"
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 4
    assert {"idx", "premise", "hypothesis", "label", "features", "premise_features",
            "hypothesis_features", "unsupported"} <= set(rows[0])
    assert "Negation" in rows[0]["features"] and rows[0]["premise_features"] == []
    assert "Named entities" in rows[0]["unsupported"]


def test_annotate_defaults_to_a_folder_under_outputs(diagnostic, tmp_path, monkeypatch, capsys):
    """One features file per input, in outputs/annotate/<lang> of the working directory."""
    monkeypatch.chdir(tmp_path)
    same_stem = tmp_path / "other" / "diag_sw.jsonl"
    same_stem.parent.mkdir()
    write_jsonl(same_stem, DIAGNOSTIC[:1])
    main(["lang=sv", f"files=[{diagnostic},{same_stem}]"])
    out = tmp_path / "outputs" / "annotate" / "sv"
    lines = (out / f"{tmp_path.name}/diag_sw.features.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["idx"] for line in lines] == ["0", "1", "2", "3"]
    assert len((out / "other" / "diag_sw.features.jsonl").read_text(encoding="utf-8").splitlines()) == 1
    assert capsys.readouterr().out.count("wrote the features of") == 2


def test_stats_writes_share_per_input(diagnostic, tmp_path):
    other = write_jsonl(tmp_path / "train_sw.jsonl", [
        {"idx": 0, "premise": "Tom kom inte.", "hypothesis": "Tom kom.", "label": "not_entailment"}])
    main(["action=stats", "lang=sv", f"files=[{diagnostic},{other}]", f"out={tmp_path / 's'}"])
    table = pd.read_csv(tmp_path / "s" / "feature_share.csv")
    assert list(table.columns) == ["feature", "diag_sw", "train_sw"]
    assert list(table["feature"]) == list(FEATURES)
    share = table.set_index("feature")
    assert share.loc["Negation", "diag_sw"] == 0.25
    assert share.loc["Negation", "train_sw"] == 1.0
    assert pd.isna(share.loc["Named entities", "diag_sw"])          # unsupported, not 0
    assert "unsupported" in (tmp_path / "s" / "feature_share.md").read_text()


def test_evaluate_writes_agreement(diagnostic, tmp_path, capsys):
    main(["action=evaluate", "lang=sv", f"files=[{diagnostic}]", f"out={tmp_path / 'e'}", "cache=false"])
    table = pd.read_csv(tmp_path / "e" / "agreement.csv").set_index("feature")
    assert list(table.reset_index().columns) == ["feature", "n_gold", "recall", "precision", "f1",
                                                 "flag_rate_untagged"]
    assert table.loc["Negation", "n_gold"] == 1 and table.loc["Negation", "recall"] == 1.0
    assert table.loc["Conditionals", "recall"] == 1.0
    assert table.loc["Negation", "flag_rate_untagged"] == 0.0
    assert pd.isna(table.loc["Datives", "recall"])
    assert "unsupported" in capsys.readouterr().out


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return run_module("annotators", list(args), cwd)


@pytest.mark.parametrize("args, message", [
    (["action=stats", "lang=xx", "files=[whatever.jsonl]"], "unknown lang 'xx'"),
    (["lang=sv", "files=[missing.jsonl]"], "missing.jsonl: file not found"),
    (["action=count", "lang=sv", "files=[a.jsonl]"], "action='count' is not known"),
    (["lang=sv"], "no input files"),
    (["action=evaluate", "lang=sv", "files=[a.jsonl,b.jsonl]"], "action=evaluate scores one diagnostic file, not 2"),
    (["lang=sv", "files=[a.jsonl]", "cache=maybe"], "cache='maybe' is not true or false"),
])
def test_user_errors_exit_2_with_one_line(args, message, tmp_path):
    result = run_cli(*args, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and message in result.stderr


def test_evaluate_without_gold_categories_is_a_user_error(tmp_path):
    plain = write_jsonl(tmp_path / "plain.jsonl", [{"premise": "a", "hypothesis": "b", "label": 0}])
    result = run_cli("action=evaluate", "lang=sv", f"files=[{plain}]", f"out={tmp_path}", cwd=tmp_path)
    assert result.returncode == 2 and "no item carries gold categories" in result.stderr
