"""Output of the ``evalbayes`` commands: tables as text/CSV/JSON, files, reused fits.

Every file a command writes passes :func:`check_output_path` before any work (not a
directory, its folder exists, not one of the command's inputs) and is written atomically
(:mod:`evalbayes._core.files`: a temporary file beside it, then a rename), so no command
ever truncates or replaces a file it reads, and a failed write leaves the previous file.
"""

from __future__ import annotations

import argparse
import glob
import os
import stat
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalbayes._core import files
from evalbayes.cli._common import DATASET_PREFIX, CLIError, warn
from evalbayes.cli._text_table import text_table

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from evalbayes.results._posterior import Posterior


#: The argparse destinations that name files a command reads (DATA, FIT, --spec, --meta,
#: the design tables, plan/gate's --fit): an output may be none of them.
INPUT_DESTS = ("data", "answers", "source", "logs", "fit", "fits", "spec", "meta", "factors",
               "recipes", "gold")


def input_paths(args: argparse.Namespace | None) -> list[str]:
    """The files and folders (as given: globs, directories) that a command reads."""
    found: list[str] = []
    for dest in INPUT_DESTS:
        value = getattr(args, dest, None) if args is not None else None
        for item in [value] if isinstance(value, str) else list(value or []):
            if isinstance(item, str) and item and not item.startswith(DATASET_PREFIX):
                found.append(item)
    return found


def _expand(item: str) -> Iterator[str]:
    """Every file an input names: itself, a glob's matches, a folder's files (recursively)."""
    for path in glob.glob(item, recursive=True) if glob.escape(item) != item else [item]:
        if os.path.isdir(path):
            for root, _dirs, names in os.walk(path):
                for name in names:
                    yield os.path.join(root, name)
        else:
            yield path


def same_file_as_input(path: str | Path, inputs: Iterable[str]) -> str | None:
    """The input that ``path`` is (same device and inode: hard links, symlinks, ``./x``
    and ``x`` alike), or a file inside an input folder or glob; None if none is."""
    try:
        target = os.stat(path)
    except OSError:  # no such file yet: it cannot be an input
        return None
    key = (target.st_dev, target.st_ino)
    for item in inputs:
        for candidate in _expand(item):
            try:
                found = os.stat(candidate)
            except OSError:
                continue
            if stat.S_ISREG(found.st_mode) and (found.st_dev, found.st_ino) == key:
                return item if candidate == item else f"{candidate}, matched by {item}"
    return None


def check_output_path(path: str | Path | None, args: argparse.Namespace | None = None,
                      flag: str = "-o", create: bool = False) -> None:
    """Refuse, before any work, an output that is a directory, whose folder does not exist
    (``create``: make it), or that is one of the command's inputs (:data:`INPUT_DESTS`)."""
    if path is None:
        return
    target = Path(path)
    if target.is_dir():
        raise CLIError(f"{flag} {path}: is a directory; give a file name")
    folder = target.parent
    if not folder.is_dir():
        if folder.exists():
            raise CLIError(f"{flag} {path}: {folder} is not a directory")
        if not create:
            raise CLIError(f"{flag} {path}: the folder {folder} does not exist; create it "
                           "first")
    same = same_file_as_input(target, input_paths(args))
    if same is not None:
        raise CLIError(f"{flag} {path} is also an input ({same}); refusing to overwrite it: "
                       "give another output file")


def guard_outputs(args: argparse.Namespace) -> None:
    """Before any work (called once by ``main``): no input is a FIFO, socket or device
    (reading one would block), and :func:`check_output_path` for ``-o``."""
    from evalbayes.io._sources import not_regular_message

    for item in input_paths(args):
        message = not_regular_message(item)
        if message is not None:
            raise CLIError(message)
    output = getattr(args, "output", None)
    if isinstance(output, str):
        check_output_path(output, args, create=args.command in CREATES_FOLDER)


#: Commands whose -o folder is created when missing (their library functions do so).
CREATES_FOLDER = ("fit", "report")


# --------------------------------------------------------------------------- fits
#: The commands that read a graded-score fit (``evalbayes fit SCORES --model ordinal``).
SCORE_FIT_COMMANDS = ("summary", "compare", "report")


def load_fit(path: str, scores: bool = False) -> Any:
    """Load a saved fit (tamper checks are the loader's); a graded-score fit only where the
    command reads one (``scores``), else a ``CLIError`` saying which commands do."""
    import warnings

    from evalbayes._persist import load
    from evalbayes.results._diagnostics import ConvergenceWarning

    with warnings.catch_warnings():  # check_fit reports the diagnostics on stderr
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = load(path)
    if not scores and is_score_fit(fit):
        raise CLIError(f"{path} is a graded-score fit ({fit.model.name}): it has P(score >= t) "
                       "and mean scores, not pass@k counts; read it with evalbayes "
                       f"{', '.join(SCORE_FIT_COMMANDS)}")
    return fit


def is_score_fit(fit: Any) -> bool:
    """Whether ``fit`` is a graded-score fit (``ScorePosterior``)."""
    from evalbayes.models.graded import ScorePosterior

    return isinstance(fit, ScorePosterior)


def check_fit(posterior: Posterior, strict: bool, quiet_pass: bool = True) -> int:
    """Warn loudly on stderr when a reused fit failed its diagnostics; 1 if so and strict."""
    import warnings

    if posterior.approximate:
        warn(f"WARNING: {posterior.label}: approximate fit, no MCMC diagnostics; "
             "intervals are approximate")
        return 1 if strict else 0
    if not posterior.is_mcmc:
        if not quiet_pass:
            warn("exact posterior draws (conjugate or quadrature): no MCMC diagnostics needed")
        return 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        diag = posterior.diagnostics(warn=False)
    if not quiet_pass or not diag.passed:
        warn(f"diagnostics: {diag}")
    if diag.passed:
        return 0
    warn("WARNING: the fit did not converge; its numbers may be wrong "
         "(refit with more --draws/--tune)")
    return 1 if strict else 0


# --------------------------------------------------------------------------- output
#: How a spreadsheet cell that runs as a formula begins (OWASP, "CSV Injection"): =, +, -, @,
#: and a tab or carriage return before them.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def formula_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every text cell that a spreadsheet would run as a formula (a name such
    as ``=HYPERLINK("http://...")``) prefixed with a single quote, which spreadsheets show as
    text (OWASP's advice for CSV exports). Numbers are untouched (``-0.05`` stays a number);
    JSON output and ``convert`` keep every value verbatim."""
    import pandas as pd

    out = frame.copy()
    for column in out.columns:
        if pd.api.types.is_numeric_dtype(out[column]):
            continue
        out[column] = [f"'{v}" if isinstance(v, str) and v.startswith(FORMULA_START) else v
                       for v in out[column]]
    return out


def fit_notes(posterior: Any, k: Any) -> str | None:
    """The notes that go beside a fit's pass@k numbers: the one-trial note and the model's own
    (``model_note(k)`` of a typed posterior, e.g. what a formula's estimands integrate)."""
    from evalbayes.results._extrapolation import one_trial_note

    model_note = getattr(posterior, "model_note", None)
    notes = [one_trial_note(posterior.data, k), model_note(k) if model_note else None]
    return "\n".join(n for n in notes if n) or None


def emit(frame: pd.DataFrame, output: str, path: str | None, title: str | None = None,
         note: str | None = None) -> None:
    """Write a table as text, CSV (formula-safe: :func:`formula_safe`) or JSON to stdout or
    a file; ``note`` (what the reader must know about the numbers) follows a text table, and
    goes to stderr beside CSV / JSON."""
    if note and output in ("csv", "json"):
        warn(f"NOTE: {note}")
    if output == "csv":
        text = formula_safe(frame).to_csv(index=False)
    elif output == "json":
        text = frame.to_json(orient="records", indent=2) + "\n"
    else:
        from evalbayes._core.names import TEXT_LABEL_WIDTH, display_label

        # a readable view: long names shortened (kept distinct), control characters escaped
        # so a name cannot drive the terminal (each distinct name once: a compare table
        # repeats 123 names 15,000 times); CSV and JSON keep every name in full
        def label(name: str) -> str:
            return display_label(name, TEXT_LABEL_WIDTH)

        text = (f"{title}\n" if title else "") + text_table(frame, label)
        text += "\n"
        if note:
            text += f"NOTE: {note}\n"
    write_text(text, path)


def write_text(text: str, path: str | None) -> None:
    """Write text to a file atomically (saying so on stderr) or to stdout."""
    if path:
        check_output_path(path)
        files.write_text(path, text)
        warn(f"wrote {path}")
    else:
        sys.stdout.write(text)
