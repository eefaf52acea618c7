"""Rule-based detection of diagnostic features in NLI pairs (docs/design.md, "Purpose").

`annotate(pairs, lang)` returns one `FeatureSet` per pair; `subsets.controlled_subset`
draws training sets where a feature occurs at a chosen rate; `nli-stability annotate`
(= `python -m annotators`) annotates files, measures feature shares and scores the rules against gold categories.
"""
from annotators.api import annotate, annotate_sentences, supported_features
from annotators.features import FEATURES, FeatureSet
from annotators.languages import LANGUAGES

__all__ = ["FEATURES", "FeatureSet", "LANGUAGES", "annotate", "annotate_sentences",
           "supported_features"]
