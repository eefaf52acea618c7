"""nli-stability: fine-tuning stability of multilingual encoders on NLI diagnostics."""

__version__ = "0.1.0"
