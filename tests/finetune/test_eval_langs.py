"""Train once, score in every language (`data.eval_langs`): the run records each language's scores and
predictions, its setup names the training language, and the report reads it per language, never
pooled with runs trained in that language."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest
from sklearn.metrics import matthews_corrcoef

from forked_cli import run_module
from helpers import BUILTIN, QUICK, QUICK_VARIANT, assert_one_line_error, runs, train_cli

CROSS = f"smoke/en/rte@en/{QUICK_VARIANT}"
OWN_FR = f"smoke/fr/rte/{QUICK_VARIANT}"


@pytest.fixture(scope="module")
def sweep(tmp_path_factory) -> Path:
    """English runs scored in fr and de too (with dynamics), and French runs trained in French, in one folder."""
    cwd = tmp_path_factory.mktemp("eval_langs")
    for args in (["data.eval_langs=[fr,de]", "trainer.dynamics=true"], ["lang=fr"]):
        result = train_cli([*QUICK, "seed=0..1", *args], cwd)
        assert result.returncode == 0, result.stderr
    return cwd


def diagnostic(lang: str) -> dict[str, dict]:
    rows = [json.loads(line) for line in (BUILTIN / lang / "diagnostic.jsonl").read_text().splitlines()]
    return {row["idx"]: row for row in rows}


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_run_records_each_languages_scores_from_its_own_predictions(sweep):
    found = runs(sweep / "outputs")
    assert set(found) == {f"{CROSS}/seed0", f"{CROSS}/seed1", f"{OWN_FR}/seed0", f"{OWN_FR}/seed1"}
    record = found[f"{CROSS}/seed0"]
    assert record["schema"] == 7 and record["lang"] == "en" and record["setup"] == "rte@en"
    assert set(record["eval_langs"]) == {"fr", "de"}
    for lang in ("fr", "de"):
        scores = record["eval_langs"][lang]
        rows = read_jsonl(sweep / "outputs" / CROSS / "seed0" / "eval_langs" / f"{lang}.jsonl")
        items = diagnostic(lang)
        assert [row["idx"] for row in rows] == list(items) and scores["n_items"] == len(items) == 83
        assert all(row["label"] == (0 if items[row["idx"]]["label"] == "entailment" else 1) for row in rows)
        gold, pred = [row["label"] for row in rows], [row["pred"] for row in rows]
        assert scores["overall_mcc"] == pytest.approx(matthews_corrcoef(gold, pred), abs=1e-12)
        negation = [(g, p) for g, p, row in zip(gold, pred, rows) if "Negation" in row["categories"]]
        assert scores["category_n"]["Negation"] == len(negation) == 13
        if "Negation" not in scores["degenerate"]:
            assert scores["category_mcc"]["Negation"] == pytest.approx(matthews_corrcoef(*zip(*negation)), abs=1e-12)
        sha = hashlib.sha256((BUILTIN / lang / "diagnostic.jsonl").read_bytes()).hexdigest()
        assert record["inputs"][f"eval:{lang}"]["sha256"] == sha
    # the run's own language is scored as any run of it is: the same numbers as the French-free run of its seed
    assert record["overall_mcc"] == pytest.approx(
        matthews_corrcoef(*zip(*[(row["label"], row["pred"]) for row in read_jsonl(
            sweep / "outputs" / CROSS / "seed0" / "predictions.jsonl")])), abs=1e-12)


def report(sweep: Path, out: str, *extra: str):
    return run_module("stability.report", [f"runs={sweep / 'outputs' / 'smoke'}", f"out={sweep / out}", "bootstrap=0",
                                           "figures=false", "calibration_sims=0", *extra], sweep)


def test_the_report_reads_each_language_apart_from_the_runs_trained_there(sweep):
    result = report(sweep, "report")
    assert result.returncode == 0, result.stderr
    results = pd.read_csv(sweep / "report" / "results.csv", keep_default_na=False)
    overall = results[results["level"] == "all"]
    cells = overall.groupby(["lang", "setup"])["seed"].apply(sorted).to_dict()
    assert cells == {("de", "rte@en"): [0, 1], ("en", "rte@en"): [0, 1], ("fr", "rte@en"): [0, 1],
                     ("fr", "rte"): [0, 1]}
    record = runs(sweep / "outputs")[f"{CROSS}/seed1"]
    fr = overall[(overall["lang"] == "fr") & (overall["setup"] == "rte@en") & (overall["seed"] == 1)]
    assert fr["mcc"].item() == pytest.approx(record["eval_langs"]["fr"]["overall_mcc"])
    # cross-lingual consistency pairs the languages of one training, never a French run with an English one
    pairs = pd.read_csv(sweep / "report" / "consistency.csv", keep_default_na=False)
    assert set(pairs["setup"]) == {"rte@en"}
    assert {("en", "fr"), ("de", "fr"), ("en", "de")} <= set(zip(pairs["lang_a"], pairs["lang_b"]))
    # the atlas holds every language the runs with dynamics were scored in, each item with its own text
    atlas = pd.read_csv(sweep / "report" / "instability_atlas.csv", keep_default_na=False, dtype={"idx": str})
    french = atlas[(atlas["lang"] == "fr") & (atlas["setup"] == "rte@en")]
    assert len(french) == 83 and (french["language_group"] == "de+en+fr").all()
    items = diagnostic("fr")
    assert all(row.premise == items[row.idx]["sentence1"] for row in french.itertuples())


def test_more_languages_rescore_a_run_keeping_what_it_learned(sweep):
    before = runs(sweep / "outputs")
    result = train_cli([*QUICK, "seed=0", "data.eval_langs=[fr,de,sv]", "trainer.dynamics=true"], sweep)
    assert result.returncode == 0, result.stderr
    after = runs(sweep / "outputs")[f"{CROSS}/seed0"]
    assert set(after["eval_langs"]) == {"fr", "de", "sv"}
    assert (sweep / "outputs" / CROSS / "seed0" / "replaced").is_dir()
    old = before[f"{CROSS}/seed0"]
    assert after["category_mcc"] == old["category_mcc"] and after["eval_langs"]["fr"] == old["eval_langs"]["fr"]


@pytest.mark.parametrize("args, fragments", [
    (["data.eval_langs=[fr,en]"], ["lists the run's own language en", "fix: leave en out"]),
    (["data.eval_langs=[xx]"], ["data.eval_langs='xx' is not known", "use one of: de, en, fr, ru, sv"]),
    (["data.eval_langs=[fr,fr]"], ["names a language twice"]),
    (["data.eval_langs=[fr]", "data.diagnostic=generated"], ["data.diagnostic=generated", "lang=<code>"]),
])
def test_a_wrong_language_list_is_one_line(tmp_path, args, fragments):
    result = train_cli([*QUICK, "seed=0", *args], tmp_path)
    assert_one_line_error(result, *fragments)
    assert not (tmp_path / "outputs").exists()


def test_fused_members_are_scored_in_every_language(tmp_path):
    result = train_cli([*QUICK, "seed=0..1", "trainer.fuse_seeds=2", "data.eval_langs=[sv]"], tmp_path)
    assert result.returncode == 0, result.stderr
    found = runs(tmp_path / "outputs")
    assert {path.rsplit("/", 2)[0] for path in found} == {"smoke/en/rte@en"}
    for path, record in found.items():
        assert record["engine"] == "fused2" and set(record["eval_langs"]) == {"sv"}
        rows = read_jsonl(tmp_path / "outputs" / path / "eval_langs" / "sv.jsonl")
        assert record["eval_langs"]["sv"]["overall_mcc"] == pytest.approx(
            matthews_corrcoef([r["label"] for r in rows], [r["pred"] for r in rows]), abs=1e-12)


def test_a_run_scored_in_several_languages_counts_once_among_the_commits():
    from stability.report.provenance import code_sentence

    rows = [(lang, "rte@en", seed, "aaaaaaa1", False) for lang in ("en", "fr", "de") for seed in (0, 1)]
    rows += [("fr", "rte", 0, "bbbbbbb2", True)]
    results = pd.DataFrame(rows, columns=["lang", "setup", "seed", "commit", "dirty"]).assign(variant="")
    assert code_sentence(results) == ("Runs of 2 code commits are pooled: aaaaaaa (2 runs), bbbbbbb (1 run); "
                                      "1 ran from a tree with uncommitted changes.")
