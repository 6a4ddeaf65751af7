"""The report of a graded-score fit (``write_report(scores, fit=score_fit)``): its sections and
tables, numbers equal to NumPy references from the draws, and refusals of mixed inputs."""

from __future__ import annotations

import numpy as np
import pytest
from score_fits import exceedance_reference, handmade_fit

from evalbayes.report import write_report
from evalbayes.report._scores import build_score_report


def _draws(fit):
    post = fit.posterior
    return {
        "cut": post["cutpoints"].transpose("chain", "draw", "cutpoint").values,
        "b": post["system_effect"].transpose("chain", "draw", "system").values,
        "u": post["task_effect"].transpose("chain", "draw", "task").values,
        "tau": post["task_sd"].values,
        "g": post["grader_effect"].transpose("chain", "draw", "grader").values,
        "h": post["grader_system_effect"].transpose("chain", "draw", "grader", "system").values,
    }


def test_sections_and_numbers():
    fit = handmade_fit()
    doc = build_score_report(fit)
    assert [s.key for s in doc.sections] == ["overview", "scores", "pairs", "parameters",
                                             "checks", "protocol", "reproduce"]
    tables = doc.tables()
    reference = exceedance_reference(_draws(fit), "tasks")
    cell = dict(zip(tables["scores-tasks"].columns, tables["scores-tasks"].rows[1],
                    strict=True))["P(score >= 2)"]
    draws = reference[:, :, 1, 1].ravel()  # system B, k = 2
    assert cell.startswith(f"{draws.mean():.3f} [{np.quantile(draws, 0.025):.3f}, "
                           f"{np.quantile(draws, 0.975):.3f}]")
    observed = fit.data.frame.query("system == 'B'")["score"].to_numpy()
    assert cell.endswith(f"(obs. {np.mean(observed >= 2):.3f})")
    pairs = tables["score-pairs-mean"].rows
    assert [(r[0], r[1]) for r in pairs] == [("A", "B"), ("A", "C"), ("B", "C")]
    assert len(doc.figures()) == 1 and doc.figures()[0].png.startswith(b"\x89PNG")
    assert tables["diagnostics"].rows[3][3] == "pass"  # no divergences


def test_write_report_takes_scores_and_their_fit(tmp_path):
    fit = handmade_fit()
    path = write_report(fit.data, fit=fit, output=tmp_path / "r.html")
    assert "evalbayes report: graded scores" in path.read_text()


def test_mixed_inputs_are_refused(tmp_path):
    from evalbayes.datasets import load

    fit = handmade_fit()
    with pytest.raises(ValueError, match="other data"):
        write_report(load("tinyagent"), fit=fit, output=tmp_path / "r.html")
    from evalbayes.io import ScoreData

    frame = fit.data.frame.copy()
    frame.loc[0, "score"] = (frame.loc[0, "score"] + 1) % 5
    changed = ScoreData.from_frame(frame, grader="grader", trial="trial", max_score=4)
    with pytest.raises(ValueError, match="other data"):
        write_report(changed, fit=fit, output=tmp_path / "r.html")
    with pytest.raises(TypeError, match="graded model"):
        from evalbayes.models import get_model

        write_report(fit.data, model=get_model("beta-binomial"), output=tmp_path / "x.html")
