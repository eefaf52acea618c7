"""Layer-wise sentence vectors: every hidden layer from one forward pass, mean-pooled, cached.

Each sentence is encoded alone (premise and hypothesis separately); its vector at layer
l ∈ 0..L (0 = embeddings) is the mean of its token states, padding and special tokens
([CLS], [SEP], ... as the tokenizer's special-tokens mask says) excluded. Batches hold
sentences of similar length (sorted) padded to their own longest one; each distinct
sentence is encoded once. The vectors of a split are cached as float16 under
`<cache_dir>/probing/`, keyed by (encoder weights and tokenizer hash, hash of the split's
sentences, pooling, max length), so probing again with other probe settings (tasks, L2
grid, pair features, controls) does not encode again.
"""
from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from stability.core.atomic import atomic_path
from stability.core.progress import progress
from stability.core.records import Example

log = logging.getLogger(__name__)

POOLING = "mean of token states, padding and special tokens excluded"
_POOLING_KEY = "mean-no-special-v1"


def mean_pool(hidden: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """(batch, tokens, dims) states, (batch, tokens) bool mask -> (batch, dims) mean over the
    kept tokens; a sentence with none kept (all special) gets zeros."""
    weights = keep.to(hidden.dtype)
    counts = weights.sum(dim=1, keepdim=True).clamp_min(1.0)
    return torch.bmm(weights.unsqueeze(1), hidden).squeeze(1) / counts


def _padded_batch(ids: list[list[int]], special: list[list[int]], rows: np.ndarray, pad_id: int
                  ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """input_ids, attention_mask and the pooling mask of one batch, padded to its longest row."""
    width = max(len(ids[i]) for i in rows)
    input_ids = np.full((len(rows), width), pad_id, dtype=np.int64)
    attention = np.zeros((len(rows), width), dtype=np.int64)
    keep = np.zeros((len(rows), width), dtype=bool)
    for row, i in enumerate(rows):
        n = len(ids[i])
        input_ids[row, :n] = ids[i]
        attention[row, :n] = 1
        keep[row, :n] = np.asarray(special[i], dtype=np.int8) == 0
    return torch.from_numpy(input_ids), torch.from_numpy(attention), torch.from_numpy(keep)


def sentence_vectors(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, texts: Sequence[str],
                     max_length: int, batch_size: int, device: torch.device, desc: str = "encode"
                     ) -> np.ndarray:
    """(layers, len(texts), dims) float16 mean-pooled vectors of every hidden layer."""
    unique = list(dict.fromkeys(texts))
    encoded = tokenizer(unique, truncation=True, max_length=max_length, return_special_tokens_mask=True,
                        return_attention_mask=False, return_token_type_ids=False)
    ids, special = encoded["input_ids"], encoded["special_tokens_mask"]
    lengths = np.fromiter((len(row) for row in ids), dtype=np.int64, count=len(ids))
    order = np.argsort(-lengths, kind="stable")
    batches = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    out: np.ndarray | None = None
    model.to(device)
    with torch.inference_mode():
        for rows in progress(batches, desc=desc, unit="batch"):
            input_ids, attention, keep = _padded_batch(ids, special, rows, pad_id)
            states = model(input_ids=input_ids.to(device), attention_mask=attention.to(device),
                           output_hidden_states=True).hidden_states
            if out is None:
                out = np.empty((len(states), len(unique), states[0].shape[-1]), dtype=np.float16)
            keep = keep.to(device)
            for layer, hidden in enumerate(states):
                out[layer, rows] = mean_pool(hidden.float(), keep).cpu().numpy()
    assert out is not None, "no texts to encode"
    position = {text: i for i, text in enumerate(unique)}
    return out[:, [position[text] for text in texts]]


def _texts_fingerprint(examples: Sequence[Example]) -> str:
    digest = hashlib.sha256()
    for example in examples:
        digest.update(f"{example.premise}\x1f{example.hypothesis}\x1e".encode("utf-8"))
    return digest.hexdigest()


@dataclass(frozen=True)
class PairVectors:
    """Premise (u) and hypothesis (v) vectors of a split: (layers, n, dims) float16 each."""

    u: np.ndarray
    v: np.ndarray
    cached: bool

    @property
    def n_layers(self) -> int:
        return self.u.shape[0]


def cache_path(cache_dir: Path, encoder_key: str, examples: Sequence[Example], max_length: int) -> Path:
    key = hashlib.sha256(f"{encoder_key}|{_texts_fingerprint(examples)}|{_POOLING_KEY}|{max_length}".encode())
    return cache_dir / "probing" / f"{key.hexdigest()[:32]}.npz"


def pair_vectors(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, encoder_key: str,
                 examples: Sequence[Example], max_length: int, batch_size: int, cache_dir: Path,
                 device: torch.device, desc: str = "encode") -> PairVectors:
    """u and v of every pair, from the cache when this encoder already encoded these sentences."""
    path = cache_path(cache_dir, encoder_key, examples, max_length)
    if path.is_file():
        with np.load(path) as saved:
            return PairVectors(saved["u"], saved["v"], cached=True)
    texts = [e.premise for e in examples] + [e.hypothesis for e in examples]
    vectors = sentence_vectors(model, tokenizer, texts, max_length, batch_size, device, desc)
    u, v = vectors[:, :len(examples)], vectors[:, len(examples):]
    try:
        with atomic_path(path, suffix=".npz") as tmp:
            np.savez(tmp, u=u, v=v)
    except OSError as err:
        log.warning("feature cache not written (%s: %s); the next run encodes again", path, err.strerror)
    return PairVectors(u, v, cached=False)


def pair_features(vectors: PairVectors, kind: str) -> np.ndarray:
    """(layers, n, dims) float32 pair representation: [u; v] or [u; v; |u − v|; u * v]."""
    u, v = vectors.u.astype(np.float32), vectors.v.astype(np.float32)
    parts = [u, v] if kind == "uv" else [u, v, np.abs(u - v), u * v]
    return np.concatenate(parts, axis=2)
