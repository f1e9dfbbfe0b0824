"""Battle files on disk: YAML or JSON in, atomic writes out."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import yaml

from sheetsync.errors import BackendError, InputError, Problem

__all__ = ["atomic_write_bytes", "atomic_write_text", "dump_battle_file", "example_path", "read_data_file"]


def example_path() -> Path:
    """The embedded example battle that ``sheetsync demo`` runs."""
    return Path(__file__).resolve().parent.parent / "examples" / "battle.yaml"


def read_data_file(path: Path) -> Any:
    """Parse a YAML or JSON file; a syntax error names the line and column."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BackendError(f"{path}: no such file") from None
    except OSError as exc:
        raise BackendError(f"{path}: {exc.strerror}") from None
    try:
        if path.suffix.lower() == ".json":
            return json.loads(text)
        return yaml.safe_load(text)
    except json.JSONDecodeError as exc:
        raise InputError([Problem(f"line {exc.lineno}, column {exc.colno}", exc.msg)], str(path)) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise InputError([Problem(where, str(getattr(exc, "problem", exc)))], str(path)) from None


def atomic_write_bytes(path: Path, data: bytes, *, backup: bool = False) -> None:
    """Write to a temporary file beside ``path``, then replace it: a crash never leaves a
    half-written file.  With ``backup`` the previous file is kept as ``NAME.bak``."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    try:
        mode = path.stat().st_mode & 0o777 if path.exists() else 0o666 & ~_umask()
        os.chmod(tmp, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if backup and path.exists():
            shutil.copy2(path, path.with_name(path.name + ".bak"))  # the original stays in place meanwhile
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_text(path: Path, text: str, *, backup: bool = False) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), backup=backup)


def dump_battle_file(data: dict[str, Any], path: Path) -> None:
    """Write a battle file (YAML unless the name ends in .json), atomically."""
    if path.suffix.lower() == ".json":
        atomic_write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    else:
        atomic_write_text(path, yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120))
