"""What a sandbox can reach: only what the allow-list gives it, nothing that outlives it, and limits
that hold for its whole process tree. Each attack runs next to an honest probe of the same kind."""

import errno
import json
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from attnlab.grade.session import Output, Zygote
from in_sandbox import run

from other_user import (
    NOBODY,
    ROOT,
    SYSTEM_PYTHON,
    WHY_NOT_AS_NOBODY,
    can_run_as_nobody,
    json_from,
    make_readable,
    readable_folder,
    venv_under_tmp,
)
from without_userns import WHY_NOT_WITHOUT_USERNS, WRAPPER, can_refuse_userns

PROBE = Path(__file__).with_name("sandbox_probe.py")


@pytest.fixture(scope="module")
def zygote():
    from attnlab.grade.worker import claim_uid

    uid, lock = claim_uid() if ROOT else (None, None)
    z = Zygote(uid=uid, gid=uid, memory_mb=2048, cpu_seconds=120)
    yield z
    z.close()
    if lock is not None:
        os.close(lock)


def test_is_the_sandbox_isolated_in_every_namespace(zygote):
    assert zygote.mode == ("root" if ROOT else "userns")
    sb, (pid, host, entries) = run(
        zygote,
        """
        import os, socket
        def probe():
            return os.getpid(), socket.gethostname(), sorted(os.listdir("/"))
    """,
    )
    sb.kill()
    assert pid == 1 and host == "sandbox"
    assert not {"home", "srv", "run", "var", "opt", "mnt", "boot", "sys"} & set(entries)


def test_is_every_resource_limit_the_sandboxs_own_none_the_graders(zygote):
    """The grader may lock 8 MiB of memory, queue many signals, take a real-time priority where its
    limits allow: does a sandbox get its own value for every limit there is, lower where the grader
    has more (``jail.limits``, which must name every RLIMIT_ of this platform)?"""
    import resource

    from attnlab.grade import jail

    names = sorted(n for n in dir(resource) if n.startswith("RLIMIT_"))
    wanted = jail.limits(memory_mb=2048, cpu_seconds=120, nproc=64)
    assert sorted(wanted) == names
    sb, found = run(
        zygote,
        f"""
        import resource
        def probe():
            return {{n: list(resource.getrlimit(getattr(resource, n))) for n in {names!r}}}
        """,
    )
    sb.kill()
    for name in ("RLIMIT_MEMLOCK", "RLIMIT_RTPRIO", "RLIMIT_NICE", "RLIMIT_RTTIME", "RLIMIT_CORE", "RLIMIT_MSGQUEUE"):
        assert found[name] == [0, 0], (name, found[name])
    assert found["RLIMIT_SIGPENDING"][1] <= 1024 and found["RLIMIT_STACK"][1] <= 8 * 1024 * 1024


def test_does_each_sandbox_get_a_pid_namespace_that_nothing_else_enters(zygote):
    """Two sandboxes alive at once (one graded, one started ahead) each lead a PID namespace of
    their own; the zygote, which as root forks each straight into its new namespace, starts
    everything else of its own (an outer process, a helper) in its own PID namespace, never in
    the last sandbox's."""

    def namespace(pid: int, kind: str = "pid") -> str:
        return os.readlink(f"/proc/{pid}/ns/{kind}")

    first, _ = run(zygote, "def probe():\n    return None\n")
    second, _ = run(zygote, "def probe():\n    return None\n")
    z = zygote.proc.pid
    try:
        assert len({namespace(first.pid), namespace(second.pid), namespace(z)}) == 3
    finally:
        first.kill(wait=True)  # answered once the zygote has also started the next one ahead
        second.kill()
    assert namespace(z, "pid_for_children") == namespace(z)


def test_can_a_submission_find_no_other_checkout_of_the_kit(zygote, tmp_path):
    token = uuid.uuid4().hex
    plants = [tmp_path / "backup" / "solutions" / "pe_attention" / "pe_attention.py"]
    if ROOT:
        plants.append(Path("/srv") / f"attnlab-plant-{token}" / "solutions" / "pe_attention" / "pe_attention.py")
    for p in plants:
        p.parent.mkdir(parents=True)
        p.write_text(f"# BEGIN SOLUTION {token}\n")
    try:
        sb, found = run(
            zygote,
            f"""
            import os
            def probe():
                hits, seen = [], 0
                for top in os.listdir("/"):
                    if top in ("proc", "dev"):
                        continue
                    for folder, _, files in os.walk("/" + top):
                        for name in files:
                            seen += 1
                            try:
                                with open(os.path.join(folder, name), "rb") as f:
                                    if b"{token}" in f.read(4096):
                                        hits.append(os.path.join(folder, name))
                            except OSError:
                                pass
                return hits, seen
        """,
            timeout=60,
        )
        sb.kill()
    finally:
        for p in plants:
            shutil.rmtree(p.parents[2], ignore_errors=True)
    hits, seen = found
    assert hits == [] and seen > 100  # it did look: the interpreter's own files are there


def test_can_two_submissions_pass_nothing_to_each_other(zygote):
    """Files in every writable place, System V shared memory, an abstract socket: the writer leaves
    a secret, the reader (a later sandbox) must find none of it."""
    secret = uuid.uuid4().hex
    writer = f"""
        import ctypes, os, socket, threading, time
        SECRET = b"{secret}"
        written = []
        for d in ("/tmp", "/dev/shm", "/var/tmp", "/run/lock", os.path.expanduser("~")):
            try:
                with open(os.path.join(d, "handoff"), "wb") as f:
                    f.write(SECRET)
                written.append(d)
            except OSError:
                pass
        libc = ctypes.CDLL(None, use_errno=True)
        libc.shmat.restype = ctypes.c_void_p
        shm = libc.shmget(0x41544E4C, 4096, 0o1666)
        if shm >= 0:
            ctypes.memmove(libc.shmat(shm, None, 0), SECRET, len(SECRET))
            written.append("sysv")
        try:  # refused: a sandbox's sockets take no address
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            listener.bind("\\0attnlab-handoff")
            listener.listen(1)
            def serve():
                while True:
                    conn, _ = listener.accept()
                    conn.sendall(SECRET)
                    conn.close()
            threading.Thread(target=serve, daemon=True).start()  # a sandbox starts no process
            written.append("abstract")
        except OSError:
            pass
        def probe():
            return written
    """
    reader = """
        import ctypes, os, socket
        found = []
        for d in ("/tmp", "/dev/shm", "/var/tmp", "/run/lock", os.path.expanduser("~")):
            try:
                found.append(open(os.path.join(d, "handoff"), "rb").read().decode())
            except OSError:
                pass
        libc = ctypes.CDLL(None, use_errno=True)
        libc.shmat.restype = ctypes.c_void_p
        shm = libc.shmget(0x41544E4C, 4096, 0)
        if shm >= 0:
            found.append(ctypes.string_at(libc.shmat(shm, None, 0), 32).decode(errors="replace"))
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect("\\0attnlab-handoff")
            found.append(s.recv(64).decode())
        except OSError:
            pass
        def probe():
            return found
    """
    a, written = run(zygote, writer)
    assert {"/tmp", "/dev/shm"} <= set(written)  # the writer did write (System V IPC is refused)
    b, found = run(zygote, reader)  # while the writer still runs
    a.kill()
    c, found_after = run(zygote, reader)  # and after it is gone
    b.kill()
    c.kill()
    assert not any(secret in x for x in found + found_after)


@pytest.mark.skipif(platform.machine() != "x86_64", reason="system call numbers of x86-64")
def test_does_the_sandbox_refuse_the_system_calls_no_namespace_covers(zygote):
    """Key rings, new namespaces, ptrace, perf, BPF, userfaultfd, io_uring, non-local socket
    families, new processes and programs fail as "not implemented" (the filter's answer, not a
    missing privilege's); what a submission needs (threads, local sockets, numpy) still works in
    the same sandbox."""
    _, found = run(
        zygote,
        """
        import ctypes, errno, os, socket, threading
        import numpy as np
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        def attempt(number, *args):
            ctypes.set_errno(0)
            result = libc.syscall(number, *args)
            if result == 0 and number in (56, 57):
                os._exit(0)  # a clone or fork that went through: the copy ends here
            return ctypes.get_errno() if result == -1 else 0
        def family(number, kind):
            try:
                socket.socket(number, kind).close()
                return 0
            except OSError as e:
                return e.errno
        def probe():
            denied = {
                "add_key": attempt(248, b"user", b"k", b"v", 1, -4),
                "keyctl": attempt(250, 0, -3, 0),
                "request_key": attempt(249, b"user", b"k", None, 0),
                "unshare": attempt(272, 0x10000000),
                "clone_newuser": attempt(56, 0x10000000 | 17, 0, 0, 0, 0),
                "clone_process": attempt(56, 17, 0, 0, 0, 0),  # fork as glibc makes it
                "fork": attempt(57),
                "clone3": attempt(435, 0, 0),
                "execve": attempt(59, b"/nonexistent", None, None),
                "execveat": attempt(322, -1, b"/nonexistent", None, None, 0),
                "inotify_init1": attempt(294, 0),
                "pidfd_open": attempt(434, os.getpid(), 0),
                "ptrace": attempt(101, 0, 0, 0, 0),
                "perf_event_open": attempt(298, 0, 0, -1, -1, 0),
                "bpf": attempt(321, 0, 0, 0),
                "userfaultfd": attempt(323, 0),
                "io_uring_setup": attempt(425, 1, 0),
                "vsock": family(40, socket.SOCK_STREAM),
                "alg": family(38, socket.SOCK_SEQPACKET),
                "packet": family(17, socket.SOCK_DGRAM),
            }
            done = []
            thread = threading.Thread(target=lambda: done.append("thread"))
            thread.start()
            thread.join()
            a, b = socket.socketpair()
            a.sendall(b"ok")
            done.append(b.recv(2).decode())
            done.append(family(socket.AF_INET, socket.SOCK_STREAM))
            done.append(float(np.linalg.solve(np.eye(2), np.ones(2)).sum()))
            return {"denied": denied, "done": done, "ENOSYS": errno.ENOSYS}
        """,
    )
    assert found["done"] == ["thread", "ok", 0, 2.0]
    assert found["denied"] == dict.fromkeys(found["denied"], found["ENOSYS"])


def test_can_a_submission_reach_no_socket_or_port_of_the_host(zygote, tmp_path):
    token = uuid.uuid4().hex
    folder = readable_folder("attnlab-host-")
    path = folder / "listener.sock"
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    unix.bind(str(path))
    os.chmod(path, 0o777)
    unix.listen(4)
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(4)
    got = []

    def accept(server):
        server.settimeout(3)
        try:
            conn, _ = server.accept()
            got.append(conn.recv(64))
        except OSError:
            pass

    threads = [threading.Thread(target=accept, args=(s,), daemon=True) for s in (unix, tcp)]
    for t in threads:
        t.start()
    try:
        sb, reached = run(
            zygote,
            f"""
            import socket
            reached = []
            for family, address in ((socket.AF_UNIX, {str(path)!r}), (socket.AF_INET, ("127.0.0.1", {tcp.getsockname()[1]}))):
                try:
                    s = socket.socket(family, socket.SOCK_STREAM)
                    s.settimeout(1)
                    s.connect(address)
                    s.sendall(b"{token}")
                    reached.append(str(address))
                except OSError:
                    pass
            def probe():
                return reached
        """,
        )
        sb.kill()
        for t in threads:
            t.join(4)
    finally:
        unix.close()
        tcp.close()
        shutil.rmtree(folder, ignore_errors=True)
    assert reached == [] and got == []


def test_does_the_memory_limit_hold_for_the_whole_submission():
    """Children of 400 MiB each would each be under a per-process limit of 768 MiB; a submission
    starts none (fork is refused), and its threads share its one limit: one block of 400 MiB is
    held, never two. (Sizes this small keep the test quick on a VM whose first touch of a page is
    slow, ~130 MB/s here.)"""
    from attnlab.grade.worker import claim_uid

    uid, lock = claim_uid() if ROOT else (None, None)
    z = Zygote(uid=uid, gid=uid, memory_mb=768, cpu_seconds=120)
    try:
        sb, (forked, held, refused) = run(
            z,
            """
            import os, threading
            import numpy as np
            try:
                if os.fork() == 0:
                    os._exit(0)
                forked = 0
            except OSError as e:
                forked = e.errno
            blocks, refused = [], []
            def hold():
                try:
                    blocks.append(np.ones((400 << 20) // 8))  # 400 MiB, every page touched
                except MemoryError:
                    refused.append(1)
            for _ in range(3):
                thread = threading.Thread(target=hold)
                thread.start()
                thread.join()
            found = forked, len(blocks), len(refused)
            blocks.clear()
            def probe():
                return found
        """,
            timeout=60,
        )
        sb.kill()
    finally:
        z.close()
        if lock is not None:
            os.close(lock)
    assert forked == errno.ENOSYS
    assert (held, refused) == (1, 2)


# a static x86-64 program of one instruction sequence, exit(42): it needs no loader, so nothing of
# the sandbox's view stops it from running but the system-call allow-list
STARTS = """
import ctypes, errno, os, struct, subprocess, sys
CODE = b"\\xbf\\x2a\\x00\\x00\\x00\\xb8\\x3c\\x00\\x00\\x00\\x0f\\x05"
HEADERS = struct.calcsize("<16sHHIQQQIHHHHHH") + struct.calcsize("<IIQQQQQQ")
PROGRAM = (
    struct.pack("<16sHHIQQQIHHHHHH", b"\\x7fELF\\x02\\x01\\x01", 2, 0x3E, 1, 0x400000 + HEADERS, 64, 0, 0, 64, 56, 1, 0, 0, 0)
    + struct.pack("<IIQQQQQQ", 1, 5, 0, 0x400000, 0x400000, HEADERS + len(CODE), HEADERS + len(CODE), 0x1000)
    + CODE
)
libc = ctypes.CDLL(None, use_errno=True)
def attempt(action):
    try:
        status = action()
        return 42 if status == 42 else 0  # 42: the program ran
    except OSError as e:
        return e.errno
def fork_and_run(path):
    pid = os.fork()
    if pid == 0:
        try:
            os.execv(path, [path])
        finally:
            os._exit(0)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
def in_place(call, *args):
    ctypes.set_errno(0)
    call(*args)  # returns only when the program did not replace this process
    raise OSError(ctypes.get_errno(), "refused")
def probe():
    path = os.path.abspath("program")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o755)  # (chmod is refused without namespaces)
    os.write(fd, PROGRAM)
    os.close(fd)
    try:
        memfd = os.memfd_create("program")
        os.write(memfd, PROGRAM)
    except OSError:
        memfd = -1  # refused (memory no limit counts): execveat must be refused all the same
    argv = (ctypes.c_char_p * 2)(b"program", None)
    envp = (ctypes.c_char_p * 1)(None)
    return {
        "fork_and_execve": attempt(lambda: fork_and_run(path)),
        "posix_spawn": attempt(lambda: os.waitstatus_to_exitcode(os.waitpid(os.posix_spawn(path, [path], {}), 0)[1])),
        "subprocess": attempt(lambda: subprocess.run([path]).returncode),
        "execve": attempt(lambda: in_place(libc.execve, path.encode(), argv, envp)),
        "execveat_memfd": attempt(lambda: in_place(libc.syscall, 322, memfd, b"", argv, envp, 0x1000)),
        "memfd_create": attempt(lambda: os.close(os.memfd_create("program"))),
        "interpreter": attempt(lambda: subprocess.run([sys.executable, "-c", "pass"]).returncode),
    }
"""

MODES = [
    "this_user",
    pytest.param("nobody", marks=pytest.mark.skipif(not can_run_as_nobody(), reason=WHY_NOT_AS_NOBODY)),
    pytest.param(
        "nobody_without_userns",
        marks=[
            pytest.mark.skipif(not can_run_as_nobody(), reason=WHY_NOT_AS_NOBODY),
            pytest.mark.skipif(not can_refuse_userns(), reason=WHY_NOT_WITHOUT_USERNS),
        ],
    ),
]
EXPECTED_MODE = {"this_user": "root" if ROOT else "userns", "nobody": "userns", "nobody_without_userns": "landlock"}


def _memory_holds(pid: int, needles: set[bytes]) -> set[bytes]:
    """Those of ``needles`` found anywhere in the memory process ``pid`` may read."""
    found: set[bytes] = set()
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
        for line in maps:
            span, permissions = line.split()[:2]
            if permissions[0] != "r":
                continue
            start, end = (int(x, 16) for x in span.split("-"))
            try:
                mem.seek(start)
                data = mem.read(end - start)
            except (OSError, ValueError, OverflowError):
                continue  # [vvar], [vsyscall]: the kernel's, not the process's
            found |= {n for n in needles if n in data}
    return found


@pytest.mark.skipif(not ROOT, reason="reads another process's memory: needs root")
@pytest.mark.parametrize("user", MODES)
def test_is_nothing_of_the_graders_environment_in_a_sandboxs_memory(user):
    """A token in the grader's environment (``CANVAS_TOKEN``, as ``attnlab upload canvas`` reads
    it, and a variable of any name): neither its value nor its name is anywhere in the memory of
    the zygote or of a sandbox it forked, which the test reads whole from outside while the sandbox
    waits, in every mode."""
    token, other = uuid.uuid4().hex, "X" + uuid.uuid4().hex[:12].upper()
    needles = {token.encode(), other.encode()}
    folder = _venv_under_tmp(SYSTEM_PYTHON if user != "this_user" else sys.executable)
    (folder / "code.py").write_text("import os\ndef probe():\n    return os.getpid()\n")
    os.chmod(folder / "code.py", 0o644)
    python = str(folder / "venv" / "bin" / "python")
    as_nobody = user != "this_user"
    proc = subprocess.Popen(
        ([python, str(folder / "without_userns.py")] if user.endswith("userns") else [])
        + [python, str(folder / "probe.py"), str(folder / "src"), str(folder / "code.py"), "hold"],
        cwd=folder,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        user=NOBODY if as_nobody else None,
        group=NOBODY if as_nobody else None,
        env={"PATH": "/usr/bin:/bin", "CANVAS_TOKEN": token, other: "value-" + token[::-1]},
    )
    needles.add(("value-" + token[::-1]).encode())
    try:
        assert proc.stdout is not None and proc.stdin is not None
        pids = json.loads(proc.stdout.readline())
        found = {name: _memory_holds(pids[name], needles) for name in ("zygote", "sandbox")}
        assert _memory_holds(proc.pid, needles) == needles  # the grader itself does hold them
        proc.stdin.write("\n")
        proc.stdin.flush()
        mode = json.loads(proc.stdout.read().strip().splitlines()[-1])["mode"]
    finally:
        proc.kill()
        proc.wait()
        shutil.rmtree(folder, ignore_errors=True)
    assert mode == EXPECTED_MODE[user]
    assert found == {"zygote": set(), "sandbox": set()}


RESIDUE_PROBE = Path(__file__).parents[1] / "fixtures" / "redteam6" / "residue_probe.py"


@pytest.mark.skipif(not ROOT, reason="reads another process's memory: needs root")
@pytest.mark.parametrize("user", MODES)
def test_is_nothing_of_the_host_or_of_an_earlier_sandbox_in_a_sandboxs_memory(user):
    """A sandbox starts with a copy of its zygote's memory. What the zygote has read of the host (a
    file's name in /tmp, a stale scratch folder's, the working folder and name of another process
    of the grading user) or of a sandbox that has ended (a file it wrote in its scratch folder, the
    name it gave itself) would reach every later sandbox: a fresh one that has seen no hidden case,
    or the next student's. None of it is in the memory of the zygote or of the next sandbox, read
    whole from outside, in every mode (``residue_probe.py`` says how each token is planted)."""
    folder = _venv_under_tmp(SYSTEM_PYTHON if user != "this_user" else sys.executable)
    shutil.copy(RESIDUE_PROBE, folder / "residue.py")
    os.chmod(folder / "residue.py", 0o644)
    python = str(folder / "venv" / "bin" / "python")
    as_nobody = user != "this_user"
    proc = subprocess.Popen(
        ([python, str(folder / "without_userns.py")] if user.endswith("userns") else [])
        + [python, str(folder / "residue.py"), str(folder / "src")],
        cwd=folder,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        user=NOBODY if as_nobody else None,
        group=NOBODY if as_nobody else None,
        env={"PATH": "/usr/bin:/bin"},
    )
    try:
        assert proc.stdout is not None and proc.stdin is not None
        planted = json.loads(proc.stdout.readline())
        what = {token.encode(): name for name, token in planted["tokens"].items()}
        found = {who: sorted(what[t] for t in _memory_holds(planted[who], set(what))) for who in ("zygote", "sandbox")}
        proc.stdin.write("\n")
        proc.stdin.flush()
        proc.wait(timeout=60)
    finally:
        proc.kill()
        proc.wait()
        shutil.rmtree(folder, ignore_errors=True)
    assert planted["mode"] == EXPECTED_MODE[user]
    assert found == {"zygote": [], "sandbox": []}


@pytest.mark.skipif(platform.machine() != "x86_64", reason="a program of x86-64")
@pytest.mark.parametrize("user", MODES)
def test_can_a_submission_start_no_process_and_no_program(user):
    """fork, clone, posix_spawn, subprocess; a static program (which needs no loader) written to its
    scratch folder or to a memfd, run after a fork or in place of the sandbox (execve, execveat):
    every way fails as "not implemented", in every mode, so nothing of it can outlive it."""
    folder = _venv_under_tmp(SYSTEM_PYTHON if user != "this_user" else sys.executable)
    try:
        found = _probe(
            folder, user=None if user == "this_user" else NOBODY, code=STARTS, without_userns=user.endswith("userns")
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert found["mode"] == EXPECTED_MODE[user] and found["errors"] == [], found
    assert found["result"] == dict.fromkeys(found["result"], errno.ENOSYS)


TEMPORARY = """
import tempfile
def probe():
    with tempfile.TemporaryFile() as f:
        f.write(b"scratch")
        f.seek(0)
        unnamed = f.read()
    with tempfile.NamedTemporaryFile("w+") as f:
        f.write("scratch")
        f.flush()
        named = open(f.name).read()
    return {"unnamed": unnamed.decode(), "named": named, "folder": tempfile.gettempdir()}
"""


@pytest.mark.parametrize("user", MODES)
def test_can_honest_code_make_a_temporary_file_in_every_mode(user):
    """tempfile is imported before the fork (the zygote uses it): does a sandbox's tempfile write
    into that sandbox's own scratch folder, not into the folder the zygote saw, which the Landlock
    mode does not let it write?"""
    folder = _venv_under_tmp(SYSTEM_PYTHON if user != "this_user" else sys.executable)
    try:
        found = _probe(
            folder, user=None if user == "this_user" else NOBODY, code=TEMPORARY, without_userns=user.endswith("userns")
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert found["mode"] == EXPECTED_MODE[user] and found["errors"] == [], found
    assert found["result"]["unnamed"] == found["result"]["named"] == "scratch"


def _venv_under_tmp(python: str) -> Path:
    folder = venv_under_tmp(python)
    for source, name in ((PROBE, "probe.py"), (WRAPPER, "without_userns.py")):
        shutil.copy(source, folder / name)
        os.chmod(folder / name, 0o644)
    return folder


PROBE_CODE = """
import os
def probe():
    import numpy.ma, numpy.typing
    entries = sorted(os.listdir("/"))
    hits = []
    for top in entries:
        if top in ("proc", "dev"):
            continue
        for folder, _, files in os.walk("/" + top):
            for name in files:
                try:
                    with open(os.path.join(folder, name), "rb") as f:
                        if TOKEN.encode() in f.read(4096):
                            hits.append(os.path.join(folder, name))
                except OSError:
                    pass
    return {"uid": os.getuid(), "pid": os.getpid(), "entries": entries, "hits": hits,
            "masked": int(numpy.ma.masked_array([1, 2], mask=[0, 1]).sum())}
"""


def _probe(folder: Path, user: int | None = None, code: str = PROBE_CODE, without_userns: bool = False) -> dict:
    """Run ``code`` with the interpreter of ``folder`` (where user namespaces are refused, with
    ``without_userns``); a copy of the course's solution, readable by anyone, is planted under /tmp
    for it to look for (at ``PLANT``)."""
    token = uuid.uuid4().hex
    plant = readable_folder("attnlab-plant-")
    (plant / "solutions").mkdir()
    (plant / "solutions" / "pe_attention.py").write_text(f"# BEGIN SOLUTION {token}\n")
    make_readable(plant)
    (folder / "code.py").write_text(
        f"TOKEN = {token!r}\nPLANT = {str(plant / 'solutions' / 'pe_attention.py')!r}\n" + code
    )
    os.chmod(folder / "code.py", 0o644)
    python = str(folder / "venv" / "bin" / "python")
    try:
        return json_from(
            ([python, str(folder / "without_userns.py")] if without_userns else [])
            + [python]
            + [str(folder / f) for f in ("probe.py", "src", "code.py")],
            cwd=folder,
            timeout=120,
            user=user,
        )
    finally:
        shutil.rmtree(plant, ignore_errors=True)


def test_does_a_grader_whose_python_lives_under_tmp_keep_its_packages():
    folder = _venv_under_tmp(sys.executable)
    try:
        found = _probe(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert found["errors"] == [] and found["result"]["masked"] == 1 and found["result"]["hits"] == []
    assert found["mode"] == ("root" if ROOT else "userns")


@pytest.mark.skipif(not can_run_as_nobody(), reason=WHY_NOT_AS_NOBODY)
def test_does_an_unprivileged_grader_get_the_same_allow_list_view():
    folder = _venv_under_tmp(SYSTEM_PYTHON)
    try:
        found = _probe(folder, user=NOBODY)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert found["mode"] == "userns", found
    result = found["result"]
    assert result["pid"] == 1 and result["uid"] == 65534 and result["masked"] == 1 and result["hits"] == []
    assert not {"home", "srv", "run", "root", "var", "work"} & set(result["entries"])


KILL_OUTSIDE = """
import os, signal, time
for target in (0, os.getppid(), -os.getpgid(0)):
    try:
        os.kill(target, signal.SIGKILL)
    except OSError:
        pass
time.sleep(0.5)  # time for a killed supervisor to take its sandbox with it
def probe():
    return os.getpid()
"""


@pytest.mark.parametrize(
    "user",
    ["this_user", pytest.param("nobody", marks=pytest.mark.skipif(not can_run_as_nobody(), reason=WHY_NOT_AS_NOBODY))],
)
def test_does_a_signal_to_its_parent_or_process_group_leave_the_sandbox_running(user):
    """Where the sandbox keeps the grader's user id (a user namespace), its process group must hold
    nothing outside its own PID namespace."""
    folder = _venv_under_tmp(SYSTEM_PYTHON if user == "nobody" else sys.executable)
    try:
        found = _probe(folder, user=NOBODY if user == "nobody" else None, code=KILL_OUTSIDE)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert found["errors"] == [] and found["result"] == 1


def test_does_every_sandbox_run_on_the_cores_of_its_zygote():
    """A worker pins its zygote to one core once the zygote is ready: the sandbox started for the
    zygote's trial before that, and each started ahead of its request, run there too."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one core: nothing to pin")
    from attnlab.grade.worker import claim_uid

    uid, lock = claim_uid() if ROOT else (None, None)
    z = Zygote(uid=uid, gid=uid, memory_mb=1024, cpu_seconds=60)
    try:
        z.ready()
        core = max(os.sched_getaffinity(0))
        os.sched_setaffinity(z.proc.pid, {core})
        for _ in range(3):
            sb = z.spawn(Output())
            assert list(sb.request("names", False, 10, "listing names")[1]) == ["get_ipython"]  # fresh
            assert os.sched_getaffinity(sb.pid) == {core}
            sb.kill()
    finally:
        z.close()
        if lock is not None:
            os.close(lock)


def test_does_a_call_limit_count_the_submission_s_cpu_not_a_busy_neighbour_s(zygote):
    """A call that needs 0.6 s of CPU under a 1.5 s limit passes even while the machine is busy
    with a neighbour's processes; a call that spins forever still times out."""
    hogs = []
    for _ in range(2 * (os.cpu_count() or 1)):
        pid = os.fork()
        if pid == 0:
            end = time.monotonic() + 30
            while time.monotonic() < end:
                pass
            os._exit(0)
        hogs.append(pid)
    try:
        sb, _ = run(
            zygote,
            """
            import time
            def spin(seconds):
                end = time.process_time() + seconds
                while time.process_time() < end:
                    pass
                return seconds
            def probe():
                return None
        """,
        )
        assert sb.call("spin", None, (0.6,), {}, 1.5)[0] == 0.6
        with pytest.raises(Exception, match="timed out"):
            sb.call("spin", None, (100.0,), {}, 1.5)
    finally:
        for pid in hogs:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)


def _followers(z: Zygote, first, code: str, count: int = 4) -> list:
    """For each of the ``count`` sandboxes started after ``first`` has ended as a submission ends
    (killed, nobody waiting): whether it got ``first``'s cgroup (a zygote keeps an emptied one for
    a later sandbox), what ``probe()`` of ``code`` returned there and the CPU time the grader
    counts for it by then."""
    group = first.cpu_file
    first.kill()
    out = []
    for _ in range(count):
        sb, found = run(z, code, timeout=60)
        out.append((sb.cpu_file == group, found, sb.cpu_seconds()))
        sb.kill()
    return out


@pytest.mark.skipif(not ROOT, reason="cgroups: as root")
def test_does_a_sandbox_in_a_cgroup_used_before_get_all_of_its_memory_limit():
    """A submission fills its /tmp and its /dev/shm, which outlive its last process for a moment; a
    later one in the same cgroup can still hold what a fresh one can (600 MiB of its 768: not with
    the first one's 180 MiB still charged): a cgroup still charged with the first one's memory is
    not used again."""
    from attnlab.grade.worker import claim_uid

    uid, lock = claim_uid() if ROOT else (None, None)
    z = Zygote(uid=uid, gid=uid, memory_mb=768, cpu_seconds=120)  # a /tmp and a /dev/shm of 96 MiB
    try:
        hog, filled = run(
            z,
            """
            import ctypes, os
            block = b"x" * (1 << 20)
            filled = 0
            for path in ("/tmp/fill", "/tmp/fill2", "/dev/shm/fill", "/dev/shm/fill2"):  # RLIMIT_FSIZE: 64 MiB
                with open(path, "wb") as f:
                    try:
                        for _ in range(45):
                            f.write(block)
                            filled += 1
                    except OSError:
                        pass
            def probe():
                return filled
        """,
            timeout=60,
        )
        assert filled >= 170  # MiB that stay charged until its namespaces go
        followers = _followers(
            z,
            hog,
            """
            import numpy as np
            try:
                block = np.ones((600 << 20) // 8)  # 600 MiB, every page touched
                held = int(block[-1])
            except MemoryError:
                held = 0
            def probe():
                return held
        """,
        )
    finally:
        z.close()
        if lock is not None:
            os.close(lock)
    assert [held for _, held, _ in followers] == [1] * len(followers)


@pytest.mark.skipif(not ROOT, reason="cgroups: as root")
def test_does_a_sandbox_in_a_cgroup_used_before_count_only_its_own_cpu_time():
    """The CPU time of a cgroup is what the grader reads to stop a call at its limit: a sandbox that
    gets the cgroup of one that spun for a second starts from zero. (A zygote of its own: one that
    other tests use may have more emptied cgroups than it keeps, and remove this one.)"""
    from attnlab.grade.worker import claim_uid

    uid, lock = claim_uid()
    z = Zygote(uid=uid, gid=uid, memory_mb=2048, cpu_seconds=120)
    try:
        spinner, _ = run(
            z,
            """
            import time
            end = time.process_time() + 1.0
            while time.process_time() < end:
                pass
            def probe():
                return None
        """,
        )
        assert spinner.cpu_seconds() >= 1.0
        followers = _followers(z, spinner, "def probe():\n    return None\n")
    finally:
        z.close()
        os.close(lock)
    assert any(reused for reused, _, _ in followers)  # emptied and used again
    assert all(seconds < 0.5 for _, _, seconds in followers)


@pytest.mark.skipif(not ROOT, reason="cgroups: as root")
def test_is_a_cgroup_that_still_holds_a_process_never_emptied_for_another_sandbox():
    """A process left in a finished sandbox's cgroup (one that did not die) keeps the cgroup from
    being used again; once it is gone and reaped, the cgroup is used again with its CPU time at
    zero."""
    from attnlab.grade import jail

    group = jail.Cgroup.create(f"attnlab-test-{os.getpid()}", memory_mb=256, pids=8)
    if group is None or group.version != 1:
        pytest.skip("no v1 cgroups here")
    pid = os.fork()
    if pid == 0:
        group.add(os.getpid())
        end = time.process_time() + 0.2
        while time.process_time() < end:
            pass
        time.sleep(60)
        os._exit(0)
    try:
        while group.cpu_seconds() < 0.2:
            time.sleep(0.05)
        left = group.vacate()
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    try:
        assert not left
        assert group.vacate() and group.cpu_seconds() == 0.0
    finally:
        group.remove()


LANDLOCK_PROBE = """
import ctypes, errno, os, socket, time
import numpy as np
if SIGNALS_SCOPED:
    for kill in (lambda: os.kill(os.getppid(), 9), lambda: os.killpg(os.getpgid(os.getppid()), 9), lambda: os.kill(-1, 9)):
        try:
            kill()
        except OSError:
            pass
    time.sleep(0.5)  # time for a killed supervisor to take its sandbox with it
def _error(action):
    try:
        action()
        return 0
    except OSError as e:
        return e.errno
def _write(folder):
    with open(os.path.join(folder, "handoff"), "w") as f:
        f.write(TOKEN)
def probe():
    _write(".")  # its own scratch folder: what an honest submission may use
    # a folder it may write in but its owner may not list: shutil.rmtree alone cannot empty it
    os.makedirs("keep/deeper", mode=0o300)
    _write("keep/deeper")
    libc = ctypes.CDLL(None, use_errno=True)
    ctypes.set_errno(0)
    shm = libc.shmget(0x41544E4C, 4096, 0o1666)
    return {
        "cwd": os.getcwd(),
        "own": open("handoff").read() == TOKEN,
        "solve": float(np.linalg.solve(np.eye(2), np.ones(2)).sum()),
        "plant": _error(lambda: open(PLANT).read()),
        "site_plant": _error(lambda: open(SITE_PLANT).read()),
        "list_tmp": _error(lambda: os.listdir("/tmp")),
        "written": [d for d in ("/tmp", "/dev/shm", "/var/tmp", "/run/lock") if not _error(lambda: _write(d))],
        "socket": _error(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)),
        "udp": _error(lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM)),
        "shmget": ctypes.get_errno() if shm < 0 else 0,
    }
"""


# one sandbox of a zygote (user namespaces refused, so Landlock) writes 16 files of 63 MiB in its
# scratch folder, a folder of the host's /tmp; prints the mode, what it wrote and how it ended
FILL_SCRATCH = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from attnlab.grade.session import Output, StudentError, Zygote
code = (
    "def fill():\n"
    "    total = 0\n"
    "    for i in range(16):\n"
    "        with open('fill%d' % i, 'wb') as f:\n"
    "            for _ in range(63):\n"
    "                f.write(b'1' * (1 << 20))\n"
    "                total += 1\n"
    "    return total\n"
)
zygote = Zygote(uid=None, gid=None, memory_mb=1024, cpu_seconds=60)
try:
    sandbox = zygote.spawn(Output())
    sandbox.request("load", [code], 20, "compiling")
    sandbox.request("exec", (0, 0), 20, "executing")
    try:
        wrote, death = sandbox.call("fill", None, (), {}, 60)[0], None
    except StudentError as e:
        wrote, death = None, str(e)
    sandbox.kill()
    print(json.dumps({"mode": zygote.mode, "wrote": wrote, "death": death}))
finally:
    zygote.close()
"""


@pytest.mark.skipif(not can_refuse_userns(), reason=WHY_NOT_WITHOUT_USERNS)
def test_is_a_landlock_sandbox_ended_when_its_scratch_folder_outgrows_a_private_tmp():
    """A namespace sandbox's /tmp is a private tmpfs (128 MiB with 1024 MiB of memory); a Landlock
    sandbox's scratch folder lies in the host's /tmp, and one sandbox must not fill the host's disk:
    past that size it is ended, as past its memory limit, and does not write its 1008 MiB."""
    as_nobody = can_run_as_nobody()
    folder = _venv_under_tmp(SYSTEM_PYTHON if as_nobody else sys.executable)
    (folder / "fill.py").write_text(FILL_SCRATCH)
    make_readable(folder)
    try:
        python = str(folder / "venv" / "bin" / "python")
        found = json_from(
            [python, str(folder / "without_userns.py"), python, str(folder / "fill.py"), str(folder / "src")],
            cwd=folder,
            timeout=300,
            user=NOBODY if as_nobody else None,
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert found["mode"] == "landlock", found
    assert found["wrote"] is None and "killed" in found["death"], found


@pytest.mark.skipif(not can_refuse_userns(), reason=WHY_NOT_WITHOUT_USERNS)
def test_is_a_landlock_too_old_to_refuse_truncation_never_taken_for_the_landlock_mode():
    """Landlock ABI 1 and 2 (Linux 5.13 to 6.1) check only the read right on ``open(..., O_TRUNC)``:
    confined so, a sandbox could empty every file it may read, the instructor's packages among them.
    On such a kernel (the ABI capped in the grader's copy of the engine) the zygote offers no Landlock
    mode and falls to the weakest, which the grader warns about, rather than call it confined."""
    folder = _venv_under_tmp(sys.executable)
    engine = folder / "src" / "attnlab" / "grade" / "landlock.py"
    text = engine.read_text()
    capped = text.replace("return max(int(version), 0)", "return min(max(int(version), 0), 2)")
    assert capped != text, "the cap must reach the engine's ABI, or this tests this kernel's"
    engine.write_text(capped)
    try:
        found = _probe(folder, code="def probe():\n    return 1\n", without_userns=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert found["mode"] == "none", found


def test_does_landlock_make_no_ruleset_on_an_abi_that_lets_a_readable_file_be_emptied(monkeypatch):
    from attnlab.grade import landlock

    monkeypatch.setattr(landlock, "abi", lambda: 2)
    with pytest.raises(OSError):
        landlock.ruleset(read=["/usr"], write=[], devices={})


@pytest.mark.skipif(not can_refuse_userns(), reason=WHY_NOT_WITHOUT_USERNS)
@pytest.mark.parametrize(
    "user",
    ["this_user", pytest.param("nobody", marks=pytest.mark.skipif(not can_run_as_nobody(), reason=WHY_NOT_AS_NOBODY))],
)
def test_does_landlock_confine_a_sandbox_where_user_namespaces_are_refused(user):
    """Without namespaces: the planted course cannot be read even by its path, nor the course as
    ``pip install .`` puts it, inside the interpreter's own site-packages (a Landlock rule cannot
    mask part of the interpreter's folder); nothing is written outside the sandbox's own scratch
    folder (removed afterwards, even a folder in it that its owner cannot list), no socket or System V IPC, and (Landlock ABI 6) no signal reaches
    the grader; numpy and its own folder still work."""
    from attnlab.grade import landlock

    scoped = landlock.abi() >= 6
    folder = _venv_under_tmp(SYSTEM_PYTHON if user == "nobody" else sys.executable)
    site_plant = next((folder / "venv" / "lib").glob("python3*/site-packages")) / "attnlab" / "kit" / "solution.py"
    site_plant.parent.mkdir(parents=True)
    site_plant.write_text("# BEGIN SOLUTION\n")
    make_readable(folder)
    try:
        found = _probe(
            folder,
            user=NOBODY if user == "nobody" else None,
            code=f"SIGNALS_SCOPED = {scoped}\nSITE_PLANT = {str(site_plant)!r}\n" + LANDLOCK_PROBE,
            without_userns=True,
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert found["mode"] == "landlock" and found["errors"] == [], found
    result = found["result"]
    assert result["own"] and result["solve"] == 2.0
    assert result["plant"] == result["site_plant"] == result["list_tmp"] == errno.EACCES and result["written"] == []
    assert result["socket"] == result["udp"] == result["shmget"] == errno.ENOSYS
    assert not os.path.exists(result["cwd"])


ATTEMPTS_ON_OTHERS = """
import ctypes, errno, fcntl, json, os, resource, signal, socket, struct, sys, threading, time
sys.path.insert(0, sys.argv[1])
from attnlab.grade import jail, syscalls
os.setsid()  # as a sandbox does: its process group is its own
jail.no_new_privileges()
jail.install_syscall_filter(syscalls.template(shared_host=True).bake(os.getpid()))
parent = os.getppid()
r, w = os.pipe()
a, b = socket.socketpair()
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def attempt(action):
    try:
        action()
        return 0
    except OSError as e:
        return e.errno
def call(number, *args):
    ctypes.set_errno(0)
    if libc.syscall(number, *args) < 0:
        raise OSError(ctypes.get_errno(), "")
NOFILE = resource.RLIMIT_NOFILE
IOPRIO_GET, ROBUST_LIST = 252, 274  # x86-64
TIMER_CREATE, CLOCK_GETTIME, CLOCK_GETRES, CLOCK_NANOSLEEP = 222, 228, 229, 230  # x86-64
def cpu_clock(pid):  # a process's CPU clock (CPUCLOCK_SCHED), as clock_getcpuclockid makes it
    return ctypes.c_int(((~pid) << 3) | 2)
now, timer = (ctypes.c_long * 2)(), ctypes.c_void_p()
# the parent runs as the same user: each change, if it went through, sets what is there already
others = {
    "parent": attempt(lambda: os.kill(parent, 0)),
    "parent_group": attempt(lambda: os.killpg(os.getpgid(parent), 0)),
    "everyone": attempt(lambda: os.kill(-1, 0)),
    "parent_pidfd": attempt(lambda: signal.pidfd_send_signal(os.pidfd_open(parent), 0)),
    # a descriptor's owner gets its I/O signals, SIGKILL if F_SETSIG says so
    "parent_owns_pipe": attempt(lambda: fcntl.fcntl(r, fcntl.F_SETOWN, parent)),
    "pipe_signal": attempt(lambda: fcntl.fcntl(r, 10, signal.SIGKILL)),  # F_SETSIG
    "parent_owns_pipe_ex": attempt(lambda: fcntl.fcntl(r, 15, struct.pack("ii", 1, parent))),  # F_SETOWN_EX
    "parent_owns_pipe_ioctl": attempt(lambda: fcntl.ioctl(r, 0x8901, struct.pack("i", parent))),  # FIOSETOWN
    "parent_owns_socket_ioctl": attempt(lambda: fcntl.ioctl(a, 0x8902, struct.pack("i", parent))),  # SIOCSPGRP
    "parent_limits": attempt(lambda: resource.prlimit(parent, NOFILE, resource.prlimit(parent, NOFILE))),
    "parent_priority": attempt(lambda: os.setpriority(os.PRIO_PROCESS, parent, 0)),
    "group_priority": attempt(lambda: os.getpriority(os.PRIO_PGRP, 0)),
    "user_priority": attempt(lambda: os.getpriority(os.PRIO_USER, 0)),
    "parent_affinity": attempt(lambda: os.sched_setaffinity(parent, os.sched_getaffinity(parent))),
    "parent_scheduler": attempt(lambda: os.sched_setscheduler(parent, os.SCHED_OTHER, os.sched_param(0))),
    "parent_sched_param": attempt(lambda: os.sched_getparam(parent)),
    "parent_io_priority": attempt(lambda: call(IOPRIO_GET, 1, parent)),
    "user_io_priority": attempt(lambda: call(IOPRIO_GET, 3, 0)),
    "parent_pgid": attempt(lambda: os.getpgid(parent)),
    "parent_session": attempt(lambda: os.getsid(parent)),
    "parent_robust_list": attempt(lambda: call(ROBUST_LIST, parent, ctypes.byref(ctypes.c_void_p()), ctypes.byref(ctypes.c_size_t()))),
    # its CPU time to the nanosecond: read, timed, slept on
    "parent_cpu_clock": attempt(lambda: call(CLOCK_GETTIME, cpu_clock(parent), now)),
    "parent_cpu_clock_resolution": attempt(lambda: call(CLOCK_GETRES, cpu_clock(parent), now)),
    "parent_cpu_timer": attempt(lambda: call(TIMER_CREATE, cpu_clock(parent), None, ctypes.byref(timer))),
    "parent_cpu_sleep": attempt(lambda: call(CLOCK_NANOSLEEP, cpu_clock(parent), 0, (ctypes.c_long * 2)(), None)),
}
itself = {
    "itself": attempt(lambda: os.kill(os.getpid(), 0)),
    "own_group": attempt(lambda: os.kill(0, 0)),
    "own_group_by_id": attempt(lambda: os.killpg(os.getpgrp(), 0)),
    "own_thread": attempt(lambda: signal.pthread_kill(threading.get_ident(), 0)),
    "own_limits": attempt(lambda: resource.setrlimit(NOFILE, resource.getrlimit(NOFILE))),
    "own_limits_by_pid": attempt(lambda: resource.prlimit(os.getpid(), NOFILE, resource.prlimit(0, NOFILE))),
    "own_priority": attempt(lambda: os.nice(0) and None),
    "own_affinity": attempt(lambda: os.sched_setaffinity(0, os.sched_getaffinity(os.getpid()))),
    "own_scheduler": attempt(lambda: os.sched_getscheduler(0) and None),
    "own_io_priority": attempt(lambda: call(IOPRIO_GET, 1, 0)),
    "own_pgid": attempt(lambda: os.getpgid(0) and None),
    "own_cpu_clock": attempt(lambda: call(CLOCK_GETTIME, cpu_clock(os.getpid()), now)),
    "callers_cpu_clock": attempt(lambda: call(CLOCK_GETTIME, cpu_clock(0), now)),
    "own_thread_cpu_clock": attempt(lambda: time.clock_gettime(time.pthread_getcpuclockid(threading.get_ident())) and None),
    "process_time": attempt(lambda: time.process_time() and None),
    "monotonic_clock": attempt(lambda: call(CLOCK_GETTIME, time.CLOCK_MONOTONIC, now)),
    "own_cpu_timer": attempt(lambda: call(TIMER_CREATE, time.CLOCK_PROCESS_CPUTIME_ID, None, ctypes.byref(timer))),
    "own_cpu_sleep": attempt(lambda: call(CLOCK_NANOSLEEP, cpu_clock(0), 0, (ctypes.c_long * 2)(), None)),
}
# what Python, numpy and matplotlib ask of descriptors still works, and OpenBLAS starts its threads
ordinary = {
    "flags": attempt(lambda: fcntl.fcntl(r, fcntl.F_SETFL, fcntl.fcntl(r, fcntl.F_GETFL) | os.O_NONBLOCK)),
    "dup": attempt(lambda: os.close(fcntl.fcntl(r, fcntl.F_DUPFD_CLOEXEC, 10))),
    "inheritable": attempt(lambda: os.set_inheritable(r, True)),
    "lock": attempt(lambda: fcntl.flock(w, fcntl.LOCK_EX)),
    "isatty": attempt(lambda: os.isatty(r) and None),
}
try:
    os.get_terminal_size(r)
    ordinary["terminal_size"] = 0
except OSError as e:
    ordinary["terminal_size"] = 0 if e.errno == errno.ENOTTY else e.errno
import matplotlib
matplotlib.use("Agg")
import io, matplotlib.pyplot as plt, numpy as np
plt.plot(np.arange(3.0))
plt.savefig(io.BytesIO(), format="png")
product = float((np.ones((400, 400)) @ np.ones((400, 400)))[0, 0])
threads = len(os.listdir("/proc/self/task"))
print(json.dumps({"others": others, "itself": itself, "ordinary": ordinary, "numpy": [product, threads]}))
"""


@pytest.mark.skipif(platform.machine() != "x86_64", reason="system call numbers of x86-64")
def test_does_the_filter_let_a_sandbox_act_on_itself_only():
    """Where a sandbox runs as the grader's user (the Landlock mode), the filter is all that keeps
    it from the grader's processes: signals, limits, priorities, affinity, scheduling and CPU clocks
    reach only itself (its pid, or 0), never its parent, a process group or the user's processes; what
    Python, numpy (with OpenBLAS's threads) and matplotlib need of itself still works."""
    done = subprocess.run(
        [sys.executable, "-c", ATTEMPTS_ON_OTHERS, str(Path(__file__).resolve().parents[2] / "src")],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, OPENBLAS_NUM_THREADS="2"),
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["others"] == dict.fromkeys(found["others"], errno.ENOSYS)
    assert found["itself"] == dict.fromkeys(found["itself"], 0)
    assert found["ordinary"] == dict.fromkeys(("flags", "dup", "inheritable", "lock", "isatty", "terminal_size"), 0)
    assert found["numpy"][0] == 400.0 and found["numpy"][1] >= 2


def test_is_a_scratch_folder_removed_whatever_shape_a_sandbox_gave_it(tmp_path):
    """Without namespaces a sandbox's scratch folder is on the host's disk, and the sandbox shapes
    it (``deep_scratch_tree``): folders nested deeper than shutil.rmtree recurses or a path can
    name, a folder it may write in but not list, a link out of it. All of it goes, and nothing the
    link points to."""
    from attnlab.grade.sandbox import _remove_tree

    scratch, outside = tmp_path / "scratch", tmp_path / "outside"
    scratch.mkdir()
    outside.mkdir()
    (outside / "kept").write_text("kept")
    here = os.getcwd()
    os.chdir(scratch)
    try:
        for _ in range(2500):  # 5,000 characters of path below ``scratch``, past PATH_MAX
            os.mkdir("d")
            os.chdir("d")
        Path("bottom").write_bytes(b"x")
        os.mkdir("unlisted")
        Path("unlisted/file").write_bytes(b"y")
        os.chmod("unlisted", 0o300)
        os.symlink(outside, "out")
    finally:
        os.chdir(here)
    (scratch / "plain").write_text("z")
    _remove_tree(str(scratch))
    assert not os.path.lexists(scratch)
    assert (outside / "kept").read_text() == "kept"


def test_are_the_scratch_folders_of_a_killed_zygote_removed_by_the_next():
    """Without namespaces a sandbox's scratch folder is on the host's disk: a zygote killed with its
    worker cannot remove it, so the next zygote does, and ends what still works in it (where no
    system-call filter stops a sandbox from starting processes, they outlive a killed batch)."""
    z = Zygote(uid=None, gid=None, memory_mb=1024, cpu_seconds=60, isolate=False)
    try:
        sb, folder = run(z, "import os\ndef probe():\n    return os.getcwd()\n")
        assert os.path.isdir(folder)
    finally:
        z.proc.kill()
        z.proc.wait()
    leftover = subprocess.Popen(["sleep", "600"], cwd=folder)  # as a sandbox's child would be
    try:
        Zygote(uid=None, gid=None, memory_mb=1024, cpu_seconds=60, isolate=False).close()
        assert leftover.wait(timeout=10) == -signal.SIGKILL
    finally:
        leftover.kill()
        leftover.wait()
    assert not os.path.exists(os.path.dirname(folder))


def test_does_landlocks_view_leave_out_a_mask_inside_a_bound_folder_even_through_a_link_back_up(tmp_path):
    """Landlock cannot mask part of a folder it allows: the folder is allowed entry by entry instead,
    down to the mask (which may be listed, not read), and a link leading back up ends the carving."""
    from attnlab.grade import allowlist

    lib = tmp_path / "lib"
    (lib / "site-packages" / "attnlab").mkdir(parents=True)
    (lib / "site-packages" / "numpy").mkdir()
    (lib / "json").mkdir()
    (lib / "os.py").write_text("")
    (lib / "again").symlink_to(lib)
    site = str(lib / "site-packages")
    readable, listed = allowlist.landlock_view([str(lib), str(lib / "site-packages" / "numpy")], [site])
    assert listed == [site]
    assert set(readable) == {str(lib / "json"), str(lib / "os.py"), str(lib / "site-packages" / "numpy")}
