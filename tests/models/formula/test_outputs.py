"""Every output on one small saved formula fit, through the API and the CLI: summary, compare
(systems, and levels of a system variable with ``--by``), gate, plan, report and each plot kind.
Each either works and shows the formula's estimand note, or exits 2 saying why it does not
apply. One fit (module scope) serves every test."""

from __future__ import annotations

import io
import json
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import integrate
from scipy.special import expit
from scipy.stats import norm

import evalbayes as eb
from evalbayes.cli import main
from evalbayes.decisions._plan import Population
from evalbayes.models.formula import FormulaModel

FORMULA = "c | trials(n) ~ harness + (1 | task)"
NOTE = '"population": new tasks like these (1|task drawn anew)'
pytestmark = pytest.mark.filterwarnings("ignore:.*convergence diagnostics")


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """(posterior, saved path): 2 models x 2 harnesses, 6 tasks, 4 trials per cell."""
    rng = np.random.default_rng(3)
    rows = [{"system": f"{m}-{h}", "task": f"t{t}", "n": 4, "model": m, "harness": h,
             "c": int(rng.binomial(4, 0.3 + 0.3 * (h == "h1")))}
            for m in ("m0", "m1") for h in ("h0", "h1") for t in range(6)]
    data = eb.EvalData.from_frame(pd.DataFrame(rows))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        post = FormulaModel(FORMULA).fit(data, draws=200, tune=200, chains=2, seed=1,
                                         check=False)
    path = tmp_path_factory.mktemp("formula-outputs") / "fit.nc"
    post.save(path)
    return post, path


def _run(args, capsys):
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_level_curve_is_the_mean_of_its_systems(fitted):
    post, _ = fitted
    levels = post.level_curve("harness", k=[1, 4], estimand="tasks")
    assert levels.dims == ("chain", "draw", "harness", "k")
    draws = post.curve("pass@k", [1, 4], estimand="tasks").transpose("chain", "draw", "system",
                                                                    "k").values
    harness = np.asarray(post.data.system_coords["harness"]).astype(str)
    for level in ("h0", "h1"):
        expected = draws[:, :, harness == level].mean(axis=2)
        np.testing.assert_allclose(levels.sel(harness=level).values, expected, rtol=1e-12)


def test_compare_levels_is_paired_over_draws(fitted):
    post, _ = fitted
    comparison = post.compare_levels("harness", ["h0", "h1"], k=1, estimand="population")
    row = comparison.to_frame().set_index(["harness", "baseline"]).loc[("h1", "h0")]
    draws = post.curve("pass@k", [1], estimand="population").sel(k=1)
    harness = np.asarray(post.data.system_coords["harness"]).astype(str)
    values = draws.transpose("chain", "draw", "system").values.reshape(-1, 4)
    diff = values[:, harness == "h1"].mean(axis=1) - values[:, harness == "h0"].mean(axis=1)
    assert row["p_superior"] == pytest.approx((diff > 0).mean())
    assert row["diff_mean"] == pytest.approx(diff.mean())
    assert "2 levels of harness" in comparison.summary()


def test_compare_levels_refuses_task_and_unknown_variables(fitted):
    post, _ = fitted
    with pytest.raises(ValueError, match="is a task variable"):
        post.compare_levels("task")
    with pytest.raises(ValueError, match=r"not a system coordinate.*harness"):
        post.compare_levels("scaffold")


def test_planner_design_prior_matches_the_logit_normal_moments(fitted):
    # independent reference: E[p] and E[p^2] of expit(m + sd z), z ~ N(0, 1), by quadrature
    post, _ = fitted
    pop = Population.from_posterior(post, "m0-h0", "m0-h1", correlation=0.0)
    beta = post.posterior["beta"].transpose("chain", "draw", "coef")
    sd = post.posterior["sd"].sel(term="1|task").values.ravel()
    intercept = beta.sel(coef="Intercept").values.ravel()
    shift = beta.sel(coef="harness[h1]").values.ravel()
    for i in (0, 57, 311):
        for j, m in enumerate((intercept[i], intercept[i] + shift[i])):
            s = sd[i]
            m1 = integrate.quad(lambda z, m=m, s=s: expit(m + s * z) * norm.pdf(z), -12, 12)[0]
            m2 = integrate.quad(lambda z, m=m, s=s: expit(m + s * z) ** 2 * norm.pdf(z),
                                -12, 12)[0]
            assert pop.draws[i, j] == pytest.approx(m1, abs=1e-6)
            assert pop.draws[i, 2 + j] == pytest.approx((m2 - m1**2) / (m1 * (1 - m1)),
                                                        abs=1e-5)


def test_cli_summary_and_compare_show_the_estimand_note(fitted, capsys):
    _, path = fitted
    code, out, _ = _run(["summary", path, "--k", "1"], capsys)
    assert code in (0, 1) and NOTE in out and "harness[h1]" in out
    code, out, err = _run(["compare", path, "m0-h0", "m0-h1", "--format", "csv"], capsys)
    assert code in (0, 1) and NOTE in err
    assert set(pd.read_csv(io.StringIO(out))["system"]) == {"m0-h1"}


def test_cli_compare_by_a_system_variable(fitted, capsys):
    _, path = fitted
    code, out, _ = _run(["compare", path, "h0", "h1", "--by", "harness"], capsys)
    assert code in (0, 1) and "levels of harness" in out and NOTE in out
    code, out, _ = _run(["compare", path, "h0", "h1", "--by", "harness", "--format", "csv"],
                        capsys)
    frame = pd.read_csv(io.StringIO(out))
    assert list(frame["harness"]) == ["h1"] and list(frame["baseline"]) == ["h0"]
    code, _, err = _run(["compare", path, "--by", "task"], capsys)
    assert code == 2 and "is a task variable" in err


def test_cli_compare_by_refuses_other_fits(tmp_path, capsys):
    data = eb.EvalData.from_arrays(np.full((2, 3), 4), np.array([[1, 2, 3], [2, 3, 4]]))
    fit = eb.BetaBinomialModel().fit(data, draws=50, chains=1, seed=0, check=False)
    path = tmp_path / "bb.nc"
    fit.save(path)
    code, _, err = _run(["compare", path, "--by", "harness"], capsys)
    assert code == 2 and "--by compares levels of a formula's variable" in err


def test_cli_gate_shows_the_note(fitted, capsys):
    _, path = fitted
    code, out, _ = _run(["gate", "--fit", path, "--baseline", "m0-h0", "--candidate", "m0-h1"],
                        capsys)
    assert code in (0, 1) and "note: formula model" in out and NOTE in out
    code, out, _ = _run(["gate", "--fit", path, "--baseline", "m0-h0", "--candidate", "m0-h1",
                         "--format", "json"], capsys)
    assert NOTE in json.loads(out)["note"]


def test_cli_plan_from_a_formula_fit(fitted, capsys):
    _, path = fitted
    code, out, _ = _run(["plan", "--fit", path, "--baseline", "m0-h0", "--candidate", "m0-h1",
                         "--sims", "20", "--tasks", "5", "--trials", "1"], capsys)
    assert code == 0 and "assurance" in out and NOTE in out and "pass^2" in out


def test_cli_report_has_the_formula_section(fitted, capsys, tmp_path):
    _, path = fitted
    out_md = tmp_path / "report.md"
    code, _, err = _run(["report", path, "--md", "-o", out_md], capsys)
    assert code in (0, 1) and "wrote" in err
    text = out_md.read_text()
    assert "Formula model: estimands and effects" in text
    assert "harness\\[h1\\]" in text and "1\\|task" in text
    assert "new tasks like these" in text


@pytest.mark.parametrize("kind", ["pass-at-k", "pass-hat-k", "comparison", "matrix", "ppc"])
def test_cli_plot_kinds_that_apply(fitted, capsys, tmp_path, kind):
    _, path = fitted
    png = tmp_path / f"{kind}.png"
    code, _, _ = _run(["plot", path, "--kind", kind, "-o", png], capsys)
    assert code in (0, 1) and png.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(("kind", "needs"), [("items", "needs an IRT fit"),
                                             ("wright", "needs an IRT fit"),
                                             ("rates", "needs a rate-grid fit")])
def test_cli_plot_kinds_that_do_not_apply_say_why(fitted, capsys, tmp_path, kind, needs):
    _, path = fitted
    code, _, err = _run(["plot", path, "--kind", kind, "-o", tmp_path / "x.png"], capsys)
    assert code == 2 and needs in err and "this is formula" in err
