"""A small random BERT with a real WordPiece tokenizer."""
from __future__ import annotations

import pytest
import torch
from probe_helpers import N_HIDDEN_LAYERS
from transformers import AutoTokenizer, BertConfig, BertModel


@pytest.fixture(scope="session")
def small_encoder(minilm_folder):
    """(model, tokenizer): the MiniLM tokenizer (real [CLS]/[SEP] handling) on a 3-layer,
    16-dimensional randomly initialised BERT, so a forward pass costs nothing."""
    tokenizer = AutoTokenizer.from_pretrained(minilm_folder)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=N_HIDDEN_LAYERS,
                        num_attention_heads=2, intermediate_size=32)
    return BertModel(config).eval(), tokenizer
