"""Report figures drawn in forked child processes: the same bytes, errors raised in the
parent, children stopped when the report fails, and drawing in-process where children are
not to be had."""

from __future__ import annotations

import multiprocessing
import sys

import pytest
from matplotlib.figure import Figure as MplFigure

import evalbayes as eb
from evalbayes.report import _figures
from evalbayes.report._build import build_report, write_report
from evalbayes.report._figures import (
    ChildDrawing,
    draw_png,
    drawing_in_child_processes,
    new_figure,
    report_style,
    to_png,
)

needs_fork = pytest.mark.skipif(
    _figures.child_processes_available() == 0,
    reason="figures are drawn in child processes only on Linux with two or more CPUs",
)


def _figure(label: str = "a system") -> MplFigure:
    with report_style():
        figure, axes = new_figure(6.0, 3.0, 1, 2)
        for ax in axes[0]:
            ax.plot([1, 2, 3], [0.2, 0.5, 0.4], label=label)
            ax.set_title("title\nsecond line")
            ax.legend(loc="upper left")
    return figure


@pytest.fixture(scope="module")
def small_fit():
    data = eb.EvalData.from_arrays([[4, 4, 4], [4, 4, 4]], [[1, 3, 4], [0, 2, 4]],
                                   systems=["A", "B"], tasks=["t1", "t2", "t3"])
    return data, eb.BetaBinomialModel().fit(data, draws=400, seed=1)


@needs_fork
def test_a_child_draws_the_bytes_the_parent_would():
    with drawing_in_child_processes():
        pending = draw_png(_figure())
        assert isinstance(pending, ChildDrawing)
        assert not pending.collected
    assert pending.collected
    with report_style():
        assert pending.result() == to_png(_figure())


@needs_fork
def test_a_report_drawn_in_children_is_byte_identical(small_fit):
    data, fit = small_fit
    inline = build_report(data, fit, seed=3)
    with drawing_in_child_processes():
        forked = build_report(data, fit, seed=3)
        assert any(not isinstance(f.png, bytes) for f in forked.figures())
        drawn = [f.png_bytes() for f in forked.figures()]
    assert drawn == [f.png_bytes() for f in inline.figures()]
    assert all(isinstance(f.png, bytes) for f in inline.figures())


@needs_fork
def test_an_error_while_drawing_is_raised_in_the_parent(monkeypatch):
    def broken(figure):
        raise ValueError("no room for the legend")

    monkeypatch.setattr(_figures, "to_png", broken)  # the forked child inherits the patch
    with drawing_in_child_processes():
        pending = draw_png(_figure())
        with pytest.raises(ValueError, match="no room for the legend"):
            pending.result()


@needs_fork
def test_children_are_stopped_when_the_report_fails():
    with pytest.raises(RuntimeError, match="a section failed"):
        with drawing_in_child_processes():
            draw_png(_figure())
            raise RuntimeError("a section failed")
    assert multiprocessing.active_children() == []


@needs_fork
def test_at_most_the_allowed_children_draw_at_once(monkeypatch):
    monkeypatch.setattr(_figures, "child_processes_available", lambda: 1)
    with drawing_in_child_processes():
        drawings = [draw_png(_figure(f"system {i}")) for i in range(3)]
        # each new child waited for the one before: only the last can still be drawing
        assert all(d.collected for d in drawings[:-1])
    assert all(d.collected for d in drawings)


def test_drawn_here_where_children_are_not_available(monkeypatch):
    monkeypatch.setattr(_figures, "child_processes_available", lambda: 0)
    with drawing_in_child_processes():
        assert isinstance(draw_png(_figure()), bytes)


def test_only_linux_forks(monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")
    assert _figures.child_processes_available() == 0


@needs_fork
def test_write_report_html_is_the_same_with_children_or_without(monkeypatch, small_fit,
                                                                tmp_path):
    data, fit = small_fit
    forked = write_report(data, fit=fit, output=tmp_path / "forked.html", seed=3)
    monkeypatch.setattr(_figures, "child_processes_available", lambda: 0)
    inline = write_report(data, fit=fit, output=tmp_path / "inline.html", seed=3)
    assert forked.read_bytes() == inline.read_bytes()
    assert inline.read_text().count("data:image/png;base64,") >= 3  # the figures are in it
