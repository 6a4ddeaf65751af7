"""The report's PNG figures: one Agg draw per figure, everything inside the canvas, stable bytes."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest
from matplotlib.figure import Figure as MplFigure
from PIL import Image

from evalbayes.report._figures import DPI, new_figure, report_style, to_png


def _figure() -> MplFigure:
    return _figure_of(9.0)


def _figure_of(width: float) -> MplFigure:
    with report_style():
        figure, axes = new_figure(width, 3.0, 1, 2)
        for ax in axes[0]:
            ax.plot([1, 2, 3], [0.2, 0.5, 0.4], label="a system")
            ax.set_yticks([0.2, 0.4])
            ax.set_yticklabels(["a rather long system name on the left", "short"])
            ax.set_title("title\nsecond line")
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return figure


def test_one_draw_per_figure(monkeypatch):
    figure = _figure()
    calls = []
    draw = MplFigure.draw

    def counted(self, renderer):
        calls.append(renderer)
        return draw(self, renderer)

    monkeypatch.setattr(MplFigure, "draw", counted)
    with report_style():
        to_png(figure)
    assert len(calls) == 1


def test_png_is_the_figure_at_the_report_resolution_with_every_text_inside():
    figure = _figure()
    with report_style():
        png = to_png(figure)
    image = Image.open(io.BytesIO(png))
    assert image.format == "PNG"
    assert image.size[0] <= round(9.0 * DPI) and image.size[1] <= round(3.0 * DPI)
    assert "Software" not in image.info
    # the constrained layout of that one draw kept labels, titles and legends on the canvas
    renderer = figure.canvas.get_renderer()
    canvas = figure.bbox
    for ax in figure.axes:
        box = ax.get_tightbbox(renderer)
        assert box.x0 >= canvas.x0 - 1 and box.x1 <= canvas.x1 + 1
        assert box.y0 >= canvas.y0 - 1 and box.y1 <= canvas.y1 + 1
    pixels = np.asarray(image.convert("L"))
    assert pixels.min() < 100  # something was drawn (text and lines are dark)


def test_same_figure_same_bytes():
    with report_style():
        first, second = to_png(_figure()), to_png(_figure())
    assert first == second


@pytest.mark.parametrize("dpi", [72, 200])
def test_resolution_is_the_report_s_whatever_the_figure_was_made_at(dpi):
    figure = MplFigure(figsize=(2.0, 1.0), dpi=dpi, layout="constrained")
    figure.subplots().plot([0, 1])
    image = Image.open(io.BytesIO(to_png(figure)))
    assert image.size == (round(2.0 * DPI), round(1.0 * DPI))


def test_a_figure_too_small_for_its_labels_grows_to_hold_them():
    # the constrained layout collapses (it warns): the tight bounding box of before is used
    with report_style():
        figure, axes = new_figure(1.0, 1.0)
        axes[0, 0].set_ylabel("a label far longer than this one-inch figure is high or wide")
        axes[0, 0].set_title("and a title as long as the label above it, or longer")
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the collapse warning is handled, not passed on
            png = to_png(figure)
    width, height = Image.open(io.BytesIO(png)).size
    assert width > 2 * DPI and height > DPI


def _tight_size(figure: MplFigure) -> tuple[int, int]:
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="constrained_layout not applied")
        figure.savefig(buffer, format="png", dpi=DPI, bbox_inches="tight")
    return Image.open(buffer).size


@pytest.mark.parametrize(("width", "grows"), [(9.0, False), (4.0, True)])
def test_framed_as_savefig_tight_frames_it(width, grows):
    # 9 inches: everything fits, the one draw is cropped; 4 inches: the long tick label and
    # the outside legend stick out, the figure is drawn again on a larger canvas
    with report_style():
        ours = Image.open(io.BytesIO(to_png(_figure_of(width)))).size
        reference = _tight_size(_figure_of(width))
    # the pad is cut short at the canvas's edges when the one draw is cropped
    pad = round(0.1 * DPI)
    assert abs(ours[0] - reference[0]) <= 2 * pad and abs(ours[1] - reference[1]) <= 2 * pad
    assert (ours[0] > width * DPI) == grows
