"""Writing files so that nothing is ever lost: every evalbayes writer goes through here.

A file is written to a temporary file in the target's own folder, flushed to disk
(``os.fsync``) and then renamed over the target with :func:`os.replace`, which POSIX and
Windows make atomic within one file system. So a crash, a kill, a full disk or a file-size
limit during the write leaves either the previous file, untouched, or the complete new one,
never a truncated mix; two writers of one path both write complete files and the last
rename wins. On a failure the temporary file is removed and the error names the target.

Bottom floor: standard library only.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path

__all__ = ["TEMP_PREFIX", "atomic_path", "write_bytes", "write_text"]

#: Temporary files are ``<folder>/.evalbayes-tmp-<hex>-<name>``: hidden, in the target's folder
#: (a rename across file systems is not atomic), ending like the target so writers that infer
#: the format from the name (pandas' ``.csv.gz``, matplotlib's ``.svg``) still do.
TEMP_PREFIX = ".evalbayes-tmp-"


def _fsync(path: Path, directory: bool = False) -> None:
    flags = os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if directory else 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        if directory:  # some systems cannot open a folder; the data are synced already
            return
        raise
    try:
        os.fsync(fd)
    except OSError:
        if not directory:
            raise
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success it replaces ``path`` atomically.

    Use it around any writer that takes a file name::

        with atomic_path("fit.nc") as tmp:
            frame.to_csv(tmp)

    The folder must exist (a missing folder is an error, not created silently here; callers
    that create folders do so first). An existing target keeps its permission bits. On any
    exception inside the block (``OSError`` such as ENOSPC or EFBIG, an encoding error,
    ``KeyboardInterrupt``) the temporary file is removed, the previous file is left as it was
    and the exception propagates; an ``OSError`` is re-raised with the target as its
    ``filename`` and a note that nothing was replaced.
    """
    target = Path(path)
    folder = target.parent
    if target.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a directory; give a file name", str(target))
    if not folder.is_dir():
        reason = "is not a directory" if folder.exists() else "no such folder"
        raise FileNotFoundError(errno.ENOENT, f"cannot write here: {folder} {reason}",
                                str(target))
    temp = folder / f"{TEMP_PREFIX}{secrets.token_hex(6)}-{target.name}"
    try:
        # O_EXCL: never reuse someone else's file; mode 0o666 less the umask, like open()
        os.close(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    except OSError as err:
        raise _named(err, target) from err
    try:
        yield temp
        _fsync(temp)
        try:
            mode = stat.S_IMODE(os.stat(target).st_mode)
        except OSError:
            mode = None
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, target)
    except BaseException as err:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        if isinstance(err, OSError):
            raise _named(err, target) from err
        raise
    _fsync(folder, directory=True)


def _named(err: OSError, target: Path) -> OSError:
    """``err`` with the target as its file name and a note that nothing was replaced."""
    reason = err.strerror or str(err)
    if err.errno in (errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", errno.ENOSPC)):
        reason += " (disk full or file-size limit)"
    note = "; nothing written, the previous file (if any) is unchanged"
    # OSError(errno, ...) returns the matching subclass (PermissionError, ...)
    return OSError(err.errno, reason + note, str(target))


def write_bytes(path: str | os.PathLike[str], data: bytes | memoryview) -> Path:
    """Write ``data`` to ``path`` atomically (:func:`atomic_path`); returns the path."""
    with atomic_path(path) as temp, open(temp, "wb") as fh:
        fh.write(data)
    return Path(path)


def write_text(path: str | os.PathLike[str], text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically (:func:`atomic_path`); returns the path."""
    with atomic_path(path) as temp, open(temp, "w", encoding=encoding, newline="") as fh:
        fh.write(text)
    return Path(path)
