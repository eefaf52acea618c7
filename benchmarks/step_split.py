"""One training step split into forward, backward and optimiser time, with every parameter trained
(the baseline) and with the word-embedding matrix frozen (`trainer.freeze_embeddings=true`), in one run.

    python benchmarks/step_split.py --model <HF folder or id | tiny> [--lang fr] [--data-root DIR]
                                    [--batch-size 16] [--steps 20] [--max-length 256]

A model whose vocabulary is large (multilingual-e5-small: 250,037 × 384 = 96 M of its 117.5 M
parameters) spends part of every step on its embedding matrix although a batch touches a few hundred
rows of it: the dense gradient (zeroed, scattered into, clipped) and AdamW's update of every row. Both
arms build the same initial model (seed 0) and step it through the project's own recipe
(`finetune.recipe.prepare`: fused AdamW over the parameters it trains) on the same batches, the run's
length-grouped batches of the language's training pairs (`batching.epoch_batches`), in the order of
`loop.train_step`: forward (the loss), backward, then the optimiser part: gradient clipping, the
optimiser's step and `zero_grad`. Each part is timed on its own (CUDA synchronised around it), after
2 untimed warm-up steps; a step's parts are summed over `--steps` steps.

Prints a header (model, parameters, embedding share, batches, threads, device, load average), per arm
the seconds per step of each part and its share of the step, examples/s, and the ratio of the frozen
arm's time to the baseline's per part and per step (< 1: freezing saves that share). On a shared CPU
other jobs' load spoils every number: the load average is printed before and after.
"""
from __future__ import annotations

import argparse
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from stability.core.config import compose_config
from stability.core.schemas.train import train_settings
from stability.data.container import texts
from stability.data.loading import load_run_datasets
from stability.finetune.batching import collate, epoch_batches
from stability.finetune.encoding import encode
from stability.finetune.loop import to_device
from stability.finetune.modeling import build_model, load_tokenizer
from stability.finetune.recipe import prepare

PARTS = ("forward", "backward", "optimiser")
ARMS = {"full": "trainer.freeze_embeddings=false", "frozen embeddings": "trainer.freeze_embeddings=true"}
_WARMUP = 2


@dataclass
class Split:
    """Seconds spent in each part over the timed steps, and the examples they trained on."""

    seconds: dict[str, float]
    examples: int

    @property
    def step(self) -> float:
        return sum(self.seconds.values())


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _clock(device: torch.device) -> float:
    _sync(device)
    return time.perf_counter()


def timed_steps(model, settings, split, batches: list[np.ndarray], pad_id: int, device: torch.device) -> Split:
    """Step `model` through its recipe on `batches` (the first `_WARMUP` untimed), each part timed."""
    recipe = prepare(model, settings.trainer, len(batches), 0)
    model.train()
    seconds = dict.fromkeys(PARTS, 0.0)
    for number, indices in enumerate(batches):
        batch = to_device(collate(split, indices, pad_id), device)
        started = _clock(device)
        loss = model(**batch).loss
        forward = _clock(device)
        loss.backward()
        backward = _clock(device)
        torch.nn.utils.clip_grad_norm_(model.parameters(), settings.trainer.max_grad_norm)
        recipe.optimizer.step()
        recipe.optimizer.zero_grad(set_to_none=True)
        ended = _clock(device)
        if number >= _WARMUP:
            for part, value in zip(PARTS, (forward - started, backward - forward, ended - backward)):
                seconds[part] += value
    return Split(seconds, sum(len(b) for b in batches[_WARMUP:]))


def settings_for(args: argparse.Namespace, arm: str):
    overrides = [f"lang={args.lang}", f"trainer.batch_size={args.batch_size}", f"data.max_length={args.max_length}",
                 ARMS[arm]]
    if args.model == "tiny":
        overrides.append("model=tiny")
    else:
        overrides += ["model=multilingual_e5_small", f"model.name={args.model}"]
    overrides += [f"data.root={args.data_root}"] if args.data_root else ["data.source=builtin"]
    return train_settings(compose_config(overrides))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="tiny", help="HF id or local folder, or 'tiny'")
    parser.add_argument("--lang", default="fr")
    parser.add_argument("--data-root", default=None, help="data.root; omit for the built-in data")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--steps", type=int, default=20, help="timed steps per arm (after 2 untimed)")
    parser.add_argument("--max-length", type=int, default=256)
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()
    device = torch.device(args.device)
    load = os.getloadavg()[0]
    splits: dict[str, Split] = {}
    for arm in ARMS:
        settings = settings_for(args, arm)
        data = load_run_datasets(settings)
        tokenizer = load_tokenizer(settings.model, texts([data.train]), Path(settings.paths.cache_dir).expanduser())
        split, _ = encode(data.train, tokenizer, settings.data.max_length, None)
        batches = epoch_batches(split.lengths, args.batch_size, 0, 1, True)[:args.steps + _WARMUP]
        model = build_model(settings.model, tokenizer, 0).to(device)
        if not splits:
            total = sum(p.numel() for p in model.parameters())
            words = model.get_input_embeddings().weight.numel()
            tokens = sum(int(split.lengths[b].sum()) for b in batches[_WARMUP:])
            print(f"model {settings.model.name}: {total / 1e6:.1f} M parameters, word embeddings {words / 1e6:.1f} M "
                  f"({100 * words / total:.0f} %); {len(batches) - _WARMUP} timed steps of batch {args.batch_size} "
                  f"({tokens / (len(batches) - _WARMUP):.0f} real tokens a step, {args.lang}); device {device}, "
                  f"{torch.get_num_threads()} threads; load average {load:.2f}", flush=True)
        splits[arm] = timed_steps(model, settings, split, batches, tokenizer.pad_token_id, device)
        done = splits[arm]
        steps = len(batches) - _WARMUP
        shares = ", ".join(f"{part} {done.seconds[part] / steps:.3f} s ({100 * done.seconds[part] / done.step:.0f} %)"
                           for part in PARTS)
        print(f"{arm:>17}: step {done.step / steps:.3f} s = {shares}; {done.examples / done.step:.2f} examples/s",
              flush=True)
    full, frozen = splits["full"], splits["frozen embeddings"]
    ratios = ", ".join(f"{part} {frozen.seconds[part] / full.seconds[part]:.2f}" for part in PARTS)
    print(f"frozen / full: step {frozen.step / full.step:.2f}; {ratios}; load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
