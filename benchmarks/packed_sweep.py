"""Packed runs on one device: runs per hour of an mBERT-sized model at jobs_per_device 1, 2, 4, 8.

    python benchmarks/packed_sweep.py --data-root DIR --lang fr [--device cuda] [--runs 8]
                                      [--samples 1000] [--epochs 1] [--jobs 1 2 4 8]
                                      [--precisions fp32 bf16] [--json FILE]

The model has BERT-base's shape and mBERT's vocabulary size (12 layers, hidden 768, 12 heads,
intermediate 3072, 119,547 word pieces: 178M parameters, half of them the word embeddings) with
random weights, since no weights can be downloaded. It is saved once as a local checkpoint and
every run loads it with `model.name=DIR`, as it would load mBERT, with a fresh classifier head.
Its cased WordPiece vocabulary is learnt from the training text
(`stability.finetune.modeling.wordpiece_vocab`, `--pieces` of them, so that words split into
pieces about as often as under mBERT's) and padded with unused entries to mBERT's size, so that
the embedding matrix and its optimiser state are mBERT's.

For each precision and each k, one sweep `python -m stability.train seed=0..R-1
hydra/launcher=local_gpus hydra.launcher.jobs_per_device=k` (the user's command), timed from
its start to its exit, imports and model loading included. All sweeps share one tokenization
and hash cache, warmed by an untimed run first (a long sweep tokenizes once and reads the cache
after that). Prints per sweep: the wall time, runs per hour, the device's training throughput
(training examples x epochs of all runs over the wall time), one run's own training throughput
(from the run records: its training examples x epochs over its training time) and that times
k: the device's throughput while k runs train together, without each run's start (Hydra,
loading the weights) and end (the diagnostic pass), which is what a sweep of full-length runs
gets and what `plan.samples_per_second` takes. Then a check that packing changes no result:
every seed's diagnostic predictions when packed k at a time against the same seed run alone
(k = 1), in each precision: equal labels, and the largest difference in P(entailment).

`--device cpu` runs the same on the CPU (k runs share the cores, cores / k threads each);
`--shape small` swaps in a 2-layer, 64-wide model with a 2,000-piece vocabulary, for a test.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable

from stability.core.runrecord import RunDir, iter_runs

# BERT-base with mBERT's vocabulary (bert-base-multilingual-cased's config.json)
MBERT_SHAPE = {"vocab_size": 119_547, "hidden_size": 768, "num_hidden_layers": 12,
               "num_attention_heads": 12, "intermediate_size": 3072}
SMALL_SHAPE = {"vocab_size": 2_000, "hidden_size": 64, "num_hidden_layers": 2,
               "num_attention_heads": 2, "intermediate_size": 128}
PRECISIONS = {"fp32": "no", "bf16": "bf16"}
ENV = {"TOKENIZERS_PARALLELISM": "false", "TRANSFORMERS_VERBOSITY": "error", "HYDRA_FULL_ERROR": "1"}


@dataclass
class Sweep:
    """One timed sweep: its precision, packing and what it measured."""

    precision: str
    jobs_per_device: int
    runs: int
    wall_seconds: float
    runs_per_hour: float
    device_samples_per_second: float
    run_samples_per_second: float

    @property
    def packed_samples_per_second(self) -> float:
        """The device's training throughput while `jobs_per_device` runs train on it together,
        without the runs' start and end: what a sweep of long runs gets."""
        return self.jobs_per_device * self.run_samples_per_second


def _data_overrides(args: argparse.Namespace) -> list[str]:
    overrides = [f"lang={args.lang}", f"data.max_train_samples={args.samples}"]
    overrides += [f"data.root={args.data_root}"] if args.data_root else ["data.source=builtin"]
    return overrides


def build_checkpoint(args: argparse.Namespace, folder: Path) -> tuple[int, float]:
    """Save the random-weight model and its tokenizer in HF format; returns the parameter count
    and the mean tokens of a training pair under that tokenizer."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizer

    from stability.core.config import compose_config
    from stability.core.schemas.train import train_settings
    from stability.data.container import texts
    from stability.data.loading import load_run_datasets
    from stability.finetune.modeling import wordpiece_vocab

    shape = MBERT_SHAPE if args.shape == "mbert" else SMALL_SHAPE
    data = load_run_datasets(train_settings(compose_config(_data_overrides(args) + ["model=tiny"])))
    learnt = wordpiece_vocab(list(texts([data.train])), min(args.pieces, shape["vocab_size"]))
    vocab = list(learnt) + [f"[unused{i}]" for i in range(shape["vocab_size"] - len(learnt))]
    tokenizer = BertTokenizer(vocab={token: i for i, token in enumerate(vocab)}, do_lower_case=False)
    torch.manual_seed(0)
    model = BertModel(BertConfig(**shape, max_position_embeddings=512, type_vocab_size=2,
                                 pad_token_id=tokenizer.pad_token_id))
    model.save_pretrained(folder, safe_serialization=True)
    tokenizer.save_pretrained(folder)
    lengths = [len(ids) for ids in tokenizer(list(data.train["premise"]), list(data.train["hypothesis"]))["input_ids"]]
    return sum(p.numel() for p in model.parameters()), sum(lengths) / len(lengths)


def _sweep_command(args: argparse.Namespace, model: Path, out: Path, precision: str, seeds: str,
                   jobs: int) -> list[str]:
    return [sys.executable, "-m", "stability.train", *_data_overrides(args),
            f"model.name={model}", "model.kind=pretrained", f"seed={seeds}",
            f"trainer.max_epochs={args.epochs}", f"trainer.patience={args.epochs}",
            f"trainer.batch_size={args.batch_size}", f"trainer.mixed_precision={PRECISIONS[precision]}",
            "logger=none", f"paths.output_dir={out}", "hydra/launcher=local_gpus",
            f"hydra.launcher.jobs_per_device={jobs}"]


def run_logged(command: list[str], env: dict[str, str], log: Path) -> float:
    """Run `command` to its end with `env`, the command line and then its output in `log`; its
    wall time in seconds. A failure exits with the end of the log."""
    started = time.perf_counter()
    with log.open("w") as handle:
        handle.write(shlex.join(command) + "\n\n")
        handle.flush()
        done = subprocess.run(command, env=env, stdout=handle, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        sys.exit(f"error: {shlex.join(command[1:3])} failed (exit {done.returncode}); the end of {log}:\n"
                 + "\n".join(log.read_text().splitlines()[-30:]))
    return time.perf_counter() - started


def measure(args: argparse.Namespace, model: Path, work: Path, env: dict[str, str], precision: str,
            jobs: int) -> Sweep:
    """Time one sweep of `args.runs` seeds packed `jobs` at a time; read back its records."""
    out = work / f"{precision}-k{jobs}"
    wall = run_logged(_sweep_command(args, model, out, precision, f"0..{args.runs - 1}", jobs), env,
                work / f"{precision}-k{jobs}.log")
    records = [run.read_record() for run in iter_runs(out)]
    examples = [r.n_train * r.epochs_trained for r in records]
    per_run = [n / r.timings["train_seconds"] for n, r in zip(examples, records)]
    return Sweep(precision, jobs, len(records), wall, len(records) / wall * 3600, sum(examples) / wall,
                 sum(per_run) / len(per_run))


Predictions = dict[int, dict[str, tuple[int, float]]]


def predictions_by_seed(runs: Iterable[RunDir]) -> Predictions:
    """Each run's diagnostic answers, (label, P(entailment)) per item, by the run's seed."""
    return {run.read_record().seed: {p.idx: (p.pred, p.prob_entailment) for p in run.read_predictions()}
            for run in runs}


def prediction_difference(first: Predictions, second: Predictions) -> tuple[int, int, float]:
    """(items whose label differs, items compared, largest |ΔP(entailment)|) between the same
    seeds' answers in two sets of runs."""
    differing, compared, largest = 0, 0, 0.0
    for seed, items in first.items():
        for idx, (pred, prob) in items.items():
            other_pred, other_prob = second[seed][idx]
            differing += pred != other_pred
            compared += 1
            largest = max(largest, abs(prob - other_prob))
    return differing, compared, largest


def packing_check(work: Path, precision: str, jobs: int) -> dict:
    """Print and return how the sweep packed `jobs` at a time differs from the same runs alone."""
    differing, compared, largest = prediction_difference(predictions_by_seed(iter_runs(work / f"{precision}-k1")),
                                                         predictions_by_seed(iter_runs(work / f"{precision}-k{jobs}")))
    print(f"  packed vs alone: {differing} of {compared} labels differ, largest |ΔP(entailment)| {largest:.3g}",
          flush=True)
    return {"precision": precision, "jobs_per_device": jobs, "labels_differing": differing, "items": compared,
            "max_abs_prob_difference": largest}


def _environment(args: argparse.Namespace, cache: Path) -> dict[str, str]:
    env = {**os.environ, **ENV, "NLI_STABILITY_CACHE": str(cache)}
    if args.device == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = ""
    return env


def _print_table(sweeps: list[Sweep]) -> None:
    print("| precision | jobs per device | runs | wall (s) | runs/hour | device examples/s | one run's examples/s "
          "| × jobs per device |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for s in sweeps:
        print(f"| {s.precision} | {s.jobs_per_device} | {s.runs} | {s.wall_seconds:.1f} | {s.runs_per_hour:.0f} "
              f"| {s.device_samples_per_second:.1f} | {s.run_samples_per_second:.1f} "
              f"| {s.packed_samples_per_second:.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-root", default=None, help="data.root; omit for the built-in data")
    parser.add_argument("--lang", default="fr")
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--shape", choices=("mbert", "small"), default="mbert")
    parser.add_argument("--pieces", type=int, default=8_000, help="word pieces learnt from the text")
    parser.add_argument("--runs", type=int, default=8, help="seeds per sweep")
    parser.add_argument("--samples", type=int, default=1_000, help="training examples per run")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2, 4, 8], help="jobs_per_device values")
    parser.add_argument("--precisions", nargs="+", choices=tuple(PRECISIONS), default=list(PRECISIONS))
    parser.add_argument("--json", type=Path, default=None, help="also write every figure to this file")
    args = parser.parse_args()
    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: torch sees no CUDA device here; pass --device cpu")
    if 1 not in args.jobs:
        parser.error("--jobs must include 1: packed runs are checked against the same runs alone")
    name = torch.cuda.get_device_name() if args.device == "cuda" else f"CPU, {len(os.sched_getaffinity(0))} cores"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        env = _environment(args, work / "cache")
        parameters, mean_tokens = build_checkpoint(args, work / "model")
        print(f"device: {name}; model: {args.shape} shape, {parameters / 1e6:.1f}M parameters, random weights, "
              f"{mean_tokens:.1f} tokens per training pair; "
              f"lang={args.lang} samples={args.samples} epochs={args.epochs} batch_size={args.batch_size} "
              f"runs per sweep={args.runs}", flush=True)
        run_logged(_sweep_command(args, work / "model", work / "warmup", args.precisions[0], "0", 1), env,
             work / "warmup.log")
        sweeps, checks = [], []
        # alone first (the reference of the check), then the widest packing: a sweep cut short
        # by a time limit keeps the figures that matter most
        for jobs in [1] + sorted(set(args.jobs) - {1}, reverse=True):
            for precision in args.precisions:
                sweep = measure(args, work / "model", work, env, precision, jobs)
                sweeps.append(sweep)
                print(f"{precision} jobs_per_device={jobs}: {sweep.wall_seconds:.1f} s, "
                      f"{sweep.runs_per_hour:.0f} runs/hour, {sweep.device_samples_per_second:.1f} examples/s",
                      flush=True)
                if jobs > 1:
                    checks.append(packing_check(work, precision, jobs))
                if args.json:
                    figures = {"device": name, "parameters": parameters, "mean_tokens": mean_tokens,
                               "arguments": vars(args), "sweeps": [asdict(s) | {"packed_samples_per_second": s.packed_samples_per_second} for s in sweeps], "checks": checks}
                    args.json.write_text(json.dumps(figures, indent=2, default=str))
    _print_table(sweeps)
    best = max(sweeps, key=lambda s: s.packed_samples_per_second)
    print(f"best: {best.precision}, jobs_per_device={best.jobs_per_device}: {best.packed_samples_per_second:.1f} "
          "training examples/s on the device while its runs train (plan.samples_per_second)")


if __name__ == "__main__":
    main()
