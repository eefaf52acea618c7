"""English rules: one sentence that has each feature and one that does not."""
import pytest
from feature_cases import assert_detects

CASES = [
    ("Negation", "The cat did not sit on the mat.", "The cat sat on the mat."),
    ("Negation", "Nobody came to the party.", "Everybody came to the party."),
    ("Double negation", "It is not impossible to win.", "It is impossible to win."),
    ("Double negation", "He didn't fail the exam.", "He didn't pass the exam."),
    ("Morphological negation", "She is unhappy with the result.", "She is happy with the result."),
    ("Morphological negation", "The plan was illegal.", "He walked under the bridge."),
    ("Morphological negation", "The movie was pointless.", "They share an interest in music."),
    ("Quantifiers", "Most students passed the test.", "The student passed the test."),
    ("Quantifiers", "She always reads the news.", "She read the news."),
    ("Factivity", "John knows that Mary left.", "John walked to the shop."),
    ("Named entities", "Barack Obama visited Berlin.", "The president visited the city."),
    ("Intervals/Numbers", "He bought three apples.", "He bought apples."),
    ("Intervals/Numbers", "The price rose by 15 percent.", "The price rose sharply."),
    ("Temporal", "She left before the meeting.", "She left the meeting."),
    ("Conditionals", "If it rains, we stay home.", "It rains, so we stay home."),
    ("Conditionals", "We will go unless it rains.", "We will go although it rains."),
    ("Conjunction", "Tom and Mary arrived.", "Tom arrived."),
    ("Disjunction", "Tom or Mary arrived.", "Tom arrived."),
    ("Prepositional phrases", "The book is on the table.", "The book is red."),
    ("Anaphora/Coreference", "John said he was tired.", "John was tired."),
    ("Relative clauses", "The man who lives here is a doctor.", "The man is a doctor."),
    ("Datives", "She gave her brother a book.", "She saw her brother."),
    ("Datives", "She gave a book to her brother.", "She read a book."),
]


@pytest.mark.parametrize("feature, positive, negative", CASES)
def test_feature(feature, positive, negative):
    assert_detects("en", feature, positive, negative)


def test_two_sentences_with_one_negation_each_are_no_double_negation():
    from annotators import annotate

    [pair] = annotate([("The cat did not sit.", "The dog did not bark.")], "en", use_cache=False)
    assert "Negation" in pair.features
    assert "Double negation" not in pair.features
