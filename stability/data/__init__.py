"""Data loading: released formats, file resolution (local or downloaded), built-in data."""
