"""The quiz: a hand-written bank (``quiz/``), a safe answer checker, sympy-proved keys, exports.

Data flow: ``bank`` loads items -> ``parse`` reads an answer safely -> ``equivalence`` / ``proof``
compare it with the key -> ``check`` gives the verdict; ``verify`` proves the keys; ``export``
writes the LMS files; ``commands`` is the CLI.
"""

from .bank import Item, load

__all__ = ["Item", "load"]
