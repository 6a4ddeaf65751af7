"""Tests of evalbayes.report: sections, numbers against the API and the seeds, escaping,
the Markdown variant, the protocol file, and bad input.

The TinyAgent counts are those of seed 000 ch. 17.7 (64 episodes per task, RL base and two
GRPO checkpoints); the printed numbers used as independent references are named with their
section.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

import evalbayes as eb
from evalbayes.frequentist.crosscheck import crosscheck
from evalbayes.models import default_model
from evalbayes.report import build_report, markdown_path, read_meta, write_report
from evalbayes.report._document import Callout, Figure, Section, Table
from evalbayes.report._markdown import escape_markdown
from evalbayes.report._pairs import bayes_verdict

DRAWS = 300
SECTIONS = ("data", "systems", "curves", "comparisons", "items", "checks", "prior-check",
            "protocol", "guide", "reproduce")  # fmt: skip
TABLES = ("data-summary", "counts", "per-system", "pass-at-k", "pairs", "pairs-bayes",
          "pairs-frequentist", "p-superior-by-k", "diagnostics", "diagnostics-parameters",
          "ppc", "prior-check", "settings")  # fmt: skip
FIGURES = ("pass-at-k", "pass-hat-k", "superiority-matrix", "comparison", "ppc")
EVIL = "<script>alert(1)</script>"
EVIL_TASK = '"><img src=x onerror=alert(2)>'


class _Tables(HTMLParser):
    """Collect every <table id=...> as rows of cell texts (header row first)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self._id: str | None = None
        self._row: list[str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self._id = dict(attrs).get("id")
            self.tables[self._id] = []
        elif tag == "tr" and self._id is not None:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append("".join(self._cell))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.tables[self._id].append(self._row)
            self._row = None
        elif tag == "table":
            self._id = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def parse_tables(html: str) -> dict[str, list[dict[str, str]]]:
    """Tables by id, each as a list of {header: cell} rows; a collapsed table (its first
    rows, then the whole table as ``{id}-all`` under "show all") is read whole."""
    parser = _Tables()
    parser.feed(html)
    tables = {
        key: [dict(zip(rows[0], row, strict=True)) for row in rows[1:]]
        for key, rows in parser.tables.items()
    }
    for key in [k for k in tables if k.endswith("-all") and k[:-4] in tables]:
        tables[key[:-4]] = tables.pop(key)
    return tables


@pytest.fixture(scope="module")
def data():
    return eb.datasets.load("tinyagent", experiment="sec17.7")


@pytest.fixture(scope="module")
def fit(data):
    return eb.BetaBinomialModel().fit(data, method="nutpie", draws=DRAWS, seed=0, check=False)


@pytest.fixture(scope="module")
def html(data, fit, tmp_path_factory):
    path = write_report(data, fit=fit, output=tmp_path_factory.mktemp("r") / "report.html")
    return path.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def tables(html):
    return parse_tables(html)


# --------------------------------------------------------------------------- structure
def test_every_section_table_and_figure_is_present(html):
    for key in SECTIONS:
        assert f'<section id="{key}">' in html, key
    for key in TABLES:
        assert f'<table id="{key}">' in html, key
    for name in FIGURES:
        assert f'<figure id="fig-{name}"><img src="data:image/png;base64,' in html, name
    assert len(re.findall(r'<section id="', html)) == len(SECTIONS)
    # no item model was fitted: the section says how to get one
    assert "No item model was fitted" in html


def test_report_is_self_contained_and_script_free(html):
    assert "<script" not in html.lower()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//|file:)""", html)
    assert "http-equiv=\"Content-Security-Policy\"" in html
    assert "default-src 'none'" in html
    for src in re.findall(r'<img src="([^"]+)"', html):
        assert src.startswith("data:image/png;base64,")


def test_images_are_valid_pngs(data, fit):
    document = build_report(data, fit, seed=0)
    figures = document.figures()
    assert [f.name for f in figures] == list(FIGURES)
    for figure in figures:
        assert figure.png.startswith(b"\x89PNG\r\n\x1a\n")
        width, height = np.frombuffer(figure.png[16:24], dtype=">u4")
        assert width > 200 and height > 100


def test_protocol_not_stated_is_said_plainly(html):
    assert "The harness and protocol were not stated" in html
    assert "it is an anecdote" in html


# --------------------------------------------------------------------------- numbers
def test_per_system_numbers_equal_the_api(data, fit, tables):
    rows = {row["system"]: row for row in tables["per-system"]}
    check = crosscheck(data, seed=0)
    posterior = fit.summary(k=1, estimands=("tasks", "population"))
    assert set(rows) == set(data.systems)
    for s in check.systems:
        row = rows[s.system]
        assert row["pass@1 (unbiased, task average)"] == f"{s.pass1_mean:.3f}"
        assert row["Wilson 95% (pooled trials)"] == (
            f"[{s.wilson.lower:.3f}, {s.wilson.upper:.3f}]"
        )
        assert row["task bootstrap 95%"] == (
            f"[{s.task_bootstrap.lower:.3f}, {s.task_bootstrap.upper:.3f}]"
        )
        for estimand, label in (("tasks", "these tasks"), ("population", "tasks like these")):
            ref = posterior[(posterior["system"] == s.system) & (posterior["estimand"] == estimand)]
            assert row[f"posterior mean: {label}"] == f"{float(ref['mean'].iloc[0]):.3f}"
            assert row[f"95% interval: {label}"] == (
                f"[{float(ref['lower'].iloc[0]):.3f}, {float(ref['upper'].iloc[0]):.3f}]"
            )


def test_pass_at_k_table_reproduces_seed_000_section_17_7(tables):
    """Seed 000 ch. 17.7: unbiased pass@32 is 0.998 for the RL base agent and 0.988 for the
    80-step checkpoint (the crossing); pass@16 0.941 vs 0.958; pass@1 leads by 0.70.
    tinyagent_README (seed 003 table): RL base 0.150 0.279 0.484 0.742 0.941 0.998."""
    cell = {(r["system"], int(r["k"].split()[0])): r["pass@k unbiased"]
            for r in tables["pass-at-k"]}
    assert [cell["RL base", k] for k in (1, 2, 4, 8, 16, 32)] == [
        "0.150", "0.279", "0.484", "0.742", "0.941", "0.998"
    ]  # fmt: skip
    assert cell["GRPO 80", 32] == "0.988"
    assert cell["GRPO 80", 16] == "0.958"
    assert cell["RL base", 128] == "-"  # k > n = 64: no unbiased estimator
    lead = float(cell["GRPO 80", 1]) - float(cell["RL base", 1])
    assert round(lead, 2) == 0.70


def test_pass_at_k_table_marks_k_beyond_the_trials_run(data, tables):
    n_max = {s: int(v) for s, v in zip(data.systems, data.n.max(dim="task").values,
                                           strict=True)}
    rows = tables["pass-at-k"]
    assert rows
    for row in rows:
        k = int(row["k"].split()[0])
        assert row["k"].endswith("(extrapolated)") == (k > n_max[row["system"]]), row["k"]
        # the unbiased estimator exists exactly where the curve is not extrapolated
        assert (row["pass@k unbiased"] == "-") == (k > n_max[row["system"]])


def test_pairs_equal_crosscheck_and_holm(data, fit, tables):
    rows = tables["pairs"]
    assert len(rows) == 3  # three systems: every pair
    sign_flip = []
    for row in rows:
        b, a = row["B"], row["A"]
        ref = crosscheck(data, compare=(a, b), seed=0).comparison
        assert row["paired B - A [95% bootstrap]"] == (
            f"{ref.difference:+.3f} [{ref.interval.lower:+.3f}, {ref.interval.upper:+.3f}]"
        )
        assert row["sign-flip p"] == f"{ref.sign_flip.p_value:.4f}"
        assert row["McNemar p"] == f"{ref.mcnemar.p_value:.4f}"
        sign_flip.append(ref.sign_flip.p_value)
    # Holm across the pairs shown, against statsmodels
    _, adjusted, _, _ = multipletests(sign_flip, alpha=0.05, method="holm")
    assert [row["Holm p"] for row in rows] == [f"{p:.4f}" for p in adjusted]
    # Bayesian P(B > A) equals evalbayes.compare
    matrix = eb.compare(fit, k=1).matrix()
    for row in rows:
        assert row["P(B > A)"] == f"{matrix.loc[row['B'], row['A']]:.4f}"


def test_pairs_are_oriented_b_higher_and_holm_is_at_least_raw(tables):
    systems = {r["system"]: float(r["posterior mean: these tasks"]) for r in tables["per-system"]}
    for row in tables["pairs"]:
        assert systems[row["B"]] >= systems[row["A"]]
        assert float(row["Holm p"]) >= float(row["sign-flip p"])


def test_seed_000_design_effect_in_the_data_section():
    """Seed 000 ch. 17.3 on the sec17.1 counts: rho = 0.63 and design effect 20 for the
    trained agent, rho ~ 0.01 for the base agent."""
    data = eb.datasets.load("tinyagent", experiment="sec17.1")
    from evalbayes.report._context import ReportContext, k_grid
    from evalbayes.report._overview import overview_section

    ctx = ReportContext(data=data, posterior=None, crosscheck=crosscheck(data, seed=0),
                        ks=k_grid(data), curves={}, seed=0)  # fmt: skip
    section = overview_section(ctx)
    table = next(b for b in section.blocks if isinstance(b, Table) and b.key == "data-summary")
    rows = {row[0]: row for row in table.rows}
    rho_col = table.columns.index("ρ (intra-task)")
    deff_col = table.columns.index("design effect")
    assert rows["GRPO 80"][rho_col] == "0.63"
    assert round(float(rows["GRPO 80"][deff_col])) == 20
    assert abs(float(rows["RL base"][rho_col])) <= 0.02
    assert any(isinstance(b, Callout) and b.title.startswith("Small suite") for b in section.blocks)


def test_fitting_inside_write_report_uses_draws_and_seed(data, tmp_path):
    path = write_report(data, output=tmp_path / "fitted.html", draws=DRAWS, seed=0)
    fitted = parse_tables(path.read_text(encoding="utf-8"))
    own = default_model(data).fit(data, draws=DRAWS, seed=0)  # the default model and method
    expected = write_report(data, fit=own, output=tmp_path / "own.html")
    assert fitted["per-system"] == parse_tables(expected.read_text(encoding="utf-8"))["per-system"]
    settings = {r["setting"]: r["value"] for r in fitted["settings"]}
    assert json.loads(settings["sampler"])["draws"] == DRAWS
    assert settings["fit"] == "fitted for this report"


# --------------------------------------------------------------------------- escaping
@pytest.fixture(scope="module")
def evil_data(data):
    """TinyAgent with hostile names (same shape, so the compiled model is reused)."""
    frame = data.to_frame()[["system", "task", "n", "c"]]
    frame["system"] = frame["system"].replace(
        {"RL base": EVIL, "GRPO 20": "pipe | star * $x$ [a](b)"}
    )
    frame["task"] = frame["task"].replace({"zero/speed": EVIL_TASK})
    return eb.EvalData.from_frame(frame)


@pytest.fixture(scope="module")
def evil_fit(evil_data):
    return eb.BetaBinomialModel().fit(evil_data, draws=DRAWS, seed=0, check=False)


@pytest.fixture(scope="module")
def evil_meta(tmp_path_factory):
    path = tmp_path_factory.mktemp("meta") / "protocol.toml"
    path.write_text('harness = "<b>bold</b> & <script>x()</script>"\n', encoding="utf-8")
    return path


def test_html_escapes_every_user_string(evil_data, evil_fit, evil_meta, tmp_path):
    path = write_report(evil_data, fit=evil_fit, output=tmp_path / "evil.html", meta=evil_meta)
    text = path.read_text(encoding="utf-8")
    assert "<script" not in text.lower()
    assert "<img src=x" not in text
    assert "<b>bold</b>" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "&quot;&gt;&lt;img src=x onerror=alert(2)&gt;" in text
    assert "&lt;b&gt;bold&lt;/b&gt; &amp; &lt;script&gt;x()&lt;/script&gt;" in text
    rows = {r["system"] for r in parse_tables(text)["per-system"]}
    assert EVIL in rows  # the parser un-escapes: the name survives intact


def test_markdown_escapes_every_user_string(evil_data, evil_fit, evil_meta, tmp_path):
    path = write_report(evil_data, fit=evil_fit, output=tmp_path / "evil.html", meta=evil_meta,
                        markdown=True)  # fmt: skip
    text = path.read_text(encoding="utf-8")
    assert "<script" not in text.lower()
    assert "<img" not in text
    assert "&lt;script&gt;alert\\(1\\)&lt;/script&gt;" in text
    assert "pipe \\| star \\* \\$x\\$ \\[a\\]\\(b\\)" in text
    # every row of every table has as many unescaped pipes as its header: no extra column
    blocks, current = [], []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            current.append(len(re.findall(r"(?<!\\)\|", line)))
        elif current:
            blocks.append(current)
            current = []
    assert blocks and all(len(set(block)) == 1 for block in blocks)
    assert any("pipe" in line for line in text.splitlines() if line.startswith("|"))


def test_rendered_markdown_keeps_names_as_text(evil_data, evil_fit, evil_meta, tmp_path):
    """Render the Markdown with a CommonMark + tables parser: the hostile names come out as
    text (entities), never as tags, and every table keeps its column count."""
    markdown_it = pytest.importorskip("markdown_it")
    path = write_report(evil_data, fit=evil_fit, output=tmp_path / "evil.md", meta=evil_meta,
                        markdown=True)  # fmt: skip
    rendered = markdown_it.MarkdownIt("commonmark").enable("table").render(path.read_text())
    assert "<script" not in rendered and "<img src=x" not in rendered
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in rendered
    assert "pipe | star * $x$ [a](b)" in rendered
    numbered = iter(range(1000))
    parser = _Tables()
    parser.feed(re.sub("<table>", lambda _: f'<table id="t{next(numbered)}">', rendered))
    assert len(parser.tables) >= 10
    for rows in parser.tables.values():
        assert len({len(row) for row in rows}) == 1


def test_escape_markdown_rules():
    assert escape_markdown("a|b") == "a\\|b"
    assert escape_markdown("<x> & y") == "&lt;x&gt; &amp; y"
    assert escape_markdown("*_`[]()#!") == "\\*\\_\\`\\[\\]\\(\\)\\#\\!"
    assert escape_markdown("two\nlines") == "two lines"
    assert escape_markdown("back\\slash") == "back\\\\slash"


# --------------------------------------------------------------------------- markdown
def test_markdown_variant(data, fit, tmp_path):
    path = write_report(data, fit=fit, output=tmp_path / "out" / "report.html", markdown=True)
    assert path == tmp_path / "out" / "report.md"
    text = path.read_text(encoding="utf-8")
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert [Path(link).stem for link in links] == list(FIGURES)
    for link in links:
        assert link.startswith("report_files/")
        image = path.parent / link
        assert image.read_bytes().startswith(b"\x89PNG")
    for heading in ("## Data", "## Systems: pass@1", "## Comparisons", "## Harness and protocol",
                    "## How to read this"):  # fmt: skip
        assert heading in text
    assert "| RL base | 10 |" in text  # data-summary row
    assert "<script" not in text.lower()


def test_markdown_path():
    assert markdown_path("report.html") == Path("report.md")
    assert markdown_path("a/b.HTM") == Path("a/b.md")
    assert markdown_path("notes") == Path("notes.md")
    assert markdown_path("x.md") == Path("x.md")


# --------------------------------------------------------------------------- meta
def test_meta_toml_is_a_table(data, fit, tmp_path):
    meta = tmp_path / "protocol.toml"
    meta.write_text(
        'harness = "TinyAgent gym, training harness"\ntrials_per_task = 64\n'
        "[sampling]\ntemperature = 1.0\ngreedy = false\nops = [\"read\", \"edit\"]\n",
        encoding="utf-8",
    )
    html = write_report(data, fit=fit, output=tmp_path / "r.html", meta=meta).read_text()
    rows = {r["field"]: r["value"] for r in parse_tables(html)["protocol"]}
    assert rows == {
        "harness": "TinyAgent gym, training harness",
        "trials_per_task": "64",
        "sampling.temperature": "1.0",
        "sampling.greedy": "false",
        "sampling.ops": "read, edit",
    }
    assert "were not stated" not in html


def test_meta_json_and_text(tmp_path):
    meta = tmp_path / "m.json"
    meta.write_text(json.dumps({"verifier": {"kind": "hidden tests", "n": 3}}), encoding="utf-8")
    assert read_meta(meta).rows == (("verifier.kind", "hidden tests"), ("verifier.n", "3"))
    text = tmp_path / "protocol.txt"
    text.write_text("harness: v2\n  temperature 1.0\n", encoding="utf-8")
    parsed = read_meta(text)
    assert parsed.kind == "text" and parsed.text == "harness: v2\n  temperature 1.0"


def test_meta_text_is_preformatted(data, fit, tmp_path):
    meta = tmp_path / "protocol.txt"
    meta.write_text("harness v2 <beta>\n  temperature 1.0\n", encoding="utf-8")
    html = write_report(data, fit=fit, output=tmp_path / "r.html", meta=meta).read_text()
    assert "<pre>harness v2 &lt;beta&gt;\n  temperature 1.0</pre>" in html
    md = write_report(data, fit=fit, output=tmp_path / "r.md", meta=meta, markdown=True)
    assert "```text\nharness v2 <beta>\n  temperature 1.0\n```" in md.read_text()


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("bad.toml", "harness = [unclosed", "not valid TOML"),
        ("bad.json", "{\"a\": ", "not valid JSON"),
        ("list.json", "[1, 2]", "must hold an object"),
        ("empty.toml", "   \n", "is empty"),
        ("nothing.toml", "# only a comment\n", "states no field"),
        ("latin1.txt", b"caf\xe9", "not UTF-8"),
    ],
)
def test_bad_meta_file_gives_a_clear_error(tmp_path, name, content, message):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=message) as info:
        read_meta(path)
    assert str(path) in str(info.value)


def test_missing_meta_file_and_directory(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such meta file"):
        read_meta(tmp_path / "absent.toml")
    with pytest.raises(ValueError, match="not a directory"):
        read_meta(tmp_path)


def test_bad_meta_fails_before_fitting(data, tmp_path, monkeypatch):
    def no_fit(*args, **kwargs):
        raise AssertionError("fitted before reading the meta file")

    monkeypatch.setattr(eb.BetaBinomialModel, "fit", no_fit)
    bad = tmp_path / "bad.toml"
    bad.write_text("= 1", encoding="utf-8")
    with pytest.raises(ValueError, match="not valid TOML"):
        write_report(data, output=tmp_path / "r.html", meta=bad)


def test_cli_report_and_bad_meta(tmp_path, capsys):
    from evalbayes.cli import main

    out = tmp_path / "cli.html"
    assert main(["report", "dataset:tinyagent", "-o", str(out), "--draws", str(DRAWS),
                 "--tune", "250", "--chains", "2", "--target-accept", "0.95"]) == 0
    html = out.read_text(encoding="utf-8")
    assert '<section id="comparisons">' in html
    settings = {r["setting"]: r["value"] for r in parse_tables(html)["settings"]}
    sampler = json.loads(settings["sampler"])
    assert (sampler["draws"], sampler["tune"], sampler["chains"]) == (DRAWS, 250, 2)
    assert sampler["target_accept"] == 0.95
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    assert main(["report", "dataset:tinyagent", "-o", str(out), "--meta", str(bad)]) == 2
    assert "not valid JSON" in capsys.readouterr().err


# --------------------------------------------------------------------------- other input
def test_failed_diagnostics_show_a_warning_box(data, tmp_path):
    short = eb.BetaBinomialModel().fit(data, method="nutpie", draws=15, tune=15, seed=0,
                                       check=False)
    document = build_report(data, short, seed=0)
    checks = document.section("checks")
    warning = [b for b in checks.blocks if isinstance(b, Callout) and b.kind == "warning"]
    assert warning and warning[0].title.startswith("The fit did not converge")
    html = write_report(data, fit=short, output=tmp_path / "short.html").read_text()
    assert 'class="callout warning"' in html and "FAIL" in html


def test_fit_of_other_data_is_refused(data, fit):
    other = eb.datasets.load("tinyagent", experiment="sec17.1")
    with pytest.raises(ValueError, match="other data"):
        build_report(other, fit)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"draws": 0}, "draws must be a positive int"),
    ({"seed": -1}, "seed must be a non-negative int"),
    ({"sampler": {"thin": 2}}, r"sampler takes method, tune, chains, target_accept; got .+thin"),
])  # fmt: skip
def test_bad_arguments(data, kwargs, message, tmp_path):
    with pytest.raises(ValueError, match=message):
        write_report(data, output=tmp_path / "r.html", **kwargs)


def test_sampler_settings_with_a_given_fit_are_refused(data, fit, tmp_path, capsys):
    from evalbayes.cli import main

    with pytest.raises(ValueError, match="the fit given has its own"):
        write_report(data, fit=fit, output=tmp_path / "r.html", sampler={"chains": 2})
    saved = tmp_path / "fit.nc"
    fit.save(saved)
    assert main(["report", str(saved), "-o", str(tmp_path / "r.html"), "--chains", "2",
                 "--draws", "10"]) == 2
    assert "--draws, --chains apply to fitting DATA" in capsys.readouterr().err


def test_document_rejects_bad_tables_and_keys():
    with pytest.raises(ValueError, match="row 0 has 1 cells"):
        Table.build("t", ["a", "b"], [["x"]])
    with pytest.raises(ValueError, match="key must be"):
        Section("Bad Key", "title", ())
    with pytest.raises(ValueError, match="key must be"):
        Figure("../x", b"", "alt")


@pytest.mark.parametrize(("p_sup", "p_rope", "p_beyond", "expected"), [
    (1.0, 0.0, 0.99, "B better by more than 0.01"),
    (0.6, 0.97, 0.01, "practically equivalent (|B - A| < 0.01)"),
    (0.97, 0.5, 0.5, "B better"),
    (0.03, 0.5, 0.0, "A better"),
    (0.7, 0.5, 0.3, "uncertain"),
])  # fmt: skip
def test_bayes_verdict_rule(p_sup, p_rope, p_beyond, expected):
    assert bayes_verdict(p_sup, p_rope, p_beyond, 0.01) == expected


# --------------------------------------------------------------------------- IRT
def test_irt_fit_adds_the_item_section(tmp_path):
    chem = eb.datasets.load("chembench")
    small = chem.subset(systems=chem.systems[:6], tasks=chem.tasks[:60])
    irt = eb.get_model("irt-1pl").fit(small, draws=200, tune=200, chains=2, seed=0, check=False)
    html = write_report(small, fit=irt, output=tmp_path / "irt.html").read_text()
    assert "No item model was fitted" not in html
    assert '<figure id="fig-items">' in html
    found = parse_tables(html)
    abilities = irt.abilities()
    rows = {r["system"]: r for r in found["abilities"]}
    for _, ref in abilities.iterrows():
        assert rows[ref["system"]]["ability θ"] == f"{ref['theta_mean']:.2f}"
    items = irt.items()
    listed = {r["task"]: r for r in found["item-table"]}
    assert len(items) == 60 and len(listed) <= 40  # above 40: hardest, easiest, flagged
    hardest = items.sort_values("b_mean", ascending=False)["task"].head(10)
    easiest = items.sort_values("b_mean")["task"].head(10)
    assert set(hardest) | set(easiest) <= set(listed)
    never = items[items["never_solved"]]["task"].tolist()
    for task in never:
        if task in listed:
            assert "never solved" in listed[task]["flags"]
    selected = irt.select_items(10)["task"].tolist()
    assert [r["task"] for r in found["items-selected"]] == selected


# --------------------------------------------------------------------------- other models
def test_conjugate_fit_without_population_and_a_single_system(data, tmp_path):
    """pooling="none" has only the "tasks" estimand and exact draws; one system has no pair."""
    one = data.subset(systems=["RL base"])
    fit = eb.BetaBinomialModel(pooling="none").fit(one, draws=200, seed=0)
    html = write_report(one, fit=fit, output=tmp_path / "one.html").read_text()
    rows = parse_tables(html)["per-system"]
    assert rows[0]["posterior mean: tasks like these"] == "n/a"
    assert "One system: nothing to compare." in html
    assert "Exact draws: no MCMC diagnostics needed" in html
    assert '<table id="pairs">' not in html


def test_many_systems_compare_each_with_the_best(tmp_path):
    rng = np.random.default_rng(5)
    rates = np.linspace(0.2, 0.8, 13)
    c = rng.binomial(8, np.clip(rates[:, None] + rng.normal(0, 0.1, (13, 25)), 0.01, 0.99))
    many = eb.EvalData.from_arrays(np.full_like(c, 8), c,
                                   systems=[f"sys{i:02d}" for i in range(13)])  # fmt: skip
    fit = eb.BetaBinomialModel(pooling="complete").fit(many, draws=200, seed=0)
    document = build_report(many, fit, seed=0)
    pairs = document.tables()["pairs"]
    best = pairs.rows[0][1]
    assert len(pairs.rows) == 12 and all(row[1] == best for row in pairs.rows)
    assert best == "sys12"  # the highest rate
    text = [b for b in document.section("curves").blocks if not isinstance(b, (Table, Figure))]
    assert any("The plots colour the 5 systems" in "".join(map(str, p.parts)) for p in text)


def test_approximate_fit_is_labelled(data, fit, tmp_path):
    import dataclasses

    approx = dataclasses.replace(fit, sampler=dataclasses.replace(fit.sampler, method="advi"))
    html = write_report(data, fit=approx, output=tmp_path / "approx.html").read_text()
    assert "APPROXIMATE fit: no MCMC diagnostics" in html
    assert "APPROXIMATE: variational fit" in html


def test_predictive_check_thins_large_posteriors(data, fit, monkeypatch):
    from evalbayes.report import _checks as checks

    monkeypatch.setattr(checks, "PPC_MAX_VALUES", 10_000)  # 1200 draws x 30 cells -> 1 in 4
    document = build_report(data, fit, seed=0)
    texts = ["".join(map(str, b.parts)) for b in document.section("checks").blocks
             if hasattr(b, "parts")]  # fmt: skip
    assert any("one posterior draw in 4" in t for t in texts)


def test_pairs_use_the_population_and_say_how_many_tasks(data, fit, html):
    """The Bayesian verdicts are on tasks like these (the default estimand of compare) and the
    section says how many shared tasks they rest on (TinyAgent: 10, fewer than 30)."""
    document = build_report(data, fit, seed=0)
    texts = [" ".join(map(str, b.parts)) for b in document.section("comparisons").blocks
             if hasattr(b, "parts")]  # fmt: skip
    assert any("rest on 10 tasks shared by every pair" in t and "fewer than 30 tasks" in t
               for t in texts)
    assert "Bayesian verdict on tasks like these" in html
