"""`## Data maps` (dataset cartography): confidence, variability (σ with ddof = 0, as
allenai/cartography) and correctness equal a hand computation on a recorded toy run, regions at
the thresholds' edges, Fleiss' κ equals statsmodels called directly on the seeds' regions, the
feature table equals scipy's Fisher test and statsmodels' Holm on a fake annotation (and runs with
the real annotator where it is installed), and end to end: no dynamics, no section; with dynamics,
the CSVs and the figure."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from report_runs import item_categories, noisy_predictions, write_dynamics, write_run
from scipy.stats import fisher_exact
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa
from statsmodels.stats.multitest import multipletests

from stability.core.errors import UserError
from stability.core.runrecord import Dynamics, RunDir
from stability.core.taxonomy import FINE_CATEGORIES
from annotators.features import FeatureSet
from stability.report import cli as report_cli
from stability.report import data_map
from stability.report.cli import main
from stability.report.data_map import (AMBIGUOUS, EASY, HARD, OTHER, REGIONS, DataMaps, assign_regions,
                                       data_maps, feature_shares, item_metrics, region_summary, seed_agreement)
from stability.report.dynamics import RunDynamics

N_DIAGNOSTIC = 6


def items_table(train_labels, train_texts=None, n_diagnostic: int = N_DIAGNOSTIC) -> pd.DataFrame:
    """Training items, one validation item and `n_diagnostic` diagnostic items (idx "0".."n-1")."""
    train_texts = train_texts or [(f"premise {i}", f"hypothesis {i}") for i in range(len(train_labels))]
    rows = [dict(split="train", idx=f"t{i}", label=int(label), premise=p, hypothesis=h, categories=[])
            for i, (label, (p, h)) in enumerate(zip(train_labels, train_texts))]
    rows.append(dict(split="validation", idx="v0", label=0, premise="p", hypothesis="h", categories=[]))
    rows += [dict(split="diagnostic", idx=str(i), label=i % 2, premise="dp", hypothesis="dh", categories=["Negation"])
             for i in range(n_diagnostic)]
    return pd.DataFrame(rows)


def predicted(prob: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(prob), -1, np.where(prob >= 0.5, 0, 1)).astype(np.int8)


# (1) a toy run: 3 validations, 4 training items (labels 0, 1, 0, 1), values exact in float16
TOY_LABELS = [0, 1, 0, 1]
NAN = np.nan
TOY_PROB = np.array([   # P(entailment) of the training items; the validation and diagnostic items follow
    [0.875, 0.625, 0.125, NAN],
    [0.75, NAN, 0.5, NAN],
    [0.625, 0.125, 0.25, 0.25],
])


def test_confidence_variability_correctness_by_hand(tmp_path):
    labels = np.arange(N_DIAGNOSTIC) % 2
    run = write_run(tmp_path, "en", "rte", 0, labels, labels, item_categories(N_DIAGNOSTIC))
    others = np.full((3, 1 + N_DIAGNOSTIC), 0.5)
    prob = np.hstack([TOY_PROB, others])
    write_dynamics(run, items_table(TOY_LABELS), prob, predicted(prob))
    metrics = item_metrics(RunDir(run).read_dynamics())

    # P(gold): item 0 (entailment) 0.875, 0.75, 0.625; item 1 (not) 0.375, –, 0.875;
    # item 2 (entailment) 0.125, 0.5, 0.25; item 3 (not) –, –, 0.75
    mean2 = (0.125 + 0.5 + 0.25) / 3
    expected_confidence = [0.75, (0.375 + 0.875) / 2, mean2, 0.75]
    expected_variability = [
        np.sqrt((0.125 ** 2 + 0 + 0.125 ** 2) / 3),          # ddof = 0
        0.25,                                                 # σ of {0.375, 0.875}
        np.sqrt(((0.125 - mean2) ** 2 + (0.5 - mean2) ** 2 + (0.25 - mean2) ** 2) / 3),
        np.nan,                                               # seen once: no variability
    ]
    # predictions (P(ent) ≥ 0.5 → entailment): item 0 right 3 of 3; item 1 wrong, right (1 of 2 seen);
    # item 2 wrong, right (0.5 → entailment), wrong; item 3 right once
    expected_correctness = [1.0, 0.5, 1 / 3, 1.0]
    assert metrics["idx"].tolist() == ["t0", "t1", "t2", "t3"]
    assert metrics["n_seen"].tolist() == [3, 2, 3, 1]
    np.testing.assert_allclose(metrics["confidence"], expected_confidence, atol=1e-6)
    np.testing.assert_allclose(metrics["variability"], expected_variability, atol=1e-6)
    np.testing.assert_allclose(metrics["correctness"], expected_correctness, atol=1e-12)
    # regions: item 0 sits on the easy edge (confidence = 0.75), item 1 is variable, item 2 undecided, item 3 unmapped
    assert list(assign_regions(metrics["confidence"], metrics["variability"])) == [EASY, AMBIGUOUS, OTHER, None]


def test_an_item_never_seen_has_no_coordinates():
    items = items_table([0, 1], n_diagnostic=0)
    prob = np.array([[0.75, NAN, 0.5], [0.25, NAN, 0.5]])
    metrics = item_metrics(Dynamics(items, prob.astype(np.float32), predicted(prob)))
    assert metrics["n_seen"].tolist() == [2, 0]
    assert metrics.loc[1, ["confidence", "variability", "correctness"]].isna().all()
    np.testing.assert_allclose(metrics.loc[0, ["confidence", "variability", "correctness"]].astype(float),
                               [0.5, 0.25, 0.5])


# (2) the thresholds' edges
@pytest.mark.parametrize("confidence, variability, region", [
    (0.75, 0.1999, EASY), (1.0, 0.0, EASY), (0.7499, 0.1, OTHER), (0.75, 0.2, AMBIGUOUS),
    (0.25, 0.0, HARD), (0.0, 0.1999, HARD), (0.2501, 0.0, OTHER), (0.0, 0.2, AMBIGUOUS), (0.5, 0.45, AMBIGUOUS),
    (0.5, 0.0, OTHER), (np.nan, 0.1, None), (0.9, np.nan, None),
])
def test_region_at_the_thresholds(confidence, variability, region):
    assert assign_regions([confidence], [variability])[0] == region


# (3) seed agreement
def run_dynamics(seed: int, prob: np.ndarray, labels, lang: str = "en", setup: str = "rte",
                 texts=None, order: np.ndarray | None = None) -> RunDynamics:
    """A run's dynamics in memory (no directory): `prob` = P(entailment) of the training items only."""
    items = items_table(labels, texts, n_diagnostic=0).iloc[:-1]   # training items only
    prob = prob.astype(np.float32)
    return RunDynamics(lang, setup, "", seed, f"/nowhere/{lang}/{setup}/{seed}", pd.DataFrame(),
                       Dynamics(items.reset_index(drop=True), prob, predicted(prob)))


def random_runs(rng: np.random.Generator, n_items: int = 40, seeds: int = 4, validations: int = 5,
                lang: str = "en", texts=None) -> list[RunDynamics]:
    labels = rng.integers(0, 2, n_items)
    kind = rng.integers(0, 4, n_items)    # per item: steady right, steady wrong, variable, undecided
    runs = []
    for seed in range(seeds):
        centre = np.select([kind == 0, kind == 1, kind == 2], [0.9, 0.1, 0.5], default=0.5)
        noise = np.where(kind == 2, 0.35, 0.05)[None, :] * rng.standard_normal((validations, n_items))
        p_gold = np.clip(centre[None, :] + noise + rng.normal(0, 0.1, n_items)[None, :], 0, 1)
        p_gold[rng.random(p_gold.shape) < 0.15] = np.nan       # items some validations did not see
        p_gold[1:, seed] = np.nan                               # item `seed`: seen once, no region in this seed
        prob = np.where(labels[None, :] == 0, p_gold, 1 - p_gold)
        runs.append(run_dynamics(seed, prob, labels, lang=lang, texts=texts))
    return runs


def test_fleiss_kappa_equals_statsmodels():
    rng = np.random.default_rng(4)
    maps = data_maps(random_runs(rng), n_added=lambda run: 0)
    # the seeds' rows in a shuffled order: matching goes by item, not by row
    runs = maps.runs.sample(frac=1.0, random_state=1)
    agreement = seed_agreement(runs)
    wide = runs.pivot(index="item", columns="seed", values="region")
    complete = wide.dropna()
    assert 0 < len(complete) < len(wide)                       # some items lack a region in some seed
    codes = complete.apply(lambda column: column.map({r: i for i, r in enumerate(REGIONS)})).to_numpy(int)
    table, _ = aggregate_raters(codes, n_cat=len(REGIONS))
    assert agreement.kappa == pytest.approx(fleiss_kappa(table, method="fleiss"), abs=1e-12)
    assert agreement.n_items == len(complete)
    assert agreement.same_region == pytest.approx(np.mean([len(set(row)) == 1 for row in complete.to_numpy()]))


def test_region_summary_shares_by_seed_and_on_the_mean_map():
    rng = np.random.default_rng(5)
    maps = data_maps(random_runs(rng, seeds=3), n_added=lambda run: 0)
    summary = region_summary(maps).iloc[0]
    per_seed = {r: [np.mean(part["region"].dropna() == r) for _, part in maps.runs.groupby("seed")] for r in REGIONS}
    for region, column in data_map.REGION_COLUMNS.items():
        assert summary[f"{column}_mean"] == pytest.approx(np.mean(per_seed[region]))
        assert summary[f"{column}_std"] == pytest.approx(np.std(per_seed[region], ddof=1))
        assert summary[f"{column}_map"] == pytest.approx(np.mean(maps.items["region"].dropna() == region))
    assert sum(summary[f"{c}_mean"] for c in data_map.REGION_COLUMNS.values()) == pytest.approx(1.0)
    # the seed-averaged coordinates are the means of the seeds' (where defined)
    one = maps.runs[maps.runs["item"] == 7]
    row = maps.items[maps.items["item"] == 7].iloc[0]
    assert row["confidence"] == pytest.approx(one["confidence"].mean())
    assert row["variability"] == pytest.approx(one["variability"].mean())
    assert row["n_seeds"] == one["variability"].notna().sum()
    table = maps.table()
    assert set(table["seed"]) == {"0", "1", "2", "mean"} and len(table) == 4 * 40


def test_one_seed_has_no_agreement():
    maps = data_maps(random_runs(np.random.default_rng(6), seeds=1), n_added=lambda run: 0)
    summary = region_summary(maps).iloc[0]
    assert np.isnan(summary["kappa"]) and np.isnan(summary["same_region"]) and np.isnan(summary["ambiguous_std"])


# (4) annotator features
def items_map(regions: list[str | None], texts: list[tuple[str, str]], added: list[bool] | None = None,
              lang: str = "xx") -> DataMaps:
    """A seed-averaged map with the given regions (the other columns are not read)."""
    items = pd.DataFrame({"lang": lang, "setup": "rte", "variant": "", "item": range(len(regions)),
                          "idx": [str(i) for i in range(len(regions))], "region": regions,
                          "premise": [p for p, _ in texts], "hypothesis": [h for _, h in texts],
                          "added": added or [False] * len(regions)})
    return DataMaps(items.iloc[:0], items)


def fake_annotate(pairs, lang):
    """Negation where a sentence has "not", Quantifiers where it has "all"; Datives undetectable."""
    def features(premise, hypothesis):
        text = f"{premise} {hypothesis}".split()
        return frozenset({"Negation"} if "not" in text else set()) | \
            frozenset({"Quantifiers"} if "all" in text else set())
    supported = frozenset({"Negation", "Quantifiers", "Temporal"})
    return [FeatureSet(features(*pair), frozenset(), supported) for pair in pairs]


def test_feature_shares_with_a_fake_annotator(holm_without_gc):
    # 12 mapped items: 5 with negation (4 ambiguous), 7 without (1 ambiguous); "all" on 3 items; one added pair
    # with negation and one unmapped item are left out
    regions = [AMBIGUOUS, AMBIGUOUS, AMBIGUOUS, AMBIGUOUS, EASY,
               AMBIGUOUS, EASY, EASY, HARD, OTHER, EASY, HARD, AMBIGUOUS, None]
    texts = [("it is not", f"x{i}") for i in range(5)] + [(f"it is {i}", "y") for i in range(7)] + \
            [("not added", "z"), ("not mapped", "w")]
    texts[0] = ("all is not", "a")
    texts[5] = ("all is well", "b")
    texts[6] = ("all is fine", "c")
    added = [False] * 12 + [True, False]
    result = feature_shares(items_map(regions, texts, added), fake_annotate)
    assert result.notes == []
    table = result.table.set_index("feature")
    assert list(table.index) == [c for c in FINE_CATEGORIES if c in {"Negation", "Quantifiers", "Temporal"}]
    negation = table.loc["Negation"]
    assert (negation["n_with"], negation["n_without"]) == (5, 7)
    assert negation["ambiguous_with"] == pytest.approx(4 / 5)
    assert negation["ambiguous_without"] == pytest.approx(1 / 7)
    assert negation["easy_to_learn_with"] == pytest.approx(1 / 5)
    assert negation["easy_to_learn_without"] == pytest.approx(3 / 7)
    assert negation["hard_to_learn_without"] == pytest.approx(2 / 7)
    assert negation["other_without"] == pytest.approx(1 / 7)
    assert negation["ambiguous_difference"] == pytest.approx(4 / 5 - 1 / 7)
    p_negation = fisher_exact([[4, 1], [1, 6]]).pvalue
    quantifiers = table.loc["Quantifiers"]   # items 0, 5, 6: ambiguous, ambiguous, easy
    p_quantifiers = fisher_exact([[2, 1], [3, 6]]).pvalue
    assert negation["p_ambiguous"] == pytest.approx(p_negation)
    assert quantifiers["p_ambiguous"] == pytest.approx(p_quantifiers)
    # Temporal: supported, on no item: no test, not in Holm's family
    assert table.loc["Temporal", "n_with"] == 0 and np.isnan(table.loc["Temporal", "p_ambiguous"])
    holm = multipletests([p_negation, p_quantifiers], method="holm")[1]
    np.testing.assert_allclose(table.loc[["Negation", "Quantifiers"], "p_ambiguous_holm"], holm)
    top = data_map.over_represented(result.table, ("xx", "rte", ""), 3)
    assert top["feature"].tolist() == ["Negation", "Quantifiers"]


def test_an_unavailable_annotator_is_a_note_not_a_crash():
    def broken(pairs, lang):
        raise UserError("no spaCy model for xx", fix="install one")

    result = feature_shares(items_map([AMBIGUOUS, EASY], [("a", "b"), ("c", "d")]), broken)
    assert result.table.empty and len(result.notes) == 1 and "no spaCy model" in result.notes[0]


def test_feature_shares_with_the_real_annotator(tmp_path, monkeypatch):
    pytest.importorskip("annotators.api")
    monkeypatch.setenv("NLI_STABILITY_CACHE", str(tmp_path / "cache"))
    from annotators.api import annotate, supported_features

    texts = [("The cat is not on the mat.", "The cat sleeps."), ("John did not leave the house.", "John left."),
             ("The sun rises in the east.", "The sun rises."), ("Mary bought three apples.", "Mary bought fruit."),
             ("Nobody came to the party.", "The party was empty."), ("The dog barked loudly.", "A dog made noise.")]
    regions = [AMBIGUOUS, AMBIGUOUS, EASY, EASY, HARD, OTHER]
    try:
        expected = annotate(texts, "en")
        supported = supported_features("en")
    except (ImportError, OSError, UserError) as err:
        pytest.skip(f"annotator unavailable: {err}")
    result = feature_shares(items_map(regions, texts, lang="en"), report_cli.annotate_pairs)
    table = result.table.set_index("feature")
    assert set(table.index) == set(supported)
    for feature in table.index:
        has = np.array([feature in found.features for found in expected])
        assert table.loc[feature, "n_with"] == has.sum()
    assert table.loc["Negation", "n_with"] >= 2


# (5) end to end
def write_runs(root: Path, dynamics: bool, seeds: int = 3, n_train: int = 60) -> Path:
    rng = np.random.default_rng(11)
    labels = rng.integers(0, 2, N_DIAGNOSTIC)
    train_labels = rng.integers(0, 2, n_train)
    for seed in range(seeds):
        run = write_run(root, "en", "rte", seed, labels, noisy_predictions(rng, labels, 0.7),
                        item_categories(N_DIAGNOSTIC))
        if dynamics:
            p_gold = np.clip(rng.uniform(0.0, 1.0, n_train)[None, :] + rng.normal(0, 0.15, (4, n_train)), 0, 1)
            prob = np.hstack([np.where(train_labels == 0, p_gold, 1 - p_gold), rng.random((4, 1 + N_DIAGNOSTIC))])
            prob[0, :5] = np.nan
            write_dynamics(run, items_table(train_labels), prob, predicted(prob))
    return root


def fake_report_annotate(pairs, lang):
    """Negation on every third training pair (the report annotates the diagnostic items too: none)."""
    def negation(premise: str) -> frozenset[str]:
        last = premise.split()[-1]
        return frozenset({"Negation"}) if last.isdigit() and int(last) % 3 == 0 else frozenset()
    return [FeatureSet(negation(premise), frozenset(), frozenset({"Negation", "Temporal"})) for premise, _ in pairs]


def test_report_without_dynamics_has_no_data_map(tmp_path):
    root = write_runs(tmp_path / "runs", dynamics=False)
    out = tmp_path / "report"
    main([f"runs={root}", "calibration_sims=0", f"out={out}", "bootstrap=0", "figures=false"])
    assert not list(out.glob("data_map*"))
    assert "## Data maps" not in (out / "report.md").read_text(encoding="utf-8")


def test_report_with_dynamics_writes_the_maps_and_the_figure(tmp_path, monkeypatch):
    monkeypatch.setattr(report_cli, "annotate_pairs", fake_report_annotate)
    root = write_runs(tmp_path / "runs", dynamics=True)
    out = tmp_path / "report"
    main([f"runs={root}", "calibration_sims=0", f"out={out}", "bootstrap=0"])
    text = (out / "report.md").read_text(encoding="utf-8")
    assert "## Data maps" in text and "![data_map_en_rte](data_map_en_rte.png)" in text
    assert (out / "data_map_en_rte.png").stat().st_size > 10_000
    table = pd.read_csv(out / "data_map.csv", keep_default_na=False, na_values=[""], dtype={"seed": str})
    assert list(table.columns) == data_map.MAP_COLUMNS
    assert len(table) == 4 * 60 and set(table["seed"]) == {"0", "1", "2", "mean"}
    seeds = table[table["seed"] != "mean"]
    mean = table[table["seed"] == "mean"].set_index("idx")
    np.testing.assert_allclose(seeds.groupby("idx")["confidence"].mean().reindex(mean.index), mean["confidence"])
    assert seeds["region"].isna().sum() == 0 and seeds["n_seen"].min() == 3
    regions = pd.read_csv(out / "data_map_regions.csv", keep_default_na=False, na_values=[""])
    assert list(regions.columns) == data_map.REGION_SUMMARY_COLUMNS and len(regions) == 1
    assert regions.loc[0, "n_seeds"] == 3 and regions.loc[0, "n_items"] == 60
    features = pd.read_csv(out / "data_map_features.csv", keep_default_na=False, na_values=[""])
    assert features["feature"].tolist() == [c for c in FINE_CATEGORIES if c in {"Negation", "Temporal"}]
    assert features.set_index("feature").loc["Negation", "n_with"] == 20   # premise numbers 0, 3, …, 57
