"""Annotation speed in pairs/s for English and Russian (annotation cache bypassed).

Pairs are generated from templates with distinct sentences (no help from deduplication).
Baselines measured in the same run: English, the full spaCy pipeline called one sentence
at a time; Russian, pymorphy3 parsing every token without the per-word-form cache.
Targets: English >= 150 pairs/s, Russian >= 2000 pairs/s on 2 cores.

    python benchmarks/annotate.py [--pairs-en 2000] [--pairs-ru 20000] [--n-process 2]
"""
from __future__ import annotations

import argparse
import itertools
import random
import time

from annotators import annotate
from annotators.languages import get_annotator
from annotators.settings import load_settings

EN = {
    "opener": ["", "Yesterday ", "In the end ", "According to the report, ", "Surprisingly, ",
               "As expected, ", "Last week ", "Unfortunately, "],
    "subject": ["The old farmer", "A young doctor", "Nobody in the village", "Most of the students",
                "Her younger brother", "The committee", "Every child", "Some engineers from Ohio",
                "The mayor of Boston", "Two nurses", "My neighbour", "The company"],
    "verb": ["did not see", "gave", "knew that", "will visit", "was unhappy with", "refused to sign",
             "often reads", "bought", "described", "never forgot", "sent", "has found"],
    "object": ["the letter to his mother", "the old house near the river", "anything unusual",
               "three reports before Monday", "the man who had resigned", "either the contract or the offer",
               "a book about the war", "the impossible plan", "their new car", "the results of the test",
               "a gift for her friend", "the museum in Paris"],
    "tail": ["", " yesterday", " if it rained", " and then left", " after the meeting", " because of the storm",
             " in 1998", " although nobody asked", " with great care", " before anyone noticed"],
}
RU = {
    "opener": ["", "Вчера ", "В конце концов ", "Согласно отчёту, ", "Удивительно, но ",
               "Как и ожидалось, ", "На прошлой неделе ", "К сожалению, "],
    "subject": ["Старый фермер", "Молодой врач", "Никто в деревне", "Большинство студентов",
                "Её младший брат", "Комитет", "Каждый ребёнок", "Некоторые инженеры из Казани",
                "Мэр Москвы", "Две медсестры", "Мой сосед", "Компания"],
    "verb": ["не видел", "дал", "знал, что видел", "посетит", "был недоволен", "отказался подписать",
             "часто читает", "купил", "описал", "никогда не забывал", "отправил", "нашёл"],
    "object": ["письмо своей матери", "старый дом у реки", "ничего необычного", "три отчёта до понедельника",
               "человека, который ушёл в отставку", "либо договор, либо предложение", "книгу о войне",
               "невозможный план", "их новую машину", "результаты теста", "подарок для друга",
               "музей в Париже"],
    "tail": ["", " вчера", ", если шёл дождь", " и затем ушёл", " после встречи", " из-за бури", " в 1998 году",
             ", хотя никто не просил", " с большой осторожностью", ", прежде чем кто-то заметил"],
}


def make_pairs(slots: dict[str, list[str]], n: int, seed: int = 0) -> list[tuple[str, str]]:
    """n pairs of distinct template sentences."""
    sentences = [f"{lead}{s[0].lower() if lead else s[0]}{s[1:]} {v} {o}{t}."
                 for lead, s, v, o, t in itertools.product(*slots.values())]
    random.Random(seed).shuffle(sentences)
    if len(sentences) < 2 * n:
        raise SystemExit(f"at most {len(sentences) // 2} distinct pairs; lower the count")
    return [(sentences[2 * i], sentences[2 * i + 1]) for i in range(n)]


def rate(n: int, func) -> float:
    start = time.perf_counter()
    func()
    return n / (time.perf_counter() - start)


def bench_english(n: int, n_process: int) -> None:
    pairs = make_pairs(EN, n)
    settings = {"n_process": n_process}
    nlp = get_annotator("en", load_settings(settings)).nlp
    nlp(pairs[0][0])  # warm-up
    with nlp.select_pipes(enable=nlp.component_names):
        baseline = rate(n, lambda: [nlp(text) for pair in pairs for text in pair])
    ours = rate(n, lambda: annotate(pairs, "en", settings, use_cache=False))
    print(f"en: {ours:8.0f} pairs/s  (baseline: spaCy full pipeline, one call per sentence: "
          f"{baseline:.0f} pairs/s, x{ours / baseline:.1f}; target >= 150)")


def bench_russian(n: int) -> None:
    from annotators import russian

    pairs = make_pairs(RU, n)
    analyzer = russian._analyzer()
    tokens = [russian.normalize(t) for pair in pairs for text in pair for t in russian.tokenize(text)]
    baseline = rate(n, lambda: [analyzer.parse(token)[0] for token in tokens])
    russian.analyse.cache_clear()
    ours = rate(n, lambda: annotate(pairs, "ru", use_cache=False))
    print(f"ru: {ours:8.0f} pairs/s  (baseline: pymorphy3 parse of every token, uncached, no rules: "
          f"{baseline:.0f} pairs/s, x{ours / baseline:.1f}; target >= 2000)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs-en", type=int, default=2000)
    parser.add_argument("--pairs-ru", type=int, default=20000)
    parser.add_argument("--n-process", type=int, default=2, help="spaCy worker processes (cores)")
    args = parser.parse_args()
    bench_english(args.pairs_en, args.n_process)
    bench_russian(args.pairs_ru)


if __name__ == "__main__":
    main()
