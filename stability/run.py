"""One run: load -> tokenize (cached) -> train -> evaluate -> write the run directory."""
from __future__ import annotations

import json
import os
import time
from dataclasses import asdict
from pathlib import Path

from accelerate import Accelerator
from omegaconf import DictConfig, OmegaConf

from stability.config_checks import check_run_config
from stability.data.loading import load_run_data
from stability.devices import cpu_only_distributed
from stability.encoding import encode, tokenizer_fingerprint
from stability.metrics import score_diagnostic
from stability.modeling import build_model, load_tokenizer
from stability.provenance import environment
from stability.atomic import atomic_write_text
from stability.rundir import (CONFIG_FILE, METRICS_FILE, PREDICTIONS_FILE, TRAIN_LOG_FILE,
                              append_jsonl, config_fingerprint, finished_with, write_jsonl)
from stability.tracking import make_tracker
from stability.training import labels_from_probability, predict_entailment_probability, train

CHECKPOINT = Path("checkpoint") / "last.pt"


def run_one(cfg: DictConfig, run_dir: Path) -> dict | None:
    """Run (or skip, when already finished with the same config) and return metrics.json's content.

    Under several processes only the main one writes; the others return None.
    """
    check_run_config(cfg)
    fingerprint = config_fingerprint(cfg)
    if not cfg.force and finished_with(run_dir, fingerprint):
        print(f"[skip] {run_dir}: finished with the same config (force=true reruns it)")
        return json.loads((run_dir / METRICS_FILE).read_text(encoding="utf-8"))
    started = time.perf_counter()
    accelerator = Accelerator(mixed_precision=cfg.trainer.mixed_precision, cpu=cpu_only_distributed())
    main = accelerator.is_main_process
    data = load_run_data(cfg)
    cache_dir = Path(cfg.paths.cache_dir).expanduser()
    tokenizer = load_tokenizer(cfg.model, (t for e in data.train for t in (e.premise, e.hypothesis)),
                               cache_dir)
    key = tokenizer_fingerprint(tokenizer)
    max_length = int(cfg.data.max_length)
    encoded = {name: encode(examples, tokenizer, max_length, cache_dir, key)
               for name, examples in (("train", data.train), ("validation", data.validation),
                                      ("diagnostic", data.diagnostic))}
    tokenize_seconds = time.perf_counter() - started
    model = build_model(cfg.model, tokenizer, int(cfg.seed_init))
    checkpoint = run_dir / CHECKPOINT if cfg.trainer.resume else None
    tracker = make_tracker(cfg, run_dir) if main else None
    if main:
        run_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_text(run_dir / CONFIG_FILE, OmegaConf.to_yaml(cfg, resolve=True))
        atomic_write_text(run_dir / TRAIN_LOG_FILE, "")

    def on_epoch(entry: dict) -> None:
        if main:
            append_jsonl(run_dir / TRAIN_LOG_FILE, entry)
            tracker.log_epoch(entry)
            print(f"[{cfg.lang.code} {cfg.setup} seed {cfg.seed}] epoch {entry['epoch']}: "
                  f"loss {entry['loss']:.4f}, val acc {entry['val_accuracy']:.4f}")

    def on_resume(finished: list[dict]) -> None:
        if main:
            write_jsonl(run_dir / TRAIN_LOG_FILE, finished)

    pad_id = int(tokenizer.pad_token_id)
    result = train(model, encoded["train"][0], encoded["validation"][0], cfg, accelerator, pad_id,
                   checkpoint, on_epoch, on_resume)
    eval_started = time.perf_counter()
    diag_split = encoded["diagnostic"][0]
    prob = predict_entailment_probability(model, diag_split, int(cfg.trainer.eval_batch_size),
                                          accelerator, pad_id)
    pred = labels_from_probability(prob)
    gold = diag_split.labels.tolist()
    scores = score_diagnostic(gold, pred.tolist(), [e.categories for e in data.diagnostic],
                              [e.coarse for e in data.diagnostic])
    if not main:
        return None
    predictions = [{"idx": e.idx, "label": int(g), "pred": int(p), "prob_entailment": float(pr),
                    "categories": list(e.categories)}
                   for e, g, p, pr in zip(data.diagnostic, gold, pred, prob)]
    metrics = {
        "experiment": cfg.experiment_name, "lang": cfg.lang.code, "setup": cfg.setup,
        "seed": int(cfg.seed), "seed_init": int(cfg.seed_init), "seed_order": int(cfg.seed_order),
        "model": cfg.model.name, "n_train": len(data.train), "n_added": data.n_added,
        "n_validation": len(data.validation), "n_items": len(data.diagnostic),
        "val_accuracy": result.best_val_accuracy, **asdict(scores),
        "epochs_trained": result.epochs_trained, "best_epoch": result.best_epoch,
        "timings": {"tokenize_seconds": tokenize_seconds, "train_seconds": result.seconds,
                    "eval_seconds": time.perf_counter() - eval_started,
                    "total_seconds": time.perf_counter() - started},
        "tokenization_cached": all(hit for _, hit in encoded.values()),
        "num_processes": accelerator.num_processes, "device": str(accelerator.device),
        "pid": os.getpid(),
        "config_fingerprint": fingerprint, "environment": environment(),
    }
    write_jsonl(run_dir / PREDICTIONS_FILE, predictions)
    tracker.log_final(metrics, predictions)
    tracker.finish()
    atomic_write_text(run_dir / METRICS_FILE, json.dumps(metrics, indent=2, ensure_ascii=False))
    if checkpoint is not None:
        checkpoint.unlink(missing_ok=True)
    return metrics

