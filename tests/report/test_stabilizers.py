"""`## Which method stabilises what` on hand-made runs of three stabilisation methods: every number of
stabilizers.csv equals the library called directly on the same seed MCCs (scipy's levene with
center="median", ttest_ind(equal_var=False) and bootstrap, statsmodels' proportion_confint and
multipletests, numpy's std), the reference option picks the reference, and without it the section
is absent or, for a `reference=` that names no variant, one note."""
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
from stability.report.cli import main
from stability.report.sections import SECTIONS, comparison_tests, language_tests, stabilizers
from stability.report.stabilizers import is_reference, pick_reference

REFERENCE = "trainer-jiant-superglue"
METHODS = (REFERENCE, "trainer-mosbach", "trainer-llrd")
SEEDS = 6
BOOT = 200
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
    main([f"runs={root}", f"out={out}", f"bootstrap={BOOT}", "random_state=3"])
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
                                   "std_low", "std_high", "std_ratio", "std_ratio_low", "std_ratio_high",
                                   "p_variance", "p_variance_holm", "p_mean", "p_mean_holm"]
    assert len(table) == 2 * 3 * (1 + 4 + 33)
    assert (table["reference"] == REFERENCE).all()
    fr = table[table["lang"] == "fr"]
    assert list(fr["method"].drop_duplicates()) == [REFERENCE, "trainer-llrd", "trainer-mosbach"]   # reference first
    assert list(fr["category"][:5]) == ["overall", *COARSE_CATEGORIES]
    assert list(fr["level"][:6]) == ["all", "coarse", "coarse", "coarse", "coarse", "fine"]
    own = table[table["method"] == REFERENCE]
    assert own[TEST_COLUMNS + RATIO_COLUMNS].isna().all().all()
    assert table.loc[table["method"] != REFERENCE, TEST_COLUMNS + RATIO_COLUMNS].notna().all().all()
    assert (table["n_seeds"] == SEEDS).all()   # failed runs kept: exclude_failed=false


def test_the_columns_are_the_documented_ones(report):
    from test_cli import _documented_columns   # docs/reading-the-report.md's columns, as that test reads them
    header = list(pd.read_csv(report / "stabilizers.csv", nrows=0).columns)
    assert header == _documented_columns()["stabilizers.csv"]


def test_sigma_mean_and_their_interval_equal_numpy_and_scipy_bootstrap(report):
    table = read(report, "stabilizers.csv")
    for row in table.itertuples():
        values = seeds(report, row.lang, row.method, row.category)
        assert row.std_mcc == pytest.approx(np.std(values, ddof=1), abs=1e-12)
        assert row.mean_mcc == pytest.approx(values.mean(), abs=1e-12)
        assert row.std_low <= row.std_mcc <= row.std_high
    row = table[(table["lang"] == "sv") & (table["method"] == "trainer-llrd") & (table["category"] == "Logic")].iloc[0]
    values = seeds(report, "sv", "trainer-llrd", "Logic")
    interval = stats.bootstrap((values,), lambda v, axis: np.std(v, ddof=1, axis=axis), n_resamples=BOOT,
                               confidence_level=0.95, method="percentile", vectorized=True,
                               random_state=3).confidence_interval
    assert (row.std_low, row.std_high) == pytest.approx((interval.low, interval.high), abs=1e-12)


def _ratio(a, b, axis):
    with np.errstate(divide="ignore", invalid="ignore"):   # a resample repeating one reference seed: σ 0, ratio ∞
        return np.std(a, ddof=1, axis=axis) / np.std(b, ddof=1, axis=axis)


def test_sigma_ratio_and_its_interval_equal_numpy_and_scipy_bootstrap(report):
    table = read(report, "stabilizers.csv")
    compared = table[table["method"] != table["reference"]]
    for row in compared.itertuples():
        method, reference = (seeds(report, row.lang, name, row.category) for name in (row.method, REFERENCE))
        assert row.std_ratio == pytest.approx(np.std(method, ddof=1) / np.std(reference, ddof=1), abs=1e-12)
        reference_std = table[(table["lang"] == row.lang) & (table["method"] == REFERENCE)
                              & (table["category"] == row.category)]["std_mcc"].iloc[0]
        assert row.std_ratio == pytest.approx(row.std_mcc / reference_std, abs=1e-12)
        assert row.std_ratio_low <= row.std_ratio <= row.std_ratio_high
    # with the table's bootstrap count, confidence and seed, scipy's interval over the two independent samples
    for lang, method, category in (("sv", "trainer-llrd", "Logic"), ("fr", "trainer-mosbach", "overall")):
        row = compared[(compared["lang"] == lang) & (compared["method"] == method)
                       & (compared["category"] == category)].iloc[0]
        values, reference = (seeds(report, lang, name, category) for name in (method, REFERENCE))
        with np.errstate(invalid="ignore"):   # scipy's standard error of resampled ratios with an ∞
            interval = stats.bootstrap((values, reference), _ratio, paired=False, n_resamples=BOOT,
                                       confidence_level=0.95, method="percentile", vectorized=True,
                                       random_state=3).confidence_interval
        assert (row.std_ratio_low, row.std_ratio_high) == pytest.approx((interval.low, interval.high), abs=1e-12)
    # fr: mosbach's seeds were drawn with σ 0.01 against the reference's 0.15 (two failed runs at 0 widen it more)
    overall = compared[(compared["lang"] == "fr") & (compared["method"] == "trainer-mosbach")
                       & (compared["category"] == "overall")].iloc[0]
    assert overall.std_ratio_high < 1


def test_the_ratio_column_in_report_md(report):
    text = (report / "report.md").read_text()
    section = text[text.index("## Which method stabilises what"):]
    assert "| σ / σ ref [95% CI] |" in section
    fr_table = section[section.index("**fr · rte**"):section.index("**sv · rte**")]
    rows = {line.split(" | ")[0].lstrip("| "): line for line in fr_table.splitlines() if line.startswith("| trainer")}
    table = read(report, "stabilizers.csv")
    row = table[(table["lang"] == "fr") & (table["method"] == "trainer-mosbach") & (table["category"] == "overall")]
    row = row.iloc[0]
    assert f" | {row.std_ratio:.2f} [{row.std_ratio_low:.2f}, {row.std_ratio_high:.2f}] | " in rows["trainer-mosbach"]
    assert f"| {REFERENCE} (reference) | 6 | 2 of 6 |" in section
    reference_row = next(line for line in fr_table.splitlines() if line.startswith(f"| {REFERENCE}"))
    assert reference_row.split(" | ")[5] == "–"


def test_tests_equal_levene_welch_and_holm_over_every_compared_cell(report):
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
    main([f"runs={root}", f"out={out}", "bootstrap=20", "figures=false"])
    table = read(out, "stabilizers.csv")
    assert set(table["reference"]) == {"model-x_trainer-jiant-superglue"}
    assert table.loc[table["method"] == "model-x_trainer-mosbach", "p_variance"].notna().all()
    # another item as the reference: mosbach is compared against, jiant-superglue is the method
    main([f"runs={root}", f"out={tmp_path / 'other'}", "bootstrap=20", "figures=false", "reference=trainer-mosbach"])
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


def test_without_the_reference_the_section_is_absent(tmp_path):
    root = write_runs(tmp_path / "runs", ("", "lr3e-05"), ("fr",))
    out = tmp_path / "report"
    main([f"runs={root}", f"out={out}", "bootstrap=0", "figures=false"])
    assert not (out / "stabilizers.csv").exists()
    assert "Which method stabilises what" not in (out / "report.md").read_text()


def test_a_reference_that_names_no_variant_is_a_note_naming_the_variants(tmp_path):
    root = write_runs(tmp_path / "runs", ("trainer-mosbach", "trainer-llrd"), ("fr",))
    out = tmp_path / "report"
    main([f"runs={root}", f"out={out}", "bootstrap=0", "figures=false", "reference=trainer-mosbch"])
    assert not (out / "stabilizers.csv").exists()
    text = (out / "report.md").read_text()
    section = text[text.index("## Which method stabilises what"):]
    assert "`reference=trainer-mosbch` matches no variant" in section
    assert "fr · rte: `trainer-llrd`, `trainer-mosbach`" in section
    assert "`reference=trainer-llrd`" in section


def test_exclude_failed_leaves_failed_runs_out_of_sigma_not_out_of_the_rate(tmp_path):
    root = write_runs(tmp_path / "runs", METHODS[:2], ("fr",))
    out = tmp_path / "report"
    main([f"runs={root}", f"out={out}", "bootstrap=0", "figures=false", "exclude_failed=true"])
    table = read(out, "stabilizers.csv")
    reference = table[(table["method"] == REFERENCE) & (table["category"] == "overall")].iloc[0]
    assert (reference["n_seeds"], reference["failed"], reference["n_runs"]) == (SEEDS - 2, 2, SEEDS)
    kept = seeds(out, "fr", REFERENCE, "overall")[[1, 2, 4, 5]]   # results.csv keeps every run
    assert reference["std_mcc"] == pytest.approx(np.std(kept, ddof=1), abs=1e-12)
    assert np.isnan(reference["std_low"])   # bootstrap=0: no interval
    method = table[(table["method"] == "trainer-mosbach") & (table["category"] == "overall")].iloc[0]
    assert method["std_ratio"] == pytest.approx(method["std_mcc"] / reference["std_mcc"], abs=1e-12)
    assert np.isnan(method["std_ratio_low"]) and np.isnan(method["std_ratio_high"])   # nor for the ratio


def test_tidy_csv_input_aso_and_no_failed_verdicts(tmp_path):
    deepsig = pytest.importorskip("deepsig", reason="install the [stats] extra")
    rng = np.random.default_rng(5)
    rows = [("fr", "rte", method, seed, "all", "overall", 0.4 + rng.normal(0, spread))
            for method, spread in ((REFERENCE, 0.2), ("trainer-mosbach", 0.02)) for seed in range(5)]
    csv = tmp_path / "scores.csv"
    pd.DataFrame(rows, columns=["lang", "setup", "variant", "seed", "level", "category", "mcc"]).to_csv(csv, index=False)
    out = tmp_path / "report"
    main([f"runs={csv}", f"out={out}", "bootstrap=50", "figures=false", "aso=true", "aso_iterations=20"])
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
    main([f"runs={root}", f"out={tmp_path / 'report'}", "bootstrap=0", "figures=false", "confidence=0.5"])
    table = pd.read_csv(tmp_path / "report" / "stabilizers.csv")
    overall = table[(table["method"] == "trainer-mosbach") & (table["category"] == "overall")].iloc[0]
    assert overall["std_mcc"] == 0 and overall["failed"] == SEEDS and overall["p_variance_holm"] < 0.5
    row = next(line for line in (tmp_path / "report" / "report.md").read_text(encoding="utf-8").splitlines()
               if line.startswith("| trainer-mosbach"))
    assert "every run failed" in row and "↓" not in row
    assert row.split(" | ")[5] == "–"   # nor a σ ratio of 0 (stabilizers.csv keeps it)
    assert overall["std_ratio"] == 0
