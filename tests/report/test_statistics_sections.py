"""The report's statistics sections on hand-made runs equal the statistics called directly on the
same numbers: multipletests for Holm and BH, deepsig for ε_min, statsmodels' power classes,
variance_table on the grid's MCCs, and the expected maximum worked out by hand."""
from __future__ import annotations

import json
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from report_runs import item_categories, mcc, noisy_predictions
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import TTestIndPower, TTestPower

from stability.core.identity import run_subdir
from stability.core.runrecord import Prediction, RunDir, RunRecord
from stability.core.taxonomy import COARSE_OF, FINE_CATEGORIES, TAXONOMY
from stability.plan import main as plan_main
from stability.report.bootstrap import TESTED_CATEGORIES, condition_deltas, language_deltas
from stability.report.cli import main
from stability.statistics import dominance
from stability.statistics.multiplicity import delta_table
from stability.statistics.variance import variance_table

pytestmark = pytest.mark.slow   # a module fixture trains or reports for tens of seconds

N_ITEMS = 120
BOOT = 200
ASO_ITERATIONS = 3   # deepsig's cost grows with them; the test compares ε_min with deepsig's at the same count
RNG = np.random.default_rng(11)
LABELS = RNG.integers(0, 2, N_ITEMS)
CATEGORIES = item_categories(N_ITEMS)
# de · rte has 4 runs whose validation accuracies, sorted, are 0.60, 0.65, 0.70, 0.75
DE_RTE_VALIDATION = [0.70, 0.60, 0.75, 0.65]
# fr · rte, seed 0: a 2 × 3 seed_init × seed_order grid; (0, 0) is the run of seed 0 itself
GRID = [(init, order) for init in (0, 1) for order in (0, 1, 2)]


def write(root: Path, lang: str, setup: str, seed: int, preds: np.ndarray, val_accuracy: float = 0.7,
          seed_init: int | None = None, seed_order: int | None = None, variant: str = "") -> None:
    """One run directory whose record is scored from its predictions (sklearn's MCC)."""
    run = RunDir(root / run_subdir(lang, setup, variant, seed))
    run.path.mkdir(parents=True)
    run.write_predictions(Prediction(str(i), int(label), int(pred), 0.5, tuple(cats))
                          for i, (label, pred, cats) in enumerate(zip(LABELS, preds, CATEGORIES)))
    fine = {name: np.array([name in cats for cats in CATEGORIES]) for name in FINE_CATEGORIES}
    coarse = {name: np.array([any(COARSE_OF[c] == name for c in cats) for cats in CATEGORIES]) for name in TAXONOMY}
    run.write_record(RunRecord(
        lang=lang, setup=setup, seed=seed, variant=variant, n_items=N_ITEMS, val_accuracy=val_accuracy,
        val_majority=0.5, seed_init=seed if seed_init is None else seed_init,
        seed_order=seed if seed_order is None else seed_order, overall_mcc=mcc(LABELS, preds),
        category_mcc={name: mcc(LABELS[m], preds[m]) for name, m in fine.items()},
        category_n={name: int(m.sum()) for name, m in fine.items()},
        coarse_mcc={name: mcc(LABELS[m], preds[m]) for name, m in coarse.items()},
        coarse_n={name: int(m.sum()) for name, m in coarse.items()}))


def write_runs(root: Path) -> Path:
    for lang in ("fr", "de"):
        for setup, accuracy in (("rte", 0.65), ("rte+mnli", 0.8)):
            seeds = range(4) if (lang, setup) == ("de", "rte") else range(3)
            for seed in seeds:
                validation = DE_RTE_VALIDATION[seed] if (lang, setup) == ("de", "rte") else 0.7
                write(root, lang, setup, seed, noisy_predictions(RNG, LABELS, accuracy), validation)
    for init, order in GRID[1:]:
        variant = "_".join(item for item in (f"init{init}" if init else "", f"order{order}" if order else "") if item)
        write(root, "fr", "rte", 0, noisy_predictions(RNG, LABELS, 0.65), seed_init=init, seed_order=order,
              variant=variant)
    return root


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    return write_runs(tmp_path_factory.mktemp("statistics") / "runs")


@pytest.fixture(scope="module")
def report(runs) -> Path:
    out = runs.parent / "report"
    main([f"runs={runs}", f"out={out}", f"bootstrap={BOOT}", "compare=[rte,rte+mnli]", "compare_langs=[fr,de]",
          "aso=true", f"aso_iterations={ASO_ITERATIONS}", "power_delta=0.2", "calibration_sims=0"])
    return out


def read(out: Path, name: str) -> pd.DataFrame:
    """A CSV of the report, its empty names read as "" and its empty numbers as NaN."""
    table = pd.read_csv(out / name, keep_default_na=False, na_values=[""])
    names = [column for column in ("variant", "family", "comparison", "lang", "setup") if column in table.columns]
    return table.fillna({column: "" for column in names})


def results(out: Path) -> pd.DataFrame:
    return read(out, "results.csv")


def test_holm_and_bh_equal_multipletests_over_every_cell_of_the_comparison(report, runs, holm_without_gc):
    tests = read(report, "delta_tests.csv")
    assert len(tests) == 2 * (33 + 4)            # fine and coarse categories per language, no overall
    assert set(tests["level"]) == {"fine", "coarse"}
    tested = tests.dropna(subset=["p_two_sided"])
    assert len(tested) == len(tests)             # every category has items here
    for column, method in (("p_holm", "holm"), ("p_bh", "fdr_bh")):
        np.testing.assert_allclose(tested[column], multipletests(tested["p_two_sided"], method=method)[1])
    text = (report / "report.md").read_text()
    assert "Holm and BH over the 2 × 37 cells of rte+mnli − rte" in text


def test_test_columns_are_the_paired_bootstrap_called_directly(report):
    from stability.report.collect import collect

    predictions = collect([report.parent / "runs"]).predictions
    direct = condition_deltas(predictions, "rte", "rte+mnli", BOOT, 0)
    tests = read(report, "delta_tests.csv").set_index(["lang", "category"])
    for lang, paired in direct.items():
        expected = delta_table(paired, TESTED_CATEGORIES, 0.95).set_index("category").drop(index="overall")
        mine = tests.loc[lang].loc[expected.index]
        for column in ("delta_mcc", "ci_low", "ci_high", "p_two_sided"):
            np.testing.assert_allclose(mine[column], expected[column], err_msg=column)
    # the same replicates as bootstrap_deltas.csv: equal intervals for the fine categories
    boot = read(report, "bootstrap_deltas.csv").set_index(["lang", "category"])
    fine = tests[tests["level"] == "fine"]
    np.testing.assert_allclose(boot.loc[fine.index, "ci_low"], fine["ci_low"])
    # all items shared: Δ is the difference of the seed means of deltas.csv
    deltas = read(report, "deltas.csv").set_index(["lang", "category"])
    np.testing.assert_allclose(deltas.loc[fine.index, "delta_mcc"], fine["delta_mcc"], atol=1e-12)


def test_languages_are_paired_over_items_per_condition(report, holm_without_gc):
    from stability.report.collect import collect

    predictions = collect([report.parent / "runs"]).predictions
    direct = language_deltas(predictions, "fr", "de", BOOT, 0)
    assert set(direct) == {("rte", ""), ("rte+mnli", "")}      # the grid's variants exist in fr only
    tests = read(report, "lang_tests.csv")
    assert len(tests) == 2 * 37
    for column, method in (("p_holm", "holm"), ("p_bh", "fdr_bh")):
        np.testing.assert_allclose(tests[column], multipletests(tests["p_two_sided"], method=method)[1])
    negation = tests[(tests["setup"] == "rte") & (tests["category"] == "Negation")].iloc[0]
    scores = results(report)
    mean = {lang: scores[(scores["lang"] == lang) & (scores["setup"] == "rte") & (scores["variant"] == "")
                         & (scores["category"] == "Negation")]["mcc"].mean() for lang in ("fr", "de")}
    # de has a fourth seed; Δ is the difference of the two languages' seed means on the shared items
    assert negation["delta_mcc"] == pytest.approx(mean["de"] - mean["fr"], abs=1e-12)
    expected = delta_table(direct[("rte", "")], TESTED_CATEGORIES, 0.95).set_index("category")
    assert negation["p_two_sided"] == pytest.approx(expected.loc["Negation", "p_two_sided"])
    assert "Holm and BH over the 2 × 37 cells of de − fr" in (report / "report.md").read_text()


def test_epsilon_min_equals_deepsig_aso(report):
    deepsig = pytest.importorskip("deepsig", reason="install the [stats] extra")
    tests = read(report, "delta_tests.csv")
    family = int(tests["eps_min_b_over_a"].notna().sum())
    assert family == 2 * 37
    scores = results(report)
    cell = tests[(tests["lang"] == "fr") & (tests["category"] == "Negation")].iloc[0]

    def seeds(setup: str) -> np.ndarray:
        return scores[(scores["lang"] == "fr") & (scores["setup"] == setup) & (scores["variant"] == "")
                      & (scores["category"] == "Negation")]["mcc"].to_numpy()

    expected = deepsig.aso(seeds("rte+mnli"), seeds("rte"), confidence_level=1 - 0.05 / family,
                           num_bootstrap_iterations=ASO_ITERATIONS, show_progress=False, seed=0)
    assert cell["eps_min_b_over_a"] == expected
    assert (cell["n_seeds_a"], cell["n_seeds_b"]) == (3, 3)
    assert "Bonferroni over them (each bound at level 1 − 0.05 / 74)" in (report / "report.md").read_text()


def test_report_without_deepsig_says_which_extra_adds_aso(runs, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "deepsig", None)
    out = tmp_path / "report"
    main([f"runs={runs}", "calibration_sims=0", f"out={out}", "bootstrap=20", "figures=false", "compare=[rte,rte+mnli]",
          "aso=true"])
    tests = read(out, "delta_tests.csv")
    assert "p_holm" in tests.columns and not any(column.startswith("eps_min") for column in tests.columns)
    lines = [line for line in (out / "report.md").read_text().splitlines() if "nli-stability[stats]" in line]
    assert len(lines) == 1 and dominance.MISSING_NOTE in lines[0]
    assert dominance.MISSING_NOTE in (out / "report.log").read_text()


def test_variance_sources_equal_variance_table_on_the_grid(report):
    sources = read(report, "variance_sources.csv")
    assert set(zip(sources["lang"], sources["setup"], sources["seed"])) == {("fr", "rte", 0)}   # seeds 1, 2 are no grid
    assert (sources["n_init"] == 2).all() and (sources["n_order"] == 3).all()
    assert (sources["method"] == "anova_ss_without_replication").all()
    scores = results(report)
    grid = scores[(scores["lang"] == "fr") & (scores["setup"] == "rte") & (scores["seed"] == 0)]
    assert set(grid["variant"]) == {"", "init1", "order1", "order2", "init1_order1", "init1_order2"}
    design = {"": (0, 0), "order1": (0, 1), "order2": (0, 2), "init1": (1, 0), "init1_order1": (1, 1),
              "init1_order2": (1, 2)}
    grid = grid.assign(seed_init=grid["variant"].map(lambda v: design[v][0]),
                       seed_order=grid["variant"].map(lambda v: design[v][1]))
    expected = variance_table(grid, ["level", "category"]).set_index("category")
    mine = sources.set_index("category")
    for column in ("ss_init", "ss_order", "ss_residual", "share_init", "share_order", "share_residual", "var_init"):
        np.testing.assert_allclose(mine[column], expected.loc[mine.index, column], atol=1e-12, err_msg=column)
    assert (report / "variance_sources.png").is_file()
    assert "## Where the variance comes from" in (report / "report.md").read_text()


def test_expected_max_is_the_closed_form_by_hand_for_four_runs(report):
    curves = read(report, "expected_max.csv")
    de = curves[(curves["lang"] == "de") & (curves["setup"] == "rte")].set_index("n")
    assert list(de.index) == [1, 2, 3, 4] and (de["n_runs"] == 4).all()
    # P(max of n draws is the i-th smallest of 4) = (i/4)^n − ((i−1)/4)^n
    weights = {1: (1, 1, 1, 1), 2: (1, 3, 5, 7), 3: (1, 7, 19, 37), 4: (1, 15, 65, 175)}
    accuracies = (Fraction("0.60"), Fraction("0.65"), Fraction("0.70"), Fraction("0.75"))
    scores = results(report)
    overall = scores[(scores["lang"] == "de") & (scores["setup"] == "rte") & (scores["level"] == "all")] \
        .set_index("seed")["mcc"]
    by_accuracy = [overall[DE_RTE_VALIDATION.index(float(v))] for v in accuracies]   # MCC of the run at each rank
    for n, w in weights.items():
        total = sum(w)
        assert de.loc[n, "expected_max_valid"] == pytest.approx(float(sum(a * k for a, k in zip(accuracies, w)) / total))
        assert de.loc[n, "expected_selected_overall_mcc"] == pytest.approx(
            sum(m * k for m, k in zip(by_accuracy, w)) / total)
    assert (report / "expected_max.png").is_file()


def test_seed_power_equals_statsmodels_power(report):
    power = read(report, "seed_power.csv")
    scores = results(report)
    row = power[(power["comparison"] == "") & (power["lang"] == "fr") & (power["setup"] == "rte")
                & (power["variant"] == "") & (power["category"] == "overall")].iloc[0]
    overall = scores[(scores["lang"] == "fr") & (scores["setup"] == "rte") & (scores["variant"] == "")
                     & (scores["level"] == "all")]["mcc"]
    sigma = overall.std(ddof=1)
    assert (row["design"], row["n_seeds"], row["target_delta"]) == ("independent", 3, 0.2)
    assert row["sigma"] == pytest.approx(sigma)
    effect = TTestIndPower().solve_power(None, nobs1=3, alpha=0.05, power=0.8)
    assert row["min_detectable_delta"] == pytest.approx(effect * sigma)
    needed = next(n for n in range(2, 10_000) if TTestIndPower().power(0.2 / sigma, nobs1=n, alpha=0.05) >= 0.8)
    assert row["seeds_needed"] == needed
    # paired: fr's runs of rte and rte+mnli with the same seed, σ of their differences
    paired = power[(power["comparison"] == "rte+mnli − rte") & (power["lang"] == "fr")
                   & (power["category"] == "overall")].iloc[0]
    other = scores[(scores["lang"] == "fr") & (scores["setup"] == "rte+mnli") & (scores["level"] == "all")]["mcc"]
    sigma_diff = np.std(other.to_numpy() - overall.to_numpy(), ddof=1)
    assert paired["design"] == "paired" and paired["n_seeds"] == 3
    assert paired["min_detectable_delta"] == pytest.approx(
        TTestPower().solve_power(None, nobs=3, alpha=0.05, power=0.8) * sigma_diff)
    languages = power[power["comparison"] == "de − fr"]
    assert set(zip(languages["setup"], languages["variant"])) == {("rte", ""), ("rte+mnli", "")}
    assert (languages["lang"] == "").all()


@pytest.mark.slow
def test_plan_prints_the_seeds_a_planned_sweep_needs(report, capsys):
    plan_main(["lang=fr", "seed=0..9", f"plan.power_from={report}", "plan.power_delta=0.2",
               "plan.json=true"])
    planned = json.loads(capsys.readouterr().out)["seed_power"]
    (row,) = planned
    assert (row["lang"], row["setup"], row["variant"], row["n_seeds"]) == ("fr", "rte", "", 10)
    sigma = read(report, "seed_power.csv").query(
        "lang == 'fr' and setup == 'rte' and category == 'overall' and design == 'independent'")["sigma"]
    assert row["overall_mde"] == pytest.approx(TTestIndPower().solve_power(None, nobs1=10, alpha=0.05, power=0.8)
                                               * sigma.iloc[0])
    plan_main(["lang=fr,sv", "seed=0..9", f"plan.power_from={report}"])
    text = capsys.readouterr().out
    assert "independent  fr · rte" in text and "no σ in" in text and "sv · rte" in text


def test_without_aso_the_tests_say_how_to_add_it(runs, tmp_path):
    out = tmp_path / "report"
    main([f"runs={runs}", "calibration_sims=0", f"out={out}", "bootstrap=20", "figures=false", "compare_langs=[fr,de]"])
    assert not any(column.startswith("eps_min") for column in read(out, "lang_tests.csv").columns)
    assert "Almost stochastic order (ε_min) is off: `aso=true` adds it" in (out / "report.md").read_text()
    assert not (out / "delta_tests.csv").exists()          # no compare: no setup tests


@pytest.mark.parametrize(("option", "fragments"), [
    ("compare_langs=[fr,sv]", ("compare_langs: no runs of 'sv'", "choose among de, fr")),
    ("compare_langs=[fr,fr]", ("compare_langs names fr twice",)),
    ("compare_langs=[fr]", ("compare_langs needs exactly 2 entries",)),
    ("power_delta=0", ("power_delta=0",)),
])
def test_wrong_options_are_one_line(runs, tmp_path, capsys, option, fragments):
    with pytest.raises(SystemExit) as stop:
        main([f"runs={runs}", f"out={tmp_path / 'report'}", option])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and len(err.strip().splitlines()) == 1
    assert all(fragment in err for fragment in fragments), err
    assert not (tmp_path / "report").exists()


def test_plan_without_a_report_is_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        plan_main(["lang=fr", f"plan.power_from={tmp_path}"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "seed_power.csv" in err and len(err.strip().splitlines()) == 1
