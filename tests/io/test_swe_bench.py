"""SWE-bench reader: resolved lists read against a required instance universe."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalbayes.io import LogError, read, read_swe_bench, read_universe

UNIVERSE = ["astropy__astropy-1", "django__django-2", "django__django-10", "sympy__sympy-3"]


def _results(folder: Path, resolved: list[str], key: str = "resolved") -> Path:
    path = folder / "results" / "results.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"no_generation": [], key: resolved, "applied": resolved}))
    return path


def test_universe_is_required(tmp_path):
    path = _results(tmp_path / "sysA", ["django__django-2"])
    with pytest.raises(ValueError, match="pass universe="):
        read_swe_bench(path)
    with pytest.raises(ValueError, match="pass universe="):
        read(path)  # auto-detected as SWE-bench, same rule


def test_counts_against_the_universe(tmp_path):
    a = _results(tmp_path / "evaluation" / "verified" / "sysA", ["django__django-2"])
    b = _results(tmp_path / "evaluation" / "verified" / "sysB", UNIVERSE[:3], key="resolved_ids")
    data = read_swe_bench([a, b], universe=UNIVERSE)
    assert data.systems == ["sysA", "sysB"]  # the directory above results/
    assert sorted(data.tasks) == sorted(UNIVERSE)
    assert (data.n.values == 1).all()
    resolved = {"sysA": {"django__django-2"}, "sysB": set(UNIVERSE[:3])}
    for system in data.systems:
        for task in data.tasks:
            assert int(data.c.sel(system=system, task=task)) == int(task in resolved[system])


def test_universe_from_files(tmp_path):
    txt = tmp_path / "ids.txt"
    txt.write_text("\n".join(UNIVERSE) + "\n")
    js = tmp_path / "ids.json"
    js.write_text(json.dumps(UNIVERSE))
    csv = tmp_path / "ids.csv"
    csv.write_text("instance_id,repo\n" + "".join(f"{i},x\n" for i in UNIVERSE))
    for source in (txt, js, csv):
        assert read_universe(source) == UNIVERSE
    path = _results(tmp_path / "sysA", ["sympy__sympy-3"])
    assert read(path, universe=txt).equals(read_swe_bench(path, universe=UNIVERSE))


def test_resolved_outside_universe_raises(tmp_path):
    path = _results(tmp_path / "sysA", ["django__django-2", "flask__flask-9"])
    with pytest.raises(LogError, match=r"resolved\[1\]: resolved instance 'flask__flask-9' is not"):
        read_swe_bench(path, universe=UNIVERSE)


def test_duplicate_resolved_id(tmp_path):
    path = _results(tmp_path / "sysA", ["django__django-2", "django__django-2"])
    with pytest.raises(LogError, match=r"resolved\[1\]: duplicate instance id"):
        read_swe_bench(path, universe=UNIVERSE)


def test_duplicate_universe_id():
    with pytest.raises(ValueError, match="lists instance 'a' twice"):
        read_universe(["a", "b", "a"])


def test_missing_resolved_list(tmp_path):
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"applied": []}))
    with pytest.raises(LogError, match="no 'resolved' or 'resolved_ids' list"):
        read_swe_bench(path, universe=UNIVERSE)
