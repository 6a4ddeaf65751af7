"""``evalbayes gate``: posterior ship / hold gate for CI, beside the frequentist gate.

Exit codes: 0 ship, 1 hold or don't ship, 2 bad input (raised as ValueError /
FileNotFoundError and turned into exit 2 by ``main``).
"""

from __future__ import annotations

import argparse

from evalbayes._core.names import ESTIMANDS, METRICS
from evalbayes.cli._common import (
    add_data_args,
    add_format_arg,
    add_seed_arg,
    output_format,
    read_data,
)
from evalbayes.cli._output import load_fit
from evalbayes.cli._plan import _write
from evalbayes.cli._types import (
    MAX_K,
    count,
    finite,
    non_negative,
    number,
    positive,
    probability,
)
from evalbayes.inference import MAX_TOTAL_DRAWS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_data_args(parser, optional=True)
    parser.add_argument("--baseline", required=True, help="system A (the current release)")
    parser.add_argument("--candidate", required=True, help="system B (the one to ship)")
    parser.add_argument("--fit", help="saved fit to gate on (default: exact conjugate "
                                      "per-task Beta posteriors of DATA, estimand tasks)")
    parser.add_argument("--estimand", choices=ESTIMANDS, default=None,
                        help="tasks (these tasks) or population (tasks like these; the "
                        "default with --fit where its model has it; tasks without --fit)")
    parser.add_argument("--metric", choices=METRICS, default="pass@k")
    parser.add_argument("-k", type=count(1, MAX_K), default=1, help="attempts (default 1)")
    parser.add_argument("--mode", choices=("non-inferiority", "superiority"),
                        default="non-inferiority")
    parser.add_argument("--margin", type=finite, default=0.0,
                        help="tolerated shortfall / least improvement (default 0)")
    parser.add_argument("--ship-prob", type=probability, default=0.95, metavar="PROB",
                        help="posterior probability needed to ship (default 0.95)")
    parser.add_argument("--max-loss", type=non_negative, default=0.005,
                        help="largest tolerated expected loss (default 0.005)")
    parser.add_argument("--lambda", dest="lam", type=positive, default=2.0,
                        help="frequentist gate: cost of a loss in wins (default 2)")
    parser.add_argument("--gate-alpha", type=probability, default=0.05)
    parser.add_argument("--tau", type=number(0, 1), default=0.10)
    parser.add_argument("--draws", type=count(1, MAX_TOTAL_DRAWS), default=4000,
                        help="posterior draws of the conjugate fit (default 4000)")
    add_seed_arg(parser, 0)
    add_format_arg(parser)


def run(args: argparse.Namespace) -> int:
    from evalbayes.decisions._gate import counts_gate, posterior_gate
    from evalbayes.frequentist import gate_counts, ship_gate

    output = output_format(args)

    if args.fit:
        fit = load_fit(args.fit)
        data = fit.data
    else:
        if not args.data:
            raise ValueError("give DATA (or --fit FIT)")
        if args.estimand == "population":
            raise ValueError("--estimand population needs --fit (a model of the task "
                             "population, e.g. beta-binomial partial pooling)")
        from evalbayes.models.beta_binomial._model import BetaBinomialModel

        data = read_data(args)
        data = data.subset(systems=[args.baseline, args.candidate])
        fit = BetaBinomialModel(pooling="none").fit(
            data, draws=max(args.draws // 2, 1), chains=2, seed=args.seed)
    res = posterior_gate(
        fit, baseline=args.baseline, candidate=args.candidate, metric=args.metric, k=args.k,
        estimand=args.estimand, mode=args.mode, margin=args.margin,
        threshold=args.ship_prob, max_loss=args.max_loss,
    )  # fmt: skip
    paired = data.paired(args.baseline, args.candidate)
    counts = gate_counts(paired.n_a, paired.c_a, paired.n_b, paired.c_b)
    freq = ship_gate(counts.wins, counts.losses, counts.solved, lam=args.lam,
                     alpha=args.gate_alpha, tau=args.tau)
    bayes_counts = counts_gate(counts.wins, counts.losses, counts.solved, lam=args.lam,
                               threshold=1 - args.gate_alpha, tau=args.tau)
    lines = [
        res.headline,
        f"  {res.info['metric']} k={res.info['k']}, estimand {res.info['estimand']}, "
        f"{res.mode}, margin {res.margin:g}: B - A = {res.diff_mean:+.4f} "
        f"[{res.diff_lower:+.4f}, {res.diff_upper:+.4f}] ({res.ci_prob:.0%}), "
        f"P = {res.p_ship:.4f} (MC s.e. {res.p_ship_se:.4f}), expected loss "
        f"{res.expected_loss:.4f}",
        f"  fit: {res.info['label']}",
        f"frequentist gate (sign test, lambda {args.lam:g}, alpha {args.gate_alpha:g}, tau "
        f"{args.tau:g}): {freq.headline}",
        f"Bayesian counts gate: {bayes_counts.decision} (P(net gain > 0) = "
        f"{bayes_counts.p_net_gain:.3f}, P(breakage <= tau) = {bayes_counts.p_breakage_ok:.3f})",
    ]
    model_note = getattr(fit, "model_note", None)  # a formula fit: what its estimands mean
    if model_note is not None:
        lines.insert(3, f"  note: {model_note(args.k)}")
    record = res.to_dict()
    if model_note is not None:
        record["note"] = model_note(args.k)
    record["frequentist_gate"] = {"decision": freq.decision, "headline": freq.headline,
                                  "wins": freq.wins, "losses": freq.losses,
                                  "solved": freq.solved, "p_value": freq.p_value}
    record["counts_gate"] = {"decision": bayes_counts.decision,
                             "p_net_gain": bayes_counts.p_net_gain,
                             "p_breakage_ok": bayes_counts.p_breakage_ok}
    import pandas as pd

    _write(output, args.output, "\n".join(lines), pd.DataFrame([res.to_dict()]), record)
    return res.exit_code
