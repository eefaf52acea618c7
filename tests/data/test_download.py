"""Without data.root, files come from the release address into the cache, once."""
from __future__ import annotations

import functools
import hashlib
import http.server
import shutil
import threading
import zipfile
from pathlib import Path

import pytest

from stability.core.config import compose_config
from stability.core.errors import UserError
from stability.core.schemas.train import TrainConfig, train_settings
from stability.data.loading import load_run_data

RELEASED = Path(__file__).parent.parent / "fixtures" / "released"
# the fixture files are excerpts, not the release the configured hashes pin: no split pinned
UNPINNED = [f"~lang.download.sha256.{split}" for split in ("train", "validation", "test", "diagnostic")]


def _serve(folder: Path):
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _cfg(overrides: list[str]) -> TrainConfig:
    return train_settings(compose_config(overrides))


@pytest.fixture
def release(tmp_path) -> Path:
    """A mirror of the French release layout, plus a zip of the English one."""
    site = tmp_path / "site"
    shutil.copytree(RELEASED / "French", site / "French")
    (site / "French" / "TERRa" / "val_fr.jsonl").write_text(
        (RELEASED / "French" / "TERRa" / "train_fr.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    with zipfile.ZipFile(site / "RTE.zip", "w") as zipped:
        for name in ("train.jsonl", "val.jsonl"):
            zipped.write(RELEASED / "RTE" / name, f"RTE/{name}")
    with zipfile.ZipFile(site / "AX-b.zip", "w") as zipped:
        zipped.write(RELEASED / "AX-b" / "AX-b.jsonl", "AX-b/AX-b.jsonl")
    return site


def test_base_url_download_then_cache_without_server(release, tmp_path, isolated_cache):
    server = _serve(release)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    cfg = _cfg(["lang=fr", f"lang.download.base_url={url}", *UNPINNED])
    try:
        first = load_run_data(cfg)
    finally:
        server.shutdown()
        server.server_close()
    assert (isolated_cache / "downloads" / "French" / "diagnostics" / "LiDiRus_fr.jsonl").is_file()
    second = load_run_data(cfg)  # the server is gone: only the cache can answer
    assert second.diagnostic == first.diagnostic and len(second.train) == 1


def test_archive_download(release, isolated_cache):
    server = _serve(release)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    cfg = _cfg(["lang=en", f"lang.download.archives.RTE={url}/RTE.zip",
                f"lang.download.archives.AX-b={url}/AX-b.zip"])
    try:
        data = load_run_data(cfg)
    finally:
        server.shutdown()
        server.server_close()
    assert len(data.train) == 2 and data.diagnostic[0].categories == ("Negation",)
    assert (isolated_cache / "downloads" / "RTE" / "val.jsonl").is_file()


def test_offline_without_copy_says_what_to_put_where():
    cfg = _cfg(["lang=en", "lang.download.archives.RTE=http://127.0.0.1:9/RTE.zip"])
    with pytest.raises(UserError) as err:
        load_run_data(cfg)
    text = str(err.value)
    assert "cannot download http://127.0.0.1:9/RTE.zip" in text
    assert "put AX-b/AX-b.jsonl, RTE/train.jsonl, RTE/val.jsonl under a folder DIR and pass data.root=DIR" in text


def test_release_without_address_says_what_to_put_where():
    with pytest.raises(UserError) as err:
        load_run_data(_cfg(["lang=sv", "lang.download.base_url=null"]))
    assert "no download address configured" in str(err.value)
    assert "Swedish/TERRa/train_sw.jsonl" in str(err.value) and "data.root=DIR" in str(err.value)


def _mirror_of_the_release(shared_data: Path, site: Path) -> Path:
    """A local copy laid out like github.com/MariyaTikhonova/multilingual_diagnostics at the pinned commit."""
    for language in ("French", "German", "Swedish"):
        shutil.copytree(shared_data / language, site / language)
    return site


@pytest.mark.parametrize("lang", ["fr", "de", "sv"])
def test_pinned_release_downloads_and_matches_its_hashes(lang, shared_data, tmp_path, isolated_cache):
    server = _serve(_mirror_of_the_release(shared_data, tmp_path / "site"))
    cfg = _cfg([f"lang={lang}", f"lang.download.base_url=http://127.0.0.1:{server.server_address[1]}"])
    assert cfg.lang.download.sha256.keys() == {"train", "validation", "test", "diagnostic"}
    try:
        data = load_run_data(cfg)
    finally:
        server.shutdown()
        server.server_close()
    assert len(data.diagnostic) == 1104 and len(data.train) == cfg.lang.released_train_size
    for split in ("train", "validation", "diagnostic"):
        assert (isolated_cache / "downloads" / cfg.lang.files[split]).is_file()


def test_configured_address_is_the_pinned_commit():
    for lang in ("fr", "de", "sv"):
        assert _cfg([f"lang={lang}"]).lang.download.base_url == (
            "https://raw.githubusercontent.com/MariyaTikhonova/multilingual_diagnostics/"
            "10f4b8198aa433c8f933a729b9a28c0c85390502")


def test_corrupted_download_is_refused_and_not_cached(release, isolated_cache):
    train = release / "French" / "TERRa" / "train_fr.jsonl"
    digest = hashlib.sha256(train.read_bytes()).hexdigest()
    train.write_text(train.read_text(encoding="utf-8").replace("a", "b"), encoding="utf-8")  # corrupted in transit
    server = _serve(release)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        with pytest.raises(UserError) as err:
            load_run_data(_cfg(["lang=fr", f"lang.download.base_url={url}", *UNPINNED,
                                f"+lang.download.sha256.train={digest}"]))
    finally:
        server.shutdown()
        server.server_close()
    message = str(err.value)
    assert f"downloaded {url}/French/TERRa/train_fr.jsonl has sha256" in message
    assert f"expected {digest[:12]}" in message and "\n" not in message
    assert not (isolated_cache / "downloads" / "French" / "TERRa" / "train_fr.jsonl").exists()


def test_corrupted_cached_copy_is_an_error(release, isolated_cache):
    server = _serve(release)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    train = release / "French" / "TERRa" / "train_fr.jsonl"
    overrides = ["lang=fr", f"lang.download.base_url={url}", *UNPINNED,
                 f"+lang.download.sha256.train={hashlib.sha256(train.read_bytes()).hexdigest()}"]
    try:
        load_run_data(_cfg(overrides))
    finally:
        server.shutdown()
        server.server_close()
    cached = isolated_cache / "downloads" / "French" / "TERRa" / "train_fr.jsonl"
    cached.write_text("{}\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"does not match its pinned sha256 .*delete it"):
        load_run_data(_cfg(overrides))
