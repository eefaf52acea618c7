"""Seeds fused into one model vs the same seeds trained one after another and packed on one device:
training examples/s for K = 1, 2, 4 (8, 16 on request) at batch size 4, in float32 (and bf16 on
request).

    python benchmarks/fused_sweep.py [--device cuda|cpu] [--shape mbert|small] [--ks 1 2 4 8 16]
                                     [--steps 30] [--warmup 3] [--samples 1000] [--attention sdpa eager]
                                     [--precisions fp32 bf16] [--graphs] [--bucket 32] [--evaluate]
                                     [--compile-backend inductor|aot_eager] [--json FILE]

The model is `packed_sweep.py`'s: BERT-base's shape with mBERT's vocabulary size and random
weights, saved once as a local checkpoint and loaded as a run loads mBERT (`--shape small`: 2
layers, 64 wide, for the tests), trained on the built-in French pairs (`--samples` of them) with
the trainer's defaults (fused AdamW, constant rate, clipping to 1.0, dropout 0.1), in each precision
of `--precisions`: fp32, or bf16 as `trainer.mixed_precision=bf16` trains (the forward under autocast).

For each K, on the same device, these arms train seeds 0..K-1 for `--steps` optimiser steps
each, after `--warmup` untimed steps:

- solo: the K seeds one after another, each its own model stepped by the solo loop's own step
  (`stability.finetune.loop.train_step`) over its own seed's batches;
- packed (K > 1): the same K solo seeds at once, one process each on the one device, as
  `hydra.launcher=local_gpus hydra.launcher.jobs_per_device=K` packs runs (on a CPU the cores split
  between them, `stability.sweep.devices.split_cpu`); timed from the moment every process has
  warmed up to the last one's end;
- fused: the K seeds as one `stability.finetune.fused.FusedMembers`, each member on its own
  seed's batches, padded to a common width per step;
- fused-aligned (K > 1): the same, each member's batches in the order `trainer.fuse_align_lengths=true`
  gives them (`batching.aligned_orders`: aligned by width across the members), so less is padding;
- fused-graphs (`--graphs`): the fused arm with the members' forward and backward compiled
  (`torch.compile`, static shapes: each step padded to a multiple of `--bucket` tokens), as CUDA
  graphs on a GPU (`mode="reduce-overhead"`: a step replays its graph in one launch, where the
  time of small batches goes to launching kernels one by one); on a CPU, inductor's code without
  graphs (`--compile-backend aot_eager`: the capture alone, no code generated). The engine
  compiles nothing: this arm measures whether it should;
- solo-eval and fused-eval (`--evaluate`): not training but a validation pass, dropout off, over the
  `--samples` pairs in batches of `trainer.eval_batch_size`: each seed's model in turn
  (`loop.predict_entailment_probability`) against the K members at once
  (`FusedMembers.predict_entailment_probability`). Without dropout torch's SDPA takes its flash
  kernel, which has no vmap batching rule on a CPU: vmap runs it member by member (the "performance
  drop" warning the fused engine silences), so this arm is where SDPA and eager attention differ.

Per arm: training examples/s (K x steps x batch size over the timed wall time), the study's runs
per hour at that rate (a run of the jiant recipe: 7,000 steps of batch 4, 28,000 examples), the
share of the tokens stepped that are padding, and the model-FLOPs utilisation, 6 x non-embedding
parameters x real tokens/s over the matrix-product peak in the arm's precision measured in the
same run (`train_throughput.py`'s definition). Then each arm over solo and over packed: the
ratios that answer whether fusing pays on the device at hand, against one run at a time and
against what a packed sweep gets today. `--attention` runs the arms under each of the model's
attention implementations (torch's SDPA has no vmap batching rule on every device; eager attention
is plain matrix products, which vmap batches). Only speed is measured here; that a fused member
trains as its solo run does is tests/finetune/test_fused.py's.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import tempfile
import time
from argparse import Namespace
from dataclasses import asdict, astuple, dataclass, replace
from functools import partial
from pathlib import Path
from typing import Callable

import numpy as np
import torch
import transformers

from packed_sweep import build_checkpoint
from train_throughput import _matmul_peak, _non_embedding_parameters

from stability.core.config import compose_config
from stability.core.schemas.train import train_settings
from stability.data.container import texts
from stability.data.loading import load_run_datasets
from stability.finetune.batching import aligned_orders, collate, epoch_batches
from stability.finetune.encoding import EncodedSplit, encode
from stability.finetune.fused import FusedMembers, build_members, collate_members
from stability.finetune.loop import predict_entailment_probability, to_device, train_step
from stability.finetune.modeling import build_model, load_tokenizer
from stability.finetune.precision import forget_previous_precision
from stability.finetune.recipe import prepare
from stability.sweep.devices import split_cpu

# the benchmark's precisions as trainer.mixed_precision takes them
PRECISIONS = {"fp32": "no", "bf16": "bf16"}
# the fused arm whose members' batches are aligned by width
ALIGNED = "fused-aligned"
# the K solo seeds as K processes on one device
PACKED = "packed"
# the fused arm compiled with static, width-bucketed shapes (CUDA graphs on a GPU)
GRAPHS = "fused-graphs"
# a validation pass, dropout off: each seed's model in turn, and the K members at once
SOLO_EVAL, FUSED_EVAL = "solo-eval", "fused-eval"
# a run of the study's recipe (jiant: 7,000 steps of batch 4)
STUDY_RUN_EXAMPLES = 28_000


@dataclass
class Arm:
    """One timed arm: how K seeds were trained and what it measured."""

    engine: str
    precision: str
    attention: str
    members: int
    steps: int
    examples: int
    seconds: float
    examples_per_second: float
    study_runs_per_hour: float
    padding_share: float
    mfu: float


def step_batches(split: EncodedSplit, batch_size: int, seed_order: int, steps: int) -> list[np.ndarray]:
    """The first `steps` batches a run of `seed_order` trains on, epoch after epoch, full batches only
    (every member steps on as many examples)."""
    batches: list[np.ndarray] = []
    epoch = 1
    while len(batches) < steps:
        batches += [b for b in epoch_batches(split.lengths, batch_size, seed_order, epoch, True) if len(b) == batch_size]
        epoch += 1
    return batches[:steps]


def aligned_step_batches(split: EncodedSplit, batch_size: int, seeds: list[int], steps: int) -> list[list[np.ndarray]]:
    """Each seed's first `steps` full batches, epoch after epoch, in the orders aligned by width across the
    seeds that `trainer.fuse_align_lengths` trains on (the group's generator per epoch, as `fused_loop`)."""
    orders: list[list[np.ndarray]] = [[] for _ in seeds]
    epoch = 1
    while len(orders[0]) < steps:
        full = [[b for b in epoch_batches(split.lengths, batch_size, seed, epoch, True) if len(b) == batch_size]
                for seed in seeds]
        for order, batches in zip(orders, aligned_orders(full, split.lengths, np.random.default_rng([*seeds, epoch]))):
            order += batches
        epoch += 1
    return [order[:steps] for order in orders]


def _synchronised(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


@dataclass
class Timed:
    """One timed stretch of steps: when it started and ended (`time.monotonic`, one clock for every
    process of the machine) and the real and stepped tokens of its batches."""

    started: float
    ended: float
    real: int
    stepped: int


def _timed_steps(step: Callable[[int], tuple[int, int]], warmup: int, steps: int, device: torch.device,
                 warmed_up: Callable[[], object] = lambda: None) -> Timed:
    """Run `warmup` untimed calls of step(i) -> (real tokens, stepped tokens), then `warmed_up()`
    (untimed), then `steps` timed calls."""
    for i in range(warmup):
        step(i)
    _synchronised(device)
    warmed_up()
    real = stepped = 0
    started = time.monotonic()
    for i in range(warmup, warmup + steps):
        got_real, got_stepped = step(i)
        real, stepped = real + got_real, stepped + got_stepped
    _synchronised(device)
    return Timed(started, time.monotonic(), real, stepped)


def solo_seed(settings, tokenizer, split: EncodedSplit, seed: int, args: Namespace, device: torch.device,
              warmed_up: Callable[[], object] = lambda: None) -> Timed:
    """One seed through the solo loop's step, on its own seed's batches."""
    from accelerate import Accelerator

    model = build_model(settings.model, tokenizer, seed)
    model.set_attn_implementation(args.current_attention)
    batches = step_batches(split, settings.trainer.batch_size, seed, args.warmup + args.steps)
    recipe = prepare(model, settings.trainer, len(batches), seed * 1000)
    forget_previous_precision()
    accelerator = Accelerator(cpu=device.type == "cpu", mixed_precision=settings.trainer.mixed_precision)
    model, optimizer = accelerator.prepare(model, recipe.optimizer)
    model.train()

    def step(i: int) -> tuple[int, int]:
        batch = to_device(collate(split, batches[i], tokenizer.pad_token_id), device)
        train_step(model, batch, optimizer, recipe, accelerator, settings.trainer.max_grad_norm)
        return int(batch["attention_mask"].sum()), batch["attention_mask"].numel()

    return _timed_steps(step, args.warmup, args.steps, device, warmed_up)


def solo_arm(settings, tokenizer, split: EncodedSplit, seeds: list[int], args: Namespace,
             device: torch.device) -> tuple[float, int, int]:
    """The seeds one after another through the solo loop's step; summed seconds and tokens."""
    timed = [solo_seed(settings, tokenizer, split, seed, args, device) for seed in seeds]
    return (sum(t.ended - t.started for t in timed), sum(t.real for t in timed), sum(t.stepped for t in timed))


def _packed_seed(settings, tokenizer, split: EncodedSplit, seed: int, args: Namespace, device: torch.device,
                 all_warmed_up, results) -> None:
    """One seed of the packed arm, in a process of its own: its share of the CPU's cores (on a CPU),
    then its solo steps, timed once every process of the arm has warmed up."""
    transformers.logging.set_verbosity_error()
    if device.type == "cpu":
        split_cpu(len(args.packed_seeds))
    # a tuple: the class pickled in a spawned process would name its __mp_main__
    results.put(astuple(solo_seed(settings, tokenizer, split, seed, args, device, all_warmed_up.wait)))


def packed_arm(settings, tokenizer, split: EncodedSplit, seeds: list[int], args: Namespace,
               device: torch.device) -> tuple[float, int, int]:
    """The seeds at once, a process each on the one device (spawned: CUDA cannot be forked); the seconds
    from the first process's timed start to the last one's end, and the tokens of all."""
    context = torch.multiprocessing.get_context("spawn")
    all_warmed_up, results = context.Barrier(len(seeds)), context.SimpleQueue()
    args = Namespace(**vars(args), packed_seeds=seeds)
    processes = [context.Process(target=_packed_seed, args=(settings, tokenizer, split, seed, args, device,
                                                            all_warmed_up, results)) for seed in seeds]
    for process in processes:
        process.start()
    for process in processes:
        process.join()
    if any(process.exitcode for process in processes):
        raise RuntimeError(f"a packed seed's process failed (exit codes {[p.exitcode for p in processes]})")
    timed = [Timed(*results.get()) for _ in seeds]
    return (max(t.ended for t in timed) - min(t.started for t in timed), sum(t.real for t in timed),
            sum(t.stepped for t in timed))


def bucketed(batch: dict[str, torch.Tensor], bucket: int, pad_id: int) -> dict[str, torch.Tensor]:
    """A fused step's batch (members × rows × width) padded further to the next multiple of `bucket`
    tokens: few distinct shapes, each compiled once."""
    width = batch["input_ids"].shape[-1]
    extra = -width % bucket
    fill = {"input_ids": pad_id, "token_type_ids": 0, "attention_mask": 0}
    return {key: torch.nn.functional.pad(value, (0, extra), value=fill[key]) if key in fill else value
            for key, value in batch.items()}


def fused_arm(settings, tokenizer, split: EncodedSplit, seeds: list[int], args: Namespace,
              device: torch.device, aligned: bool = False, graphs: bool = False) -> tuple[float, int, int]:
    """The seeds as one FusedMembers, each member on its own seed's batches (`aligned`: in orders aligned
    by width). `graphs`: the members' forward and backward compiled with static shapes, the batches
    padded to width buckets of `--bucket` tokens, with `mode="reduce-overhead"` on a GPU (each step
    replays CUDA graphs, one launch instead of one per kernel) and inductor's default on a CPU (no
    graphs there); every bucket the timed steps use is compiled before the timing."""
    members = build_members(settings.model, tokenizer, settings.trainer, seeds)
    for member in members:
        member.set_attn_implementation(args.current_attention)
        member.to(device)
    steps = args.warmup + args.steps
    orders = (aligned_step_batches(split, settings.trainer.batch_size, seeds, steps) if aligned
              else [step_batches(split, settings.trainer.batch_size, seed, steps) for seed in seeds])
    fused = FusedMembers(members, settings.trainer, len(orders[0]))
    fused.train()
    compile_first: list[int] = []
    if graphs:
        torch._dynamo.reset()     # each arm compiles its own members
        # what the model's first forward sets, set before the capture so that it is not captured twice
        fused._base.config.problem_type = "single_label_classification"
        graphed = args.compile_backend == "inductor" and device.type == "cuda"
        fused.members_forward = torch.compile(fused.members_forward, backend=args.compile_backend, fullgraph=True,
                                              dynamic=False,
                                              mode="reduce-overhead" if graphed else None)
        buckets = [-(-max(int(split.lengths[order[i]].max()) for order in orders) // args.bucket) for i in range(steps)]
        compile_first = [buckets.index(bucket) for bucket in dict.fromkeys(buckets[args.warmup:])]

    def step(i: int) -> tuple[int, int]:
        batch = collate_members(split, [order[i] for order in orders], tokenizer.pad_token_id)
        if graphs:
            batch = bucketed(batch, args.bucket, tokenizer.pad_token_id)
        batch = {key: value.to(device) for key, value in batch.items()}
        fused.step(batch)
        return int(batch["attention_mask"].sum()), batch["attention_mask"].numel()

    timed = _timed_steps(step, args.warmup, args.steps, device, lambda: [step(i) for i in compile_first])
    return timed.ended - timed.started, timed.real, timed.stepped


def _evaluated(predict: Callable[[], object], split: EncodedSplit, members: int) -> tuple[float, int, int]:
    """`predict()` timed once after one untimed pass; the real and stepped tokens of `members` passes."""
    predict()
    started = time.monotonic()
    predict()
    real = int(split.lengths.sum()) * members
    return time.monotonic() - started, real, real   # padding of evaluation batches is not counted


def solo_eval_arm(settings, tokenizer, split: EncodedSplit, seeds: list[int], args: Namespace,
                  device: torch.device) -> tuple[float, int, int]:
    """The seeds' models one after another through the solo validation pass."""
    from accelerate import Accelerator

    accelerator = Accelerator(cpu=device.type == "cpu")
    models = [build_model(settings.model, tokenizer, seed).to(device) for seed in seeds]
    for model in models:
        model.set_attn_implementation(args.current_attention)
    return _evaluated(lambda: [predict_entailment_probability(model, split, settings.trainer.eval_batch_size,
                                                              accelerator, tokenizer.pad_token_id) for model in models],
                      split, len(seeds))


def fused_eval_arm(settings, tokenizer, split: EncodedSplit, seeds: list[int], args: Namespace,
                   device: torch.device) -> tuple[float, int, int]:
    """The seeds as one FusedMembers through the fused validation pass."""
    members = build_members(settings.model, tokenizer, settings.trainer, seeds)
    for member in members:
        member.set_attn_implementation(args.current_attention)
        member.to(device)
    fused = FusedMembers(members, settings.trainer, 1)
    return _evaluated(lambda: fused.predict_entailment_probability(split, settings.trainer.eval_batch_size,
                                                                   tokenizer.pad_token_id), split, len(seeds))


def measure(engine: str, precision: str, settings, tokenizer, split: EncodedSplit, members: int, args: Namespace,
            device: torch.device, parameters: int, peak: float) -> Arm:
    arm = {"solo": solo_arm, PACKED: packed_arm, SOLO_EVAL: solo_eval_arm, FUSED_EVAL: fused_eval_arm}.get(engine) \
        or partial(fused_arm, aligned=engine == ALIGNED, graphs=engine == GRAPHS)
    at_precision = replace(settings, trainer=replace(settings.trainer, mixed_precision=PRECISIONS[precision]))
    seconds, real, stepped = arm(at_precision, tokenizer, split, list(range(members)), args, device)
    examples = members * (len(split) if engine in (SOLO_EVAL, FUSED_EVAL) else args.steps * settings.trainer.batch_size)
    rate = examples / seconds
    return Arm(engine, precision, args.current_attention, members, args.steps, examples, seconds, rate,
               rate * 3600 / STUDY_RUN_EXAMPLES, 1 - real / stepped, 6 * parameters * real / seconds / peak)


def _print_table(arms: list[Arm]) -> None:
    print("| precision | attention | K | engine | examples/s | study runs/hour | padding | MFU | / solo | / packed |")
    print("|---|---|---:|---|---:|---:|---:|---:|---:|---:|")
    by_engine = {(a.engine, a.precision, a.attention, a.members): a.examples_per_second for a in arms}

    def ratio(a: Arm, baseline: str) -> str:
        if a.engine in (SOLO_EVAL, FUSED_EVAL):   # a pass, against the solo pass
            baseline = SOLO_EVAL if baseline == "solo" else ""
        base = by_engine.get((baseline, a.precision, a.attention, a.members))
        return f"{a.examples_per_second / base:.2f}" if base and a.engine not in ("solo", SOLO_EVAL, baseline) else ""

    for a in arms:
        print(f"| {a.precision} | {a.attention} | {a.members} | {a.engine} | {a.examples_per_second:.1f} "
              f"| {a.study_runs_per_hour:.1f} | {a.padding_share:.1%} | {a.mfu:.2%} | {ratio(a, 'solo')} "
              f"| {ratio(a, PACKED)} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--shape", choices=("mbert", "small"), default="mbert")
    parser.add_argument("--pieces", type=int, default=8_000, help="word pieces learnt from the text")
    parser.add_argument("--lang", default="fr")
    parser.add_argument("--samples", type=int, default=1_000, help="training examples the batches are drawn from")
    parser.add_argument("--ks", type=int, nargs="+", default=[1, 2, 4], help="seeds fused (and trained solo)")
    parser.add_argument("--steps", type=int, default=30, help="timed optimiser steps per seed")
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps per seed before them")
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--attention", nargs="+", choices=("sdpa", "eager"), default=["sdpa"])
    parser.add_argument("--precisions", nargs="+", choices=tuple(PRECISIONS), default=["fp32"])
    parser.add_argument("--graphs", action="store_true",
                        help=f"also the {GRAPHS} arm: the fused step compiled (CUDA graphs on a GPU)")
    parser.add_argument("--evaluate", action="store_true",
                        help=f"also the {SOLO_EVAL} and {FUSED_EVAL} arms: a validation pass, dropout off")
    parser.add_argument("--bucket", type=int, default=32, help=f"the {GRAPHS} arm's width buckets, in tokens")
    parser.add_argument("--compile-backend", choices=("inductor", "aot_eager"), default="inductor",
                        help=f"the {GRAPHS} arm's torch.compile backend: inductor (generated kernels, CUDA graphs "
                             "on a GPU) or aot_eager (the same capture, no code generated: seconds, for the tests)")
    parser.add_argument("--json", type=Path, default=None, help="also write every figure to this file")
    args = parser.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: torch sees no CUDA device here; pass --device cpu")
    if min(args.ks) < 1 or args.steps < 1 or args.warmup < 0 or args.bucket < 1:
        parser.error("--ks, --steps and --bucket must be at least 1, --warmup at least 0")
    transformers.logging.set_verbosity_error()    # each solo model's load report
    device = torch.device(args.device)
    name = torch.cuda.get_device_name() if args.device == "cuda" else f"CPU, {len(os.sched_getaffinity(0))} cores"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "model"
        shape = Namespace(lang=args.lang, samples=args.samples, data_root=None, shape=args.shape, pieces=args.pieces)
        total, mean_tokens = build_checkpoint(shape, folder)
        settings = train_settings(compose_config([
            f"lang={args.lang}", "data.source=builtin", f"data.max_train_samples={args.samples}",
            f"model.name={folder}", "model.kind=pretrained", f"trainer.batch_size={args.batch_size}",
            f"paths.cache_dir={Path(tmp) / 'cache'}"]))
        data = load_run_datasets(settings)
        tokenizer = load_tokenizer(settings.model, texts([data.train]), Path(tmp) / "cache")
        split, _ = encode(data.train, tokenizer, settings.data.max_length, None)
        parameters = _non_embedding_parameters(build_model(settings.model, tokenizer, 0))
        peaks = {precision: _matmul_peak(device, precision) for precision in args.precisions}
        peak_line = ", ".join(f"{precision} {peak / 1e12:.3f} TFLOP/s" for precision, peak in peaks.items())
        print(f"device: {name}; model: {args.shape} shape, {total / 1e6:.1f}M parameters ({parameters / 1e6:.1f}M "
              f"outside the embeddings), random weights, {mean_tokens:.1f} tokens per training pair; "
              f"batch_size={args.batch_size} steps={args.steps} (+{args.warmup} warm-up) per seed; matmul peak "
              f"{peak_line}; load average {os.getloadavg()[0]:.2f}", flush=True)
        arms: list[Arm] = []
        for precision, attention in itertools.product(args.precisions, args.attention):
            args.current_attention = attention
            for members in args.ks:
                engines = ["solo", PACKED, "fused", ALIGNED] if members > 1 else ["solo", "fused"]
                for engine in engines + [GRAPHS] * args.graphs + [SOLO_EVAL, FUSED_EVAL] * args.evaluate:
                    arm = measure(engine, precision, settings, tokenizer, split, members, args, device, parameters,
                                  peaks[precision])
                    arms.append(arm)
                    print(f"{precision} {attention} K={members} {engine}: {arm.examples_per_second:.1f} examples/s "
                          f"({arm.seconds:.1f} s)", flush=True)
                    if args.json:
                        args.json.write_text(json.dumps({"device": name, "parameters": total,
                                                         "non_embedding_parameters": parameters, "peak_flops": peaks,
                                                         "arguments": {k: v for k, v in vars(args).items()
                                                                       if k != "current_attention"},
                                                         "arms": [asdict(a) for a in arms]}, indent=2, default=str))
    _print_table(arms)
    print(f"load average at the end: {os.getloadavg()[0]:.2f} (other jobs' load spoils every figure)")


if __name__ == "__main__":
    sys.exit(main())
