"""Controlled-presence subsets: exact counts, determinism, clear errors."""
import pytest

from annotators import annotate
from annotators.subsets import controlled_subset
from stability.core.errors import UserError
from stability.core.records import Example

SUBJECTS = ["The farmer", "A doctor", "My neighbour", "The teacher", "Her brother",
            "The mayor", "A student", "The pilot", "Our guide", "The baker"]
VERBS = [("sold", "did not sell"), ("painted", "never painted"), ("repaired", "did not repair"),
         ("visited", "did not visit")]
OBJECTS = ["the house", "the old barn", "a small boat", "the red car", "the garden shed"]


def synthetic_pool() -> list[Example]:
    """1600 English pairs; exactly those whose premise is negated carry Negation."""
    premises = [(f"{s} {v[neg]} {o}.", neg) for s in SUBJECTS for v in VERBS for o in OBJECTS[:1]
                for neg in (0, 1)]
    hypotheses = [f"{s} liked {o}." for s in SUBJECTS for o in OBJECTS[:2]]
    pool = [Example(idx=f"{i}-{j}", premise=p, hypothesis=h, label=neg, lang="en", source="synthetic")
            for i, (p, neg) in enumerate(premises) for j, h in enumerate(hypotheses)]
    assert len(pool) == 80 * 20 == 1600
    return pool


@pytest.fixture(scope="module")
def pool():
    return synthetic_pool()


@pytest.mark.parametrize("presence, expected", [(25, 250), (50, 500), (75, 750)])
def test_exact_presence(pool, presence, expected):
    subset = controlled_subset(pool, "en", "Negation", presence, n=1000, seed=0)
    assert len(subset) == 1000 and len({e.idx for e in subset}) == 1000
    assert sum(fs.has("Negation") for fs in annotate(subset, "en")) == expected


def test_deterministic_given_seed(pool):
    first = controlled_subset(pool, "en", "Negation", 30, n=200, seed=7)
    assert first == controlled_subset(pool, "en", "Negation", 30, n=200, seed=7)
    assert first != controlled_subset(pool, "en", "Negation", 30, n=200, seed=8)


def test_too_few_pairs_with_feature(pool):
    with pytest.raises(UserError, match="has 800 with 'Negation' and 800 without"):
        controlled_subset(pool, "en", "Negation", 90, n=1000, seed=0)


def test_bad_arguments(pool):
    with pytest.raises(UserError, match="outside 0..100"):
        controlled_subset(pool, "en", "Negation", 150, n=10, seed=0)
    with pytest.raises(UserError, match="cannot be detected in 'de'"):
        controlled_subset(pool, "de", "Named entities", 50, n=10, seed=0)
    with pytest.raises(UserError, match="unknown feature"):
        controlled_subset(pool, "en", "Negativity", 50, n=10, seed=0)
