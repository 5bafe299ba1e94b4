"""The grading channel gives student code nothing to exploit: copies of the inputs, functions it can
only call, no hidden case before the submission has run, and a trusted side that never waits
without a deadline or dies of what it receives."""

import ast
import os
import resource
import socket
import struct
import time

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab import paths, testfiles
from attnlab.grade import protocol, sandbox_names, wire
from attnlab.grade.runner import Grader, Limits
from attnlab.grade.session import Output, Sandbox, StudentTimeout, Zygote

from known_outcomes import FIXTURES


@pytest.fixture(scope="module")
def zygote():
    import os

    from attnlab.grade.worker import claim_uid

    uid, lock = claim_uid() if os.geteuid() == 0 else (None, None)
    z = Zygote(uid=uid, gid=uid, memory_mb=1024, cpu_seconds=60)
    yield z
    z.close()
    if lock is not None:
        os.close(lock)


def start(zygote, code: str) -> Sandbox:
    sb = zygote.spawn(Output())
    sb.request("load", [code], 10, "compiling")
    for j in range(len(ast.parse(code).body)):
        assert sb.request("exec", (0, j), 10, "executing") is None
    return sb


def test_does_each_side_serve_exactly_the_requests_the_protocol_lists():
    assert sandbox_names.runtime_requests() == protocol.requests_served_by("sandbox")
    assert sandbox_names.trusted_requests() == protocol.requests_served_by("worker")


def test_are_a_tests_arrays_untouched_when_the_student_mutates_its_copy(zygote):
    sb = start(zygote, "def scale(x, *, y=None):\n    x *= 2\n    return x.sum()\n")
    x, y = np.ones(3), np.ones(2)
    result, changed = sb.call("scale", None, (x,), {"y": y}, 10)
    assert result == 6.0 and changed == [0]
    assert np.array_equal(x, np.ones(3))
    sb.kill()


def test_does_a_call_tell_which_arguments_it_changed_whatever_the_change(zygote):
    """Values, shape or dtype changed in place, by position or keyword; the untouched ones not."""
    sb = start(
        zygote,
        "import numpy as np\n"
        "def change(a, b, c, same, *, d, e):\n"
        "    a *= 2\n"
        "    b.shape = (3, 2)\n"
        "    c.dtype = np.int64\n"
        "    d[0] = 0.0\n",
    )
    args = (np.ones(3), np.zeros((2, 3)), np.ones(3), np.ones(2))
    result, changed = sb.call("change", None, args, {"d": np.ones(2), "e": np.ones(2)}, 10)
    assert result is None and changed == [0, 1, 2, "d"]
    sb.kill()


def test_can_a_lent_function_be_called_but_not_read(zygote):
    """Name, module, source, closure, globals, bound arguments: none of the lender's."""
    sb = start(
        zygote,
        """
import inspect
def look(f, x):
    clues = [getattr(f, a, None) for a in ("__name__", "__qualname__", "__module__", "__doc__")]
    clues += [repr(getattr(f, a, None)) for a in ("func", "args", "keywords", "__wrapped__", "__defaults__")]
    clues += [repr(c.cell_contents) for c in (f.__closure__ or ())]
    clues += sorted(k for k in getattr(f, "__globals__", {}) if not k.startswith("__"))
    try:
        clues.append(inspect.getsource(f))
    except (OSError, TypeError):
        pass
    return f(x), " ".join(map(str, clues))
""",
    )
    secret_weights = np.full((2, 2), 7.25)

    def layer_with_secret_weights(X, W=secret_weights):
        return X @ W

    import functools

    value, clues = sb.call(
        "look", None, (functools.partial(layer_with_secret_weights, W=secret_weights), np.eye(2)), {}, 10
    )[0]
    sb.kill()
    assert np.array_equal(value, secret_weights)  # it can call it
    for secret in ("layer_with_secret_weights", "secret", "7.25", "test_protocol", "functools"):
        assert secret not in clues


class Counted:
    """A pure function of one array that declares its outputs on ``inputs`` and counts its calls."""

    def __init__(self, inputs):
        self.inputs, self.calls = inputs, 0

    def __call__(self, x):
        self.calls += 1
        return 2.0 * x + 1.0

    def known_answers(self):
        return np.stack(self.inputs), np.stack([2.0 * x + 1.0 for x in self.inputs])


def test_does_a_lent_function_answer_its_declared_inputs_from_a_table_and_others_by_call(zygote):
    sb = start(
        zygote,
        """
import numpy as np
def use(f, X):
    known = f(X.copy())
    known[:] = -1.0  # the student's copy: the next answer for X must not change
    again, other = f(X[[1, 0, 2]]), f(X + 0.5)
    return f(X), again, other, f(X.astype(np.float32))
""",
    )
    X = np.arange(6.0).reshape(3, 2)
    f = Counted([X, X[[1, 0, 2]]])
    (first, again, other, single), _ = sb.call("use", None, (f, X), {}, 10)
    sb.kill()
    assert np.array_equal(first, 2.0 * X + 1.0) and np.array_equal(again, 2.0 * X[[1, 0, 2]] + 1.0)
    assert np.array_equal(other, 2.0 * (X + 0.5) + 1.0)
    assert single.dtype == np.float32 and np.allclose(single, 2.0 * X + 1.0)
    assert f.calls == 2  # X + 0.5 and the float32 copy: not among the declared inputs


def test_is_a_lent_function_kept_for_later_refused_even_on_its_known_inputs(zygote):
    """A table answers only while the call that lent its function runs: kept for a later call, the
    function is refused, whatever input it is called on."""
    sb = start(
        zygote,
        """
kept = []
def use(f, X):
    kept.append(f)
    return f(X)
def later(X):
    try:
        return kept[0](X)
    except Exception as e:
        return type(e).__name__ + ": " + str(e)
""",
    )
    X = np.arange(6.0).reshape(3, 2)
    f = Counted([X])
    first, _ = sb.call("use", None, (f, X), {}, 10)
    again, _ = sb.call("later", None, (X,), {}, 10)
    sb.kill()
    assert np.array_equal(first, 2.0 * X + 1.0) and f.calls == 0  # from the table
    assert again == "TypeError: this function can no longer be called"


def test_does_a_submission_that_replaces_builtins_fool_only_its_own_code(zygote):
    """The runtime that lists a submission's names and sends its values keeps the builtins it
    started with: replacing ``isinstance`` or ``len`` neither hides the submission's functions nor
    garbles what crosses (nor, in the worker, changes anything)."""
    sb = start(
        zygote,
        """
import builtins
builtins.isinstance = lambda *a: True
builtins.len = lambda x: 0
builtins.sorted = lambda x, **k: []
def echo(x):
    return [x, (1, "two"), {"x": x}]
""",
    )
    _, names = sb.request("names", False, 10, "listing names")
    assert names["echo"][0] == "function"
    x = np.arange(3.0)
    result, _ = sb.call("echo", None, (x,), {}, 10)
    sb.kill()
    assert np.array_equal(result[0], x) and result[1] == (1, "two") and np.array_equal(result[2]["x"], x)


def _holds(pid: int, value: float, count: int) -> bool:
    """Whether ``count`` float64 ``value``s in a row lie anywhere in the writable memory of process
    ``pid`` (its heap, stacks and anonymous maps: wherever data it received lives), at any byte
    offset. Read from the trusted side: a sandbox, not dumpable, cannot read its own."""
    fd = os.open(f"/proc/{pid}/mem", os.O_RDONLY)
    try:
        with open(f"/proc/{pid}/maps") as maps:
            regions = [line.split() for line in maps]
        for fields in regions:
            if not fields[1].startswith("rw") or fields[-1] in ("[vvar]", "[vsyscall]"):
                continue
            start, end = (int(x, 16) for x in fields[0].split("-"))
            for at in range(start, end, 1 << 22):
                try:
                    data = os.pread(fd, min(end - at, (1 << 22) + 64), at)
                except OSError:
                    break
                for offset in range(8):
                    same = np.frombuffer(data, np.float64, (len(data) - offset) // 8, offset) == value
                    if len(same) >= count and sliding_window_view(same, count).all(axis=1).any():
                        return True
        return False
    finally:
        os.close(fd)


class MemorySearch:
    """A function to lend: called back from the student's side, it searches the sandbox's memory
    (which holds still while the sandbox waits for the reply) for ``patterns``."""

    def __init__(self, pid: int, patterns: dict[str, tuple[float, int]]):
        self.pid, self.patterns = pid, patterns
        self.found: dict[str, bool] = {}

    def __call__(self) -> None:
        self.found = {name: _holds(self.pid, *pattern) for name, pattern in self.patterns.items()}


@pytest.mark.skipif(os.geteuid() != 0, reason="reads the sandbox's memory, which only root may")
def test_does_a_lent_functions_table_never_reach_the_student(zygote):
    """The worker keeps a lent function's table of known answers and answers from it: the answer
    for a declared input the student never asked for (15.5 = 2 * 7.25 + 1, six times) is nowhere on
    the student's side, not in the function's closure or attributes, not in any dict, not in any
    byte of its process's memory (a search that must find six 2.5s the student holds)."""
    sb = start(
        zygote,
        """
import gc
import numpy as np
kept = []
def look(f, X, search):
    found = [repr(c.cell_contents) for c in (f.__closure__ or ())]
    found += [repr(v) for v in vars(f).values()] if hasattr(f, "__dict__") else []
    found += [repr(o) for o in gc.get_objects() if isinstance(o, dict) for v in list(o.values())
              if isinstance(v, np.ndarray) and v.size and np.any(v == 15.5)]
    kept.append(np.full(6, 2.5))  # what the search must find
    value = f(X)
    search()
    return value, " ".join(found)
""",
    )
    X = np.arange(6.0).reshape(3, 2)
    f = Counted([X, np.full((3, 2), 7.25)])
    search = MemorySearch(sb.pid, {"control": (2.5, 6), "answer": (15.5, 6)})
    (value, clues), _ = sb.call("look", None, (f, X, search), {}, 30)
    sb.kill()
    assert np.array_equal(value, 2.0 * X + 1.0) and f.calls == 0  # answered from the worker's table
    assert "15.5" not in clues
    assert search.found == {"control": True, "answer": False}


def test_does_only_what_calls_return_tell_a_pure_lent_function_from_a_stateful_one(zygote):
    """A checker that could tell a pure probe (with a table of known answers) from one that
    remembers its calls could answer False to the latter without calling it. On the student's side
    both are the same function with another number: everything reachable from them, by type and size."""
    sb = start(
        zygote,
        """
import numpy as np
def _reachable(f):
    seen, todo, found = set(), [f], []
    while todo and len(seen) < 20000:
        obj = todo.pop()
        if id(obj) in seen or type(obj).__name__ == "module":
            continue
        seen.add(id(obj))
        size = len(obj) if isinstance(obj, (dict, list, tuple, set, bytes, str)) else None
        found.append((type(obj).__name__, size, obj.shape if isinstance(obj, np.ndarray) else None))
        if isinstance(obj, dict):
            todo.extend(obj.keys())
            todo.extend(obj.values())
        elif isinstance(obj, (list, tuple, set, frozenset)):
            todo.extend(obj)
        for attr in ("__closure__", "__dict__", "__self__", "__defaults__", "__kwdefaults__", "__code__"):
            value = getattr(obj, attr, None)
            if value is not None:
                todo.append(value)
        if hasattr(obj, "cell_contents"):
            todo.append(obj.cell_contents)
    return sorted(found, key=repr)
def look(pure, stateful, X):
    return _reachable(pure) == _reachable(stateful), pure(X), stateful(X)
""",
    )
    testfiles.load_dir(paths.tests_dir())  # puts the oracle on the import path
    import attnlab_oracle as oracle

    # the equivariance tests' own probes, on five rows: the pure one knows every reordering's answer
    X = np.random.default_rng(3).normal(size=(5, 3))
    pure = oracle.probes.row_probes(5)["affine"].lent(X)
    stateful = oracle.checkers.one_permutation_only(X, "equivariant").lent(X)
    assert pure.known_answers() is not None and stateful.known_answers() is not None
    (same, a, b), _ = sb.call("look", None, (pure, stateful, X), {}, 10)
    sb.kill()
    assert same
    assert np.array_equal(a, 2.0 * X + 1.0) and np.array_equal(b, X + np.arange(5.0)[:, None])


def test_are_a_stateful_probes_known_calls_answered_as_a_pure_ones_are(zygote):
    """Time is the other thing a checker can see: a pure probe's calls answered from its table while
    the stateful one's made the round trip to be computed were 20 of 20 times apart (37 against 92
    microseconds), so "False to a slow function" beat checking. Does a checker's every call on X
    and its reorderings reach neither function itself, for both kinds, while each answers as
    calling it would: the stateful one moving with the rows for the first reordering only?"""
    import itertools

    sb = start(
        zygote,
        """
import itertools
def calls(f, X):
    return [f(X[list(p)]) for p in itertools.permutations(range(len(X)))]
""",
    )
    testfiles.load_dir(paths.tests_dir())  # puts the oracle on the import path
    import attnlab_oracle as oracle

    computed = []

    class Counted(oracle.checkers.OnePermutationOnly):
        def __call__(self, Y):
            computed.append(self.kind)
            return super().__call__(Y)

    class CountedPure(oracle.probes.KnownAnswers):
        def __call__(self, Y):
            computed.append("pure")
            return super().__call__(Y)

    X = np.random.default_rng(3).normal(size=(5, 3))
    perms = list(itertools.permutations(range(5)))
    for kind in ("equivariant", "invariant"):
        stateful, twin = Counted(X, kind), oracle.checkers.OnePermutationOnly(X, kind)
        got, _ = sb.call("calls", None, (stateful, X), {}, 10)
        assert all(np.array_equal(y, twin(X[list(p)])) for y, p in zip(got, perms))
        assert stateful.tried() == twin.tried() == 119
    affine = oracle.probes.row_probes(5)["affine"]
    got, _ = sb.call("calls", None, (CountedPure(affine.f, X, oracle.probes.reorderings(5)), X), {}, 10)
    sb.kill()
    assert all(np.array_equal(y, affine.f(X[list(p)])) for y, p in zip(got, perms))
    assert computed == []
    # and through the same work: one pick for both, which only the answers it chooses between tell apart
    assert oracle.checkers.OnePermutationOnly.pick is oracle.probes.KnownAnswers.pick


def test_is_a_table_declared_afresh_with_the_same_arrays_encoded_once_yet_answered_per_function(monkeypatch):
    """Each question lends a fresh stateful probe, and encoding its 120 reorderings' two answers took
    about 2 ms a time. Read-only arrays declared again are encoded once; each function still picks
    its own answers; an array that could have changed since is encoded again."""
    import itertools

    from attnlab.grade import session

    testfiles.load_dir(paths.tests_dir())  # puts the oracle on the import path
    import attnlab_oracle as oracle

    encodes = []
    real = wire.encode
    monkeypatch.setattr(wire, "encode", lambda value: encodes.append(1) or real(value))
    X = np.random.default_rng(4).normal(size=(5, 3))
    perms = list(itertools.permutations(range(5)))
    first, second = (oracle.checkers.OnePermutationOnly(X, "equivariant") for _ in range(2))
    look_first = session._table(first)
    made = len(encodes)
    look_second = session._table(second)
    assert made >= 360 and len(encodes) == made  # 120 inputs and two answers each, once
    for look, p in ((look_first, perms[1]), (look_second, perms[2])):
        twin = oracle.checkers.OnePermutationOnly(X, "equivariant")
        for q in (p, perms[1], perms[2]):  # the first reordering each meets moves, no other does
            assert look(real(X[list(q)])) == real(twin(X[list(q)]))

    class Writable:
        def __call__(self, x):
            return x

        def known_answers(self):
            return X[None].copy(), (X[None].copy(), X[None].copy())

        def pick(self, i):
            return 0

    before = len(encodes)
    session._table(Writable())
    session._table(Writable())
    assert len(encodes) == before + 6  # an input and its two answers, each time


@pytest.mark.parametrize(
    "answers",
    [
        None,
        "text",
        (np.zeros((2, 2)),),
        (np.zeros((2, 2)), np.zeros((3, 2))),
        (np.zeros(()), np.zeros(())),
        (np.array(["a"]), np.array(["b"])),
        [np.zeros((1, 2)), np.zeros((1, 2))],
    ],
    ids=["none", "text", "one array", "lengths differ", "scalars", "strings", "a list"],
)
def test_is_a_function_with_unusable_declared_answers_still_called_by_round_trip(zygote, answers):
    sb = start(zygote, "def use(f, X):\n    return f(X)\n")
    calls = []

    class Declares:
        def __call__(self, x):
            calls.append(1)
            return x + 1.0

        def known_answers(self):
            return answers

    result, _ = sb.call("use", None, (Declares(), np.zeros((1, 2))), {}, 10)
    sb.kill()
    assert np.array_equal(result, np.ones((1, 2))) and calls == [1]


def test_can_any_callable_be_lent_and_called(zygote):
    """numpy's functions (no weak references to them), a lambda, a class: each answers by call."""
    sb = start(zygote, "def use(f, X):\n    return f(X)\n")
    X = np.arange(4.0).reshape(2, 2)
    for f in (np.tanh, np.sum, lambda X: X[::-1], np.asarray):
        result, _ = sb.call("use", None, (f, X), {}, 10)
        assert np.array_equal(result, f(X))
    sb.kill()


def test_does_a_call_that_keeps_its_lent_function_busy_still_end_at_its_limits(zygote):
    """The time the worker spends serving the student's calls is paused on the call, but only up to
    the call's own CPU limit in all: a student asking forever would otherwise stall the worker."""
    sb = start(zygote, "import numpy as np\ndef ask(f):\n    while True:\n        f(np.ones(3))\n")
    served = []

    def slow(x):
        served.append(1)
        if len(served) > 2000:  # about 40 s: far past any limit, so the old engine fails, not hangs
            raise RuntimeError("still serving")
        time.sleep(0.02)
        return x

    with pytest.raises(StudentTimeout, match="waiting time"):
        sb.call("ask", None, (slow,), {}, 0.5)
    # 0.5 s of serving spared (about 25 calls), then 2.5 s of waiting
    assert len(served) < 200


def test_can_a_lent_function_be_made_to_take_more_memory_than_a_sandbox_has(zygote):
    """A lent function runs in the worker on the student's arguments: what it may allocate there is
    bounded by the sandbox's own memory limit (1024 MiB here), and the bound is lifted after."""
    sb = start(
        zygote,
        "def ask(f, n):\n"
        "    try:\n"
        "        return f(n)\n"
        "    except MemoryError as e:\n"
        "        return 'MemoryError: ' + str(e)\n",
    )
    before = resource.getrlimit(resource.RLIMIT_AS)

    def reserve(n):
        return np.empty(n, dtype=np.uint8).nbytes  # address space only: nothing is touched

    result, _ = sb.call("ask", None, (reserve, 3 << 30), {}, 10)
    assert result.startswith("MemoryError")
    assert resource.getrlimit(resource.RLIMIT_AS) == before
    result, _ = sb.call("ask", None, (reserve, 256 << 20), {}, 10)  # within the bound: served
    assert result == 256 << 20
    sb.kill()


def test_does_a_lent_function_grow_the_worker_by_no_more_than_a_sandbox_has():
    """The bound is on address space, but what the worker maps and does not hold (an allocator's
    free space, buffers never touched: here 256 MiB) becomes resident without a new mapping. A lent
    function that fills it and then allocates until refused grows the worker's resident size by
    no more than the sandbox's own limit (512 MiB here)."""
    import mmap

    zygote = Zygote(uid=None, gid=None, memory_mb=512, cpu_seconds=60)
    sb = start(zygote, "def ask(f):\n    return f()\n")
    spare = mmap.mmap(-1, 256 << 20)  # mapped, not resident

    def resident() -> int:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * resource.getpagesize()

    def fill():
        start, peak, held = resident(), 0, []
        try:
            for offset in range(0, len(spare), 1 << 20):
                spare[offset : offset + (1 << 20)] = b"x" * (1 << 20)
            while True:
                held.append(np.ones(1 << 20))  # 8 MiB, touched
                peak = max(peak, resident() - start)
        except MemoryError:
            return max(peak, resident() - start)

    try:
        grown, _ = sb.call("ask", None, (fill,), {}, 30)
    finally:
        sb.kill()
        zygote.close()
        spare.close()
    assert grown <= (512 + 8) << 20, f"{grown >> 20} MiB"


def test_does_a_lent_function_leave_no_memory_behind_in_the_worker(zygote):
    """What a lent function freed but the allocator kept (here 200 MB of small blocks under one
    that stays, as a cache entry made during the call would) is handed back once the call ends."""
    sb = start(zygote, "def ask(f, n):\n    return f(n)\n")
    kept = []

    def hold(n):
        blocks = [bytes(1000) + b"x" for _ in range(n)]
        kept.append(bytes(1000) + b"y")  # above them on the heap, and still alive
        del blocks
        return n

    def resident() -> int:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * resource.getpagesize()

    before = resident()
    assert sb.call("ask", None, (hold, 200_000), {}, 10)[0] == 200_000
    assert resident() - before < 50 << 20
    sb.kill()


def test_does_a_public_row_never_see_what_a_hidden_case_gave_the_student(zygote, tmp_path):
    sub = tmp_path / "recorder.py"
    sub.write_text("""
seen = []
def echo(x):
    seen.append(x)
    if x == 1.0:
        raise ValueError(f"I have seen {seen}")
    return x
import otter
otter.Notebook().check("order")
otter.Notebook().check("order")
""")
    report = Grader(zygote, FIXTURES / "order" / "tests", None, Limits()).grade(sub)
    public = [c for q in report.questions for c in q.cases if not c.hidden]
    hidden = [c for q in report.questions for c in q.cases if c.hidden]
    assert [c.passed for c in public] == [False] and "I have seen [1.0" in public[0].message
    assert hidden[0].passed  # the hidden case did run, afterwards
    visible = " ".join([c.message for c in public] + report.errors + report.notes)
    assert "424242" not in visible


def test_does_a_sandbox_that_never_reads_stall_the_trusted_side_only_until_its_deadline():
    mine, theirs = socket.socketpair()
    try:
        endpoint = wire.Endpoint(mine, lambda kind, body: None)
        started = time.monotonic()
        with pytest.raises(wire.ChannelTimeout):
            endpoint.request("call", ("f", None, (np.zeros(4_000_000),), {}), wire.Deadline(0.5))
        assert time.monotonic() - started < 5
    finally:
        mine.close()
        theirs.close()


@pytest.mark.parametrize(
    "frame",
    [
        wire.encode(np.zeros((0, 0)))[:3] + struct.pack("<QQ", 0, 2**63),
        wire.encode(np.zeros(0))[:3] + struct.pack("<Q", 2**62),
        b"d" + struct.pack("<I", 1) + b"l" + struct.pack("<I", 0) + b"N",
        b"i" + struct.pack("<I", 3) + "١٢٣".encode()[:3],
        b"s" + struct.pack("<I", 2**32 - 1),
        b"H" + struct.pack("<I", 1) + wire.encode((np.zeros((2, 1)), np.zeros((2, 1)))),
    ],
    ids=[
        "shape (0, 2**63)",
        "huge shape",
        "unhashable key",
        "bad digits",
        "truncated",
        "a handle with answers (no longer a tag)",
    ],
)
def test_does_a_malformed_value_raise_only_wire_error(frame):
    with pytest.raises(wire.WireError):
        wire.decode(frame)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64))
def test_does_any_byte_string_decode_or_raise_wire_error(data):
    try:
        wire.decode(data)
    except wire.WireError:
        pass


FORGED_ERRORS = [
    ("exec", "exec", "import builtins\nbuiltins.attnlab_forged = True"),
    ("eval", "eval", "__import__('builtins').__setattr__('attnlab_forged', True)"),
    ("KeyboardInterrupt", "KeyboardInterrupt", "stop"),
    ("SystemExit", "SystemExit", "0"),
    ("GeneratorExit", "BaseException", "x"),
    ("E" * 100_000, "ValueError", "m" * 100_000),
]


@pytest.mark.parametrize("forged", FORGED_ERRORS, ids=lambda f: f[0][:20])
def test_is_an_error_reply_the_sandbox_forges_only_ever_a_student_error(zygote, forged):
    """The sandbox's runtime is the student's to rewrite: an error reply's names and message may be
    anything. The trusted side must rebuild an ordinary exception from them, never call what a name
    finds among the builtins, never get an exception that ends the worker, nor keep its sizes."""
    import builtins

    from attnlab.grade.session import StudentError

    sb = start(
        zygote,
        f"""
import gc
for o in gc.get_objects():
    if type(o).__name__ == "Runtime":
        o.endpoint.describe_error = lambda e: {forged!r}
def fails():
    raise ValueError("honest")
""",
    )
    with pytest.raises(Exception) as raised:
        sb.call("fails", None, (), {}, 10)
    sb.kill()
    assert not hasattr(builtins, "attnlab_forged")
    assert isinstance(raised.value, StudentError) and type(raised.value).__module__ == "attnlab.grade.session"
    assert len(type(raised.value).__name__) <= 100 and len(str(raised.value)) <= 2000


def test_does_an_error_reply_say_which_line_of_the_submission_raised(zygote):
    """Feedback points at the student's own line: the deepest frame of the traceback in the
    submission's code (not numpy's), with its text."""
    sb = start(
        zygote,
        "import numpy as np\n\ndef stack(parts):\n    return np.array(parts)\n\n"
        "def heads():\n    return stack([np.ones(2), np.ones(3)])\n",
    )
    with pytest.raises(ValueError) as raised:
        sb.call("heads", None, (), {}, 10)
    sb.kill()
    assert raised.value.student_line == (1, 4, "return np.array(parts)")


def test_does_a_statement_that_raises_while_the_submission_runs_reply_with_its_line(zygote):
    """A submission that raises (or exits) at import: the exec reply names the error and its line."""
    sb = zygote.spawn(Output())
    sb.request("load", ["x = 1\nraise SystemExit(3)\n"], 10, "compiling")
    assert sb.request("exec", (0, 0), 10, "executing") is None
    reply = sb.request("exec", (0, 1), 10, "executing")
    sb.kill()
    assert reply == ("SystemExit", "3", 2)


@pytest.mark.parametrize(
    "line", [("1", 2, "x"), (1, -2, "x"), (1, 2, b"x"), (1, 2), (10**9, 1, "x"), [1, 2, "x"], (True, 2, "x")]
)
def test_is_a_forged_line_of_an_error_reply_dropped(zygote, line):
    sb = start(
        zygote,
        f"""
import gc
for o in gc.get_objects():
    if type(o).__name__ == "Runtime":
        o.endpoint.describe_error = lambda e: ("ValueError", "ValueError", "m", {line!r})
def fails():
    raise ValueError("honest")
""",
    )
    with pytest.raises(ValueError) as raised:
        sb.call("fails", None, (), {}, 10)
    sb.kill()
    assert raised.value.student_line is None


def test_does_a_lent_functions_error_name_nothing_of_the_function(zygote):
    """A stray keyword makes Python's TypeError name the function that was called: for a probe, which
    hidden probe the student's checker holds."""
    sb = start(
        zygote,
        """
def ask(f, x):
    try:
        f(x, which_one=1)
    except TypeError as e:
        return str(e)
""",
    )

    def offsets_only_under_one_permutation(X):
        return X

    message = sb.call("ask", None, (offsets_only_under_one_permutation, np.eye(2)), {}, 10)[0]
    sb.kill()
    assert message and "offsets_only_under_one_permutation" not in message and "which_one" not in message


def test_does_a_sandbox_that_sends_garbage_lose_only_its_own_call(zygote):
    sb = start(
        zygote,
        """
import os, stat, struct
def garbage():
    for fd in range(3, 64):
        try:
            if stat.S_ISSOCK(os.fstat(fd).st_mode):
                os.write(fd, struct.pack(">I", 5) + b"zzzzz")
        except OSError:
            pass
    import time
    time.sleep(30)
""",
    )
    with pytest.raises(Exception, match="broke the protocol"):
        sb.call("garbage", None, (), {}, 10)
    assert not sb.alive
    fresh = start(zygote, "def ok():\n    return 1\n")
    assert fresh.call("ok", None, (), {}, 10)[0] == 1
    fresh.kill()


def test_is_a_huge_magic_laden_source_converted_within_the_sandbox_s_limits(zygote, tmp_path):
    """IPython's transformer runs in the sandbox, under the statement limit, never in the worker: it
    needs far longer than the limit for this source (over 500 magics: it gives up only after 500
    passes over all of it), so compiling it in the sandbox stops at the limit. One attempt with a
    one-second limit shows that; more attempts would only repeat it."""
    sub = tmp_path / "magics.py"
    sub.write_text("def echo(x):\n    return x\n" + "%time y = 1\n" * 60_000)
    thread_start = time.monotonic()
    limits = Limits(call=1, statement=1, wall=30, restarts=0)
    report = Grader(zygote, FIXTURES / "order" / "tests", None, limits).grade(sub)
    assert time.monotonic() - thread_start < 60
    assert report.possible == 2
    # stopped by the statement limit, in CPU time or in waiting time on a busy machine
    stops = ("CPU time over 1 s", f"waiting time over {Sandbox.WALL_FACTOR:g} s")
    stopped = [e for e in report.errors for stop in stops if f"compiling the submission timed out ({stop})" in e]
    assert stopped, report.errors


def test_does_load_read_plain_python_ipython_syntax_and_syntax_errors_as_before(zygote):
    """A cell is parsed as plain Python first (once, whatever characters it has) and converted from
    IPython syntax only when that fails; a syntax error is reported at its line either way."""
    sb = zygote.spawn(Output())
    cells = [
        "x = 5 % 3\nok = x != 1  # really?\n",
        "%time y = 1\nz = 2\n",
        "def f(:\n    return 1\n",
        "a = 1\nb = (2 %\n",
    ]
    counts = sb.request("load", cells, 10, "compiling")
    assert counts[0] == [1, 2] and counts[1] == [1, 2]
    assert counts[2][0] == "SyntaxError" and counts[2][2] == 1
    assert counts[3][0] == "SyntaxError" and counts[3][2] == 2
    for cell in (0, 1):
        for j in range(2):
            assert sb.request("exec", (cell, j), 10, "executing") is None
    names = sb.request("names", False, 10, "listing names")[1]
    sb.kill()
    assert names["x"] == ("value", 2) and names["ok"] == ("value", True) and names["z"] == ("value", 2)
