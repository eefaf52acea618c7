"""benchmarks/precision.py: float32 against bf16 through the project's report, its CPU path end to end."""
from __future__ import annotations

import argparse
import math
import re
import statistics
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from forked_cli import run_script
from scipy import stats
from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.override_parser.overrides_parser import OverridesParser

from stability.core.jobs import job_configs, without_hydra
from stability.core.runrecord import config_fingerprint, iter_runs
from stability.core.taxonomy import COARSE_CATEGORIES

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "precision.py"
sys.path.append(str(SCRIPT.parent))  # last: benchmarks/probing.py must not hide the probing package
import precision  # noqa: E402  (benchmarks/ is not a package)

_NUMBER = r"(-?\d+\.\d+)"
_RATIO = r"(\d+\.\d+|∞)"


def test_the_two_precisions_of_a_seed_are_launched_one_after_the_other():
    assert precision.sweep(2) == ["seed=0..1", "trainer.mixed_precision=no,bf16"]
    assert precision.jobs(2) == [["seed=0", "trainer.mixed_precision=no"], ["seed=0", "trainer.mixed_precision=bf16"],
                                 ["seed=1", "trainer.mixed_precision=no"], ["seed=1", "trainer.mixed_precision=bf16"]]
    # the order of Hydra's own basic sweeper for the sweep the command runs
    parsed = OverridesParser.create().parse_overrides(["seed=0,1", "trainer.mixed_precision=no,bf16"])
    assert BasicSweeper.split_arguments(parsed, None)[0] == precision.jobs(2)


def test_one_sweep_with_the_identity_overrides_of_the_one_job_sweeps(tmp_path):
    """The command is the one-job sweeps' overrides (so their finished runs are reused) plus the sweep
    and the launcher, without `hydra.launcher.n_jobs`."""
    args = argparse.Namespace(lang="fr", model="/models/m", data_root="/data", samples=600, eval_samples=50,
                              epochs=3, batch_size=16, learning_rate=3e-5, seeds=4, jobs_per_device=2,
                              preset=None, config_dir=None)
    command = precision.train_command(args, tmp_path / "runs")
    assert command[:4] == [sys.executable, "-m", "stability.train", "--multirun"]
    assert command[4:] == [
        "lang=fr", "experiment_name=precision", "model.name=/models/m", "model.kind=pretrained", "data.root=/data",
        "data.max_train_samples=600", "data.max_eval_samples=50", "trainer.max_epochs=3", "trainer.patience=3",
        "trainer.batch_size=16", "trainer.learning_rate=3e-05", "logger=none", f"paths.output_dir={tmp_path / 'runs'}",
        "seed=0..3", "trainer.mixed_precision=no,bf16", "hydra/launcher=local_gpus", "hydra.launcher.jobs_per_device=2"]


def test_the_sweeps_runs_are_the_one_job_sweeps_runs(tmp_path):
    """Each job of the sweep has the directory and config fingerprint of the one-job sweep
    `<overrides> seed=<s> trainer.mixed_precision=<p> hydra/launcher=local_gpus ... hydra.launcher.n_jobs=1`
    the script ran before, so runs finished by it are reused."""
    args = argparse.Namespace(lang="fr", model="tiny", data_root=None, samples=600, eval_samples=None, epochs=3,
                              batch_size=16, learning_rate=3e-5, seeds=2, jobs_per_device=2,
                              preset=None, config_dir=None)
    runs = tmp_path / "runs"
    swept = job_configs(["--multirun", *precision.train_command(args, runs)[4:]])
    alone = [job_configs(["--multirun", *precision.train_overrides(args, runs), *job, "hydra/launcher=local_gpus",
                          "hydra.launcher.jobs_per_device=2", "hydra.launcher.n_jobs=1"])[0]
             for job in precision.jobs(2)]
    assert [(c.seed, c.trainer.mixed_precision) for c in swept] == [(0, "no"), (0, "bf16"), (1, "no"), (1, "bf16")]
    assert [c.hydra.sweep.subdir for c in swept] == [c.hydra.sweep.subdir for c in alone]
    assert [config_fingerprint(without_hydra(c)) for c in swept] == [config_fingerprint(without_hydra(c))
                                                                      for c in alone]



def test_a_user_preset_starts_every_run_and_the_scripts_options_override_it(tmp_path):
    """`--preset` composes the user's experiment (here: its own training file and an extra set) and the
    script's keys win over the preset's (its batch size), in every job of the sweep."""
    (tmp_path / "conf" / "experiment").mkdir(parents=True)
    (tmp_path / "conf" / "experiment" / "mine.yaml").write_text(
        "# @package _global_\ndata:\n  max_length: 64\n  extra_eval:\n    - {name: held-out, path: csv, "
        "data_files: [/data/held.csv], split: test}\ntrainer:\n  batch_size: 32\n")
    args = argparse.Namespace(lang="en", model="tiny", data_root=None, samples=100, eval_samples=None, epochs=2,
                              batch_size=16, learning_rate=3e-5, seeds=2, jobs_per_device=2,
                              preset="mine", config_dir=str(tmp_path / "conf"))
    command = precision.train_command(args, tmp_path / "runs")
    assert command[4:6] == [f"hydra.searchpath=[file://{tmp_path / 'conf'}]", "experiment=mine"]
    configs = job_configs(["--multirun", *command[4:]])
    assert len(configs) == 4
    assert {(c.data.max_length, c.trainer.batch_size, c.data.extra_eval[0].name) for c in configs} == {(64, 16, "held-out")}


def test_the_extra_sets_table_pairs_each_seeds_two_precisions():
    """ΔMCC pairs the runs by seed, whatever their order; its t interval and the F interval of the σ
    ratio computed by hand (t_0.975,2 = 4.302653; F_0.025,2,2 = 1/39, F_0.975,2,2 = 39)."""
    def record(seed: int, mcc: float) -> SimpleNamespace:
        return SimpleNamespace(seed=seed, extra_eval={"sick-test": {"mcc": mcc, "n_items": 500}})

    records = {"no": [record(2, 0.6), record(0, 0.5), record(1, 0.4)],
               "bf16": [record(0, 0.52), record(1, 0.41), record(2, 0.58)]}
    [row] = precision.extra_set_rows(records)
    # differences by seed 0.02, 0.01, −0.02: mean 0.00333, sd 0.020817, se 0.012019
    half = 4.302653 * 0.020817 / math.sqrt(3)
    assert row[:5] == ["sick-test", "500", "3", "0.500 ± 0.100", "0.503 ± 0.086"]
    assert row[5] == f"0.003 [{0.003333 - half:.3f}, {0.003333 + half:.3f}]"
    assert row[6] == f"{2 * stats.t.sf(0.003333 / 0.012019, 2):.3g}"
    ratio = 0.086217 / 0.1   # σ of (0.52, 0.41, 0.58) over σ of (0.5, 0.4, 0.6)
    assert row[7] == f"{ratio:.2f} [{ratio / math.sqrt(39):.2f}, {ratio * math.sqrt(39):.2f}]"


def _table(stdout: str) -> dict[str, list[str]]:
    """The printed Markdown table's rows by their first cell (header and rule left out)."""
    lines = [line for line in stdout.splitlines() if line.startswith("| ")]
    assert lines[0].startswith("| category |")
    return {cells[0]: cells[1:] for cells in ([c.strip() for c in line.strip("|").split("|")] for line in lines[1:])}


def _mean_std(text: str) -> tuple[float, float]:
    mean, std = re.fullmatch(rf"{_NUMBER} ± {_NUMBER}", text).groups()
    return float(mean), float(std)


@pytest.mark.slow
def test_cpu_path_prints_the_reports_comparison_and_the_recorded_speed(tmp_path):
    out = tmp_path / "precision"
    # the tiny model learns something in 10 short epochs (1 epoch: constant predictions, all MCC 0)
    done = run_script(SCRIPT, ["--model", "tiny", "--seeds", "2", "--epochs", "10", "--batch-size", "8",
                               "--learning-rate", "2e-3", "--aso-iterations", "5", "--out", str(out)], tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (out / "report" / "report.md").is_file()
    assert f"report: {out / 'report' / 'report.md'}" in done.stdout

    records: dict[str, list] = {"no": [], "bf16": []}
    for run in iter_runs(out / "runs"):
        records[str(run.read_config().trainer.mixed_precision)].append(run.read_record())
    assert {p: sorted(r.seed for r in rs) for p, rs in records.items()} == {"no": [0, 1], "bf16": [0, 1]}
    # one condition per precision, told apart by the precision item of the variant alone
    variants = {p: {r.variant for r in rs} for p, rs in records.items()}
    [float32], [bf16] = variants["no"], variants["bf16"]
    assert set(bf16.split("_")) ^ set(float32.split("_")) == {"precision-bf16"}

    # speed: the means and their ratio, from the records' train_seconds
    seconds = {p: statistics.fmean(r.timings["train_seconds"] for r in rs) for p, rs in records.items()}
    line = next(line for line in done.stdout.splitlines() if line.startswith("speed:"))
    printed = re.search(rf"float32 {_NUMBER} ± .* bf16 {_NUMBER} ± .* ratio float32/bf16 {_NUMBER}", line).groups()
    assert float(printed[0]) == pytest.approx(seconds["no"], abs=0.006)
    assert float(printed[1]) == pytest.approx(seconds["bf16"], abs=0.006)
    assert float(printed[2]) == pytest.approx(seconds["no"] / seconds["bf16"], abs=0.006)

    # one row per coarse category of the taxonomy, then all items
    table = _table(done.stdout)
    assert list(table) == [*COARSE_CATEGORIES, "all items"]

    def scores(p: str, category: str) -> list[float]:
        return [r.overall_mcc if category == "all items" else r.coarse_mcc[category] for r in records[p]]

    for category, cells in table.items():
        items, float32_mcc, bf16_mcc, delta = cells[:4]
        assert int(items) == (records["no"][0].n_items if category == "all items"
                              else records["no"][0].coarse_n[category])
        # MCC mean ± σ of each precision: the records' per-category MCCs
        for text, p in ((float32_mcc, "no"), (bf16_mcc, "bf16")):
            mean, std = _mean_std(text)
            assert mean == pytest.approx(statistics.fmean(scores(p, category)), abs=6e-4)
            assert std == pytest.approx(statistics.stdev(scores(p, category)), abs=6e-4)
        # ΔMCC = bf16 − float32 of the seed means
        printed_delta = float(re.match(_NUMBER, delta).group(1))
        expected = statistics.fmean(scores("bf16", category)) - statistics.fmean(scores("no", category))
        assert printed_delta == pytest.approx(expected, abs=6e-4)
        # the σ ratio bf16 / float32 with its bootstrap interval, where float32 has a spread
        ratio = cells[5]
        if statistics.stdev(scores("no", category)) > 0:
            point, low, high = (math.inf if text == "∞" else float(text) for text in
                                re.fullmatch(rf"{_RATIO} \[{_RATIO}, {_RATIO}\]", ratio).groups())
            assert point == pytest.approx(
                statistics.stdev(scores("bf16", category)) / statistics.stdev(scores("no", category)), abs=0.006)
            assert low <= point <= high
        else:
            assert ratio == "–"
    # Holm p of every coarse category from the report's tests, none for all items (no cell of the family)
    assert all(re.fullmatch(r"[\d.e-]+", table[c][4]) for c in COARSE_CATEGORIES)
    assert table["all items"][4] == "–"


def test_one_seed_is_refused(tmp_path):
    done = run_script(SCRIPT, ["--model", "tiny", "--seeds", "1", "--out", str(tmp_path)], tmp_path)
    assert done.returncode == 2
    assert "--seeds must be at least 2" in done.stderr.splitlines()[-1]


def test_an_axis_names_the_key_its_two_values_and_their_labels():
    arms = precision.Arms.parse("trainer.fuse_seeds=1,3", "solo,fused3")
    assert (arms.key, arms.values, arms.labels) == ("trainer.fuse_seeds", ("1", "3"), ("solo", "fused3"))
    assert precision.Arms.parse("trainer.optimizer=adamw,bertadam", None).labels == ("adamw", "bertadam")
    assert precision.PRECISION == precision.Arms.parse("trainer.mixed_precision=no,bf16", "float32,bf16")
    for wrong in ("trainer.fuse_seeds=1", "=1,3", "trainer.fuse_seeds=1,2,3"):
        with pytest.raises(ValueError, match="KEY=A,B"):
            precision.Arms.parse(wrong, None)


@pytest.mark.parametrize("options, message", [
    (["--preset", "mine"], "--preset and --config-dir go together"),
    (["--axis", "trainer.fuse_seeds=1,3"], "--axis and --labels compare runs already trained: give --runs DIR too"),
    (["--runs", ".", "--axis", "trainer.fuse_seeds=1"], "give one key and two values, KEY=A,B"),
])
def test_wrong_options_are_refused_in_one_line(tmp_path, options, message):
    done = run_script(SCRIPT, ["--model", "tiny", *options], tmp_path)
    assert done.returncode == 2
    assert message in done.stderr.splitlines()[-1]
