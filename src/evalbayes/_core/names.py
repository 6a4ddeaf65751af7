"""One home for the names evalbayes shares: estimands, metrics, dims, interval kinds,
inference methods and their defaults, chunk sizes, and one validator for each.

The bottom layer: pure Python and NumPy. Every other module (models, results, comparison,
plots, report, CLI) imports these names instead of restating them, so a choice offered by the
CLI and the check behind it can never disagree.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "APPROXIMATE_METHODS",
    "APPROXIMATION_KIND",
    "CHUNK_NUMBERS",
    "COUPLINGS",
    "ESTIMANDS",
    "ESTIMAND_TEXT",
    "INTERVAL_KINDS",
    "KEY_LABEL_WIDTH",
    "K_DIM",
    "LABEL_WIDTH",
    "MAX_SEED",
    "MCMC_METHODS",
    "METHODS",
    "METRICS",
    "NUTS_METHODS",
    "POPULATIONS",
    "SAMPLER_DEFAULTS",
    "SAMPLE_DIMS",
    "SYSTEM_DIM",
    "TASK_DIM",
    "TEXT_LABEL_WIDTH",
    "UNSET",
    "Estimand",
    "IntervalKind",
    "Method",
    "Metric",
    "Unset",
    "check_ci_prob",
    "check_count",
    "check_coupling",
    "check_estimand",
    "check_interval_kind",
    "check_k",
    "check_method",
    "check_metric",
    "check_nonnegative",
    "check_population",
    "check_prob",
    "check_seed",
    "check_systems",
    "default_estimand",
    "display_label",
    "hidden_characters",
    "label_key",
    "lookalike_names",
    "name_skeleton",
    "pick_seed",
]

# ----------------------------------------------------------------------------- estimands
Estimand = Literal["tasks", "population"]
ESTIMANDS: Final[tuple[str, ...]] = ("tasks", "population")
ESTIMAND_TEXT: Final[dict[str, str]] = {
    "tasks": "how well on these tasks (trial noise only)",
    "population": "how well on tasks like these (task sampling too)",
}

# ----------------------------------------------------------------------------- populations
# What "tasks like these" means for a model whose systems share no parameter (its
# ``population`` setting): "paired" = each system's model-based draws coupled to a Bayesian
# bootstrap of the shared tasks; "independent" = the model's draws as they are;
# "bayesian-bootstrap" = the bootstrap itself (models/_base.py, models/README.md).
POPULATIONS: Final[tuple[str, ...]] = ("paired", "independent", "bayesian-bootstrap")


def check_population(value: str) -> str:
    """``value`` if it is one of :data:`POPULATIONS`, else ``ValueError``."""
    if value not in POPULATIONS:
        raise ValueError(f"population must be one of {', '.join(POPULATIONS)}, got {value!r}")
    return value


#: How ``population="paired"`` couples the systems' draws (:func:`check_coupling`):
#: the Bayesian bootstrap with ``unseen_tasks`` independent tasks, the same with the unseen
#: tasks coupled by a Gaussian copula of posterior correlation, or that copula alone.
COUPLINGS: Final[tuple[str, ...]] = ("dirichlet", "dirichlet-copula", "copula")


def check_coupling(value: str) -> str:
    """``value`` if it is one of :data:`COUPLINGS`, else ``ValueError``."""
    if value not in COUPLINGS:
        raise ValueError(f"coupling must be one of {', '.join(COUPLINGS)}, got {value!r}")
    return value


# ----------------------------------------------------------------------------- metrics
Metric = Literal["pass@k", "pass^k"]
METRICS: Final[tuple[str, ...]] = ("pass@k", "pass^k")

# ----------------------------------------------------------------------------- dims
SAMPLE_DIMS: Final[tuple[str, str]] = ("chain", "draw")
SYSTEM_DIM: Final = "system"
TASK_DIM: Final = "task"
K_DIM: Final = "k"

# ----------------------------------------------------------------------------- intervals
IntervalKind = Literal["eti", "hdi"]
INTERVAL_KINDS: Final[tuple[str, ...]] = ("eti", "hdi")

# ----------------------------------------------------------------------------- inference
Method = Literal["nutpie", "pymc", "numpyro", "smc", "exact", "advi", "pathfinder", "laplace"]
METHODS: Final[tuple[str, ...]] = (
    "nutpie", "pymc", "numpyro", "smc", "exact", "advi", "pathfinder", "laplace"
)
#: NUTS samplers: they need warm-up (``tune >= 1``) to adapt their step size.
NUTS_METHODS: Final[tuple[str, ...]] = ("nutpie", "pymc", "numpyro")
#: Monte Carlo samplers whose draws need convergence diagnostics (R-hat, ESS): NUTS, and the
#: tempered sequential Monte Carlo of the rate grid (``"smc"``: particles split into
#: pseudo-chains; it ignores ``tune`` and has no divergences).
MCMC_METHODS: Final[tuple[str, ...]] = (*NUTS_METHODS, "smc")
#: Approximate methods (variational, or a normal at the mode): intervals approximate,
#: labelled so in every output.
APPROXIMATE_METHODS: Final[tuple[str, ...]] = ("advi", "pathfinder", "laplace")
#: What kind of approximation each approximate method makes (for labels).
APPROXIMATION_KIND: Final[dict[str, str]] = {
    "advi": "variational",
    "pathfinder": "variational",
    "laplace": "Laplace, normal at the mode",
}
SAMPLER_DEFAULTS: Final[dict[str, Any]] = {
    "method": "nutpie",
    "draws": 1000,
    "tune": 1000,
    "chains": 4,
    "seed": 0,
    "target_accept": 0.9,
}

#: Numbers held at once by chunked computations over (draws x systems x tasks).
CHUNK_NUMBERS: Final = 4_000_000


# ----------------------------------------------------------------------------- validators
def check_k(k: ArrayLike) -> NDArray[np.float64]:
    """Validate ``k`` (a positive number or a 1-D sequence of them) -> 1-D float array."""
    message = f"k must be a positive number or a 1-D sequence of them, got {k!r}"
    try:
        arr = np.atleast_1d(np.asarray(k, dtype=np.float64))
    except (TypeError, ValueError) as err:
        raise ValueError(message) from err
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(message)
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"k must be positive and finite, got {arr.tolist()}")
    return arr


def check_metric(metric: str) -> Metric:
    """Return ``metric`` if it is ``"pass@k"`` or ``"pass^k"``, else raise."""
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    return metric  # type: ignore[return-value]


def default_estimand(available: Sequence[str]) -> Estimand:
    """The estimand a comparison or gate uses when none is named: ``"population"`` (tasks
    like these) where the model has one, else ``"tasks"``.

    A comparison of two systems on a sample of tasks is nearly always read as a claim about
    tasks like these, and the "tasks" interval answers a narrower question: judged against
    the whole benchmark from 10-100 of its tasks, "tasks" intervals of a pass@1 difference
    covered 0.60-0.67 and ``P(B > A) = 0.95`` was right 0.80 of the time (issue 27;
    ``benchmarks/validity/``, paired comparisons).
    """
    return "population" if "population" in available else "tasks"


def check_estimand(
    estimand: str, available: Sequence[str] = ESTIMANDS, owner: str = "this model"
) -> Estimand:
    """Return ``estimand`` if it is one of ``available`` (default: both), else raise.

    ``owner`` names the model in the message (e.g. ``"beta-binomial with pooling='none'"``).
    """
    if estimand not in ESTIMANDS:
        raise ValueError(f"estimand must be one of {ESTIMANDS}, got {estimand!r}")
    if estimand not in available:
        raise ValueError(
            f"estimand {estimand!r} is not available for {owner}; available: {tuple(available)}"
        )
    return estimand  # type: ignore[return-value]


def check_interval_kind(kind: str) -> IntervalKind:
    """Return ``kind`` if it is ``"eti"`` or ``"hdi"``, else raise."""
    if kind not in INTERVAL_KINDS:
        raise ValueError(f"kind must be one of {INTERVAL_KINDS}, got {kind!r}")
    return kind  # type: ignore[return-value]


def check_prob(value: Any, name: str, *, open_low: bool = True) -> float:
    """Return ``value`` as a float if it is a number in (0, 1) (``[0, 1)`` with
    ``open_low=False``), else raise naming ``name``: the one rule for probabilities,
    interval levels (:func:`check_ci_prob`) and test levels (``alpha``)."""
    interval = f"{'(' if open_low else '['}0, 1)"
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ValueError(f"{name} must be a number in {interval}, got {value!r}")
    out = float(value)
    low_ok = out > 0.0 if open_low else out >= 0.0
    if not (np.isfinite(out) and low_ok and out < 1.0):
        raise ValueError(f"{name} must lie in {interval}, got {value!r}")
    return out


def check_ci_prob(ci_prob: Any, name: str = "ci_prob") -> float:
    """Return ``ci_prob`` as a float if it lies strictly inside (0, 1), else raise."""
    return check_prob(ci_prob, name)


def check_nonnegative(value: Any, name: str) -> float:
    """Return ``value`` as a float if it is a finite number >= 0, else raise naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    out = float(value)
    if not np.isfinite(out) or out < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return out


def check_count(value: Any, name: str, minimum: int = 1) -> int:
    """Return ``value`` as an int if it is an integer >= ``minimum`` (draws, chains, tasks,
    replicates, ...), else raise naming ``name``. Floats are refused, even whole ones: a count
    is an integer, and ``2.9`` must not quietly become 2."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if int(value) < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value}")
    return int(value)


#: The largest seed: NumPy's legacy ``RandomState`` and PyMC take seeds below 2^32, and
#: nutpie's seed is an unsigned 64-bit integer (2^64 failed there, after the data were read).
MAX_SEED: Final = 2**32 - 1


def check_seed(seed: Any, name: str = "seed") -> int:
    """Return ``seed`` if it is an integer in [0, :data:`MAX_SEED`], else raise."""
    value = check_count(seed, name, minimum=0)
    if value > MAX_SEED:
        raise ValueError(f"{name} must be an integer in [0, 2^32 - 1], got {value}")
    return value


class Unset:
    """Type of :data:`UNSET`, the marker of an argument left out (``random_seed``)."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = Unset()


def _same_seed(a: Any, b: Any) -> bool:
    if a is b:
        return True
    ints = (int, np.integer)
    return (
        isinstance(a, ints)
        and isinstance(b, ints)
        and not isinstance(a, bool)
        and not isinstance(b, bool)
        and int(a) == int(b)
    )


def pick_seed(seed: Any, random_seed: Any = UNSET, *, default: Any = 0) -> Any:
    """The seed under either name: evalbayes' ``seed`` or PyMC's ``random_seed``.

    Every public function that takes ``seed`` also takes ``random_seed`` (the name PyMC's
    ``pm.sample`` uses) and passes both here. ``random_seed`` counts when given; ``seed``
    left at its ``default`` yields to it; both given with different values is an error. The
    value is returned as given: each caller applies its own rule (an int for fits; an int,
    a :class:`numpy.random.Generator` or None for the frequentist resampling).

    Raises
    ------
    ValueError
        If ``seed`` and ``random_seed`` are both given and disagree.
    """
    if random_seed is UNSET:
        return seed
    if _same_seed(seed, default) or (seed is None and default is None):
        return random_seed
    if _same_seed(seed, random_seed):
        return seed
    raise ValueError(f"seed={seed!r} and random_seed={random_seed!r} disagree: give one")


def check_method(method: str) -> Method:
    """Return ``method`` if it is one of :data:`METHODS`, else raise."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    return method  # type: ignore[return-value]


def check_systems(available: Sequence[str], systems: Any, minimum: int = 1) -> list[str]:
    """Validate a selection of system names (order kept) against ``available``.

    ``None`` selects all. A bare string is refused (it would be read as characters), as are
    unknown and repeated names and selections with fewer than ``minimum`` systems.
    """
    if systems is None:
        chosen = [str(s) for s in available]
    else:
        if isinstance(systems, str):
            raise ValueError(f"systems must be a sequence of names, got the string {systems!r}")
        chosen = [str(s) for s in systems]
        known = {str(s) for s in available}
        unknown = [s for s in chosen if s not in known]
        if unknown:
            raise ValueError(f"unknown systems {unknown}; known: {[str(s) for s in available]}")
        duplicated = sorted({s for s in chosen if chosen.count(s) > 1})
        if duplicated:
            raise ValueError(f"systems listed more than once: {duplicated}")
    if len(chosen) < minimum:
        raise ValueError(f"need at least {minimum} system(s), got {len(chosen)}: {chosen}")
    return chosen


LABEL_WIDTH: Final = 32  # display width of a system or task name in plots
TEXT_LABEL_WIDTH: Final = 80  # longest name shown whole in a text table (CLI, crosscheck)
KEY_LABEL_WIDTH: Final = 240  # a name in a key of shortened labels (only hostile ones are cut)


def display_label(name: Any, width: int = LABEL_WIDTH) -> str:
    """A system or task name as shown to a reader: printable and at most ``width`` long.

    Control characters become their escapes (``\\n``, ``\\x00``). A longer name keeps its
    head and its last four characters around an ellipsis, followed by six hex digits of the
    SHA-1 of the full name, so two long names that share a prefix (or a suffix) still read
    differently: ``display_label("x" * 100000 + "a")`` is ``"xxxxxxxxxxxxxxxxxxxxxxxxx…xxxa
    #1d6ab8"``-like. Only the display changes: data, CSV/JSON outputs and fits keep the
    full name.
    """
    import hashlib

    text = str(name)
    short = text if len(text) <= 4 * width else text[: 2 * width] + text[-8:]
    shown = "".join(
        ch if ch.isprintable() or ch == " " else ch.encode("unicode_escape").decode("ascii")
        for ch in short
    )
    if len(text) <= width and shown == text:
        return text
    if len(text) <= width and len(shown) <= width:
        return shown
    digest = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:6]
    head = max(1, width - 13)
    return f"{shown[:head]}…{shown[-4:]} #{digest}"


def label_key(names: Any, width: int = LABEL_WIDTH) -> list[tuple[str, str]]:
    """``(label, full name)`` for every name that :func:`display_label` shortens at ``width``.

    The key printed or shown beside a figure whose labels were shortened, so that each label
    can be matched with the full name of the tables (the name itself up to
    ``KEY_LABEL_WIDTH`` characters, control characters escaped). Names are taken in order,
    each once.
    """
    key: list[tuple[str, str]] = []
    seen: set[str] = set()
    for name in names:
        text = str(name)
        if text in seen:
            continue
        seen.add(text)
        label = display_label(text, width)
        full = display_label(text, KEY_LABEL_WIDTH)
        if label != full:
            key.append((label, full))
    return key


# ----------------------------------------------------------------------------- look-alikes
#: Letters of other scripts drawn like Latin ones (the commonest confusables of Unicode TR39's
#: table: Cyrillic and Greek lower and upper case), mapped to the Latin letter.
_CONFUSABLES: Final = str.maketrans({
    "а": "a", "в": "b", "е": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c",
    "т": "t", "у": "y", "х": "x", "і": "i", "ј": "j", "ѕ": "s", "ԁ": "d", "ԛ": "q", "ԝ": "w",
    "ɡ": "g", "α": "a", "β": "b", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p",
    "τ": "t", "υ": "u", "χ": "x", "ℓ": "l", "ı": "i",
})  # fmt: skip


def hidden_characters(name: str) -> list[str]:
    """The characters of ``name`` a reader cannot see: format characters (Unicode category
    Cf: bidirectional overrides and isolates U+202A-U+202E, U+2066-U+2069, zero-width
    space/joiners U+200B-U+200D, U+FEFF ...) and control characters other than tab/newline,
    as ``U+XXXX`` strings. A bidi override can make a name read backwards (CVE-2021-42574,
    "Trojan Source")."""
    import unicodedata

    return [f"U+{ord(ch):04X}" for ch in str(name)
            if unicodedata.category(ch) in ("Cf", "Cc") and ch not in "\t\n"]


def name_skeleton(name: str) -> str:
    """What ``name`` looks like: NFKC-normalised (NFC/NFD spellings and compatibility forms
    agree), hidden characters dropped, case folded, and Cyrillic/Greek look-alike letters
    mapped to Latin (a small subset of Unicode TR39's confusables skeleton)."""
    import unicodedata

    text = unicodedata.normalize("NFKC", str(name))
    text = "".join(ch for ch in text if unicodedata.category(ch) not in ("Cf", "Cc"))
    return text.casefold().translate(_CONFUSABLES)


def lookalike_names(names: Sequence[Any]) -> list[tuple[str, ...]]:
    """Groups of two or more distinct names that look the same (:func:`name_skeleton`):
    ``"GPT-4"`` and ``"GРТ-4"`` (Cyrillic Р, Т), ``"é"`` composed and decomposed, a name and
    the same name with a zero-width space."""
    groups: dict[str, list[str]] = {}
    for name in dict.fromkeys(str(n) for n in names):
        groups.setdefault(name_skeleton(name), []).append(name)
    return [tuple(group) for group in groups.values() if len(group) > 1]
