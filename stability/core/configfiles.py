"""Where in the config files a key that failed to compose was written: the file and its line.

Hydra reports a bad key of a config file (`In 'trainer/swa': ConfigKeyError ...`) by the file's
config path only, and a preset of one's own (`hydra.searchpath=[file://DIR]`) may sit in any
folder: the error is only useful with the file's path and the key's line, which this finds by
reading the file the way Hydra found it (the project's configs first, then the search path's).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Sequence

import yaml

# Hydra's prefix naming the config it was merging when composing failed
_MERGING = re.compile(r"^In '([^']+)': ")


def failing_config(message: str) -> str | None:
    """The config path (`trainer/swa`) Hydra's composition error names, or None."""
    found = _MERGING.match(message)
    return found.group(1) if found else None


def config_file(config_path: str, config_dirs: Sequence[Path]) -> Path | None:
    """The file of `config_path` in the first of `config_dirs` that has it, as Hydra searches them."""
    return next((folder / f"{config_path}.yaml" for folder in config_dirs
                 if (folder / f"{config_path}.yaml").is_file()), None)


def key_line(path: Path, full_key: str) -> int | None:
    """The line (from 1) of `full_key` in the YAML file `path`: its dotted parts from the outermost
    that the file nests (`trainer.swa` is `swa:` at the top of trainer/swa.yaml, whose package is
    `trainer`, and `trainer: {swa: ...}` in an experiment's `_global_` file); None when not found."""
    try:
        root = yaml.compose(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    parts = full_key.split(".")
    for start in range(len(parts)):
        line = _find(root, parts[start:])
        if line is not None:
            return line
    return None


def _find(node: yaml.Node | None, parts: list[str]) -> int | None:
    for part in parts:
        if not isinstance(node, yaml.MappingNode):
            return None
        match = next(((key, value) for key, value in node.value if getattr(key, "value", None) == part), None)
        if match is None:
            return None
        key_node, node = match
    return key_node.start_mark.line + 1
