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


def _run(script: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


# Two threads hash in parallel with the capped work (hashing releases the GIL), so the process
# spends CPU time two or three times as fast as the thread doing the work.
BUSY_THREADS = """
import hashlib, threading, time
from attnlab.quiz.deadline import OutOfTime, cap

data = bytes(64 << 20)

def burn():
    while True:
        hashlib.sha256(data).digest()

for _ in range(2):
    threading.Thread(target=burn, daemon=True).start()
time.sleep(0.1)
try:
    with cap(0.3):
        start = time.thread_time()
        while time.thread_time() - start < 0.15:  # half the budget, of this thread's time
            pass
    print("finished")
except OutOfTime:
    print("capped")
"""


def test_other_threads_of_the_process_leave_the_budget_alone():
    """Does work that needs half its budget finish while other threads of the same process burn
    CPU beside it (a progress bar, a pipe's drain, a server's thread)?"""
    assert _run(BUSY_THREADS) == ["finished"]


# A collection of a large heap costs the heap's size, whatever the capped work is; here it alone
# takes twice the budget.
FULL_COLLECTION = """
import gc, time
from attnlab.quiz.deadline import OutOfTime, cap

heap = [[i] for i in range(2_000_000)]
start = time.thread_time()
gc.collect()
full = time.thread_time() - start
try:
    with cap(full / 2):
        gc.collect()
        sum(range(1000))
    print("finished")
except OutOfTime:
    print("capped")
"""


def test_a_full_collection_of_the_heap_leaves_the_budget_alone():
    """Does cheap work finish when a collection of the whole (large) heap happens inside its cap?"""
    assert _run(FULL_COLLECTION) == ["finished"]


# The budget runs out while its signal is held back; the signal then arrives at the very moment the
# cap closes (when it stops its timer).
SIGNAL_AT_CLOSE = """
import signal, time
from attnlab.quiz.deadline import OutOfTime, cap

real = signal.setitimer

def setitimer(which, seconds, interval=0.0):
    if seconds == 0:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGPROF})
    return real(which, seconds, interval)

signal.setitimer = setitimer
try:
    with cap(0.05):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGPROF})
        start = time.process_time()
        while time.process_time() - start < 0.2:
            pass
except OutOfTime:
    pass
outcomes = []
for _ in range(3):
    try:
        with cap(5):
            sum(range(1000))
        outcomes.append("ran")
    except OutOfTime:
        outcomes.append("capped")
print(*outcomes)
"""


def test_a_signal_that_arrives_as_a_cap_closes_leaves_no_trace():
    """Does a cap's late signal, arriving while the cap closes, leave later caps their full budget
    (rather than a closed cap's spent one, which would send every later answer to a human)?"""
    assert _run(SIGNAL_AT_CLOSE) == ["ran", "ran", "ran"]
