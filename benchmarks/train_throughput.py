"""Training throughput: the project's data path vs static padding to 256 tokens, one run.

    python benchmarks/train_throughput.py --model <HF folder or id | tiny> --data-root DIR --lang fr

The arms train the same initial model on the same examples with the same batch size; arm (a)
uses dynamic padding and length-grouped batches from stability.finetune.batching, arm (b) pads every
batch to 256 tokens, the way a fixed-shape pipeline would, and arm (c) is the project's training
loop itself (`stability.finetune.loop.train`, one epoch at the trainer's current defaults: its
recipe of optimiser, rate policy and stabilisers, all off, and one validation on 8 examples)
over arm (a)'s batches. Prints samples/s and the ratios (a)/(b) and (c)/(a): (c)/(a) near 1
means the loop adds nothing to a bare step.
"""
from __future__ import annotations

import argparse
import copy
import time
from pathlib import Path

import numpy as np
import torch
from accelerate import Accelerator
from stability.core.config import compose_config
from stability.core.schemas.train import train_settings
from stability.data.container import texts
from stability.data.loading import load_run_datasets
from stability.finetune.batching import collate, epoch_batches
from stability.finetune.encoding import EncodedSplit, encode
from stability.finetune.loop import train
from stability.finetune.modeling import build_model, load_tokenizer

STATIC_LENGTH = 256
_WARMUP_BATCHES = 3


def _static_collate(split: EncodedSplit, indices: np.ndarray, pad_id: int) -> dict[str, torch.Tensor]:
    """Pad to a fixed 256 tokens, whatever the batch's own longest sequence."""
    batch = collate(split, indices, pad_id)
    extra = STATIC_LENGTH - batch["input_ids"].shape[1]
    for key, fill in (("input_ids", pad_id), ("token_type_ids", 0), ("attention_mask", 0)):
        batch[key] = torch.nn.functional.pad(batch[key], (0, extra), value=fill)
    return batch


def _samples_per_second(model, split: EncodedSplit, batches: list[np.ndarray], collate_fn, pad_id: int,
                        lr: float) -> float:
    """Time one pass over `batches` after a few untimed warm-up steps."""
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    torch.manual_seed(0)

    def step(indices: np.ndarray) -> None:
        loss = model(**collate_fn(split, indices, pad_id)).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    for indices in batches[:_WARMUP_BATCHES]:
        step(indices)
    started = time.perf_counter()
    for indices in batches:
        step(indices)
    return sum(len(b) for b in batches) / (time.perf_counter() - started)


def _loop_samples_per_second(model, split: EncodedSplit, settings, pad_id: int) -> float:
    """One epoch of the project's own loop (its validation on 8 examples included)."""
    validation = EncodedSplit(split.input_ids[:8], split.token_type_ids[:8], split.labels[:8])
    started = time.perf_counter()
    train(model, split, validation, settings, Accelerator(cpu=not torch.cuda.is_available()), pad_id, None,
          lambda entry: None, lambda log: None)
    return len(split) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="tiny", help="HF id or local folder, or 'tiny'")
    parser.add_argument("--lang", default="fr")
    parser.add_argument("--data-root", default=None, help="data.root; omit for the built-in data")
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--samples", type=int, default=400, help="training examples timed per arm")
    args = parser.parse_args()

    overrides = [f"lang={args.lang}", f"data.max_train_samples={args.samples}", "trainer.max_epochs=1",
                 f"trainer.batch_size={args.batch_size}"]
    overrides += ["model=tiny"] if args.model == "tiny" else [f"model.name={args.model}"]
    overrides += [f"data.root={args.data_root}"] if args.data_root else ["data.source=builtin"]
    settings = train_settings(compose_config(overrides))
    data = load_run_datasets(settings)
    tokenizer = load_tokenizer(settings.model, texts([data.train]), Path(settings.paths.cache_dir).expanduser())
    split, _ = encode(data.train, tokenizer, STATIC_LENGTH, None)
    pad_id = int(tokenizer.pad_token_id)
    initial = build_model(settings.model, tokenizer, seed_init=0)
    lengths = split.lengths
    print(f"model={settings.model.name} lang={args.lang} examples={len(split)} batch_size={args.batch_size} "
          f"mean tokens={lengths.mean():.1f} max tokens={lengths.max()} threads={torch.get_num_threads()}")

    plain_order = epoch_batches(lengths, args.batch_size, seed_order=0, epoch=1, group_by_length=False)
    grouped = epoch_batches(lengths, args.batch_size, seed_order=0, epoch=1, group_by_length=True)
    lr = settings.trainer.learning_rate
    static = _samples_per_second(copy.deepcopy(initial), split, plain_order, _static_collate, pad_id, lr)
    project = _samples_per_second(copy.deepcopy(initial), split, grouped, collate, pad_id, lr)
    loop = _loop_samples_per_second(copy.deepcopy(initial), split, settings, pad_id)
    print(f"(b) static padding to {STATIC_LENGTH}: {static:8.2f} samples/s")
    print(f"(a) project data path:        {project:8.2f} samples/s")
    print(f"(c) project training loop:    {loop:8.2f} samples/s")
    print(f"ratio (a)/(b): {project / static:.2f}")
    print(f"ratio (c)/(a): {loop / project:.3f}")


if __name__ == "__main__":
    main()
