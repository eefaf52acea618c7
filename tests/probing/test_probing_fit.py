"""The batched logistic regressions agree with scikit-learn, one problem at a time."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit
from sklearn.linear_model import LogisticRegression

from probing.fit import fit_logistic, standardise

STRENGTHS = np.array([1e-1, 1e-2, 1e-3, 1e-4, 1e-5])


def _data(rng: np.random.Generator, n: int, n_layers: int, dims: int, n_tasks: int):
    latent = rng.standard_normal((n, 4))
    features = np.stack([latent @ rng.standard_normal((4, dims)) + rng.standard_normal((n, dims))
                         for _ in range(n_layers)]).astype(np.float32)
    labels = np.stack([(latent[:, t] + rng.standard_normal(n) > 0.4).astype(int) for t in range(n_tasks)], axis=1)
    return features, labels


def test_accuracies_match_sklearn_within_one_point():
    rng = np.random.default_rng(0)
    n_fit, n_test, n_layers, n_tasks = 400, 300, 2, 3
    features, labels = _data(rng, n_fit + n_test, n_layers, 30, n_tasks)
    x = standardise(features[:, :n_fit], {"test": features[:, n_fit:]})
    columns = np.repeat(labels[:n_fit], len(STRENGTHS), axis=1)
    fitted = fit_logistic(x["fit"], columns, np.tile(STRENGTHS, n_tasks))       # the command's tolerance
    assert fitted.converged.all()
    ours = (fitted.predict(x["test"]) == np.repeat(labels[n_fit:], len(STRENGTHS), axis=1).T[None]).mean(axis=2)
    for layer in range(n_layers):
        fit_x, test_x = x["fit"][layer, :, :-1].numpy(), x["test"][layer, :, :-1].numpy()
        for task in range(n_tasks):
            for k, strength in enumerate(STRENGTHS):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    reference = LogisticRegression(C=1 / (strength * n_fit)).fit(fit_x, labels[:n_fit, task])
                expected = (reference.predict(test_x) == labels[n_fit:, task]).mean()
                assert abs(ours[layer, task * len(STRENGTHS) + k] - expected) <= 0.01


def _objective(params: np.ndarray, x: np.ndarray, y: np.ndarray, strength: float) -> tuple[float, np.ndarray]:
    """The probe's objective in float64, mean logloss + λ/2·‖w‖² (bias not penalised), and its gradient."""
    z = x @ params
    loss = np.mean(np.logaddexp(0.0, z) - y * z) + strength / 2 * params[:-1] @ params[:-1]
    grad = x.T @ (expit(z) - y) / len(y)
    grad[:-1] += strength * params[:-1]
    return loss, grad


def test_well_conditioned_problems_reach_the_optimum():
    """The optimum is defined by the objective, not by one library version's coefficients:
    our weights reach the objective value of an independent float64 L-BFGS (scipy) and make
    the gradient vanish, and that optimum is scikit-learn's problem (C = 1 / (λ·n))."""
    rng = np.random.default_rng(3)
    n_fit, n_tasks, strengths = 400, 2, np.array([1e-1, 1e-2])
    features, labels = _data(rng, n_fit, 1, 30, n_tasks)
    x = standardise(features, {})["fit"]
    fitted = fit_logistic(x, np.repeat(labels, len(strengths), axis=1), np.tile(strengths, n_tasks), tol=1e-6)
    x64 = x[0].numpy().astype(np.float64)
    for task in range(n_tasks):
        for k, strength in enumerate(strengths):
            ours = fitted.weights[0, task * len(strengths) + k].numpy().astype(np.float64)
            reference = minimize(_objective, np.zeros(x64.shape[1]), args=(x64, labels[:, task], strength),
                                 jac=True, method="L-BFGS-B", options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10_000})
            assert reference.success
            our_loss, our_grad = _objective(ours, x64, labels[:, task], strength)
            # float32 arithmetic stops at the gradient tolerance: within float32 precision of the optimum
            assert our_loss - reference.fun <= 1e-6 * reference.fun
            assert np.abs(our_grad).max() < 1e-4
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sklearn = LogisticRegression(C=1 / (strength * n_fit), tol=1e-8, max_iter=1000) \
                    .fit(x64[:, :-1], labels[:, task])
            sklearn_loss, _ = _objective(np.append(sklearn.coef_[0], sklearn.intercept_[0]), x64, labels[:, task],
                                         strength)
            assert sklearn_loss == pytest.approx(reference.fun, abs=1e-7)   # the same problem as scikit-learn's


def test_each_problem_is_independent_of_its_batch():
    rng = np.random.default_rng(1)
    features, labels = _data(rng, 300, 2, 10, 2)
    x = standardise(features, {})["fit"]
    together = fit_logistic(x, np.repeat(labels, 2, axis=1), np.tile([1e-1, 1e-3], 2), tol=1e-5)
    alone = fit_logistic(x, labels[:, [1]], np.array([1e-3]), tol=1e-5)
    np.testing.assert_allclose(together.weights[:, 3].numpy(), alone.weights[:, 0].numpy(), atol=1e-3)


def test_zero_sample_weight_drops_the_row():
    rng = np.random.default_rng(2)
    features, labels = _data(rng, 200, 1, 8, 1)
    x = standardise(features, {})["fit"]
    weights = np.ones((200, 1))
    weights[150:] = 0.0
    weighted = fit_logistic(x, labels, np.array([1e-2]), sample_weight=weights, tol=1e-5)
    subset = fit_logistic(x[:, :150], labels[:150], np.array([1e-2]), tol=1e-5)
    np.testing.assert_allclose(weighted.weights.numpy(), subset.weights.numpy(), atol=1e-3)
