"""What the hidden tests compare against, computed independently of the reference solution.

Values come from plain Python loops over `math` functions, never from the solution's vectorised
numpy code, so a bug shared by both cannot hide. The ``*_variants`` functions build the wrong
versions of a function from its family of mistakes (``mistakes``: one numpy implementation of the
definition whose parameters are the places a mistake can happen, each mistake one parameter turned);
when a submission's output matches one, the test message names it with the phrase
``looks like <variant>:`` (the grader counts these phrases as misconceptions), and only when no other
known variant matches too. Tests ask for the variants only when a case fails. Messages never print
expected arrays: at most where the result differs and by how much.

Tests call student code only through ``compare.call`` (or ``call_as``): the student gets copies of
the test's arrays, expected values come from the test's own data, and an exception names the call
that raised. Input mutation is checked only with ``compare.mutated_arguments`` (or
``call_noting_changes``, for a call whose result is checked too).

``memo`` keeps the expected values and variants once computed, for every later submission.

``probes`` holds the functions with known permutation behaviour that the checker tests hand to the
students' ``is_permutation_equivariant`` and ``is_permutation_invariant``; ``checkers`` names a
checker's mistake from its answers to a battery of them.

The oracle is a package, not a module: otter copies support files next to the submission, and a
second top-level ``.py`` file there would stop otter from finding a ``.py`` submission.
"""

from . import attention as _attention
from . import checkers, mistakes, probes, references  # noqa: F401
from .angles import *  # noqa: F403
from .normalised import *  # noqa: F403
from . import extensions as _extensions
from . import permutation as _permutation
from . import positional as _positional
from .attention import *  # noqa: F403
from .compare import *  # noqa: F403
from .extensions import *  # noqa: F403
from .memo import memoised
from .permutation import *  # noqa: F403
from .positional import *  # noqa: F403

# The values the tests compare with, computed once per grading worker (``memo``); what the oracle's
# own modules call stays as it is.
for _module in (_positional, _attention, _extensions, _permutation):
    for _name in _module.__all__:
        globals()[_name] = memoised(getattr(_module, _name))
