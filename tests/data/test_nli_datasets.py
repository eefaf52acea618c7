"""Any NLI dataset through `datasets`, offline: a tiny set in XNLI's shape, built here, read from a
save_to_disk folder, from parquet files and by its Hub id from the `datasets` cache; labels
collapsed, nested samples, translate-train runs with an extra evaluation set, one-line errors."""
from __future__ import annotations

import json
import re
from pathlib import Path

import datasets
import pytest
from datasets import ClassLabel, Dataset, DatasetDict, Features, Value, load_dataset_builder
from forked_cli import run_module
from helpers import assert_one_line_error, runs, train_cli

from stability.core.errors import UserError
from stability.core.runrecord import SCHEMA_VERSION
from stability.core.schemas.nli import NliSet
from stability.data.container import nested_indices, to_dataset, to_examples
from stability.data.hub import load_nli_set
from stability.data.mixing import nested_select
from stability.data.mnli import nested_sample

XNLI_LABELS = ["entailment", "neutral", "contradiction"]
XNLI_FEATURES = Features({"premise": Value("string"), "hypothesis": Value("string"),
                          "label": ClassLabel(names=XNLI_LABELS)})
HUB_ID = "facebook/xnli"


def xnli_split(n: int, lang: str = "fr") -> Dataset:
    """n pairs in XNLI's shape, labels cycling entailment, neutral, contradiction."""
    return Dataset.from_dict({"premise": [f"{lang} prémisse {i}" for i in range(n)],
                              "hypothesis": [f"{lang} hypothèse {i}" for i in range(n)],
                              "label": [i % 3 for i in range(n)]}, features=XNLI_FEATURES)


def tiny_xnli() -> DatasetDict:
    return DatasetDict({"train": xnli_split(60), "test": xnli_split(24)})


def cache_as_hub(splits: DatasetDict, cache: Path, repo_id: str = HUB_ID, config: str = "fr") -> None:
    """Lay `splits` out in the `datasets` cache as `load_dataset(repo_id, config)` leaves it after a
    download, without the Hub: the parquet builder, named as the Hub dataset (`dataset_name`), writes
    its Arrow files to `<cache>/<namespace>___<name>/<config>/<version>/<hash>`, where the
    library looks offline (HF_DATASETS_OFFLINE=1) for a dataset it cannot reach."""
    files = {}
    for split, dataset in splits.items():
        files[split] = str(cache.parent / f"{config}-{split}.parquet")
        dataset.to_parquet(files[split])
    parquet = load_dataset_builder("parquet", data_files=files)
    builder = type(parquet)(cache_dir=str(cache), dataset_name=repo_id.split("/")[1], config_name=config,
                            data_files=parquet.config.data_files, hash="local")
    builder.download_and_prepare(output_dir=str(cache / repo_id.replace("/", "___") / config / "0.0.0" / "local"))


def test_a_save_to_disk_folder_reads_as_records_with_collapsed_labels(tmp_path):
    tiny_xnli().save_to_disk(str(tmp_path / "xnli"))
    records = load_nli_set(NliSet(name="xnli", path=str(tmp_path / "xnli"), split="test"), "fr")
    assert records.column_names == ["idx", "premise", "hypothesis", "label", "lang", "source"]
    assert records.features["label"].names == ["entailment", "not_entailment"]
    assert records["label"] == [0, 1, 1] * 8                     # neutral and contradiction collapse
    assert records["idx"][:2] == ["0", "1"] and set(records["source"]) == {"xnli"} and set(records["lang"]) == {"fr"}
    assert records["premise"][5] == "fr prémisse 5"


def test_parquet_files_and_the_hub_id_read_the_same_records(tmp_path):
    saved = tmp_path / "xnli"
    tiny_xnli().save_to_disk(str(saved))
    reference = load_nli_set(NliSet(name="xnli", path=str(saved)), "fr")
    tiny_xnli()["train"].to_parquet(str(tmp_path / "train.parquet"))
    from_files = load_nli_set(NliSet(name="xnli", path="parquet", data_files=[str(tmp_path / "train.parquet")]), "fr")
    cache_as_hub(tiny_xnli(), datasets.config.HF_DATASETS_CACHE)   # the test's own, offline (conftest)
    from_hub = load_nli_set(NliSet(name="xnli", path=HUB_ID, config="fr"), "fr")
    assert from_files[:] == reference[:] == from_hub[:]
    assert len(reference) == 60 and sum(reference["label"]) == 40


def test_a_column_and_label_map_read_another_layout(tmp_path):
    rows = [{"sentence1": "a", "sentence2": "b", "gold": "ENT", "pairID": "p1"},
            {"sentence1": "c", "sentence2": "d", "gold": "CON", "pairID": "p2"},
            {"sentence1": "e", "sentence2": "f", "gold": "-", "pairID": "p3"}]
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    spec = NliSet(name="mine", path="json", data_files=[str(path)], lang="en",
                  columns={"premise": "sentence1", "hypothesis": "sentence2", "label": "gold", "idx": "pairID"},
                  labels={"ENT": "entailment", "CON": "contradiction"})
    records = load_nli_set(spec, "fr")
    assert records[:] == {"idx": ["p1", "p2"], "premise": ["a", "c"], "hypothesis": ["b", "d"], "label": [0, 1],
                          "lang": ["en", "en"], "source": ["mine", "mine"]}   # "-" (no gold label) dropped


@pytest.mark.parametrize("spec, message", [
    (NliSet(name="xnli", path=HUB_ID, config="de"), "cannot load xnli (facebook/xnli config de, split train) offline"),
    (NliSet(name="xnli", path="parquet", data_files=["/nowhere/train.parquet"]), "missing data file"),
    (NliSet(name="xnli", path="parquet"), "reads data_files, and none are given"),
])
def test_missing_data_is_a_user_error(spec, message):
    with pytest.raises(UserError, match=re.escape(message)):
        load_nli_set(spec, "fr")


def test_an_unknown_label_or_column_names_the_fix(tmp_path):
    tiny_xnli().save_to_disk(str(tmp_path / "xnli"))
    with pytest.raises(UserError, match=r"has no column premise=sentence1 \(it has premise, hypothesis, label\)"):
        load_nli_set(NliSet(name="xnli", path=str(tmp_path / "xnli"), columns={
            "premise": "sentence1", "hypothesis": "hypothesis", "label": "label"}), "fr")
    Dataset.from_dict({"premise": ["a"], "hypothesis": ["b"], "label": [2]}).save_to_disk(str(tmp_path / "ints"))
    with pytest.raises(UserError, match=r"unknown label '2' .*labels.2=entailment"):
        load_nli_set(NliSet(name="ints", path=str(tmp_path / "ints")), "fr")


def test_nested_samples_hold_and_follow_mnli_permutation(tmp_path):
    pool = to_dataset(to_examples(load_nli_set(NliSet(name="xnli", path=_saved(tmp_path)), "fr")))
    small, large = nested_select(pool, 10, 1234, "xnli"), nested_select(pool, 40, 1234, "xnli")
    assert small["idx"] == large["idx"][:10] and len(set(large["idx"])) == 40
    assert to_examples(large) == nested_sample(to_examples(pool), 40, 1234)   # MNLI's sample of the same pool
    assert nested_select(pool, 40, 1235, "xnli")["idx"] != large["idx"]
    assert nested_select(pool, "all", 1234, "xnli") is pool
    assert nested_indices(60, 5, 1234) == nested_indices(60, 60, 1234)[:5]
    with pytest.raises(UserError, match=r"asked for 61 xnli pairs but the pool has 60 \(fix: use data.mix.n_samples<=60"):
        nested_select(pool, 61, 1234, "xnli")


def _saved(tmp_path: Path) -> str:
    tiny_xnli().save_to_disk(str(tmp_path / "xnli"))
    return str(tmp_path / "xnli")


def test_records_round_trip_through_the_container():
    from stability.data.formats import read_examples
    from stability.data.sources import BUILTIN_DIR

    for path in (BUILTIN_DIR / "fr" / "diagnostic.jsonl", BUILTIN_DIR / "mnli" / "train.jsonl"):
        examples = read_examples(path, "fr")
        assert to_examples(to_dataset(examples)) == examples


TRANSLATE_TRAIN = ["experiment=smoke", "lang=fr", "data.max_train_samples=32", "trainer.max_epochs=2",
                   "+nli@data.mix=xnli", "data.mix.n_samples=40",
                   "data.extra_eval=[{name:xnli-test,path:facebook/xnli,config:fr,split:test}]"]


@pytest.mark.slow
def test_a_translate_train_smoke_sweep_records_its_setup_and_extra_set(tmp_path):
    """French training plus 40 XNLI-shaped French pairs read by their Hub id from the datasets cache,
    scored on the same set's test split: setup rte+xnli40, scores in metrics.json, the table, report.md."""
    cache_as_hub(tiny_xnli(), tmp_path / "hf-datasets")
    out = tmp_path / "outputs"
    sweep = train_cli([*TRANSLATE_TRAIN, "seed=0..1", f"paths.output_dir={out}"], tmp_path)
    assert sweep.returncode == 0, sweep.stderr
    found = runs(out)
    assert sorted(found) == ["smoke/fr/rte+xnli40/ep2_ntrain32/seed0", "smoke/fr/rte+xnli40/ep2_ntrain32/seed1"]
    first, second = found.values()
    assert first["setup"] == "rte+xnli40" and first["n_added"] == 40 and first["n_train"] == 32 + 40
    assert first["schema"] == SCHEMA_VERSION and set(first["extra_eval"]) == {"xnli-test"}
    scores = first["extra_eval"]["xnli-test"]
    assert scores["n_items"] == 24 and 0 <= scores["accuracy"] <= 1 and -1 <= scores["mcc"] <= 1
    assert not first["tokenization_cached"] and second["tokenization_cached"]   # every split, the extra set too
    table = sweep.stdout.split("(2 runs):")[1].splitlines()
    assert "xnli-test acc" in table[1] and "xnli-test MCC" in table[1]
    assert table[3].split()[-2:] == [f"{scores['accuracy']:.4f}", f"{scores['mcc']:.4f}"]

    report = run_module("stability.report", [f"runs={out / 'smoke'}", f"out={tmp_path / 'r'}", "figures=false",
                                             "calibration_sims=0"], tmp_path)
    assert report.returncode == 0, report.stderr
    text = (tmp_path / "r" / "report.md").read_text(encoding="utf-8")
    section = text.split("## Extra evaluation sets")[1].split("\n## ")[0]
    row = next(line for line in section.splitlines() if "xnli-test" in line)
    accuracies = [run["extra_eval"]["xnli-test"]["accuracy"] for run in found.values()]
    assert f"{sum(accuracies) / 2:.3f}" in row or f"{sum(accuracies) / 2:.2f}" in row
    assert (tmp_path / "r" / "extra_eval_summary.csv").is_file()


@pytest.mark.slow
def test_an_extra_set_changes_no_directory_but_reruns_a_finished_run(tmp_path):
    tiny_xnli().save_to_disk(str(tmp_path / "xnli"))
    out = tmp_path / "outputs"
    plain = ["experiment=smoke", "seed=0", "hydra.mode=RUN", "trainer.max_epochs=1", f"paths.output_dir={out}"]
    assert train_cli(plain, tmp_path).returncode == 0
    scored = train_cli([*plain, f"data.extra_eval=[{{name:xnli-dev,path:{tmp_path / 'xnli'},split:test}}]"], tmp_path)
    assert scored.returncode == 0, scored.stderr
    assert "[skip]" not in scored.stdout + scored.stderr
    assert list(runs(out)) == ["smoke/en/rte/ep1/seed0"]
    assert runs(out)["smoke/en/rte/ep1/seed0"]["extra_eval"]["xnli-dev"]["n_items"] == 24


@pytest.mark.slow
def test_swedish_translate_train_and_a_missing_offline_dataset_are_one_line(tmp_path):
    swedish = train_cli(["experiment=translate_train", "lang=sv", "seed=0", f"paths.output_dir={tmp_path}"], tmp_path)
    assert_one_line_error(swedish, "xnli has no config 'sv'", "ar, bg, de")
    missing = train_cli([*TRANSLATE_TRAIN, "seed=0", "hydra.mode=RUN", f"paths.output_dir={tmp_path / 'o'}"], tmp_path)
    assert_one_line_error(missing, "cannot load xnli (facebook/xnli config fr, split train) offline",
                          "load it once online")
