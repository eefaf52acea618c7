"""Training throughput and model-FLOPs utilisation (MFU): the project's data path vs static
padding to 256 tokens, in float32 and bfloat16 mixed precision, one run.

    python benchmarks/train_throughput.py --model <HF folder or id | tiny> --data-root DIR --lang fr
                                          [--precisions fp32 bf16] [--device cpu|cuda] [--compile]

The arms train the same initial model on the same examples with the same batch size; arm (a)
uses dynamic padding and length-grouped batches from stability.finetune.batching, arm (b) pads every
batch to 256 tokens, the way a fixed-shape pipeline would, and arm (c) is the project's training
loop itself (`stability.finetune.loop.train`, one epoch at the trainer's current defaults: its
recipe of optimiser, rate policy and stabilisers, all off, and one validation on 8 examples)
over arm (a)'s batches. Arms (a) and (b) step like the loop: its optimiser (fused AdamW,
`stability.finetune.optimizers.adamw`, the trainer's rate and weight decay) and gradient
clipping, so (c)/(a) is the loop's own overhead. Arms (a) and (c) run in every precision of
`--precisions`; arm (b), which asks what padding costs, in fp32 only (skipped when fp32 is not
asked). `--compile` adds arm
(a') per precision: arm (a) with `torch.compile(model, dynamic=True)` (default inductor backend),
after its own warm-up, to see whether a `trainer.compile` option would pay. `dynamic=True`
because dynamic padding gives nearly every batch another length (and the tail batch another
size): the graph is compiled once with symbolic shapes; the default (`dynamic=None`) compiles
for the first batch's shape, then recompiles with dynamic shapes at the first other one, so
the warm-up would time two compiles and a third shape could still recompile inside the timed
pass. The model's `config.problem_type` is set before compiling (the first forward would set
it, and the guard on it would recompile). Compile time depends on inductor's on-disk cache
(TORCHINDUCTOR_CACHE_DIR, /tmp/torchinductor_$USER by default), warm after the first run:
TORCHINDUCTOR_FORCE_DISABLE_CACHES=1 measures a cold compile; TORCH_LOGS=recompiles shows
recompiles.

Precisions: fp32 is plain float32. bf16 is what accelerate does for `mixed_precision=bf16`
(`trainer.mixed_precision=bf16`): float32 weights, gradients and optimiser, the forward pass
(loss included) under `torch.autocast(device, dtype=torch.bfloat16)`; arm (c) gets it from
accelerate itself.

MFU = 6 x N x tokens/s / matmul peak, where
  - N, the non-embedding parameters: all parameters minus those of `model.base_model.embeddings`
    (word, position and token-type embeddings and the embedding LayerNorm); the pooler and the
    classifier head stay in N although they see one token per sequence (1.4% of N in MiniLM-L6);
  - tokens/s: real (non-padding) tokens of the timed pass (warm-up excluded), counted from the
    attention masks of its batches, over its wall time; 6 FLOPs per parameter per token are the
    forward's 2 and the backward's 4; attention's own products (QK^T, AV) are not counted: about
    L / 6d of the counted FLOPs for L tokens and hidden size d (4% for MiniLM at 100 tokens), so
    MFU is a slight underestimate that grows with the length;
  - the matmul peak: measured in the same run on the same device and thread count, a square
    product (n=2048 on CPU, 8192 on CUDA) of plain float32 or bfloat16 tensors (not autocast), 2
    untimed then the median of 5 timed (CUDA synchronised around each). On CUDA, float32 is
    the full-precision product unless `torch.get_float32_matmul_precision()` (printed) is not
    "highest" (TF32), and the model's fp32 pass uses the same setting.

Prints a header (model, examples, tokens, threads, device, on CPU whether it has bf16
instructions, N and the load average, also printed at the end: on a shared CPU, other jobs'
load spoils every number),
then per precision: each arm's samples/s; for arm (a) (and (a')) also real tokens/s, the
model's FLOP/s, the measured matmul peak and MFU in %; for (a') its compile + warm-up time
next to (a)'s warm-up and its steady-state samples/s. Then the ratios (a)/(b), (c)/(a) per
precision (near 1: the loop adds nothing to a bare step), bf16/fp32 for (a) (and (a')), and
(a')/(a) per precision (> 1: compiling pays after the warm-up).
"""
from __future__ import annotations

import argparse
import copy
import os
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import torch
from accelerate import Accelerator
from stability.core.config import compose_config
from stability.core.schemas.train import train_settings
from stability.data.container import texts
from stability.data.loading import load_run_datasets
from stability.finetune.batching import collate, epoch_batches
from stability.finetune.encoding import EncodedSplit, encode
from stability.finetune.loop import to_device, train
from stability.finetune.modeling import build_model, load_tokenizer
from stability.finetune.precision import cpu_bf16_instructions, forget_previous_precision
from stability.finetune.optimizers import adamw

STATIC_LENGTH = 256
PRECISIONS = ("fp32", "bf16")
_WARMUP_BATCHES = 3
_PEAK_SIZE = {"cpu": 2048, "cuda": 8192}
_PEAK_WARMUP, _PEAK_REPEATS = 2, 5
_DTYPE = {"fp32": torch.float32, "bf16": torch.bfloat16}


@dataclass
class Pass:
    """One timed pass over the batches: what it processed, how long it took, and its warm-up."""

    samples: int
    tokens: int
    seconds: float
    warmup_seconds: float

    @property
    def samples_per_second(self) -> float:
        return self.samples / self.seconds

    @property
    def tokens_per_second(self) -> float:
        return self.tokens / self.seconds


def _static_collate(split: EncodedSplit, indices: np.ndarray, pad_id: int) -> dict[str, torch.Tensor]:
    """Pad to a fixed 256 tokens, whatever the batch's own longest sequence."""
    batch = collate(split, indices, pad_id)
    extra = STATIC_LENGTH - batch["input_ids"].shape[1]
    for key, fill in (("input_ids", pad_id), ("token_type_ids", 0), ("attention_mask", 0)):
        batch[key] = torch.nn.functional.pad(batch[key], (0, extra), value=fill)
    return batch


def _timed(work: Callable[[], object], device: torch.device) -> tuple[object, float]:
    """`work()`'s result and wall seconds, the device's queued kernels included."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    started = time.perf_counter()
    result = work()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return result, time.perf_counter() - started


def _train_pass(model, split: EncodedSplit, batches: list[np.ndarray], collate_fn, pad_id: int, trainer,
                device: torch.device, precision: str) -> Pass:
    """Time one pass over `batches` after a few untimed warm-up steps; `model` is on `device`,
    `trainer` the trainer settings (the optimiser's rate and weight decay)."""
    model.train()
    optimizer = adamw(model.parameters(), trainer.learning_rate, trainer.weight_decay)
    torch.manual_seed(0)

    def step(indices: np.ndarray) -> int:
        batch = collate_fn(split, indices, pad_id)
        tokens = int(batch["attention_mask"].sum())
        batch = to_device(batch, device)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=precision == "bf16"):
            loss = model(**batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), trainer.max_grad_norm)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return tokens

    _, warmup = _timed(lambda: [step(indices) for indices in batches[:_WARMUP_BATCHES]], device)
    tokens, seconds = _timed(lambda: sum(step(indices) for indices in batches), device)
    return Pass(sum(len(b) for b in batches), tokens, seconds, warmup)


def _loop_samples_per_second(model, split: EncodedSplit, settings, pad_id: int, device: torch.device,
                             precision: str) -> float:
    """One epoch of the project's own loop (its validation on 8 examples included)."""
    validation = EncodedSplit(split.input_ids[:8], split.token_type_ids[:8], split.labels[:8])
    forget_previous_precision()  # as a run does: this process's other arm used another precision
    accelerator = Accelerator(mixed_precision="bf16" if precision == "bf16" else "no", cpu=device.type == "cpu")
    _, seconds = _timed(lambda: train(model, split, validation, settings, accelerator, pad_id, None,
                                      lambda entry: None, lambda log: None), device)
    return len(split) / seconds


def _matmul_peak(device: torch.device, precision: str) -> float:
    """FLOP/s of a square matrix product in the precision's dtype: median of the timed repeats."""
    n = _PEAK_SIZE[device.type]
    a, b = (torch.randn(n, n, device=device, dtype=_DTYPE[precision]) for _ in range(2))
    seconds = [_timed(lambda: torch.mm(a, b), device)[1] for _ in range(_PEAK_WARMUP + _PEAK_REPEATS)]
    return 2 * n ** 3 / statistics.median(seconds[_PEAK_WARMUP:])


def _non_embedding_parameters(model) -> int:
    """All parameters but the embedding module's (word, position, token type, its LayerNorm)."""
    embedding = sum(p.numel() for p in model.base_model.embeddings.parameters())
    return sum(p.numel() for p in model.parameters()) - embedding


def _flops(value: float) -> str:
    return f"{value / 1e12:.2f} TFLOP/s" if value >= 1e12 else f"{value / 1e9:.1f} GFLOP/s"


def _report(label: str, timed: Pass, parameters: int, peak: float) -> None:
    model_flops = 6 * parameters * timed.tokens_per_second
    print(f"  {label}: {timed.samples_per_second:8.2f} samples/s, {timed.tokens_per_second:9.1f} real tokens/s, "
          f"model {_flops(model_flops)}, matmul peak {_flops(peak)}, MFU {100 * model_flops / peak:.2f}%",
          flush=True)


def _compiled(initial, device: torch.device):
    """A copy of `initial` on `device` under `torch.compile(dynamic=True)`, compiled at its first call."""
    torch.compiler.reset()  # each precision's compile from scratch, as in a fresh process
    model = copy.deepcopy(initial).to(device)
    # what the first forward would set; set beforehand, it spares a recompile (a guard on it)
    model.config.problem_type = "single_label_classification"
    return torch.compile(model, dynamic=True)


def _precision_arms(precision: str, initial, split: EncodedSplit, batches: list[np.ndarray], settings,
                    pad_id: int, device: torch.device, compiled: bool) -> dict[str, float]:
    """Arms (a), (c) and, with `compiled`, (a') in one precision; prints them, returns samples/s."""
    parameters = _non_embedding_parameters(initial)
    trainer = settings.trainer
    peak = _matmul_peak(device, precision)
    print(f"{precision}:", flush=True)
    eager = copy.deepcopy(initial).to(device)
    project = _train_pass(eager, split, batches, collate, pad_id, trainer, device, precision)
    _report("(a)  project data path     ", project, parameters, peak)
    rates = {"a": project.samples_per_second}
    if compiled:
        faster = _train_pass(_compiled(initial, device), split, batches, collate, pad_id, trainer, device, precision)
        _report("(a') (a) + torch.compile  ", faster, parameters, peak)
        print(f"       (a'): compile + warm-up {faster.warmup_seconds:.1f} s "
              f"((a)'s warm-up {project.warmup_seconds:.1f} s, {_WARMUP_BATCHES} batches each)", flush=True)
        rates["compiled"] = faster.samples_per_second
    rates["c"] = _loop_samples_per_second(copy.deepcopy(initial), split, settings, pad_id, device, precision)
    print(f"  (c)  project training loop: {rates['c']:8.2f} samples/s", flush=True)
    return rates


def _print_ratios(static: float | None, rates: dict[str, dict[str, float]]) -> None:
    if static is not None:
        print(f"ratio (a)/(b) fp32: {rates['fp32']['a'] / static:.2f}")
    for precision, rate in rates.items():
        print(f"ratio (c)/(a) {precision}: {rate['c'] / rate['a']:.3f}")
        if "compiled" in rate:
            print(f"ratio (a')/(a) {precision}, compiled/eager: {rate['compiled'] / rate['a']:.3f}")
    if {"fp32", "bf16"} <= rates.keys():
        for arm in ("a", "compiled"):
            if arm in rates["fp32"]:
                name = "(a')" if arm == "compiled" else "(a)"
                print(f"ratio bf16/fp32 {name}: {rates['bf16'][arm] / rates['fp32'][arm]:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="tiny", help="HF id or local folder, or 'tiny'")
    parser.add_argument("--lang", default="fr")
    parser.add_argument("--data-root", default=None, help="data.root; omit for the built-in data")
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--samples", type=int, default=400, help="training examples timed per arm")
    parser.add_argument("--precisions", nargs="+", choices=PRECISIONS, default=list(PRECISIONS))
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--compile", action="store_true",
                        help="add arm (a'): arm (a) with torch.compile(model, dynamic=True)")
    args = parser.parse_args()
    device = torch.device(args.device)
    precisions = list(dict.fromkeys(args.precisions))

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
    hardware = (f"cpu bf16 instructions: {', '.join(cpu_bf16_instructions()) or 'none'}" if device.type == "cpu" else
                f"{torch.cuda.get_device_name(device)}, float32 matmul precision "
                f"{torch.get_float32_matmul_precision()}")
    print(f"model={settings.model.name} lang={args.lang} examples={len(split)} batch_size={args.batch_size} "
          f"mean tokens={lengths.mean():.1f} max tokens={lengths.max()} threads={torch.get_num_threads()} "
          f"device={device} ({hardware}) non-embedding parameters={_non_embedding_parameters(initial):,} "
          f"of {sum(p.numel() for p in initial.parameters()):,} load={os.getloadavg()[0]:.2f}", flush=True)

    plain_order = epoch_batches(lengths, args.batch_size, seed_order=0, epoch=1, group_by_length=False)
    grouped = epoch_batches(lengths, args.batch_size, seed_order=0, epoch=1, group_by_length=True)
    static = None
    if "fp32" in precisions:
        static = _train_pass(copy.deepcopy(initial).to(device), split, plain_order, _static_collate, pad_id,
                             settings.trainer, device, "fp32").samples_per_second
        print(f"(b) static padding to {STATIC_LENGTH}, fp32: {static:8.2f} samples/s", flush=True)
    rates = {precision: _precision_arms(precision, initial, split, grouped, settings, pad_id, device, args.compile)
             for precision in precisions}
    _print_ratios(static, rates)
    print(f"load={os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
