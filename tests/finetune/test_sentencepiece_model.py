"""A multilingual-e5-shaped checkpoint through the project, without its 470 MB: a tiny random BERT whose
tokenizer is a SentencePiece Unigram model trained here (the `tokenizers` library), XLM-R's pair
template, no pooler weights and `pad_token_id` 0 in its config, as the real one has. It is read with
`model=multilingual_e5_small model.name=<folder>`, trained solo and fused, and probed."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from transformers import BertConfig, BertModel

from forked_cli import run_module
from helpers import BUILTIN, runs, train_cli
from stability.core.config import compose_config
from stability.core.schemas.train import train_settings
from stability.data.container import texts
from stability.data.loading import load_run_datasets
from stability.finetune.encoding import encode
from stability.finetune.modeling import build_model, load_tokenizer

SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]   # XLM-R's ids 0..3, and a mask token
E5 = ["experiment=smoke", "lang=fr", "model=multilingual_e5_small", "trainer.max_epochs=2",
      "trainer.learning_rate=1e-3"]


@pytest.fixture(scope="module")
def unigram_folder(tmp_path_factory) -> Path:
    """The checkpoint folder: tokenizer.json (Unigram, Metaspace, XLM-R's template), tokenizer_config.json
    naming the fast tokenizer, and a 2-layer BERT saved without its pooler."""
    folder = tmp_path_factory.mktemp("unigram-bert")
    sentences = [row[key] for lang in ("en", "fr", "de", "sv")
                 for row in map(json.loads, (BUILTIN / lang / "train.jsonl").read_text().splitlines())
                 for key in ("premise", "hypothesis")]
    tokenizer = Tokenizer(models.Unigram())
    tokenizer.normalizer = normalizers.NFKC()
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
    tokenizer.decoder = decoders.Metaspace()
    tokenizer.train_from_iterator(sentences, trainers.UnigramTrainer(vocab_size=600, special_tokens=SPECIALS,
                                                                     unk_token="<unk>"))
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", tokenizer.token_to_id("<s>")), ("</s>", tokenizer.token_to_id("</s>"))])
    tokenizer.save(str(folder / "tokenizer.json"))
    (folder / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "<s>", "cls_token": "<s>", "eos_token": "</s>",
        "sep_token": "</s>", "pad_token": "<pad>", "unk_token": "<unk>", "mask_token": "<mask>",
        "model_max_length": 512}))
    config = BertConfig(vocab_size=tokenizer.get_vocab_size(), hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64, pad_token_id=0)
    BertModel(config, add_pooling_layer=False).save_pretrained(folder)
    return folder


def test_a_pair_is_encoded_as_xlm_r_encodes_it(unigram_folder, tmp_path):
    settings = train_settings(compose_config([*E5, f"model.name={unigram_folder}"]))
    data = load_run_datasets(settings)
    tokenizer = load_tokenizer(settings.model, texts([data.train]), tmp_path)
    split, _ = encode(data.train, tokenizer, settings.data.max_length, None)
    ids, specials = split.input_ids[0].tolist(), {name: tokenizer.convert_tokens_to_ids(name) for name in SPECIALS}
    sep = specials["</s>"]
    assert ids[0] == specials["<s>"] and ids[-1] == sep and ids.count(sep) == 3
    first = ids.index(sep)
    assert ids[first + 1] == sep     # `</s></s>` between the premise and the hypothesis
    premise = tokenizer(data.train[0]["premise"], add_special_tokens=False)["input_ids"]
    assert ids[1:first] == premise and tokenizer.convert_ids_to_tokens(premise[0]).startswith("▁")
    assert set(split.token_type_ids[0].tolist()) == {0}
    assert tokenizer.pad_token_id == specials["<pad>"] == 1
    model = build_model(settings.model, tokenizer, 0)
    assert model.config.num_labels == 2 and model.bert.pooler is not None   # the pooler is the run's own


def test_trained_solo_and_fused_then_probed(unigram_folder, tmp_path):
    base = [*E5, f"model.name={unigram_folder}", "trainer.save_model=true"]
    for args in (["seed=0..1", "trainer.fuse_seeds=2"], ["seed=2", "trainer.dynamics=true"]):
        result = train_cli([*base, *args], tmp_path)
        assert result.returncode == 0, result.stderr
    found = runs(tmp_path / "outputs")
    engines = {record["seed"]: record["engine"] for record in found.values()}
    assert engines == {0: "fused2", 1: "fused2", 2: "solo"}
    for path, record in found.items():
        assert record["n_items"] == 83 and len(record["category_mcc"]) == 33
        assert (tmp_path / "outputs" / path / "model" / "tokenizer.json").is_file()
    solo = next(path for path, record in found.items() if record["engine"] == "solo")
    assert (tmp_path / "outputs" / solo / "dynamics" / "items.parquet").is_file()
    probed = run_module("probing", [f"runs={tmp_path / 'outputs' / 'smoke'}"], tmp_path)
    assert probed.returncode == 0, probed.stderr
    table = pd.read_csv(tmp_path / "outputs" / "smoke" / "probing" / "probing.csv")
    assert sorted(table["layer"].unique()) == [0, 1, 2]      # the embeddings and the 2 encoder layers
    assert table["model"].str.startswith("fine-tuned:").sum() > 0 and (table["model"] == "pretrained").any()
