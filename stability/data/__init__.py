"""Data loading: released formats, file resolution (local, downloaded or built-in), MNLI mixing,
generated test suites as the diagnostic set.

May import `stability.core`, and `stability.templates` for test suites generated in-process.
"""
