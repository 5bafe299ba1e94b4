"""Reading a wrong sinusoidal result as angles: which position each row encodes, how fast each pair turns.

The encoding (and rope, which turns pairs of coordinates by the same angles) is right when pair i of
row m holds the angle pos_m * w_i, with w_i = base**(-2i/d). A wrong one often still holds sines and
cosines of steady angles, and then one of two relations says how it differs, whatever the mistake:

- its rows are the encodings of other positions (one position per row, the same for every pair),
  e.g. "positions 0, 1.167, ..., 7, not 0 to 6: every position times 1.167";
- its pairs turn at other rates (one rate per pair, the same for every row), e.g. "its rates are
  base**(-2i/9), those of d_model = 9".

Each is read from the arrays (an angle per pair and row), then checked by rebuilding the whole
result from it: a relation that does not rebuild every entry is not said. A ``*_reading`` function
gives the test a function of the student's result, for ``compare.assert_close(relation=...)``.
"""

import math

import numpy as np

from .describe import Relation

__all__ = ["pe_reading", "add_pe_reading", "rope_reading"]

DEFAULT_BASE = 10000  # the base the docstrings give


def _rates(count, d, base):
    return base ** (-2.0 * np.arange(count) / d)


def _pe_table(positions, rates, d):
    angles = np.asarray(positions, dtype=np.float64)[:, None] * rates[None, :]
    out = np.empty((len(positions), d))
    out[:, 0::2] = np.sin(angles)
    out[:, 1::2] = np.cos(angles[:, : d // 2])
    return out


def _pe_angles(got):
    """The angle of every (sin, cos) pair of columns, or None where the pairs are no sines and cosines."""
    s, c = got[:, 0 : 2 * (got.shape[1] // 2) : 2], got[:, 1::2]
    if s.size == 0 or not np.allclose(s**2 + c**2, 1.0, atol=1e-9):
        return None
    angles = np.arctan2(s, c)
    if got.shape[1] % 2:  # the last column of an odd width is a sine alone: its angle is not read
        angles = np.concatenate([angles, np.full((got.shape[0], 1), np.nan)], axis=1)
    return angles


def _rotated(X, positions, rates):
    out = np.array(X, dtype=np.float64)
    angles = np.asarray(positions, dtype=np.float64)[:, None] * rates[None, :]
    a, b = X[:, 0::2], X[:, 1::2]
    out[:, 0::2] = a * np.cos(angles) - b * np.sin(angles)
    out[:, 1::2] = a * np.sin(angles) + b * np.cos(angles)
    return out


def _rope_angles(got, X):
    """The angle each pair of ``X`` was turned by to give ``got``, or None where ``got``'s pairs are
    no turns of ``X``'s (lengths changed); nan for a pair of zeros, which every angle leaves alone."""
    a, b, u, v = X[:, 0::2], X[:, 1::2], got[:, 0::2], got[:, 1::2]
    length = a**2 + b**2
    if not np.allclose(u**2 + v**2, length, atol=1e-9, rtol=1e-7):
        return None
    angles = np.arctan2(a * v - b * u, a * u + b * v)
    return np.where(length > 1e-12, angles, np.nan)


def _list(values, limit=7):
    shown = [f"{v:.6g}" if abs(v) >= 100 else f"{v:.4g}" for v in values]
    if len(shown) > limit:
        shown = [*shown[:3], "...", *shown[-2:]]
    return ", ".join(shown)


def _span(positions):
    n = len(positions)
    if n > 2 and np.array_equal(positions, np.arange(n)):
        return f"0 to {n - 1}"
    return _list(positions)


def _by_position(angles, positions, rates, rebuild, got):
    """Each row the encoding of one position of its own: the positions, or None."""
    found = []
    for m, row in enumerate(angles):
        readable = np.flatnonzero(np.isfinite(row))
        if readable.size == 0:
            return None
        k = readable[np.argmin(rates[readable])]  # the slowest pair: its angle wraps last
        turn = 2 * math.pi / rates[k]
        p = row[k] / rates[k]
        found.append(p + turn * round((positions[m] - p) / turn))
    found = np.array(found)
    if np.allclose(found, positions, atol=1e-9) or not _rebuilds(rebuild(found, rates), got):
        return None
    return found


def _positions_text(found, positions, holds):
    text = f"{holds} positions {_list(found)}, not of positions {_span(positions)}"
    moving = positions != 0
    if moving.any() and np.allclose(found[~moving], 0, atol=1e-9):
        ratio = found[moving] / positions[moving]
        if np.allclose(ratio, ratio[0], rtol=1e-9):
            return f"{text}: every position times {ratio[0]:.6g}"
    shift = found - positions
    if np.allclose(shift, shift[0], atol=1e-9):
        return f"{text}: every position plus {shift[0]:.6g}"
    return text


def _by_rate(angles, positions, rates, base, rebuild, got):
    """Each pair turning at one rate of its own: the rates, or None. A pair whose angle cannot be
    read (a lone sine) gets the rate the others' fit gives, or the right one."""
    moving = np.flatnonzero(positions != 0)
    if moving.size == 0:
        return None
    found = np.full(len(rates), np.nan)
    for k in range(angles.shape[1]):
        readable = [m for m in moving if np.isfinite(angles[m, k])]
        if not readable:
            continue
        m = min(readable, key=lambda r: abs(positions[r]))
        turn = 2 * math.pi
        angle = angles[m, k] + turn * round((rates[k] * positions[m] - angles[m, k]) / turn)
        found[k] = angle / positions[m]
    # a rate read off whole positions is known only up to a full turn per position: one above the
    # fastest right rate (1) or below 0 could be said as another, and is not said at all
    if not np.all((found[np.isfinite(found)] > 0) & (found[np.isfinite(found)] <= 1 + 1e-9)):
        return None
    fitted = _fit_width(found, base)
    for fill in ([] if fitted is None else [fitted[1]]) + [rates]:
        candidate = np.where(np.isfinite(found), found, fill)
        if not np.allclose(candidate, rates, rtol=1e-9) and _rebuilds(rebuild(positions, candidate), got):
            return candidate
    return None


def _fit_width(found, base):
    """The rates base**(-2i/D) of one width D that ``found`` follows, as rates for every pair; None
    when no one D fits."""
    ks = [k for k in range(1, len(found)) if np.isfinite(found[k]) and 0 < found[k] < 1]
    if not ks or base <= 1:
        return None
    widths = [2 * k * math.log(base) / -math.log(found[k]) for k in ks]
    if not np.allclose(widths, widths[0], rtol=1e-7):
        return None
    return widths[0], _rates(len(found), widths[0], base)


def _rates_text(found, rates, d, base, count, pair, width_name):
    """``pair`` names pair i ("pair i (columns 2i, 2i+1)")."""
    right = f"base**(-2i/{d:g})"
    fitted = _fit_width(found, base)
    if fitted is not None and np.allclose(fitted[1], found, rtol=1e-9):
        width = fitted[0]
        # the same rates read as another base: said when that base is the docstring's default, or
        # when no whole width reads them
        other = base ** (d / width)  # base**(-2i/width) = other**(-2i/d)
        if math.isclose(other, round(other), rel_tol=1e-9) and (
            round(other) == DEFAULT_BASE or not math.isclose(width, round(width), rel_tol=1e-9)
        ):
            return f"turns {pair} at the rate base = {round(other)} gives, not base = {base:g}"
        if math.isclose(width, round(width), rel_tol=1e-9):
            rounded = round(width)
            # a size of the call that equals the width, said only when it is the one size that does:
            # two that coincide (n = d_model - 1) would point at one of them by chance
            sizes = [f"the number of {count[1]}"] * (rounded == count[0]) + [f"{width_name} - 1"] * (rounded == d - 1)
            known = f" ({rounded} is {sizes[0]})" if len(sizes) == 1 else ""
            return (
                f"turns {pair} by base**(-2i/{rounded}) per position, the rate of {width_name} = {rounded}{known}, "
                f"not {right}"
            )
        return f"turns {pair} by base**(-2i/{width:.4g}) per position, not {right}"
    if np.allclose(found, found[0], rtol=1e-9):
        return f"turns every pair by {found[0]:.4g} per position, where {pair} should turn by {right}"
    wrong = [k for k in range(len(rates)) if not math.isclose(found[k], rates[k], rel_tol=1e-9)]
    which = ", ".join(str(k) for k in wrong[:6]) + (", ..." if len(wrong) > 6 else "")
    plural = "s" if len(wrong) > 1 else ""
    return f"turns pairs 0 to {len(found) - 1} by {_list(found)} per position: pair{plural} {which} not by {right}"


def _rebuilds(built, got):
    return built.shape == got.shape and bool(np.allclose(built, got, atol=1e-8, rtol=1e-6))


def _reading(angles_of, rebuild, positions, d, base, *, holds, count, pair, width_name):
    """The relation function: ``holds`` says what the rows hold ("has in its rows the encodings of"),
    ``count`` is (n, what n counts),
    ``pair`` names a pair, ``width_name`` the width d."""
    positions = np.asarray(positions, dtype=np.float64)
    rates = _rates((d + 1) // 2, d, base)

    def relation(got):
        got = np.asarray(got, dtype=np.float64)
        with np.errstate(all="ignore"):
            if got.ndim != 2 or got.shape[0] != len(positions) or not np.isfinite(got).all():
                return None
            angles = angles_of(got)
            if angles is None:
                return None
            found = _by_position(angles, positions, rates, rebuild, got)
            if found is not None:
                return Relation("positions", _positions_text(found, positions, holds))
            found = _by_rate(angles, positions, rates, base, rebuild, got)
            if found is not None:
                return Relation("rates", _rates_text(found, rates, d, base, count, pair, width_name))
        return None

    return relation


def pe_reading(seq_len, d_model, base=10000.0, *, positions=None):
    """For a result meant to be ``sinusoidal_pe(seq_len, d_model, base)`` (its rows ``positions``
    only, when given): a function of the student's result giving the relation that holds, or None."""
    positions = np.arange(seq_len) if positions is None else np.asarray(positions)
    return _reading(
        _pe_angles,
        lambda p, r: _pe_table(p, r, d_model),
        positions,
        d_model,
        base,
        holds="has in its rows the encodings of",
        count=(seq_len, "positions"),
        pair="pair i (columns 2i, 2i+1)",
        width_name="d_model",
    )


def add_pe_reading(E, base=10000.0):
    """``pe_reading`` for ``E + sinusoidal_pe``: read on the result minus ``E``."""
    E = np.asarray(E, dtype=np.float64)
    inner = pe_reading(*E.shape, base)
    return lambda got: inner(np.asarray(got, dtype=np.float64) - E) if np.shape(got) == E.shape else None


def rope_reading(X, base=10000.0):
    """For a result meant to be ``rope(X, base)``: a function of the student's result giving the
    relation that holds, or None."""
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    return _reading(
        lambda got: _rope_angles(got, X),
        lambda p, r: _rotated(X, p, r),
        np.arange(n),
        d,
        base,
        holds="turns its rows by the angles of",
        count=(n, "rows"),
        pair="pair i (coordinates 2i, 2i+1)",
        width_name="d",
    )
