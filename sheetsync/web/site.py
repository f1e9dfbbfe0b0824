"""``sheetsync web DIR``: the static site any static host can serve (issue 25).

The site is the page (:data:`PAGE_FILES`), ``config.json`` (where Pyodide is loaded from
and which wheels to unpack) and ``wheels/``: sheetsync's own wheel, zipped here from the
package itself (pure Python, so a zip with its ``dist-info`` is the whole wheel and no
build backend is needed), and the openpyxl and et_xmlfile wheels, taken from the cache
``.ci/install-pyodide.sh`` fills or else downloaded with ``pip download``.

Standard library only (and :mod:`sheetsync.core.errors` for the one clear message).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from sheetsync.core.errors import BackendError
from sheetsync.web import ET_XMLFILE_VERSION, OPENPYXL_VERSION, PYODIDE_VERSION, default_pyodide_url

__all__ = ["CACHE_ENV", "OPTIONAL_PACKAGES", "PAGE_FILES", "Site", "build_site", "dependency_wheels", "pyodide_cache",
           "sheetsync_wheel", "site_files"]

PAGE_FILES = ("index.html", "app.js", "worker.js", "style.css", "sw.js")
"""The page itself, package data of :mod:`sheetsync.web` (``sw.js`` keeps it for offline use)."""
CACHE_ENV = "SHEETSYNC_PYODIDE_CACHE"
"""Where the Pyodide cache is, when not in ``.cache/pyodide`` beside the source tree."""
OPTIONAL_PACKAGES: tuple[str, ...] = ()
"""Pyodide's own packages the page loads when its Pyodide has them.  None today: the hex map
is drawn as SVG with the standard library, so the page needs no Pillow."""
DEPENDENCIES = (("openpyxl", OPENPYXL_VERSION, "py2.py3"), ("et_xmlfile", ET_XMLFILE_VERSION, "py3"))
"""The wheels the workbook path needs besides sheetsync's own: name, version, python tag."""
ZIP_TIME = (1980, 1, 1, 0, 0, 0)
"""Every member of sheetsync's wheel has this time, so the same tree makes the same bytes."""
SKIPPED_DIRS = {"__pycache__"}
SKIPPED_SUFFIXES = (".pyc", ".pyo", ".lock")


@dataclass(frozen=True, slots=True)
class Site:
    """What :func:`build_site` wrote: the folder, the Pyodide URL and the wheels' names."""

    root: Path
    pyodide: str
    wheels: tuple[str, ...]


def pyodide_cache() -> Path:
    """The folder ``.ci/install-pyodide.sh`` fills: ``$SHEETSYNC_PYODIDE_CACHE``, else
    ``.cache/pyodide`` in the source tree sheetsync runs from."""
    given = os.environ.get(CACHE_ENV)
    if given:
        return Path(given)
    return Path(__file__).resolve().parents[2] / ".cache" / "pyodide"


def _version() -> str:
    import sheetsync

    return str(sheetsync.__version__)


def _package_files(package: Path) -> list[Path]:
    files = []
    for path in sorted(package.rglob("*")):
        relative = path.relative_to(package)
        if path.is_dir() or SKIPPED_DIRS.intersection(relative.parts) or path.name.startswith(".~lock"):
            continue
        if path.suffix in SKIPPED_SUFFIXES:
            continue
        files.append(path)
    return files


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _write_member(archive: zipfile.ZipFile, name: str, data: bytes) -> None:
    info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
    info.external_attr = 0o644 << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, data)


def sheetsync_wheel(dest: Path) -> Path:
    """sheetsync's own wheel (``py3-none-any``), zipped from the package this runs from:
    every file of it but byte code, with ``METADATA``, ``WHEEL`` and a ``RECORD`` of sha256
    hashes, as ``pip wheel`` would write it.  Returns the wheel's path in ``dest``."""
    import sheetsync

    version = _version()
    package = Path(sheetsync.__file__).resolve().parent
    dist_info = f"sheetsync-{version}.dist-info"
    dest.mkdir(parents=True, exist_ok=True)
    wheel = dest / f"sheetsync-{version}-py3-none-any.whl"
    metadata = (f"Metadata-Version: 2.1\nName: sheetsync\nVersion: {version}\n"
                "Summary: Run battalion-scale mass combat from a spreadsheet (the web page's wheel).\n"
                "Requires-Python: >=3.10\nLicense: MIT\n"
                f"Requires-Dist: openpyxl>={OPENPYXL_VERSION}\nRequires-Dist: et_xmlfile>={ET_XMLFILE_VERSION}\n")
    wheel_file = ("Wheel-Version: 1.0\nGenerator: sheetsync.web.site\nRoot-Is-Purelib: true\n"
                  "Tag: py3-none-any\n")
    record: list[str] = []
    partial = wheel.with_name(wheel.name + ".part")
    with zipfile.ZipFile(partial, "w") as archive:
        for path in _package_files(package):
            name = "sheetsync/" + path.relative_to(package).as_posix()
            data = path.read_bytes()
            _write_member(archive, name, data)
            record.append(_record_line(name, data))
        for name, text in (("METADATA", metadata), ("WHEEL", wheel_file)):
            data = text.encode()
            _write_member(archive, f"{dist_info}/{name}", data)
            record.append(_record_line(f"{dist_info}/{name}", data))
        record.append(f"{dist_info}/RECORD,,")
        _write_member(archive, f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode())
    partial.replace(wheel)
    return wheel


def _wheel_name(name: str, version: str, tag: str) -> str:
    return f"{name}-{version}-{tag}-none-any.whl"


def dependency_wheels(dest: Path, cache: Path | None = None) -> list[Path]:
    """The openpyxl and et_xmlfile wheels in ``dest``: copied from ``cache/wheels`` (the
    Pyodide cache, :func:`pyodide_cache`) when there, else fetched with ``pip download``."""
    dest.mkdir(parents=True, exist_ok=True)
    source = (cache if cache is not None else pyodide_cache()) / "wheels"
    wanted = [_wheel_name(*dependency) for dependency in DEPENDENCIES]
    missing = []
    for name in wanted:
        if (source / name).is_file():
            if (source / name).resolve() != (dest / name).resolve():
                shutil.copyfile(source / name, dest / name)
        elif not (dest / name).is_file():
            missing.append(name)
    if missing:
        requirements = [f"{name}=={version}" for name, version, _tag in DEPENDENCIES]
        command = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
                   "--no-deps", "--only-binary=:all:", "--dest", str(dest), *requirements]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        still = [name for name in wanted if not (dest / name).is_file()]
        if done.returncode != 0 or still:
            detail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
            raise BackendError(f"can't get the wheels {', '.join(still or missing)}: pip download failed "
                               f"({detail[0]}); run .ci/install-pyodide.sh or put them in {source}")
    return [dest / name for name in wanted]


def site_files() -> dict[str, bytes]:
    """The page's own files by name (package data of :mod:`sheetsync.web`)."""
    folder = resources.files("sheetsync.web")
    return {name: folder.joinpath(name).read_bytes() for name in PAGE_FILES}


def _pyodide_url(url: str | None) -> str:
    if not url:
        return default_pyodide_url()
    return url if url.endswith("/") else url + "/"


def build_site(root: Path, pyodide: str | None = None, *, cache: Path | None = None) -> Site:
    """Write the site into ``root`` (made if missing; the page's files and wheels there are
    replaced): the page, ``config.json`` and ``wheels/``.  ``pyodide`` is the folder Pyodide
    is loaded from (absolute, or relative to the page); by default the public CDN at
    :data:`~sheetsync.web.PYODIDE_VERSION`."""
    root.mkdir(parents=True, exist_ok=True)
    for name, data in site_files().items():
        (root / name).write_bytes(data)
    wheels_dir = root / "wheels"
    wheels = [sheetsync_wheel(wheels_dir), *dependency_wheels(wheels_dir, cache)]
    url = _pyodide_url(pyodide)
    config = {
        "pyodide": url,
        "pyodideVersion": PYODIDE_VERSION,
        "sheetsync": _version(),
        "wheels": [f"wheels/{wheel.name}" for wheel in wheels],
        "packages": list(OPTIONAL_PACKAGES),
    }
    (root / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return Site(root, url, tuple(wheel.name for wheel in wheels))
