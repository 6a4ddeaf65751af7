"""The plain text table writes what pandas' ``to_string(index=False, float_format=...)``
writes, or hands back to pandas."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalbayes.cli._text_table import plain_text_table


def _fmt(v: float) -> str:
    return f"{v:.4f}"


def _random_frame(seed: int, rows: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    names = ["a", "system_with_a_long_name_" * 3, "ß-ünïcode", "x y", "-7"]
    floats = rng.normal(0, 10.0 ** rng.integers(-3, 4), rows)
    floats[rng.random(rows) < 0.2] = np.nan
    floats[rng.random(rows) < 0.05] = -0.0
    floats[rng.random(rows) < 0.02] = np.inf * rng.choice([-1, 1])
    text = pd.array([names[i] for i in rng.integers(0, len(names), rows)], dtype="str")
    return pd.DataFrame({
        "system": text,
        "k": rng.integers(-5, 2000, rows),
        "mean": floats,
        "flag": rng.random(rows) < 0.5,
        "n": rng.integers(0, 3, rows).astype(np.uint8),
        "wide_header_name": rng.random(rows),
    })


@pytest.mark.parametrize("seed", range(6))
def test_same_text_as_pandas(seed):
    frame = _random_frame(seed, rows=[1, 2, 7, 50, 300, 1000][seed])
    assert plain_text_table(frame, 4) == frame.to_string(index=False, float_format=_fmt)


def test_same_text_as_pandas_with_missing_text_and_a_column_subset():
    frame = _random_frame(9, rows=40)
    frame.loc[3, "system"] = np.nan
    for columns in (["system"], ["k"], ["mean", "flag"], list(frame.columns)):
        part = frame[columns]
        assert plain_text_table(part, 4) == part.to_string(index=False, float_format=_fmt)


@pytest.mark.parametrize("frame", [
    pd.DataFrame({"a": pd.Series(["x\ty", "z"], dtype="str")}),  # pandas escapes the tab
    pd.DataFrame({"a": pd.Series([None, "z"], dtype=object)}),  # object column
    pd.DataFrame({"a": pd.Categorical(["x", "y"])}),
    pd.DataFrame({"t": pd.to_datetime(["2020-01-01", "2021-01-01"])}),
    pd.DataFrame({"a": [1.0, 2.0]}).iloc[:0],
    pd.DataFrame({0: [1.0, 2.0]}),
])
def test_other_frames_go_back_to_pandas(frame):
    assert plain_text_table(frame, 4) is None
