"""Section "Harness and protocol": what the user stated (``--meta``), or a plain statement
that nothing was.

References
----------
Biderman, S. et al. (2024). Lessons from the trenches on reproducible evaluation of language
models. arXiv:2405.14782.
"""

from __future__ import annotations

from evalbayes.report._document import Block, Callout, Code, Preformatted, Section, Table, paragraph
from evalbayes.report._meta import ProtocolMeta

__all__ = ["ANECDOTE", "CHECKLIST", "protocol_section"]

ANECDOTE = (
    "A benchmark number without the harness and protocol is not a measurement; it is an "
    "anecdote."
)
CHECKLIST = (
    "task set and split (which tasks, held out how, created when)",
    "verifier and success criterion (hidden tests, judge, threshold)",
    "harness and its version (prompt template, tools, environment)",
    "sampling (temperature, trials per task, greedy or sampled)",
    "budgets (turns, tokens, time, edits)",
    "selection (how many checkpoints or configurations were tried on this test set)",
)


def protocol_section(meta: ProtocolMeta | None) -> Section:
    """The stated harness and protocol, or a warning that none was stated."""
    checklist = paragraph(
        "A reproducible number states: " + "; ".join(CHECKLIST) + " (see Biderman et al. 2024 on "
        "reproducible evaluation of language models)."
    )
    if meta is None:
        blocks: list[Block] = [
            Callout(
                "warning",
                "The harness and protocol were not stated",
                (
                    "This report was made without ",
                    Code("--meta FILE"),
                    ", so nothing here records how the counts were produced. " + ANECDOTE,
                ),
            ),
            checklist,
            paragraph(
                "State them in a TOML, JSON or text file and pass it: ",
                Code("evalbayes report DATA --meta protocol.toml"),
                ".",
            ),
        ]
        return Section("protocol", "Harness and protocol", tuple(blocks))
    intro = paragraph("As stated by the user in ", Code(meta.source), ":")
    if meta.kind == "table":
        body: Block = Table.build(
            "protocol", ["field", "value"], meta.rows, caption="Harness and protocol"
        )
    else:
        body = Preformatted(meta.text)
    note = paragraph(
        "evalbayes prints these fields as given and does not check them. " + ANECDOTE
    )
    return Section("protocol", "Harness and protocol", (intro, body, note, checklist))
