"""Saying how a wrong array differs from the right one, whatever the mistake behind it.

``difference`` looks for relations between the student's result and the expected one that can be
checked on the two arrays alone, and returns the strongest that holds, in words about the result's
own axes: the right values in another shape or axis order, an axis permuted (reversed, rolled, pairs
swapped), one constant factor or offset, slices (heads, batches, rows) scaled each by their own factor, weights that do not
sum to 1 along the axis asked for, non-finite values and where, or right on one structured part of
the array and wrong on the rest (even or odd columns, the first or last index of an axis, the
diagonal, the triangle above it, a region the caller names). Only when none holds does it fall back
to how many entries are wrong and where the largest difference is. It never names a cause: a test
names one (``looks like <mistake>:``) only when a known wrong version gives the same result.

Messages never print expected values: only indices, counts, factors and relative sizes.
"""

import itertools
from typing import NamedTuple

import numpy as np

__all__ = ["Relation", "difference"]


# an axis longer than this is not searched index by index (its slices, its reorderings): the tests'
# arrays are far smaller, and a long one must not make a failing case slow
_LONG = 64


class Relation(NamedTuple):
    kind: str  # a short key: "transposed", "factor", "permuted", "region", ... ("" for the fallback)
    text: str  # what follows the result's name, e.g. "has its rows in reverse order"


def _close(a, b, atol, rtol):
    return a.shape == b.shape and bool(np.allclose(a, b, atol=atol, rtol=rtol, equal_nan=True))


class _Axis(NamedTuple):
    """The words for one axis: ``one`` and ``many`` name its entries, ``of`` follows them when the
    axis has no name of its own ("entry 2" + " of axis 0"), ``whole`` is the axis itself."""

    one: str
    many: str
    of: str
    whole: str


def _axis(axes, ndim, k):
    """Axis ``k`` in the student's terms (``axes`` names the last axes); an unnamed one by its number,
    so that no phrase reads "the axis 0 axis"."""
    k = k % ndim
    offset = ndim - len(axes)
    if axes and k >= offset:
        name = axes[k - offset]
        return _Axis(name, _plural(name), "", f"the {name} axis")
    return _Axis("entry", "entries", f" of axis {k}", f"axis {k}")


def _plural(name):
    if name.endswith("s"):
        return name
    return f"{name[:-1]}ies" if name.endswith("y") and name[-2:-1] not in "aeiou" else f"{name}s"


def _indices(idx, limit=6):
    shown = ", ".join(str(i) for i in idx[:limit])
    return shown + (", ..." if len(idx) > limit else "")


# ---- results of another shape


def _shape_relation(got, expected, axes, atol, rtol):
    where = f"has shape {got.shape}, expected {expected.shape}"
    if got.ndim == expected.ndim >= 2 and sorted(got.shape) == sorted(expected.shape):
        for order in _axis_orders(expected.ndim):
            moved = np.transpose(expected, order)
            if moved.shape == got.shape and _close(got, moved, atol, rtol):
                if order == tuple(range(expected.ndim - 2)) + (expected.ndim - 1, expected.ndim - 2):
                    return Relation("transposed", f"{where}: it is the right result transposed (last two axes swapped)")
                return Relation("axes", f"{where}: it holds the right values with the axes in the order {order}")
    if got.ndim == expected.ndim + 1:
        for k in range(got.ndim):
            if got.shape[:k] + got.shape[k + 1 :] == expected.shape:
                if got.shape[k] == 1:
                    values = (
                        "the right values" if _close(got.reshape(expected.shape), expected, atol, rtol) else "values"
                    )
                    return Relation("extra axis", f"{where}: {values} with an extra axis of length 1 at position {k}")
                if all(_close(s, expected, atol, rtol) for s in np.moveaxis(got, k, 0)):
                    return Relation("extra axis", f"{where}: the right result repeated along an extra axis {k}")
    if got.ndim + 1 == expected.ndim:
        for k in range(expected.ndim):
            if expected.shape[:k] + expected.shape[k + 1 :] == got.shape:
                whole = _axis(axes, expected.ndim, k).whole
                for i in range(expected.shape[k]):
                    if _close(got, np.take(expected, i, axis=k), atol, rtol):
                        only = f"only index {i} of {whole}" if expected.shape[k] > 1 else "the right values"
                        return Relation("missing axis", f"{where}: {only}, with that axis ({k}) missing")
    if got.size == expected.size and got.size > 1 and _close(got.ravel(), expected.ravel(), atol, rtol):
        return Relation("reshaped", f"{where}: the right values in the right order, reshaped")
    return Relation("shape", where)


def _axis_orders(ndim):
    return [p for p in itertools.permutations(range(ndim)) if p != tuple(range(ndim))]


# ---- results of the right shape


def _nonfinite(got, expected, axes):
    bad = ~np.isfinite(got) & np.isfinite(expected)
    if not bad.any():
        return None
    kinds = " and ".join(k for k, m in (("nan", np.isnan(got) & bad), ("inf", np.isinf(got) & bad)) if m.any())
    if bad.all():
        return Relation("nonfinite", f"has {kinds} at every entry")
    where = _where(bad, axes) or f"first at index {tuple(int(i) for i in np.argwhere(bad)[0])}"
    return Relation("nonfinite", f"has {kinds} at {int(bad.sum())} of {bad.size} entries ({where})")


def _permutation(got, expected, axes, atol, rtol):
    """The one axis along which the result is the right one with its slices reordered."""
    for k in range(got.ndim):
        n = got.shape[k]
        if not 2 <= n <= _LONG:
            continue
        g, e = np.moveaxis(got, k, 0), np.moveaxis(expected, k, 0)
        source = []
        for i in range(n):
            hits = [j for j in range(n) if _close(g[i], e[j], atol, rtol)]
            if not hits:
                break
            source.append(i if i in hits else hits[0])
        if len(source) != n or source == list(range(n)) or sorted(source) != list(range(n)):
            continue
        return Relation("permuted", _order_text(source, _axis(axes, got.ndim, k)))
    return None


def _order_text(source, axis):
    n, one, names = len(source), axis.one, f"{axis.many}{axis.of}"
    if source == list(range(n))[::-1]:
        return f"has the right {names} in reverse order"
    for s in range(1, n):
        if source == [(i - s) % n for i in range(n)]:
            return f"has the right {names} shifted by {s}: {one} i holds the right {one} i - {s} (wrapping around)"
    if n % 2 == 0 and source == [i ^ 1 for i in range(n)]:
        return f"has the right {names} with each pair 2i, 2i+1 swapped"
    return f"has the right {names} in another order: {one} i holds the right {one} {source}[i]"


def _factor(got, expected, atol, rtol):
    finite = np.isfinite(expected) & np.isfinite(got)
    big = finite & (np.abs(expected) > 1e-6 * max(float(np.max(np.abs(expected[finite]), initial=0.0)), 1e-300))
    if big.sum() < 2:
        return None
    factor = float(np.median(got[big] / expected[big]))
    # a result that is 0 (within tolerance) everywhere is no scaled copy of the right one, whatever
    # the median ratio says: it is said as zeros, without the hint of a misplaced scale
    zeros = _close(got, np.zeros_like(expected), atol, rtol)
    if abs(factor - 1) > 1e-3 and not zeros and _close(got, factor * expected, atol, rtol):
        if abs(factor + 1) < 1e-6:
            return Relation("sign", "has the right values with the opposite sign")
        return Relation("factor", f"is {factor:.4g} times the right result at every entry")
    return None


def _offset(got, expected, atol, rtol):
    shift = float(np.median(got - expected))
    if abs(shift) > atol and _close(got, expected + shift, atol, rtol):
        return Relation("offset", f"is the right result plus {shift:.4g} at every entry")
    return None


def _sums(got, expected, axis, axes, atol):
    """Weights that should sum to 1 along ``axis``: say where they do not, or where they do instead."""
    if axis is None or not np.isfinite(got).all():
        return None
    sums = got.sum(axis=axis)
    if np.allclose(sums, 1.0, atol=1e-6):
        return None
    along = _axis(axes, got.ndim, axis).whole
    low, high = f"{float(sums.min()):.3g}", f"{float(sums.max()):.3g}"
    text = (
        f"does not sum to 1 along {along} (" + (f"sums to {low}" if low == high else f"sums from {low} to {high}") + ")"
    )
    # slices of nothing but 0 where the right ones have weight (an exp that underflowed): said as
    # such, not as a normalisation, which a slice with no weight left says nothing about
    empty = np.all(got == 0, axis=axis, keepdims=True) & ~np.all(expected == 0, axis=axis, keepdims=True)
    if empty.any():
        where = _where(np.broadcast_to(empty, got.shape), axes)
        return Relation("sums", f"{text}; it is 0 at every entry of {where}" if where else text)
    for other in range(got.ndim):
        if other != axis % got.ndim and np.allclose(got.sum(axis=other), 1.0, atol=1e-6):
            text += f"; it sums to 1 along {_axis(axes, got.ndim, other).whole} instead"
            break
    else:
        ratio = np.divide(got, expected, out=np.full(got.shape, np.nan), where=np.abs(expected) > atol)
        spread = np.nanmax(ratio, axis=axis) - np.nanmin(ratio, axis=axis)
        if np.isfinite(spread).all() and np.all(spread < 1e-6 * np.maximum(1, np.nanmax(np.abs(ratio)))):
            text += "; each slice along it is proportional to the right one (normalised differently)"
    return Relation("sums", text)


def _proportional(got, expected, axes, atol, rtol):
    """Each slice along one axis is the right slice times a factor of its own."""
    for k in range(got.ndim):
        if got.shape[k] < 2:
            continue
        e = np.moveaxis(expected, k, -1).reshape(-1, got.shape[k])
        g = np.moveaxis(got, k, -1).reshape(-1, got.shape[k])
        factors = []
        for row_g, row_e in zip(g, e):
            j = int(np.argmax(np.abs(row_e)))
            if abs(row_e[j]) <= atol:
                break
            factors.append(row_g[j] / row_e[j])
            if not _close(row_g, factors[-1] * row_e, atol, rtol):
                break
        else:
            if np.ptp(factors) > 1e-6 * max(1.0, float(np.max(np.abs(factors)))):
                other = _axis(axes, 2, 1 - k) if got.ndim == 2 else None
                if other and not other.of:
                    slices = f"each {other.one} is the right {other.one}"
                else:
                    slices = f"each vector along {_axis(axes, got.ndim, k).whole} is the right one"
                return Relation(
                    "proportional",
                    f"is wrong, but {slices} times a factor of its own (from {min(factors):.3g} to {max(factors):.3g})",
                )
    return None


def _slice_factors(got, expected, axes, atol, rtol):
    """Each slice along a leading axis (a head, a batch) is the right slice times a factor of its
    own, not all the same: said before any region, since the entries a slice has at 0 (a bias's
    diagonal) are right whatever its factor."""
    for k in range(got.ndim - 2):
        if not 2 <= got.shape[k] <= _LONG:
            continue
        factors = []
        for g, e in zip(np.moveaxis(got, k, 0), np.moveaxis(expected, k, 0)):
            j = np.unravel_index(int(np.argmax(np.abs(e))), e.shape)
            if abs(e[j]) <= atol or not _close(g, (g[j] / e[j]) * e, atol, rtol):
                break
            factors.append(float(g[j] / e[j]))
        else:
            if np.ptp(factors) > 1e-6 * max(1.0, float(np.max(np.abs(factors)))):
                axis = _axis(axes, got.ndim, k)
                shown = ", ".join(f"{f:.3g}" for f in factors[:8])
                which = f"{axis.many} 0 to {len(factors) - 1}" if len(factors) <= 8 else f"the first 8 {axis.many}"
                return Relation(
                    "proportional",
                    f"is wrong, but each {axis.one}{axis.of} is the right one times a factor of its own "
                    f"({shown} for {which})",
                )
    return None


def _parts(shape, axes, regions):
    """(part, mask, the rest): the structured parts a result can be right on and wrong on."""
    ndim = len(shape)
    for name, mask in regions:
        yield name, np.broadcast_to(np.asarray(mask, dtype=bool), shape), "the other entries"
    if ndim >= 2 and shape[-1] == shape[-2] and shape[-1] > 1:
        i, j = np.indices(shape[-2:])
        for name, m, rest in (
            ("the diagonal", i == j, "the entries off it"),
            ("the entries off the diagonal", i != j, "the diagonal"),
            ("the entries above the diagonal", j > i, "the diagonal and below"),
            ("the entries below the diagonal", j < i, "the diagonal and above"),
            ("the diagonal and below", j <= i, "the entries above the diagonal"),
            ("the diagonal and above", j >= i, "the entries below the diagonal"),
        ):
            yield name, np.broadcast_to(m, shape), rest
    if shape[-1] > 1:
        odd = np.arange(shape[-1]) % 2 == 1
        axis = _axis(axes, ndim, -1)
        last = f"{axis.many}{axis.of}"
        yield f"the odd {last} (1, 3, ...)", np.broadcast_to(odd, shape), f"the even {last}"
        yield f"the even {last} (0, 2, ...)", np.broadcast_to(~odd, shape), f"the odd {last}"
    for k in range(ndim):
        n, (one, _, of, _) = shape[k], _axis(axes, ndim, k)
        if n < 2:
            continue
        index = np.arange(n).reshape((n,) + (1,) * (ndim - k - 1))
        first, last = f"the first {one}{of}", f"the last {one}{of}"
        for i in range(n) if n <= _LONG else (0, n - 1):
            shown = first if i == 0 else last if i == n - 1 else f"{one} {i}{of}"
            yield shown, np.broadcast_to(index == i, shape), f"every other {one}{of}"
        yield f"every {one}{of} but the first", np.broadcast_to(index > 0, shape), first
        yield f"every {one}{of} but the last", np.broadcast_to(index < n - 1, shape), last


def _region(wrong, axes, regions):
    """The smallest named part that holds every wrong entry and is wrong at most of its own."""
    best = None
    for name, part, rest in _parts(wrong.shape, axes, regions):
        if part.all() or not part.any() or (wrong & ~part).any():
            continue
        share = int(wrong.sum()) / int(part.sum())
        if share >= 0.5 and (best is None or part.sum() < best[1].sum()):
            best = (name, part, rest)
    if best is None:
        return None
    name, part, rest = best
    count = f"{int((wrong & part).sum())} of {int(part.sum())} entries there"
    return Relation("region", f"is right on {rest} and wrong on {name} ({count})")


def _zeros(got, expected, axes, regions):
    """Exact zeros on a whole named part where the right result has none (a mask where none is due,
    or the wrong region blocked)."""
    zero = (got == 0) & (expected != 0)
    if zero.sum() < 2:
        return None
    for name, part, _ in _parts(got.shape, axes, regions):
        if np.array_equal(part, zero):
            return Relation("zeros", f"is exactly 0 on {name}, where the right result is not")
    return None


def _where(mask, axes):
    """Words for where ``mask`` holds: a named part, or the indices along the first axis."""
    for name, part, _ in _parts(mask.shape, axes, ()):
        if np.array_equal(part, mask):
            return name
    if mask.ndim and mask.shape[0] > 1:
        rows = [i for i in range(mask.shape[0]) if mask[i].any()]
        axis = _axis(axes, mask.ndim, 0)
        return f"{axis.many if len(rows) > 1 else axis.one} {_indices(rows)}{axis.of}"
    return None


def _fallback(got, expected, atol, rtol):
    wrong = ~np.isclose(got, expected, atol=atol, rtol=rtol, equal_nan=True)
    err = np.where(np.isfinite(expected), np.abs(got - expected), 0.0)
    idx = tuple(int(i) for i in np.unravel_index(np.argmax(err), err.shape))
    scale = float(np.max(np.abs(expected[np.isfinite(expected)]), initial=0.0))
    text = f"is wrong at {int(wrong.sum())} of {wrong.size} entries; the largest difference is at index {idx}: {err[idx]:.3g}"
    if scale > 0:
        relative = float(err[idx]) / scale
        text += f" ({relative:.2g} of the largest expected magnitude)"
        if relative < 1e-4:
            text += f": a difference this small still counts (results must agree to rtol={rtol:g}, atol={atol:g})"
            if np.array_equal(got.astype(np.float32).astype(np.float64), got):
                text += "; every entry is a float32 number: compute in float64"
    return Relation("", text)


def difference(got, expected, *, axes=(), sums_to_one=None, regions=(), atol=1e-8, rtol=1e-6):
    """The strongest relation between a wrong result ``got`` and the right ``expected`` (a ``Relation``).

    ``axes`` names the last axes in the student's terms, e.g. ("query", "key") for attention
    weights; ``sums_to_one``: the axis along which the result must sum to 1 (softmax weights);
    ``regions``: ``(name, boolean mask)`` parts the test knows about, e.g. the entries a mask blocks.
    """
    got = np.asarray(got, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    if got.shape != expected.shape:
        return _shape_relation(got, expected, axes, atol, rtol)
    with np.errstate(all="ignore"):
        found = _nonfinite(got, expected, axes)
        if found:
            return found
        if got.ndim >= 2 and got.shape[-1] == got.shape[-2]:
            flipped = np.swapaxes(expected, -1, -2)
            if not _close(flipped, expected, atol, rtol) and _close(got, flipped, atol, rtol):
                return Relation("transposed", "is the right result transposed (last two axes swapped)")
        for look in (
            lambda: _factor(got, expected, atol, rtol),
            lambda: _offset(got, expected, atol, rtol),
            lambda: _permutation(got, expected, axes, atol, rtol),
            lambda: _sums(got, expected, sums_to_one, axes, atol),
            lambda: _zeros(got, expected, axes, regions),
            lambda: _slice_factors(got, expected, axes, atol, rtol),
            lambda: _region(~np.isclose(got, expected, atol=atol, rtol=rtol, equal_nan=True), axes, regions),
            lambda: _proportional(got, expected, axes, atol, rtol),
        ):
            found = look()
            if found:
                return found
        return _fallback(got, expected, atol, rtol)
