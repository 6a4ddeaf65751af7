"""Render a :class:`~evalbayes.report._document.Document` as Markdown (GitHub flavour).

Images are returned as files for a folder next to the ``.md`` file and linked relatively.
Every text is escaped: ASCII punctuation that Markdown interprets gets a backslash, and
``<``, ``>``, ``&`` become HTML entities (Markdown renderers pass raw HTML through, so a
system called ``<script>`` must not reach them as a tag). Preformatted text goes in a code
fence longer than any backtick run inside it, where nothing is interpreted.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from evalbayes.report._document import (
    Block,
    Callout,
    Code,
    Definitions,
    Document,
    Figure,
    Inline,
    Paragraph,
    Preformatted,
    Strong,
    Table,
)

__all__ = ["MarkdownOutput", "escape_markdown", "render_markdown"]

_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-!|~$])")
_CALLOUT_LABEL = {"warning": "Warning", "note": "Note", "ok": "OK"}


def escape_markdown(text: str) -> str:
    """Escape ``text`` so that Markdown shows it literally, on one line."""
    text = " ".join(str(text).splitlines())
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    if not text.isascii():  # hidden characters (bidi overrides, zero-width) made visible
        text = "".join(f"⟨U+{ord(ch):04X}⟩" if unicodedata.category(ch) in ("Cf", "Cc")
                       else ch for ch in text)
    return _SPECIAL.sub(r"\\\1", text)


def _code(text: str) -> str:
    text = " ".join(text.splitlines())
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _inline(parts: tuple[Inline, ...]) -> str:
    out = []
    for part in parts:
        if isinstance(part, Code):
            out.append(_code(part.text))
        elif isinstance(part, Strong):
            out.append(f"**{escape_markdown(part.text)}**")
        else:
            out.append(escape_markdown(part))
    return "".join(out)


def _table(table: Table) -> str:
    numeric = table.numeric or (False,) * len(table.columns)
    lines = []
    if table.caption:
        lines += [f"**{escape_markdown(table.caption)}**", ""]
    lines.append("| " + " | ".join(escape_markdown(c) for c in table.columns) + " |")
    lines.append("|" + "|".join("---:" if num else "---" for num in numeric) + "|")
    for row in table.rows:
        lines.append("| " + " | ".join(escape_markdown(cell) for cell in row) + " |")
    return "\n".join(lines)


def _fenced(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text.rstrip()}\n{fence}"


@dataclass(frozen=True)
class MarkdownOutput:
    """The Markdown text and the image files it links (``folder/name.png`` -> PNG bytes)."""

    text: str
    images: dict[str, bytes]


def _block(block: Block, folder: str, images: dict[str, bytes]) -> str:
    if isinstance(block, Paragraph):
        return _inline(block.parts)
    if isinstance(block, Table):
        return _table(block)
    if isinstance(block, Figure):
        path = f"{folder}/{block.name}.png"
        if path in images:
            raise ValueError(f"two figures are named {block.name!r}")
        images[path] = block.png_bytes()
        text = f"![{escape_markdown(block.alt)}]({path})"
        if block.caption:
            text += f"\n\n*{escape_markdown(block.caption)}*"
        return text
    if isinstance(block, Callout):
        label = _CALLOUT_LABEL[block.kind]
        text = f"> **{label}: {escape_markdown(block.title)}**"
        if block.parts:
            text += f"\n>\n> {_inline(block.parts)}"
        return text
    if isinstance(block, Preformatted):
        return _fenced(block.text)
    if isinstance(block, Definitions):
        return "\n".join(
            f"- **{escape_markdown(term)}**: {_inline(parts)}" for term, parts in block.items
        )
    raise TypeError(f"unknown block {type(block).__name__}")  # pragma: no cover


def render_markdown(document: Document, image_folder: str) -> MarkdownOutput:
    """Markdown text of ``document``; figures become ``image_folder/<name>.png`` links.

    ``image_folder`` is a relative folder name (no slashes other than as separators, no
    spaces), written by the caller next to the Markdown file.
    """
    if not re.fullmatch(r"[A-Za-z0-9_.\-]+", image_folder):
        raise ValueError(f"image folder must be a plain relative name, got {image_folder!r}")
    images: dict[str, bytes] = {}
    parts = [f"# {escape_markdown(document.title)}", ""]
    parts += [escape_markdown(line) + "  " for line in document.header]
    parts += ["", "## Contents", ""]
    parts += [
        f"{i}. [{escape_markdown(s.title)}](#{s.key})" for i, s in enumerate(document.sections, 1)
    ]
    for section in document.sections:
        parts += ["", f"<a id=\"{section.key}\"></a>", "", f"## {escape_markdown(section.title)}"]
        for block in section.blocks:
            parts += ["", _block(block, image_folder, images)]
    parts += [
        "",
        "---",
        "",
        escape_markdown("Written by evalbayes. Images are in the folder next to this file."),
        "",
    ]
    return MarkdownOutput(text="\n".join(parts), images=images)
