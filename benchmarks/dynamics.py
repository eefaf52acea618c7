"""What `trainer.dynamics=true` costs: the same run trained with and without recording, side by side.

    python benchmarks/dynamics.py --model <HF folder or id | tiny> --data-root DIR --lang fr \
        [--samples N] [--validation-samples N] [--diagnostic-samples N] [--epochs 2] [--rounds 3] \
        [--eval-tokens-per-batch T] [--pass-tokens 2048] [--before] [--threads N]

Both arms train the same initial model on the same examples through the project's training loop
(`stability.finetune.loop.train`, the trainer's defaults, validation after each epoch) and then
take the trained model's diagnostic predictions as a run does (`loop.predict_diagnostic`); arm (b)
also records the dynamics into a run directory as a run does (`stability.finetune.dynamics`):
P(entailment) of every training item from its training pass, the validation predictions, and
one pass over the diagnostic set per validation, whose pass at the best validation is the run's
final one; with `--before`, arm (c) records them too but makes its final diagnostic pass anew,
as runs did before that reuse. Each round runs every arm from the same weights, in alternating
order ((a, b), then (b, a), ...), so a machine whose load drifts weighs on both alike; the ratio (b)/(a) is taken per
round against (a), in wall-clock seconds and in the process's CPU seconds (the steadier figure on a machine
other jobs share), and printed as the median over rounds with its range. Also printed: one
diagnostic pass alone (CPU seconds, the best of two), batched by `trainer.eval_batch_size`
examples and by `--pass-tokens` tokens (`trainer.eval_tokens_per_batch`), with the largest
difference in P(entailment) between the two; and the bytes the dynamics take in the run directory.

The training set is the release's whole one (2,616 French pairs, against 307 validation and 1,104
diagnostic items); `--samples N` trains on its first N, e.g. as many as the diagnostic set has
(the dearest case where the diagnostic set is no larger). `--validation-samples` and
`--diagnostic-samples` take the first N of those sets, to measure the same proportions at a
smaller scale.
"""
from __future__ import annotations

import argparse
import copy
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from accelerate import Accelerator
from stability.core.config import compose_config
from stability.core.runrecord import RunDir
from stability.core.schemas.train import train_settings
from stability.data.container import texts, to_examples
from stability.data.loading import load_run_datasets
from stability.finetune.dynamics import DynamicsRecorder, DynamicsWriter
from stability.finetune.encoding import EncodedSplit, encode
from stability.finetune.loop import predict_diagnostic, predict_entailment_probability, train
from stability.finetune.modeling import build_model, load_tokenizer


def _first(split: EncodedSplit, n: int | None) -> EncodedSplit:
    return split if n is None else EncodedSplit(split.input_ids[:n], split.token_type_ids[:n], split.labels[:n])


def _run_seconds(model, splits, settings, accelerator, pad_id: int, recorder: DynamicsRecorder | None,
                 reuse: bool = True) -> tuple[float, float]:
    """Wall and CPU seconds of training and the final diagnostic predictions (`reuse=False`: a pass of
    their own even when the dynamics recorded them, as before `loop.predict_diagnostic`)."""
    wall, cpu = time.perf_counter(), time.process_time()
    train(model, splits["train"], splits["validation"], settings, accelerator, pad_id, None,
          lambda entry: None, lambda log: None, dynamics=recorder)
    predict_diagnostic(model, splits["diagnostic"], settings.trainer.eval_batch_size, accelerator, pad_id,
                       recorder if reuse else None, tokens_per_batch=settings.trainer.eval_tokens_per_batch)
    return time.perf_counter() - wall, time.process_time() - cpu


def _pass(model, split: EncodedSplit, batch_size: int, tokens_per_batch: int | None, accelerator,
          pad_id: int) -> tuple[float, np.ndarray]:
    """CPU seconds of one diagnostic pass, and its P(entailment)."""
    started = time.process_time()
    prob = predict_entailment_probability(model, split, batch_size, accelerator, pad_id,
                                          tokens_per_batch=tokens_per_batch)
    return time.process_time() - started, prob


def _sizes(folder: Path) -> tuple[int, int]:
    """Bytes of items.parquet (once per run) and of all the validations' files."""
    items = (folder / "items.parquet").stat().st_size
    return items, sum(path.stat().st_size for path in folder.glob("validation-*.parquet"))


def _median_and_range(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} (range {min(values):.3f}–{max(values):.3f}, {len(values)} rounds)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="tiny", help="HF id or local folder, or 'tiny'")
    parser.add_argument("--lang", default="fr")
    parser.add_argument("--data-root", default=None, help="data.root; omit for the built-in data")
    parser.add_argument("--samples", type=int, default=None, help="training examples (default: all)")
    parser.add_argument("--validation-samples", type=int, default=None, help="the first N validation examples")
    parser.add_argument("--diagnostic-samples", type=int, default=None, help="the first N diagnostic items")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3, help="rounds of both arms, in alternating order")
    parser.add_argument("--eval-tokens-per-batch", type=int, default=None,
                        help="trainer.eval_tokens_per_batch for both arms (default: off, by examples)")
    parser.add_argument("--before", action="store_true",
                        help="arm (c): with dynamics and a final diagnostic pass of its own, as before the reuse")
    parser.add_argument("--pass-tokens", type=int, default=2048,
                        help="the token budget the diagnostic pass alone is also timed with")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    overrides = [f"lang={args.lang}", f"trainer.max_epochs={args.epochs}", f"trainer.patience={args.epochs}"]
    overrides += ["model=tiny"] if args.model == "tiny" else [f"model.name={args.model}"]
    overrides += [f"data.root={args.data_root}"] if args.data_root else ["data.source=builtin"]
    overrides += [f"data.max_train_samples={args.samples}"] if args.samples else []
    overrides += [f"trainer.eval_tokens_per_batch={args.eval_tokens_per_batch}"] if args.eval_tokens_per_batch else []
    settings = train_settings(compose_config(overrides))
    data = load_run_datasets(settings)
    cache = Path(settings.paths.cache_dir).expanduser()
    tokenizer = load_tokenizer(settings.model, texts([data.train]), cache)
    kept = {"train": None, "validation": args.validation_samples, "diagnostic": args.diagnostic_samples}
    datasets = {"train": data.train, "validation": data.validation, "diagnostic": data.diagnostic}
    splits = {name: _first(encode(dataset, tokenizer, settings.data.max_length, None)[0], kept[name])
              for name, dataset in datasets.items()}
    examples = {name: to_examples(dataset)[:kept[name]] for name, dataset in datasets.items()}
    pad_id = int(tokenizer.pad_token_id)
    accelerator = Accelerator(cpu=not torch.cuda.is_available())
    initial = build_model(settings.model, tokenizer, seed_init=0)
    trainer = settings.trainer
    print(f"model={settings.model.name} lang={args.lang} train={len(splits['train'])} "
          f"validation={len(splits['validation'])} diagnostic={len(splits['diagnostic'])} (mean tokens "
          f"{', '.join(f'{split.lengths.mean():.0f}' for split in splits.values())}) epochs={args.epochs} "
          f"batch_size={trainer.batch_size} eval_batch_size={trainer.eval_batch_size} "
          f"eval_tokens_per_batch={trainer.eval_tokens_per_batch} threads={torch.get_num_threads()} "
          f"device={accelerator.device}", flush=True)

    def plain() -> tuple[float, float]:
        return _run_seconds(copy.deepcopy(initial), splits, settings, accelerator, pad_id, None)

    def recorded(reuse: bool) -> tuple[float, float]:
        with tempfile.TemporaryDirectory() as folder:
            recorder = DynamicsRecorder(len(splits["train"]), splits["diagnostic"], accelerator.device,
                                        DynamicsWriter(RunDir(folder), examples, write=True))
            seconds = _run_seconds(copy.deepcopy(initial), splits, settings, accelerator, pad_id, recorder, reuse)
            sizes.append(_sizes(Path(folder) / "dynamics"))
            return seconds

    arms = {"a": plain, "b": lambda: recorded(True)}
    if args.before:
        arms["c"] = lambda: recorded(False)
    sizes: list[tuple[int, int]] = []
    ratios: dict[str, list[tuple[float, float]]] = {name: [] for name in arms if name != "a"}
    for number in range(args.rounds):
        names = list(arms) if number % 2 == 0 else list(reversed(arms))
        seconds = {name: arms[name]() for name in names}
        a_wall, a_cpu = seconds["a"]
        for name in ratios:
            ratios[name].append((seconds[name][0] / a_wall, seconds[name][1] / a_cpu))
        print(f"round {number + 1} ({', '.join(names)}): " + "; ".join(
            f"({name}) {wall:.1f} s wall, {cpu:.1f} s CPU" for name, (wall, cpu) in seconds.items()), flush=True)
    for name, pairs in ratios.items():
        print(f"ratio ({name})/(a), wall: {_median_and_range([wall for wall, _ in pairs])}")
        print(f"ratio ({name})/(a), CPU:  {_median_and_range([cpu for _, cpu in pairs])}")

    passes: dict[int | None, list[tuple[float, np.ndarray]]] = {None: [], args.pass_tokens: []}
    for _ in range(2):
        for budget, done in passes.items():
            done.append(_pass(initial, splits["diagnostic"], trainer.eval_batch_size, budget, accelerator, pad_id))
    by_examples, by_tokens = (min(seconds for seconds, _ in done) for done in passes.values())
    difference = np.abs(passes[None][0][1] - passes[args.pass_tokens][0][1]).max()
    print(f"one diagnostic pass ({len(splits['diagnostic'])} items), CPU: by {trainer.eval_batch_size} examples "
          f"{by_examples:.1f} s, by {args.pass_tokens} tokens {by_tokens:.1f} s (ratio {by_tokens / by_examples:.3f}); "
          f"largest difference in P(entailment) {difference:.2g}")
    items, validations = sizes[-1]
    print(f"dynamics in the run directory: {items + validations:,} bytes for {args.epochs} validations: "
          f"items.parquet {items:,}, {validations / args.epochs:,.0f} per validation")


if __name__ == "__main__":
    main()
