"""Recall on the released French, German and Swedish diagnostic sets (skipped without them)."""
import pytest

from annotators import annotate
from annotators.evaluate import agreement
from stability.data.formats import read_examples

FILES = {"fr": "French/diagnostics/LiDiRus_fr.jsonl", "de": "German/diagnostics/LiDiRus_gr.jsonl",
         "sv": "Swedish/diagnostics/LiDiRus_sw.jsonl"}
HEADLINE = ["Negation", "Conditionals", "Disjunction", "Conjunction", "Quantifiers"]


@pytest.mark.slow
@pytest.mark.parametrize("lang", sorted(FILES))
def test_recall_on_released_diagnostics(shared_data, lang):
    examples = read_examples(shared_data / FILES[lang], lang)
    table = agreement(examples, annotate(examples, lang)).set_index("feature")
    low = {f: round(table.loc[f, "recall"], 3) for f in HEADLINE if not table.loc[f, "recall"] >= 0.8}
    assert not low, f"{lang}: recall below 0.8 for {low}"
