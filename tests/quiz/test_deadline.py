"""Questions about the checker's CPU-time cap (attnlab.quiz.deadline)."""

import subprocess
import sys

# The cap's first signal lands, for certain, in a __del__ that never returns on its own: Python
# cannot pass an exception on from there (as in a garbage-collector callback inside sympy), so it
# is swallowed and only ends that __del__. The work after it must still be capped. (Work that
# spends nearly all its time in finalizers can outlast any in-process cap, since every signal
# may land in one; the quiz caps sympy on parsed answers, which runs no finalizers of its own.)
SWALLOWING = """
from attnlab.quiz.deadline import OutOfTime, cap

class Endless:
    def __del__(self):
        while True:
            pass

try:
    with cap(0.05):
        Endless()
        print("first signal swallowed", flush=True)
        while True:
            pass
except OutOfTime:
    print("capped")
"""


def test_a_cap_ends_work_that_swallows_its_first_signal():
    """Does a capped block still end, with OutOfTime, when the first signal lands in a __del__?"""
    done = subprocess.run([sys.executable, "-c", SWALLOWING], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["first", "signal", "swallowed", "capped"]


def test_a_swallowed_signal_reaches_no_unraisable_hook():
    """Is an OutOfTime that Python swallows in a __del__ kept from the unraisable-exception hook (which
    would print it, or format a traceback while the next repeat fires) and the hook put back after?"""
    hooked = (
        "import sys\nseen = []\nmine = lambda u: seen.append(type(u.exc_value).__name__)\n"
        "sys.unraisablehook = mine\n" + SWALLOWING + "print('seen', *seen, sys.unraisablehook is mine)\n"
    )
    done = subprocess.run([sys.executable, "-c", hooked], capture_output=True, text=True, timeout=60)
    assert done.stdout.split()[-2:] == ["seen", "True"], done.stdout
    assert "Exception ignored" not in done.stderr, done.stderr
