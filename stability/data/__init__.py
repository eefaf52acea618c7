"""Data loading: released formats, file resolution (local, downloaded or built-in), MNLI mixing.

May import `stability.core` only.
"""
