"""Per-student numbers for the 2-D attention illustration of note 000, reproducible from a seed.

With no seed the numbers are the notes' own (X1 = [0.10, 1.30], X2 = [1.74, 0.64], W_Q, W_K as
printed); with a seed such as a student id every student gets other inputs, and the key is
recomputed from them, never pasted.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

import numpy as np

NOTES = {
    "X": np.array([[0.10, 1.30], [1.74, 0.64]]),
    "W_Q": np.array([[1.0, 2.0], [3.0, 1.0]]),
    "W_K": np.array([[2.0, 1.0], [1.0, 3.0]]),
}
_PLACEHOLDER = re.compile(r"<<(X1|X2|W_Q|W_K)>>")


@dataclass(frozen=True)
class Illustration:
    """The inputs of the illustration and what follows from them (row-vector convention)."""

    X: np.ndarray
    W_Q: np.ndarray
    W_K: np.ndarray

    @property
    def scores(self) -> np.ndarray:
        """Raw, unscaled scores: Score(i, j) = Q_i . K_j."""
        return (self.X @ self.W_Q) @ (self.X @ self.W_K).T

    @property
    def weights(self) -> np.ndarray:
        s = self.scores
        e = np.exp(s - s.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def value(self, quantity: str, row: int, col: int) -> float:
        """``score`` or ``weight`` at 1-based (row, col), as the notes number words."""
        table = {"score": self.scores, "weight": self.weights}[quantity]
        return float(table[row - 1, col - 1])

    def render(self, prompt: str) -> str:
        """The prompt with ``<<X1>>``, ``<<X2>>``, ``<<W_Q>>``, ``<<W_K>>`` filled in."""
        values = {"X1": _vector(self.X[0]), "X2": _vector(self.X[1]),
                  "W_Q": _matrix(self.W_Q), "W_K": _matrix(self.W_K)}
        return _PLACEHOLDER.sub(lambda m: values[m.group(1)], prompt)


def illustration(*, student: str | None = None) -> Illustration:
    """The notes' numbers, or a student's own: two-decimal inputs, small integer weights."""
    if not student:
        return Illustration(**NOTES)
    digest = hashlib.sha256(f"attnlab-quiz:{student}".encode()).digest()
    rng = np.random.default_rng(int.from_bytes(digest[:8], "big"))
    X = np.round(rng.uniform(0.0, 2.0, size=(2, 2)), 2)
    W_Q, W_K = (rng.integers(1, 4, size=(2, 2)).astype(float) for _ in range(2))
    return Illustration(X=X, W_Q=W_Q, W_K=W_K)


def _vector(v: np.ndarray) -> str:
    return "[" + ", ".join(f"{x:.2f}" for x in v) + "]"


def _matrix(m: np.ndarray) -> str:
    rows = r" \\ ".join(" & ".join(f"{x:g}" for x in row) for row in m)
    return r"\begin{pmatrix} " + rows + r" \end{pmatrix}"
