"""`## Which method stabilises what` on hand-made runs of three stabilisation methods: every number of
stabilizers.csv equals the library called directly on the same seed MCCs (scipy's levene with
center="median", ttest_ind(equal_var=False) and bootstrap, statsmodels' proportion_confint and
multipletests, numpy's std), the reference option picks the reference, and without it the section
is absent (nothing to compare) or one note (tests/report/test_stabilizers_note.py)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from stability.core.identity import run_subdir
from stability.core.runrecord import RunDir, RunRecord
from stability.core.taxonomy import COARSE_CATEGORIES, COARSE_OF, FINE_CATEGORIES
from stability.report.calibration import SIGMA_CAP
from stability.report.cli import main
from stability.report.sections import SECTIONS, comparison_tests, language_tests, stabilizers
from stability.report.stabilizers import is_reference, pick_reference
from stability.statistics.intervals import std_interval_of, std_ratio_interval_of
from stability.statistics.spread import std_interval, std_ratio_interval

REFERENCE = "trainer-jiant-superglue"
METHODS = (REFERENCE, "trainer-mosbach", "trainer-llrd")
SEEDS = 6
BOOT = 200
SIMS = 300   # calibration's simulated studies per world
FAILED = {("fr", REFERENCE, 0), ("fr", REFERENCE, 3), ("sv", "trainer-llrd", 5)}   # validation at the majority share
# σ of the seeds' MCC per (lang, method, coarse category); a failed run scores 0.0 everywhere
SPREAD = {("fr", REFERENCE): 0.15, ("fr", "trainer-mosbach"): 0.01, ("fr", "trainer-llrd"): 0.08,
          ("sv", REFERENCE): 0.12, ("sv", "trainer-mosbach"): 0.10, ("sv", "trainer-llrd"): 0.02}
TEST_COLUMNS = ["p_variance", "p_variance_holm", "p_mean", "p_mean_holm"]
RATIO_COLUMNS = ["std_ratio", "std_ratio_low", "std_ratio_high"]


def write_runs(root: Path, methods: tuple[str, ...] = METHODS, langs: tuple[str, ...] = ("fr", "sv"),
               seed: int = 0) -> Path:
    """Run records (no predictions) of `methods` × `langs` on rte, SEEDS seeds each."""
    rng = np.random.default_rng(seed)
    for lang in langs:
        for number, method in enumerate(methods):
            sigma = SPREAD.get((lang, method), 0.1)
            for run_seed in range(SEEDS):
                failed = (lang, method, run_seed) in FAILED

                def score(centre: float) -> float:
                    return 0.0 if failed else float(np.clip(centre + rng.normal(0, sigma), -1, 1))

                fine = {name: score(0.2 + 0.02 * number + 0.005 * i) for i, name in enumerate(FINE_CATEGORIES)}
                if (lang, method) == ("sv", "trainer-mosbach"):   # steady in fr, not on Logic in sv
                    fine.update({name: score(0.3) + rng.normal(0, 0.2) for name in FINE_CATEGORIES
                                 if COARSE_OF[name] == "Logic"})
                coarse = {name: float(np.mean([v for c, v in fine.items() if COARSE_OF[c] == name]))
                          for name in COARSE_CATEGORIES}
                run = RunDir(root / run_subdir(lang, "rte", method, run_seed))
                run.path.mkdir(parents=True)
                run.write_record(RunRecord(
                    lang=lang, setup="rte", seed=run_seed, variant=method, n_items=100,
                    val_accuracy=0.5 if failed else 0.7, val_majority=0.5, overall_mcc=score(0.35 + 0.03 * number),
                    category_mcc=fine, category_n={name: 6 for name in FINE_CATEGORIES}, coarse_mcc=coarse,
                    coarse_n={name: 30 for name in COARSE_CATEGORIES}))
    return root


pytestmark = pytest.mark.slow   # the module's report fixture reports for seconds


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    root = write_runs(tmp_path_factory.mktemp("stabilizers") / "runs")
    out = root.parent / "report"
    main([f"runs={root}", f"out={out}", f"bootstrap={BOOT}", "random_state=3", f"calibration_sims={SIMS}"])
    return out


def read(out: Path, name: str) -> pd.DataFrame:
    table = pd.read_csv(out / name, keep_default_na=False, na_values=[""])
    return table.fillna({column: "" for column in ("variant", "method", "reference") if column in table.columns})


def seeds(out: Path, lang: str, method: str, category: str) -> np.ndarray:
    results = read(out, "results.csv")
    rows = results[(results["lang"] == lang) & (results["variant"] == method) & (results["category"] == category)]
    return rows.sort_values("seed")["mcc"].to_numpy(float)


def test_columns_rows_and_the_reference_rows(report):
    table = read(report, "stabilizers.csv")
    assert list(table.columns) == ["lang", "setup", "method", "reference", "category", "level", "n_seeds", "n_runs",
                                   "failed", "failed_rate", "failed_low", "failed_high", "mean_mcc", "std_mcc",
                                   "std_low", "std_high", "std_method", "std_coverage", "std_ratio", "std_ratio_low",
                                   "std_ratio_high", "std_ratio_method", "std_ratio_coverage", "p_variance",
                                   "p_variance_holm", "p_mean", "p_mean_holm"]
    assert len(table) == 2 * 3 * (1 + 4 + 33)
    assert (table["reference"] == REFERENCE).all()
    fr = table[table["lang"] == "fr"]
    assert list(fr["method"].drop_duplicates()) == [REFERENCE, "trainer-llrd", "trainer-mosbach"]   # reference first
    assert list(fr["category"][:5]) == ["overall", *COARSE_CATEGORIES]
    assert list(fr["level"][:6]) == ["all", "coarse", "coarse", "coarse", "coarse", "fine"]
    own = table[table["method"] == REFERENCE]
    assert own[TEST_COLUMNS + RATIO_COLUMNS].isna().all().all()
    compared = table[table["method"] != REFERENCE]
    assert compared[TEST_COLUMNS + ["std_ratio"]].notna().all().all()
    usable = compared["std_ratio_method"] != "too few seeds"   # no bounds where no method reaches 90 %
    assert compared.loc[usable, RATIO_COLUMNS].notna().all().all()
    assert compared.loc[~usable, ["std_ratio_low", "std_ratio_high"]].isna().all().all()
    assert (table["n_seeds"] == SEEDS).all()   # failed runs kept: exclude_failed=false


def test_the_columns_are_the_documented_ones(report):
    from test_cli import _documented_columns   # docs/reading-the-report.md's columns, as that test reads them
    header = list(pd.read_csv(report / "stabilizers.csv", nrows=0).columns)
    assert header == _documented_columns()["stabilizers.csv"]


def test_sigma_mean_and_their_interval_by_the_chosen_method(report):
    table = read(report, "stabilizers.csv")
    calibration = read(report, "calibration.csv")
    assert set(table["std_method"]) <= {"chi2", "bonett", "percentile", "too few seeds"}
    for row in table.itertuples():
        values = seeds(report, row.lang, row.method, row.category)
        assert row.std_mcc == pytest.approx(np.std(values, ddof=1), abs=1e-12)
        assert row.mean_mcc == pytest.approx(values.mean(), abs=1e-12)
        if row.std_method == "too few seeds":
            assert np.isnan(row.std_low) and row.std_coverage < 0.90
            continue
        expected = (std_interval_of(values, row.std_method, 0.95) if row.std_method != "percentile"
                    else std_interval(values, BOOT, 0.95, 3))
        assert (row.std_low, row.std_high) == pytest.approx(np.minimum(expected, SIGMA_CAP), abs=1e-12)
        # the stated coverage is the method's worst over the deciding worlds in calibration.csv
        measured = calibration[(calibration["lang"] == row.lang) & (calibration["condition"] == f"rte/{row.method}")
                               & (calibration["category"] == row.category) & (calibration["statistic"] == "σ")
                               & (calibration["method"] == row.std_method)
                               & calibration["world"].isin(["normal", "heavy", "failed"])]["measured"]
        assert row.std_coverage == pytest.approx(measured.min()) and row.std_coverage >= 0.90
    # sv · llrd has a failed run among 6 seeds: no σ interval reaches 90 % there
    overall = table[(table["category"] == "overall")].set_index(["lang", "method"])
    assert overall.loc[("sv", "trainer-llrd"), "std_method"] == "too few seeds"
    assert overall.loc[("sv", "trainer-mosbach"), "std_method"] == "bonett"   # 6 seeds, none failed


def test_sigma_ratio_and_its_interval_by_the_chosen_method(report):
    table = read(report, "stabilizers.csv")
    compared = table[table["method"] != table["reference"]]
    for row in compared.itertuples():
        method, reference = (seeds(report, row.lang, name, row.category) for name in (row.method, REFERENCE))
        assert row.std_ratio == pytest.approx(np.std(method, ddof=1) / np.std(reference, ddof=1), abs=1e-12)
        reference_std = table[(table["lang"] == row.lang) & (table["method"] == REFERENCE)
                              & (table["category"] == row.category)]["std_mcc"].iloc[0]
        assert row.std_ratio == pytest.approx(row.std_mcc / reference_std, abs=1e-12)
        if row.std_ratio_method == "too few seeds":
            continue
        expected = (std_ratio_interval_of(method, reference, row.std_ratio_method, 0.95)
                    if row.std_ratio_method != "percentile" else std_ratio_interval(method, reference, BOOT, 0.95, 3))
        assert (row.std_ratio_low, row.std_ratio_high) == pytest.approx(expected, abs=1e-12)
        assert row.std_ratio_low <= row.std_ratio <= row.std_ratio_high
    overall = compared[compared["category"] == "overall"].set_index(["lang", "method"])
    # sv: no failed run on either side; 6 seeds: Bonett's ratio interval, near nominal
    assert overall.loc[("sv", "trainer-mosbach"), "std_ratio_method"] == "bonett"
    assert overall.loc[("sv", "trainer-mosbach"), "std_ratio_coverage"] >= 0.90
    # fr: the reference has 2 failed runs of 6, and the failed world decides: a lower measured coverage
    assert overall.loc[("fr", "trainer-mosbach"), "std_ratio_coverage"] < overall.loc[("sv", "trainer-mosbach"),
                                                                                       "std_ratio_coverage"]


def test_the_ratio_column_in_report_md(report):
    text = (report / "report.md").read_text()
    section = text[text.index("## Which method stabilises what"):]
    assert "| σ / σ ref [95% CI" in section
    fr_table = section[section.index("**fr · rte**"):section.index("**sv · rte**")]
    sv_table = section[section.index("**sv · rte**"):]
    rows = {line.split(" | ")[0].lstrip("| "): line for line in sv_table.splitlines() if line.startswith("| trainer")}
    table = read(report, "stabilizers.csv")
    overall = table[table["category"] == "overall"].set_index(["lang", "method"])
    row = overall.loc[("sv", "trainer-mosbach")]
    assert f" | {row.std_ratio:.2f} [{row.std_ratio_low:.2f}, {row.std_ratio_high:.2f}] | " in rows["trainer-mosbach"]
    fr_mosbach = next(line for line in fr_table.splitlines() if line.startswith("| trainer-mosbach"))
    fr = overall.loc[("fr", "trainer-mosbach")]
    printed = (f" | {fr.std_ratio:.2f}; too few seeds (measured coverage {100 * fr.std_ratio_coverage:.0f} %) | "
               if fr.std_ratio_method == "too few seeds"
               else f" | {fr.std_ratio:.2f} [{fr.std_ratio_low:.2f}, {fr.std_ratio_high:.2f}]")
    assert printed in fr_mosbach
    assert f"| {REFERENCE} (reference) | 6 | 2 of 6 |" in section
    reference_row = next(line for line in fr_table.splitlines() if line.startswith(f"| {REFERENCE}"))
    assert reference_row.split(" | ")[5] == "–"


def test_tests_equal_levene_welch_and_holm_over_every_compared_cell(report, holm_without_gc):
    table = read(report, "stabilizers.csv")
    compared = table[table["method"] != table["reference"]]
    for row in compared.itertuples():
        method, reference = (seeds(report, row.lang, name, row.category) for name in (row.method, REFERENCE))
        assert row.p_variance == pytest.approx(stats.levene(method, reference, center="median").pvalue, abs=1e-12)
        assert row.p_mean == pytest.approx(stats.ttest_ind(method, reference, equal_var=False).pvalue, abs=1e-12)
    assert len(compared) == 2 * 2 * 38
    for column in ("p_variance", "p_mean"):
        expected = multipletests(compared[column].to_numpy(), method="holm")[1]
        np.testing.assert_allclose(compared[f"{column}_holm"].to_numpy(), expected, atol=1e-12)


def test_failed_rate_is_every_run_with_the_wilson_interval(report):
    table = read(report, "stabilizers.csv")
    first = table.drop_duplicates(["lang", "method"]).set_index(["lang", "method"])
    for lang in ("fr", "sv"):
        for method in METHODS:
            row = first.loc[(lang, method)]
            failed = sum((lang, method, seed) in FAILED for seed in range(SEEDS))
            low, high = proportion_confint(failed, SEEDS, alpha=0.05, method="wilson")
            assert (row["failed"], row["n_runs"], row["failed_rate"]) == (failed, SEEDS, pytest.approx(failed / SEEDS))
            assert (row["failed_low"], row["failed_high"]) == pytest.approx((low, high), abs=1e-12)


def test_report_md_and_the_figure(report):
    text = (report / "report.md").read_text()
    section = text[text.index("## Which method stabilises what"):]
    assert "**fr · rte**" in section and "**sv · rte**" in section
    assert f"| {REFERENCE} (reference) | 6 | 2 of 6 |" in section
    assert "Holm over all 152 compared cells" in section
    fr_table = section[section.index("**fr · rte**"):section.index("**sv · rte**")]
    mosbach = next(line for line in fr_table.splitlines() if line.startswith("| trainer-mosbach"))
    table = read(report, "stabilizers.csv")
    fr = table[table["lang"] == "fr"]
    reference = fr[fr["method"] == REFERENCE].set_index("category")["std_mcc"]
    differs = fr[(fr["method"] == "trainer-mosbach") & (fr["p_variance_holm"] < 0.05)]
    assert len(differs) > 0
    named = [f"{r.category} {'↓' if r.std_mcc < reference[r.category] else '↑'}" for r in differs.itertuples()]
    assert mosbach.endswith(" | " + ", ".join(named[:8]) + (f", … {len(named) - 8} more" if len(named) > 8 else "") + " |")
    assert (report / "stabilizers_rte.png").is_file()
    assert "![stabilizers_rte](stabilizers_rte.png)" in section


def test_section_follows_the_comparison_tests():
    order = [section.__module__ for section in SECTIONS]
    assert order.index(stabilizers.build.__module__) > order.index(comparison_tests.build.__module__)
    assert order.index(stabilizers.build.__module__) > order.index(language_tests.build.__module__)


def test_a_variant_carrying_the_reference_as_an_item_is_the_reference(tmp_path):
    methods = ("model-x_trainer-jiant-superglue", "model-x_trainer-mosbach")
    root = write_runs(tmp_path / "runs", methods, ("fr",))
    out = tmp_path / "report"
    main([f"runs={root}", f"out={out}", "bootstrap=20", "figures=false", "calibration_sims=0"])
    table = read(out, "stabilizers.csv")
    assert set(table["reference"]) == {"model-x_trainer-jiant-superglue"}
    assert table.loc[table["method"] == "model-x_trainer-mosbach", "p_variance"].notna().all()
    # another item as the reference: mosbach is compared against, jiant-superglue is the method
    main([f"runs={root}", f"out={tmp_path / 'other'}", "bootstrap=20", "figures=false", "calibration_sims=0",
          "reference=trainer-mosbach"])
    other = read(tmp_path / "other", "stabilizers.csv")
    assert set(other["reference"]) == {"model-x_trainer-mosbach"}
    assert other["method"].iloc[0] == "model-x_trainer-mosbach"


def test_reference_matching_rules():
    assert is_reference("trainer-mosbach", "trainer-mosbach")
    assert is_reference("model-x_trainer-mosbach", "trainer-mosbach")
    assert not is_reference("trainer-mosbach-v2", "trainer-mosbach")
    assert is_reference("", "") and not is_reference("lr3e-05", "")
    assert pick_reference(["a_trainer-x_init1", "trainer-x_b"], "trainer-x") == "trainer-x_b"
    assert pick_reference(["trainer-x_b", "trainer-x"], "trainer-x") == "trainer-x"
    assert pick_reference(["lr3e-05", ""], "trainer-x") is None


def test_with_one_variant_per_setup_the_section_is_absent(tmp_path):
    root = write_runs(tmp_path / "runs", ("lr3e-05",), ("fr", "sv"))
    out = tmp_path / "report"
    main([f"runs={root}", f"out={out}", "bootstrap=0", "figures=false", "calibration_sims=0"])
    assert not (out / "stabilizers.csv").exists()
    assert "Which method stabilises what" not in (out / "report.md").read_text()


def test_a_reference_that_names_no_variant_is_a_note_naming_the_variants(tmp_path):
    root = write_runs(tmp_path / "runs", ("trainer-mosbach", "trainer-llrd"), ("fr",))
    out = tmp_path / "report"
    main([f"runs={root}", f"out={out}", "bootstrap=0", "figures=false", "calibration_sims=0",
          "reference=trainer-mosbch"])
    assert not (out / "stabilizers.csv").exists()
    text = (out / "report.md").read_text()
    section = text[text.index("## Which method stabilises what"):]
    assert "`reference=trainer-mosbch` matches no variant" in section
    assert "fr · rte: `trainer-llrd`, `trainer-mosbach`" in section
    assert "`reference=trainer-llrd`" in section


def test_exclude_failed_leaves_failed_runs_out_of_sigma_not_out_of_the_rate(tmp_path):
    root = write_runs(tmp_path / "runs", METHODS[:2], ("fr",))
    out = tmp_path / "report"
    main([f"runs={root}", f"out={out}", "bootstrap=0", "figures=false", "exclude_failed=true",
          f"calibration_sims={SIMS}"])
    table = read(out, "stabilizers.csv")
    reference = table[(table["method"] == REFERENCE) & (table["category"] == "overall")].iloc[0]
    assert (reference["n_seeds"], reference["failed"], reference["n_runs"]) == (SEEDS - 2, 2, SEEDS)
    kept = seeds(out, "fr", REFERENCE, "overall")[[1, 2, 4, 5]]   # results.csv keeps every run
    assert reference["std_mcc"] == pytest.approx(np.std(kept, ddof=1), abs=1e-12)
    # the 4 kept runs: χ² (Bonett needs 5 seeds; χ² measures about 90 % in the heavy world at 4 seeds, so it is
    # printed or, just below, "too few seeds"), computed without bootstrap resamples (bootstrap=0)
    assert reference["std_method"] in ("chi2", "too few seeds")
    if reference["std_method"] == "chi2":
        assert (reference["std_low"], reference["std_high"]) == pytest.approx(std_interval_of(kept, "chi2", 0.95))
    method = table[(table["method"] == "trainer-mosbach") & (table["category"] == "overall")].iloc[0]
    assert method["std_ratio"] == pytest.approx(method["std_mcc"] / reference["std_mcc"], abs=1e-12)
    assert method["std_ratio_method"] in ("F", "too few seeds")   # 6 vs 4 seeds: Bonett's needs 5 a side


def test_tidy_csv_input_aso_and_no_failed_verdicts(tmp_path):
    deepsig = pytest.importorskip("deepsig", reason="install the [stats] extra")
    rng = np.random.default_rng(5)
    rows = [("fr", "rte", method, seed, "all", "overall", 0.4 + rng.normal(0, spread))
            for method, spread in ((REFERENCE, 0.2), ("trainer-mosbach", 0.02)) for seed in range(5)]
    csv = tmp_path / "scores.csv"
    pd.DataFrame(rows, columns=["lang", "setup", "variant", "seed", "level", "category", "mcc"]).to_csv(csv, index=False)
    out = tmp_path / "report"
    main([f"runs={csv}", f"out={out}", "bootstrap=50", "figures=false", "aso=true", "aso_iterations=20",
          "calibration_sims=0"])
    table = read(out, "stabilizers.csv")
    assert table[["failed", "n_runs", "failed_rate", "failed_low", "failed_high"]].isna().all().all()
    row = table[table["method"] == "trainer-mosbach"].iloc[0]
    method, reference = (np.array([r[6] for r in rows if r[2] == name]) for name in ("trainer-mosbach", REFERENCE))
    expected = deepsig.aso(method, reference, confidence_level=0.95, num_bootstrap_iterations=20,
                           show_progress=False, seed=0)
    assert row["eps_min"] == pytest.approx(expected)
    assert np.isnan(table[table["method"] == REFERENCE]["eps_min"]).all()
    assert "Bonferroni over them (each bound at level 1 − 0.05 / 1)" in (out / "report.md").read_text()


def test_a_method_whose_every_run_failed_is_not_called_steadier(tmp_path, monkeypatch):
    """Constant predictions give σ = 0, which Brown–Forsythe finds smaller than the reference's:
    the test stays in stabilizers.csv, but report.md says every run failed instead of ↓."""
    monkeypatch.setattr(sys.modules[__name__], "FAILED", {("fr", "trainer-mosbach", seed) for seed in range(SEEDS)})
    root = write_runs(tmp_path / "runs", methods=(REFERENCE, "trainer-mosbach"), langs=("fr",))
    # at confidence 0.5 the smaller σ passes Holm, so without the rule the row would say "overall ↓"
    main([f"runs={root}", f"out={tmp_path / 'report'}", "bootstrap=0", "figures=false", "calibration_sims=0",
          "confidence=0.5"])
    table = pd.read_csv(tmp_path / "report" / "stabilizers.csv")
    overall = table[(table["method"] == "trainer-mosbach") & (table["category"] == "overall")].iloc[0]
    assert overall["std_mcc"] == 0 and overall["failed"] == SEEDS and overall["p_variance_holm"] < 0.5
    row = next(line for line in (tmp_path / "report" / "report.md").read_text(encoding="utf-8").splitlines()
               if line.startswith("| trainer-mosbach"))
    assert "every run failed" in row and "↓" not in row
    assert row.split(" | ")[5] == "–"   # nor a σ ratio of 0 (stabilizers.csv keeps it)
    assert overall["std_ratio"] == 0
