"""Tokenize once, reuse across seeds: encoded splits cached by (tokenizer, data, max length).

Sequences are stored unpadded (one flat id array plus offsets); padding happens per batch,
so a batch costs only as much as its longest pair.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
from transformers import PreTrainedTokenizerBase

from stability.core.atomic import atomic_path
from stability.core.fingerprints import tokenizer_fingerprint
from stability.core.records import Example


@dataclass
class EncodedSplit:
    """Unpadded token ids of a split; `lengths[i]` is the length of example i."""

    input_ids: list[np.ndarray]
    token_type_ids: list[np.ndarray]
    labels: np.ndarray

    @property
    def lengths(self) -> np.ndarray:
        return np.fromiter((len(ids) for ids in self.input_ids), dtype=np.int64,
                           count=len(self.input_ids))

    def __len__(self) -> int:
        return len(self.input_ids)


def _data_fingerprint(examples: Sequence[Example]) -> str:
    digest = hashlib.sha256()
    for example in examples:
        digest.update(f"{example.premise}\x1f{example.hypothesis}\x1f{example.label}\x1e".encode("utf-8"))
    return digest.hexdigest()


def encode(examples: Sequence[Example], tokenizer: PreTrainedTokenizerBase, max_length: int,
           cache_dir: Path | None, tokenizer_key: str | None = None) -> tuple[EncodedSplit, bool]:
    """Encode premise/hypothesis pairs; returns the split and whether it came from the cache."""
    key = hashlib.sha256(
        f"{tokenizer_key or tokenizer_fingerprint(tokenizer)}|{_data_fingerprint(examples)}|{max_length}"
        .encode()).hexdigest()[:24]
    path = cache_dir / "encoded" / f"{key}.npz" if cache_dir is not None else None
    if path is not None and path.is_file():
        return _load(path), True
    batch = tokenizer([e.premise for e in examples], [e.hypothesis for e in examples],
                      truncation="longest_first", max_length=max_length, padding=False,
                      return_token_type_ids=True)
    split = EncodedSplit(
        input_ids=[np.asarray(ids, dtype=np.int32) for ids in batch["input_ids"]],
        token_type_ids=[np.asarray(ids, dtype=np.int8) for ids in batch["token_type_ids"]],
        labels=np.asarray([e.label for e in examples], dtype=np.int64),
    )
    if path is not None:
        _save(split, path)
    return split, False


def _save(split: EncodedSplit, path: Path) -> None:
    offsets = np.concatenate([[0], np.cumsum(split.lengths)])
    with atomic_path(path, suffix=".npz") as tmp:
        np.savez(tmp, ids=np.concatenate(split.input_ids) if len(split) else np.zeros(0, np.int32),
                 types=np.concatenate(split.token_type_ids) if len(split) else np.zeros(0, np.int8),
                 offsets=offsets, labels=split.labels)


def _load(path: Path) -> EncodedSplit:
    with np.load(path) as data:
        ids, types, offsets, labels = data["ids"], data["types"], data["offsets"], data["labels"]
    bounds = list(zip(offsets[:-1], offsets[1:]))
    return EncodedSplit([ids[a:b] for a, b in bounds], [types[a:b] for a, b in bounds], labels)
