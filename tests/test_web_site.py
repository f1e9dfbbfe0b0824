"""``sheetsync web DIR`` and the page at ``/`` of ``sheetsync serve`` (issue 25 §2), without a
browser: what the site holds, that sheetsync's own wheel is a wheel, and which files the
server hands out without a key.  The page itself runs in ``test_web_page.py``."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import socket
import subprocess
import sys
import threading
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from typer.testing import CliRunner

from sheetsync.app.cli import app
from sheetsync.app.server import create_app
from sheetsync.web import PYODIDE_VERSION, default_pyodide_url
from sheetsync.web.site import PAGE_FILES, build_site

ROOT = Path(__file__).resolve().parent.parent


@contextlib.contextmanager
def client_of(app: Any) -> Iterator[httpx.Client]:
    """``app`` under uvicorn on a free loopback port (no lifespan: the page needs no
    settling), and a client for it."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started:
            assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.01)
        with httpx.Client(base_url=f"http://127.0.0.1:{sock.getsockname()[1]}", timeout=60) as client:
            yield client
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("site")
    result = CliRunner().invoke(app, ["web", str(root)])
    assert result.exit_code == 0, result.output
    assert "Wrote the web page" in result.output
    return root


def test_issue25_web_writes_the_page_its_config_and_three_wheels(site: Path) -> None:
    for name in (*PAGE_FILES, "config.json"):
        assert (site / name).is_file(), name
    config = json.loads((site / "config.json").read_text())
    assert config["pyodide"] == default_pyodide_url() == f"https://cdn.jsdelivr.net/pyodide/v{PYODIDE_VERSION}/full/"
    names = [Path(w).name for w in config["wheels"]]
    assert [n.split("-")[0] for n in names] == ["sheetsync", "openpyxl", "et_xmlfile"]
    for wheel in config["wheels"]:
        assert zipfile.is_zipfile(site / wheel), wheel
    index = (site / "index.html").read_text()
    assert 'src="app.js"' in index and 'role="status"' in index and "Tracker workbook" in index


def test_issue25_web_takes_a_local_pyodide_folder(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["web", str(tmp_path), "--pyodide", "pyodide"])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "config.json").read_text())["pyodide"] == "pyodide/"


def test_issue25_the_sheetsync_wheel_is_a_wheel_with_every_file_hashed(site: Path) -> None:
    wheel = next((site / "wheels").glob("sheetsync-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        dist_info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/WHEEL"))
        assert "Root-Is-Purelib: true" in archive.read(f"{dist_info}/WHEEL").decode()
        record = archive.read(f"{dist_info}/RECORD").decode().splitlines()
        hashed = {}
        for line in record:
            name, digest, size = line.rsplit(",", 2)
            hashed[name] = (digest, size)
        assert set(hashed) == set(names)
        for name in names:
            if name.endswith("/RECORD"):
                continue
            data = archive.read(name)
            expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert hashed[name] == (f"sha256={expected}", str(len(data))), name
        assert "sheetsync/web/app.js" in names and "sheetsync/app/cli.py" in names
        assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    # the wheel alone is an importable sheetsync (zip import, as site-packages would hold it)
    probe = subprocess.run([sys.executable, "-c", "import sheetsync, sheetsync.web; print(sheetsync.__file__)"],
                           env={"PYTHONPATH": str(wheel)}, capture_output=True, text=True, cwd=site, check=True)
    assert probe.stdout.strip().startswith(str(wheel))


def test_issue25_the_same_tree_makes_the_same_wheel(tmp_path: Path) -> None:
    first = build_site(tmp_path / "a", "pyodide/")
    second = build_site(tmp_path / "b", "pyodide/")
    name = first.wheels[0]
    assert second.wheels == first.wheels
    assert (tmp_path / "a" / "wheels" / name).read_bytes() == (tmp_path / "b" / "wheels" / name).read_bytes()


def test_issue25_serve_hands_out_the_page_without_a_key(site: Path) -> None:
    with client_of(create_app(api_key="k", site=site)) as client:
        _page_without_a_key(client, site)


def _page_without_a_key(client: httpx.Client, site: Path) -> None:
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert page.text == (site / "index.html").read_text()
    assert client.get("/app.js").headers["content-type"].startswith("text/javascript")
    assert client.get("/config.json").json()["pyodide"] == default_pyodide_url()
    wheel = json.loads((site / "config.json").read_text())["wheels"][0]
    assert client.get(f"/{wheel}").content == (site / wheel).read_bytes()
    # only the page's own files: no listing, nothing beside them, no way out of the folder
    (site / "secret.txt").write_text("no")
    for path in ("/secret.txt", "/wheels/", "/wheels/secret.txt", "/docs", "/openapi.json", "/%2e%2e/etc/passwd",
                 "/wheels/%2e%2e%2fsecret.whl"):
        assert client.get(path, follow_redirects=True).status_code == 404, path
    # the steps still want their key
    assert client.post("/api/resolve", json={}).status_code == 401


def test_issue25_serve_writes_the_page_on_its_first_request() -> None:
    served = create_app(api_key="k")
    with client_of(served) as client:
        assert client.get("/nope.txt").status_code == 404
        assert served.state.web_page._site is None  # a name the page doesn't have writes nothing
        assert "Tracker workbook" in client.get("/").text
        assert client.get("/config.json").json()["pyodide"] == default_pyodide_url()


def test_issue25_the_pyodide_version_is_pinned_in_one_place() -> None:
    script = (ROOT / ".ci" / "install-pyodide.sh").read_text()
    assert "sheetsync.web" in script and PYODIDE_VERSION not in script
    done = subprocess.run(["bash", "-c", 'eval "$(grep -m1 "^eval" .ci/install-pyodide.sh)"; echo "$PYODIDE_VERSION"'],
                          cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == PYODIDE_VERSION
