"""Encoders and tokenizers: a pretrained checkpoint (HF id or folder) or the tiny offline BERT."""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Iterable

import torch
from omegaconf import DictConfig
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
from transformers import (AutoConfig, AutoModelForSequenceClassification, AutoTokenizer,
                          BertConfig, BertForSequenceClassification, PreTrainedModel,
                          PreTrainedTokenizerFast)

from stability.errors import UserError
from stability.records import LABEL_NAMES

_SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
_LABELS = {"id2label": dict(enumerate(LABEL_NAMES)), "label2id": {n: i for i, n in enumerate(LABEL_NAMES)}}


def load_tokenizer(model_cfg: DictConfig, train_texts: Iterable[str], cache_dir: Path
                   ) -> PreTrainedTokenizerFast:
    """The checkpoint's tokenizer, or a WordPiece vocabulary trained on the run's own text."""
    if model_cfg.kind == "tiny":
        return _tiny_tokenizer(list(train_texts), int(model_cfg.vocab_size), cache_dir)
    try:
        return AutoTokenizer.from_pretrained(model_cfg.name, use_fast=True)
    except (OSError, ValueError) as err:
        raise UserError(f"cannot load the tokenizer of model.name='{model_cfg.name}' ({_first_line(err)})",
                        fix="pass model.name=<HF id reachable online, or a local folder with "
                            "config.json and tokenizer files>, or model=tiny offline") from None


def build_model(model_cfg: DictConfig, tokenizer: PreTrainedTokenizerFast, seed_init: int
                ) -> PreTrainedModel:
    """A 2-label sequence classifier; `seed_init` fixes the classifier head (and tiny weights)."""
    torch.manual_seed(seed_init)
    dropout = float(model_cfg.dropout)
    if model_cfg.kind == "tiny":
        config = BertConfig(
            vocab_size=len(tokenizer), hidden_size=int(model_cfg.hidden_size),
            num_hidden_layers=int(model_cfg.num_hidden_layers),
            num_attention_heads=int(model_cfg.num_attention_heads),
            intermediate_size=int(model_cfg.intermediate_size), max_position_embeddings=512,
            hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout,
            pad_token_id=tokenizer.pad_token_id, num_labels=2, **_LABELS,
        )
        return BertForSequenceClassification(config)
    if model_cfg.kind != "pretrained":
        raise UserError(f"unknown model.kind '{model_cfg.kind}'", fix="use model=mbert or model=tiny")
    try:
        config = AutoConfig.from_pretrained(model_cfg.name, num_labels=2, **_LABELS)
        for key in ("hidden_dropout_prob", "attention_probs_dropout_prob", "classifier_dropout",
                    "dropout", "attention_dropout"):
            if hasattr(config, key):
                setattr(config, key, dropout)
        return AutoModelForSequenceClassification.from_pretrained(model_cfg.name, config=config)
    except (OSError, ValueError) as err:
        raise UserError(f"cannot load model.name='{model_cfg.name}' ({_first_line(err)})",
                        fix="pass a reachable HF id or a local checkpoint folder, or model=tiny") from None


def _first_line(err: Exception) -> str:
    return str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__


def _tiny_tokenizer(texts: list[str], vocab_size: int, cache_dir: Path) -> PreTrainedTokenizerFast:
    """Train (or reuse) a cased WordPiece vocabulary; the same text always gives the same one."""
    digest = hashlib.sha256("\n".join(texts).encode("utf-8") + str(vocab_size).encode()).hexdigest()
    path = cache_dir / "tokenizers" / f"wordpiece-{digest[:20]}.json"
    if path.is_file():
        backend = Tokenizer.from_file(str(path))
    else:
        backend = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        backend.normalizer = normalizers.BertNormalizer(lowercase=False)
        backend.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=_SPECIAL_TOKENS,
                                            show_progress=False)
        backend.train_from_iterator(sorted(texts), trainer=trainer)
        cls, sep = backend.token_to_id("[CLS]"), backend.token_to_id("[SEP]")
        backend.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
            special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".part")
        backend.save(str(tmp))
        tmp.replace(path)
    return PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="[UNK]", pad_token="[PAD]",
                                   cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]")
