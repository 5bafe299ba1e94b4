"""Questions about the checker's CPU-time cap (attnlab.quiz.deadline)."""

import subprocess
import sys

# Work whose time goes mostly into __del__, where Python cannot pass an exception on: the cap's
# first signal is swallowed there, as it can be in a garbage-collector callback inside sympy.
SWALLOWING = """
from attnlab.quiz.deadline import OutOfTime, cap

class Slow:
    def __del__(self):
        x = 0
        for _ in range(200_000):
            x += 1

try:
    with cap(0.05):
        while True:
            [Slow() for _ in range(10)]
except OutOfTime:
    print("capped")
"""


def test_a_cap_ends_work_that_swallows_its_first_signal():
    """Does a capped block still end, with OutOfTime, when the first signal lands in a __del__?"""
    done = subprocess.run([sys.executable, "-c", SWALLOWING], capture_output=True, text=True, timeout=300)
    assert done.stdout.strip() == "capped"
