"""Item clusters: detection on hand-made items and on the French release, the cluster draws, and a
simulation showing that on clustered items the item bootstrap under-covers and the cluster bootstrap
does not."""
from __future__ import annotations

import numpy as np
import pytest

from stability.data.formats import read_examples
from stability.statistics.bootstrap import (ItemMatrix, accuracy_from_counts, bootstrap_samples, draw_counts,
                                            percentile_interval)
from stability.statistics.clusters import (ClusterSizes, cluster_draw_counts, column_clusters, merged,
                                           sentence_clusters)


def partition(clusters: np.ndarray) -> set[frozenset[int]]:
    """The clusters as sets of item positions (ids carry no meaning)."""
    return {frozenset(np.flatnonzero(clusters == cluster).tolist()) for cluster in np.unique(clusters)}


def test_swapped_pairs_shared_premises_and_singletons():
    items = [
        ("The cat sleeps.", "The cat is asleep."),      # 0 ┐ swapped pair
        ("The cat is asleep.", "The cat sleeps."),      # 1 ┘
        ("A man  reads a book.", "A man reads."),       # 2 ┐ one premise (whitespace differs), two edits
        (" A man reads a book. ", "Nobody reads."),     # 3 ┘
        ("It rains.", "The street is wet."),            # 4   singleton
        ("Dogs bark.", "Cats meow."),                   # 5 ┐ chain: 5 and 7 share nothing, both share with 6
        ("Cats meow.", "Birds sing."),                  # 6 │
        ("Birds sing.", "Fish swim."),                  # 7 ┘
        ("Snow is white.", "Snow is cold."),            # 8   singleton ("snow is white." differs in case)
        ("snow is white.", "Ice is cold."),             # 9   singleton
    ]
    clusters = sentence_clusters([p for p, _ in items], [h for _, h in items])
    assert partition(clusters) == {frozenset({0, 1}), frozenset({2, 3}), frozenset({4}), frozenset({5, 6, 7}),
                                   frozenset({8}), frozenset({9})}
    assert list(clusters) == [0, 0, 1, 1, 2, 3, 3, 3, 4, 5]   # numbered by first item
    sizes = ClusterSizes.of(clusters)
    assert (sizes.n_items, sizes.n_clusters, sizes.largest, sizes.in_clusters) == (10, 6, 3, 7)
    assert sizes.mean_size == pytest.approx(10 / 6)


def test_named_column_missing_values_stand_alone():
    clusters = column_clusters(["t1", None, "t1", "", "t2", float("nan"), "t2 "])
    assert partition(clusters) == {frozenset({0, 2}), frozenset({1}), frozenset({3}), frozenset({4, 6}),
                                   frozenset({5})}


def test_merged_joins_clusters_of_either_clustering():
    first, second = np.array([0, 0, 1, 2, 3]), np.array([5, 6, 6, 7, 8])
    assert partition(merged(first, second)) == {frozenset({0, 1, 2}), frozenset({3}), frozenset({4})}


def test_cluster_draws_weight_items_by_their_cluster():
    clusters = np.array([3, 3, 3, 7, 9, 9])
    counts = cluster_draw_counts(np.random.default_rng(1), 500, clusters)
    assert counts.shape == (500, 6)
    assert (counts[:, 0] == counts[:, 1]).all() and (counts[:, 1] == counts[:, 2]).all()
    assert (counts[:, 4] == counts[:, 5]).all()
    # 3 clusters drawn 3 times: the clusters' draw counts sum to 3 in every sample
    assert (counts[:, [0, 3, 4]].sum(axis=1) == 3).all()
    assert not (counts[:, 0] == counts[:, 3]).all()


def test_singleton_clusters_draw_exactly_as_the_item_bootstrap():
    ours = cluster_draw_counts(np.random.default_rng(5), 50, np.arange(20))
    np.testing.assert_array_equal(ours, draw_counts(np.random.default_rng(5), 50, 20))


def test_on_clustered_items_only_the_cluster_bootstrap_covers():
    """Items come in clusters of 5 answered alike: a cluster is 'easy' (each item right with p 0.95)
    with probability 0.7, else 'hard' (p 0.15), so the expected accuracy is 0.7·0.95 + 0.3·0.15 =
    0.71. Over 400 simulated test sets of 60 clusters, the 95 % interval of the item bootstrap
    covers 0.71 in about 67 % of them, the cluster bootstrap's in about 95 %. The Monte-Carlo
    standard error of a coverage near 0.95 at 400 repetitions is √(0.95·0.05/400) = 0.011; the
    test allows 3 of them."""
    rng = np.random.default_rng(0)
    repetitions, n_clusters, size, n_boot = 400, 60, 5, 400
    truth = 0.7 * 0.95 + 0.3 * 0.15
    clusters = np.repeat(np.arange(n_clusters), size)
    n_items = n_clusters * size
    covered = {"cluster": 0, "naive": 0}
    for _ in range(repetitions):
        easy = rng.random(n_clusters) < 0.7
        correct = (rng.random(n_items) < np.where(easy, 0.95, 0.15)[clusters]).astype(np.int64)
        runs = ItemMatrix(np.arange(n_items), np.ones(n_items, np.int64), correct[None, :],
                          np.ones((n_items, 1), bool), clusters)
        for name, matrix in (("cluster", runs), ("naive", runs.unclustered())):
            low, high = percentile_interval(bootstrap_samples(rng, n_boot, matrix, accuracy_from_counts), 0.95)
            covered[name] += int(low[0] <= truth <= high[0])
    coverage = {name: count / repetitions for name, count in covered.items()}
    monte_carlo_error = np.sqrt(0.95 * 0.05 / repetitions)
    assert coverage["naive"] < 0.85
    assert abs(coverage["cluster"] - 0.95) <= 3 * monte_carlo_error


def test_french_release_clusters(shared_data):
    """The French LiDiRus release: 1,104 items in 298 clusters (mean size 3.70, the largest 16);
    every item but one shares a sentence with another item."""
    examples = read_examples(shared_data / "French" / "diagnostics" / "LiDiRus_fr.jsonl", "fr")
    sizes = ClusterSizes.of(sentence_clusters([e.premise for e in examples], [e.hypothesis for e in examples]))
    assert (sizes.n_items, sizes.n_clusters, sizes.largest, sizes.in_clusters) == (1104, 298, 16, 1103)
    assert sizes.mean_size == pytest.approx(1104 / 298)
