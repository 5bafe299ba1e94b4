"""One module per question type, each behind the interface of :class:`base.Kind`: which bank fields
it uses, how an answer is read and checked, how the notebook asks for it, how the LMS exports carry
it, and how ``verify`` derives its key. ``KINDS`` maps each bank ``type`` to its kind."""

from __future__ import annotations

from .base import Kind
from .chain import Chain
from .choice import Choice
from .expression import Expression
from .free import Free
from .numeric import Numeric
from .order import Order
from .proof_step import ProofStep

KINDS: dict[str, Kind] = {
    "symbolic": Expression("symbolic"),
    "matrix": Expression("matrix"),
    "numeric": Numeric(),
    "choice": Choice(),
    "proof": ProofStep(),
    "chain": Chain(),
    "order": Order(),
    "free": Free(),
}

__all__ = ["KINDS", "Kind"]
