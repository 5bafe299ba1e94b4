"""The student's side: a zygote that forks one isolated process per submission, and the runtime that
executes the submission and answers the trusted grader's calls over the narrow channel.

Run as ``python -I sandbox.py CONFIG_JSON`` with the control socket on fd 3. The zygote imports numpy
once, enters private mount and network namespaces, covers every secret path, and then forks a
sandbox per request in a fraction of the time a fresh interpreter needs. It never loads a test file.
This file imports nothing from attnlab: its siblings ``wire.py`` and ``jail.py`` are loaded by path.
"""

from __future__ import annotations

import ast
import builtins
import functools
import importlib.util
import json
import os
import socket
import sys
import traceback
import types

import numpy as np


def _load(name: str):
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"_attnlab_sandbox_{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


wire = _load("wire")
jail = _load("jail")

# Standard exception types that keep their type across the channel; others travel as their nearest
# standard base class (numpy's LinAlgError arrives as a ValueError-like StudentError, etc.).
STANDARD_ERRORS = frozenset({
    "ArithmeticError", "AssertionError", "AttributeError", "BufferError", "EOFError",
    "FloatingPointError", "ImportError", "IndexError", "KeyError", "LookupError", "MemoryError",
    "ModuleNotFoundError", "NameError", "NotImplementedError", "OSError", "OverflowError",
    "RecursionError", "RuntimeError", "StopIteration", "TypeError", "UnboundLocalError",
    "UnicodeError", "ValueError", "ZeroDivisionError",
})
MAX_VALUE_BYTES = 1 << 20
PRELOAD = ("math", "random", "itertools", "functools", "collections", "typing", "copy", "time",
           "warnings", "dataclasses", "fractions", "statistics", "string", "re", "json", "io",
           "contextlib", "operator", "numbers", "decimal", "heapq", "bisect", "pprint", "textwrap",
           "abc", "enum", "numpy.linalg", "numpy.random", "numpy.fft", "numpy.testing")


def describe_error(e: BaseException) -> tuple[str, str, str]:
    """(type name, nearest standard base type or "", message): what the trusted side re-raises."""
    base = ""
    for cls in type(e).__mro__:
        if cls.__module__ == "builtins" and cls.__name__ in STANDARD_ERRORS:
            base = cls.__name__
            break
    try:
        message = str(e)
    except BaseException:  # noqa: BLE001 - a student's __str__ may raise anything
        message = "<unprintable message>"
    return (type(e).__qualname__[:100], base, message[:2000])


# ---- the runtime that executes the submission ---------------------------------------------------

class Callback:
    """A callable that lives on the trusted side (a test's function given to the student's code)."""

    def __init__(self, runtime: "Runtime", handle: "wire.Handle"):
        self._runtime, self._handle = runtime, handle

    def __call__(self, *args, **kwargs):
        status, body = self._runtime.endpoint.request("cb", (self._handle.id, args, kwargs))
        if status == "ok":
            return self._runtime.resolve(body)
        name, base, message = body
        raise getattr(builtins, base, RuntimeError)(message)


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
        self.cells: list[list[types.CodeType]] = []
        self.probes: types.ModuleType | None = None
        self.endpoint = wire.Endpoint(sock, self.serve, self.encode_ref, describe_error)
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
        module.Notebook = Notebook
        return module

    # values crossing the channel
    def encode_ref(self, obj):
        if isinstance(obj, Callback):
            return obj._handle
        return None

    def resolve(self, value):
        if isinstance(value, wire.Ref):
            return self.ns.get(value.name)
        if isinstance(value, wire.Handle):
            return Callback(self, value)
        if isinstance(value, wire.Probe):
            fn = getattr(self.probes, value.name, None)
            if not isinstance(fn, types.FunctionType):
                raise TypeError(f"no probe function {value.name!r}")
            return functools.partial(fn, *self.resolve(value.args), **self.resolve(value.kwargs))
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self.resolve(v) for v in value)
        if isinstance(value, dict):
            return {k: self.resolve(v) for k, v in value.items()}
        return value

    def serve(self, kind: str, body):
        try:
            return getattr(self, f"do_{kind}")(body)
        finally:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except BaseException:  # noqa: BLE001 - the student may have replaced the stream
                    pass

    def do_probes(self, source: str):
        """The tests' probe module: functions the tests hand to the student's code by name."""
        module = types.ModuleType("attnlab_probes")
        exec(compile(source, "<probes>", "exec"), module.__dict__)
        self.probes = module

    def do_file(self, body):
        """The submission's own file, in the working directory, as otter has it."""
        name, data = body
        with open(os.path.basename(name), "wb") as f:
            f.write(data)

    def do_load(self, sources: list[str]):
        """Compile every cell; reply per cell with its statements' line numbers or its syntax error."""
        out = []
        self.cells = []
        for i, source in enumerate(sources):
            filename = f"<cell {i + 1}>"
            try:
                tree = ast.parse(source, filename)
                codes = [compile(ast.Module([node], []), filename, "exec") for node in tree.body]
                out.append([node.lineno for node in tree.body])
            except (SyntaxError, ValueError, MemoryError, RecursionError) as e:
                codes = []
                line = getattr(e, "lineno", None)
                out.append((type(e).__name__, getattr(e, "msg", str(e))[:300], line))
            self.cells.append(codes)
        return out

    def do_exec(self, unit):
        cell, stmt = unit
        try:
            exec(self.cells[cell][stmt], self.ns)
        except BaseException as e:  # noqa: BLE001 - sys.exit at import is an error like otter's
            line = None
            for frame in traceback.extract_tb(e.__traceback__):
                if frame.filename in (f"<cell {cell + 1}>", "<magic>", "<cell magic>"):
                    line = frame.lineno
            name, _, message = describe_error(e)
            return (name, message[:300], line)
        return None

    def do_names(self, _):
        """What the submission defined: callables by signature, small plain values by value."""
        out = {}
        for name, value in list(self.ns.items()):
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
        name, args, kwargs = body
        fn = self.ns.get(name)
        if not callable(fn):
            raise NameError(f"name '{name}' is not defined")
        args, kwargs = self.resolve(args), self.resolve(kwargs)
        before = {key: value.copy() for key, value in _arrays(args, kwargs)}
        result = fn(*args, **kwargs)
        changed = [(key, value) for key, value in _arrays(args, kwargs)
                   if key in before and not _same(before[key], value)]
        return (result, changed)


def _arrays(args, kwargs):
    for i, value in enumerate(args):
        if type(value) is np.ndarray:
            yield i, value
    for key, value in kwargs.items():
        if type(value) is np.ndarray:
            yield key, value


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


# ---- the zygote -------------------------------------------------------------------------------

def _own_user(config: dict) -> bool:
    """Started as root with a sandbox user id: sandboxes run as that user, swept by it afterwards."""
    return os.geteuid() == 0 and config.get("uid") is not None


def run_sandbox(chan_fd: int, out_fd: int, config: dict, mode: str) -> None:
    """In the forked child: isolate, drop privileges, then serve the trusted side until it closes."""
    try:
        os.setsid()
        jail.die_with_parent()
        uid, gid = config.get("uid"), config.get("gid")
        own_user = _own_user(config)
        if mode in ("root", "userns"):
            jail.unshare(jail.CLONE_NEWNS)
            jail.private_tmp()
            work = "/tmp/work"
        else:
            work = _workdir(os.getppid(), os.getpid())
        os.makedirs(work, mode=0o700)
        if own_user:
            os.chown(work, uid, gid)
        os.dup2(out_fd, 1)
        os.dup2(out_fd, 2)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.closerange(3, chan_fd)
        os.closerange(chan_fd + 1, 65536)
        jail.set_limits(memory_mb=config["memory_mb"], cpu_seconds=config["cpu_seconds"],
                        nproc=config["nproc"] if own_user else None)
        if own_user:
            # also where namespaces were refused (a container without CAP_SYS_ADMIN): the
            # submission never runs as root
            jail.drop_privileges(uid, gid)
        jail.no_new_privileges()
        os.chdir(work)
        keep = {"LANG", "LC_ALL", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"}
        for key in list(os.environ):
            if key not in keep:
                del os.environ[key]
        os.environ.update(HOME=work, PATH="/usr/local/bin:/usr/bin:/bin", TMPDIR="/tmp")
        sys.path.insert(0, work)
        sys.stdout = open(1, "w", buffering=1, closefd=False)
        sys.stderr = open(2, "w", buffering=1, closefd=False)
        sock = socket.socket(fileno=chan_fd)
    except BaseException:  # noqa: BLE001 - a sandbox that cannot isolate itself must not run
        traceback.print_exc()
        os._exit(70)
    try:
        Runtime(sock).endpoint.serve_forever()
    except BaseException:  # noqa: BLE001
        pass
    os._exit(0)


def _workdir(zygote_pid: int, pid: int) -> str:
    """Without a private /tmp, each sandbox works in a folder the zygote removes afterwards."""
    import tempfile

    return os.path.join(tempfile.gettempdir(), f"attnlab-sandbox-{zygote_pid}-{pid}")


def zygote(config: dict) -> None:
    ctl = socket.socket(fileno=config["ctl_fd"])
    for name in PRELOAD:
        __import__(name)
    mode = "none"
    if config.get("isolate", True):
        try:
            mode = jail.private_namespace(network=True)
        except OSError:
            mode = "none"
        if mode != "none":
            needed = sorted({sys.base_prefix, sys.prefix, os.path.dirname(os.path.dirname(np.__file__))})
            jail.hide(config.get("hide", []), keep=needed)
            if mode == "root":
                jail.expose(needed)
    jail.become_subreaper()
    sweep_uid = config.get("uid") if _own_user(config) else None
    if sweep_uid is not None:
        jail.sweep(uid=sweep_uid, reaped={})   # whatever an earlier run left behind
    ctl.sendall(wire.encode(("ready", mode)))
    children: dict[int, int] = {}
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(ctl, 1 << 16, 4)
        except OSError:
            break
        if not data:
            break
        msg = wire.decode(data)
        if msg[0] == "spawn":
            chan_fd, out_fd = fds
            pid = os.fork()
            if pid == 0:
                ctl.close()
                run_sandbox(chan_fd, out_fd, config, mode)
            os.close(chan_fd)
            os.close(out_fd)
            ctl.sendall(wire.encode(("spawned", pid)))
        elif msg[0] == "kill":
            for fd in fds:
                os.close(fd)
            clean = jail.sweep(uid=sweep_uid, reaped=children)
            if mode == "none":
                import shutil

                shutil.rmtree(_workdir(os.getpid(), msg[1]), ignore_errors=True)
            ctl.sendall(wire.encode(("killed", children.pop(msg[1], None), clean)))
        else:
            break
    jail.sweep(uid=sweep_uid, reaped={})
    os._exit(0)


if __name__ == "__main__":
    zygote(json.loads(sys.argv[1]))
