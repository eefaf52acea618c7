"""Tokenize once, reuse across seeds: `Dataset.map` (batched, the fast tokenizer) cached by
(tokenizer, data, max length) in the project's cache folder.

`datasets` fingerprints a transform from its input's fingerprint, which for a dataset built in
memory (the released files, a sample) is random: the same data would be tokenized again by
every seed. So the map gets its fingerprint and cache file from a hash of what it computes
from (the tokenizer, the pairs' text and labels, the max length), under
`<paths.cache_dir>/tokenized/`: the second seed of a sweep finds the file and loads it (and
`tokenization_cached` says so), whichever source the pairs came from.

Sequences are stored unpadded (Arrow lists, read back as views of one flat id array); padding
happens per batch, so a batch costs only as much as its longest pair.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
from datasets import Dataset, Features, Sequence as ListOf, Value
from transformers import PreTrainedTokenizerBase

from stability.core.fingerprints import tokenizer_fingerprint

_HASHED_ROWS = 65_536


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


def content_fingerprint(dataset: Dataset) -> str:
    """A hash of the pairs' text and labels, in order: what tokenization computes from (column by
    column per batch of rows, which is several times faster than row by row)."""
    digest = hashlib.sha256()
    columns = dataset.select_columns(["premise", "hypothesis", "label"]).with_format("arrow")
    for batch in columns.iter(batch_size=_HASHED_ROWS):
        for name in ("premise", "hypothesis"):
            digest.update("\x1f".join(batch.column(name).to_pylist()).encode("utf-8") + b"\x1e")
        digest.update(np.asarray(batch.column("label").to_numpy(), dtype=np.int64).tobytes())
    return digest.hexdigest()


def _tokenize(batch: dict[str, list], tokenizer: PreTrainedTokenizerBase, max_length: int) -> dict[str, list]:
    encoded = tokenizer(batch["premise"], batch["hypothesis"], truncation="longest_first", max_length=max_length,
                        padding=False, return_token_type_ids=True)
    return {"input_ids": encoded["input_ids"], "token_type_ids": encoded["token_type_ids"]}


def encode(dataset: Dataset, tokenizer: PreTrainedTokenizerBase, max_length: int, cache_dir: Path | None,
           tokenizer_key: str | None = None) -> tuple[EncodedSplit, bool]:
    """Tokenize a split of records; returns it and whether it came from the cache (its cache file
    existed before the map, so no pair was tokenized)."""
    key = hashlib.sha256(f"{tokenizer_key or tokenizer_fingerprint(tokenizer)}|{content_fingerprint(dataset)}|"
                         f"{max_length}".encode()).hexdigest()[:24]
    cache_file = cache_dir / "tokenized" / f"{key}.arrow" if cache_dir is not None else None
    cached = cache_file is not None and cache_file.is_file()
    if cache_file is not None:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
    features = Features({"label": dataset.features["label"], "input_ids": ListOf(Value("int32")),
                         "token_type_ids": ListOf(Value("int8"))})
    tokenized = dataset.map(
        _tokenize, batched=True, batch_size=1000, fn_kwargs={"tokenizer": tokenizer, "max_length": max_length},
        remove_columns=[name for name in dataset.column_names if name != "label"], features=features,
        new_fingerprint=key, cache_file_name=None if cache_file is None else str(cache_file),
        load_from_cache_file=True, desc="tokenize")
    return _from_arrow(tokenized), cached


def _views(column: pa.ChunkedArray, dtype: type) -> list[np.ndarray]:
    """One numpy view per row of an Arrow list column, all into one flat array."""
    lists = column.combine_chunks()
    flat = lists.flatten().to_numpy(zero_copy_only=False).astype(dtype, copy=False)
    offsets = lists.offsets.to_numpy() - lists.offsets[0].as_py()
    return [flat[a:b] for a, b in zip(offsets[:-1], offsets[1:])]


def _from_arrow(tokenized: Dataset) -> EncodedSplit:
    table = tokenized.data
    return EncodedSplit(_views(table.column("input_ids"), np.int32), _views(table.column("token_type_ids"), np.int8),
                        np.asarray(table.column("label").to_numpy(), dtype=np.int64))
