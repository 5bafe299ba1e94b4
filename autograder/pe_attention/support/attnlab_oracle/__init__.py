"""What the hidden tests compare against, computed independently of the reference solution.

Values come from plain Python loops over `math` functions, never from the solution's vectorised
numpy code, so a bug shared by both cannot hide. The ``*_variants`` functions reproduce mistakes
students really make; when a submission's output matches one, the test message names it with the
phrase ``looks like <variant>:`` (the grader counts these phrases as misconceptions). Messages never
print expected arrays: at most the first differing index and the size of the error.

``probes`` holds the functions with known permutation behaviour that the checker tests hand to the
students' ``is_permutation_equivariant`` and ``is_permutation_invariant``.

The oracle is a package, not a module: otter copies support files next to the submission, and a
second top-level ``.py`` file there would stop otter from finding a ``.py`` submission.
"""

from . import probes  # noqa: F401
from .attention import *  # noqa: F401,F403
from .compare import *  # noqa: F401,F403
from .extensions import *  # noqa: F401,F403
from .permutation import *  # noqa: F401,F403
from .positional import *  # noqa: F401,F403
