"""Battle files and workbooks on disk: YAML or JSON in, safe writes out.

Every file sheetsync writes goes through :func:`atomic_write_bytes`:

- the new bytes go to a temporary file beside the target (``.NAME.<pid>-<random>.tmp``),
  are flushed to disk, then renamed over the target, so a crash never leaves a half-written
  file; on any failure the temporary file is removed, and one left by a killed run (its
  process is gone) is cleared by the next write of the same file;
- with ``backup`` the previous file is kept as ``NAME.bak``, itself written through a
  temporary file and renamed, so a crash during the copy never leaves a truncated backup
  and never loses the good one;
- a symbolic link is written through: the link stays a link, and its target is replaced
  (the temporary file and the ``.bak`` sit beside the target, on the target's file system);
- a file without its owner's write permission (``chmod 444``) is refused, not replaced;
- a missing folder is an error that names it;
- a path that is not a regular file (a FIFO, a folder, a device, a socket) is refused
  before anything opens it (:func:`refuse_special_file`): opening a FIFO waits forever.

:func:`file_lock` serializes the steps on one workbook between processes (an OS-level lock
on ``.NAME.lock`` beside the target; the lock goes with the process, so a killed step never
leaves the workbook locked).  Where the folder can't be written at all (a read-only file
system), no lock is needed to read, and none is taken: commands that only read work there,
and a save is refused with a message that says so.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shutil
import stat
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sheetsync.core.errors import BackendError, InputError, Problem

__all__ = [
    "BATTLE_SUFFIXES",
    "LOCK_TIMEOUT",
    "WORKBOOK_SUFFIXES",
    "atomic_write_bytes",
    "atomic_write_text",
    "check_suffix",
    "clear_stale_temps",
    "dump_battle_file",
    "example_path",
    "file_lock",
    "lock_path",
    "read_data_file",
    "refuse_existing",
    "refuse_special_file",
    "target_of",
    "whole_or_text",
]

WORKBOOK_SUFFIXES = (".xlsx", ".xlsm")
BATTLE_SUFFIXES = (".yaml", ".yml", ".json")
LOCK_TIMEOUT = 60.0
"""Seconds a step waits for another step on the same workbook before giving up."""


def example_path() -> Path:
    """The embedded example battle that ``sheetsync demo`` runs."""
    return Path(__file__).resolve().parent.parent / "examples" / "battle.yaml"


def check_suffix(path: Path, allowed: tuple[str, ...], what: str) -> None:
    """Refuse a file whose name doesn't end in one of ``allowed``, in one line that says
    what to do instead (``x.ods``: save it as .xlsx)."""
    suffix = path.suffix.lower()
    if suffix in allowed:
        return
    shown = "/".join(allowed)
    if suffix in (".ods", ".xls", ".csv", ".numbers", ".xlsb", ".fods"):
        hint = "save it as .xlsx from LibreOffice or Excel (File, Save As, Excel 2007-365), then use that file"
    elif suffix in WORKBOOK_SUFFIXES:
        hint = "this command takes a battle file; for a tracker workbook use build, resolve, undo or end"
    elif suffix in BATTLE_SUFFIXES:
        hint = "this command takes a tracker workbook; make one with: sheetsync new FILE.xlsx --from " + path.name
    else:
        hint = f"give a file whose name ends in {shown}"
    kind = f"a {suffix} file" if suffix else "a name without an extension"
    raise BackendError(f"{path}: sheetsync can't use {kind} here ({what} is {shown}): {hint}. "
                       "Nothing was written")


def refuse_existing(path: Path, force: bool) -> None:
    """Refuse to replace an existing file unless ``force`` (a tracker may hold a battle in
    progress; ``--force`` replaces it and keeps the old one as ``NAME.bak``)."""
    if not force and (path.exists() or path.is_symlink()):
        raise BackendError(f"{path} already exists and may hold a battle in progress; nothing was written. "
                           "Choose another name, or add --force to replace it (the old file is kept as "
                           f"{path.name}.bak)")


_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def refuse_special_file(path: Path) -> None:
    """Refuse ``path`` if it exists and is not a regular file (issue 26): a FIFO would make
    the first read wait forever, a device would be read without end, a folder can't be
    read at all.  Only ``stat`` is used (a symbolic link counts as what it points to), so
    nothing is opened; a path that does not exist is left to the caller."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return
    if stat.S_ISREG(mode):
        return
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    raise BackendError(f"{path} is {kind}, not a file: sheetsync reads and writes only regular files. "
                       "Nothing was read or written")


def whole_or_text(digits: str) -> int | str:
    """A whole number, or its text when Python refuses to convert that many digits; the
    battle-file loader then reports it at its path instead of crashing here."""
    try:
        return int(digits)
    except ValueError:
        return digits


_YAML_LOADERS: tuple[Any, Any] | None = None


def _yaml_loaders() -> tuple[Any, Any]:
    """PyYAML's safe loader whose whole numbers too long for ``int()`` stay text (see
    :func:`whole_or_text`), and the same on libyaml's parser when PyYAML has it (issue 12:
    the pure-Python parser was most of a large battle file's resolve).  Made on first use:
    PyYAML is imported only by what reads or writes a battle file (issue 25: the workbook
    path runs without it)."""
    global _YAML_LOADERS
    if _YAML_LOADERS is None:
        import yaml

        class _SafeLoader(yaml.SafeLoader):
            pass

        class _FastLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
            pass

        def _construct_int(loader: Any, node: Any) -> Any:
            try:
                return yaml.constructor.SafeConstructor.construct_yaml_int(loader, node)
            except ValueError:
                return loader.construct_scalar(node)

        _SafeLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)
        _FastLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)
        _YAML_LOADERS = (_FastLoader, _SafeLoader)
    return _YAML_LOADERS


def _load_yaml(text: str) -> Any:
    """The YAML's data, parsed by libyaml; a file it refuses is parsed again by PyYAML's
    own parser, whose error says where as precisely as before (the line of an unclosed
    bracket, not the end of the file)."""
    import yaml

    fast, safe = _yaml_loaders()
    try:
        return yaml.load(text, Loader=fast)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError:
        return yaml.load(text, Loader=safe)  # noqa: S506 - a SafeLoader subclass


def read_data_file(path: Path) -> Any:
    """Parse a YAML or JSON file; a syntax error names the line and column."""
    refuse_special_file(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BackendError(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise BackendError(f"{path} is not a text battle file (YAML or JSON): it can't be read as UTF-8 text") from None
    except OSError as exc:
        raise BackendError(f"{path}: {exc.strerror}") from None
    if path.suffix.lower() == ".json":
        try:
            return json.loads(text, parse_int=whole_or_text)
        except json.JSONDecodeError as exc:
            raise InputError([Problem(f"line {exc.lineno}, column {exc.colno}", exc.msg)], str(path)) from None
    import yaml

    try:
        return _load_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise InputError([Problem(where, str(getattr(exc, "problem", exc)))], str(path)) from None


def target_of(path: Path) -> Path:
    """The file a write to ``path`` replaces: the link's final target for a symbolic link
    (relative links resolve against the link's folder), else ``path`` itself."""
    path = Path(path)
    if path.is_symlink():
        return Path(os.path.realpath(path))
    return path


def lock_path(path: Path) -> Path:
    """The lock file of the steps on ``path``: ``.NAME.lock`` beside the link's target, so
    two links to one workbook share one lock.  It is no LibreOffice or Excel lock file
    (those are ``.~lock.NAME#`` and ``~$NAME``)."""
    target = target_of(path)
    return target.with_name(f".{target.name}.lock")


_locks: dict[str, Any] = {}
_locks_guard = threading.Lock()


def _unwritable_folder(exc: OSError, folder: Path) -> bool:
    """Whether ``exc`` (taking a lock in ``folder``) means the folder can't be written at
    all: a read-only file system, or a folder whose permissions shut this user out.  A
    lock file another user owns, in a folder this user may write, is not that: the
    workbook could then be replaced meanwhile, so the step is refused instead."""
    if exc.errno == errno.EROFS:
        return True
    return exc.errno in (errno.EACCES, errno.EPERM) and not os.access(folder, os.W_OK)


class _LockTimeout(Exception):
    """The wait for a :class:`_StdlibLock` ran out."""


class _StdlibLock:
    """filelock's ``FileLock`` where filelock is not installed (issue 25: Pyodide), from the
    standard library: re-entrant in this process (a count under an ``RLock``), and an
    ``fcntl.flock`` on the lock file between processes where the platform has one."""

    def __init__(self, lock_file: str) -> None:
        self.lock_file = lock_file
        self._guard = threading.RLock()
        self._count = 0
        self._fd: int | None = None

    def acquire(self, timeout: float = -1) -> None:
        import time

        deadline = None if timeout < 0 else time.monotonic() + timeout
        if not self._guard.acquire(timeout=-1 if deadline is None else max(0.0, timeout)):
            raise _LockTimeout(self.lock_file)
        if self._count == 0:
            try:
                self._fd = _flock(self.lock_file, deadline)
            except BaseException:
                self._guard.release()
                raise
        self._count += 1

    def release(self) -> None:
        self._count -= 1
        if self._count == 0 and self._fd is not None:
            os.close(self._fd)  # closing the file lets go of its flock
            self._fd = None
        self._guard.release()


def _flock(lock_file: str, deadline: float | None) -> int | None:
    """The lock file opened and locked (``fcntl.flock``), waiting until ``deadline``; ``None``
    where the platform has no ``flock`` (one process only, as under Pyodide)."""
    import time

    try:
        import fcntl
    except ImportError:
        return None
    fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o644)
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if deadline is not None and time.monotonic() >= deadline:
                os.close(fd)
                raise _LockTimeout(lock_file) from None
            time.sleep(0.05)
        except OSError as exc:
            if exc.errno in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
                os.close(fd)
                return None  # a file system with no locks
            os.close(fd)
            raise


def _lock_classes() -> tuple[Any, Any]:
    """filelock's ``FileLock`` and ``Timeout``, or the standard library's stand-ins."""
    try:
        from filelock import FileLock, Timeout
    except ImportError:
        return _StdlibLock, _LockTimeout
    return FileLock, Timeout


@contextlib.contextmanager
def file_lock(path: Path, timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
    """Hold the OS-level lock of the steps on ``path`` (re-entrant within a thread; other
    processes and threads wait).  A wait longer than ``timeout`` seconds is a
    :class:`BackendError`, and nothing has been read or written."""
    FileLock, Timeout = _lock_classes()  # noqa: N806 - the classes, by filelock's names
    refuse_special_file(path)
    lock_file = lock_path(path)
    if not lock_file.parent.is_dir():
        raise BackendError(f"{path}: the folder {lock_file.parent} does not exist; create it first. "
                           "Nothing was written")
    key = str(lock_file.absolute())
    with _locks_guard:
        lock = _locks.get(key)
        if lock is None:
            lock = _locks[key] = FileLock(key)
    held = True
    try:
        lock.acquire(timeout=timeout)
    except Timeout:
        raise BackendError(f"{path}: another sheetsync step has been working on this workbook for over "
                           f"{timeout:g} s (lock {lock_file.name}); nothing was read or written. Wait for it "
                           "to finish, then run this step again") from None
    except OSError as exc:
        if not _unwritable_folder(exc, lock_file.parent):
            raise BackendError(f"{path}: can't take the lock {lock_file} ({exc.strerror or exc}); "
                               "nothing was written") from None
        # issue 26: on a read-only file system (or a folder this user may not write) no
        # step of this user can replace the file, so a step that only reads needs no lock;
        # one that writes is refused when it saves (atomic_write_bytes), before any change
        held = False
    try:
        yield
    finally:
        if held:
            lock.release()


def _temp_pattern(name: str) -> re.Pattern[str]:
    return re.compile(r"^\." + re.escape(name) + r"\.(?:(\d+)-)?[a-z0-9_]+\.tmp$")


LEGACY_TEMP_AGE = 600.0
"""A temporary file with no process id in its name (written by an older sheetsync) is
cleared once it is this many seconds old: no save takes that long."""


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True


def clear_stale_temps(path: Path) -> list[Path]:
    """Remove the temporary files a killed save of ``path`` left beside it, and only
    those: names of the exact form ``.NAME.<pid>-<random>.tmp`` whose process is gone (or,
    for older names without a process id, older than :data:`LEGACY_TEMP_AGE`).  A live
    save's temporary file is never touched."""
    import time

    target = target_of(path)
    folder = target.parent
    pattern = _temp_pattern(target.name)
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    now = time.time()
    for entry in entries:
        m = pattern.match(entry.name)
        if m is None:
            continue
        try:
            if not entry.is_file(follow_symlinks=False):
                continue
            if m.group(1) is not None:
                if _alive(int(m.group(1))):
                    continue
            elif now - entry.stat(follow_symlinks=False).st_mtime < LEGACY_TEMP_AGE:
                continue
            os.unlink(entry.path)
            removed.append(Path(entry.path))
        except OSError:
            continue
    return removed


def _mkstemp(target: Path) -> tuple[int, str]:
    return tempfile.mkstemp(prefix=f".{target.name}.{os.getpid()}-", suffix=".tmp", dir=target.parent)


def _write_backup(target: Path) -> None:
    """Copy ``target`` to ``NAME.bak`` atomically: a temporary copy, flushed, then renamed."""
    bak = target.with_name(target.name + ".bak")
    fd, tmp = _mkstemp(target)
    try:
        with open(target, "rb") as src, os.fdopen(fd, "wb") as dst:
            shutil.copyfileobj(src, dst)
            dst.flush()
            os.fsync(dst.fileno())
        shutil.copystat(target, tmp)
        os.replace(tmp, bak)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _refuse_read_only(path: Path, target: Path) -> None:
    """Refuse a file its owner may not write (``chmod 444``).  The permission bits are
    checked, not the outcome of a write: as root every write succeeds."""
    try:
        mode = target.stat().st_mode
    except FileNotFoundError:
        return
    if not mode & stat.S_IWUSR:
        raise BackendError(f"{path} is read-only (permissions {stat.filemode(mode)}); nothing was written. "
                           f"Make it writable first (chmod u+w {path}), or write to another file")


def atomic_write_bytes(path: Path, data: bytes, *, backup: bool = False) -> None:
    """Write ``data`` to ``path`` safely (see the module docstring): temporary file beside
    the target, then rename; ``backup`` keeps the previous file as ``NAME.bak``.  Every
    failure is a :class:`BackendError` naming the file, and the previous file (and its
    ``.bak``) is as it was."""
    path = Path(path)
    target = target_of(path)
    folder = target.parent
    if not folder.is_dir():
        raise BackendError(f"{path}: the folder {folder} does not exist; create it first. Nothing was written")
    refuse_special_file(target)
    _refuse_read_only(path, target)
    clear_stale_temps(target)
    try:
        fd, tmp = _mkstemp(target)
    except OSError as exc:
        if exc.errno == errno.EROFS:
            raise BackendError(f"{path}: {folder} is on a read-only file system; nothing was written. Commands "
                               "that only read (status, check, export, report, pools) work there; write the "
                               "result elsewhere (resolve --out) or make the file system writable") from None
        raise BackendError(f"{path}: can't write in {folder} ({exc.strerror}); nothing was written") from None
    try:
        # the owner may always read and write a new file (issue 25: Emscripten's umask is 0o777)
        mode = target.stat().st_mode & 0o777 if target.exists() else (0o666 & ~_umask()) | 0o600
        os.chmod(tmp, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if backup and target.exists():
            _write_backup(target)  # the original stays in place meanwhile
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise BackendError(f"{path}: can't save ({exc.strerror or exc}); the previous file is untouched") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_text(path: Path, text: str, *, backup: bool = False) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), backup=backup)


def dump_battle_file(data: dict[str, Any], path: Path, *, backup: bool = False) -> None:
    """Write a battle file (YAML unless the name ends in .json), atomically; with ``backup``
    a file it replaces is kept as ``NAME.bak``."""
    if path.suffix.lower() == ".json":
        atomic_write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", backup=backup)
    else:
        import yaml

        atomic_write_text(path, yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120), backup=backup)
