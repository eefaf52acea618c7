"""Exact and near duplicates of NLI pairs, within a file and across files (leakage).

Texts are compared after normalisation (Unicode NFKC, case folded, every run of
non-alphanumerics one space). Two pairs are *exact* duplicates when both normalised
texts are equal, *near* duplicates when the cosine similarity of their character
3-gram sets is at least `threshold` for the premises **and** for the hypotheses: the
diagnostic sets are built of minimal pairs (the same premise with a one-word change in
the hypothesis, or premise and hypothesis swapped), which a similarity of the whole pair
would call duplicates. Within a file, a pair is not a duplicate of its own swap: when the
premise of one is at least as close to the hypothesis of the other (and vice versa) as to
its premise, the two are a minimal pair of the diagnostic design (the same two sentences
in both directions), not a repeated item.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import CountVectorizer

_NON_ALNUM = re.compile(r"[\W_]+")
_BLOCK = 1024   # rows per similarity block: bounds memory at _BLOCK × items floats


def normalise(text: str) -> str:
    return _NON_ALNUM.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


@dataclass(frozen=True)
class PairVectors:
    """The normalised texts and unit-length character 3-gram vectors of a file's pairs."""

    premises: list[str]
    hypotheses: list[str]
    premise_vectors: sparse.csr_matrix
    hypothesis_vectors: sparse.csr_matrix


def _unit_rows(matrix: sparse.csr_matrix) -> sparse.csr_matrix:
    norms = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())
    return sparse.diags(1.0 / np.where(norms > 0, norms, 1.0)) @ matrix


def vectorise(pairs: list[list[tuple[str, str]]]) -> list[PairVectors]:
    """One shared 3-gram vocabulary for every file, so vectors of different files compare."""
    normalised = [[(normalise(p), normalise(h)) for p, h in file_pairs] for file_pairs in pairs]
    texts = [text for file_pairs in normalised for pair in file_pairs for text in pair]
    vectorizer = CountVectorizer(analyzer="char_wb", ngram_range=(3, 3), binary=True, lowercase=False,
                                 dtype=np.float32).fit(texts or [" "])
    out = []
    for file_pairs in normalised:
        premises = [p for p, _ in file_pairs]
        hypotheses = [h for _, h in file_pairs]
        out.append(PairVectors(premises, hypotheses, _unit_rows(vectorizer.transform(premises).tocsr()),
                               _unit_rows(vectorizer.transform(hypotheses).tocsr())))
    return out


def _matches(a: PairVectors, b: PairVectors, threshold: float, same: bool):
    """Yield (i, j, exact) for pairs i of `a` matching pairs j of `b` (j < i within one file)."""
    exact_b: dict[tuple[str, str], int] = {}
    for j, key in enumerate(zip(b.premises, b.hypotheses)):
        exact_b.setdefault(key, j)
    for start in range(0, len(a.premises), _BLOCK):
        stop = min(start + _BLOCK, len(a.premises))
        premises, hypotheses = a.premise_vectors[start:stop], a.hypothesis_vectors[start:stop]
        similar = np.minimum((premises @ b.premise_vectors.T).toarray(),
                             (hypotheses @ b.hypothesis_vectors.T).toarray())
        if same:
            swapped = np.minimum((premises @ b.hypothesis_vectors.T).toarray(),
                                 (hypotheses @ b.premise_vectors.T).toarray())
            similar[swapped >= similar - 1e-6] = 0.0
        for row in range(stop - start):
            i = start + row
            key = (a.premises[i], a.hypotheses[i])
            j = exact_b.get(key)
            if j is not None and (not same or (j < i and similar[row, j] > 0)):
                yield i, j, True
                continue
            candidates = np.flatnonzero(similar[row] >= threshold - 1e-6)
            if same:
                candidates = candidates[candidates < i]
            if candidates.size:
                yield i, int(candidates[0]), False


def duplicates_within(vectors: PairVectors, threshold: float) -> list[tuple[int, int, bool]]:
    """(item, earlier item it repeats, exact?) for every pair that repeats an earlier one."""
    return list(_matches(vectors, vectors, threshold, same=True))


def shared_between(a: PairVectors, b: PairVectors, threshold: float) -> list[tuple[int, int, bool]]:
    """(item of a, item of b, exact?) for every pair of `a` that also occurs in `b`."""
    return list(_matches(a, b, threshold, same=False))
