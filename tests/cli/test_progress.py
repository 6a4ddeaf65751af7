"""Long commands say what they do on stderr, also when it is not a terminal (issue 28)."""

from __future__ import annotations

import io
import time

import pytest

from evalbayes.cli._progress import progress


def test_start_heartbeat_and_end_lines():
    out = io.StringIO()
    with progress("fitting x", "fitting", every=0.05, stream=out):
        time.sleep(0.3)
    lines = out.getvalue().splitlines()
    assert lines[0] == "fitting x"
    assert any(line.startswith("still fitting (") for line in lines[1:-1])
    assert lines[-1].startswith("fitting: done in ")


def test_no_heartbeat_while_a_bar_shows_and_no_done_line_on_error():
    out = io.StringIO()
    with pytest.raises(RuntimeError), progress("go", "going", every=None, stream=out):
        time.sleep(0.1)
        raise RuntimeError("boom")
    assert out.getvalue().splitlines() == ["go"]
