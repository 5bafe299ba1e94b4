"""The quiz: a hand-written bank (``quiz/``), a safe answer checker, keys derived by verify, exports.

Data flow: ``bank`` loads items (``definitions`` their definitions, ``variants`` each student's
numbers) -> the item's type in ``kinds`` reads the answer with ``parse`` and compares it with the key
(``equivalence`` for expressions, ``proof`` for matrix steps) -> ``check`` gives the ``verdict``;
``verify`` derives every key from the definitions; ``export`` writes the LMS files; ``notebook`` writes the quiz notebook and its autograder zip, which ships
this package's checker modules as ``attnlab_quiz/``. A submitted notebook: ``answers`` reads its
answer text without running it -> ``grading`` asks ``check`` -> results for Gradescope
(``gradescope``, the zip's entry) or many at once (``batch``); ``commands`` is the CLI.
"""

from .bank import Item, load

__all__ = ["Item", "load"]
