"""``evalbayes fit DATA --formula ...`` on a tiny CSV, then summary, pass-at-k and compare on
the saved fit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalbayes.cli import main


def _run(args, capsys):
    code = main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(scope="module")
def tiny_csv(tmp_path_factory):
    rng = np.random.default_rng(3)
    rows = [{"system": f"{m}-{h}", "task": f"t{t}", "n": 4, "model": m, "harness": h,
             "c": int(rng.binomial(4, 0.3 + 0.3 * (h == "h1")))}
            for m in ("m0", "m1") for h in ("h0", "h1") for t in range(6)]
    path = tmp_path_factory.mktemp("formula") / "tiny.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


@pytest.mark.filterwarnings("ignore:.*convergence diagnostics")
def test_fit_with_a_formula_then_summary_pass_at_k_compare(tiny_csv, capsys, tmp_path):
    fit = tmp_path / "fit.nc"
    code, _, err = _run(["fit", str(tiny_csv), "--formula",
                         "c | trials(n) ~ harness + (1 | model) + (1 | task)",
                         "--draws", "200", "--tune", "200", "--chains", "2", "--seed", "1",
                         "-o", str(fit), "--quiet"], capsys)
    assert code in (0, 1) and f"wrote {fit}" in err  # 1: diagnostics of a short run
    code, out, _ = _run(["summary", str(fit), "--k", "1", "8"], capsys)
    assert "harness[h1]" in out and "1|task" in out  # the effects table
    assert "rests on the normal task effect" in out and '"population": new tasks' in out
    code, out, _ = _run(["pass-at-k", str(fit), "--k", "1", "--format", "csv"], capsys)
    frame = pd.read_csv(pd.io.common.StringIO(out))
    assert set(frame["system"]) == {"m0-h0", "m0-h1", "m1-h0", "m1-h1"}
    code, out, _ = _run(["compare", str(fit), "--format", "csv"], capsys)
    assert "m1-h1" in out


def test_model_formula_needs_a_formula_and_bad_formulas_exit_2(tiny_csv, capsys, tmp_path):
    code, _, err = _run(["fit", str(tiny_csv), "--model", "formula",
                         "-o", str(tmp_path / "x.nc")], capsys)
    assert code == 2 and "--model formula needs --formula" in err
    code, _, err = _run(["fit", str(tiny_csv), "--formula", "c ~ scaffold + (1|task)",
                         "-o", str(tmp_path / "x.nc")], capsys)
    assert code == 2 and "response must be" in err
    code, _, err = _run(["fit", str(tiny_csv), "--formula", "scaffold + (1|task)",
                         "-o", str(tmp_path / "x.nc")], capsys)
    assert code == 2 and "not a variable of the data" in err
    code, _, err = _run(["fit", str(tiny_csv), "--model", "rate-grid", "--formula", "harness",
                         "-o", str(tmp_path / "x.nc")], capsys)
    assert code == 2 and "--formula is for --model formula" in err
