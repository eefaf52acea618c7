"""`## Instability atlas` on a hand-written sweep (de, ru: 4 seeds; sv: 2 seeds; 4 diagnostic items): every
flip rate equals a count by hand, the regression equals statsmodels' Logit called directly on the same
design, the top items carry the text of every language, and a sweep without dynamics has no atlas."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from report_runs import write_dynamics, write_run

from annotators.features import FeatureSet
from stability.core.taxonomy import COARSE_CATEGORIES, FINE_CATEGORIES
from stability.report import cli as report_cli
from stability.report.cli import main
from stability.report.collect import collect
from stability.report.dynamics import read_run_dynamics
from stability.report.instability_atlas_figure import coarse_rates, instability_figures
from stability.report.instability_atlas import (dynamics_predictions, instability_atlas, instability_regression,
                                                run_validation_flips, seed_flips, shared_flips, top_items)

LABELS = [0, 1, 1, 0]
CATEGORIES = [["Negation"], ["Core args", "Quantifiers"], ["Common sense"], ["Lexical entailment"]]
# final predictions (predictions.jsonl) per (lang, seed)
FINAL = {
    "ru": [[0, 0, 1, 1], [0, 1, 1, 0], [0, 1, 0, 0], [0, 1, 0, 0]],
    "de": [[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 1, 1], [1, 0, 1, 1]],
    "sv": [[1, 0, 1, 0], [1, 0, 1, 0]],
}
# predicted labels of the 4 diagnostic items at each of 4 validations, ru seed 0 and ru seed 1;
# every other run predicts its final labels at every validation (no late flip)
LATE = {
    ("ru", 0): [[1, 0, 0, 0], [0, 1, 0, 1], [0, 0, 1, 1], [0, 1, 1, 0]],
    ("ru", 1): [[0, 1, 1, 0], [1, 1, 1, 0], [1, 1, 1, 0], [0, 1, 1, 0]],
}
N_VALIDATIONS = 4


def text(lang: str, kind: str, i: int) -> str:
    return f"{lang} {kind} {i}" + (" never" if kind == "premise" and i == 1 else "")


def dynamics_items(lang: str) -> pd.DataFrame:
    """2 training items before the 4 diagnostic ones, so diagnostic columns are not the first."""
    train = [("train", f"t{i}", 0, f"train {i}", f"train h {i}", []) for i in range(2)]
    diagnostic = [("diagnostic", str(i), LABELS[i], text(lang, "premise", i), text(lang, "hypothesis", i),
                   CATEGORIES[i]) for i in range(4)]
    return pd.DataFrame(train + diagnostic, columns=["split", "idx", "label", "premise", "hypothesis", "categories"])


def write_sweep(root: Path, dynamics: bool = True) -> Path:
    for lang, seeds in FINAL.items():
        for seed, preds in enumerate(seeds):
            run = write_run(root, lang, "rte", seed, np.array(LABELS), np.array(preds), CATEGORIES)
            if not dynamics:
                continue
            diagnostic = np.array(LATE.get((lang, seed), [preds] * N_VALIDATIONS))
            pred = np.hstack([np.zeros((N_VALIDATIONS, 2), int), diagnostic])
            write_dynamics(run, dynamics_items(lang), np.where(pred == 0, 0.9, 0.1), pred)
    return root


def fake_annotate(pairs: list[tuple[str, str]], lang: str) -> list[FeatureSet]:
    """Negation where the premise says "never"; sv cannot detect Negation."""
    supported = frozenset({"Negation", "Quantifiers"} if lang != "sv" else {"Quantifiers"})
    return [FeatureSet(frozenset({"Negation"} if "never" in premise and "Negation" in supported else ()),
                       frozenset(), supported) for premise, _ in pairs]


@pytest.fixture(scope="module")
def sweep(tmp_path_factory) -> tuple[pd.DataFrame, list]:
    collected = collect([write_sweep(tmp_path_factory.mktemp("atlas") / "runs")])
    runs = read_run_dynamics(collected.runs)
    return dynamics_predictions(collected.predictions, runs, collected.runs), runs


@pytest.fixture(scope="module")
def atlas(sweep) -> pd.DataFrame:
    predictions, runs = sweep
    return instability_atlas(predictions, runs, annotate=fake_annotate).table


def rates(atlas: pd.DataFrame, lang: str, column: str) -> list[float]:
    return atlas[atlas["lang"] == lang].sort_values("idx")[column].tolist()


def test_seed_flip_rate_is_the_share_of_disagreeing_seed_pairs(atlas):
    # ru item 1: seeds 0,1,1,1 → 3 of the 6 seed pairs differ; item 2: 1,1,0,0 → 4 of 6; item 3: 1,0,0,0 → 3 of 6
    np.testing.assert_allclose(rates(atlas, "ru", "flip_rate_seeds"), [0, 3 / 6, 4 / 6, 3 / 6], atol=1e-12)
    np.testing.assert_allclose(rates(atlas, "de", "flip_rate_seeds"), [3 / 6, 0, 0, 0], atol=1e-12)
    np.testing.assert_allclose(rates(atlas, "sv", "flip_rate_seeds"), [0, 0, 0, 0], atol=1e-12)
    assert rates(atlas, "ru", "flips_between_seeds") == [False, True, True, True]
    assert rates(atlas, "ru", "n_seeds") == [4] * 4 and rates(atlas, "sv", "n_seeds") == [2] * 4
    one_seed = pd.DataFrame({"lang": "ru", "setup": "rte", "variant": "", "seed": 0, "idx": ["0"], "label": [0],
                             "pred": [1], "categories": ["Negation"]})
    flips = seed_flips(one_seed)
    assert flips["flip_rate_seeds"].isna().all() and flips["flips_between_seeds"].isna().all()


def test_late_flip_rate_counts_label_changes_over_the_last_validations(atlas):
    # ru seed 0, last 3 validations: item 0 stays 0 (its change at validation 2 is before the window) → 0,
    # item 1: 1,0,1 → 2 of 2 pairs; item 2: 0,1,1 → 1 of 2; item 3: 1,1,0 → 1 of 2.
    # ru seed 1, last 3: item 0: 1,1,0 → 1 of 2; items 1-3 constant. Seeds 2, 3: no change. Mean over 4 seeds.
    np.testing.assert_allclose(rates(atlas, "ru", "flip_rate_validations"),
                               [(0 + 0.5) / 4, (1 + 0) / 4, (0.5 + 0) / 4, (0.5 + 0) / 4], atol=1e-12)
    assert rates(atlas, "de", "flip_rate_validations") == [0.0] * 4
    assert rates(atlas, "ru", "last_validations") == [3] * 4
    # fewer validations than the window: every pair counts; an unknown label (-1) skips its pairs
    late, used = run_validation_flips(np.array([[0, 1, -1], [1, 1, 0]]), last=3)
    assert used == 2
    np.testing.assert_array_equal(late[:2], [1.0, 0.0]) and np.isnan(late[2])
    late, used = run_validation_flips(np.array([[0, 1]]))
    assert used == 1 and np.isnan(late).all()


def test_language_flip_rate_is_the_share_of_disagreeing_language_pairs(atlas):
    # per seed, languages predicting not_entailment among those with that seed (sv only seeds 0, 1):
    # item 0: seed 0 fr0 de0 sv1 → 2 of 3 pairs differ; seed 1 the same; seed 2 fr0 de0 → 0; seed 3 fr0 de1 → 1
    # item 1: 0 | fr1 de0 sv0 → 2/3 | 1 | 1;  item 2: 0 | 0 | 1 | 1;  item 3: 2/3 | 2/3 | 1 | 1
    expected = [(2 / 3 + 2 / 3 + 0 + 1) / 4, (0 + 2 / 3 + 1 + 1) / 4, (0 + 0 + 1 + 1) / 4, (2 / 3 + 2 / 3 + 1 + 1) / 4]
    for lang in FINAL:
        np.testing.assert_allclose(rates(atlas, lang, "flip_rate_languages"), expected, atol=1e-12)
        assert rates(atlas, lang, "n_languages") == [3] * 4
    solo = pd.DataFrame({"lang": "ru", "setup": "rte", "variant": "", "seed": [0, 1], "idx": "0", "label": 0,
                         "pred": [0, 1], "categories": "Negation"})
    assert instability_atlas(solo, [], annotate=fake_annotate).table["flip_rate_languages"].isna().all()


def test_atlas_joins_categories_features_and_text(atlas):
    ru = atlas[atlas["lang"] == "ru"].set_index("idx")
    assert ru.loc["1", "categories"] == "Core args;Quantifiers"
    assert ru.loc["1", "coarse"] == "Lexical Semantics;Predicate-Argument Structure"
    assert ru.loc["1", "features"] == "Negation" and ru.loc["0", "features"] == ""
    assert ru.loc["2", "premise"] == "ru premise 2" and ru.loc["2", "hypothesis"] == "ru hypothesis 2"
    sv = atlas[atlas["lang"] == "sv"].set_index("idx")
    assert "Negation" in sv.loc["1", "unsupported_features"].split(";") and sv.loc["1", "features"] == ""


def synthetic_atlas(n_items: int = 90, seed: int = 4) -> pd.DataFrame:
    """Items × (de, ru) whose chance to flip grows with Logic and with the Negation feature; Datives is
    detectable in ru only, so it is no term."""
    rng = np.random.default_rng(seed)
    rows = []
    for lang in ("de", "ru"):
        for i in range(n_items):
            coarse = [name for name in COARSE_CATEGORIES if rng.random() < 0.4]
            negation = rng.random() < 0.35
            p = 0.25 + 0.25 * ("Logic" in coarse) + 0.2 * negation + 0.1 * (lang == "ru")
            rows.append({"lang": lang, "setup": "rte", "variant": "", "idx": str(i), "coarse": ";".join(coarse),
                         "flips_between_seeds": bool(rng.random() < p),
                         "features": ";".join(["Negation"] * negation + ["Quantifiers"] * (rng.random() < 0.5)),
                         "unsupported_features": "Datives" if lang == "de" else ""})
    return pd.DataFrame(rows).astype({"flips_between_seeds": "boolean"})


def test_regression_equals_statsmodels_logit_on_the_same_design():
    atlas = synthetic_atlas()
    table, notes = instability_regression(atlas, confidence=0.9)
    design = pd.DataFrame({"intercept": 1.0}, index=atlas.index)
    for name in COARSE_CATEGORIES:
        design[f"coarse[{name}]"] = atlas["coarse"].str.split(";").map(lambda names, n=name: n in names).astype(float)
    # the features detectable in both languages that occur, in the taxonomy's order
    for name in [name for name in FINE_CATEGORIES if name in ("Negation", "Quantifiers")]:
        detected = atlas["features"].str.split(";")
        design[f"feature[{name}]"] = detected.map(lambda names, n=name: n in names).astype(float)
    design["lang[ru]"] = (atlas["lang"] == "ru").astype(float)
    result = sm.Logit(atlas["flips_between_seeds"].astype(int), design).fit(disp=0)
    # the terms are the features the atlas names (Datives, undetectable in de, is none); none needed dropping
    assert notes.get(("rte", ""), []) == []
    assert table["term"].tolist() == list(design.columns)
    np.testing.assert_allclose(table["coef"], result.params, atol=1e-8)
    np.testing.assert_allclose(table["std_err"], result.bse, atol=1e-8)
    np.testing.assert_allclose(table["z"], result.tvalues, atol=1e-8)
    np.testing.assert_allclose(table["p_value"], result.pvalues, atol=1e-8)
    interval = result.conf_int(alpha=0.1)
    np.testing.assert_allclose(table["ci_low"], interval[0], atol=1e-8)
    np.testing.assert_allclose(table["ci_high"], interval[1], atol=1e-8)
    np.testing.assert_allclose(table["odds_ratio"], np.exp(result.params), atol=1e-8)
    assert (table["n_obs"] == len(atlas)).all()


def test_regression_guards_against_separation_and_constant_outcomes():
    atlas = synthetic_atlas()
    never = atlas["features"].str.contains("Quantifiers")   # items with Quantifiers never flip
    atlas.loc[never, "flips_between_seeds"] = False
    table, notes = instability_regression(atlas, confidence=0.95)
    assert "feature[Quantifiers]" not in set(table["term"])
    assert "left out (separates the outcome): feature[Quantifiers]" in notes[("rte", "")]
    atlas["flips_between_seeds"] = atlas["flips_between_seeds"] & False
    table, notes = instability_regression(atlas, confidence=0.95)
    assert table.empty and notes[("rte", "")][-1] == "no fit: no item flips between seeds"


def test_top_items_carry_the_text_of_every_language(atlas):
    # mean seed flip rate over ru, de, sv: item 2: (4/6 + 0 + 0)/3; items 0, 1, 3: (3/6)/3 each (ties by idx)
    top = top_items(atlas, 3)
    assert top["idx"].tolist() == ["2", "0", "1"] and top["rank"].tolist() == [1, 2, 3]
    np.testing.assert_allclose(top["flip_rate_mean"], [4 / 18, 3 / 18, 3 / 18], atol=1e-12)
    for lang in FINAL:
        for row in top.itertuples():
            assert getattr(row, f"premise_{lang}") == text(lang, "premise", int(row.idx))
            assert getattr(row, f"hypothesis_{lang}") == text(lang, "hypothesis", int(row.idx))
    assert top["flip_rate_ru"].tolist() == pytest.approx([4 / 6, 0, 3 / 6])
    assert top["categories"].tolist() == ["Common sense", "Negation", "Core args;Quantifiers"]
    shared = shared_flips(atlas)
    # defined in all 3 languages: 4 items; ru flips 3, de 1, sv 0 → none in every language
    assert (shared.n_items, shared.in_all, shared.in_any, shared.expected_all) == (4, 0, 4, 0.0)


def report(root: Path, out: Path, *extra: str) -> str:
    main([f"runs={root}", f"out={out}", "bootstrap=0", "figures=false", "calibration_sims=0", *extra])
    return (out / "report.md").read_text(encoding="utf-8")


def test_report_writes_the_atlas_only_for_runs_with_dynamics(tmp_path, monkeypatch):
    monkeypatch.setattr(report_cli, "annotate_pairs", fake_annotate)
    page = report(write_sweep(tmp_path / "plain", dynamics=False), tmp_path / "plain_report")
    assert "## Instability atlas" not in page
    assert not list((tmp_path / "plain_report").glob("instability*"))
    page = report(write_sweep(tmp_path / "dyn"), tmp_path / "report", "flip_top=2")
    out = tmp_path / "report"
    assert "## Instability atlas" in page and "ru premise 2" in page
    atlas = pd.read_csv(out / "instability_atlas.csv", dtype={"idx": str}, keep_default_na=False, na_values=[""])
    assert len(atlas) == 12 and {"features", "unsupported_features", "premise"} <= set(atlas.columns)
    np.testing.assert_allclose(rates(atlas, "ru", "flip_rate_seeds"), [0, 3 / 6, 4 / 6, 3 / 6], atol=1e-12)
    regression = pd.read_csv(out / "instability_regression.csv")
    assert list(regression.columns) == ["setup", "variant", "term", "coef", "std_err", "z", "p_value", "ci_low",
                                        "ci_high", "odds_ratio", "n_obs"]
    top = pd.read_csv(out / "instability_top.csv", dtype={"idx": str})
    assert top["idx"].tolist() == ["2", "0"]


def test_figure_has_one_file_per_condition(atlas, tmp_path):
    two = pd.concat([atlas, atlas.assign(variant="lr3e-05")], ignore_index=True)
    paths = instability_figures(two, tmp_path)
    assert [path.name for path in paths] == ["instability_atlas_rte.png", "instability_atlas_rte_lr3e-05.png"]
    assert all(path.stat().st_size > 0 for path in paths)
    rates = coarse_rates(atlas, "flip_rate_seeds")
    # Logic holds item 0 (Negation) only: per language its seed flip rate
    assert rates.loc["Logic"].to_dict() == pytest.approx({"de": 0.5, "ru": 0.0, "sv": 0.0})
    assert rates.loc["all items", "ru"] == pytest.approx((0 + 3 / 6 + 4 / 6 + 3 / 6) / 4)


def test_report_without_the_annotator_leaves_feature_columns_out(tmp_path, monkeypatch, capsys):
    def unavailable(pairs, lang):
        raise ImportError("No module named 'spacy'")

    monkeypatch.setattr(report_cli, "annotate_pairs", unavailable)
    page = report(write_sweep(tmp_path / "runs"), tmp_path / "report")
    atlas = pd.read_csv(tmp_path / "report" / "instability_atlas.csv")
    assert "features" not in atlas.columns and "flip_rate_seeds" in atlas.columns
    note = ("the feature annotator is unavailable for de, ru, sv (No module named 'spacy'), so no item has "
            "feature columns")
    assert page.count(note) == 1
    assert capsys.readouterr().err.count(note) == 1   # logged once, as a warning
