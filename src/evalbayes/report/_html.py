"""Render a :class:`~evalbayes.report._document.Document` as one self-contained HTML file.

Inline CSS, images as base64 PNG data URIs, no JavaScript and no external resource: the
Content-Security-Policy in the page forbids scripts and any load that is not a data URI, so
the file opens offline and cannot run code even if a name slipped through unescaped. Every
text is escaped with :func:`html.escape` (quotes too), and the characters a reader cannot
see (bidirectional overrides, zero-width spaces, control characters:
:func:`evalbayes._core.names.hidden_characters`) are shown as a visible ``⟨U+202E⟩`` mark,
so a name cannot read backwards or hide a difference.
"""

from __future__ import annotations

import base64
import html
import re
import unicodedata

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
    Section,
    Strong,
    Table,
)

__all__ = ["COLLAPSE_ROWS", "CSP", "SHOWN_ROWS", "render_html"]

#: A table with more rows than this shows its first :data:`SHOWN_ROWS` rows; the whole table
#: is one click away in a ``<details>`` element ("show all N rows"; no script needed).
COLLAPSE_ROWS = 25
SHOWN_ROWS = 10

CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f]")


def _attr(text: str) -> str:
    """An attribute value: :func:`escape` without markup."""
    return escape(text, markup=False)


def escape(text: str, markup: bool = True) -> str:
    """HTML-escaped text with every hidden character (Unicode Cf and Cc but tab and newline:
    :func:`~evalbayes._core.names.hidden_characters`) shown as a visible mark (a highlighted
    span; plain text with ``markup=False``, for attribute values)."""
    out = html.escape(str(text))
    if out.isascii() and (out.isprintable() or not _CONTROL.search(out)):
        return out
    mark = '<span class="hidden">⟨U+{:04X}⟩</span>' if markup else "⟨U+{:04X}⟩"
    return "".join(
        mark.format(ord(ch)) if unicodedata.category(ch) in ("Cf", "Cc") and ch not in "\t\n"
        else ch
        for ch in out
    )


_CSS = """
:root { --fg: #1d232a; --muted: #5b6570; --line: #d5dae0; --bg-alt: #f5f7f9;
        --warn: #a4321a; --warn-bg: #fdf0ec; --note-bg: #eef4fb; --note: #1f5b99;
        --ok: #2b6b34; --ok-bg: #eef7ef; }
* { box-sizing: border-box; }
body { font-family: -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       color: var(--fg); margin: 0; line-height: 1.45; font-size: 15px; }
main { max-width: 1320px; margin: 0 auto; padding: 24px 28px 60px; }
header.report { border-bottom: 2px solid var(--fg); margin-bottom: 18px; padding-bottom: 8px; }
header.report h1 { margin: 0 0 6px; font-size: 26px; }
header.report p { margin: 2px 0; color: var(--muted); font-size: 13px; }
nav.toc { background: var(--bg-alt); border: 1px solid var(--line); padding: 8px 14px;
          font-size: 13px; margin-bottom: 18px; }
nav.toc ol { margin: 4px 0; padding-left: 20px; columns: 2; }
nav.toc a { color: var(--note); text-decoration: none; }
section { margin-top: 30px; }
h2 { font-size: 20px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
p { margin: 8px 0; max-width: 920px; }
code, pre { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace;
            font-size: 13px; }
code { background: var(--bg-alt); padding: 0 3px; border-radius: 3px; }
.hidden { color: var(--warn); background: var(--warn-bg); font-size: 11px; }
pre { background: var(--bg-alt); border: 1px solid var(--line); padding: 10px;
      white-space: pre-wrap; word-break: break-word; }
.scroll { overflow-x: auto; max-width: 100%; margin: 10px 0 16px; }
table { border-collapse: collapse; font-size: 13px; }
caption { text-align: left; font-weight: 600; padding: 4px 0 6px; color: var(--fg);
          max-width: 920px; }
th, td { border: 1px solid var(--line); padding: 3px 6px; vertical-align: top; }
th { background: var(--bg-alt); text-align: left; min-width: 3.5em; max-width: 11em;
     overflow-wrap: break-word; }
details.more { margin: -10px 0 16px; font-size: 13px; }
details.more summary { cursor: pointer; color: var(--note); }
td:first-child { white-space: nowrap; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tbody tr:nth-child(even) td { background: #fbfcfd; }
figure { margin: 14px 0 20px; }
figure img { max-width: 100%; height: auto; border: 1px solid var(--line); }
figcaption { font-size: 13px; color: var(--muted); margin-top: 4px; max-width: 920px; }
.callout { border-left: 5px solid; padding: 8px 12px; margin: 12px 0; max-width: 960px; }
.callout p { margin: 4px 0; }
.callout .title { font-weight: 700; }
.callout.warning { border-color: var(--warn); background: var(--warn-bg); }
.callout.warning .title { color: var(--warn); }
.callout.note { border-color: var(--note); background: var(--note-bg); }
.callout.ok { border-color: var(--ok); background: var(--ok-bg); }
.callout.ok .title { color: var(--ok); }
dl { max-width: 960px; }
dt { font-weight: 700; margin-top: 10px; }
dd { margin: 2px 0 0 18px; }
footer { margin-top: 40px; font-size: 12px; color: var(--muted); }
"""


def _inline(parts: tuple[Inline, ...]) -> str:
    out = []
    for part in parts:
        if isinstance(part, Code):
            out.append(f"<code>{escape(part.text)}</code>")
        elif isinstance(part, Strong):
            out.append(f"<strong>{escape(part.text)}</strong>")
        else:
            out.append(escape(part))
    return "".join(out)


def _table(table: Table) -> str:
    """A table in its own horizontally scrolling box (a wide table never widens the page);
    a table of more than :data:`COLLAPSE_ROWS` rows shows its first :data:`SHOWN_ROWS` and
    puts the whole table under "show all N rows"."""
    numeric = table.numeric or (False,) * len(table.columns)
    head = "".join(f"<th scope=\"col\">{escape(c)}</th>" for c in table.columns)
    body = []
    for row in table.rows:
        cells = "".join(
            f"<td class=\"num\">{escape(cell)}</td>" if num else f"<td>{escape(cell)}</td>"
            for cell, num in zip(row, numeric, strict=True)
        )
        body.append(f"<tr>{cells}</tr>")
    caption = f"<caption>{escape(table.caption)}</caption>" if table.caption else ""

    def box(rows: list[str], ident: str, title: str) -> str:
        return (f"<div class=\"scroll\"><table id=\"{_attr(ident)}\">{title}"
                f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>")

    if len(body) <= COLLAPSE_ROWS:
        return box(body, table.key, caption)
    n = len(body)
    note = (f"<caption>{escape(table.caption.rstrip('.') + '. ' if table.caption else '')}"
            f"First {SHOWN_ROWS} of {n} rows; all below</caption>")
    return (
        box(body[:SHOWN_ROWS], table.key, note)
        + f"<details class=\"more\"><summary>show all {n} rows</summary>"
        + box(body, f"{table.key}-all", "") + "</details>"
    )


def _figure(figure: Figure) -> str:
    data = base64.b64encode(figure.png_bytes()).decode("ascii")
    caption = f"<figcaption>{escape(figure.caption)}</figcaption>" if figure.caption else ""
    return (
        f"<figure id=\"fig-{_attr(figure.name)}\"><img src=\"data:image/png;base64,{data}\" "
        f"alt=\"{_attr(figure.alt)}\">{caption}</figure>"
    )


def _callout(callout: Callout) -> str:
    body = f"<p>{_inline(callout.parts)}</p>" if callout.parts else ""
    return (
        f"<div class=\"callout {_attr(callout.kind)}\" role=\"note\">"
        f"<p class=\"title\">{escape(callout.title)}</p>{body}</div>"
    )


def _definitions(block: Definitions) -> str:
    items = "".join(
        f"<dt>{escape(term)}</dt><dd>{_inline(parts)}</dd>" for term, parts in block.items
    )
    return f"<dl>{items}</dl>"


def _block(block: Block) -> str:
    if isinstance(block, Paragraph):
        return f"<p>{_inline(block.parts)}</p>"
    if isinstance(block, Table):
        return _table(block)
    if isinstance(block, Figure):
        return _figure(block)
    if isinstance(block, Callout):
        return _callout(block)
    if isinstance(block, Preformatted):
        return f"<pre>{escape(block.text)}</pre>"
    if isinstance(block, Definitions):
        return _definitions(block)
    raise TypeError(f"unknown block {type(block).__name__}")  # pragma: no cover


def _section(section: Section) -> str:
    blocks = "\n".join(_block(b) for b in section.blocks)
    return (
        f"<section id=\"{_attr(section.key)}\">\n"
        f"<h2>{escape(section.title)}</h2>\n"
        f"{blocks}\n</section>"
    )


def render_html(document: Document) -> str:
    """The complete HTML page (UTF-8 text) of ``document``."""
    toc = "".join(
        f"<li><a href=\"#{_attr(s.key)}\">{escape(s.title)}</a></li>" for s in document.sections
    )
    header = "".join(f"<p>{escape(line)}</p>" for line in document.header)
    sections = "\n".join(_section(s) for s in document.sections)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{_attr(document.title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        f"<main>\n<header class=\"report\"><h1>{escape(document.title)}</h1>{header}</header>\n"
        "<nav class=\"toc\" aria-label=\"contents\"><strong>Contents</strong>"
        f"<ol>{toc}</ol></nav>\n"
        f"{sections}\n"
        "<footer>Written by evalbayes. Self-contained: no scripts, no network; images are "
        "embedded.</footer>\n</main>\n</body>\n</html>\n"
    )
