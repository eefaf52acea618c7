"""Linear CKA: 1 for identical representations, invariant to rotation and isotropic scaling, equal to
the normalised HSIC of linear kernels computed directly; per-layer tables across seeds."""
from __future__ import annotations

import numpy as np
import pytest

from probing import cka
from probing.cka import (
    PAIR_COLUMNS,
    PRETRAINED,
    SUMMARY_COLUMNS,
    layer_cka_matrix,
    linear_cka,
    seed_cka_pairs,
    summarise_cka,
)


def hsic_cka(x: np.ndarray, y: np.ndarray) -> float:
    """Kornblith et al. (2019): HSIC(K, L) = tr(K H L H) / (n − 1)², K = XXᵀ, L = YYᵀ, H = I − 11ᵀ/n."""
    n = len(x)
    h = np.eye(n) - np.ones((n, n)) / n
    k, l = x @ x.T, y @ y.T

    def hsic(a: np.ndarray, b: np.ndarray) -> float:
        return np.trace(a @ h @ b @ h) / (n - 1) ** 2

    return hsic(k, l) / np.sqrt(hsic(k, k) * hsic(l, l))


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)


def test_identical_is_one(rng):
    x = rng.normal(size=(50, 8)) + 3.0
    assert linear_cka(x, x) == pytest.approx(1.0)


def test_invariant_to_rotation_and_isotropic_scaling(rng):
    x, y = rng.normal(size=(60, 10)), rng.normal(size=(60, 7))
    q, _ = np.linalg.qr(rng.normal(size=(10, 10)))
    reference = linear_cka(x, y)
    assert linear_cka(x @ q, y) == pytest.approx(reference)
    assert linear_cka(3.7 * x, 0.2 * y) == pytest.approx(reference)
    assert linear_cka(x @ q * 5.0 + 1.0, y) == pytest.approx(reference)   # and to a constant shift
    assert linear_cka(x @ q, x) == pytest.approx(1.0)


def test_equals_hsic_formula(rng, monkeypatch):
    x = rng.normal(size=(40, 12)) + rng.normal(size=12)
    y = np.tanh(x @ rng.normal(size=(12, 5))) + 0.5 * rng.normal(size=(40, 5))
    expected = hsic_cka(x, y)
    assert linear_cka(x, y) == pytest.approx(expected, rel=1e-10)
    # the same when rows are centred and accumulated in several blocks, and from float16 input
    monkeypatch.setattr(cka, "_BLOCK", 7)
    assert linear_cka(x, y) == pytest.approx(expected, rel=1e-10)
    half_x, half_y = x.astype(np.float16), y.astype(np.float16)
    assert linear_cka(half_x, half_y) == pytest.approx(hsic_cka(half_x.astype(float), half_y.astype(float)),
                                                       rel=1e-10)


def test_unrelated_is_low_and_constant_is_nan(rng):
    assert linear_cka(rng.normal(size=(2000, 4)), rng.normal(size=(2000, 4))) < 0.02
    assert np.isnan(linear_cka(np.ones((10, 3)), rng.normal(size=(10, 3))))
    with pytest.raises(ValueError, match="row counts"):
        linear_cka(np.ones((10, 3)), np.ones((9, 3)))


def test_layer_matrix(rng):
    a, b = rng.normal(size=(3, 30, 6)), rng.normal(size=(4, 30, 5))
    matrix = layer_cka_matrix(a, b)
    assert matrix.shape == (3, 4)
    for i in range(3):
        for j in range(4):
            assert matrix[i, j] == pytest.approx(hsic_cka(a[i], b[j]), rel=1e-10)


def test_seed_pairs_and_summary(rng):
    pretrained = rng.normal(size=(2, 40, 6)).astype(np.float16)
    seeds = {f"seed{s}": (pretrained + 0.3 * (s + 1) * rng.normal(size=pretrained.shape)).astype(np.float16)
             for s in range(3)}
    pairs = seed_cka_pairs(seeds, pretrained)
    assert list(pairs.columns) == PAIR_COLUMNS
    assert len(pairs) == 2 * (3 + 3)              # per layer: 3 seed pairs and 3 seeds vs the encoder
    row = pairs[(pairs["layer"] == 1) & (pairs["seed_a"] == "seed0") & (pairs["seed_b"] == "seed2")].iloc[0]
    assert row["comparison"] == "seed_vs_seed"
    assert row["cka"] == pytest.approx(hsic_cka(seeds["seed0"][1].astype(float), seeds["seed2"][1].astype(float)),
                                       rel=1e-10)
    to_encoder = pairs[pairs["seed_b"] == PRETRAINED]
    assert set(to_encoder["comparison"]) == {"seed_vs_pretrained"} and len(to_encoder) == 6
    summary = summarise_cka(pairs)
    assert list(summary.columns) == SUMMARY_COLUMNS and len(summary) == 4
    cell = summary[(summary["layer"] == 0) & (summary["comparison"] == "seed_vs_pretrained")].iloc[0]
    values = to_encoder[to_encoder["layer"] == 0]["cka"]
    assert cell["cka_mean"] == pytest.approx(values.mean()) and cell["cka_sd"] == pytest.approx(values.std(ddof=1))
    assert cell["n_pairs"] == 3
    # the least perturbed seed is closest to the encoder
    first_layer = to_encoder[to_encoder["layer"] == 0].set_index("seed_a")["cka"]
    assert first_layer["seed0"] > first_layer["seed2"]
    # without the encoder: only seed pairs
    assert set(seed_cka_pairs(seeds)["comparison"]) == {"seed_vs_seed"}


def test_similarity_tables_equal_linear_cka(rng):
    from probing.similarity import CKA_LAYER_COLUMNS, CKA_PAIR_COLUMNS, CKA_SUMMARY_COLUMNS, cka_rows, similarity

    rows = cka_rows(50, 30, seed=0)
    assert len(rows) == 30 and (np.diff(rows) > 0).all() and (rows == cka_rows(50, 30, seed=0)).all()
    assert (cka_rows(20, 30, seed=0) == np.arange(20)).all() and (cka_rows(20, None, seed=0) == np.arange(20)).all()
    pretrained = rng.normal(size=(3, 50, 6))
    seeds = {seed: (pretrained + 0.5 * rng.normal(size=pretrained.shape))[:, rows].astype(np.float16)
             for seed in (0, 1, 2)}
    found = similarity({"fine-tuned:rte": seeds}, pretrained[:, rows])
    assert list(found.pairs.columns) == CKA_PAIR_COLUMNS and list(found.summary.columns) == CKA_SUMMARY_COLUMNS
    assert len(found.pairs) == 3 * (3 + 3) and found.n_items == 30
    for r in found.pairs.itertuples():
        a = seeds[int(r.seed_a.removeprefix("seed"))][r.layer]
        b = pretrained[r.layer, rows] if r.seed_b == PRETRAINED else seeds[int(r.seed_b.removeprefix("seed"))][r.layer]
        assert r.cka == pytest.approx(linear_cka(a, b), rel=1e-10)
    # the layer × layer matrix of the first two seeds
    assert list(found.layers.columns) == CKA_LAYER_COLUMNS and len(found.layers) == 9
    assert set(zip(found.layers["seed_a"], found.layers["seed_b"])) == {("seed0", "seed1")}
    for r in found.layers.itertuples():
        assert r.cka == pytest.approx(linear_cka(seeds[0][r.layer_a], seeds[1][r.layer_b]), rel=1e-10)
    # one seed: its layers against the pretrained encoder's; no fine-tuned model: nothing
    single = similarity({"fine-tuned:rte": {4: seeds[0]}}, pretrained[:, rows])
    assert set(single.pairs["comparison"]) == {"seed_vs_pretrained"}
    assert set(zip(single.layers["seed_a"], single.layers["seed_b"])) == {("seed4", PRETRAINED)}
    assert similarity({}, pretrained) is None
