"""Stage lines on stderr for long commands, also when stderr is not a terminal.

A progress bar draws only on a terminal; redirected to a file or a CI log, a fit or a report
would print its first line and then nothing for minutes. :func:`progress` says what starts,
a line every ``every`` seconds while it runs (when no progress bar shows it), and how long it
took.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

__all__ = ["HEARTBEAT_S", "heartbeat_every", "progress"]

HEARTBEAT_S = 30.0  # seconds between "still ..." lines


@contextmanager
def progress(
    start: str, doing: str, *, every: float | None = HEARTBEAT_S, stream: TextIO | None = None
) -> Iterator[None]:
    """Print ``start`` now, ``still <doing> (N s)`` every ``every`` seconds (None: never, e.g.
    while a progress bar is on a terminal), and ``<doing>: done in N s`` at the end."""
    out = sys.stderr if stream is None else stream
    print(start, file=out, flush=True)
    began = time.monotonic()
    stop = threading.Event()

    def beat() -> None:
        while every is not None and not stop.wait(every):
            print(f"still {doing} ({time.monotonic() - began:.0f} s)", file=out,
                  flush=True)

    thread = threading.Thread(target=beat, daemon=True, name="evalbayes-progress")
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
    print(f"{doing}: done in {time.monotonic() - began:.1f} s", file=out, flush=True)


def heartbeat_every(quiet_bar: bool) -> float | None:
    """A heartbeat unless a progress bar shows on a terminal."""
    return HEARTBEAT_S if quiet_bar or not sys.stderr.isatty() else None
