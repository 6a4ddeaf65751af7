"""``write_report``: fit (when given data), compute every section, render HTML or Markdown."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalbayes._core.files import write_bytes, write_text
from evalbayes._core.names import (
    UNSET,
    Unset,
    hidden_characters,
    lookalike_names,
    pick_seed,
)
from evalbayes._version import __version__
from evalbayes.data import EvalData
from evalbayes.io._scores import ScoreData
from evalbayes.models.graded import OrdinalModel, PartialCreditModel, ScoreModel, ScorePosterior
from evalbayes.report._checks import checks_section
from evalbayes.report._context import make_context
from evalbayes.report._designs import design_sections
from evalbayes.report._document import Callout, Document, Section
from evalbayes.report._figures import drawing_in_child_processes
from evalbayes.report._guide import guide_section, reproduce_section
from evalbayes.report._html import render_html
from evalbayes.report._items import items_section
from evalbayes.report._markdown import render_markdown
from evalbayes.report._meta import ProtocolMeta, read_meta
from evalbayes.report._overview import overview_section
from evalbayes.report._pairs import pairs_section
from evalbayes.report._prior import prior_section
from evalbayes.report._protocol import protocol_section
from evalbayes.report._scores import build_score_report
from evalbayes.report._systems import curves_section, systems_section

if TYPE_CHECKING:  # pragma: no cover
    from evalbayes.models._base import Model
    from evalbayes.results._posterior import Posterior

__all__ = ["build_report", "markdown_path", "write_report"]

#: The settings of ``model.fit`` that ``write_report(sampler=...)`` passes on.
FIT_SETTINGS = ("method", "tune", "chains", "target_accept")


def _check_seed(seed: int) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    return seed


def build_report(
    data: EvalData,
    posterior: Posterior,
    meta: ProtocolMeta | None = None,
    *,
    seed: int = 0,
    random_seed: int | Unset = UNSET,
    fitted_here: bool = False,
) -> Document:
    """Every section of the report as a :class:`~evalbayes.report._document.Document`.

    Parameters
    ----------
    data : EvalData
        The counts; must be the data ``posterior`` was fitted to.
    posterior : Posterior
        Any evalbayes fit (Beta-Binomial, IRT, ...).
    meta : ProtocolMeta, optional
        Harness and protocol as stated by the user (:func:`read_meta`).
    seed : int
        Seed of the bootstraps, sign-flip tests and predictive replicates.
    random_seed : int, optional
        PyMC's name for ``seed`` (give either).
    fitted_here : bool
        Whether the fit was made for this report (recorded in "Reproduce").
    """
    seed = _check_seed(pick_seed(seed, random_seed))
    if not isinstance(data, EvalData):
        raise TypeError(f"data must be EvalData, got {type(data).__name__}")
    if not data.equals(posterior.data):
        raise ValueError("the fit was made on other data than the data given to the report")
    ctx = make_context(data, posterior, seed)
    header: tuple[str, ...] = (
        f"{len(data.systems)} systems × {len(data.tasks):,} tasks; {posterior.label}; "
        f"evalbayes {__version__}; seed {seed}.",
        "Every number names its estimand: 'these tasks' or 'tasks like these'.",
    )
    if posterior.approximate:
        kind = posterior.sampler.approximation_kind
        header += (f"APPROXIMATE: {kind} fit; posterior intervals are approximate.",)
    overview = overview_section(ctx)
    names = _names_callout(data)
    if names is not None:
        overview = Section(overview.key, overview.title, (names, *overview.blocks))
    sections = (
        overview,
        systems_section(ctx),
        curves_section(ctx),
        pairs_section(ctx),
        items_section(ctx),
        *design_sections(ctx),
        checks_section(ctx),
        prior_section(ctx),
        protocol_section(meta),
        guide_section(ctx),
        reproduce_section(ctx, fitted_here),
    )
    return Document(title="evalbayes report", header=header, sections=sections)


NAMES_LISTED = 10  # look-alike or hidden-character names listed in the warning


def _names_callout(data: EvalData) -> Callout | None:
    """A warning, at the top of the report and on stderr, for system or task names that look
    alike (:func:`~evalbayes._core.names.lookalike_names`: homoglyphs, NFC/NFD spellings,
    zero-width characters) or hold hidden characters (bidi overrides): such names can make
    two systems read as one or a name read backwards. Names are shown with escapes."""
    found = []
    for what, names in (("system", data.systems), ("task", data.tasks)):
        for group in lookalike_names(names):
            found.append(f"{what}s that look alike: " + ", ".join(map(ascii, group)))
        for name in names:
            hidden = hidden_characters(name)
            if hidden:
                found.append(f"{what} {name!a} holds hidden characters "
                             f"{', '.join(dict.fromkeys(hidden))}")
    if not found:
        return None
    more = f" (and {len(found) - NAMES_LISTED} more)" if len(found) > NAMES_LISTED else ""
    text = "; ".join(found[:NAMES_LISTED]) + more
    warnings.warn(f"look-alike or hidden-character names: {text}", UserWarning, stacklevel=3)
    return Callout(
        "warning",
        "Names that look alike or hide characters",
        ("Two different names that read the same, or a name with invisible or "
         "direction-changing characters, can make two systems look like one: ", text,
         ". Hidden characters are shown as ⟨U+XXXX⟩ marks in this report; rename the "
         "systems in the data (or with --system OLD=NEW) to be sure which is which.",),
    )


def _score_fit(data: Any, fit: Any, model: Any, draws: int, seed: int,
               sampler: dict[str, Any]) -> ScorePosterior:
    """The graded-score fit of a report: ``fit`` checked against ``data``, or ``model``
    (default: ordinal for ordinal scores, partial-credit for continuous ones) fitted here."""
    if fit is not None:
        if not isinstance(fit, ScorePosterior):
            raise TypeError(f"graded scores (ScoreData) take a graded-score fit "
                            f"(ScorePosterior), got {type(fit).__name__}")
        if not isinstance(data, ScoreData) or not data.frame.equals(fit.data.frame):
            raise ValueError("the fit was made on other data than the data given to the report")
        return fit
    if model is None:
        model = OrdinalModel() if data.kind == "ordinal" else PartialCreditModel()
    if not isinstance(model, ScoreModel):
        raise TypeError(f"graded scores need a graded model (ordinal, partial-credit), got "
                        f"{getattr(model, 'name', type(model).__name__)!r}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence is reported in the document
        return model.fit(data, draws=draws, seed=seed, check=False, **sampler)


def markdown_path(output: str | Path) -> Path:
    """Where the Markdown variant goes: ``report.html`` -> ``report.md``; other names kept,
    ``.md`` added when there is no suffix."""
    path = Path(output)
    if path.suffix.lower() in (".html", ".htm"):
        return path.with_suffix(".md")
    return path if path.suffix else path.with_suffix(".md")


def write_report(
    data: EvalData | ScoreData,
    fit: Posterior | ScorePosterior | None = None,
    output: str | Path = "report.html",
    markdown: bool = False,
    meta: str | Path | None = None,
    draws: int = 1000,
    seed: int = 0,
    *,
    random_seed: int | Unset = UNSET,
    model: Model | None = None,
    sampler: Mapping[str, Any] | None = None,
) -> Path:
    """Write the report of ``data`` (and its fit) and return the path written.

    Parameters
    ----------
    data : EvalData or ScoreData
        The counts, or graded scores (:class:`~evalbayes.io.ScoreData`: the report of a
        graded-score fit, :func:`~evalbayes.report._scores.build_score_report`: mean score
        and ``P(score >= t)`` per system, their curve, comparisons, parameters,
        diagnostics).
    fit : Posterior or ScorePosterior, optional
        A fit of ``data`` (e.g. ``evalbayes.load("fit.nc")``); an IRT fit adds the item
        section, a factorial, training-seeds or judge-error fit its design section. When
        None, ``model`` (default :func:`~evalbayes.models.default_model`: rate-grid for two or
        more systems, Beta-Binomial for one) is fitted with
        ``draws`` draws per chain and ``seed``.
    output : str or Path
        The HTML file. With ``markdown=True`` the Markdown file (``.html`` is replaced by
        ``.md``) and a folder ``<stem>_files/`` of PNG images next to it.
    markdown : bool
        Write Markdown with image files instead of one self-contained HTML file.
    meta : str or Path, optional
        TOML, JSON or plain-text file stating the harness and protocol. Read before any
        fitting, so a bad file fails fast (``ValueError`` / ``FileNotFoundError``).
    draws : int
        Posterior draws per chain when fitting here.
    seed : int
        Seed of the fit (when fitting here), bootstraps, tests and predictive replicates.
    random_seed : int, optional
        PyMC's name for ``seed`` (give either).
    model : Model, optional
        The model fitted here when ``fit`` is None (e.g. ``get_model("factorial")``; for
        ScoreData a graded model, default ``ordinal`` or ``partial-credit`` by the scores'
        kind).
    sampler : mapping, optional
        Further settings of that fit, passed to ``model.fit``: any of ``method``, ``tune``,
        ``chains``, ``target_accept`` (defaults: the model's method, then
        ``names.SAMPLER_DEFAULTS``).

    Returns
    -------
    pathlib.Path
        The HTML or Markdown file.
    """
    seed = _check_seed(pick_seed(seed, random_seed))
    scores = isinstance(data, ScoreData) or isinstance(fit, ScorePosterior)
    if not scores and not isinstance(data, EvalData):
        raise TypeError(f"data must be EvalData (counts) or ScoreData (graded scores), got "
                        f"{type(data).__name__}")
    if isinstance(draws, bool) or not isinstance(draws, int) or draws < 1:
        raise ValueError(f"draws must be a positive int, got {draws!r}")
    protocol = None if meta is None else read_meta(meta)
    if fit is not None and model is not None:
        raise ValueError("give a fit or a model to fit, not both")
    sampler = dict(sampler or {})
    unknown = sorted(set(sampler) - set(FIT_SETTINGS))
    if unknown:
        raise ValueError(f"sampler takes {', '.join(FIT_SETTINGS)}; got {unknown}")
    if fit is not None and sampler:
        raise ValueError("sampler settings apply to a fit made here; the fit given has its own")
    fitted_here = fit is None
    if scores:
        score_fit = _score_fit(data, fit, model, draws, seed, sampler)
        with drawing_in_child_processes():
            return _render(build_score_report(score_fit, protocol, fitted_here=fitted_here),
                           output, markdown)
    assert isinstance(data, EvalData) and not isinstance(fit, ScorePosterior)  # for mypy
    if fit is None:
        if model is None:
            from evalbayes.models import default_model

            model = default_model(data)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # convergence is reported in the document
            fit = model.fit(data, draws=draws, seed=seed, check=False, **sampler)
    with drawing_in_child_processes():  # figures drawn on other cores meanwhile
        document = build_report(data, fit, protocol, seed=seed, fitted_here=fitted_here)
        return _render(document, output, markdown)


def _render(document: Document, output: str | Path, markdown: bool) -> Path:
    """Write ``document`` as one HTML file, or Markdown with its images beside it."""
    if not markdown:
        path = Path(output)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text(path, render_html(document))
        return path
    path = markdown_path(output)
    folder = f"{path.stem}_files"
    rendered = render_markdown(document, folder)
    path.parent.mkdir(parents=True, exist_ok=True)
    (path.parent / folder).mkdir(exist_ok=True)
    for relative, png in rendered.images.items():
        write_bytes(path.parent / relative, png)
    write_text(path, rendered.text)
    return path
