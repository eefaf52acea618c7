"""Model selection on held-out data only, the control task, and the gold k-fold protocol."""
from __future__ import annotations

import numpy as np
from probe_helpers import one_informative_layer

from probing.probe import FitSettings, choose_strength, probe_kfold, probe_with_heldout

SIZES = {"fit": 400, "heldout": 200, "test": 300}
SETTINGS = FitSettings.of([1e-1, 1e-2, 1e-3, 1e-4, 1e-5])


def _splits(rng: np.random.Generator, signal_layer: int, n_layers: int = 4, dims: int = 12):
    labels = {name: rng.permutation(np.arange(n) % 2)[:, None] for name, n in SIZES.items()}   # balanced
    features = {name: one_informative_layer(rng, n, n_layers, dims, signal_layer, labels[name][:, 0])
                for name, n in SIZES.items()}
    return features, labels


def test_probe_finds_the_informative_layer_and_the_control_stays_at_chance():
    features, labels = _splits(np.random.default_rng(0), signal_layer=2)
    scores = probe_with_heldout(features, labels, SETTINGS)
    accuracy = scores.test_acc[0]
    assert int(np.argmax(accuracy)) == 2
    assert accuracy[2] > 0.85                         # Bayes accuracy of a 3σ gap: 0.93
    assert np.all(np.delete(accuracy, 2) < 0.6)       # noise layers: chance (0.5)
    assert np.all(np.abs(scores.control_acc[0] - 0.5) < 0.08)
    selectivity = accuracy - scores.control_acc[0]
    assert int(np.argmax(selectivity)) == 2 and selectivity[2] > 0.3
    assert scores.majority_acc[0] == 0.5 and scores.n_train == 400 and scores.n_test == 300


def test_strength_is_chosen_on_the_heldout_split_only():
    rng = np.random.default_rng(1)
    n_layers = 2
    # fit and held-out: 70 % positives, readable from layer 1; test: every item positive, so
    # always answering the majority (what the strongest L2 does) would win on the test split
    labels = {name: (rng.random(n) < 0.7).astype(int)[:, None] for name, n in SIZES.items()}
    labels["test"][:] = 1
    features = {name: one_informative_layer(rng, n, n_layers, 12, 1, labels[name][:, 0])
                for name, n in SIZES.items()}
    settings = FitSettings.of([1e3, 1e-2])
    scores = probe_with_heldout(features, labels, settings)
    assert scores.best_l2[0, 1] == 1e-2               # the held-out split prefers the real probe ...
    assert scores.majority_acc[0] == 1.0              # ... the test split would have preferred 1e3
    assert scores.test_acc[0, 1] < 0.97
    heavy_only = probe_with_heldout(features, labels, FitSettings.of([1e3]))
    assert heavy_only.test_acc[0, 1] == 1.0


def test_ties_go_to_the_strongest_regularisation():
    assert choose_strength(np.array([[0.7, 0.8, 0.8], [0.6, 0.6, 0.6]])).tolist() == [1, 0]


def test_gold_kfold_predicts_every_item_once():
    rng = np.random.default_rng(2)
    labels = (rng.random((250, 2)) < np.array([0.3, 0.5])).astype(int)
    features = one_informative_layer(rng, 250, 3, 8, 0, labels[:, 0])
    scores = probe_kfold(features, labels, SETTINGS, folds=5)
    assert scores.test_pred.shape == (2, 3, 250) and scores.n_test == 250
    assert scores.n_train == 150                       # 3 of 5 folds fit, 1 picks L2, 1 is scored
    assert int(np.argmax(scores.test_acc[0])) == 0 and scores.test_acc[0, 0] > 0.85
    assert np.all(scores.test_acc[1] < 0.62)           # task 1 is noise everywhere
    # majority per fold: 70 % negatives of task 0 -> always 0, accuracy = share of negatives
    assert scores.majority_acc[0] == (labels[:, 0] == 0).mean()
    assert set(np.unique(scores.best_l2)) <= set(SETTINGS.l2)
