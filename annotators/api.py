"""`annotate`: features of NLI pairs, batched, deduplicated and cached by sentence content."""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from annotators.cache import AnnotationCache
from annotators.features import FeatureSet
from annotators.languages import fingerprint, get_annotator
from annotators.settings import Settings, load_settings
from stability.core.progress import progress
from stability.core.records import Example

Pair = Example | Sequence[str]
# Texts analysed per call: large enough for spaCy's batching, small enough for a live progress bar.
# With several processes (n_process != 1) spaCy starts its workers on every call, so all
# texts go in one call.
_CHUNK = 2000
SettingsLike = Mapping[str, Any] | Settings | None


@functools.lru_cache(maxsize=None)
def _cache(directory: Path, key: str) -> AnnotationCache:
    return AnnotationCache(directory, key)


def supported_features(lang: str, settings: SettingsLike = None) -> frozenset[str]:
    """Features `lang` can detect; the others are reported as unsupported, never as absent."""
    return get_annotator(lang, load_settings(settings)).supported


def annotate_sentences(texts: Iterable[str], lang: str, settings: SettingsLike = None,
                       use_cache: bool = True) -> list[frozenset[str]]:
    """Features of each sentence; each distinct text is analysed at most once."""
    resolved = load_settings(settings)
    annotator = get_annotator(lang, resolved)
    texts = list(texts)
    unique = list(dict.fromkeys(texts))
    cache = _cache(resolved.cache_dir, fingerprint(annotator)) if use_cache else None
    known = cache.get_many(unique) if cache else {}
    missing = [text for text in unique if text not in known]
    size = _CHUNK if resolved.n_process == 1 else max(len(missing), 1)
    bar = progress(total=len(missing), desc=f"annotate {lang}", unit="text", enabled=len(missing) > size)
    for start in range(0, len(missing), size):
        chunk = missing[start:start + size]
        fresh = dict(zip(chunk, annotator.annotate_texts(chunk, resolved.batch_size, resolved.n_process)))
        if cache:
            cache.put_many(fresh)   # per chunk: an interrupted pass keeps what it finished
        known.update(fresh)
        bar.update(len(chunk))
    bar.close()
    return [known[text] for text in texts]


def annotate(pairs: Iterable[Pair], lang: str, settings: SettingsLike = None,
             use_cache: bool = True) -> list[FeatureSet]:
    """Features of each pair (Example or (premise, hypothesis)); `settings` as in defaults.yaml."""
    texts = [(p.premise, p.hypothesis) if isinstance(p, Example) else (p[0], p[1]) for p in pairs]
    flat = annotate_sentences((t for pair in texts for t in pair), lang, settings, use_cache)
    supported = supported_features(lang, settings)
    return [FeatureSet(flat[2 * i], flat[2 * i + 1], supported) for i in range(len(texts))]
