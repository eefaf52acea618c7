"""Where a configured data file comes from: `data.root`, the download cache, or built-in data.

A language config names its files relative to a root. With `data.root` set, files are read
from there. Without it, a file is taken from the local download cache, filling the cache on
first use from the configured release (an archive per top folder, or a base address that
mirrors the relative paths). Where the config pins a file's sha256 (per split), a download
whose content differs is refused before it reaches the cache, and a cached copy is checked
on every use, so a run never trains on a corrupted or silently changed release.
"""
from __future__ import annotations

import shutil
import tempfile
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Protocol

from stability.core.atomic import atomic_path
from stability.core.contenthash import sha256_of_file
from stability.core.errors import UserError
from stability.core.schemas.checks import symlink_loop
from stability.core.schemas.data import Data, Download
from stability.core.schemas.lang import Lang
from stability.core.schemas.paths import Paths

BUILTIN_DIR = Path(__file__).parent / "builtin"
_DOWNLOAD_TIMEOUT_S = 60


class DataSettings(Protocol):
    """What the data loaders read of a command's typed config: the language, the data settings,
    the cache folder and the annotator settings (feature-controlled MNLI subsets). The training
    config (`TrainConfig`) has these; so does any command that reads a run's data the same way."""

    lang: Lang
    data: Data
    paths: Paths
    annotator: Any


def downloads_dir(paths: Paths) -> Path:
    """The download cache under `paths.cache_dir`, shared by every run and language."""
    return Path(paths.cache_dir).expanduser() / "downloads"


@dataclass(frozen=True)
class DownloadSpec:
    """A release's addresses: `archives` maps a top folder to a zip; `base_url` mirrors paths."""

    base_url: str | None = None
    archives: Mapping[str, str] = field(default_factory=dict)
    sha256: Mapping[str, str] = field(default_factory=dict)   # split -> expected hex digest

    @classmethod
    def from_config(cls, download: Download) -> DownloadSpec:
        """From a config's `download` block; only a pinned release (`PinnedDownload`) has sha256."""
        return cls(download.base_url, dict(download.archives), dict(getattr(download, "sha256", {})))


@dataclass(frozen=True)
class FileSource:
    """How to find the files of one dataset (a language or MNLI)."""

    name: str
    files: Mapping[str, str]
    root: Path | None
    cache_dir: Path
    download: DownloadSpec
    # the config key of a split's file, as a user overrides it (MNLI's is data.mnli.file)
    key: str = "lang.files.{split}"

    def path(self, split: str) -> Path:
        """The local path of a split, downloading into the cache when needed."""
        key = self.key.format(split=split)
        if split not in self.files or not self.files[split]:
            raise UserError(f"{self.name} has no '{split}' file configured",
                            fix=f"pass ++{key}=PATH (relative to data.root) or add it to the config")
        relative = self.files[split]
        if self.root is not None:
            path = self.root / relative
            if symlink_loop(path):
                raise UserError(f"the {self.name} {split} file is a loop of symbolic links", path=path,
                                fix=f"mend the link on its path that leads back to itself, or point {key} elsewhere")
            if not path.is_file():
                raise UserError(f"missing {self.name} {split} file", path=path,
                                fix=f"put the file there, point {key} elsewhere, "
                                    "or unset data.root to download the release")
            return path
        cached = self.cache_dir / relative
        expected = self.download.sha256.get(split)
        if not cached.is_file():
            self._download(relative, cached, expected)
        if expected and sha256_of_file(cached) != expected:
            raise UserError(f"the cached {self.name} {split} file does not match its pinned sha256 "
                            f"{expected[:12]}…", path=cached, fix="delete it so that it is downloaded again")
        return cached

    def _placement_hint(self) -> str:
        wanted = ", ".join(sorted(set(self.files.values())))
        return f"put {wanted} under a folder DIR and pass data.root=DIR"

    def _download(self, relative: str, target: Path, expected_sha256: str | None) -> None:
        top = relative.split("/", 1)[0]
        if top in self.download.archives:
            url = self.download.archives[top]
            _fetch_archive(url, self.cache_dir, self._placement_hint())
            if not target.is_file():
                raise UserError(f"the archive {url} holds no {relative}", fix=self._placement_hint())
        elif self.download.base_url:
            url = self.download.base_url.rstrip("/") + "/" + relative
            _fetch_file(url, target, self._placement_hint(), expected_sha256)
        else:
            raise UserError(f"no local copy of {self.name} data and no download address configured",
                            fix=self._placement_hint())


def _open(url: str, hint: str):
    try:
        return urllib.request.urlopen(url, timeout=_DOWNLOAD_TIMEOUT_S)
    except (urllib.error.URLError, OSError) as err:
        reason = getattr(err, "reason", err)
        raise UserError(f"cannot download {url} ({reason})", fix=hint) from None


def _fetch_file(url: str, target: Path, hint: str, expected_sha256: str | None = None) -> None:
    """Download to a temporary file first, so a broken transfer or a file that does not match
    its pinned hash never looks like a cached file."""
    with _open(url, hint) as response, atomic_path(target) as tmp:
        with tmp.open("wb") as handle:
            shutil.copyfileobj(response, handle)
        if expected_sha256 and (actual := sha256_of_file(tmp)) != expected_sha256:
            raise UserError(f"downloaded {url} has sha256 {actual[:12]}…, expected {expected_sha256[:12]}… "
                            "(corrupted transfer or changed release)", fix=hint)


def _fetch_archive(url: str, cache_dir: Path, hint: str) -> None:
    cache_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache_dir) as tmp_dir:
        archive = Path(tmp_dir) / "archive.zip"
        _fetch_file(url, archive, hint)
        try:
            with zipfile.ZipFile(archive) as zipped:
                zipped.extractall(cache_dir)
        except zipfile.BadZipFile:
            raise UserError(f"{url} is not a zip archive", fix=hint) from None
