"""Clusters of diagnostic items that are not independent of each other.

The diagnostic sets hold groups of items built from one sentence: the same premise and
hypothesis swapped, one premise with several edited hypotheses. A model that gets one of them
right tends to get the others right, so items resampled one by one understate how much a score
would move on another draw of sentences: the interval comes out too narrow. Items that share a
premise or a hypothesis (compared after whitespace normalisation, in either role) are one
cluster; a cluster is the connected component of the graph that links every item to its two
sentences (`scipy.sparse.csgraph.connected_components`, i.e. union–find over shared
sentences). The bootstrap then draws clusters with replacement and weights each item by how
often its cluster was drawn (`cluster_draw_counts`).

Cluster ids are integers 0..k−1 per call; they mean nothing across calls.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components


def normalised(sentence: str) -> str:
    """The sentence with runs of whitespace as one space and no space at either end."""
    return " ".join(str(sentence).split())


def components(labels: np.ndarray) -> np.ndarray:
    """(items,) cluster ids 0..k−1 from an (items, roles) array of labels in one label space:
    items are linked when they carry one label in any role (None links nothing).

    The graph joins every item to each of its labels; its connected components restricted to the
    items are the clusters, numbered in order of each cluster's first item.
    """
    labels = np.asarray(labels, dtype=object).reshape(len(labels), -1)
    n_items, n_roles = labels.shape
    if n_items == 0:
        return np.zeros(0, dtype=np.int64)
    codes, uniques = pd.factorize(pd.Series(labels.ravel(), dtype=object), use_na_sentinel=True)
    items = np.repeat(np.arange(n_items), n_roles)
    linked = codes >= 0
    size = n_items + len(uniques)
    graph = coo_matrix((np.ones(linked.sum()), (items[linked], codes[linked] + n_items)), shape=(size, size))
    found = connected_components(graph, directed=False)[1][:n_items]
    return pd.factorize(found)[0].astype(np.int64)


def sentence_clusters(premises: Iterable[str], hypotheses: Iterable[str]) -> np.ndarray:
    """(items,) cluster ids: items sharing a premise or a hypothesis, in either role, are one cluster."""
    return components(np.column_stack([np.array([normalised(text) for text in premises], dtype=object),
                                       np.array([normalised(text) for text in hypotheses], dtype=object)]))


def column_clusters(values: Iterable[object]) -> np.ndarray:
    """(items,) cluster ids from a column a user names: equal values (as text) are one cluster; a
    missing or empty value is an item on its own."""
    labels = pd.Series(list(values), dtype=object)
    text = labels.astype(str).str.strip()
    return components(text.where(labels.notna() & (text != ""), None).to_numpy(dtype=object))


def merged(*clusterings: np.ndarray) -> np.ndarray:
    """(items,) the finest clusters that contain every given clustering's clusters (e.g. the same
    items clustered in two languages: items grouped in either are grouped)."""
    return components(np.column_stack([np.array([f"{number}:{cluster}" for cluster in clusters], dtype=object)
                                       for number, clusters in enumerate(clusterings)]))


def relabelled(clusters: np.ndarray) -> np.ndarray:
    """The same partition with ids 0..k−1 (after selecting a subset of items)."""
    return np.unique(clusters, return_inverse=True)[1].astype(np.int64).reshape(-1)


def cluster_draw_counts(rng: np.random.Generator, n_boot: int, clusters: np.ndarray) -> np.ndarray:
    """(n_boot, items): k clusters drawn with replacement k times, each item counted as often as
    its cluster was drawn. With every item its own cluster the draws are `draw_counts`' exactly."""
    labels = relabelled(clusters)
    n_clusters = int(labels.max()) + 1 if labels.size else 0
    draws = rng.integers(0, n_clusters, size=(n_boot, n_clusters)) + n_clusters * np.arange(n_boot)[:, None]
    counts = np.bincount(draws.ravel(), minlength=n_boot * n_clusters).reshape(n_boot, n_clusters)
    return counts[:, labels]


@dataclass(frozen=True)
class ClusterSizes:
    """How grouped a set of items is."""

    n_items: int
    n_clusters: int
    mean_size: float
    largest: int
    in_clusters: int     # items in a cluster of 2 or more

    @classmethod
    def of(cls, clusters: np.ndarray) -> ClusterSizes:
        sizes = np.bincount(relabelled(clusters)) if len(clusters) else np.zeros(0, dtype=int)
        return cls(int(len(clusters)), int(len(sizes)), float(sizes.mean()) if len(sizes) else float("nan"),
                   int(sizes.max()) if len(sizes) else 0, int(sizes[sizes > 1].sum()))
