"""The one JSON and JSON Lines loader of the readers.

Every reader opens JSON through :func:`load_json` (a document, a file or an archive member)
or :func:`read_jsonl` (one value per line), so that every parse error reads the same way:
the file, the line (1-based, never a byte offset) and what was wrong. Integers are parsed
exactly (Python ``int``), so a count above 2^53 is never rounded on the way in.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evalbayes.io._common import LogError

__all__ = ["DuplicateKeyError", "first_jsonl", "load_json", "loads", "read_jsonl"]


class DuplicateKeyError(ValueError):
    """A JSON object with one key twice (``json`` would silently keep the last value)."""

    def __init__(self, key: str) -> None:
        super().__init__(f"a JSON object has the key {key!r} twice (which value counts is "
                         "undefined); remove one")
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):  # the rare case: find the repeated key
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKeyError(key)
            seen.add(key)
    return obj


def loads(text: str) -> Any:
    """``json.loads`` that refuses duplicate keys (:class:`DuplicateKeyError`); integers are
    exact Python ints. Deep nesting raises ``RecursionError`` (callers name the file)."""
    return json.loads(text, object_pairs_hook=_unique_keys)


def _decode_error(path: Path, err: json.JSONDecodeError, member: str | None) -> LogError:
    where = f"archive member {member!r}, " if member else ""
    return LogError(
        path,
        f"not valid JSON (truncated or corrupt?): {err.msg} at {where}line {err.lineno} "
        f"column {err.colno}",
    )


def load_json(path: str | Path, raw: bytes | None = None, *, member: str | None = None) -> Any:
    """Parse one JSON document: the file ``path``, or ``raw`` bytes read from it.

    Raises
    ------
    LogError
        Invalid JSON (with the line and column), text that is not UTF-8, or a file that
        cannot be read; ``member`` names the archive member the bytes came from.
    """
    path = Path(path)
    try:
        data = path.read_bytes() if raw is None else raw
    except OSError as err:
        raise LogError(path, f"cannot be read ({err.strerror or err})") from None
    if data[:2] == b"\x1f\x8b" and not path.name.lower().endswith(".gz"):
        raise LogError(path, "the file is gzip-compressed but not named .gz; rename it")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise LogError(path, f"not UTF-8 text (byte {err.start}: {err.reason})") from None
    try:
        return loads(text)
    except json.JSONDecodeError as err:
        raise _decode_error(path, err, member) from None
    except DuplicateKeyError as err:
        where = f"archive member {member!r}: " if member else ""
        raise LogError(path, f"{where}{err}") from None
    except RecursionError:
        raise LogError(path, "JSON nested too deeply to read") from None


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    gz = path.name.lower().endswith(".gz")
    try:
        with path.open("rb") as fh:
            if fh.read(2) == b"\x1f\x8b" and not gz:
                raise LogError(path, "the file is gzip-compressed but not named .gz; rename it")
        opener = gzip.open if gz else open
        with opener(path, "rb") as fh:
            for number, raw in enumerate(fh, start=1):
                try:
                    yield number, raw.decode("utf-8-sig" if number == 1 else "utf-8")
                except UnicodeDecodeError as err:
                    raise LogError(
                        path, f"not UTF-8 text (byte {err.start}: {err.reason})", f"line {number}"
                    ) from None
    except (OSError, EOFError) as err:
        if isinstance(err, LogError):
            raise
        raise LogError(path, f"cannot be read: truncated or corrupt ({err})") from None


def read_jsonl(path: str | Path, *, objects: bool = True) -> list[tuple[int, Any]]:
    """The values of a JSON Lines file as ``(line number, value)``; blank lines are skipped.

    With ``objects=True`` (default) every value must be a JSON object. Raises
    :class:`LogError` naming the line for invalid JSON or a value of another type, and for
    a file without any value.
    """
    path = Path(path)
    out: list[tuple[int, Any]] = []
    for number, line in _lines(path):
        if not line.strip():
            continue
        try:
            value = loads(line.rstrip("\r\n"))  # without its line end: the column is on it
        except json.JSONDecodeError as err:
            raise LogError(
                path,
                f"not valid JSON (truncated?): {err.msg} at column {err.colno}",
                f"line {number}",
            ) from None
        except DuplicateKeyError as err:
            raise LogError(path, str(err), f"line {number}") from None
        except RecursionError:
            raise LogError(path, "JSON nested too deeply to read", f"line {number}") from None
        if objects and not isinstance(value, dict):
            raise LogError(
                path, f"expected a JSON object, found {type(value).__name__}", f"line {number}"
            )
        out.append((number, value))
    if not out:
        raise LogError(path, "empty JSON Lines file (no line holds a value)")
    return out


def first_jsonl(path: str | Path) -> Any:
    """The first value of a JSON Lines file (for format detection)."""
    path = Path(path)
    for number, line in _lines(path):
        if line.strip():
            try:
                return json.loads(line)
            except json.JSONDecodeError as err:
                raise LogError(
                    path, f"not valid JSON: {err.msg} at column {err.colno}", f"line {number}"
                ) from None
            except RecursionError:
                raise LogError(path, "JSON nested too deeply", f"line {number}") from None
    raise LogError(path, "empty JSON Lines file (no line holds a value)")
