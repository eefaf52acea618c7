"""One tab-separated file holding three splits in a column, as English SICK is: `data.*.path=csv` with
`delimiter` and `where` reads each split, a run trains on TRAIN, validates on TRIAL and is scored on
TEST as an extra evaluation set, as docs/data-and-formats.md ("SICK: one file, three splits") shows."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from forked_cli import run_module
from helpers import train_cli
from stability.core.config import compose_config
from stability.core.errors import UserError
from stability.core.records import ENTAILMENT, NOT_ENTAILMENT
from stability.core.schemas.nli import NliSet
from stability.data.hub import load_nli_set

HEADER = ["pair_ID", "sentence_A", "sentence_B", "entailment_label", "relatedness_score", "entailment_AB",
          "entailment_BA", "sentence_A_original", "sentence_B_original", "sentence_A_dataset",
          "sentence_B_dataset", "SemEval_set"]
LABELS = ("ENTAILMENT", "NEUTRAL", "CONTRADICTION")
# split -> pair IDs; a split's rows are interleaved with the others', as in SICK.txt
SPLITS = {"TRAIN": [1, 2, 3, 5, 6, 8, 9, 10, 12, 13, 14, 16], "TRIAL": [4, 11, 17], "TEST": [7, 15, 18, 19]}
COLUMNS = {"premise": "sentence_A", "hypothesis": "sentence_B", "label": "entailment_label", "idx": "pair_ID"}
REAL_SICK = Path(__file__).resolve().parents[3] / "shared" / "data" / "sick" / "SICK.txt"


def _label(pair_id: int) -> str:
    return LABELS[pair_id % 3]


def write_sick(path: Path) -> Path:
    """A SICK-shaped file: SICK's header, tab-separated, a comma and a quote inside the sentences."""
    split_of = {pair_id: split for split, ids in SPLITS.items() for pair_id in ids}
    lines = ["\t".join(HEADER)]
    for pair_id in sorted(split_of):
        premise = f'A man, number {pair_id}, is playing a "guitar"'
        hypothesis = f"A person {pair_id} is playing"
        lines.append("\t".join([str(pair_id), premise, hypothesis, _label(pair_id), "4.5", "A_x_B", "B_x_A",
                                premise, hypothesis, "FLICKR", "FLICKR", split_of[pair_id]]))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def sick_set(path: Path, split: str, name: str = "sick") -> NliSet:
    return NliSet(name=name, path="csv", data_files=[str(path)], delimiter="\\t", columns=dict(COLUMNS),
                  where={"SemEval_set": split})


@pytest.mark.parametrize("split", list(SPLITS))
def test_each_split_is_its_rows_of_the_one_file(tmp_path, split):
    records = load_nli_set(sick_set(write_sick(tmp_path / "SICK.txt"), split), "en")
    assert records["idx"] == [str(pair_id) for pair_id in SPLITS[split]]
    assert records["label"] == [ENTAILMENT if _label(i) == "ENTAILMENT" else NOT_ENTAILMENT for i in SPLITS[split]]
    assert records[0]["premise"] == f'A man, number {SPLITS[split][0]}, is playing a "guitar"'
    assert set(records["lang"]) == {"en"}


def test_without_the_delimiter_the_fix_names_it(tmp_path):
    spec = sick_set(write_sick(tmp_path / "SICK.txt"), "TRAIN")
    spec.delimiter = None
    with pytest.raises(UserError, match=r"has no column SemEval_set .*\(fix: set delimiter to the file's separator "
                                        r"\(\\t for a tab\): its header was read as one column\)"):
        load_nli_set(spec, "en")
    spec.where = {}
    with pytest.raises(UserError, match=r"has no column premise=sentence_A .*\(fix: set delimiter"):
        load_nli_set(spec, "en")


def test_a_value_no_row_has_names_the_values(tmp_path):
    with pytest.raises(UserError, match=r"no row has SemEval_set=TRAINING \(its values: TEST, TRAIN, TRIAL\)"):
        load_nli_set(sick_set(write_sick(tmp_path / "SICK.txt"), "TRAINING"), "en")
    spec = sick_set(tmp_path / "SICK.txt", "TRAIN")
    spec.where = {"split": "TRAIN"}
    with pytest.raises(UserError, match="has no column split to select rows by"):
        load_nli_set(spec, "en")


def _edited(path: Path, line: int, edit) -> Path:
    """`path` with its line `line` (from 1) replaced by `edit(fields)`'s fields."""
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[line - 1] = "\t".join(edit(lines[line - 1].split("\t")))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# line 8 is pair 7 (TEST), line 3 pair 2 (TRAIN): each error names its line, read from any split
BROKEN_ROWS = {
    "an empty premise": (8, lambda fields: [fields[0], "", *fields[2:]], "TEST",
                         r":8: sick \(csv, split train\): no premise \(its column sentence_A is empty\) "
                         r"\(fix: give the row its premise, or remove the row\)$"),
    "no last field": (8, lambda fields: fields[:-1], "TRAIN",
                      r":8: 11 tab-separated fields where the header has 12 \(fix: a field is missing: "),
    "a field too many": (3, lambda fields: [*fields, "extra"], "TEST",
                         r":3: 13 tab-separated fields where the header has 12 \(fix: a tab inside a field splits it: "
                         r"quote that field"),
    "a repeated pair_ID": (8, lambda fields: ["2", *fields[1:]], "TRIAL",
                           r":8: sick \(csv, split train\): idx '2' \(pair_ID\) repeats line 3 \(fix: give every row "
                           r"its own idx"),
}


@pytest.mark.parametrize("case", list(BROKEN_ROWS))
def test_a_broken_row_is_one_line_naming_its_line(tmp_path, case):
    line, edit, split, message = BROKEN_ROWS[case]
    path = _edited(write_sick(tmp_path / "SICK.txt"), line, edit)
    with pytest.raises(UserError, match=rf"^{path}{message}"):
        load_nli_set(sick_set(path, split), "en")


def test_an_empty_label_or_a_repeated_idx_of_json_rows_names_the_row(tmp_path):
    path = tmp_path / "pairs.jsonl"
    rows = [{"idx": 1, "premise": "a", "hypothesis": "b", "label": "entailment"},
            {"idx": 2, "premise": "c", "hypothesis": "d", "label": None},
            {"idx": 1, "premise": "e", "hypothesis": "f", "label": "neutral"}]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    spec = NliSet(name="mine", path="json", data_files=[str(path)],
                  columns={"premise": "premise", "hypothesis": "hypothesis", "label": "label", "idx": "idx"})
    with pytest.raises(UserError, match=r"^mine \(json, split train\): idx '1' \(idx\) repeats row 1 in row 3 "):
        load_nli_set(spec, "en")
    path.write_text("".join(json.dumps(row) + "\n" for row in rows[:2]), encoding="utf-8")
    with pytest.raises(UserError, match=r"^mine \(json, split train\): no label \(its column label is empty\) in row 2 "):
        load_nli_set(spec, "en")


def test_a_quote_never_closed_is_named(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text('premise,hypothesis,label\na,b,entailment\n"c,d,entailment\ne,f,entailment\n', encoding="utf-8")
    with pytest.raises(UserError, match=rf"^{path}:3: 1 comma-separated fields where the header has 3 \(fix: a quote "
                                        r'\(\"\) opens a field on this line and closes only on line 4 or never'):
        load_nli_set(NliSet(name="mine", path="csv", data_files=[str(path)]), "en")


def test_a_parser_error_is_its_cause_in_one_line(tmp_path, capfd):
    path = tmp_path / "pairs.jsonl"
    path.write_text('{"premise": "a", "hypothesis": "b", "label": "entailment"}\n{"premise": \n', encoding="utf-8")
    with pytest.raises(UserError, match=r"cannot read the data files \(JSON parse error: "):
        load_nli_set(NliSet(name="mine", path="json", data_files=[str(path)]), "en")
    assert capfd.readouterr().err == ""   # not `datasets`' own log line of the same error


def test_a_delimiter_is_one_character_of_a_csv():
    with pytest.raises(UserError, match="needs path=csv and one character"):
        NliSet(name="sick", path="json", data_files=["x.jsonl"], delimiter=",")
    with pytest.raises(UserError, match="needs path=csv and one character"):
        NliSet(name="sick", path="csv", data_files=["x.csv"], delimiter="tab")
    assert NliSet(name="sick", path="csv", data_files=["x.csv"], delimiter="\\t").separator() == "\t"


def test_the_new_keys_at_their_defaults_leave_the_fingerprint_alone():
    from stability.core.runrecord import semantic_config

    base = ["experiment=smoke", "data.train_set.name=mine", "data.train_set.path=csv", "data.train_set.data_files=[x]",
            "data.extra_eval=[{name: other, path: csv, data_files: [y]}]"]
    data = semantic_config(compose_config(base))["data"]
    assert "delimiter" not in data["train_set"] and "where" not in data["train_set"]
    assert "where" not in data["extra_eval"][0] and "validation_set" not in data
    chosen = semantic_config(compose_config([*base, "data.train_set.delimiter=';'"]))["data"]["train_set"]
    assert chosen["delimiter"] == ";"


EXPERIMENT = """# @package _global_
defaults:
  - smoke
  - _self_
data:
  train_set: &sick
    name: sick
    path: csv
    data_files: [{file}]
    delimiter: "\\t"
    columns: {{premise: sentence_A, hypothesis: sentence_B, label: entailment_label, idx: pair_ID}}
    where: {{SemEval_set: TRAIN}}
  validation_set:
    <<: *sick
    split: validation
    where: {{SemEval_set: TRIAL}}
  extra_eval:
    - <<: *sick
      name: sick-test
      split: test
      where: {{SemEval_set: TEST}}
trainer:
  max_epochs: 1
hydra:
  sweeper:
    params:
      seed: 0
"""


@pytest.mark.slow   # a training run in a subprocess
def test_sick_trains_on_train_validates_on_trial_and_is_scored_on_test(tmp_path):
    sick = write_sick(tmp_path / "SICK.txt")
    (tmp_path / "configs" / "experiment").mkdir(parents=True)
    (tmp_path / "configs" / "experiment" / "sick.yaml").write_text(EXPERIMENT.format(file=sick), encoding="utf-8")
    result = train_cli([f"hydra.searchpath=[file://{tmp_path / 'configs'}]", "experiment=sick", "lang=en"], tmp_path)
    assert result.returncode == 0, result.stderr
    run = tmp_path / "outputs" / "smoke" / "en" / "sick" / "seed0"   # the preset chose the sets: no variant
    record = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    assert (record["setup"], record["n_train"], record["n_validation"]) == ("sick", 12, 3)
    assert record["extra_eval"]["sick-test"]["n_items"] == 4
    assert set(record["inputs"]) >= {"train_set", "validation_set", "extra:sick-test", "diagnostic"}
    assert "validation" not in record["inputs"] and "train" not in record["inputs"]


@pytest.mark.skipif(not REAL_SICK.is_file(), reason=f"English SICK not found at {REAL_SICK}")
def test_the_real_sick_file_loads_its_three_splits():
    sizes = {split: len(load_nli_set(sick_set(REAL_SICK, split), "en")) for split in SPLITS}
    assert sizes == {"TRAIN": 4439, "TRIAL": 495, "TEST": 4906}   # the counts its README gives


def test_a_validation_set_set_on_the_command_line_is_the_variant_val_name():
    cfg = compose_config(["experiment=smoke", "data.validation_set.name=sick", "data.validation_set.path=csv",
                          "data.validation_set.data_files=[x]", "data.validation_set.delimiter=\\t"],
                         return_hydra_config=True)
    assert cfg.variant == "val-sick"


def test_the_documented_sick_preset_composes_to_the_three_splits(tmp_path):
    import yaml

    docs = (Path(__file__).resolve().parents[2] / "docs" / "data-and-formats.md").read_text(encoding="utf-8")
    preset = docs.split("# ~/nli-configs/experiment/sick.yaml\n", 1)[1].split("```", 1)[0]
    sick = write_sick(tmp_path / "SICK.txt")
    (tmp_path / "configs" / "experiment").mkdir(parents=True)
    (tmp_path / "configs" / "experiment" / "sick.yaml").write_text(
        preset.replace("/data/sick/SICK.txt", str(sick)), encoding="utf-8")
    result = run_module("stability.train", [f"hydra.searchpath=[file://{tmp_path / 'configs'}]", "experiment=sick",
                                            "lang=en", "--cfg", "job"], tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr
    data = yaml.safe_load(result.stdout)["data"]
    for node, split in ((data["train_set"], "TRAIN"), (data["validation_set"], "TRIAL"), (data["extra_eval"][0], "TEST")):
        spec = NliSet(**node)
        assert spec.where == {"SemEval_set": split} and spec.separator() == "\t" and spec.columns == COLUMNS
        assert load_nli_set(spec, "en")["idx"] == [str(pair_id) for pair_id in SPLITS[split]]
