"""What `trainer.dynamics=true` costs: the same run trained with and without recording, side by side.

    python benchmarks/dynamics.py --model <HF folder or id | tiny> --data-root DIR --lang fr [--samples N] [--epochs 2]

Both arms train the same initial model on the same examples through the project's training loop
(`stability.finetune.loop.train`, the trainer's defaults, validation after each epoch); arm (b)
also records the dynamics into a run directory as a run does (`stability.finetune.dynamics`):
P(entailment) of every training item from its training pass, the validation predictions, and
one pass over the whole diagnostic set per validation. The arms alternate (a, b, a, b, ...), each
from the same weights. Prints seconds per arm, the ratio (b)/(a), the diagnostic pass alone, and
the bytes the dynamics take in the run directory. The training set is the release's whole one
(2,616 French pairs, against 1,104 diagnostic items); `--samples N` trains on its first N, e.g.
as many as the diagnostic set has (the dearest case where the diagnostic set is no larger).
"""
from __future__ import annotations

import argparse
import copy
import tempfile
import time
from pathlib import Path

import torch
from accelerate import Accelerator
from stability.core.config import compose_config
from stability.core.runrecord import RunDir
from stability.core.schemas.train import train_settings
from stability.data.container import texts, to_examples
from stability.data.loading import load_run_datasets
from stability.finetune.dynamics import DynamicsRecorder, DynamicsWriter
from stability.finetune.encoding import encode
from stability.finetune.loop import predict_entailment_probability, train
from stability.finetune.modeling import build_model, load_tokenizer


def _train_seconds(model, splits, settings, accelerator, pad_id: int, recorder: DynamicsRecorder | None) -> float:
    started = time.perf_counter()
    train(model, splits["train"], splits["validation"], settings, accelerator, pad_id, None,
          lambda entry: None, lambda log: None, dynamics=recorder)
    return time.perf_counter() - started


def _sizes(folder: Path) -> tuple[int, int]:
    """Bytes of items.parquet (once per run) and of all the validations' files."""
    items = (folder / "items.parquet").stat().st_size
    return items, sum(path.stat().st_size for path in folder.glob("validation-*.parquet"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="tiny", help="HF id or local folder, or 'tiny'")
    parser.add_argument("--lang", default="fr")
    parser.add_argument("--data-root", default=None, help="data.root; omit for the built-in data")
    parser.add_argument("--samples", type=int, default=None, help="training examples (default: all)")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=1, help="alternating (a, b) rounds")
    args = parser.parse_args()

    overrides = [f"lang={args.lang}", f"trainer.max_epochs={args.epochs}", f"trainer.patience={args.epochs}"]
    overrides += ["model=tiny"] if args.model == "tiny" else [f"model.name={args.model}"]
    overrides += [f"data.root={args.data_root}"] if args.data_root else ["data.source=builtin"]
    overrides += [f"data.max_train_samples={args.samples}"] if args.samples else []
    settings = train_settings(compose_config(overrides))
    data = load_run_datasets(settings)
    cache = Path(settings.paths.cache_dir).expanduser()
    tokenizer = load_tokenizer(settings.model, texts([data.train]), cache)
    splits = {name: encode(dataset, tokenizer, settings.data.max_length, None)[0]
              for name, dataset in (("train", data.train), ("validation", data.validation),
                                    ("diagnostic", data.diagnostic))}
    examples = {"train": to_examples(data.train), "validation": to_examples(data.validation),
                "diagnostic": to_examples(data.diagnostic)}
    pad_id = int(tokenizer.pad_token_id)
    accelerator = Accelerator(cpu=not torch.cuda.is_available())
    initial = build_model(settings.model, tokenizer, seed_init=0)
    print(f"model={settings.model.name} lang={args.lang} train={len(splits['train'])} "
          f"validation={len(splits['validation'])} diagnostic={len(splits['diagnostic'])} epochs={args.epochs} "
          f"batch_size={settings.trainer.batch_size} threads={torch.get_num_threads()} device={accelerator.device}")

    plain, recorded, sizes = [], [], []
    for _ in range(args.rounds):
        plain.append(_train_seconds(copy.deepcopy(initial), splits, settings, accelerator, pad_id, None))
        with tempfile.TemporaryDirectory() as folder:
            run_dir = RunDir(folder)
            recorder = DynamicsRecorder(len(splits["train"]), splits["diagnostic"], accelerator.device,
                                        DynamicsWriter(run_dir, examples, write=True))
            recorded.append(_train_seconds(copy.deepcopy(initial), splits, settings, accelerator, pad_id, recorder))
            sizes.append(_sizes(Path(folder) / "dynamics"))
    started = time.perf_counter()
    predict_entailment_probability(initial, splits["diagnostic"], settings.trainer.eval_batch_size, accelerator, pad_id)
    diagnostic_pass = time.perf_counter() - started

    a, b = min(plain), min(recorded)
    print(f"(a) without dynamics: {', '.join(f'{s:.1f}' for s in plain)} s (best {a:.1f})")
    print(f"(b) with dynamics:    {', '.join(f'{s:.1f}' for s in recorded)} s (best {b:.1f})")
    print(f"one diagnostic pass:  {diagnostic_pass:.1f} s ({len(splits['diagnostic'])} items)")
    print(f"ratio (b)/(a): {b / a:.3f}")
    items, validations = sizes[-1]
    print(f"dynamics in the run directory: {items + validations:,} bytes for {args.epochs} validations: "
          f"items.parquet {items:,}, {validations / args.epochs:,.0f} per validation")


if __name__ == "__main__":
    main()
