"""Command line: ``evalbayes <command> ...``.

Each command is one module ``evalbayes.cli.<name>`` (dashes -> underscores) with
``add_arguments(parser)`` and ``run(args) -> int``. :data:`COMMANDS` lists them lazily: only
the chosen command's module is imported, so ``evalbayes --help`` and the commands that do not
fit (``crosscheck``, ``convert``, ``datasets``) never import PyMC.

Exit codes: 0 success; 1 a check failed (``--strict`` diagnostics, a fit that did not
converge); 2 bad input or usage, reported here in one place as ``evalbayes: error: ...``.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from collections.abc import Sequence

__all__ = ["COMMANDS", "build_parser", "main"]

#: name -> (module, one-line help); the module defines ``add_arguments`` and ``run``.
COMMANDS: dict[str, tuple[str, str]] = {
    "crosscheck": ("evalbayes.cli._crosscheck",
                   "frequentist estimates (no PyMC): pass@k, intervals"),
    "fit": ("evalbayes.cli._fit", "fit a model and save the posterior (NetCDF)"),
    "prior-check": ("evalbayes.cli._prior_check",
                    "what the model's prior implies for pass@k, before fitting"),
    "summary": ("evalbayes.cli._summary", "per-system posterior summary of a fit"),
    "pass-at-k": ("evalbayes.cli._pass_at_k", "posterior pass@k / pass^k curves of a fit"),
    "maj-at-k": ("evalbayes.cli._maj_at_k",
                 "majority-vote accuracy maj@k from per-trial answers (no PyMC)"),
    "compare": ("evalbayes.cli._compare", "P(B > A), B - A, rope and expected loss"),
    "plot": ("evalbayes.cli._plot", "plots of a fit"),
    "items": ("evalbayes.cli._items", "item difficulty table of an IRT fit"),
    "compare-models": ("evalbayes.cli._compare_models",
                       "PSIS-LOO comparison of fits of the same data"),
    "convert": ("evalbayes.cli._convert", "harness logs -> tidy counts (or trials) table"),
    "datasets": ("evalbayes.cli._datasets",
                 "list the bundled datasets with provenance and licence"),
    "report": ("evalbayes.cli._report", "self-contained HTML (or Markdown) report"),
    "fit-suite": ("evalbayes.cli._fit_suite",
                  "fit every benchmark of a suite in parallel (Dask; local cluster by default)"),
    "plan": ("evalbayes.cli._plan",
             "tasks x trials needed: Bayesian assurance beside power / MDE"),
    "gate": ("evalbayes.cli._gate",
             "ship or hold B against A (exit 0 ship, 1 hold, 2 bad input)"),
    "demo": ("evalbayes.cli._demo", "the main job on bundled TinyAgent counts"),
}  # fmt: skip


def _chosen(argv: Sequence[str]) -> str | None:
    """The command named in ``argv`` (the first word that is one), if any."""
    return next((word for word in argv if word in COMMANDS), None)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; only ``command``'s module is imported to add its arguments."""
    from evalbayes._version import __version__

    parser = argparse.ArgumentParser(
        prog="evalbayes",
        description="Bayesian hierarchical models of AI evaluation counts, with frequentist "
        "cross-checks.",
        epilog="exit codes: 0 success, 1 a check failed (--strict), 2 bad input or usage. "
        "`evalbayes COMMAND --help` shows a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"evalbayes {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (module_name, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        if name == command:
            module = importlib.import_module(module_name)
            module.add_arguments(p)
            from evalbayes.cli._common import finish_arguments

            finish_arguments(p)
            p.set_defaults(run=module.run)
    return parser


#: ``key='value'`` in a library message: an option to pass, with the value to give it.
_VALUED = re.compile(r"\b(?P<key>[a-z_]+)=(?P<quote>['\"])(?P<value>[^'\"]*)(?P=quote)")


def cli_hint(message: str, argv: Sequence[str] | None = None) -> str:
    """Name the CLI flag where a library message tells the user to pass ``option=``.

    Where the message gives every value (``format='trials', success='passed'``) and the
    command line is known, the hint is the whole command to run again, with those flags
    replacing any the user gave.
    """
    import shlex

    from evalbayes.cli._readers import reader_flags

    names = {**reader_flags(), "format": "--input-format"}
    # only what follows "pass" / "read it with" is a hint; "c=-1" or "n='ten'" before it are data
    starts = [i for i in (message.find("pass "), message.find("read it with ")) if i >= 0]
    advice = message[min(starts):] if starts else ""
    valued = [(names[m["key"]], m["value"]) for m in _VALUED.finditer(advice)
              if m["key"] in names]
    if valued and argv is not None:
        given = {flag for flag, _ in valued}
        kept: list[str] = []
        skip = False
        for item in argv:
            if skip:
                skip = False
                continue
            if item in given:
                skip = True
                continue
            if item.split("=", 1)[0] in given:
                continue
            kept.append(item)
        command = ["evalbayes", *kept, *[part for pair in valued for part in pair]]
        return f"{message} (on the command line: {shlex.join(command)})"
    # only "pass key=..." is a hint; "c=-1 is negative" or "n='ten'" are data, not hints
    flags = [flag for key, flag in reader_flags().items()
             if re.search(rf"\bpass\s(?:[^.;]*?[\s,(])?{key}=", message)]
    return f"{message} (on the command line: {', '.join(flags)})" if flags else message


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``evalbayes`` command; input errors -> message and exit 2.

    Called as the command itself (``argv=None``: the console script, ``python -m
    evalbayes``), the process exits next: the objects it holds are then frozen
    (:func:`gc.freeze`) so that the interpreter's shutdown does not walk them again in its
    garbage collections. After NumPy, pandas, xarray, SciPy and numba's type registries those
    walks cost ~0.3 CPU-s (`evalbayes fit dataset:tinyagent`: 1.92 -> 1.64 CPU-s; as much as
    skipping shutdown with ``os._exit``). Shutdown is otherwise unchanged: ``atexit``
    handlers (temporary folders, Dask clusters) run and the standard streams are flushed;
    only finalizers of objects still alive or in uncollected cycles at exit may not run,
    which Python never promises (the ``__del__`` note of the data model). Tests and
    library callers pass ``argv`` and are untouched.
    """
    code = _main(argv)
    if argv is None:
        import gc

        gc.freeze()
    return code


def _main(argv: Sequence[str] | None) -> int:
    import json
    import tomllib

    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser(_chosen(argv)).parse_args(argv)
    except SystemExit as done:  # --help, --version, or a usage error (exit 2) from argparse
        return done.code if isinstance(done.code, int) else 2
    import warnings

    formatwarning = warnings.formatwarning
    # a warning reads as a message, not as a source line of the library
    warnings.formatwarning = _format_warning
    try:
        from evalbayes.cli._output import guard_outputs

        guard_outputs(args)  # -o: not an input, not a folder, before any work
        return int(args.run(args) or 0)
    except (
        ValueError,  # includes CLIError, UnicodeDecodeError and the decode errors below
        json.JSONDecodeError,
        tomllib.TOMLDecodeError,
        OSError,  # missing, unreadable or unwritable files, a full disk, a size limit
        RecursionError,  # an input nested deeper than any reader guards against
    ) as err:
        message = str(err) if not isinstance(err, OSError) or not err.filename else (
            f"{err.filename}: {err.strerror}"
        )
        if isinstance(err, RecursionError):
            message = "an input is nested too deeply to read (JSON/TOML depth)"
        print(f"evalbayes: error: {cli_hint(message, argv)}", file=sys.stderr)
        return 2
    finally:
        warnings.formatwarning = formatwarning


def _format_warning(message, category, filename, lineno, line=None) -> str:
    return f"evalbayes: warning ({category.__name__}): {message}\n"
