"""The report as data: sections of blocks that the HTML and Markdown renderers both draw.

Every string here is plain text; the renderers escape it (HTML entities, Markdown
punctuation), so system and task names, metadata and error messages can never inject markup.
Inline formatting is explicit: a :class:`Paragraph` is a sequence of ``str``, :class:`Code`
and :class:`Strong` parts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

__all__ = [
    "Block",
    "Callout",
    "Code",
    "Definitions",
    "Document",
    "Figure",
    "Inline",
    "Paragraph",
    "Preformatted",
    "Section",
    "Strong",
    "Table",
    "paragraph",
]

_KEY = re.compile(r"[a-z0-9][a-z0-9\-]*")


def _check_key(key: str, what: str) -> None:
    """Keys become HTML ids and file names: lower-case letters, digits and dashes only."""
    if not isinstance(key, str) or not _KEY.fullmatch(key):
        raise ValueError(f"{what} key must be lower-case letters, digits and dashes, got {key!r}")


@dataclass(frozen=True)
class Code:
    """Inline code (a command, a function name)."""

    text: str


@dataclass(frozen=True)
class Strong:
    """Emphasised inline text."""

    text: str


Inline = str | Code | Strong


@dataclass(frozen=True)
class Paragraph:
    """A paragraph of inline parts."""

    parts: tuple[Inline, ...]


def paragraph(*parts: Inline) -> Paragraph:
    """``Paragraph`` from inline parts: ``paragraph("run ", Code("evalbayes fit"), ".")``."""
    for part in parts:
        if not isinstance(part, str | Code | Strong):
            raise TypeError(f"paragraph parts must be str, Code or Strong, got {type(part)}")
    return Paragraph(tuple(parts))


@dataclass(frozen=True)
class Table:
    """A table of text cells.

    Attributes
    ----------
    key : str
        Stable identifier (HTML ``id``), e.g. ``"per-system"``; fixed by the report, never
        user text.
    columns : tuple of str
        Header cells.
    rows : tuple of tuple of str
        Body cells, one tuple per row, as many cells as columns.
    caption : str
        Shown above the table.
    numeric : tuple of bool
        Right-align these columns (numbers); default: none.
    """

    key: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    caption: str = ""
    numeric: tuple[bool, ...] = ()

    def __post_init__(self) -> None:
        _check_key(self.key, "table")
        width = len(self.columns)
        for i, row in enumerate(self.rows):
            if len(row) != width:
                raise ValueError(
                    f"table {self.key!r}: row {i} has {len(row)} cells, the header {width}"
                )
        if self.numeric and len(self.numeric) != width:
            raise ValueError(f"table {self.key!r}: numeric flags must match the columns")

    @classmethod
    def build(
        cls,
        key: str,
        columns: Sequence[str],
        rows: Sequence[Sequence[str]],
        caption: str = "",
        numeric: Sequence[bool] = (),
    ) -> Table:
        """Table from any sequences (converted to tuples of str)."""
        return cls(
            key=key,
            columns=tuple(str(c) for c in columns),
            rows=tuple(tuple(str(cell) for cell in row) for row in rows),
            caption=caption,
            numeric=tuple(bool(x) for x in numeric),
        )


class PendingPng(Protocol):
    """PNG bytes still being drawn (in a child process: ``report._figures.ChildDrawing``)."""

    def result(self) -> bytes:
        """The bytes, once drawn."""
        ...


@dataclass(frozen=True)
class Figure:
    """A PNG image with alternative text and a caption.

    ``name`` is a file stem (letters, digits, dashes) used for the Markdown variant's image
    files; it is fixed by the report, never user text. ``png`` is the image's bytes, or a
    drawing still under way whose bytes :meth:`png_bytes` waits for.
    """

    name: str
    png: bytes | PendingPng
    alt: str
    caption: str = ""

    def __post_init__(self) -> None:
        _check_key(self.name, "figure")

    def png_bytes(self) -> bytes:
        """The PNG bytes (waiting for the drawing, if it is still under way)."""
        return self.png if isinstance(self.png, bytes) else self.png.result()


@dataclass(frozen=True)
class Callout:
    """A boxed message: ``"warning"`` (something failed or is missing), ``"note"``, ``"ok"``."""

    kind: Literal["warning", "note", "ok"]
    title: str
    parts: tuple[Inline, ...] = ()


@dataclass(frozen=True)
class Preformatted:
    """Text shown verbatim in a monospace block (e.g. a plain-text protocol file)."""

    text: str


@dataclass(frozen=True)
class Definitions:
    """Terms and their explanations (the "how to read this" glossary)."""

    items: tuple[tuple[str, tuple[Inline, ...]], ...]


Block = Paragraph | Table | Figure | Callout | Preformatted | Definitions


@dataclass(frozen=True)
class Section:
    """A titled section; ``key`` is its anchor (fixed by the report)."""

    key: str
    title: str
    blocks: tuple[Block, ...]

    def __post_init__(self) -> None:
        _check_key(self.key, "section")


@dataclass(frozen=True)
class Document:
    """The whole report: title, a few header lines, sections in order."""

    title: str
    header: tuple[str, ...]
    sections: tuple[Section, ...] = field(default_factory=tuple)

    def section(self, key: str) -> Section:
        """The section with this key (``KeyError`` naming the keys when absent)."""
        for section in self.sections:
            if section.key == key:
                return section
        raise KeyError(f"no section {key!r}; sections: {[s.key for s in self.sections]}")

    def tables(self) -> dict[str, Table]:
        """Every table by key."""
        return {
            block.key: block
            for section in self.sections
            for block in section.blocks
            if isinstance(block, Table)
        }

    def figures(self) -> list[Figure]:
        """Every figure in order."""
        return [
            block
            for section in self.sections
            for block in section.blocks
            if isinstance(block, Figure)
        ]
