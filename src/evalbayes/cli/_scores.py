"""``evalbayes fit SCORES --model ordinal|partial-credit``: graded scores, not counts.

``fit`` hands over here when the model (``--model`` or the spec's) is a graded-outcome model:
the data are read as scores (:func:`evalbayes.io.read_scores` for a CSV table, with
``--score``, ``--grader``, ``--max-score``, ``--levels`` and the table reader's
``--system-column``, ``--task``, ``--trial``; :func:`evalbayes.io.scores_from_inspect` for
inspect_ai logs, with ``--scorer`` and ``--value-key``), the model is fitted, its summary (mean
score and ``P(score >= t)`` per system, both with intervals) goes to stdout and the draws to
the fit file.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from evalbayes.cli._common import CLIError, warn

#: The graded-outcome models' registry names (their package reads ScoreData, not EvalData).
SCORE_MODELS = ("ordinal", "partial-credit")
_LOG_SUFFIXES = (".eval", ".json")


def add_score_args(parser: argparse.ArgumentParser) -> None:
    """The score-table flags of ``fit`` (used with ``--model ordinal|partial-credit``)."""
    group = parser.add_argument_group("graded scores (--model ordinal | partial-credit)")
    group.add_argument("--score", default="score", metavar="COLUMN",
                       help="the score column (default 'score')")
    group.add_argument("--grader", default=None, metavar="COLUMN",
                       help="the grader (judge) column: grader and grader x system effects")
    group.add_argument("--max-score", type=int, default=None, metavar="K",
                       help="top of an ordinal scale 0..K (default: the largest score seen)")
    group.add_argument("--levels", nargs="+", default=None, metavar="LEVEL",
                       help="ordered category labels, lowest first (letter grades: F D C B A)")


def is_score_model(name: str | None) -> bool:
    """Whether ``name`` is a graded-outcome model."""
    return name in SCORE_MODELS


def read_score_data(args: argparse.Namespace) -> Any:
    """Scores of ``args.data`` (a table or inspect_ai logs); the readers' rule is refused."""
    from evalbayes.io import read_scores, scores_from_inspect
    if getattr(args, "reader_threshold", None) is not None:
        raise CLIError("the log readers' success rule (scores >= T count as successes) makes "
                       "pass/fail counts for the c-of-n models; a graded model fits the scores")

    sources = list(args.data)
    fmt = getattr(args, "input_format", None)
    if fmt == "inspect" or all(Path(s).suffix in _LOG_SUFFIXES for s in sources):
        return scores_from_inspect(sources if len(sources) > 1 else sources[0],
                                   scorer=getattr(args, "reader_scorer", None),
                                   value_key=getattr(args, "reader_value_key", None),
                                   max_score=args.max_score, levels=args.levels)
    if len(sources) != 1:
        raise CLIError("graded scores: give one CSV table (or inspect_ai logs)")
    return read_scores(sources[0], score=args.score, grader=args.grader,
                       system=getattr(args, "reader_system_column", None) or "system",
                       task=getattr(args, "reader_task", None) or "task",
                       trial=getattr(args, "reader_trial", None),
                       max_score=args.max_score, levels=args.levels)


def _score_model(args: argparse.Namespace, settings: dict[str, Any]) -> Any:
    from evalbayes.models import get_model, model_from_config

    name = args.model or settings.get("model")
    return model_from_config({**settings, "model": name}) if settings else get_model(str(name))


def prior_check_scores(args: argparse.Namespace, settings: dict[str, Any], output: str) -> int:
    """``prior-check`` of a graded-outcome model: the prior's mean score and ``P(score >=
    t)`` of a new task per system beside the observed ones at the ``--threshold`` values
    (default: the model's, :meth:`ScoreModel.thresholds`)."""
    from evalbayes.cli._output import emit

    try:
        data = read_score_data(args)
        model = _score_model(args, settings)
    except ValueError as err:
        raise CLIError(str(err)) from None
    try:
        thresholds = model.thresholds(data, args.threshold)
    except ValueError as err:
        raise CLIError(f"--threshold: {err}") from None
    try:
        check = model.prior_predictive(data, thresholds=thresholds, draws=args.draws,
                                       seed=args.seed)
    except ValueError as err:
        raise CLIError(str(err)) from None
    emit(check.to_frame(), output, args.output, title=check.title())
    return 0


def run_scores(args: argparse.Namespace, settings: dict[str, Any],
               sampler: dict[str, Any]) -> int:
    """Fit a graded-outcome model, print its summary, write the draws."""
    from evalbayes.cli._output import check_output_path, emit
    from evalbayes.cli._sampler import sampler_options

    try:
        data = read_score_data(args)
    except ValueError as err:
        raise CLIError(str(err)) from None
    model = _score_model(args, settings)
    options = sampler_options(args, sampler, model)
    path = Path(args.output) if args.output else (
        Path("models") / "fits" / f"{Path(args.data[0]).name.split('.')[0]}-{model.name}.nc")
    check_output_path(path, args, create=True)
    warn(f"fitting {model.name} to {data!r} with {options['method']} "
         f"({options['chains']} chains x {options['draws']} draws)")
    try:
        posterior = model.fit(data, **options, progressbar=not args.quiet, check=False)
    except ValueError as err:
        raise CLIError(str(err)) from None
    posterior.save(path)
    emit(posterior.summary(), "table", None,
         title=f"{model.name}: mean score and P(score >= t) per system (population, 95 %)")
    warn(f"wrote {path}")
    diag = posterior.diagnostics(warn=False)
    if not diag.passed:
        warn(f"WARNING: {diag}")
        return 1 if args.strict else 0
    return 0


# --------------------------------------------------------------------------- saved score fits
def add_threshold_arg(parser: argparse.ArgumentParser) -> None:
    """``--threshold T ...``: the ``t`` of ``P(score >= t)`` for a graded-score fit."""
    from evalbayes.cli._types import finite

    parser.add_argument("--threshold", type=finite, nargs="+", default=None, metavar="T",
                        help="graded-score fits: the thresholds t of P(score >= t) (default "
                        "every level 1..K of an ordinal scale, 0.1..0.9 of partial credit)")


def refuse_thresholds(args: argparse.Namespace) -> None:
    """``--threshold`` given for a c-of-n fit: say it is for graded-score fits."""
    if getattr(args, "threshold", None) is not None:
        raise CLIError(f"--threshold applies to graded-score fits (P(score >= t)); {args.fit} "
                       "is a c-of-n fit: use --k for pass@k")


#: The flags of ``summary`` / ``compare`` that a graded-score fit has no use for: (unset
#: value, why).
_K_REASON = ("pass@k needs c-of-n counts; a graded-score fit gives P(score >= t): use "
             "--threshold")
_SCORE_REFUSED = {
    "k": (None, _K_REASON),
    "metric": (None, "pass@k / pass^k are c-of-n metrics; a graded-score fit compares the "
               "mean score and each P(score >= t)"),
    "rope": (None, "the region of practical equivalence is defined on pass@k; a graded-score "
             "comparison reports the difference and its interval"),
    "by": (None, "levels of a variable are compared on formula fits; a graded-score fit "
           "compares its systems"),
}


def refuse_for_scores(args: argparse.Namespace, flags: dict[str, tuple[Any, str]]) -> None:
    """A ``CLIError`` naming each given flag that has no meaning for a graded-score fit and
    why: ``flags`` maps an argparse destination to (its unset value, the reason)."""
    given = [f"--{dest.replace('_', '-')} ({why})" for dest, (unset, why) in flags.items()
             if getattr(args, dest, unset) != unset]
    if given:
        raise CLIError(f"{args.fit if hasattr(args, 'fit') else 'the fit'} is a graded-score "
                       "fit; these options do not apply to it: " + "; ".join(given))


def _thresholds(args: argparse.Namespace, posterior: Any) -> Any:
    try:
        return posterior.model.thresholds(posterior.data, args.threshold)
    except ValueError as err:
        raise CLIError(f"--threshold: {err}") from None


def summarize_scores(args: argparse.Namespace, posterior: Any, output: str) -> None:
    """``summary`` of a graded-score fit: the mean score and ``P(score >= t)`` per system
    (population estimand, ``--ci-prob`` interval, the observed value beside), then in a
    text table the parameters (cut points or intercept, effects, spreads) and the
    diagnostics."""
    from evalbayes.cli._output import emit

    refuse_for_scores(args, {key: _SCORE_REFUSED[key] for key in ("k",)})
    thresholds = _thresholds(args, posterior)
    table = posterior.summary(thresholds=thresholds, ci_prob=args.ci_prob)
    emit(table, output, args.output,
         title=(f"{posterior.label}\n{posterior.data!r}\nmean score and P(score >= t) per "
                f"system, a new task (population), {args.ci_prob:.0%} interval; observed: the "
                "raw share / mean"))
    if output == "table":
        params = posterior.parameters(ci_prob=args.ci_prob)
        params = params[~params["parameter"].str.startswith(("task_effect[",
                                                             "grader_system_effect["))]
        emit(params, output, None,
             title="parameters (logit scale; task and grader x system effects left out)")
        diag = (posterior.diagnostics(warn=False) if posterior.is_mcmc else
                "none needed (not MCMC)")
        print(f"diagnostics: {diag}")


def compare_scores(args: argparse.Namespace, posterior: Any, systems: list[str] | None,
                   output: str) -> None:
    """``compare`` of a graded-score fit: for each pair (or ``A B``), P(B > A) and B - A on
    the mean score and on each ``P(score >= t)`` (:meth:`ScorePosterior.compare`)."""
    import pandas as pd

    from evalbayes.cli._output import emit, write_text
    from evalbayes.report._format import fmt_p, fmt_signed, fmt_signed_interval

    refuse_for_scores(args, _SCORE_REFUSED)
    thresholds = _thresholds(args, posterior)
    names = posterior.data.systems
    if systems is not None:
        missing = [s for s in systems if s not in names]
        if missing:
            raise CLIError(f"system {missing[0]!r} is not in the fit; systems: {names}")
        pairs = [tuple(systems)]
    else:
        pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    try:
        frames = [posterior.compare(baseline=a, candidate=b, thresholds=thresholds,
                                    estimand=args.estimand, ci_prob=args.ci_prob)
                  for a, b in pairs]
    except ValueError as err:
        raise CLIError(str(err)) from None
    table = pd.concat(frames, ignore_index=True)
    estimand = args.estimand or "population"
    if output == "table":
        lines = [f"{posterior.label}: candidate B minus baseline A, estimand {estimand!r}, "
                 f"{args.ci_prob:.0%} interval"]
        for frame in frames:
            mean = frame.iloc[0]
            rows = frame.iloc[1:]
            tied = rows["P(tie)"] == 1  # equal in every draw (both 0): no P(B > A) to give
            rest = rows.loc[~tied, "P(candidate > baseline)"]
            line = (f"{mean['candidate']} vs {mean['baseline']}: P(B > A) of the mean score "
                    f"{fmt_p(mean['P(candidate > baseline)'])}, B - A "
                    f"{fmt_signed(mean['difference'])} "
                    f"{fmt_signed_interval(mean['lower'], mean['upper'])}")
            if len(rest):
                line += (f"; of P(score >= t) {fmt_p(rest.min())} to {fmt_p(rest.max())} over "
                         f"{len(rest)} thresholds")
            if tied.any():
                line += f"; tied in every draw at {', '.join(rows.loc[tied, 'quantity'])}"
            lines.append(line)
        write_text("\n".join(lines) + "\n", None)
    emit(table, output, args.output)
