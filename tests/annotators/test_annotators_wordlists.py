"""Word-list files and their pattern language."""
import pytest

from annotators.languages import LANGUAGES
from annotators.tokenize import normalize, tokenize
from annotators.wordlists import WORDLIST_DIR, Sentence, WordList


def sentence(text: str) -> Sentence:
    return Sentence.of(text, [normalize(t) for t in tokenize(text)])


@pytest.mark.parametrize("path", sorted(WORDLIST_DIR.glob("*/*.txt")), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_list_starts_with_a_comment_header(path):
    assert path.parent.name in LANGUAGES
    assert path.read_text(encoding="utf-8").startswith("#")


def test_patterns():
    wordlist = WordList.parse("t", ["never", "kein*", "as well as", "^ om", ", om", "om ... är|har"])
    assert wordlist.matches(sentence("Keiner kam."))
    assert wordlist.matches(sentence("Tea as well as coffee."))
    assert not wordlist.matches(sentence("Tea as well."))
    assert wordlist.matches(sentence("Om det regnar."))
    assert wordlist.matches(sentence("Vi går, om det regnar."))
    assert wordlist.matches(sentence("En bonus om avståndet är större."))
    assert not wordlist.matches(sentence("En bok om kriget. Den är bra."))   # gap stops at punctuation
    assert not wordlist.matches(sentence("Vi talar om boken."))
    assert wordlist.count(sentence("Never, never again.")) == 2


def test_lemmas_are_matched_too():
    wordlist = WordList.parse("t", ["know"])
    assert wordlist.matches(Sentence.of("She knew.", ["she", "knew", "."], ["she", "know", "."]))
