"""Linux isolation primitives for the sandbox: namespaces, an allow-list root, cgroups, limits.

A sandbox sees a root file system built for it (see ``View``): read-only binds of exactly the paths
it may use, a private ``/tmp`` and ``/dev/shm``, a minimal ``/dev`` and the ``/proc`` of its own PID
namespace. The read-only part is built once per zygote (``prepare_root``) and copied into each
sandbox's mount namespace, which adds only its private parts (``enter_root``). It lives in new mount, PID, IPC, UTS and network namespaces (and, without root, a new
user namespace), so that everything it starts (processes, IPC objects, files, sockets) dies with the
PID namespace's first process. Loaded by file path inside the sandbox's zygote, so it imports
nothing from attnlab.
"""

from __future__ import annotations

import ctypes
import os
import resource  # here, not in set_limits: imported there, it would be imported by every sandbox
import signal
import time

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 1, 24, 36, 38
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
ST_RDONLY, ST_NOSUID, ST_NODEV, ST_NOEXEC = 1, 2, 4, 8
# (os.uname, not the platform module: a worker imports this module before it starts its zygote)
MACHINE = os.uname().machine
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}.get(MACHINE)
SYS_CAPSET = {"x86_64": 126, "aarch64": 91}.get(MACHINE)

# the C library through the symbols this process already has (``find_library`` would run ldconfig)
_libc = ctypes.CDLL(None, use_errno=True)


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def unshare(flags: int) -> None:
    _check(_libc.unshare(ctypes.c_int(flags)), "unshare")


def setns(fd: int, nstype: int) -> None:
    _check(_libc.setns(ctypes.c_int(fd), ctypes.c_int(nstype)), "setns")


def _enc(s: str | None) -> bytes | None:
    return None if s is None else s.encode()


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    _check(_libc.mount(_enc(source), _enc(target), _enc(fstype), ctypes.c_ulong(flags), _enc(data)), f"mount {target}")


def prctl(option: int, *args: int) -> None:
    values = (*args, 0, 0, 0, 0)[:4]
    _check(_libc.prctl(ctypes.c_int(option), *(ctypes.c_ulong(v) for v in values)), "prctl")


def is_root() -> bool:
    return os.geteuid() == 0


# ---- the allow-list root ------------------------------------------------------------------------


class View:
    """What a sandbox's root holds: ``binds`` (host paths, bound read-only at the same path),
    ``masks`` (folders inside binds covered by an empty folder, e.g. a site-packages whose allowed
    packages are bound one by one) and the size of its private scratch. (Not a dataclass: a worker
    imports this module before it starts its zygote, and dataclasses imports inspect.)"""

    def __init__(self, binds: list[str] | None = None, masks: list[str] | None = None, scratch_mb: int = 128):
        self.binds, self.masks, self.scratch_mb = list(binds or []), list(masks or []), scratch_mb


DEVICES = ("null", "zero", "full", "random", "urandom")


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _bind_flags(path: str) -> int:
    """Read-only remount flags that keep the source mount's locked flags (a user namespace may not
    clear nosuid, nodev or noexec of a mount it did not make)."""
    flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV
    try:
        if os.statvfs(path).f_flag & ST_NOEXEC:
            flags |= MS_NOEXEC
    except OSError:
        pass
    return flags


def prepare_root(view: View, stage: str, *, pivot: bool = False) -> None:
    """Build the read-only part of every sandbox's root, once, in a fresh tmpfs at ``stage``: the
    binds and masks, ``/dev`` and the empty mount points of what each sandbox gets of its own
    (``enter_root``). Call in a mount namespace of its own (``stage`` is an empty folder there).
    With ``pivot``, that namespace then holds this root alone, as its root: a sandbox that starts
    from a copy of it copies these mounts only, and has nothing to pivot out of and unmount."""
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    sources = {}
    for path in sorted(set(view.binds), key=lambda p: (p.count("/"), p)):
        try:
            sources[path] = (os.open(path, os.O_PATH | os.O_CLOEXEC), os.path.isdir(path), _bind_flags(path))
        except OSError:
            continue
    devices = {d: os.open(f"/dev/{d}", os.O_PATH | os.O_CLOEXEC) for d in DEVICES if os.path.exists(f"/dev/{d}")}
    mount("tmpfs", stage, "tmpfs", MS_NOSUID | MS_NODEV, "size=16m,mode=0755")
    root = stage
    masks = sorted(set(view.masks))
    done_masks: set[str] = set()

    def apply_masks(under: str) -> None:
        for m in masks:
            if m not in done_masks and _within(m, under) and m != under and os.path.isdir(root + m):
                mount("tmpfs", root + m, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=0755")
                done_masks.add(m)

    # binds under /tmp land in the folder that each sandbox's private /tmp covers: ``enter_root``
    # binds them again on top of it
    _mountpoint(root + "/tmp", True)
    for path, (fd, is_dir, flags) in sources.items():
        target = _mountpoint(root + path, is_dir)
        mount(f"/proc/self/fd/{fd}", target, None, MS_BIND | MS_REC)
        mount(None, target, None, flags)
        os.close(fd)
        apply_masks(path)
    for m in done_masks:
        mount(None, root + m, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)

    dev = _mountpoint(root + "/dev", True)
    mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "size=64k,mode=0755")
    for name, fd in devices.items():
        mount(f"/proc/self/fd/{fd}", _mountpoint(f"{dev}/{name}", False), None, MS_BIND)
        os.close(fd)
    for name, target in (
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ):
        os.symlink(target, f"{dev}/{name}")
    _mountpoint(f"{dev}/shm", True)
    mount(None, dev, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NOEXEC)
    _mountpoint(root + "/proc", True)
    mount(None, root, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    if pivot:
        os.chdir(root)
        pivot_root(".", ".")
        _check(_libc.umount2(b".", ctypes.c_int(MNT_DETACH)), "umount old root")
        os.chdir("/")


def enter_root(view: View, stage: str) -> None:
    """Pivot into a copy of the root that ``prepare_root`` built at ``stage`` (``stage`` empty: it
    pivoted there itself, and this copy of its namespace is that root already), with a private
    ``/tmp`` and ``/dev/shm`` and the ``/proc`` of its own PID namespace. Call inside a copy of the
    template's mount namespace and a new PID namespace, as that namespace's first process."""
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    if stage:
        # a copy of its own to pivot into: where the template belongs to another user namespace,
        # its mounts are locked together here, and pivot_root refuses a locked mount
        mount(stage, stage, None, MS_BIND | MS_REC)
    root = stage
    try:
        mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    except OSError:
        pass  # e.g. a container whose /proc is partly covered: the sandbox simply has no /proc
    tops: list[str] = []
    for path in sorted(p for p in set(view.binds) if _within(p, "/tmp") and p != "/tmp"):
        if not any(_within(path, top) for top in tops) and os.path.lexists(root + path):
            tops.append(path)
    # the template's binds under /tmp, opened before the private /tmp covers them
    held = {path: (os.open(root + path, os.O_PATH | os.O_CLOEXEC), os.path.isdir(root + path)) for path in tops}
    scratch = f"size={view.scratch_mb}m,mode=1777"
    mount("tmpfs", root + "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, scratch)
    for path, (fd, is_dir) in held.items():
        # a copy of the template's mount keeps its read-only flags, and its masks come along (its
        # file descriptor named through the host's /proc, or, in a template that is the root, the
        # /proc mounted above)
        mount(f"/proc/self/fd/{fd}", _mountpoint(root + path, is_dir), None, MS_BIND | MS_REC)
        os.close(fd)
    mount("tmpfs", root + "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, scratch)
    if stage:
        os.chdir(root)
        pivot_root(".", ".")
        _check(_libc.umount2(b".", ctypes.c_int(MNT_DETACH)), "umount old root")
    os.chdir("/")
    for path in ("/", *tops):
        if not os.statvfs(path).f_flag & ST_RDONLY:
            raise OSError(30, f"the sandbox's {path} is writable")


def _mountpoint(target: str, is_dir: bool) -> str:
    if is_dir:
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if not os.path.exists(target):
            open(target, "w").close()
    return target


def pivot_root(new: str, old: str) -> None:
    if SYS_PIVOT_ROOT is None:
        raise OSError(38, f"pivot_root: unknown system call number on {MACHINE}")
    _check(_libc.syscall(ctypes.c_long(SYS_PIVOT_ROOT), _enc(new), _enc(old)), "pivot_root")


def map_user(uid: int, gid: int) -> None:
    """Inside a new user namespace: keep the caller's ids (it is not root there)."""
    with open("/proc/self/setgroups", "w") as f:
        f.write("deny")
    with open("/proc/self/uid_map", "w") as f:
        f.write(f"{uid} {uid} 1")
    with open("/proc/self/gid_map", "w") as f:
        f.write(f"{gid} {gid} 1")


def sethostname(name: str) -> None:
    _check(_libc.sethostname(name.encode(), ctypes.c_size_t(len(name))), "sethostname")


# ---- privileges and lifetime --------------------------------------------------------------------


def drop_privileges(uid: int, gid: int) -> None:
    """Root to an unprivileged user id: every capability goes with it."""
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)


def drop_capabilities() -> None:
    """Inside a user namespace the creator holds every capability there until it drops them."""
    for cap in range(64):
        try:
            prctl(PR_CAPBSET_DROP, cap)
        except OSError:
            break
    if SYS_CAPSET is None:
        raise OSError(38, "capset: unknown system call number")

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    header, data = Header(0x20080522, 0), (Data * 2)()
    _check(_libc.syscall(ctypes.c_long(SYS_CAPSET), ctypes.byref(header), ctypes.byref(data)), "capset")


def no_new_privileges() -> None:
    prctl(PR_SET_NO_NEW_PRIVS, 1)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install_syscall_filter(program: bytes) -> None:
    """A compiled seccomp program (``syscalls.compile_filter``) on this process and everything it
    starts; after ``no_new_privileges``."""
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.addressof(buffer))
    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog))


def die_with_parent() -> None:
    """SIGKILL when the parent dies. Call after any change of user id, which clears it. (Linux only:
    elsewhere the parent's sweep is all there is.)"""
    try:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (AttributeError, OSError):
        pass


def become_subreaper() -> bool:
    """Orphaned descendants stay ours (to sweep) instead of going to init."""
    try:
        prctl(PR_SET_CHILD_SUBREAPER, 1)
        return True
    except (AttributeError, OSError):
        return False


def limits(*, memory_mb: int, cpu_seconds: int, nproc: int | None, fsize_mb: int = 64) -> dict[str, int | None]:
    """A value for every resource limit there is (``RLIMIT_*``), so that none is the grader's: a
    limit left as inherited would let a sandbox have what the grading user may (a real-time
    priority, a high one, locked memory). None leaves one as it is, for the reason given."""
    mib = 1024 * 1024
    return {
        "RLIMIT_AS": memory_mb * mib,
        "RLIMIT_DATA": memory_mb * mib,  # within the address space anyway
        "RLIMIT_RSS": memory_mb * mib,  # ignored by Linux; set all the same
        "RLIMIT_STACK": 8 * mib,  # the usual default, whatever the grader's shell set
        "RLIMIT_MEMLOCK": 0,  # nothing honest locks memory
        "RLIMIT_CPU": cpu_seconds,
        "RLIMIT_RTTIME": 0,  # no real-time scheduling (and none to take: RLIMIT_RTPRIO)
        "RLIMIT_RTPRIO": 0,
        "RLIMIT_NICE": 0,  # a priority no higher than it was given
        "RLIMIT_FSIZE": fsize_mb * mib,
        "RLIMIT_CORE": 0,
        "RLIMIT_NOFILE": 256,
        "RLIMIT_OFILE": 256,  # the same limit under its BSD name
        "RLIMIT_MSGQUEUE": 0,
        "RLIMIT_SIGPENDING": 1024,  # queued signals are kernel memory
        # None where it would count the grading user's processes too (its own user id under Landlock
        # is decided by the caller); a cgroup or a user id of its own counts them instead
        "RLIMIT_NPROC": nproc,
    }


def set_limits(*, memory_mb: int, cpu_seconds: int, nproc: int | None, fsize_mb: int = 64) -> None:
    """Lower every resource limit to ``limits``'s value (never above its hard limit)."""
    for name, value in limits(memory_mb=memory_mb, cpu_seconds=cpu_seconds, nproc=nproc, fsize_mb=fsize_mb).items():
        which = getattr(resource, name, None)
        if which is None or value is None:
            continue
        try:
            _, hard = resource.getrlimit(which)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(which, (value, value))
        except (ValueError, OSError):
            pass


# ---- cgroups: limits for a submission's whole process tree --------------------------------------


# what a finished sandbox may leave charged to its memory group for the group to serve again: the
# kernel's objects of its namespaces, freed a moment after its last process (measured: 0.1-0.5 MiB;
# a fresh group has none, so the next sandbox may get up to this much less before its limit)
LEFTOVER = 1 << 20


class Cgroup:
    """A sandbox's control groups (v1 hierarchies or one v2 group): memory, process count and CPU
    accounting for every process it starts; once it has finished, emptied for the next (``vacate``). ``create`` returns None where the machine has none we
    may write (no root, a read-only /sys/fs/cgroup)."""

    def __init__(self, dirs: dict[str, str], version: int):
        self.dirs, self.version = dirs, version

    @classmethod
    def create(cls, name: str, *, memory_mb: int, pids: int) -> "Cgroup | None":
        if not is_root():
            return None
        try:
            v1 = _v1_dirs()
            if {"memory", "pids", "cpuacct"} <= set(v1):
                dirs = {
                    c: os.path.join(base, name) for c, base in v1.items() if c in ("memory", "pids", "cpuacct", "cpu")
                }
                group = cls(dirs, 1)
                for d in set(group.dirs.values()):
                    os.makedirs(d, exist_ok=True)
                mem = group.dirs["memory"]
                _write(f"{mem}/memory.limit_in_bytes", str(memory_mb << 20))
                _write_optional(f"{mem}/memory.memsw.limit_in_bytes", str(memory_mb << 20))
                _write_optional(f"{mem}/memory.swappiness", "0")
                _write(f"{group.dirs['pids']}/pids.max", str(pids))
                return group
            v2 = _v2_base()
            if v2 is not None:
                d = os.path.join(v2, name)
                os.makedirs(d, exist_ok=True)
                _write(f"{d}/memory.max", str(memory_mb << 20))
                _write_optional(f"{d}/memory.swap.max", "0")
                _write(f"{d}/pids.max", str(pids))
                return cls({"unified": d}, 2)
        except OSError:
            return None
        return None

    @staticmethod
    def remove_stale(prefix: str = "attnlab-") -> None:
        """Remove the empty groups of zygotes that died without cleaning up (``attnlab-<pid>-<n>``)."""
        if not is_root():
            return
        try:
            bases = set(_v1_dirs().values()) | ({b} if (b := _v2_base_if_present()) else set())
        except OSError:
            return
        for base in bases:
            try:
                names = os.listdir(base)
            except OSError:
                continue
            for name in names:
                parts = name.split("-")
                if (
                    len(parts) == 3
                    and name.startswith(prefix)
                    and parts[1].isdigit()
                    and not os.path.exists(f"/proc/{parts[1]}")
                ):
                    try:
                        os.rmdir(os.path.join(base, name))
                    except OSError:
                        pass

    def add(self, pid: int) -> None:
        for d in set(self.dirs.values()):
            _write(f"{d}/cgroup.procs", str(pid))

    def cpu_seconds(self) -> float:
        try:
            if self.version == 1:
                with open(f"{self.dirs['cpuacct']}/cpuacct.usage") as f:
                    return int(f.read()) / 1e9
            with open(f"{self.dirs['unified']}/cpu.stat") as f:
                for line in f:
                    if line.startswith("usage_usec"):
                        return int(line.split()[1]) / 1e6
        except (OSError, ValueError, KeyError):
            pass
        return 0.0

    def vacate(self) -> bool:
        """Make this group, whose sandbox has finished, what a new one would be for the next
        sandbox: no task in any of its hierarchies, a process count of zero, at most ``LEFTOVER``
        bytes still charged to its memory and its CPU time counted from zero. False where it cannot
        be (a task left, a larger charge, a v2 group, whose CPU time cannot be set back): it must go
        (``remove``)."""
        if self.version != 1:
            return False
        try:
            if any(_read(f"{d}/cgroup.procs") for d in set(self.dirs.values())):
                return False
            mem = self.dirs["memory"]
            if int(_read(f"{self.dirs['pids']}/pids.current")) or int(_read(f"{mem}/memory.usage_in_bytes")) > LEFTOVER:
                return False
            _write_optional(f"{mem}/memory.max_usage_in_bytes", "0")
            usage = f"{self.dirs['cpuacct']}/cpuacct.usage"
            _write(usage, "0")
            return int(_read(usage)) == 0
        except (OSError, ValueError):
            return False

    def remove(self) -> None:
        for d in set(self.dirs.values()):
            for _ in range(200):
                try:
                    os.rmdir(d)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.005)  # the last tasks are still leaving


def _read(path: str) -> str:
    with open(path) as f:
        return f.read().strip()


def _write(path: str, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def _write_optional(path: str, value: str) -> None:
    try:
        _write(path, value)
    except OSError:
        pass


def _mounts() -> list[tuple[str, str, str]]:
    """(mount point, file system type, super options) of every cgroup mount. The table names every
    mount of the host, and a sandbox starts with a copy of the zygote's memory: it is read into one
    buffer, wiped afterwards, and only the cgroup mounts leave it."""
    size = 1 << 16
    while True:
        buf = bytearray(size)
        fd = os.open("/proc/self/mountinfo", os.O_RDONLY | os.O_CLOEXEC)
        try:
            n, view = 0, memoryview(buf)
            while n < size and (got := os.readv(fd, [view[n:]])):
                n += got
        finally:
            os.close(fd)
        try:
            if n < size:
                return _cgroup_mounts(buf, n)
        finally:
            buf[:n] = bytes(n)
            view.release()
        size *= 4  # (a table that filled the buffer: read again, whole)


def _cgroup_mounts(buf: bytearray, n: int) -> list[tuple[str, str, str]]:
    out = []
    start = 0
    while start < n:
        end = buf.find(b"\n", start, n)
        end = n if end < 0 else end
        split = buf.find(b" - ", start, end)
        if split >= 0 and buf.startswith(b"cgroup", split + 3):
            fields, rest = buf[start:split].split(), buf[split + 3 : end].split()
            if len(fields) >= 5 and len(rest) >= 3 and rest[0] in (b"cgroup", b"cgroup2"):
                out.append((fields[4].decode().replace("\\040", " "), rest[0].decode(), rest[2].decode()))
        start = end + 1
    return out


def _own_groups() -> dict[str, str]:
    groups = {}
    with open("/proc/self/cgroup") as f:
        for line in f:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            for c in controllers.split(",") if controllers else [""]:
                groups[c] = path
    return groups


def _v1_dirs() -> dict[str, str]:
    """controller -> the folder of this process's own group in that v1 hierarchy (writable)."""
    own = _own_groups()
    out = {}
    for point, fstype, opts in _mounts():
        if fstype != "cgroup":
            continue
        for c in opts.split(","):
            if c in ("memory", "pids", "cpuacct", "cpu") and c in own:
                d = point + own[c].rstrip("/")
                if os.access(d, os.W_OK):
                    out[c] = d
    return out


def _v2_base_if_present() -> str | None:
    for point, fstype, _ in _mounts():
        if fstype == "cgroup2" and os.path.isdir(os.path.join(point, "attnlab")):
            return os.path.join(point, "attnlab")
    return None


def _v2_base() -> str | None:
    """A v2 folder where sandbox groups can get memory and pids limits: <root>/attnlab."""
    for point, fstype, _ in _mounts():
        if fstype != "cgroup2":
            continue
        try:
            with open(f"{point}/cgroup.subtree_control") as f:
                enabled = f.read().split()
        except OSError:
            continue
        if not {"memory", "pids"} <= set(enabled):
            continue
        base = os.path.join(point, "attnlab")
        os.makedirs(base, exist_ok=True)
        _write(f"{base}/cgroup.subtree_control", "+memory +pids" + (" +cpu" if "cpu" in enabled else ""))
        return base
    return None


# ---- processes --------------------------------------------------------------------------------


# Every process of the machine shows here, and a sandbox names its own (prctl's PR_SET_NAME): what
# is read of them must go where no sandbox finds it later. A sandbox is forked from the zygote, which
# reads these after each sandbox it ends, and counts them itself before it confines itself; so a
# status file is read into one buffer, wiped after each read, and only the numbers asked for leave it.
_STATUS = bytearray(8192)


def _status(pid: str, keys: tuple[bytes, ...]) -> list[bytes]:
    """The first word of each of ``keys``' lines in /proc/``pid``/status (OSError, or ValueError
    where one is missing)."""
    fd = os.open(f"/proc/{pid}/status", os.O_RDONLY | os.O_CLOEXEC)
    try:
        n = os.readv(fd, [_STATUS])
    finally:
        os.close(fd)
    try:
        words = []
        for key in keys:
            at = _STATUS.find(b"\n" + key + b":", 0, n)
            if at < 0:
                raise ValueError(f"no {key!r}")
            start = at + len(key) + 2
            words.append(bytes(_STATUS[start : _STATUS.find(b"\n", start, n)].split()[0]))
        return words
    finally:
        _STATUS[:n] = bytes(n)


def _procs() -> list[tuple[int, int, int, str]]:
    """(pid, ppid, real uid, state) of every live process."""
    out: list[tuple[int, int, int, str]] = []
    if not os.path.isdir("/proc"):  # no /proc (macOS): nothing to list
        return out
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            ppid, uid, state = _status(name, (b"PPid", b"Uid", b"State"))
            out.append((int(name), int(ppid), int(uid), state.decode()))
        except (OSError, ValueError, IndexError):
            continue
    return out


def tasks_of(uid: int) -> int:
    """How many tasks (threads included, as RLIMIT_NPROC counts them) run as real user ``uid``."""
    count = 0
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            owner, threads = _status(name, (b"Uid", b"Threads"))
            if int(owner) == uid:
                count += int(threads)
        except (OSError, ValueError, IndexError):
            continue
    return count


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
    done: dict[int, int] = {}
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return done
        if pid == 0:
            return done
        done[pid] = status


def sweep(*, uid: int | None, reaped: dict[int, int], limit: float = 5.0) -> bool:
    """Without namespaces: kill every descendant of this process and, as root, every process of
    ``uid``, until none is left. Wait statuses of reaped children land in ``reaped``. Returns
    whether nothing is left."""
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
