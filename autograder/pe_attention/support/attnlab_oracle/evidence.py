"""What a permutation checker was asked, in words: the facts of the question it answered wrongly.

``question`` works the probe out on X and on the permutations that decide the answer (those given,
or those a correct checker tries by default) and says why the right answer is what it is: for a
function that is equivariant (or invariant) there, how far apart f(P X) and P f(X) (or f(X)) come
at most and how large the outputs are, and whether f changes the width; for one that is not, which
permutation shows it, in words ("swapping rows 0 and 1"), by how much the outputs differ and, where
few entries do, how many. It says nothing about the student's code: the test names a mistake only
when a known wrong checker gives the same answers (``checkers.diagnose``).
"""

import numpy as np

from . import probes

__all__ = ["question", "permutation_words"]


def permutation_words(p):
    """``p`` (an index sequence: row i of P X is row p[i] of X) in words."""
    p = [int(i) for i in p]
    n = len(p)
    moved = [i for i in range(n) if p[i] != i]
    if not moved:
        return "the identity (no row moves)"
    if len(moved) == 2:
        return f"swapping rows {moved[0]} and {moved[1]}"
    if p == list(range(n))[::-1]:
        return "reversing the rows"
    if p == [(i + 1) % n for i in range(n)] or p == [(i - 1) % n for i in range(n)]:
        return f"rolling the rows by one ({p})"
    return f"the permutation {p}"


def _outputs(f, X, perms):
    with np.errstate(all="ignore"):
        fX = np.asarray(f(X.copy()), dtype=np.float64)
        return fX, [(tuple(int(i) for i in p), np.asarray(f(X[np.asarray(p)]), dtype=np.float64)) for p in perms]


def question(kind, probe, X, perms, kwargs):
    """Why ``probe`` (a pure one) is, or is not, ``kind`` on X under ``perms`` (None: the default
    set), in words; None for a probe that remembers its calls."""
    if not probe.pure:
        return None
    X = np.asarray(X, dtype=np.float64)
    atol = kwargs.get("atol", 1e-8)
    tried = [tuple(p) for p in perms] if perms is not None else probes.reorderings(len(X))
    fX, outputs = _outputs(probe.f, X, tried)
    wanted = "f(X)" if kind == "invariant" else "P f(X)"
    # said where f is what it is asked about despite the change of width: there the width is the point
    width = ""
    if fX.ndim in (1, 2) and fX.shape[-1] != X.shape[1]:
        into = "rows" if fX.ndim == 2 else "an output"
        width = f"; f maps rows of width {X.shape[1]} to {into} of width {fX.shape[-1]}, which the contract allows"
    if kind == "equivariant" and (fX.ndim == 0 or len(fX) != len(X)):
        return f"f(X) has shape {fX.shape}, not one row per row of X, so P f(X) does not exist"
    worst = None  # (moved rows, difference, p, shape of f(P X), shape wanted, entries that differ)
    largest = 0.0
    for p, out in outputs:
        want = fX if kind == "invariant" else fX[np.asarray(p)]
        if out.shape != want.shape:
            gap, apart = np.inf, 0
        else:
            gap = float(np.max(np.abs(out - want), initial=0.0))
            apart = int(np.count_nonzero(~np.isclose(out, want, atol=atol, rtol=1e-9)))
            if not apart:
                largest = max(largest, gap)
                continue
        moved = sum(1 for i, j in enumerate(p) if i != j)
        if worst is None or moved < worst[0]:
            worst = (moved, gap, p, out.shape, want.shape, apart)
    size = float(np.max(np.abs(fX), initial=0.0)) if fX.size else 0.0
    where = "in perms" if perms is not None else "of the rows"
    if worst is None:
        text = (
            f"f(P X) and {wanted} differ by at most {largest:.1g} for every permutation {where} (outputs up to "
            f"{size:.2g})"
            if largest
            else f"f(P X) equals {wanted} exactly for every permutation {where}"
        )
        if largest > atol:
            text += f" (more than atol={atol:g}, but within the round-off of numbers this large: atol + rtol*|b|)"
        elif fX.size > 1 and "atol" in kwargs:
            text += f" (each entry within atol={atol:g})"
        return text + width
    _, gap, p, got_shape, want_shape, apart = worst
    which = permutation_words(p) + (", which perms holds," if perms is not None else "")
    if got_shape != want_shape:
        return f"under {which} f(P X) has shape {got_shape} and {wanted} has shape {want_shape}"
    # how many entries differ, where few do: a rule that lets most entries pass answers wrongly here
    few = f" at {apart} of {fX.size} entries" if apart * 10 < fX.size else ""
    text = f"under {which} f(P X) differs from {wanted}{few} by up to {gap:.2g}"
    # the sizes say what a tolerance must absorb, where the difference is small enough for one to matter
    if gap <= 1e-2 * max(1.0, size):
        text += f" (outputs up to {size:.2g}, atol={atol:g})"
    return text
