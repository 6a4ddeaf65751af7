"""Output of the ``evalbayes`` commands: tables as text/CSV/JSON, files, reused fits."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from evalbayes.cli._common import CLIError, warn

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from evalbayes.results._posterior import Posterior




def check_output_path(path: str | Path | None) -> None:
    """Refuse an output path that is a directory, before any work is done."""
    if path is not None and Path(path).is_dir():
        raise CLIError(f"-o {path}: is a directory; give a file name")



# --------------------------------------------------------------------------- fits
def load_fit(path: str) -> Posterior:
    """Load a saved fit (tamper checks are the loader's)."""
    import warnings

    from evalbayes._persist import load
    from evalbayes.results._diagnostics import ConvergenceWarning

    with warnings.catch_warnings():  # check_fit reports the diagnostics on stderr
        warnings.simplefilter("ignore", ConvergenceWarning)
        return load(path)


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
def emit(frame: pd.DataFrame, output: str, path: str | None, title: str | None = None,
         note: str | None = None) -> None:
    """Write a table as text, CSV or JSON to stdout or a file; ``note`` (what the reader must
    know about the numbers) follows a text table, and goes to stderr beside CSV / JSON."""
    if note and output in ("csv", "json"):
        warn(f"NOTE: {note}")
    if output == "csv":
        text = frame.to_csv(index=False)
    elif output == "json":
        text = frame.to_json(orient="records", indent=2) + "\n"
    else:
        import pandas as pd

        from evalbayes._core.names import TEXT_LABEL_WIDTH, display_label

        # a readable view: long names shortened (kept distinct), control characters escaped
        # so a name cannot drive the terminal; CSV and JSON keep every name in full
        frame = frame.copy()
        for column in frame.columns:
            if not pd.api.types.is_numeric_dtype(frame[column]):
                frame[column] = [
                    display_label(v, TEXT_LABEL_WIDTH) if isinstance(v, str) else v
                    for v in frame[column]
                ]
        with pd.option_context("display.width", 200, "display.max_columns", 50,
                               "display.max_rows", 500):
            text = (f"{title}\n" if title else "") + frame.to_string(
                index=False, float_format=lambda v: f"{v:.4f}"
            )
        text += "\n"
        if note:
            text += f"NOTE: {note}\n"
    write_text(text, path)


def write_text(text: str, path: str | None) -> None:
    """Write text to a file (saying so on stderr) or to stdout."""
    if path:
        check_output_path(path)
        Path(path).write_text(text, encoding="utf-8")
        warn(f"wrote {path}")
    else:
        sys.stdout.write(text)
