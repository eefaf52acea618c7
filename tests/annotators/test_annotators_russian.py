"""Russian rules (pymorphy3 + word lists on lemmas)."""
import pytest
from feature_cases import assert_detects

from annotators.tokenize import tokenize

CASES = [
    ("Negation", "Кот не сидел на ковре.", "Кот сидел на ковре."),
    ("Negation", "Никто не пришёл.", "Все пришли."),
    ("Double negation", "Это не невозможно.", "Это невозможно."),
    ("Double negation", "Он не мог не прийти.", "Он не мог прийти."),
    ("Morphological negation", "Он был невнимательным.", "Он был внимательным."),
    ("Morphological negation", "Это бесполезный совет.", "Через неделю он уехал."),
    ("Quantifiers", "Все студенты сдали экзамен.", "Студент сдал экзамен."),
    ("Quantifiers", "Он часто читает газеты.", "Он читает газету."),
    ("Factivity", "Иван знает, что Мария ушла.", "Иван пошёл в магазин."),
    ("Named entities", "Иван Петров приехал в Москву.", "Учитель приехал в город."),
    ("Intervals/Numbers", "Он купил три яблока.", "Он купил яблоки."),
    ("Intervals/Numbers", "Цены выросли на 15 процентов.", "Цены выросли."),
    ("Temporal", "Она ушла до начала встречи.", "Она ушла со встречи."),
    ("Conditionals", "Если пойдёт дождь, мы останемся дома.", "Пошёл дождь, и мы остались дома."),
    ("Conjunction", "Том и Мария пришли.", "Том пришёл."),
    ("Disjunction", "Том или Мария придёт.", "Том придёт."),
    ("Prepositional phrases", "Книга лежит на столе.", "Книга красная."),
    ("Anaphora/Coreference", "Иван сказал, что он устал.", "Иван устал."),
    ("Relative clauses", "Человек, который здесь живёт, врач.", "Этот человек врач."),
    ("Datives", "Я дал книгу брату.", "Я видел брата."),
    ("Datives", "Мне холодно.", "Я шёл к брату."),
]


@pytest.mark.parametrize("feature, positive, negative", CASES)
def test_feature(feature, positive, negative):
    assert_detects("ru", feature, positive, negative)


def test_tokenizer_handles_russian_punctuation():
    assert tokenize("«Привет», — сказал он… Кто-то (вчера) ушёл!") == [
        "«", "Привет", "»", ",", "—", "сказал", "он", "…", "Кто-то", "(", "вчера", ")", "ушёл", "!"]
