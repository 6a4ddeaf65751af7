"""Section "How to read this": estimands, intervals, P(B > A), rope, MDE, pass@k vs pass^k;
and "Reproduce": the settings behind every number."""

from __future__ import annotations

import json

from evalbayes._version import __version__
from evalbayes.report._context import N_RESAMPLES, ReportContext
from evalbayes.report._document import Code, Definitions, Section, Strong, Table, paragraph

__all__ = ["REFERENCES", "guide_section", "reproduce_section"]

REFERENCES = (
    "Chen et al. (2021), Evaluating large language models trained on code, arXiv:2107.03374 "
    "(unbiased pass@k)",
    "Yao et al. (2024), tau-bench, arXiv:2406.12045 (pass^k)",
    "Miller (2024), Adding error bars to evals, arXiv:2411.00640 (clustered standard "
    "errors, paired differences, power)",
    "Bowyer et al. (2025), Position: don't use the CLT in LLM evals with fewer than a few "
    "hundred datapoints, arXiv:2503.01747",
    "Hariri et al. (2025), Don't pass@k: a Bayesian framework for LLM evaluation",
    "Gelman et al. (2013), Bayesian Data Analysis, 3rd ed. (hierarchical models)",
    "Kish (1965), Survey Sampling (the design effect)",
    "Wilson (1927), JASA 22(158) (the score interval)",
    "McNemar (1947), Psychometrika 12(2)",
    "Holm (1979), Scandinavian Journal of Statistics 6(2)",
    "Kruschke (2018), AMPPS 1(2) (the ROPE)",
    "Vehtari et al. (2021), Bayesian Analysis 16(2) (R-hat and ESS)",
)


def guide_section(ctx: ReportContext) -> Section:
    """The glossary."""
    pct = f"{ctx.ci_prob:.0%}"
    items = (
        ("Estimands: these tasks vs tasks like these", (
            "'These tasks' asks how well a system does on the tasks that were run; only trial "
            "noise is uncertain, so more trials per task narrow it. 'Tasks like these' asks how "
            "well it will do on new tasks from the same population; task sampling is "
            "uncertain too, and only more tasks narrow it (Miller 2024). The second is almost "
            "always the question; the report names the estimand of every number.",
        )),
        ("Intervals", (
            f"Posterior intervals are central {pct} credible intervals: given the model and the "
            f"data, the value lies inside with probability {ctx.ci_prob:g}. The Wilson interval "
            "treats every trial as independent; the task bootstrap resamples tasks and is the "
            "frequentist interval for tasks like these (it undercovers a little with few tasks: "
            "93 % for a nominal 95 % at 10 tasks in the simulation of notebook 03; Bowyer et al. "
            "2025).",
        )),
        ("P(B > A)", (
            "The posterior probability that B's pass rate is higher than A's, from the joint "
            "draws of both (paired: shared tasks cancel). It is not a p-value: 0.97 means B is "
            "ahead in 97 % of the posterior, whatever the size of the lead.",
        )),
        (f"ROPE ±{ctx.rope:g}", (
            "The region of practical equivalence: differences smaller than this are treated as "
            f"no difference. P(|B - A| < {ctx.rope:g}) is how likely the two are practically "
            "the same; a verdict of 'better by more than the rope' needs "
            f"P(B - A > {ctx.rope:g}) >= 0.95.",
        )),
        ("Minimum detectable effect (MDE)", (
            "The smallest true difference the paired test detects with 80 % power at this "
            "number of tasks. An inconclusive test with a difference below the MDE says the "
            "study was too small, not that the systems are equal (Miller 2024). McNemar's MDE "
            "is the same idea for each task's majority outcome.",
        )),
        ("pass@k vs pass^k", (
            "pass@k: at least one of k attempts succeeds (coverage; needs an oracle to pick the "
            "passing attempt). pass^k: all k succeed (reliability). The same system can have "
            "pass@5 near 1 and pass^5 near 0 (Yao et al. 2024). Heterogeneous tasks raise pass^k "
            "above p^k and lower pass@k below 1 - (1 - p)^k. The unbiased estimator of pass@k, ",
            Code("1 - C(n - c, k) / C(n, k)"),
            ", exists only for k <= n (Chen et al. 2021).",
        )),
        ("Holm", (
            "Comparing many pairs inflates false positives; Holm's step-down procedure keeps "
            "the chance of any false 'better' at 5 % across the pairs shown (Holm 1979).",
        )),
        ("Design effect", (
            "How many times the variance of the task-average pass rate exceeds the variance an "
            "episode-level analysis assumes: 1 + (n - 1)ρ. Its square root is the factor by "
            "which such an interval is too narrow (Kish 1965; Miller 2024).",
        )),
    )  # fmt: skip
    references = paragraph(Strong("References. "), "; ".join(REFERENCES) + ".")
    return Section("guide", "How to read this", (Definitions(items), references))


def reproduce_section(ctx: ReportContext, fitted_here: bool) -> Section:
    """Settings: versions, model, sampler, data hash, resamples, rope, seed."""
    posterior = ctx.posterior
    attrs = posterior.tree.attrs
    rows = [
        ["evalbayes", __version__],
        ["model", json.dumps(posterior.model.to_config(), sort_keys=True)],
        ["inference", posterior.label],
        ["sampler", json.dumps(posterior.sampler.to_dict(), sort_keys=True)],
        ["fit", "fitted for this report" if fitted_here else "read from a saved fit"],
        ["data hash", str(attrs.get("data_hash", "-"))],
        ["model config hash", str(attrs.get("config_hash", "-"))],
        ["k grid", ", ".join(map(str, ctx.ks))],
        ["intervals", f"{ctx.ci_prob:.0%}, equal-tailed (posterior), percentile (bootstrap)"],
        ["bootstrap and sign-flip resamples", f"{N_RESAMPLES:,}"],
        ["ROPE", f"±{ctx.rope:g}"],
        ["seed (bootstrap, tests, predictive check)", str(ctx.seed)],
    ]
    return Section(
        "reproduce",
        "Reproduce",
        (
            paragraph(
                "Every number above follows from the counts and these settings; ",
                Strong("the same inputs and seeds give the same report"),
                ". The frequentist numbers equal ",
                Code("evalbayes crosscheck DATA --seed SEED"),
                ".",
            ),
            Table.build("settings", ["setting", "value"], rows, caption="Settings"),
        ),
    )
