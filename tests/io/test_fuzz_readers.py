"""Fuzzing the readers and the EvalData builders (hypothesis).

Arbitrary tables, encodings, delimiters, truncations and byte flips go into the readers; each
run must end in a result that equals an independent reading of the same bytes (the csv and
json modules of the standard library, with the input rules of ``docs/io.md``) or in a
``ValueError`` whose message names the file -- never another exception type, a hang or a
silently different count. The default run is bounded (a few dozen examples per property);
``-m slow`` runs many more (hypothesis profile ``fuzz-slow``).

Byte flips avoid the quote character: where quoting is malformed, the C parser of pandas and
Python's csv module legitimately disagree, so the reference reading is not defined there.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalbayes import EvalData
from evalbayes.data import MAX_COUNT
from evalbayes.io import read
from paths import FIXTURES

settings.register_profile(
    "fuzz", max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "fuzz-slow", max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
FAST = settings.get_profile("fuzz")
SLOW = settings.get_profile("fuzz-slow")
DATA = FIXTURES

LABEL = st.text(
    alphabet=st.characters(
        codec="utf-8", exclude_categories=("Cs", "Cc", "Zl", "Zp"), exclude_characters='",;\t|'
    ),
    min_size=1,
    max_size=8,
).filter(lambda s: s.strip() == s and s.strip() != "")


@st.composite
def counts_tables(draw: st.DrawFn) -> pd.DataFrame:
    systems = draw(st.lists(LABEL, min_size=1, max_size=3, unique=True))
    tasks = draw(st.lists(LABEL, min_size=2, max_size=5, unique=True))
    rows = []
    for s in systems:
        for t in tasks:
            n = draw(st.integers(1, 10**6) | st.sampled_from([1, 5, MAX_COUNT]))
            c = draw(st.integers(0, n))
            rows.append({"system": s, "task": t, "n": n, "c": c})
    return pd.DataFrame(rows)


def _ok(err: ValueError, path: Path) -> None:
    assert path.name in str(err), f"the message does not name the file: {err}"


# ---------------------------------------------------------------------------- reference readers
_INT = re.compile(r"^[+-]?\d+$")


def _count(text: str) -> int:
    text = text.strip()
    if _INT.match(text):
        value = int(text)
    else:
        number = float(text)  # ValueError: not a number
        if not math.isfinite(number) or not number.is_integer() or abs(number) >= MAX_COUNT:
            raise ValueError(text)
        value = int(number)
    if value < 0 or value > MAX_COUNT:
        raise ValueError(text)
    return value


def _reference(rows: list[tuple[str, str, object, object]]) -> dict[tuple[str, str], tuple]:
    out: dict[tuple[str, str], tuple[int, int]] = {}
    for s, t, n, c in rows:
        if not s.strip() or not t.strip() or (s, t) in out:
            raise ValueError("label")
        n_i, c_i = _count(n) if isinstance(n, str) else n, _count(c) if isinstance(c, str) else c
        if c_i > n_i:
            raise ValueError("c > n")
        out[(s, t)] = (n_i, c_i)
    if not out or not any(n for n, _ in out.values()):
        raise ValueError("empty")
    return out


def _reference_csv(raw: bytes, sep: str) -> dict:
    text = raw.decode("utf-8-sig")  # UnicodeDecodeError is a ValueError
    lines = list(csv.reader(io.StringIO(text, newline=""), delimiter=sep, strict=True))
    header = [h.strip() for h in lines[0]]
    body = [r for r in lines[1:] if r]
    if any(len(r) != 4 for r in body):
        raise ValueError("fields")
    if header == ["system", "task", "n", "c"]:
        return _reference([(r[0], r[1], r[2], r[3]) for r in body])
    if header[1:] == ["task", "n", "c"] and header[0] not in ("task", "n", "c", "id", ""):
        # no system column: a single-system file named by its stem, the first column metadata
        return _reference([("t", r[1], r[2], r[3]) for r in body])
    raise ValueError("header")


def _as_dict(data: EvalData) -> dict:
    frame = data.to_frame()
    return {(r.system, r.task): (int(r.n), int(r.c)) for r in frame.itertuples()}


def _read_quietly(path: Path, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return read(path, **options)


def _check_bytes(raw: bytes, name: str, reference) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(raw)
        try:
            expected = reference(raw)
        except (ValueError, IndexError, csv.Error, UnicodeDecodeError):
            expected = None
        try:
            got = _read_quietly(path, format="counts")
        except ValueError as err:
            _ok(err, path)
            return
        assert expected is not None, f"accepted input the rules refuse: {raw!r}"
        assert _as_dict(got) == expected


# ---------------------------------------------------------------------------- mutations
@st.composite
def flipped(draw: st.DrawFn, raw: bytes) -> bytes:
    data = bytearray(raw)
    for _ in range(draw(st.integers(1, 4))):
        pos = draw(st.integers(0, len(data) - 1))
        byte = draw(st.integers(0, 255).filter(lambda b: b != ord('"')))
        data[pos] = byte
    return bytes(data)


def _csv_bytes(frame: pd.DataFrame, sep: str) -> bytes:
    return frame.to_csv(index=False, sep=sep).encode()


@pytest.mark.parametrize("sep", [",", ";", "\t"])
@FAST
@given(frame=counts_tables(), data=st.data())
def test_csv_byte_flips_and_truncations(sep, frame, data):
    raw = _csv_bytes(frame, sep)
    mutated = data.draw(
        st.one_of(flipped(raw), st.integers(0, len(raw)).map(lambda k: raw[:k]), st.just(raw))
    )
    _check_bytes(mutated, "t.csv", lambda b: _reference_csv(b, sep))


@FAST
@given(frame=counts_tables())
def test_clean_tables_round_trip_in_every_container(frame):
    expected = EvalData.from_frame(frame)
    with tempfile.TemporaryDirectory() as folder:
        for name in ("t.csv", "t.tsv", "t.csv.gz", "t.parquet", "t.jsonl"):
            path = Path(folder) / name
            if name.endswith(".parquet"):
                frame.to_parquet(path)
            elif name.endswith(".jsonl"):
                frame.to_json(path, orient="records", lines=True, force_ascii=False)
            else:
                frame.to_csv(path, index=False, sep="\t" if ".tsv" in name else ",")
            assert _read_quietly(path).equals(expected), name


@FAST
@given(frame=counts_tables(), encoding=st.sampled_from(["utf-16", "latin-1", "cp1252"]))
def test_other_encodings(frame, encoding):
    try:
        raw = frame.to_csv(index=False).encode(encoding)
    except UnicodeEncodeError:
        return
    _check_bytes(raw, "t.csv", lambda b: _reference_csv(b, ","))


def _reference_jsonl(raw: bytes) -> dict:
    rows = []
    for line in raw.decode("utf-8-sig").splitlines():
        if not line.strip():
            continue
        obj = json.loads(line)
        if not isinstance(obj, dict) or set(obj) != {"system", "task", "n", "c"}:
            raise ValueError("keys")
        for key in ("n", "c"):
            v = obj[key]
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ValueError("type")
            if isinstance(v, float) and (
                not math.isfinite(v) or not v.is_integer() or v >= MAX_COUNT
            ):
                raise ValueError("float")
        if not all(isinstance(obj[k], str) for k in ("system", "task")):
            raise ValueError("label type")
        rows.append((obj["system"], obj["task"], int(obj["n"]), int(obj["c"])))
    for _, _, n, c in rows:
        if n < 0 or c < 0 or n > MAX_COUNT or c > MAX_COUNT:
            raise ValueError("range")
    return _reference(rows)


@FAST
@given(frame=counts_tables(), data=st.data())
def test_jsonl_byte_flips_and_truncations(frame, data):
    raw = frame.to_json(orient="records", lines=True, force_ascii=False).encode()
    mutated = data.draw(
        st.one_of(flipped(raw), st.integers(0, len(raw)).map(lambda k: raw[:k]), st.just(raw))
    )
    _check_bytes(mutated, "t.jsonl", _reference_jsonl)


@FAST
@given(frame=counts_tables(), cut=st.floats(0.0, 0.99))
def test_truncated_parquet(frame, cut):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.parquet"
        frame.to_parquet(path)
        raw = path.read_bytes()
        path.write_bytes(raw[: int(len(raw) * cut)])
        with pytest.raises(ValueError) as info:
            _read_quietly(path)
        _ok(info.value, path)


@FAST
@given(
    values=st.lists(
        st.one_of(
            st.integers(-(2**70), 2**70),
            st.floats(allow_nan=True, allow_infinity=True),
            st.booleans(),
            st.text(max_size=5),
            st.none(),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_from_frame_with_arbitrary_count_values(values):
    frame = pd.DataFrame(
        {
            "system": ["A"] * len(values),
            "task": [f"t{i}" for i in range(len(values))],
            "n": pd.Series(values, dtype=object),
            "c": [0] * len(values),
        }
    )
    try:
        data = EvalData.from_frame(frame)
    except ValueError:
        return
    for value, n in zip(values, data.n.values[0], strict=True):
        assert not isinstance(value, (bool, str)) and value is not None
        assert float(value) == n and 0 <= n <= MAX_COUNT


def _log_bytes() -> list[tuple[str, bytes]]:
    return [
        ("log.json", (DATA / "inspect_ai" / "popularity_json_format_epochs1.json").read_bytes()),
        (
            "per_instance_stats.json",
            (DATA / "helm" / "mmlu_philosophy_gpt2_per_instance_stats.json").read_bytes()[:20000],
        ),
    ]


@FAST
@given(data=st.data(), which=st.sampled_from([0, 1]))
def test_json_logs_byte_flips(data, which):
    name, raw = _log_bytes()[which]
    mutated = data.draw(st.one_of(flipped(raw), st.integers(0, len(raw)).map(lambda k: raw[:k])))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(mutated)
        try:
            _read_quietly(path)
        except ValueError as err:
            _ok(err, path)


@FAST
@given(data=st.data())
def test_eval_archive_byte_flips(data):
    raw = (DATA / "inspect_ai" / "log_streaming_epochs2.eval").read_bytes()
    mutated = data.draw(st.one_of(flipped(raw), st.integers(0, len(raw)).map(lambda k: raw[:k])))
    clean = _read_quietly(DATA / "inspect_ai" / "log_streaming_epochs2.eval")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "a.eval"
        path.write_bytes(mutated)
        try:
            got = _read_quietly(path)
        except ValueError as err:
            _ok(err, path)
            return
        # zip members carry CRCs: a flip that reads without error did not touch the data
        assert np.array_equal(got.n.values, clean.n.values)
        assert np.array_equal(got.c.values, clean.c.values)


# ---------------------------------------------------------------------------- the long run
@pytest.mark.slow
@pytest.mark.parametrize(
    "test",
    [
        test_csv_byte_flips_and_truncations,
        test_jsonl_byte_flips_and_truncations,
        test_from_frame_with_arbitrary_count_values,
        test_json_logs_byte_flips,
        test_eval_archive_byte_flips,
    ],
    ids=lambda t: t.__name__,
)
def test_long_fuzz(test):
    inner = test.hypothesis.inner_test
    args = {",": ","} if test is test_csv_byte_flips_and_truncations else {}
    run = SLOW(given(**test.hypothesis._given_kwargs)(inner))
    if args:
        for sep in (",", ";", "\t"):
            run(sep)
    else:
        run()
