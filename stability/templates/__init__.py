"""Test-suite templates: a morphology-aware template engine (CheckList-style placeholders with
UniMorph feature agreement) and the YAML suites it expands into controlled NLI items in the
diagnostic format, aligned across languages by `idx`.

Layers: `features` (UniMorph and suite-defined dimensions) → `lexicon` (entries and their
forms; `russian` inflects lemmas with pymorphy3) → `syntax` (placeholders) → `engine`
(product minus exclusions, sampling, agreement) → `suites` (YAML files, Examples) →
`diagnostic` (jsonl rows). Entry point: `nli-stability generate`.

May import `stability.core` only (pymorphy3 for Russian lexicons, imported when needed).
"""
from stability.templates.diagnostic import write_diagnostic_jsonl
from stability.templates.suites import ALL, generate_suite, languages, suite_names

__all__ = ["ALL", "generate_suite", "languages", "suite_names", "write_diagnostic_jsonl"]
