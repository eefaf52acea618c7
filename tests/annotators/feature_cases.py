"""The one check behind every language's positive/negative feature sentences."""
from __future__ import annotations

from annotators import annotate_sentences


def assert_detects(lang: str, feature: str, positive: str, negative: str) -> None:
    """`feature` is found in the positive sentence and not in the negative one."""
    found_pos, found_neg = annotate_sentences([positive, negative], lang, use_cache=False)
    assert feature in found_pos, f"{feature} missed in {positive!r}: {sorted(found_pos)}"
    assert feature not in found_neg, f"{feature} wrongly found in {negative!r}: {sorted(found_neg)}"
