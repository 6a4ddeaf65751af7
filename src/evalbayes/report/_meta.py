"""What the user states about harness and protocol: ``--meta FILE`` (TOML, JSON or text).

A benchmark is a triple (task distribution, verifier, protocol), and a benchmark number
without the harness and protocol is not a measurement; it is an anecdote (on reporting the
harness, see Biderman et al. 2024, arXiv:2405.14782). The report therefore prints whatever the
user states about them, and says plainly when nothing was stated.

``.toml`` and ``.json`` files must hold a table / object; nested tables become dotted keys
(``sampling.temperature``). Any other file is shown as plain text. Bad files raise a
``ValueError`` that names the file and the rule; a missing file raises
``FileNotFoundError``.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from evalbayes.io._json import DuplicateKeyError, loads
from evalbayes.io._sources import check_regular

__all__ = ["MAX_META_BYTES", "ProtocolMeta", "read_meta"]

MAX_META_BYTES = 1_000_000


@dataclass(frozen=True)
class ProtocolMeta:
    """Harness and protocol as stated by the user.

    Attributes
    ----------
    source : str
        The file it was read from.
    kind : {"table", "text"}
        Key-value pairs (TOML/JSON) or free text.
    rows : tuple of (str, str)
        Flattened ``(key, value)`` pairs, in file order (``kind="table"``).
    text : str
        The file's text (``kind="text"``).
    """

    source: str
    kind: Literal["table", "text"]
    rows: tuple[tuple[str, str], ...] = ()
    text: str = ""


def _value_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        if all(not isinstance(v, dict | list | tuple) for v in value):
            return ", ".join(_value_text(v) for v in value)
        return json.dumps(value, default=str, ensure_ascii=False)
    if value is None:
        return "null"
    return str(value)


def _flatten(mapping: dict[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    for key, value in mapping.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            if value:
                rows.extend(_flatten(value, f"{name}."))
            else:
                rows.append((name, "(empty)"))
        else:
            rows.append((name, _value_text(value)))
    return rows


def read_meta(path: str | Path) -> ProtocolMeta:
    """Read a harness/protocol file: TOML (``.toml``), JSON (``.json``) or plain text.

    Raises
    ------
    FileNotFoundError
        No such file.
    ValueError
        A directory, an empty or oversized file, text that is not UTF-8, TOML or JSON that
        does not parse, or a JSON document that is not an object.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such meta file")
    check_regular(path)  # a FIFO would block
    if not path.is_file():
        raise ValueError(f"{path}: the meta file must be a file, not a directory")
    raw = path.read_bytes()
    if len(raw) > MAX_META_BYTES:
        raise ValueError(
            f"{path}: meta file of {len(raw):,} bytes; at most {MAX_META_BYTES:,} (state the "
            "harness and protocol, not the logs)"
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: the meta file is not UTF-8 text ({err})") from err
    if not text.strip():
        raise ValueError(f"{path}: the meta file is empty")
    suffix = path.suffix.lower()
    if suffix not in (".toml", ".json"):
        return ProtocolMeta(source=str(path), kind="text", text=text.rstrip())
    try:
        rows = _parse_fields(path, text, suffix)
    except RecursionError:
        raise ValueError(f"{path}: the meta file is nested too deeply to read (state the "
                         "harness and protocol in a few levels of fields)") from None
    if not rows:
        raise ValueError(f"{path}: the meta file states no field")
    return ProtocolMeta(source=str(path), kind="table", rows=tuple(rows))


def _parse_fields(path: Path, text: str, suffix: str) -> list[Any]:
    """The flattened fields of a TOML or JSON meta file (duplicate JSON keys refused)."""
    if suffix == ".toml":
        try:
            mapping = tomllib.loads(text)
        except tomllib.TOMLDecodeError as err:
            raise ValueError(f"{path}: not valid TOML ({err})") from err
    else:
        try:
            mapping = loads(text)
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}: not valid JSON ({err})") from err
        except DuplicateKeyError as err:
            raise ValueError(f"{path}: {err}") from None
        if not isinstance(mapping, dict):
            raise ValueError(
                f"{path}: the JSON meta file must hold an object of fields, got a "
                f"{type(mapping).__name__}"
            )
    return list(_flatten(mapping))
