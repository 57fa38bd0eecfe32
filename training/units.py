"""Counts as people write them (``7B``, ``1.4T``, ``2,000``) and as the plan prints them; the plan's error type.

Also the one count validator the plan options and the train config share (``count_field``).
"""

from __future__ import annotations

import math
import re
from typing import Any

from pipeline.errors import TokenmillError


class PlanError(TokenmillError, ValueError):
    """Input that cannot be planned; the message names the option (``mfu``, ``tokens``, …)."""


_SUFFIXES = {"k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12, "p": 1e15}


def parse_count(value: Any, name: str = "value") -> float:
    """``7B``, ``1.4T``, ``300e9``, ``13M``, ``2,000`` or a number → float. Raises PlanError naming ``name``."""
    if isinstance(value, bool):
        raise PlanError(f"{name}: expected a number, got {value!r}")
    if isinstance(value, int | float):
        return float(value)
    text = str(value).strip().replace(",", "").replace("_", "")
    match = re.fullmatch(r"([+-]?[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([kKmMbBgGtTpP]?)", text)
    if not match:
        raise PlanError(f"{name}: {value!r} is not a number (examples: 7B, 1.4T, 3e23)")
    return float(match.group(1)) * _SUFFIXES.get(match.group(2).lower(), 1.0)


def human(value: float, unit: str = "") -> str:
    """3.14e23 → '3.14e23'; 6.7e9 → '6.74B' (params/tokens)."""
    if value is None:
        return "—"
    if unit == "flops":
        return f"{value:.3g}".replace("e+", "e")
    for suffix, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.3g}{suffix}"
    return f"{value:.3g}"


def require_positive(name: str, value: float | int | None) -> None:
    """None passes (not given); anything else must be a finite number > 0, else a PlanError naming ``name``."""
    if value is not None and (isinstance(value, bool) or not value > 0 or not math.isfinite(value)):
        raise PlanError(f"{name}: must be a positive number, got {value!r}")


def count_field(value: Any, *, positive: bool = True) -> Any:
    """The body of a pydantic ``mode="before"`` validator for a count option (one rule for ``plan:`` options and
    ``train:`` counts): None stays None, ``7B``-style text becomes a number; raises ValueError (pydantic adds the
    field name).

    ``positive``: refuse counts <= 0 here (the plan options); without it numbers pass unchanged and the field's
    own constraint (``gt=0``) judges them, as the train config has always done.
    """
    if value is None:
        return None
    if not positive and isinstance(value, int | float):
        return value
    try:
        count = parse_count(value)
    except PlanError as error:
        raise ValueError(str(error).split(": ", 1)[-1]) from None
    if positive and not count > 0:
        raise ValueError(f"must be a positive number, got {value!r}")
    return count


def per_param(ratio: float) -> str:
    """Tokens per parameter for reading: one decimal from 1 up (``11.2``, ``1,400``), two significant digits below
    (``0.041``), so a tiny run never reads ``0.0`` in one place and ``0.04`` in another."""
    return f"{ratio:,.1f}" if ratio >= 1 else f"{ratio:.2g}"
