"""Number formatting shared by the report sections (one convention everywhere)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from typing_extensions import TypeIs

__all__ = ["fmt", "fmt_interval", "fmt_p", "fmt_signed", "fmt_signed_interval"]


def _finite(value: float | None) -> TypeIs[float]:
    return value is not None and math.isfinite(float(value))


def fmt(value: float | None, digits: int = 3) -> str:
    """``0.144``; ``-`` for None, NaN or infinite."""
    return f"{float(value):.{digits}f}" if _finite(value) else "-"


def fmt_signed(value: float | None, digits: int = 3) -> str:
    """``+0.041`` / ``-0.012``."""
    return f"{float(value):+.{digits}f}" if _finite(value) else "-"


def fmt_interval(lower: float | None, upper: float | None, digits: int = 3) -> str:
    """``[0.600, 0.960]``."""
    if not (_finite(lower) and _finite(upper)):
        return "-"
    return f"[{float(lower):.{digits}f}, {float(upper):.{digits}f}]"


def fmt_signed_interval(lower: float | None, upper: float | None, digits: int = 3) -> str:
    """``[+0.006, +0.087]``."""
    if not (_finite(lower) and _finite(upper)):
        return "-"
    return f"[{float(lower):+.{digits}f}, {float(upper):+.{digits}f}]"


def fmt_p(value: float | None) -> str:
    """A p-value or probability with enough digits to read small values: ``0.0012``."""
    if not _finite(value):
        return "-"
    value = float(value)
    if value == 0.0:
        return "0"
    if value < 1e-4:
        return f"{value:.1e}"
    return f"{value:.4f}"
