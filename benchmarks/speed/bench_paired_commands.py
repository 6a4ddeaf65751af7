"""Whole commands of issue 26, a baseline tree against this one, interleaved, same run.

Each command runs in a fresh process (``python -m evalbayes``) with ``PYTHONPATH`` set to
the tree's ``src``, alternating baseline and new, ``REPS`` times (median, min-max wall and
median CPU of the child); the load average is printed beside each line. The fits it writes
(``$OUT``, default /tmp/bench_paired_commands) are read back by ``summary``, ``compare``
and ``report``: each tree reads its own.

    git worktree add /tmp/base <commit>
    python benchmarks/speed/bench_paired_commands.py --base-src /tmp/base/src fits read he

Byte-compile both trees first (``python -m compileall -q src``) where
PYTHONDONTWRITEBYTECODE is set, or each command compiles its sources.
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--base-src", required=True, help="the baseline tree's src folder")
parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
parser.add_argument("--reps", type=int, default=3)
parser.add_argument("groups", nargs="*", default=["fits", "read"],
                    help="fits (TinyAgent, Terminal-Bench, SWE-bench), he (HumanEval+), "
                    "read (summary, compare, report), entry (--help, crosscheck, a cold "
                    "TinyAgent fit: an empty numba cache)")
options = parser.parse_args()
PY = sys.executable
TREES = {"base": options.base_src, "new": str(ROOT / "src")}
D = options.data
REPS = options.reps
OUT = os.environ.get("OUT", "/tmp/bench_paired_commands")
os.makedirs(OUT, exist_ok=True)
env0 = dict(os.environ, MPLBACKEND="Agg")


def run(tree: str, args: list[str], **extra_env: str) -> tuple[float, float]:
    """One command in a fresh process: wall seconds and the child's CPU seconds."""
    env = dict(env0, PYTHONPATH=TREES[tree], **extra_env)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([PY, "-m", "evalbayes", *args], env=env, capture_output=True,
                          text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1):  # 1: a diagnostics warning, still timed
        print("FAILED", tree, args, done.stderr[-500:], flush=True)
    return wall, cpu


def bench(label: str, args_of, reps: int = REPS, env_of=None) -> dict[str, tuple[float, ...]]:
    """``reps`` alternating runs per tree: median wall, median CPU, min and max wall
    (``env_of(tree)``: extra environment variables of each run)."""
    runs: dict[str, list[tuple[float, float]]] = {t: [] for t in TREES}
    for _ in range(reps):
        for tree in TREES:
            runs[tree].append(run(tree, args_of(tree), **(env_of(tree) if env_of else {})))
    med = {t: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v),
               min(w for w, _ in v), max(w for w, _ in v)) for t, v in runs.items()}
    b, n = med["base"], med["new"]
    print(f"{label:38s} base {b[0]:6.2f} s [{b[2]:.2f}-{b[3]:.2f}] cpu {b[1]:6.2f} | "
          f"new {n[0]:6.2f} s [{n[2]:.2f}-{n[3]:.2f}] cpu {n[1]:6.2f} | "
          f"base/new {b[0] / n[0]:.2f}x  load {os.getloadavg()[0]:.2f}", flush=True)
    return med


def fit(data: list[str], name: str, model: str | None = None):
    """The arguments of ``fit DATA [--model M] -o OUT/<tree>_<name>.nc`` per tree."""
    extra = ["--model", model] if model else []
    return lambda tree: ["fit", *data, *extra, "-o", f"{OUT}/{tree}_{name}.nc"]


commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                        capture_output=True, text=True).stdout.strip()
print(f"# base {options.base_src} vs new {commit}, "
      f"{time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}, median of {REPS}, "
      f"interleaved; cores {os.cpu_count()}", flush=True)
TB = [f"{D}/terminal_bench_core011_counts.csv"]
SWE = [f"{D}/swebench_verified_binary.csv"]
HE = [f"{D}/noise_highk_temp0.7.csv.gz", "--where", "benchmark=human_eval_plus"]
if "fits" in options.groups:
    for tree in TREES:  # warm the numba caches of both trees
        run(tree, ["fit", "dataset:tinyagent", "-o", f"{OUT}/warm_{tree}.nc"])
    bench("fit TinyAgent default", fit(["dataset:tinyagent"], "ta_rg"))
    bench("fit TinyAgent beta-binomial", fit(["dataset:tinyagent"], "ta_bb", "beta-binomial"))
    bench("fit Terminal-Bench default", fit(TB, "tb_rg"))
    bench("fit Terminal-Bench beta-binomial", fit(TB, "tb_bb", "beta-binomial"))
    bench("fit SWE-bench Verified default", fit(SWE, "swe_rg"), reps=2)
    bench("fit SWE-bench Verified beta-binomial", fit(SWE, "swe_bb", "beta-binomial"), reps=2)
if "he" in options.groups:
    bench("fit HumanEval+ default", fit(HE, "he_rg"), reps=1)
    bench("fit HumanEval+ beta-binomial", fit(HE, "he_bb", "beta-binomial"), reps=1)
if "read" in options.groups:
    for m in ("bb", "rg"):
        s = bench(f"summary SWE {m}", lambda t, m=m: ["summary", f"{OUT}/{t}_swe_{m}.nc"])
        c = bench(f"compare SWE {m}", lambda t, m=m: ["compare", f"{OUT}/{t}_swe_{m}.nc"])
        print(f"{'  summary + compare SWE ' + m:38s} base {s['base'][0] + c['base'][0]:.2f} s"
              f"  new {s['new'][0] + c['new'][0]:.2f} s", flush=True)
    for m in ("bb", "rg"):
        bench(f"report TB {m}", lambda t, m=m: ["report", f"{OUT}/{t}_tb_{m}.nc", "-o",
                                                f"{OUT}/{t}_tb_{m}.html"])
if "entry" in options.groups:
    bench("--help", lambda t: ["--help"])
    bench("crosscheck TinyAgent", lambda t: ["crosscheck", "dataset:tinyagent"])
    bench("fit TinyAgent default, cold numba cache",
          lambda t: ["fit", "dataset:tinyagent", "-o", f"{OUT}/cold_{t}.nc"],
          env_of=lambda t: {"NUMBA_CACHE_DIR": tempfile.mkdtemp(prefix="numba-cold-")})
