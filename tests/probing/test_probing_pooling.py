"""Mean pooling over real tokens only, all layers from one forward pass, cached features."""
from __future__ import annotations

import hashlib

import numpy as np
import torch
from probe_helpers import N_HIDDEN_LAYERS
from transformers import AutoModel

from probing.encoders import EncoderSpec, encoder_fingerprint, load_encoder
from probing.features import mean_pool, pair_features, pair_vectors, sentence_vectors
from stability.core.fingerprints import tokenizer_fingerprint
from stability.core.records import Example

SHORT = "The cat sleeps."
LONG = "The old grey cat sleeps on the warm kitchen floor every single afternoon."


def test_mean_pool_matches_hand_computed_mean():
    hidden = torch.tensor([[[1.0, 10.0], [2.0, 20.0], [4.0, 40.0], [8.0, 80.0]],
                           [[3.0, 30.0], [5.0, 50.0], [7.0, 70.0], [9.0, 90.0]]])
    keep = torch.tensor([[False, True, True, False],      # [CLS] a b [SEP]
                         [False, False, False, False]])   # nothing but special tokens
    pooled = mean_pool(hidden, keep)
    assert pooled.tolist() == [[3.0, 30.0], [0.0, 0.0]]


def test_vectors_exclude_padding_and_special_tokens(small_encoder):
    model, tokenizer = small_encoder
    ids = tokenizer(SHORT)["input_ids"]
    assert ids[0] == tokenizer.cls_token_id and ids[-1] == tokenizer.sep_token_id
    with torch.no_grad():
        alone = model(input_ids=torch.tensor([ids]), output_hidden_states=True).hidden_states
    by_hand = np.stack([layer[0, 1:-1].mean(dim=0).numpy() for layer in alone])   # drop [CLS], [SEP]

    # batched with a longer sentence, the short one is padded: padding must not count
    vectors = sentence_vectors(model, tokenizer, [LONG, SHORT, SHORT], max_length=64, batch_size=2,
                               device=torch.device("cpu"))
    assert vectors.shape == (N_HIDDEN_LAYERS + 1, 3, 16) and vectors.dtype == np.float16
    np.testing.assert_allclose(vectors[:, 1], by_hand, atol=2e-3, rtol=2e-3)
    np.testing.assert_array_equal(vectors[:, 1], vectors[:, 2])
    with_specials = np.stack([layer[0].mean(dim=0).numpy() for layer in alone])
    assert np.abs(vectors[:, 1].astype(np.float32) - with_specials).max() > 0.05


def test_minilm_gives_embeddings_plus_six_layers(minilm_folder):
    model, tokenizer = load_encoder(EncoderSpec("pretrained", None, str(minilm_folder)))
    vectors = sentence_vectors(model, tokenizer, ["Le chat dort.", "Il ne pleut pas."], max_length=32,
                               batch_size=8, device=torch.device("cpu"))
    assert vectors.shape == (7, 2, 384)


def _examples(texts: list[tuple[str, str]]) -> list[Example]:
    return [Example(str(i), p, h, 0, "en", "test") for i, (p, h) in enumerate(texts)]


def test_second_call_reads_the_cache_without_a_forward_pass(small_encoder, tmp_path):
    model, tokenizer = small_encoder
    calls = []
    hook = model.register_forward_pre_hook(lambda module, args: calls.append(1))
    try:
        examples = _examples([(SHORT, LONG), (LONG, "A dog barks."), (SHORT, "A dog barks.")])
        key = encoder_fingerprint(model, tokenizer)
        first = pair_vectors(model, tokenizer, key, examples, 64, 2, tmp_path, torch.device("cpu"))
        assert not first.cached and len(calls) == 2           # 3 distinct sentences, batches of 2
        second = pair_vectors(model, tokenizer, key, examples, 64, 2, tmp_path, torch.device("cpu"))
        assert second.cached and len(calls) == 2              # no forward pass
        np.testing.assert_array_equal(first.u, second.u)
        np.testing.assert_array_equal(first.v, second.v)
        # other probe settings (pair features) read the same cache entry
        assert pair_features(second, "uv_diff_prod").shape == (N_HIDDEN_LAYERS + 1, 3, 64)
        # other sentences or another pooling length are encoded
        pair_vectors(model, tokenizer, key, examples[:2], 64, 2, tmp_path, torch.device("cpu"))
        pair_vectors(model, tokenizer, key, examples, 8, 2, tmp_path, torch.device("cpu"))
        assert len(calls) == 6                                # 2 batches each
    finally:
        hook.remove()
    assert first.u.shape == (N_HIDDEN_LAYERS + 1, 3, 16)
    np.testing.assert_array_equal(first.u[:, 0], first.u[:, 2])   # same premise, same vector


def test_fingerprint_follows_the_weights(small_encoder, minilm_folder, tmp_path):
    model, tokenizer = small_encoder
    model.save_pretrained(tmp_path / "copy")
    tokenizer.save_pretrained(tmp_path / "copy")
    copy = AutoModel.from_pretrained(tmp_path / "copy")
    assert encoder_fingerprint(copy, tokenizer) == encoder_fingerprint(model, tokenizer)
    spec = EncoderSpec("random-init", None, str(tmp_path / "copy"), init_seed=1)
    other, _ = load_encoder(spec)
    again, _ = load_encoder(spec)
    assert encoder_fingerprint(other, tokenizer) != encoder_fingerprint(model, tokenizer)
    assert encoder_fingerprint(other, tokenizer) == encoder_fingerprint(again, tokenizer)


def test_fingerprint_is_the_sha256_of_the_tokenizer_then_each_named_tensors_bytes(small_encoder):
    """The digest features were cached under: the tokenizer's fingerprint, then per tensor (by name) its
    name, dtype and shape and its bytes, hashed here from copies of the bytes."""
    model, tokenizer = small_encoder
    digest = hashlib.sha256(tokenizer_fingerprint(tokenizer).encode())
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(f"{name}|{tensor.dtype}|{tuple(tensor.shape)}".encode())
        digest.update(bytes(tensor.contiguous().reshape(-1).view(torch.uint8).tolist()))
    assert encoder_fingerprint(model, tokenizer) == digest.hexdigest()
