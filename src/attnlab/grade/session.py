"""The trusted side of the channel: the zygote that forks sandboxes, one running sandbox, and the
proxies through which test files call the student's functions (``protocol.py`` lists every message).

A callable that a test passes to the student's code, or that the runner lends in place of one of the
submission's functions, stays here: the student's side gets a number it can only call back (a Handle),
valid while the call that carried it runs; the student's own functions travel by name (a Ref). No test
code, name, bound argument or global crosses to the sandbox, nor any table of known answers: a lent
function's table stays here, and calls on its inputs are answered from it.
"""

from __future__ import annotations

import builtins
import fcntl
import functools
import inspect
import os
import resource
import select
import socket
import subprocess
import sys
import termios
import threading
import time
import weakref
from typing import Any, Callable

from . import launch, preloads, wire


class StudentError(Exception):
    """An error raised by the student's code, or about it (crash, timeout, unsendable value)."""


class StudentTimeout(StudentError):
    pass


class SandboxDied(StudentError):
    pass


_ERROR_TYPES: dict[tuple[str, str], type] = {}
MAX_ERROR_TYPES = 256


def student_exception(name: str, base: str, message: str) -> BaseException:
    """The student's exception on this side: the same builtin type when it is a standard one, a
    StudentError that also subclasses the nearest standard base otherwise. Both names come from
    the sandbox, which the student's code can rewrite: only ``wire.STANDARD_ERRORS`` are looked up
    (never any other builtin, which could be a function such as exec), and the student's own type
    names make at most ``MAX_ERROR_TYPES`` classes."""
    builtin = getattr(builtins, base) if base in wire.STANDARD_ERRORS else None
    if builtin is not None and name == base:
        exc = builtin(message)
    else:
        key = (name, base if builtin is not None else "")
        if key not in _ERROR_TYPES:
            if len(_ERROR_TYPES) >= MAX_ERROR_TYPES:
                _ERROR_TYPES.clear()
            bases = (StudentError,) + ((builtin,) if builtin is not None else ())
            _ERROR_TYPES[key] = type(name if name.isidentifier() else "StudentError", bases, {})
        exc = _ERROR_TYPES[key](message)
    exc.from_student = True
    return exc


class Refused(TypeError):
    """A request of the student's side that the trusted side refuses, in the kit's own words."""


def describe_trusted_error(e: BaseException) -> tuple[str, str, str]:
    """What the student's side learns when a function it was lent fails: the standard type, and a
    message that names neither that function nor anything it holds (its own message could: a
    TypeError names the function, and so which hidden probe it is)."""
    base = wire.standard_base(e) or "RuntimeError"
    if type(e) is Refused:
        return ("TypeError", "TypeError", str(e))
    hint = " (were the arguments it was given ones it takes?)" if base == "TypeError" else ""
    return (base, base, f"the function lent to your code raised {base}{hint}")


class Output:
    """The submission's stdout and stderr: drained continuously, the first ``cap`` bytes kept."""

    SETTLE = 0.5  # seconds ``text`` may wait for the drains to take in what their pipes hold

    def __init__(self, cap: int = 64 * 1024):
        self.cap = cap
        self.kept = bytearray()
        self.total = 0
        self.lock = threading.Lock()
        self.open: set[int] = set()  # the pipes still drained (closed under the lock: never a reused number)

    def drain(self, fd: int) -> threading.Thread:
        with self.lock:
            self.open.add(fd)

        def run() -> None:
            # read under the lock, once the pipe is readable: a byte is either still in the pipe
            # or kept, never in between, when ``text`` looks
            ready = select.poll()
            ready.register(fd, select.POLLIN)
            try:
                while True:
                    ready.poll()
                    with self.lock:
                        chunk = os.read(fd, 1 << 16)
                        if not chunk:
                            break
                        room = self.cap - len(self.kept)
                        if room > 0:
                            self.kept += chunk[:room]
                        self.total += len(chunk)
            except OSError:
                pass
            finally:
                with self.lock:
                    self.open.discard(fd)
                    os.close(fd)

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        return thread

    def _unread(self) -> bool:
        """Whether a drained pipe holds bytes its drain has not read yet (call with the lock)."""
        buf = bytearray(4)
        for fd in self.open:
            try:
                fcntl.ioctl(fd, termios.FIONREAD, buf)
            except OSError:
                continue
            if int.from_bytes(buf, sys.byteorder):
                return True
        return False

    def text(self) -> str:
        """What was kept. First, for up to ``SETTLE`` seconds, the drains take in what their pipes
        hold already: a sandbox's prints are in its pipe before its reply (it flushes after each
        request), but on a loaded machine the thread that reads them may not have run yet."""
        end = time.monotonic() + self.SETTLE
        while True:
            with self.lock:
                if not self._unread() or time.monotonic() > end:
                    break
            time.sleep(0.002)
        with self.lock:
            text = self.kept.decode("utf-8", "replace")
            if self.total > len(self.kept):
                text += f"\n[... {self.total - len(self.kept)} more bytes of output not kept]\n"
            return text


class Zygote:
    """A clean interpreter with numpy and the assignment's preloads loaded, that forks sandboxes.

    It starts in the background (numpy, the allow-list, a trial sandbox), so that its owner can load
    the tests meanwhile; ``mode`` and ``spawn`` wait until it is ready. ``packages`` are the
    distributions a submission may import (numpy and IPython always; their dependencies come along);
    ``preload`` slow modules imported once, by the zygote, when a submission is going to use one
    (``spawn``'s ``wants``, ``preloads.py``); ``cpu`` the core its sandboxes share with their
    worker (None: any). Once started, ``mode`` says how its sandboxes are isolated ("root" or
    "userns": namespaces; "landlock"; "none") and ``isolation`` what that means on this machine,
    in a sentence."""

    def __init__(self, **options: Any):
        """Start one: ``options`` are ``launch.zygote``'s (uid, gid, memory_mb, cpu_seconds, ...)."""
        self._adopt(launch.zygote(**options))

    @classmethod
    def of(cls, launched: launch.Launched) -> "Zygote":
        """The zygote that ``launch.zygote`` started (a worker starts it before importing numpy)."""
        self = cls.__new__(cls)
        self._adopt(launched)
        return self

    def _adopt(self, launched: launch.Launched) -> None:
        # every attribute is set here: ``of`` does not run ``__init__``
        self.proc, self.ctl = launched.proc, launched.ctl
        self.memory_mb = launched.memory_mb  # each sandbox's limit, and what a lent function may add
        # what ``spawn`` may ask the zygote to import first
        self.optional: tuple[str, ...] = (*preloads.OPTIONAL, *launched.preload)
        self._mode: str | None = None
        self._isolation = ""
        self._strongest = ""

    @property
    def mode(self) -> str:
        """How its sandboxes are isolated: "root" or "userns" (namespaces), "landlock" or "none"."""
        return self.ready()

    @property
    def isolation(self) -> str:
        """What ``mode`` means on this machine, in a sentence."""
        self.ready()
        return self._isolation

    @property
    def strongest(self) -> str:
        """The strongest mode this machine offers: where ``mode`` is weaker, the zygote fell back."""
        self.ready()
        return self._strongest

    def ready(self) -> str:
        """Wait until the zygote is ready (once); its ``mode``."""
        if self._mode is None:
            try:
                status, mode, isolation, strongest = self._recv()
            except (OSError, RuntimeError, wire.WireError, ValueError) as e:
                self.close()
                raise RuntimeError(f"the sandbox zygote did not start ({e})") from None
            if status != "ready":
                raise RuntimeError("the sandbox zygote did not start")
            self._mode, self._isolation, self._strongest = mode, isolation, strongest
        return self._mode

    def _recv(self) -> tuple:
        data = self.ctl.recv(1 << 16)
        if not data:
            raise RuntimeError("the sandbox zygote exited")
        return wire.decode(data)

    def spawn(self, output: Output, *, wants: list[str] | None = None) -> "Sandbox":
        """A sandbox, its output drained into ``output``; ``wants``: modules of ``optional`` that
        the submission is going to import, which the zygote imports first (once)."""
        self.ready()
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        out_r, out_w = os.pipe()
        try:
            socket.send_fds(self.ctl, [wire.encode(("spawn", list(wants or ())))], [theirs.fileno(), out_w])
        finally:
            theirs.close()
            os.close(out_w)
        try:
            data, fds, _, _ = socket.recv_fds(self.ctl, 1 << 16, 2, socket.MSG_CMSG_CLOEXEC)
            if not data:
                raise RuntimeError("the sandbox zygote exited")
            if len(fds) == 2:  # a sandbox started earlier (the zygote's trial): its own channel and output
                mine.close()
                os.close(out_r)
                mine, out_r = socket.socket(fileno=fds[0]), fds[1]
            else:
                for fd in fds:
                    os.close(fd)
            _, pid, cpu_file = wire.decode(data)
        finally:
            output.drain(out_r)
        if pid < 0:
            mine.close()
            raise RuntimeError("the sandbox could not be started")
        return Sandbox(self, pid, mine, cpu_file)

    def expect(self, wants: list[str]) -> None:
        """Have the zygote import ``wants`` (modules of ``optional``) now, before the next spawn
        asks for them, while this process does other work."""
        if wants:
            self.ctl.sendall(wire.encode(("load", list(wants))))

    def kill(self, pid: int, *, wait: bool = True) -> tuple[int | None, bool]:
        """Kill the sandbox and everything it started; its wait status (if it was reaped). Without
        ``wait``, no reply is asked for: the zygote kills it before it reads the next request."""
        self.ctl.sendall(wire.encode(("kill", pid, wait)))
        if not wait:
            return None, True
        _, status, clean = self._recv()
        return status, clean

    def close(self) -> None:
        try:
            self.ctl.sendall(wire.encode(("quit",)))
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        self.ctl.close()


def _describe_status(status: int | None) -> str:
    if status is None:
        return "it was still running"
    if os.WIFSIGNALED(status):
        import signal

        sig = os.WTERMSIG(status)
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        hint = {
            "SIGKILL": " (killed: memory, CPU time or a limit)",
            "SIGSEGV": " (interpreter crash, e.g. recursion too deep)",
            "SIGXCPU": " (CPU time limit)",
        }.get(name, "")
        return f"it was killed by {name}{hint}"
    return f"it exited with status {os.WEXITSTATUS(status)}"


_TICK = os.sysconf("SC_CLK_TCK")


class Sandbox:
    """One running sandbox process and the channel to it."""

    # a call may use ``timeout`` seconds of its own CPU time; this many times that in wall-clock
    # time stops one that sleeps or waits (a neighbour's load cannot make it time out)
    WALL_FACTOR = 5

    def __init__(self, zygote: Zygote, pid: int, sock: socket.socket, cpu_file: str | None):
        self.zygote, self.pid, self.sock = zygote, pid, sock
        self.alive = True
        self.death = ""  # why it stopped, when a timeout or crash stopped it
        self.handles: dict[int, Callable] = {}
        # numbers are never reused: a lent function the submission kept stays refused, even in a
        # later call that lends another function
        self.next_handle = 1
        self.calls = 0
        self.on_check: Callable[[str], None] | None = None
        self.cpu_file = cpu_file or f"/proc/{pid}/stat"
        self.cpu_ns = self.cpu_file.endswith("cpuacct.usage")  # nanoseconds, and nothing else
        try:
            self.cpu_fd: int | None = os.open(self.cpu_file, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            self.cpu_fd = None
        self.endpoint = wire.Endpoint(sock, self._serve, self._encode_ref, describe_trusted_error)
        self.endpoint.table_of = self._table_of
        try:
            self.pidfd: int | None = os.pidfd_open(pid)
            self.endpoint.watch = self.pidfd
        except (AttributeError, OSError):
            self.pidfd = None

    def cpu_seconds(self) -> float:
        """CPU time the submission has used: its whole cgroup's where it has one; otherwise its
        process's own and that of the children it waited for (one read either way: a request
        reads it at least once, so scanning every process of the machine is too slow)."""
        if self.cpu_fd is None:
            return 0.0
        try:
            data = os.pread(self.cpu_fd, 4096, 0)  # every request reads it: parsed as bytes
            if self.cpu_ns:
                return int(data) / 1e9
            if self.cpu_file.endswith("cpu.stat"):
                return next(int(line.split()[1]) for line in data.splitlines() if line.startswith(b"usage_usec")) / 1e6
            return sum(map(int, data.rpartition(b")")[2].split()[11:15])) / _TICK
        except (OSError, ValueError, StopIteration):
            return 0.0

    def request(self, kind: str, body: Any, timeout: float, what: str) -> Any:
        """A request that the student's side must answer within ``timeout`` seconds of its own CPU
        time (and WALL_FACTOR times that of wall-clock time); its failures come back as
        StudentError, and a timeout, crash or broken message kills the sandbox."""
        if not self.alive:
            raise SandboxDied(f"{what}: the submission's process had already stopped")
        self.calls += 1
        deadline = wire.Deadline(self.WALL_FACTOR * timeout, timeout, self.cpu_seconds)
        try:
            status, body = self.endpoint.request(kind, body, deadline)
        except wire.ChannelTimeout as e:
            self.kill(wait=True)  # whatever it runs stops before anything else runs
            kind_of = "CPU time" if e.what == "cpu" else "waiting time"
            limit = timeout if e.what == "cpu" else self.WALL_FACTOR * timeout
            self.death = self.death or f"{what} timed out ({kind_of} over {limit:g} s)"
            raise StudentTimeout(self.death) from None
        except (wire.WireError, OSError) as e:
            detail = self.kill(wait=True)
            if isinstance(e, (wire.ChannelClosed, OSError)):
                message = f"{what}: the submission's process stopped ({detail})"
            else:
                message = f"{what}: the submission's process broke the protocol ({e})"
            self.death = self.death or message
            raise SandboxDied(message) from None
        finally:
            self.calls -= 1
            if self.calls == 0:
                self.handles.clear()
                self.endpoint.tables.clear()  # with the handles they belong to
        if status == "err":
            *described, line = _error_body(body)
            exc = student_exception(*described)
            exc.student_line = line  # type: ignore[attr-defined]  # where in the submission it raised
            raise exc
        return body

    def call(
        self,
        name: str,
        snapshot: int | None,
        args: tuple,
        kwargs: dict,
        timeout: float,
        lent: dict[str, Callable] | None = None,
    ) -> tuple[Any, list]:
        """Call the student's function on plain copies of the arguments: whatever it does to them
        stays on its side. ``lent``: functions that stand in for the submission's globals of those
        names during this call only. Returns the result and which arguments it changed in place."""
        body = self.request("call", (name, snapshot, args, kwargs, lent or {}), timeout, f"{name}(...)")
        if not (isinstance(body, tuple) and len(body) == 2 and isinstance(body[1], list)):
            raise StudentError("malformed reply from the submission's process")
        result, changed = body
        return self._resolve(result), [k for k in changed if isinstance(k, (int, str)) and not isinstance(k, bool)]

    def kill(self, *, wait: bool = False) -> str:
        """End the sandbox and everything it started. With ``wait`` (after a timeout or a crash),
        until it is gone, and say how it ended; otherwise (the end of a submission, a sandbox that
        has seen too much) nobody waits: the zygote kills it before it reads the next request, so
        before it hands out another sandbox, and reaps it later."""
        if not self.alive:
            return "it had stopped"
        self.alive = False
        if self.cpu_fd is not None:
            os.close(self.cpu_fd)  # before its cgroup goes
            self.cpu_fd = None
        try:
            self.sock.close()
            status, _ = self.zygote.kill(self.pid, wait=wait)
        except (OSError, wire.WireError):
            status = None
        if self.pidfd is not None:
            os.close(self.pidfd)
        return _describe_status(status) if wait else "it was killed"

    # the student's requests
    def _serve(self, kind: str, body: Any) -> Any:
        if kind == "cb" and isinstance(body, tuple) and len(body) == 3:
            hid, args, kwargs = body
            fn = self.handles.get(hid) if type(hid) is int else None
            if (
                fn is None
                or not isinstance(args, tuple)
                or not isinstance(kwargs, dict)
                or not all(isinstance(k, str) for k in kwargs)
            ):
                raise Refused("this function can no longer be called")
            # a call on one array in a lent function's table has been answered in its short form;
            # any other runs here, on the student's arguments, with no more memory than its sandbox
            memory_mb = self.zygote.memory_mb if self.zygote is not None else None
            return within_memory(memory_mb, fn, self._resolve(args), self._resolve(kwargs))
        if kind == "check" and isinstance(body, str):
            if self.on_check is not None and self.calls == 1:
                self.on_check(body)
            return None
        raise Refused(f"unknown request {kind!r}")

    def _table_of(self, hid: int) -> Callable[[bytes], bytes | None] | None:
        """The known answers of the function lent as ``hid`` (encoded input -> encoded output, or
        None for an input it does not know), None when no function is lent under that number."""
        fn = self.handles.get(hid)
        return None if fn is None else _table(fn)

    def _encode_ref(self, obj: Any) -> Any:
        if isinstance(obj, StudentFunction) and obj._sandbox is self:
            return wire.Ref(obj._name)
        if callable(obj):
            # lent for the duration of the call: the student's side gets a number to call back
            hid = self.next_handle
            self.next_handle += 1
            self.handles[hid] = obj
            return wire.Handle(hid)
        return None

    def _resolve(self, value: Any) -> Any:
        if not isinstance(value, _NOT_PLAIN):
            return value  # an array or a number: most of what arrives
        if isinstance(value, wire.Ref):
            return StudentFunction(self, value.name, None, 0.0)
        if isinstance(value, wire.Handle):
            fn = self.handles.get(value.id)
            if fn is None:
                raise StudentError("the submission returned a function it was lent")
            return fn
        if isinstance(value, list):
            return [self._resolve(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self._resolve(v) for v in value)
        if isinstance(value, dict):
            return {k: self._resolve(v) for k, v in value.items()}
        return value


_NOT_PLAIN = (wire.Ref, wire.Handle, list, tuple, dict)


_STATM: tuple[int, int] | None = None  # (pid, that process's /proc/self/statm), once opened
_PAGE = resource.getpagesize()
_TRIM_PAST = 64 << 20  # growth after which what the allocator kept is handed back
_LEAST_ROOM = 16 << 20  # what a lent call may always map anew (an honest one needs a few MiB)


def _usage() -> tuple[int, int]:
    """Bytes this process maps and holds resident now (kept open, one read a call, per process)."""
    global _STATM
    if _STATM is None or _STATM[0] != os.getpid():
        _STATM = (os.getpid(), os.open("/proc/self/statm", os.O_RDONLY | os.O_CLOEXEC))
    fields = os.pread(_STATM[1], 64, 0).split()
    return int(fields[0]) * _PAGE, int(fields[1]) * _PAGE


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    import ctypes

    return getattr(ctypes.CDLL(None), "malloc_trim", None)  # glibc's; None elsewhere


def give_back_memory(*, since: int) -> int:
    """Once the resident size has grown past ``since`` by more than a little: collect the garbage
    (a grading's objects hold each other, a test's proxy and the run that guards it) and hand back
    what the allocator keeps. The resident size afterwards. (Both only then: a full collection
    costs a worker more than a tenth of an honest submission's time.)"""
    resident = _usage()[1]
    if resident > since + _TRIM_PAST:
        import gc

        gc.collect()
        trim = _malloc_trim()
        if trim is not None:
            trim(0)
        resident = _usage()[1]
    return resident


def within_memory(memory_mb: int | None, fn: Callable, args: tuple, kwargs: dict) -> Any:
    """``fn(*args, **kwargs)`` with this process's resident size held to what it is now plus
    ``memory_mb`` MiB (a MemoryError past that), its limits as they were afterwards. A function lent
    to the student runs in the worker on whatever the student passes it: the student must not be
    able to buy more memory with it than its own sandbox has, nor leave any behind (memory it freed
    but the allocator kept is handed back to the system). The bound is on address space
    (RLIMIT_AS): what is mapped but not resident (an allocator's free space, untouched buffers) can
    become resident without a new mapping, so new mappings get ``memory_mb`` less that (at least
    ``_LEAST_ROOM``). Unbounded where the limit cannot be set (no /proc, or an RLIMIT_AS the system
    ignores), or with ``memory_mb`` None."""
    if memory_mb is None:
        return fn(*args, **kwargs)
    try:
        mapped, resident = _usage()
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        bound = mapped + max((memory_mb << 20) - (mapped - resident), min(memory_mb << 20, _LEAST_ROOM))
        for limit in (soft, hard):
            if limit != resource.RLIM_INFINITY:
                bound = min(bound, limit)
        resource.setrlimit(resource.RLIMIT_AS, (bound, hard))
    except (OSError, ValueError):
        return fn(*args, **kwargs)
    try:
        return fn(*args, **kwargs)
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        give_back_memory(since=resident)


# lent functions' known answers, as look-ups from the encoding of an input (exactly its dtype, shape
# and bytes) to the encoding of the output: a table never crosses to the student's side, where it
# would tell which inputs a test is going to try, and what kind of function it holds
_TABLES: weakref.WeakKeyDictionary[Any, Callable[[bytes], bytes | None]] = weakref.WeakKeyDictionary()


def _nothing(_: bytes) -> None:
    return None


def _table(fn: Callable) -> Callable[[bytes], bytes | None]:
    """What ``fn`` declares it answers, as a look-up (``_nothing`` when it declares nothing usable).
    ``fn.known_answers()`` gives two stacked arrays, inputs and outputs, of a pure function of one
    array; or inputs and a tuple of such outputs, one for each way ``fn.pick(i)`` may choose to
    answer the call on ``inputs[i]`` (a number, 0 for the first), which it may decide from the calls
    before. A function whose answers must take the same time whatever it is gives the second form,
    with the same ``pick``: the look-up's work is then the same for each."""
    try:
        table = _TABLES.get(fn)
    except TypeError:  # not weakly referenceable: kept nowhere, so answered by calling
        return _nothing
    if table is None:
        table = _TABLES[fn] = _declared(fn)
    return table


def _declared(fn: Callable) -> Callable[[bytes], bytes | None]:
    import numpy as np

    declared, pick = getattr(fn, "known_answers", None), getattr(fn, "pick", None)
    if not callable(declared):
        return _nothing
    try:
        answers = declared()
    except Exception:  # noqa: BLE001 - a table that cannot be had is no table: calls answer
        return _nothing
    if not (isinstance(answers, tuple) and len(answers) == 2):
        return _nothing
    inputs, outputs = answers
    chosen = isinstance(outputs, tuple) and callable(pick)
    ways = outputs if chosen else (outputs,)
    if not (ways and all(type(a) is np.ndarray and a.ndim >= 1 and len(a) == len(inputs) for a in (inputs, *ways))):
        return _nothing
    try:
        if not chosen:
            return {wire.encode(x): wire.encode(y) for x, y in zip(inputs, outputs)}.get
        index, replies = _encoded(inputs, ways)
    except wire.WireError:
        return _nothing
    choose: Callable[[int], int] = pick  # type: ignore[assignment]  # callable, checked above

    def look_up(key: bytes) -> bytes | None:
        i = index.get(key)
        if i is None:
            return None
        try:
            return replies[i][choose(i)]
        except Exception:  # noqa: BLE001 - a choice that cannot be had: the call is made instead
            return None

    return look_up


# the encodings of tables whose arrays are still alive, by the arrays' identities: a function lent
# fresh for each question (the stateful probe) declares the same read-only arrays every time
_ENCODINGS: dict[tuple[int, ...], tuple[list[weakref.ref], dict[bytes, int], list[tuple[bytes, ...]]]] = {}


def _encoded(inputs: Any, ways: tuple) -> tuple[dict[bytes, int], list[tuple[bytes, ...]]]:
    """(encoded input -> its index, the encoded replies of each way for each input), made once for
    the same arrays, which are then read-only (an array that can change is encoded each time)."""
    arrays = (inputs, *ways)
    key = tuple(map(id, arrays))
    kept = _ENCODINGS.get(key)
    if kept is not None and all(ref() is a for ref, a in zip(kept[0], arrays)):
        return kept[1], kept[2]
    by_way: dict[int, list[bytes]] = {}  # a way given twice (a pure function's) encoded once
    for way in ways:
        by_way.setdefault(id(way), [wire.encode(y) for y in way])
    replies = list(zip(*(by_way[id(way)] for way in ways)))
    index = {wire.encode(x): i for i, x in enumerate(inputs)}
    if not any(a.flags.writeable for a in arrays):

        def forget(_: weakref.ref) -> None:  # any of them gone: so is the entry
            _ENCODINGS.pop(key, None)

        try:
            refs = [weakref.ref(a, forget) for a in arrays]
        except TypeError:
            return index, replies
        _ENCODINGS[key] = (refs, index, replies)
    return index, replies


def _error_body(body: Any) -> tuple[str, str, str, tuple[int, int, str] | None]:
    """An error reply's (type name, standard base, message, submission line or None), cut to the
    sizes the sandbox's own ``describe_error`` sends (a rewritten runtime may send megabytes)."""
    if isinstance(body, tuple) and len(body) in (3, 4) and all(isinstance(x, str) for x in body[:3]):
        name, base, message = body[:3]
        return name[:100], base[:100], message[:2000], _line(body[3] if len(body) == 4 else None)
    return ("StudentError", "", "malformed error", None)


def _line(value: Any) -> tuple[int, int, str] | None:
    """(cell, line, text) as the sandbox sends it, or None for anything else."""
    if (
        isinstance(value, tuple)
        and len(value) == 3
        and all(type(v) is int and 0 < v < 10**6 for v in value[:2])
        and isinstance(value[2], str)
    ):
        return value[0], value[1], value[2][:200]
    return None


class StudentFunction:
    """A test's handle on one of the student's functions. Calling it calls the function in the
    sandbox (as it was at ``snapshot``, a ``grader.check`` point, or as it is now); arguments and
    results cross as plain data, so the test's own arrays never change. ``mutated_arguments`` says
    which arguments (positions, keyword names) the latest call changed on the student's side."""

    # tells the oracle (compare._fresh) that it need not copy the arguments and compare them after
    copies_arguments = True

    def __init__(
        self,
        sandbox: Sandbox,
        name: str,
        params: list | None,
        timeout: float,
        guard: Any = None,
        snapshot: int | None = None,
    ):
        self._sandbox, self._name, self._timeout, self._guard = sandbox, name, timeout, guard
        self._snapshot = snapshot
        self.mutated_arguments: tuple = ()
        self.__name__ = self.__qualname__ = name
        self.__doc__ = None
        sig = _signature(params)
        if sig is not None:
            self.__signature__ = sig

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        lent = None
        if self._guard is not None:
            lent = self._guard.before_call(self._name)
        self.mutated_arguments = ()
        try:
            result, changed = self._sandbox.call(self._name, self._snapshot, args, kwargs, self._timeout or 10.0, lent)
        except StudentTimeout:
            if self._guard is not None:
                self._guard.timed_out(self._name)
            raise
        except Exception as e:
            if getattr(e, "from_student", False):
                e.student_call = self._describe(args, kwargs)  # type: ignore[attr-defined]  # which input made it raise
            raise
        self.mutated_arguments = tuple(changed)
        return result

    def __repr__(self) -> str:
        return f"<function {self._name} (student's, sandboxed)>"

    def _describe(self, args: tuple, kwargs: dict) -> str:
        """``name(x (3, 4), d_model=7)``: the call as the test made it, arrays by name and shape
        (six of them must not fill a line)."""
        names = list(getattr(self, "__signature__", inspect.Signature()).parameters)
        parts = [_named(names[i], a) if i < len(names) else _short(a) for i, a in enumerate(args)]
        parts += [_named(k, v) for k, v in kwargs.items()]
        return f"{self._name}({', '.join(parts)})"


def _named(name: str, value: Any) -> str:
    import numpy as np

    if isinstance(value, np.ndarray):
        return f"{name} {_shape(value)}"
    return f"{name}={_short(value)}"


def _shape(value: Any) -> str:
    import numpy as np

    return f"{value.shape}" + ("" if value.dtype == np.float64 else f" {value.dtype}")


def _short(value: Any) -> str:
    import numpy as np

    if isinstance(value, np.ndarray):
        return f"array of shape {_shape(value)}"
    if callable(value):
        return "a function"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _signature(params: list | None) -> inspect.Signature | None:
    if not isinstance(params, list):
        return None
    try:
        out = []
        for p in params:
            name, kind, has_default, default = p
            kind = inspect._ParameterKind(kind)
            if has_default is True:
                out.append(inspect.Parameter(name, kind, default=default))
            elif has_default:
                out.append(inspect.Parameter(name, kind, default=Ellipsis))
            else:
                out.append(inspect.Parameter(name, kind))
        return inspect.Signature(out)
    except (TypeError, ValueError):
        return None
