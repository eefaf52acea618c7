"""Data loading: released formats, file resolution (local, downloaded or built-in), every split a
`datasets.Dataset` of records (`container`), any NLI dataset through Hugging Face `datasets`
(`hub`), MNLI and other mixing (`mnli`, `mixing`), generated test suites as the diagnostic set.

May import `stability.core`, and `stability.templates` for test suites generated in-process.
"""
