"""What a run reads, by content: the inputs that decide its result besides its config.

The config names files and datasets by location (`data.root`, `lang.files`, a model folder);
two runs of one config over different content are different computations. Each input is
`role -> {"source": where it is read, "sha256": its content}`:
- data files (the language's train, validation and diagnostic files, the other languages'
  diagnostic files `eval:<code>` of `data.eval_langs`, MNLI, data files of an NLI dataset): the
  file's sha256;
- a `save_to_disk` dataset or a local model folder: one hash over its files (for a model, the
  config, weight and tokenizer files);
- a dataset read from the Hub (through `datasets`' cache): the loaded dataset's own
  fingerprint, which its cache folder and revision decide;
- a model named by Hub id: the commit its cached snapshot was downloaded at;
- a generated test suite: the suite files of its language.
A model trained from scratch (`model=tiny`) reads no weights; its tokenizer is trained on the
training text, which the train input covers. Hashes are cached by (path, size, mtime)
(`core.contenthash`), so a sweep over the same files hashes each of them once.
"""
from __future__ import annotations

from pathlib import Path

from stability.core.contenthash import file_hash, files_hash, folder_hash
from stability.core.runrecord import EVAL_LANG_ROLE
from stability.core.schemas.data import parse_n_samples
from stability.core.schemas.model import Model
from stability.core.schemas.nli import NliSet
from stability.data.hub import FILE_FORMATS, load_raw, saved_folder
from stability.data.loading import eval_language_source, language_source
from stability.data.mnli import mnli_source
from stability.data.sources import DataSettings

Inputs = dict[str, dict[str, str]]
# what of a model folder decides the weights and the tokenization
_MODEL_FILES = ("*.json", "*.safetensors", "*.bin", "*.model", "*.txt", "*.tiktoken")


def run_inputs(settings: DataSettings, model: Model) -> Inputs:
    """Every input of a run with these settings, by role, in a fixed order."""
    cache = Path(settings.paths.cache_dir).expanduser()
    data, code = settings.data, settings.lang.code
    source = language_source(settings)
    inputs: Inputs = {}
    if data.train_set.path is not None:
        inputs["train_set"] = nli_set_input(data.train_set, cache)
    else:
        inputs["train"] = file_input(source.path("train"), cache)
    if data.validation_set.path is not None:
        inputs["validation_set"] = nli_set_input(data.validation_set, cache)
    else:
        inputs["validation"] = file_input(source.path("validation"), cache)
    if data.diagnostic == "generated":
        from stability.templates.suites import SUITES_DIR

        suite_dir = SUITES_DIR / code
        inputs["diagnostic"] = {"source": f"generated suite {data.suite.name} ({suite_dir})",
                                "sha256": folder_hash(suite_dir, cache)}
    else:
        diagnostic = source.path("diagnostic") if data.diagnostic is None else Path(data.diagnostic).expanduser()
        inputs["diagnostic"] = file_input(diagnostic, cache)
    for other in data.eval_langs:
        inputs[f"{EVAL_LANG_ROLE}{other}"] = file_input(eval_language_source(settings, other).path("diagnostic"), cache)
    if parse_n_samples(data.mnli.n_samples) != 0:
        inputs["mnli"] = file_input(mnli_source(settings).path("train"), cache)
    if parse_n_samples(data.mix.n_samples, "data.mix.n_samples") != 0:
        inputs["mix"] = nli_set_input(data.mix, cache)
    for extra in data.extra_eval:
        inputs[f"extra:{extra.name}"] = nli_set_input(extra, cache)
    if model.kind != "tiny":  # only the tiny model is built from scratch
        inputs["model"] = model_input(model.name, cache)
    return inputs


def file_input(path: Path, cache: Path) -> dict[str, str]:
    return {"source": str(path), "sha256": file_hash(path, cache)}


def nli_set_input(spec: NliSet, cache: Path) -> dict[str, str]:
    """A dataset read through `datasets`: its files' content where they are local, else the
    fingerprint `datasets` gives the cached Hub split."""
    folder = saved_folder(spec)
    if folder is not None:
        return {"source": str(folder), "sha256": folder_hash(folder, cache)}
    if spec.path in FILE_FORMATS:
        files = [Path(name).expanduser() for name in spec.data_files or ()]
        if len(files) == 1:
            return file_input(files[0], cache)
        return {"source": ", ".join(map(str, files)), "sha256": files_hash(files, cache)}
    where = f"{spec.path}" + (f" {spec.config}" if spec.config else "") + f" [{spec.split}]"
    return {"source": where, "sha256": load_raw(spec)._fingerprint}


def model_input(name: str, cache: Path) -> dict[str, str]:
    """A local checkpoint by its files' content; a Hub id by the commit of its cached snapshot
    ("" when it is not cached yet: the run downloads it, and records it then)."""
    folder = Path(name).expanduser()
    if folder.is_dir():
        return {"source": str(folder), "sha256": folder_hash(folder, cache, _MODEL_FILES)}
    from huggingface_hub import try_to_load_from_cache
    from huggingface_hub.errors import HFValidationError

    try:
        cached = try_to_load_from_cache(name, "config.json")
    except HFValidationError:  # no Hub id either: loading the model says so in one line
        cached = None
    commit = Path(cached).parent.name if isinstance(cached, str) else ""
    return {"source": f"{name}@{commit}" if commit else name, "sha256": commit}
