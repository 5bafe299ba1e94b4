"""The quiz: a hand-written bank (``quiz/``), a safe answer checker, sympy-proved keys, exports.

Data flow: ``bank`` loads items -> ``parse`` reads an answer safely -> ``equivalence`` / ``proof``
compare it with the key -> ``check`` gives the verdict; ``verify`` proves the keys; ``export``
writes the LMS files; ``notebook`` writes the quiz notebook and its autograder zip, which ships
this package's checker modules as ``attnlab_quiz/``. A submitted notebook: ``answers`` reads its
answer text without running it -> ``grading`` asks ``check`` -> results for Gradescope
(``gradescope``, the zip's entry) or many at once (``batch``); ``commands`` is the CLI.
"""

from .bank import Item, load

__all__ = ["Item", "load"]
