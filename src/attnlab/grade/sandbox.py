"""The student's side: a zygote that forks one isolated process per submission, and the runtime that
executes the submission and answers the trusted grader's requests over the narrow channel
(``protocol.py`` lists them).

Run as ``python -I sandbox.py CONFIG_JSON`` with the control socket on fd 3. The zygote imports
numpy once (and a slow optional module once a submission is going to use it, ``preloads.py``) and
then, per submission, forks a process that enters new
mount, PID, IPC, UTS and network namespaces (with a cgroup of its own where the machine has them),
pivots into a copy of the allow-list root that the zygote built once (``Template``,
``jail.prepare_root``, ``jail.enter_root``, ``allowlist.view``), drops every privilege and
installs the system-call allow-list (``syscalls.py``). That process is the first of its PID
namespace: when it dies, everything it started dies with it. Where namespaces are refused, the
sandbox confines itself with Landlock instead (``landlock.py``: the same allow-list, and a scratch
folder of its own) and the stricter system-call allow-list for a shared host; the zygote, a
subreaper, ends what it started. The zygote never loads a test file. This file imports nothing
from attnlab: its siblings ``wire.py``, ``jail.py``, ``allowlist.py``, ``landlock.py``,
``syscalls.py`` and ``preloads.py`` are loaded by path.
"""

from __future__ import annotations

import ast
import builtins
import importlib.util
import json
import os
import select
import socket
import sys
import traceback
import types
from dataclasses import dataclass

import numpy as np

# The submission runs in this process and may replace builtins (``builtins.isinstance = ...``). This
# runtime and the modules it loads look theirs up in a copy made before, so that what it answers
# (the names a submission defines, every value it sends) never depends on what the submission did.
_BUILTINS = dict(builtins.__dict__)
globals()["__builtins__"] = _BUILTINS  # the functions defined below take theirs from here


def _load(name: str):
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"_attnlab_sandbox_{name}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    module.__builtins__ = _BUILTINS  # type: ignore[attr-defined]  # read by exec_module
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


wire = _load("wire")
jail = _load("jail")
allowlist = _load("allowlist")
syscalls = _load("syscalls")
landlock = _load("landlock")
preloads = _load("preloads")

NAMESPACES = ("root", "userns")  # the modes with namespaces; "landlock" and "none" share the host
ROOT_WORK = "/tmp/work"  # a namespace sandbox's scratch folder, in the private /tmp of its own root
# a sandbox without namespaces writes in the host's /tmp: its folder is looked at this often, and
# ended past the size of a namespace sandbox's private /tmp or past this many entries
SCRATCH_CHECK_S = 0.25
MAX_SCRATCH_ENTRIES = 10_000
SCRATCH_PREFIX = "attnlab-sandboxes-"  # + the zygote's pid: the folder of its sandboxes' scratch folders
# what a Landlock sandbox may open in /dev (rights as Landlock names them)
DEVICES = {
    "/dev/null": landlock.READ_FILE | landlock.WRITE_FILE | landlock.TRUNCATE,
    "/dev/zero": landlock.READ_FILE,
    "/dev/random": landlock.READ_FILE,
    "/dev/urandom": landlock.READ_FILE,
}

MAX_VALUE_BYTES = 1 << 20
_NOT_PLAIN = (wire.Ref, wire.Handle, list, tuple, dict)
MAX_SNAPSHOTS = 64
# what compiling a cell's text may raise: its syntax error, or a text too odd or too deep to compile
_UNCOMPILABLE = (SyntaxError, ValueError, MemoryError, RecursionError)
POOLED = 4  # emptied cgroups a zygote keeps: its sandboxes end a few at a time (the spare, one being reaped)
PRELOAD = (
    "math",
    "random",
    "itertools",
    "functools",
    "collections",
    "typing",
    "copy",
    "time",
    "warnings",
    "dataclasses",
    "fractions",
    "statistics",
    "string",
    "re",
    "json",
    "io",
    "contextlib",
    "operator",
    "numbers",
    "decimal",
    "heapq",
    "bisect",
    "pprint",
    "textwrap",
    "abc",
    "enum",
    "inspect",
    "numpy.linalg",
    "numpy.random",
    "numpy.fft",
)


def describe_error(e: BaseException, sources: list[str] | None = None) -> tuple:
    """(type name, nearest standard base type or "", message, the submission's line or None): what
    the trusted side re-raises. The line is (cell number, line number, its text) of the last frame of
    the traceback in the submission's own code (``sources``, its cells), so feedback can point at it."""
    base = wire.standard_base(e)
    try:
        message = str(e)
    except BaseException:  # noqa: BLE001 - a student's __str__ may raise anything
        message = "<unprintable message>"
    return (type(e).__qualname__[:100], base, message[:2000], _submission_line(e, sources or []))


def _submission_line(e: BaseException, sources: list[str]) -> tuple[int, int, str] | None:
    try:
        frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename.startswith("<cell ")]
        if not frames:
            return None
        cell, line = int(frames[-1].filename[6:-1]), int(frames[-1].lineno or 0)
        lines = sources[cell - 1].splitlines() if 0 < cell <= len(sources) else []
        return (cell, line, lines[line - 1].strip()[:200] if 0 < line <= len(lines) else "")
    except Exception:  # noqa: BLE001 - a rewritten traceback must not stop the error's own reply
        return None


def python_source(source: str) -> str:
    """IPython syntax (``%magic``, ``!shell``, ``x?``) as ``get_ipython()`` calls. Done here, in the
    sandbox and under its limits, because a crafted source can make the transformer slow."""
    if not any(ch in source for ch in "%!?"):
        return source
    try:
        ast.parse(source)
        return source  # plain Python (a `%` or `!=` of its own): IPython would leave it as it is
    except _UNCOMPILABLE:
        pass
    from IPython.core.inputtransformer2 import TransformerManager

    try:
        return TransformerManager().transform_cell(source)
    except Exception:  # noqa: BLE001 - the compiler reports the syntax error
        return source


# ---- the runtime that executes the submission ---------------------------------------------------


class Shell:
    """Stand-in for IPython's shell behind ``get_ipython()``: magics that only display or configure
    do nothing; ``%%time``, ``%%timeit`` and ``%%capture`` run their cell once."""

    RUNS_BODY = {"time", "timeit", "capture", "prun"}

    def __init__(self, ns: dict):
        self.user_ns = ns

    def run_line_magic(self, name, line, *_, **__):
        if name in self.RUNS_BODY and line.strip() and not line.lstrip().startswith("-"):
            exec(compile(line, "<magic>", "exec"), self.user_ns)

    def run_cell_magic(self, name, line, cell, *_, **__):
        if name in self.RUNS_BODY:
            exec(compile(cell, "<cell magic>", "exec"), self.user_ns)

    def system(self, *_, **__):
        return None

    def getoutput(self, *_, **__):
        return []

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda *a, **k: None


class Runtime:
    def __init__(self, sock: socket.socket):
        self.ns: dict = {"__name__": "__main__", "__builtins__": builtins}
        self.snapshots: list[dict] = []
        self.cells: list[list[types.CodeType]] = []
        self.callbacks: dict[int, int] = {}  # id(callback function) -> handle number
        self.sources: list[str] = []  # the cells as loaded: the line an error points at is shown from them
        self.endpoint = wire.Endpoint(sock, self.serve, self.encode_ref, lambda e: describe_error(e, self.sources))
        shell = Shell(self.ns)
        self.ns["get_ipython"] = lambda: shell
        sys.modules["otter"] = self.otter_stub()

    def otter_stub(self) -> types.ModuleType:
        runtime = self

        class Notebook:
            """Stand-in for ``otter.Notebook``: ``check`` asks the grader to check now, as otter
            does in grading mode; everything else does nothing."""

            def __init__(self, nb_path=None, *args, **kwargs):
                # otter reads the named notebook at once: a wrong name fails the same way there
                if nb_path is not None and not os.path.isfile(nb_path):
                    raise FileNotFoundError(2, "No such file or directory", nb_path)

            def check(self, question, *args, **kwargs):
                runtime.endpoint.request("check", str(question))

            def check_all(self, *args, **kwargs):
                runtime.endpoint.request("check", "*")

            def __getattr__(self, name):
                if name.startswith("__"):
                    raise AttributeError(name)
                return lambda *a, **k: None

        module = types.ModuleType("otter")
        module.Notebook = Notebook  # type: ignore[attr-defined]  # a module made at run time
        return module

    # values crossing the channel
    def callback(self, hid: int):
        """A function the trusted side lent for the current call: calling it is all one can do
        with it. It carries a number, never the lender's code, name, arguments, globals or any
        answer it knows (what kind of function it is shows only in what calls return); once the
        call that lent it returns, the trusted side refuses the number."""
        endpoint = self.endpoint
        call_short = endpoint.caller(hid)  # what its calls on one array share, made once per lend
        resolve = self.resolve
        ndarray = np.ndarray

        def f(*args, **kwargs):
            if len(args) == 1 and not kwargs and type(args[0]) is ndarray:
                status, body = call_short(args[0])  # a checker calling its probe
            else:
                status, body = endpoint.request("cb", (hid, args, kwargs))
            if status == "ok":
                return body if type(body) is ndarray else resolve(body)
            _, base, message = body if isinstance(body, tuple) and len(body) == 3 else ("", "", "")
            raise getattr(builtins, base, RuntimeError)(message)

        self.callbacks[id(f)] = hid
        return f

    def encode_ref(self, obj):
        hid = self.callbacks.get(id(obj))
        return wire.Handle(hid) if hid is not None else None

    def resolve(self, value):
        if not isinstance(value, _NOT_PLAIN):
            return value  # an array or a number: most of what arrives
        if isinstance(value, wire.Ref):
            return self.ns.get(value.name)
        if isinstance(value, wire.Handle):
            return self.callback(value.id)
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        if isinstance(value, tuple):
            return tuple([self.resolve(v) for v in value])
        if isinstance(value, dict):
            return {k: self.resolve(v) for k, v in value.items()}
        return value

    def serve(self, kind: str, body):
        try:
            handler = getattr(self, f"do_{kind}", None)
            if handler is None:
                raise TypeError(f"unknown request {kind!r}")
            return handler(body)
        finally:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except BaseException:  # noqa: BLE001 - the student may have replaced the stream
                    pass

    def do_file(self, body):
        """The submission's own file, in the working directory, as otter has it."""
        name, data = body
        with open(os.path.basename(name), "wb") as f:
            f.write(data)

    def do_load(self, sources: list[str]):
        """Compile every cell; reply per cell with its statements' line numbers or its syntax error."""
        out: list[object] = []
        self.cells, self.sources = [], [s if isinstance(s, str) else "" for s in sources]
        for i, source in enumerate(sources):
            filename = f"<cell {i + 1}>"
            try:
                try:
                    tree = ast.parse(source, filename)  # plain Python, as most cells are: parsed once
                except _UNCOMPILABLE:
                    tree = ast.parse(python_source(source), filename)  # IPython syntax, or the error
                codes = [compile(ast.Module([node], []), filename, "exec") for node in tree.body]
                out.append([node.lineno for node in tree.body])
            except _UNCOMPILABLE as e:
                codes = []
                out.append(_compile_error(e))
            self.cells.append(codes)
        return out

    def do_exec(self, unit):
        cell, stmt = unit
        return self.execute(self.cells[cell][stmt], cell)

    def execute(self, code: types.CodeType, cell: int):
        """Run ``code`` (of cell ``cell``, counting from 0) in the namespace: None, or its error as
        (type name, message, the cell's line where it raised)."""
        try:
            exec(code, self.ns)
        except BaseException as e:  # noqa: BLE001 - sys.exit at import is an error like otter's
            line = None
            for frame in traceback.extract_tb(e.__traceback__):
                if frame.filename in (f"<cell {cell + 1}>", "<magic>", "<cell magic>"):
                    line = frame.lineno
            name, _, message, _ = describe_error(e)
            return (name, message[:300], line)
        return None

    def do_run(self, body):
        """The whole submission at once: each cell compiled from its text and run to its end or
        its first error, as Jupyter runs it (``prelude`` first, when not None). The worker's fast
        path: one request and one compilation per cell. Per cell, None or its error (type name,
        message, line), the compiler's or the run's; None alone if the prelude failed."""
        prelude, sources = body
        if prelude is not None:
            if self.execute(compile(prelude, "<prelude>", "exec"), -1) is not None:
                return None
        self.sources = [s if isinstance(s, str) else "" for s in sources]
        self.cells = []
        out: list[object] = []
        for i, source in enumerate(sources):
            filename = f"<cell {i + 1}>"
            try:
                try:
                    code = compile(source, filename, "exec")
                except _UNCOMPILABLE:
                    code = compile(python_source(source), filename, "exec")  # IPython syntax, or the error
            except _UNCOMPILABLE as e:
                out.append(_compile_error(e))
                continue
            out.append(self.execute(code, i))
        return out

    def do_names(self, snapshot: bool):
        """What the submission defined: callables by signature, small plain values by value. With
        ``snapshot``, the names as they are now are kept under a number for later calls."""
        ns = self.ns
        number = None
        if snapshot and len(self.snapshots) < MAX_SNAPSHOTS:
            self.snapshots.append(dict(ns))
            number = len(self.snapshots) - 1
        out = {}
        for name, value in list(ns.items()):
            if not isinstance(name, str) or name.startswith("__") or isinstance(value, types.ModuleType):
                continue
            if callable(value):
                out[name] = ("function", self.signature(value))
                continue
            try:
                data = wire.encode(value)
            except BaseException:  # noqa: BLE001 - anything unsendable stays opaque
                out[name] = ("opaque", type(value).__name__[:100])
                continue
            out[name] = ("value", value) if len(data) <= MAX_VALUE_BYTES else ("opaque", "large")
        return (number, out)

    def do_calls(self, _):
        """For each function the submission defines, the others it defines that its code names
        (``calls.graph``'s reading of the solution, on the submission): the worker lends a
        reference wherever the student's own function calls one that fails its tests."""
        defined = {n: v for n, v in list(self.ns.items()) if type(n) is str and type(v) is types.FunctionType}
        out = {}
        for name, fn in defined.items():
            named: set[str] = set()
            todo = [fn.__code__]
            while todo and len(named) < 10_000:
                code = todo.pop()
                named.update(code.co_names)
                todo += [c for c in code.co_consts if type(c) is types.CodeType]
            out[name] = sorted((named & defined.keys()) - {name})
        return out

    @staticmethod
    def signature(fn):
        import inspect

        try:
            sig = inspect.signature(fn)
        except BaseException:  # noqa: BLE001
            return None
        params = []
        for p in sig.parameters.values():
            default = None
            has_default = p.default is not inspect.Parameter.empty
            if has_default:
                try:
                    wire.encode(p.default)
                    default = p.default
                except BaseException:  # noqa: BLE001
                    has_default, default = "opaque", None
            params.append((p.name, int(p.kind), has_default, default))
        return params

    def do_call(self, body):
        """Call a student function on the arguments as sent (this side's own copies); reply with
        the result and which array arguments the function changed in place. ``lent`` maps global
        names to functions the trusted side lends for this call only (the reference version of a
        callee that failed its own tests): the submission's globals hold them while the call runs
        and get their own values back when it returns."""
        name, snapshot, args, kwargs, lent = body
        ns = self.snapshots[snapshot] if isinstance(snapshot, int) and 0 <= snapshot < len(self.snapshots) else self.ns
        fn = ns.get(name)
        if not callable(fn):
            raise NameError(f"name '{name}' is not defined")
        args, kwargs = self.resolve(args), self.resolve(kwargs)
        # each array argument as it came (its shape, dtype and bytes), to tell which ones it changed
        before = {key: (value.shape, value.dtype, value.tobytes()) for key, value in _arrays(args, kwargs)}
        if not lent:
            result = fn(*args, **kwargs)
        else:
            lent = self.resolve(lent)
            missing = object()
            # a snapshot's functions read the live namespace too (their __globals__), so it is the one to swap
            saved = {key: self.ns.get(key, missing) for key in lent}
            self.ns.update(lent)
            try:
                result = fn(*args, **kwargs)
            finally:
                for key, value in saved.items():
                    if value is missing:
                        self.ns.pop(key, None)
                    else:
                        self.ns[key] = value
        changed = [key for key, value in _arrays(args, kwargs) if key in before and not _same(before[key], value)]
        return (result, changed)


def _compile_error(e: BaseException) -> tuple:
    """A cell that does not compile, as ``load`` and ``run`` report it: (type name, message, line)."""
    return (type(e).__name__, getattr(e, "msg", str(e))[:300], getattr(e, "lineno", None))


def _arrays(args, kwargs) -> list:
    """The plain arrays among the arguments, by position or keyword."""
    found = [(i, value) for i, value in enumerate(args) if type(value) is np.ndarray]
    if kwargs:
        found += [(key, value) for key, value in kwargs.items() if type(value) is np.ndarray]
    return found


def _same(was: tuple, now: np.ndarray) -> bool:
    return was[0] == now.shape and was[1] == now.dtype and was[2] == now.tobytes()


# ---- one sandbox --------------------------------------------------------------------------------


def _own_user(config: dict) -> bool:
    """Started as root with a sandbox user id: sandboxes run as that user."""
    return os.geteuid() == 0 and config.get("uid") is not None


def _direct(mode: str) -> bool:
    """Whether the zygote forks a sandbox of ``mode`` itself, with no outer process: as root, it may
    give its next child a PID namespace of its own and take that back (``Zygote.fork_alone``), and
    the child enters the rest itself (``_first``). Without root, a new PID namespace needs a new
    user namespace around it, which only a process that moves into it can make: an outer one."""
    return mode == "root"


def _enter_namespaces(mode: str, template: Template | None, flags: int) -> None:
    """Join the template root's namespaces, then new mount, IPC, UTS and network ones (and
    ``flags``: a new PID or user namespace), each a copy of the template's or empty."""
    if template is None:
        raise OSError(2, "no template root")
    for fd, nstype in template.namespaces:
        jail.setns(fd, nstype)
    uid, gid = os.getuid(), os.getgid()
    jail.unshare(jail.CLONE_NEWNS | jail.CLONE_NEWIPC | jail.CLONE_NEWUTS | jail.CLONE_NEWNET | flags)
    if flags & jail.CLONE_NEWUSER:
        jail.map_user(uid, gid)


def _first(
    chan_fd: int, out_fd: int, report_fd: int, alive_fd: int, config: dict, cgroup, template: Template | None
) -> None:
    """The sandbox that the zygote forked into a new PID namespace itself (``_direct``): its first
    process, as an outer process's child would be. It joins its cgroup and the namespaces, reports
    a line on ``report_fd`` and serves; the zygote waits for it, which returns once its whole PID
    namespace is gone, and ``alive_fd`` (the zygote holds the only write end) tells it whether the
    zygote died before it asked to die with it."""
    try:
        jail.die_with_parent()
        if cgroup is not None:
            cgroup.add(os.getpid())
        _enter_namespaces("root", template, 0)
        os.write(report_fd, b"0\n")
        os.close(report_fd)
    except BaseException:  # noqa: BLE001 - a sandbox that cannot isolate itself must not run
        os.write(out_fd, traceback.format_exc().encode()[-4000:])
        os._exit(70)
    assert template is not None
    run_sandbox(chan_fd, out_fd, alive_fd, config, "root", ROOT_WORK, template.stage)


def _outer(
    chan_fd: int, out_fd: int, report_fd: int, config: dict, mode: str, cgroup, work: str, template: Template | None
) -> None:
    """The forked child that stays in the zygote's PID namespace (where the sandbox is not
    ``_direct``): it enters the template's namespaces and then new ones, forks the sandbox (the
    first process of the new PID namespace), reports its pid, waits, and reports how it ended (a
    line each on ``report_fd``)."""
    try:
        os.setsid()
        jail.die_with_parent()
        if cgroup is not None:
            cgroup.add(os.getpid())
        if mode in NAMESPACES:
            _enter_namespaces(mode, template, jail.CLONE_NEWPID | (jail.CLONE_NEWUSER if mode == "userns" else 0))
        alive_r, alive_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(alive_w)
            os.close(report_fd)
            run_sandbox(chan_fd, out_fd, alive_r, config, mode, work, template.stage if template else "")
        os.close(alive_r)
        os.write(report_fd, f"{pid}\n".encode())
        low, high = sorted((alive_w, report_fd))
        os.closerange(0, low)
        os.closerange(low + 1, high)
        os.closerange(high + 1, 65536)
        status = _watch(pid, None if mode in NAMESPACES else work, config["scratch_mb"] << 20)
        code = 128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        # the PID namespace is empty once its first process is reaped: the zygote need not wait
        # for this process's own exit
        try:
            os.write(report_fd, f"{code}\n".encode())
        except OSError:
            pass  # the zygote stopped listening (it ends this process instead)
        os._exit(code)
    except BaseException:  # noqa: BLE001 - a sandbox that cannot isolate itself must not run
        os.write(out_fd, traceback.format_exc().encode()[-4000:])
        os._exit(70)


def _watch(pid: int, scratch: str | None, limit: int) -> int:
    """Wait for the sandbox ``pid`` to end (its wait status), ending it first if its ``scratch``
    folder (a folder of the host's /tmp, without namespaces) holds more than ``limit`` bytes, which
    a namespace sandbox's private /tmp would not: it would fill the host's disk otherwise. Done here,
    in the process that lives and dies with that sandbox: what the folder holds (names the
    submission chose) never enters the zygote, whose memory every later sandbox starts with."""
    try:
        ended = [os.pidfd_open(pid)] if scratch is not None else []  # readable once it has exited
    except (AttributeError, OSError):  # (macOS, Linux before 5.3: looked at every SCRATCH_CHECK_S)
        ended = []
    while True:
        try:
            done, status = os.waitpid(pid, 0 if scratch is None else os.WNOHANG)
        except InterruptedError:
            continue
        if done:
            return status
        if scratch is not None and _scratch_over(scratch, limit):
            os.kill(pid, 9)  # SIGKILL: its worker sees it killed, as by its memory limit
            scratch = None
        else:
            select.select(ended, [], [], SCRATCH_CHECK_S)


def run_sandbox(chan_fd: int, out_fd: int, alive_fd: int, config: dict, mode: str, work: str, stage: str) -> None:
    """In the sandbox process: pivot into a copy of the template root at ``stage`` (or, without
    namespaces, confine itself to the allow-list and ``work``, its scratch folder), drop
    privileges, then serve the trusted side."""
    try:
        # a session of its own: a signal to its process group (kill(0, ...), killpg) reaches only
        # its own PID namespace, never the outer process, which in a user namespace has its user id
        os.setsid()
        own_user = _own_user(config)
        if mode in NAMESPACES:
            jail.enter_root(jail.View(config["binds"], config["masks"], config["scratch_mb"]), stage)
            jail.sethostname("sandbox")
            os.makedirs(work, mode=0o700)
            if own_user:
                os.chown(work, config["uid"], config["gid"])
        os.dup2(out_fd, 1)
        os.dup2(out_fd, 2)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        keep = sorted({chan_fd, alive_fd})
        os.closerange(3, keep[0])
        os.closerange(keep[0] + 1, keep[1])
        os.closerange(keep[1] + 1, 65536)
        # made with the zygote's rights: a rule may name a path the sandbox's own user id cannot reach
        rules = None
        if mode == "landlock":
            readable, listed = config["landlock_view"]
            rules = landlock.ruleset(read=readable, listed=listed, write=[work], devices=DEVICES)
        # a process count of its own where it counts this sandbox's processes alone: its own user
        # id, or its own user namespace (a user's count in a namespace starts at zero); under
        # Landlock, its user's processes as they are now plus its share (a fork bomb stops there)
        nproc = config["nproc"] if own_user or mode == "userns" else None
        if nproc is None and mode == "landlock":
            nproc = jail.tasks_of(os.getuid()) + config["nproc"]
        jail.set_limits(memory_mb=config["memory_mb"], cpu_seconds=config["cpu_seconds"], nproc=nproc)
        if own_user:
            # also where namespaces were refused (a container without CAP_SYS_ADMIN): the
            # submission never runs as root
            jail.drop_privileges(config["uid"], config["gid"])
        elif mode == "userns":
            jail.drop_capabilities()
        jail.no_new_privileges()
        jail.die_with_parent()  # after the change of user, which clears it
        if select.select([alive_fd], [], [], 0)[0]:
            os._exit(0)  # the parent died before we asked to die with it
        if rules is not None:
            landlock.enforce(rules)  # before the system-call filter, which refuses Landlock's own calls
        template = config["syscall_filter"]
        if template is not None:
            try:
                # its pid as this process sees it (1 in a PID namespace of its own): the calls that
                # name a process may name only this one, and from here on it starts none
                jail.install_syscall_filter(template.bake(os.getpid()))
            except OSError:
                if mode != "none":
                    raise
        os.chdir(work)
        # the zygote's environment is an allow-list already (``launch.environment``): nothing to
        # remove, only this sandbox's own folders to name
        os.environ.update(
            HOME=work,
            PATH="/usr/local/bin:/usr/bin:/bin",
            TMPDIR="/tmp" if mode in NAMESPACES else work,
            MPLCONFIGDIR=os.path.join(work, ".matplotlib"),
            MPLBACKEND="Agg",
        )
        if "tempfile" in sys.modules:  # it read the zygote's TMPDIR once, before this sandbox's existed
            import tempfile

            tempfile.tempdir = os.environ["TMPDIR"]
        sys.path.insert(0, work)
        sys.stdout = open(1, "w", buffering=1, closefd=False)
        sys.stderr = open(2, "w", buffering=1, closefd=False)
        sock = socket.socket(fileno=chan_fd)
    except BaseException:  # noqa: BLE001 - a sandbox that cannot isolate itself must not run
        os.write(out_fd, traceback.format_exc().encode()[-4000:])
        os._exit(70)
    try:
        Runtime(sock).endpoint.serve_forever()
    except BaseException:  # noqa: BLE001
        pass
    os._exit(0)


# ---- the zygote -------------------------------------------------------------------------------


@dataclass
class Template:
    """The read-only part of the sandboxes' root (``jail.prepare_root``), built once in a mount
    namespace (and, without root, a user namespace) of its own that no process runs in:
    ``namespaces`` holds it, as (file descriptor, type) in the order to enter them. A sandbox
    starts from a copy of it (``jail.enter_root``), not from ~150 mounts of its own. As root, the
    root of that namespace (``stage`` empty); without root, at ``stage`` beside the host's mounts
    there, because a user namespace may mount a /proc only where one is fully visible already."""

    stage: str
    namespaces: list[tuple[int, int]]

    def close(self) -> None:
        for fd, _ in self.namespaces:
            os.close(fd)


class Zygote:
    def __init__(self, config: dict):
        self.config = config
        self.count = 0
        self.running: dict[int, _Running] = {}  # by sandbox pid
        # the pid that ``reap`` waits for (an outer's, a direct sandbox's) -> its cgroup (or None)
        self.exiting: dict[int, object] = {}
        self.mode = "none"
        self.scratch_base: str | None = None
        self.template: Template | None = None
        self.cgroups: list = []  # emptied cgroups of finished sandboxes, for the next (``discard``)
        # a sandbox ready for the next spawn: (pid, channel, output pipe, CPU-time file)
        self.spare: tuple[int, int, int, str | None] | None = None
        # imported once a submission is going to use one (``preloads``), before its sandbox is forked
        self.optional: tuple[str, ...] = ()
        self.imported: set[str] = set()
        # (``fork_alone``) the pipe whose write end only this process holds, and its PID namespace
        self.alive: tuple[int, int] | None = None
        self.pid_namespace = -1

    def base(self) -> str:
        """This zygote's folder (``SCRATCH_PREFIX`` and its pid), which its sandboxes can cross but
        not list; removed when it ends, or by the next zygote if it dies first."""
        import tempfile

        if self.scratch_base is None:
            self.scratch_base = tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-")
            os.chmod(self.scratch_base, 0o711)  # a sandbox with a user id of its own must cross it
        return self.scratch_base

    def prepare(self, mode: str) -> bool:
        """Build the template root for a namespace ``mode`` in a child that enters new namespaces,
        keep them by file descriptor and let the child go. False where that fails."""
        if self.template is not None:
            self.template.close()
            self.template = None
        stage = os.path.join(self.base(), f"root-{mode}")
        os.makedirs(stage, exist_ok=True)
        done_r, done_w = os.pipe()
        go_r, go_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(done_r)
                os.close(go_w)
                jail.die_with_parent()
                uid, gid = os.getuid(), os.getgid()
                jail.unshare(jail.CLONE_NEWNS | (jail.CLONE_NEWUSER if mode == "userns" else 0))
                if mode == "userns":
                    jail.map_user(uid, gid)
                # as root, the template is its namespace's root (``Template.stage``)
                jail.prepare_root(jail.View(self.config["binds"], self.config["masks"]), stage, pivot=mode == "root")
                os.write(done_w, b"1")
                os.read(go_r, 1)  # until the zygote holds the namespaces
            finally:
                os._exit(0)
        os.close(done_w)
        os.close(go_r)
        namespaces: list[tuple[int, int]] = []
        try:
            if select.select([done_r], [], [], 30)[0] and os.read(done_r, 1) == b"1":
                kinds = [("user", jail.CLONE_NEWUSER)] if mode == "userns" else []
                for name, nstype in (*kinds, ("mnt", jail.CLONE_NEWNS)):
                    namespaces.append((os.open(f"/proc/{pid}/ns/{name}", os.O_RDONLY | os.O_CLOEXEC), nstype))
                self.template = Template("" if mode == "root" else stage, namespaces)
        except OSError:
            for fd, _ in namespaces:
                os.close(fd)
        finally:
            os.close(done_r)
            os.close(go_w)
            os.waitpid(pid, 0)
        return self.template is not None

    def scratch(self) -> str:
        """A fresh folder for one sandbox without namespaces, named at random inside ``base``: no
        submission finds another's."""
        import tempfile

        work = tempfile.mkdtemp(dir=self.base())
        if _own_user(self.config):
            os.chown(work, self.config["uid"], self.config["gid"])
        return work

    def spawn(self, chan_fd: int, out_fd: int, mode: str) -> tuple[int, str | None]:
        """Fork one sandbox; returns its pid and the file that counts its CPU time (or None)."""
        self.count += 1
        self.reap()  # first: a sandbox that has finished gives its cgroup to this one
        cgroup = None
        if mode == "root":
            cgroup = self.cgroups.pop() if self.cgroups else None
            cgroup = cgroup or jail.Cgroup.create(
                f"attnlab-{os.getpid()}-{self.count}", memory_mb=self.config["memory_mb"], pids=self.config["nproc"]
            )
        scratch = None if mode in NAMESPACES else self.scratch()
        report_r, report_w = os.pipe()
        direct = _direct(mode)
        try:
            waited = self.fork_alone() if direct else os.fork()
        except OSError:
            os.close(report_r)
            os.close(report_w)
            self.discard(cgroup, scratch)
            return -1, None
        if waited == 0:
            os.close(report_r)
            if direct and self.alive is not None:
                alive_r, alive_w = self.alive
                os.close(alive_w)
                _first(chan_fd, out_fd, report_w, alive_r, self.config, cgroup, self.template)
            _outer(chan_fd, out_fd, report_w, self.config, mode, cgroup, scratch or ROOT_WORK, self.template)
        os.close(report_w)
        running = _Running(waited, cgroup, scratch, report_r)
        line = running.line(30.0)
        if direct:
            running.close()  # nothing more comes: the zygote waits for the sandbox itself
        if line is None or not line.isdigit():
            running.close()
            self.finish(waited, None, cgroup, scratch)
            return -1, None
        pid = waited if direct else int(line)
        self.running[pid] = running
        return pid, _cpu_file(cgroup)

    def load(self, names: list) -> None:
        """Import those of ``names`` that are optional and not imported yet, so that the sandbox
        forked next has them; a spare forked before is ended."""
        new = [n for n in names if n in self.optional and n not in self.imported]
        if not new:
            return
        self.imported.update(new)
        _preload(new)
        if self.spare is not None:
            pid, chan_fd, out_fd, _ = self.spare
            self.spare = None
            os.close(chan_fd)
            os.close(out_fd)
            self.kill(pid, wait=False)

    def fork_alone(self) -> int:
        """Fork a child that is the first process of a new PID namespace (``os.fork``'s result),
        as root: this process's own later children stay in its PID namespace. On the first call,
        the pipe that tells the children whether this process is alive (``self.alive``)."""
        if self.alive is None:
            self.alive = os.pipe()
            self.pid_namespace = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
        jail.unshare(jail.CLONE_NEWPID)
        try:
            pid = os.fork()
        except BaseException:
            jail.setns(self.pid_namespace, jail.CLONE_NEWPID)
            raise
        if pid != 0:
            try:
                jail.setns(self.pid_namespace, jail.CLONE_NEWPID)
            except BaseException:
                os.kill(pid, 9)  # a sandbox whose zygote could not take its namespace back
                os.waitpid(pid, 0)
                raise
        return pid

    def prespawn(self) -> None:
        """Start the next sandbox now, on a channel and an output pipe of its own, so that the next
        ``spawn`` request gets it at once while this one's set-up overlaps the grading. It runs
        nothing before it is handed out, and ``quit`` kills it like any other. Namespace modes
        only: without them, ending one sandbox sweeps every process the zygote started. Only once
        a sandbox has been started on request (the first request gets the trial's): a run that
        needs one sandbox (one file, ``attnlab check``) starts none it does not use."""
        if self.spare is not None or self.mode not in NAMESPACES or self.count < 2:
            return
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        out_r, out_w = os.pipe()
        pid, cpu_file = -1, None
        try:
            pid, cpu_file = self.spawn(theirs.fileno(), out_w, self.mode)
        finally:
            theirs.close()
            os.close(out_w)
            if pid < 0:
                mine.close()
                os.close(out_r)
        if pid >= 0:
            self.spare = (pid, mine.detach(), out_r, cpu_file)

    def kill(self, pid: int, wait: bool = True) -> tuple[int | None, bool]:
        """Kill a sandbox and everything it started; its wait status and whether all is gone. With
        namespaces and not ``wait``: the signal only (its PID namespace dies with it; it, or its
        outer process, is reaped later), for a sandbox whose end nobody asks about."""
        running = self.running.pop(pid, None)
        if running is None:
            return None, True
        try:
            os.kill(pid, 9)
        except OSError:
            pass
        if not wait and self.mode in NAMESPACES:
            running.close()  # its outer's report of how it ended goes nowhere
            self.exiting[running.waited] = running.cgroup
            return None, True
        # (a direct sandbox reports nothing more: ``finish`` waits for it)
        line = running.line(10.0) if self.mode in NAMESPACES else None
        if line is None or not line.isdigit():
            try:
                return self.finish(running.waited, pid, running.cgroup, running.scratch)
            finally:
                running.close()
        running.close()
        # its PID namespace is empty: the outer process's own exit is reaped later (``reap``)
        self.exiting[running.waited] = running.cgroup
        self.reap()
        return _signal_status(int(line) << 8), True

    def reap(self, limit: float = 0.0) -> None:
        """Collect the processes killed without waiting (outer processes whose sandboxes are gone,
        direct sandboxes), waiting up to ``limit`` seconds each, and empty or remove their cgroups."""
        for waited, cgroup in list(self.exiting.items()):
            if limit > 0:
                if _wait(waited, limit) is None:
                    os.kill(waited, 9)
                    _wait(waited, limit)
            else:
                try:
                    if os.waitpid(waited, os.WNOHANG)[0] == 0:
                        continue
                except ChildProcessError:
                    pass
            del self.exiting[waited]
            self.discard(cgroup, None)

    def finish(self, waited: int, pid: int | None, cgroup, scratch: str | None) -> tuple[int | None, bool]:
        if self.mode not in NAMESPACES:
            try:
                os.kill(waited, 9)
            except OSError:
                pass
            reaped: dict[int, int] = {}
            clean = jail.sweep(uid=self.config["uid"] if _own_user(self.config) else None, reaped=reaped)
            status = reaped.get(waited)
        else:
            # a direct sandbox's wait returns once its PID namespace is empty, as its outer's does
            status, clean = _wait(waited, 10.0), True
            if status is None:
                os.kill(waited, 9)
                status, clean = _wait(waited, 5.0), False
        self.discard(cgroup, scratch)
        return _signal_status(status), clean

    def discard(self, cgroup, scratch: str | None) -> None:
        """A finished sandbox's cgroup kept for the next sandbox where it holds nothing of this one
        any more (``jail.Cgroup.vacate``: a new group costs the kernel more than emptying one),
        removed otherwise; its scratch folder removed."""
        if cgroup is not None:
            if len(self.cgroups) < POOLED and cgroup.vacate():
                self.cgroups.append(cgroup)
            else:
                cgroup.remove()
        if scratch is not None:
            _apart(_remove_tree, scratch)  # (its listing holds names the submission chose)

    def close(self) -> None:
        """Remove the cgroups kept for sandboxes that will not come."""
        for cgroup in self.cgroups:
            cgroup.remove()
        self.cgroups = []


def _apart(work, *args) -> None:
    """``work(*args)`` in a child process that ends with it. For whatever reads the host or what a
    sandbox wrote (file names in /tmp or in a scratch folder, other processes' working folders):
    what a process reads stays in its memory, and every sandbox the zygote forks later starts with
    a copy of the zygote's."""
    pid = os.fork()
    if pid == 0:
        try:
            work(*args)
        finally:
            os._exit(0)
    while True:
        try:
            os.waitpid(pid, 0)
            return
        except InterruptedError:
            continue
        except ChildProcessError:
            return


def _remove_tree(path: str) -> None:
    """Remove ``path`` and everything in it, whatever shape a sandbox gave it: folders it made to
    write in but not to list (``mkdir(name, 0o300)``), which ``shutil.rmtree`` cannot empty, and
    folders nested deeper than rmtree's recursion (it raises RecursionError) or a path's length
    reach. Files left behind would outlive the run and fill the disk a little more with every
    submission. Each folder is made listable, and each folder in it moved up into ``path`` itself
    (so no path is longer than two names), until every one is empty."""
    import itertools

    try:
        if not os.path.isdir(path) or os.path.islink(path):
            if os.path.lexists(path):
                os.unlink(path)
            return
    except OSError:
        return
    names = itertools.count()
    found, todo = [path], [path]
    while todo:
        folder = todo.pop()
        try:
            os.chmod(folder, 0o700)  # its owner's, us or root: listable and writable again
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if not entry.is_dir(follow_symlinks=False):
                    os.unlink(entry.path)
                    continue
                moved = entry.path
                if folder != path:
                    moved = next(p for p in (os.path.join(path, f".up-{n}") for n in names) if not os.path.lexists(p))
                    os.rename(entry.path, moved)
                found.append(moved)
                todo.append(moved)
            except OSError:
                continue
    for folder in reversed(found):  # each emptied above; ``path`` last
        try:
            os.rmdir(folder)
        except OSError:
            pass


class _Running:
    """The process the zygote waits for (a sandbox's outer process, or the sandbox itself where it
    is ``_direct``), its cgroup and scratch folder, and the pipe on which that process reports:
    an outer process the sandbox's pid and then how it ended, a direct sandbox that it has set up."""

    def __init__(self, waited: int, cgroup, scratch: str | None, report: int):
        self.waited, self.cgroup, self.scratch, self.report = waited, cgroup, scratch, report
        self.pending = b""

    def line(self, limit: float) -> str | None:
        """The next line reported, within ``limit`` seconds (None if it ends, is late, or the pipe
        is closed)."""
        import time

        if self.report < 0:
            return None
        end = time.monotonic() + limit
        while b"\n" not in self.pending:
            left = end - time.monotonic()
            if left <= 0 or not select.select([self.report], [], [], left)[0]:
                return None
            chunk = os.read(self.report, 64)
            if not chunk:
                return None
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        return line.decode()

    def close(self) -> None:
        if self.report >= 0:
            os.close(self.report)
            self.report = -1


def _pin_like_this_process(pid: int) -> None:
    """Give a sandbox started earlier (the trial's, before its worker pinned this process to a
    core) this process's CPUs: it ping-pongs with the worker, which runs there."""
    try:
        os.sched_setaffinity(pid, os.sched_getaffinity(0))
    except (AttributeError, OSError):
        pass


def _signal_status(status: int | None) -> int | None:
    """An outer process's exit status as its sandbox's: 128 + n is the sandbox's death by signal n."""
    if status is not None and os.WIFEXITED(status) and os.WEXITSTATUS(status) > 128:
        return os.WEXITSTATUS(status) - 128
    return status


def _wait(pid: int, limit: float) -> int | None:
    """The wait status of child ``pid`` once it exits, within ``limit`` seconds (None after)."""
    import time

    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = -1
    end = time.monotonic() + limit
    try:
        while True:
            try:
                done, status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                return None
            if done:
                return status
            left = end - time.monotonic()
            if left <= 0:
                return None
            if pidfd >= 0:
                select.select([pidfd], [], [], left)  # readable when it exits
            else:
                time.sleep(min(0.002, left))
    finally:
        if pidfd >= 0:
            os.close(pidfd)


def _cpu_file(cgroup) -> str | None:
    if cgroup is None:
        return None
    return f"{cgroup.dirs['cpuacct']}/cpuacct.usage" if cgroup.version == 1 else f"{cgroup.dirs['unified']}/cpu.stat"


def _trial(zygote: Zygote, mode: str) -> bool:
    """Whether a sandbox can be built in ``mode`` here: fork one and let it set up. With
    namespaces, that sandbox is kept for the first ``spawn`` (it has run nothing but this request);
    otherwise it ends here."""
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    out_r, out_w = os.pipe()
    try:
        pid, cpu_file = zygote.spawn(b.fileno(), out_w, mode)
        if pid < 0:
            return False
        os.close(out_w)
        out_w = -1
        b.close()
        endpoint = wire.Endpoint(a, lambda kind, body: None)
        try:
            status, _ = endpoint.request("names", False, wire.Deadline(20.0))
            ok = status == "ok"
        except (wire.WireError, wire.ChannelTimeout, OSError):
            ok = False
        if ok and mode in NAMESPACES:
            zygote.spare = (pid, a.detach(), out_r, cpu_file)
            out_r = -1
        else:
            zygote.kill(pid)
        return ok
    finally:
        a.close()
        for fd in (out_w, out_r):
            if fd >= 0:
                os.close(fd)


def _scratch_over(folder: str, limit: int) -> bool:
    """Whether ``folder`` holds more than ``limit`` bytes on disk, or more entries than a look every
    ``SCRATCH_CHECK_S`` should cost; one that cannot be walked counts as over (a sandbox may change
    no file's mode). What the sandbox removes meanwhile is skipped."""
    used, entries, todo = 0, 0, [folder]
    while todo:
        try:
            listing = list(os.scandir(todo.pop()))
        except FileNotFoundError:
            continue
        except OSError:
            return True
        for entry in listing:
            entries += 1
            try:
                used += entry.stat(follow_symlinks=False).st_blocks * 512
                if entry.is_dir(follow_symlinks=False):
                    todo.append(entry.path)
            except FileNotFoundError:
                continue
            except OSError:
                return True
            if used > limit or entries > MAX_SCRATCH_ENTRIES:
                return True
    return False


def _remove_stale_scratch() -> None:
    """Remove the scratch folders of zygotes that died without removing them (a killed worker takes
    its zygote along): ours, named after a pid that no longer runs."""
    import tempfile

    base = tempfile.gettempdir()
    for name in os.listdir(base):
        pid = name[len(SCRATCH_PREFIX) :].split("-")[0]
        if not (name.startswith(SCRATCH_PREFIX) and pid.isdigit()):
            continue
        try:
            os.kill(int(pid), 0)
            continue  # still running (or another user's)
        except ProcessLookupError:
            pass
        except OSError:
            continue
        path = os.path.join(base, name)
        if os.lstat(path).st_uid == os.geteuid():
            _end_processes_in(path)
            _remove_tree(path)


def _end_processes_in(folder: str) -> None:
    """Kill the processes of this user that work in ``folder``, a dead zygote's: where there is no
    system-call filter to refuse them (libseccomp missing), what its sandboxes started outlives a
    batch killed with SIGKILL, and only its working folder tells it from the user's own."""
    if not os.path.isdir("/proc"):
        return  # macOS: no process to find this way (nor a sandbox that confines itself)
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            cwd = os.readlink(f"/proc/{name}/cwd")
        except OSError:
            continue  # gone, or another user's
        if cwd == folder or cwd.startswith(folder + "/"):
            try:
                os.kill(int(name), 9)
            except OSError:
                pass


def _syscall_filter(mode: str, isolate: bool):
    """The allow-list for sandboxes of ``mode``, compiled with the pid left open (a
    ``syscalls.Template``, or None): the stricter one where a graded sandbox shares the host
    (``attnlab check`` runs the student's code on the student's own machine)."""
    try:
        return syscalls.template(shared_host=isolate and mode not in NAMESPACES)
    except (OSError, AttributeError):
        return None


def isolation(mode: str, config: dict) -> str:
    """What confines a sandbox in ``mode`` on this machine, in a sentence the grader prints."""
    filtered = config["syscall_filter"] is not None
    if mode in NAMESPACES:
        who = "a user id of its own, cgroup limits" if mode == "root" else "a user namespace"
        text = f"namespaces ({who}): an allow-list root, no network, no other processes or IPC"
    elif mode == "landlock":
        version = landlock.abi()
        text = landlock.describe(version)
        if _own_user(config):
            text += ", a user id of its own"
        elif not filtered:
            text += "; NOT confined: the limits, priority and affinity"
            text += " and signals" if version < 6 else ""
            text += " of the grader's own processes, which run as the same user"
    else:
        text = "none: process limits only" + (", a user id of its own" if _own_user(config) else "")
    if not filtered:
        return text + "; NO system-call allow-list (libseccomp is missing): it may start processes and programs"
    text += "; a system-call allow-list: one process (threads, no new processes or programs) acting on itself only"
    if mode in NAMESPACES or not config.get("isolate", True):
        return text
    return text + ", without sockets, System V or POSIX IPC, or changes to file metadata"


def _preload(names) -> None:
    for name in names:
        try:
            __import__(name)
        except Exception:  # noqa: BLE001 - a missing optional package is the student's import error
            pass
    _freeze()


def _warm() -> None:
    """Work that every sandbox would otherwise repeat, done once before the forks: the signature
    of a builtin (``Runtime.signature``, for a name such as ``itertools.permutations`` that a
    submission imports) has the tokenizer compile its regular expressions, about 11 ms each time."""
    Runtime.signature(len)


def _freeze() -> None:
    """Keep what the zygote has made so far out of the sandboxes' garbage collections: a collection
    would otherwise write to every object and copy every page the fork shares."""
    import gc

    gc.collect()
    gc.freeze()


def main(config: dict) -> None:
    jail.die_with_parent()
    if os.getppid() != config["parent"]:
        os._exit(0)
    cores = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    ctl = socket.socket(fileno=config["ctl_fd"])
    _warm()
    _preload(PRELOAD)
    # the rest of its options (``launch.Launched.allow``), which its worker sent meanwhile
    try:
        allowed = json.loads(ctl.recv(1 << 16))
        config.update({key: allowed[key] for key in ("uid", "gid", "packages", "preload")})
    except (OSError, ValueError, TypeError, KeyError):
        os._exit(0)  # the worker is gone
    config["binds"], config["masks"] = (
        allowlist.view(config.get("packages", [])) if config.get("isolate", True) else ([], [])
    )
    config["landlock_view"] = allowlist.landlock_view(config["binds"], config["masks"])
    zygote = Zygote(config)
    zygote.optional = (*preloads.OPTIONAL, *config.get("preload", []))
    isolate = config.get("isolate", True)
    modes = (["root"] if isolate and os.geteuid() == 0 else []) + (["userns"] if isolate else [])
    if isolate and landlock.abi() >= landlock.MIN_ABI:  # an older Landlock would not keep files whole
        modes.append("landlock")
    _apart(_remove_stale_scratch)  # (it lists /tmp and reads where the user's processes work)
    _freeze()  # what the set-up made (the allow-list view) too
    if config.get("cpu") is not None and cores is not None:
        # before the first fork (the template's, the trial's): every sandbox shares its worker's
        # core; what came before ran on whichever core was free, beside the worker's own start
        os.sched_setaffinity(0, {config["cpu"]})
    # the strongest mode this machine offers: the first whose trial is not refused outright (a
    # kernel that refuses user namespaces, as stock Ubuntu 24.04 does, offers no "userns"); a
    # weaker mode than that is a fallback, which the worker reports and the batch warns about
    strongest = ""
    for mode in modes:
        zygote.mode = mode
        config["syscall_filter"] = _syscall_filter(mode, isolate)
        prepared = mode not in NAMESPACES or zygote.prepare(mode)
        strongest = strongest or (mode if prepared or mode != "userns" else "")
        if prepared and _trial(zygote, mode):
            break
    else:
        zygote.mode = "none"
        config["syscall_filter"] = _syscall_filter("none", isolate)
    if zygote.mode == "root":
        jail.Cgroup.remove_stale()
    if zygote.mode not in NAMESPACES:
        jail.become_subreaper()
        if _own_user(config):
            jail.sweep(uid=config["uid"], reaped={})  # whatever an earlier run left behind
    ctl.sendall(wire.encode(("ready", zygote.mode, isolation(zygote.mode, config), strongest or zygote.mode)))
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(ctl, 1 << 16, 4)
        except OSError:
            break
        if not data:
            break
        try:
            msg = wire.decode(data)
        except wire.WireError:
            break
        if msg[0] == "spawn" and len(fds) == 2:
            chan_fd, out_fd = fds
            wants = msg[1] if len(msg) == 2 and isinstance(msg[1], list) else []
            zygote.load([name for name in wants if isinstance(name, str)])
            if zygote.spare is not None:
                # started before this request (the trial's, or the one started after the last
                # spawn): with its own channel and output pipe in place of these
                os.close(chan_fd)
                os.close(out_fd)
                pid, chan_fd, out_fd, cpu_file = zygote.spare
                zygote.spare = None
                _pin_like_this_process(pid)
                socket.send_fds(ctl, [wire.encode(("spawned", pid, cpu_file))], [chan_fd, out_fd])
            else:
                pid, cpu_file = zygote.spawn(chan_fd, out_fd, zygote.mode)
                ctl.sendall(wire.encode(("spawned", pid, cpu_file)))
            os.close(chan_fd)
            os.close(out_fd)
            try:
                zygote.prespawn()  # the next one, while this one is graded
            except OSError:
                pass  # none ahead: the next request starts its own
        elif msg[0] == "load" and len(msg) == 2 and isinstance(msg[1], list):
            for fd in fds:
                os.close(fd)
            zygote.load([name for name in msg[1] if isinstance(name, str)])
        elif msg[0] == "kill" and len(msg) in (2, 3):
            for fd in fds:
                os.close(fd)
            reply = len(msg) == 2 or msg[2] is not False
            status, clean = zygote.kill(msg[1], wait=reply)
            if reply:
                ctl.sendall(wire.encode(("killed", status, clean)))
        else:
            break
    for pid in list(zygote.running):
        zygote.kill(pid, wait=False)  # all at once (with namespaces); then each is waited for here
    zygote.reap(limit=10.0)
    zygote.close()
    if zygote.scratch_base is not None:
        _remove_tree(zygote.scratch_base)
    os._exit(0)


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
