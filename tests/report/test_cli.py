"""The command line end to end: outputs, round trip, mixed inputs, hand-written CSVs, exit status 2."""
from __future__ import annotations

import base64
import math
import re
from fnmatch import fnmatch
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from forked_cli import run_module
from report_runs import write_metrics

from stability.report.cli import main

FAST = ["bootstrap=0", "figures=false", "calibration_sims=0"]
# enough simulations for the calibration to write every file it writes (what these tests look at), not to be precise
FEW_SIMS = 40
SUMMARY_COLUMNS = ["lang", "setup", "variant", "n_seeds", "overall_mcc_mean", "overall_mcc_std", "mean_category_mcc_mean",
                   "mean_category_mcc_std", "rs_corr", "rs_corr_pairs", "rs_corr_skipped"]


def run_main(*argv: str | Path) -> None:
    main([str(arg) for arg in argv])


def exit_status(capsys, *argv: str | Path) -> tuple[int, str]:
    """Status and stderr of a CLI call that must fail."""
    with pytest.raises(SystemExit) as stop:
        run_main(*argv)
    return stop.value.code, capsys.readouterr().err


def test_outputs_of_run_directories(synthetic_runs, tmp_path):
    out = tmp_path / "report"
    run_main(f"runs={synthetic_runs}", f"out={out}", "bootstrap=30", "figures=false", "compare=[rte,rte+mnli10000]",
             "calibration_sims=0")   # the calibration's table is the documented-columns test's
    for name in ("results.csv", "summary.csv", "category_stats.csv", "language_corr.csv", "size_curve.csv",
                 "item_agreement.csv", "agreement_by_category.csv", "flip_items.csv", "bootstrap_ci.csv",
                 "deltas.csv", "delta_shares.csv", "bootstrap_deltas.csv", "report.md"):
        assert (out / name).is_file(), name
    summary = pd.read_csv(out / "summary.csv")
    assert list(summary.columns) == SUMMARY_COLUMNS
    assert len(summary) == 4 and (summary["n_seeds"] == 3).all()
    stats = pd.read_csv(out / "category_stats.csv")
    assert list(stats.columns) == ["lang", "setup", "variant", "category", "coarse", "n_items", "mcc_mean", "mcc_std",
                                   "seed_0", "seed_1", "seed_2"]
    assert len(stats) == 4 * 33
    seeds = stats[["seed_0", "seed_1", "seed_2"]].to_numpy()
    np.testing.assert_allclose(stats["mcc_std"], seeds.std(axis=1, ddof=1), atol=1e-12)  # σ of a constant row: 0 or ~1e-16
    assert len(pd.read_csv(out / "item_agreement.csv")) == 4 * 120
    assert len(pd.read_csv(out / "deltas.csv")) == 2 * 33
    assert list(pd.read_csv(out / "size_curve.csv")["n_added"]) == [0, 10000, 0, 10000]
    report = (out / "report.md").read_text()
    for heading in ("## Summary", "## Stability per category", "## Language-wise correlation",
                    "## Per-item agreement", "## Bootstrap intervals", "## Comparison: rte+mnli10000 vs rte",
                    "## Training-data size"):
        assert heading in report


def test_round_trip_through_results_csv(synthetic_runs, tmp_path):
    run_main(f"runs={synthetic_runs}", f"out={tmp_path / 'a'}", *FAST)
    run_main(f"runs={tmp_path / 'a' / 'results.csv'}", f"out={tmp_path / 'b'}", *FAST)
    for name in ("results.csv", "summary.csv", "category_stats.csv", "language_corr.csv", "size_curve.csv"):
        pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "a" / name), pd.read_csv(tmp_path / "b" / name))


def test_mixed_run_folder_and_csv(tmp_path):
    for seed, overall in enumerate((0.2, 0.4)):
        write_metrics(tmp_path / "runs", "fr", "rte", seed, np.linspace(-0.5, 0.5, 33) * (seed + 1), overall)
    csv = tmp_path / "de.csv"
    csv.write_text("lang,setup,seed,category,mcc\n"
                   "de,rte,0,Negation,0.1\nde,rte,0,Conjunction,0.3\n"
                   "de,rte,1,Negation,0.3\nde,rte,1,Conjunction,0.7\n")
    run_main(f"runs=[{tmp_path / 'runs'},{csv}]", *FAST)
    summary = pd.read_csv(tmp_path / "runs" / "report" / "summary.csv").set_index("lang")
    assert summary.loc["fr", "overall_mcc_mean"] == pytest.approx(0.3)
    assert summary.loc["fr", "rs_corr"] == pytest.approx(1.0)         # proportional vectors
    assert math.isnan(summary.loc["de", "overall_mcc_mean"])
    assert summary.loc["de", "mean_category_mcc_mean"] == pytest.approx((0.2 + 0.5) / 2)
    assert summary.loc["de", "mean_category_mcc_std"] == pytest.approx(math.sqrt(2 * 0.15 ** 2))
    assert summary.loc["de", "rs_corr"] == pytest.approx(1.0)


def test_hand_written_csv(tmp_path, capsys):
    csv = tmp_path / "mine.csv"
    csv.write_text("lang,setup,seed,category,mcc\n"
                   "sv,rte,0,Negation,0.1\nsv,rte,0,Quantifiers,0.2\nsv,rte,0,Common sense,0.3\n"
                   "sv,rte,1,Negation,0.3\nsv,rte,1,Quantifiers,0.2\nsv,rte,1,Common sense,0.1\n"
                   "sv,rte,2,Negation,0.2\nsv,rte,2,Quantifiers,0.2\nsv,rte,2,Common sense,0.2\n")
    run_main(f"runs={csv}")
    out = tmp_path / "report"
    row = pd.read_csv(out / "summary.csv").iloc[0]
    assert row["n_seeds"] == 3 and math.isnan(row["overall_mcc_mean"])
    assert row["mean_category_mcc_mean"] == pytest.approx(0.2) and row["mean_category_mcc_std"] == pytest.approx(0)
    assert (row["rs_corr"], row["rs_corr_pairs"], row["rs_corr_skipped"]) == (pytest.approx(-1.0), 1, 2)
    stats = pd.read_csv(out / "category_stats.csv")
    assert list(stats["category"]) == ["Quantifiers", "Negation", "Common sense"]   # canonical order
    assert stats.set_index("category").loc["Negation", "mcc_std"] == pytest.approx(0.1)
    assert not (out / "bootstrap_ci.csv").exists()
    assert "predictions.jsonl" in capsys.readouterr().err                        # the printed note
    assert (out / "heatmap_sv_rte.png").is_file() and (out / "heatmap_languages_rte.png").is_file()
    assert "![heatmap_sv_rte](heatmap_sv_rte.png)" in (out / "report.md").read_text()


def test_compare_thresholds_from_the_command_line(tmp_path):
    csv = tmp_path / "r.csv"
    rows = ["lang,setup,seed,category,mcc"]
    for setup, negation, conjunction in (("rte", 0.2, 0.0), ("rte+mnli10000", 0.3, 0.25)):
        rows += [f"fr,{setup},{seed},Negation,{negation}" for seed in (0, 1)]
        rows += [f"fr,{setup},{seed},Conjunction,{conjunction}" for seed in (0, 1)]
    csv.write_text("\n".join(rows) + "\n")
    run_main(f"runs={csv}", "compare=[rte,rte+mnli10000]", *FAST)
    shares = pd.read_csv(tmp_path / "report" / "delta_shares.csv").set_index("lang")
    assert shares.loc["fr", "n_delta_mcc_above"] == 1                 # ΔMCC 0.1 (not counted) and 0.25
    run_main(f"runs={csv}", "compare=[rte,rte+mnli10000]", "delta_mcc=0.05", *FAST)
    shares = pd.read_csv(tmp_path / "report" / "delta_shares.csv").set_index("lang")
    assert shares.loc["all", "n_delta_mcc_above"] == 2


@pytest.mark.parametrize("text, where", [
    ("lang,setup,seed,mcc\nfr,rte,0,0.1\n", "bad.csv: missing columns: category"),
    ("lang,setup,seed,category,mcc\nfr,rte,0,Negation,0.1\nfr,rte,1,Negation,n/a\n", "bad.csv:3: mcc is not a number"),
])
def test_bad_csv_exits_2_with_one_line(tmp_path, capsys, text, where):
    csv = tmp_path / "bad.csv"
    csv.write_text(text)
    status, err = exit_status(capsys, f"runs={csv}", *FAST)
    assert status == 2
    assert err.count("\n") == 1 and err.startswith("error: ") and where in err and "fix:" in err
    assert not (tmp_path / "report").exists()


def test_missing_path_empty_folder_unknown_setup_exit_2(tmp_path, capsys):
    status, err = exit_status(capsys, f"runs={tmp_path / 'nowhere'}", *FAST)
    assert status == 2 and "no such file or directory" in err and err.count("\n") == 1
    status, err = exit_status(capsys, f"runs={tmp_path}", *FAST)
    assert status == 2 and "no run directories" in err
    write_metrics(tmp_path / "runs", "fr", "rte", 0, [0.1] * 33, 0.1)
    status, err = exit_status(capsys, f"runs={tmp_path / 'runs'}", "compare=[rte,rte+mnli]", *FAST)
    assert status == 2 and "'rte+mnli' not in the results" in err


@pytest.mark.slow
def test_python_dash_m_reports_user_error(tmp_path):
    csv = tmp_path / "bad.csv"
    csv.write_text("lang,setup,seed\nfr,rte,0\n")
    done = run_module("stability.report", [f"runs={csv}"], Path(__file__).resolve().parents[2])
    assert done.returncode == 2
    assert done.stderr.splitlines() == [done.stderr.strip()] and "missing columns: category, mcc" in done.stderr


@pytest.mark.slow
def test_figures_for_runs_and_comparison(synthetic_runs, tmp_path):
    out = tmp_path / "figs"
    run_main(f"runs={synthetic_runs}", f"out={out}", "bootstrap=20", "compare=[rte,rte+mnli10000]", "calibration_sims=0")
    names = {path.name for path in out.glob("*.png")}
    assert names == {"heatmap_de_rte.png", "heatmap_de_rte_mnli10000.png", "heatmap_fr_rte.png",
                     "heatmap_fr_rte_mnli10000.png", "heatmap_languages_rte.png",
                     "heatmap_languages_rte_mnli10000.png", "deltas_rte_vs_rte_mnli10000.png", "size_curve.png",
                     # fr and de share items: the cross-lingual consistency figures (κ map, bars of the one pair)
                     "kappa_rte.png", "kappa_rte_mnli10000.png", "consistency_rte_de_fr.png",
                     "consistency_rte_mnli10000_de_fr.png",
                     # three runs per (lang, setup) with a validation accuracy: the expected-maximum curves
                     "expected_max.png"}
    report = (out / "report.md").read_text()
    assert all(f"({name})" in report for name in names)


@pytest.mark.parametrize("option, fix", [
    ("bootstrap=-1", "bootstrap=<a number >= 0>"), ("confidence=1", "confidence=<a number in (0, 1)>"),
    ("confidence=0", "confidence=<a number in (0, 1)>"), ("flip_top=0", "flip_top=<a number >= 1>"),
    ("constant_share=0.4", "constant_share=<a number in [0.5, 1]>"), ("compare=[rte]", "compare=[rte,rte+mnli10000]"),
])
def test_out_of_range_option_exits_2_before_anything_is_written(tmp_path, capsys, option, fix):
    write_metrics(tmp_path / "runs", "fr", "rte", 0, [0.1] * 33, 0.1)
    status, err = exit_status(capsys, f"runs={tmp_path / 'runs'}", f"out={tmp_path / 'out'}", option)
    assert status == 2 and err.count("\n") == 1 and fix in err
    assert not (tmp_path / "out").exists()


def test_no_runs_a_bare_path_and_a_sweep_are_refused_with_the_syntax_to_use(tmp_path, capsys):
    status, err = exit_status(capsys, "bootstrap=0")
    assert status == 2 and "runs is empty" in err and "runs=DIR" in err
    status, err = exit_status(capsys, str(tmp_path))
    assert status == 2 and f"(fix: name the runs: runs={tmp_path})" in err
    for lang in ("fr", "de"):
        write_metrics(tmp_path / lang, lang, "rte", 0, [0.1] * 33, 0.1)
    status, err = exit_status(capsys, f"runs={tmp_path / 'fr'},{tmp_path / 'de'}", f"out={tmp_path / 'out'}")
    assert status == 2 and err.count("\n") == 1 and "the report does not sweep: runs would make 2" in err
    assert f"runs=[{tmp_path / 'fr'},{tmp_path / 'de'}]" in err
    assert not (tmp_path / "out").exists()


def test_default_out_beside_the_first_folder_and_the_closing_line(tmp_path, capsys):
    write_metrics(tmp_path / "runs", "fr", "rte", 0, [0.1] * 33, 0.1)
    run_main(f"runs={tmp_path / 'runs'}", *FAST)
    assert (tmp_path / "runs" / "report" / "report.md").is_file()
    assert capsys.readouterr().out.strip() == (f"read 1 run and 0 CSV files; wrote 7 tables, 0 figures, "
                                               f"report.md and report.html to {tmp_path / 'runs' / 'report'}")
    run_main(f"runs={tmp_path / 'runs'}", *FAST, "html=false", f"out={tmp_path / 'md'}")
    assert capsys.readouterr().out.strip().endswith(f"0 figures and report.md to {tmp_path / 'md'}")
    assert not (tmp_path / "md" / "report.html").exists()


@pytest.mark.slow
def test_help_says_what_it_reads_and_writes():
    done = run_module("stability.report", ["--help"], Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr
    for text in ("Reads: runs=", "Writes into out=", "ddof = 1", "docs/reading-the-report.md", "compare=[rte,rte/lr3e-05]",
                 "bootstrap: 1000"):
        assert text in done.stdout
    assert "DESIGN" + ".md" not in done.stdout   # spelt apart: no file of the project cites it


# a file `report --help` names (`heatmap_<lang>_<setup>.png` stands for heatmap_*_*.png), or a folder (`.hydra/`)
HELP_NAMES = re.compile(r"[\w.<>*-]+\.(?:csv|png|md|html|log)\b|[\w.-]+/")


def _help_patterns(capsys) -> set[str]:
    """The file names `report --help` lists, as glob patterns."""
    capsys.readouterr()
    with pytest.raises(SystemExit):
        run_main("--help")
    return {re.sub(r"<[^>]+>", "*", name) for name in HELP_NAMES.findall(capsys.readouterr().out)}


@pytest.mark.slow
def test_the_help_names_every_file_a_report_writes(synthetic_runs, tmp_path, capsys):
    """The help's list of written files is hand-written: every file of a rich report (two
    languages, two setups, compared both ways, figures on), and every table docs/reading-the-report.md
    documents (some need inputs this report lacks: extra sets, suites, seed grids), is on it."""
    out = tmp_path / "report"
    run_main(f"runs={synthetic_runs}", f"out={out}", "bootstrap=30", "compare=[rte,rte+mnli10000]",
             "compare_langs=[fr,de]", f"calibration_sims={FEW_SIMS}")
    written = {path.name + ("/" if path.is_dir() else "") for path in out.iterdir()}
    assert len(written) > 35 and {"report.md", ".hydra/", "heatmap_fr_rte.png"} <= written
    patterns = _help_patterns(capsys)
    unnamed = sorted(name for name in written | set(_documented_columns())
                     if not any(fnmatch(name, pattern) for pattern in patterns))
    assert not unnamed, f"report --help (stability/conf/report.yaml) does not name {unnamed}"
    # report.html (tests/report/test_page.py browses it) inlines every figure but the heat maps, its views
    page = (out / "report.html").read_text(encoding="utf-8")
    linked = re.findall(r"!\[[^]]*\]\(([^)]+)\)", (out / "report.md").read_text(encoding="utf-8"))
    static = [name for name in linked if not name.startswith("heatmap_")]
    assert len(static) >= 5 and page.count('data-view="') == len(linked) - len(static) == 6
    for name in static:
        assert base64.b64encode((out / name).read_bytes()).decode() in page, name


def _documented_columns() -> dict[str, list[str]]:
    """docs/reading-the-report.md's columns of each table: the first backticked comma list after
    the file's name, in its table row, list item or paragraph (`as `other.csv`` borrows the
    other's; `*_nonfailed.csv` has its namesake's)."""
    page = Path(__file__).resolve().parents[2] / "docs" / "reading-the-report.md"
    blocks = re.split(r"\n(?=\|)|\n\n|\n(?=- )", page.read_text(encoding="utf-8"))
    documented, aliases = {}, {}
    for block in blocks:
        mentions = list(re.finditer(r"`([\w<>-]+\.csv)`", block))
        for mention, following in zip(mentions, [*mentions[1:], None]):
            after = block[mention.end():following.start() if following else len(block)]
            listed = re.search(r"`([a-z_0-9]+(?:,\s+[a-z_0-9<>]+)+)`", after)
            if listed:
                documented.setdefault(mention.group(1), [c.strip() for c in listed.group(1).split(",")])
            elif following and after.rstrip().endswith("as"):
                aliases[mention.group(1)] = following.group(1)
    for name, other in aliases.items():
        documented.setdefault(name, documented[other])
    return documented


def test_every_written_table_has_the_documented_columns(synthetic_runs, tmp_path):
    out = tmp_path / "report"
    run_main(f"runs={synthetic_runs}", f"out={out}", "bootstrap=30", "figures=false", "compare=[rte,rte+mnli10000]",
             "compare_langs=[fr,de]", f"calibration_sims={FEW_SIMS}")
    documented = _documented_columns()
    written = sorted(path.name for path in out.glob("*.csv"))
    assert len(written) == 23
    for name in written:
        header = list(pd.read_csv(out / name, nrows=0).columns)
        columns = documented[name.replace("_nonfailed", "")]
        assert header[:len(columns)] == columns, name   # the documented columns lead, in order
