"""Linux isolation primitives for the sandbox: namespaces, mounts, privilege drop, process sweeps.

Loaded by file path inside the sandbox's zygote, so it imports nothing from attnlab. Everything
here degrades to a no-op (reported by the return value) where the platform refuses it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import stat
import time

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 1, 36, 38

_libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def unshare(flags: int) -> None:
    _check(_libc.unshare(ctypes.c_int(flags)), "unshare")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    enc = lambda s: None if s is None else s.encode()  # noqa: E731
    _check(_libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)),
           f"mount {target}")


def prctl(option: int, arg: int) -> None:
    _check(_libc.prctl(ctypes.c_int(option), ctypes.c_ulong(arg), ctypes.c_ulong(0),
                       ctypes.c_ulong(0), ctypes.c_ulong(0)), "prctl")


def is_root() -> bool:
    return os.geteuid() == 0


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def private_namespace(*, network: bool = True) -> str:
    """Enter new mount (and network) namespaces. Returns how: "root", "userns" or "none"."""
    flags = CLONE_NEWNS | (CLONE_NEWNET if network else 0)
    if is_root():
        unshare(flags)
        mode = "root"
    else:
        uid, gid = os.getuid(), os.getgid()
        try:
            unshare(flags | CLONE_NEWUSER)
        except OSError:
            return "none"
        with open("/proc/self/setgroups", "w") as f:
            f.write("deny")
        with open("/proc/self/uid_map", "w") as f:
            f.write(f"{uid} {uid} 1")
        with open("/proc/self/gid_map", "w") as f:
            f.write(f"{gid} {gid} 1")
        mode = "userns"
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    return mode


# Never covered whole, whatever a caller passes (a HOME of "/" must not hide /dev or /usr).
SYSTEM = frozenset({"/", "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/opt", "/proc",
                    "/run", "/sbin", "/sys", "/tmp", "/usr", "/var", "/usr/local", "/usr/lib"})


def hide(paths: list[str], keep: list[str]) -> list[str]:
    """Cover each path with an empty read-only tmpfs (files: /dev/null), except where it holds a
    path in ``keep``: then its other entries are covered one by one. Returns what was covered."""
    covered: list[str] = []
    for path in sorted({os.path.realpath(p) for p in paths}):
        if path in SYSTEM or not os.path.lexists(path) or any(_within(path, c) for c in covered):
            continue
        _cover(path, [os.path.realpath(k) for k in keep], covered)
    return covered


def _cover(path: str, keep: list[str], covered: list[str]) -> None:
    if any(_within(k, path) for k in keep):
        if any(k == path for k in keep) or not os.path.isdir(path):
            return
        for entry in sorted(os.listdir(path)):
            _cover(os.path.join(path, entry), keep, covered)
        return
    if os.path.isdir(path) and not os.path.islink(path):
        mount("tmpfs", path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=000")
    elif os.path.isfile(path) and not os.path.islink(path):
        mount("/dev/null", path, None, MS_BIND)
    else:
        return
    covered.append(path)


def expose(needed: list[str]) -> None:
    """Make each needed tree reachable by any user: where an ancestor is not world-searchable (the
    interpreter under /root, mode 0700), cover that ancestor with a tmpfs that holds only a
    read-only bind mount of the needed child."""
    fixed: dict[str, list[str]] = {}
    for path in needed:
        path = os.path.realpath(path)
        parts = path.strip("/").split("/")
        for i in range(1, len(parts)):
            anc = "/" + "/".join(parts[:i])
            if not os.stat(anc).st_mode & stat.S_IXOTH:
                fixed.setdefault(anc, []).append("/" + "/".join(parts[:i + 1]))
                break
    for anc, children in fixed.items():
        fds = {c: os.open(c, os.O_PATH) for c in set(children)}
        mount("tmpfs", anc, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=0755")
        for child, fd in fds.items():
            os.makedirs(child, exist_ok=True)
            mount(f"/proc/self/fd/{fd}", child, None, MS_BIND | MS_REC)
            os.close(fd)
        mount(None, anc, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)


def private_tmp(size_mb: int = 256) -> None:
    """Fresh, empty /tmp, /var/tmp and /dev/shm for one sandbox (inside its own mount namespace)."""
    for path in ("/tmp", "/var/tmp", "/dev/shm"):
        if os.path.isdir(path):
            mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, f"size={size_mb}m,mode=1777")


def drop_privileges(uid: int, gid: int) -> None:
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)


def no_new_privileges() -> None:
    prctl(PR_SET_NO_NEW_PRIVS, 1)


def die_with_parent() -> None:
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def become_subreaper() -> bool:
    try:
        prctl(PR_SET_CHILD_SUBREAPER, 1)
        return True
    except OSError:
        return False


def _procs() -> list[tuple[int, int, int, str]]:
    """(pid, ppid, real uid, state) of every live process."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status") as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
            out.append((int(name), int(fields["PPid"].split()[0]), int(fields["Uid"].split()[0]),
                        fields["State"].split()[0]))
        except (OSError, KeyError, ValueError, IndexError):
            continue
    return out


def descendants(root: int) -> list[int]:
    procs = _procs()
    children: dict[int, list[int]] = {}
    for pid, ppid, _, state in procs:
        if state != "Z":
            children.setdefault(ppid, []).append(pid)
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def reap() -> dict[int, int]:
    """Collect every finished child; returns pid -> wait status."""
    done = {}
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return done
        if pid == 0:
            return done
        done[pid] = status


def sweep(*, uid: int | None, reaped: dict[int, int], limit: float = 5.0) -> bool:
    """Kill every descendant of this process and, as root, every process of ``uid``, until none is
    left (the caller must be a subreaper, so that daemons started in a new session stay its
    descendants). Wait statuses of reaped children land in ``reaped``. Returns whether nothing
    is left."""
    end = time.monotonic() + limit
    me = os.getpid()
    while True:
        if uid is not None and is_root():
            _kill_as(uid)
        victims = set(descendants(me))
        if uid is not None:
            victims |= {pid for pid, _, u, st in _procs() if u == uid and st != "Z" and pid != me}
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        reaped.update(reap())
        if not victims:
            return True
        if time.monotonic() > end:
            return False
        time.sleep(0.005)


def _kill_as(uid: int) -> None:
    """kill(-1, SIGKILL) from a helper running as ``uid``: reaches every process of that user."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            os.kill(-1, signal.SIGKILL)
        finally:
            os._exit(0)
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def set_limits(*, memory_mb: int, cpu_seconds: int, nproc: int | None, fsize_mb: int = 64) -> None:
    import resource

    def lim(which: int, value: int) -> None:
        try:
            _, hard = resource.getrlimit(which)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(which, (value, value))
        except (ValueError, OSError):
            pass

    lim(resource.RLIMIT_AS, memory_mb * 1024 * 1024)
    lim(resource.RLIMIT_CPU, cpu_seconds)
    lim(resource.RLIMIT_FSIZE, fsize_mb * 1024 * 1024)
    lim(resource.RLIMIT_CORE, 0)
    lim(resource.RLIMIT_NOFILE, 256)
    if nproc is not None:
        lim(resource.RLIMIT_NPROC, nproc)


