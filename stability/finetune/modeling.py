"""Encoders and tokenizers: a pretrained checkpoint (HF id or folder) or the tiny offline BERT."""
from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path
from typing import Iterable

import torch
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
from transformers import (
    AutoConfig,
    AutoModelForSequenceClassification,
    AutoTokenizer,
    BertConfig,
    BertForSequenceClassification,
    PreTrainedModel,
    PreTrainedTokenizerFast,
)

from stability.core.atomic import atomic_directory, atomic_path
from stability.core.errors import UserError, first_line
from stability.core.records import LABEL_NAMES
from stability.core.schemas.model import Model, TinyModel

_SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
_MAX_PIECE = 6  # longest word prefix / suffix considered as a vocabulary piece
_LABELS = {"id2label": dict(enumerate(LABEL_NAMES)), "label2id": {n: i for i, n in enumerate(LABEL_NAMES)}}


def load_tokenizer(model: Model, train_texts: Iterable[str], cache_dir: Path) -> PreTrainedTokenizerFast:
    """The checkpoint's tokenizer, or a WordPiece vocabulary trained on the run's own text."""
    if isinstance(model, TinyModel) and model.kind == "tiny":
        return _tiny_tokenizer(list(train_texts), model.vocab_size, cache_dir)
    try:
        return AutoTokenizer.from_pretrained(model.name, use_fast=True)
    except (OSError, ValueError) as err:
        raise UserError(f"cannot load the tokenizer of model.name='{model.name}' ({first_line(err)})",
                        fix="pass model.name=<HF id reachable online, or a local folder with "
                            "config.json and tokenizer files>, or model=tiny offline") from None


def build_model(model: Model, tokenizer: PreTrainedTokenizerFast, seed_init: int) -> PreTrainedModel:
    """A 2-label sequence classifier; `seed_init` fixes the classifier head (and tiny weights)."""
    torch.manual_seed(seed_init)
    dropout = model.dropout
    if isinstance(model, TinyModel) and model.kind == "tiny":
        config = BertConfig(
            vocab_size=len(tokenizer), hidden_size=model.hidden_size,
            num_hidden_layers=model.num_hidden_layers, num_attention_heads=model.num_attention_heads,
            intermediate_size=model.intermediate_size, max_position_embeddings=512,
            hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout,
            pad_token_id=tokenizer.pad_token_id, num_labels=2, **_LABELS,
        )
        return BertForSequenceClassification(config)
    try:
        config = AutoConfig.from_pretrained(model.name, num_labels=2, **_LABELS)
        for key in ("hidden_dropout_prob", "attention_probs_dropout_prob", "classifier_dropout",
                    "dropout", "attention_dropout"):
            if hasattr(config, key):
                setattr(config, key, dropout)
        return AutoModelForSequenceClassification.from_pretrained(model.name, config=config)
    except (OSError, ValueError) as err:
        raise UserError(f"cannot load model.name='{model.name}' ({first_line(err)})",
                        fix="pass a reachable HF id or a local checkpoint folder, or model=tiny") from None


def encoder_of(model: torch.nn.Module, setting: str) -> torch.nn.Module:
    """The encoder `model.base_model.encoder` of a BERT-style model (BERT, RoBERTa, XLM-R,
    MiniLM), which the stabilisers change; `setting`, the trainer key that needs it, names the
    error of a model without one."""
    encoder = getattr(getattr(model, "base_model", None), "encoder", None)
    if encoder is None:
        raise _lacks(model, setting, "an encoder (base_model.encoder)")
    return encoder


def encoder_layers(model: torch.nn.Module, setting: str) -> torch.nn.ModuleList:
    """The encoder's layer stack `model.base_model.encoder.layer`, lowest first (`encoder_of`)."""
    layers = getattr(encoder_of(model, setting), "layer", None)
    if not isinstance(layers, torch.nn.ModuleList):
        raise _lacks(model, setting, "an encoder with a layer stack (base_model.encoder.layer)")
    return layers


def _lacks(model: torch.nn.Module, setting: str, what: str) -> UserError:
    return UserError(f"{setting} needs {what}, which {type(model).__name__} lacks",
                     fix=f"use a BERT-style encoder (BERT, RoBERTa, XLM-R, MiniLM), or leave {setting} at its default")


def save_weights(model: PreTrainedModel, tokenizer: PreTrainedTokenizerFast, folder: Path) -> None:
    """The model (safetensors) and its tokenizer in HF format, so `from_pretrained(folder)` loads
    them; written beside the folder first, so a killed run never leaves half a checkpoint."""
    with atomic_directory(folder) as tmp:
        model.save_pretrained(tmp, safe_serialization=True)
        tokenizer.save_pretrained(tmp)


def wordpiece_vocab(texts: list[str], vocab_size: int) -> dict[str, int]:
    """A deterministic WordPiece vocabulary: characters, then frequent words and word pieces.

    The `tokenizers` trainer breaks frequency ties in hash order, so the same text can give
    different vocabularies; ranking by (-count, piece) makes the vocabulary a pure function
    of the text, and with it the tiny model's predictions for a given seed.
    """
    splitter = pre_tokenizers.BertPreTokenizer()
    normalizer = normalizers.BertNormalizer(lowercase=False)
    words: Counter[str] = Counter()
    for text in texts:
        words.update(word for word, _ in splitter.pre_tokenize_str(normalizer.normalize_str(text)))
    chars = sorted({c for word in words for c in word})
    pieces: Counter[str] = Counter()
    for word, count in words.items():
        pieces[word] += count
        for n in range(2, min(len(word), _MAX_PIECE) + 1):
            pieces[word[:n]] += count
            pieces["##" + word[-n:]] += count
    vocab = _SPECIAL_TOKENS + chars + ["##" + c for c in chars]
    known = set(vocab)
    ranked = sorted((p for p in pieces if p not in known), key=lambda p: (-pieces[p], p))
    vocab += ranked[: max(0, vocab_size - len(vocab))]
    return {token: i for i, token in enumerate(vocab)}


def _tiny_tokenizer(texts: list[str], vocab_size: int, cache_dir: Path) -> PreTrainedTokenizerFast:
    """A cased WordPiece tokenizer over the run's own text, cached by the text's hash."""
    digest = hashlib.sha256("\n".join(texts).encode("utf-8") + str(vocab_size).encode()).hexdigest()
    path = cache_dir / "tokenizers" / f"wordpiece-{digest[:20]}.json"
    if path.is_file():
        backend = Tokenizer.from_file(str(path))
    else:
        vocab = wordpiece_vocab(texts, vocab_size)
        backend = Tokenizer(models.WordPiece(vocab=vocab, unk_token="[UNK]"))
        backend.normalizer = normalizers.BertNormalizer(lowercase=False)
        backend.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        backend.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
            special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])])
        with atomic_path(path) as tmp:
            backend.save(str(tmp))
    return PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="[UNK]", pad_token="[PAD]",
                                   cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]")
