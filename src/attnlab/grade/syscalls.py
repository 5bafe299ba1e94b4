"""The system calls a submission may make: an allow-list, enforced by a seccomp filter.

Namespaces hide the host's files, processes, network and IPC; some kernel state has no namespace
(key rings, which are kept per user id; vsock, which reaches the machine's hypervisor; perf events,
BPF, userfaultfd, io_uring). The filter allows what Python, numpy and matplotlib use, on the model of
the container runtimes' default profile for a process without capabilities, and nothing else: any
other call fails with ENOSYS ("not implemented"), which libraries read as an older kernel and work
around. In particular: no key rings, no new namespaces, no mounts, no ptrace, and sockets only of the
local families (unix, netlink, and IP inside the sandbox's empty network namespace), with no address.

A sandbox acts on itself only. It starts no process and no program: ``clone`` makes threads only,
``fork``, ``vfork``, ``execve`` and ``execveat`` are refused (``clone3``, whose flags a filter
cannot read, gets ENOSYS and libc falls back to ``clone``), so the memory limit is the whole
submission's and nothing of it outlives its process. Every call that names a process, a process
group or a user (``ON_ITSELF``) is allowed only with the caller's own pid (or 0, "the caller"):
where a sandbox runs as the grader's user (the Landlock mode), it can change no other process's
limits, priority, affinity or signals. Its pid goes into the program after the fork
(``Template.bake``): the zygote compiles the list once with a placeholder.

libseccomp (present wherever systemd or apt is) compiles the list once per zygote; each sandbox
installs the program with one ``prctl`` (``jail.install_syscall_filter``). Loaded by path from
``sandbox.py``: imports nothing from attnlab.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import functools
import os
import struct

# Each line: calls and why they reach nothing but the caller and what its namespaces or Landlock
# let it open. Calls that name a process are in ``ON_ITSELF``; whatever is in neither list is refused
# on purpose, among them ptrace, process_vm_readv/writev, kcmp, pidfd_open, pidfd_getfd,
# pidfd_send_signal, fanotify and inotify (which would show when a neighbour opens a shared file).
# The page cache is shared by every process of the machine, across namespaces: which pages of a
# file every sandbox may read (numpy's own) are in memory is a memory that outlives a sandbox and
# joins any two. So none of the calls that read it (mincore, cachestat, preadv2 with RWF_NOWAIT)
# or push pages out of it (posix_fadvise, madvise's COLD and PAGEOUT) or load them without a read
# (readahead) is allowed; glibc's preadv2 and pwritev2 fall back to preadv and pwritev when the
# flags are 0, so they go entirely. What stays is the time a plain read takes (a page on disk is
# slower than a page in memory): a noisy channel that no filter can close, as eviction by reading
# other files is; and, where a sandbox has its own /proc (the namespace modes), the pages fault-
# around maps next to a touched one, which /proc/self/pagemap shows.
# A sandbox's sockets are those it inherits (its channel) and those it makes; it never needs an
# address, and through one it would reach the host's sockets (a path is no namespace's: journald's
# socket, /dev/log; an abstract name is the network namespace's, the host's in the Landlock mode),
# or take a name a service of the host binds later. So bind, listen, accept, connect, sendmsg and
# sendmmsg (whose address a filter cannot read) are refused, and sendto is allowed without one.
# Memory a sandbox holds must be memory its limits count. Where it has no cgroup (the modes without
# root), RLIMIT_AS counts only what is mapped: the pages of a memfd file, of a System V segment
# attached and detached again (its semaphore arrays and message queues are kernel memory too) and
# of a pipe made larger with F_SETPIPE_SZ are not, so none of these is allowed (POSIX message
# queues stay: their RLIMIT_MSGQUEUE is 0). Left: files in its scratch folder (in the namespace
# modes a tmpfs of a fixed size; in the Landlock mode a folder of the host's /tmp, each file within
# RLIMIT_FSIZE, their number unbounded) and pipes of the default size (64 KiB each, within
# RLIMIT_NOFILE).
ALLOWED = (
    "access", "faccessat", "faccessat2", "open", "openat", "openat2", "creat",  # a path it may reach
    "close", "close_range", "dup", "dup2", "dup3", "pipe", "pipe2",  # its own descriptors
    "read", "readv", "pread64", "preadv", "write", "writev", "pwrite64", "pwritev",  # its descriptors
    "lseek", "_llseek", "sendfile", "sendfile64", "splice", "tee", "vmsplice", "copy_file_range",  # same
    "flock",  # a lock on a file it opened: whoever else locks that file waits at most for this process's end
    "fsync", "fdatasync", "syncfs", "sync_file_range", "sync",  # flush to disk: no target, no data
    "fallocate", "ftruncate", "ftruncate64", "truncate", "truncate64",  # files it may write
    "stat", "stat64", "lstat", "lstat64", "fstat", "fstat64", "newfstatat", "fstatat64", "statx",  # paths it reaches
    "statfs", "statfs64", "fstatfs", "fstatfs64", "getdents", "getdents64", "readlink", "readlinkat",  # same
    "getcwd", "chdir", "fchdir", "umask",  # its own working folder and mask
    "mkdir", "mkdirat", "mknod", "mknodat", "rmdir", "rename", "renameat", "renameat2",  # where it may write
    "link", "linkat", "symlink", "symlinkat", "unlink", "unlinkat",  # where it may write
    "chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "fchownat", "lchown",  # its own files
    "utime", "utimes", "utimensat", "futimesat",  # its own files (and SHARED_HOST without namespaces)
    "getxattr", "lgetxattr", "fgetxattr", "listxattr", "llistxattr", "flistxattr",  # files it reaches
    "setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr",  # its own files
    "select", "_newselect", "pselect6", "poll", "ppoll", "epoll_create", "epoll_create1",  # its descriptors
    "epoll_ctl", "epoll_wait", "epoll_pwait", "epoll_pwait2", "eventfd", "eventfd2",  # its descriptors
    "signalfd", "signalfd4", "timerfd_create", "timerfd_settime", "timerfd_gettime",  # its own signals, timers
    "futex", "futex_waitv",  # words in its own memory (or memory it shares on purpose)
    "set_robust_list", "set_tid_address", "rseq",  # the calling thread's own bookkeeping
    "nanosleep", "pause", "restart_syscall", "sched_yield",  # waits for itself (clock_nanosleep: ``CLOCKS``)
    "brk", "mmap", "mmap2", "munmap", "mremap", "mprotect", "msync",  # its own memory
    "mlock", "mlock2", "munlock", "mlockall", "munlockall",  # its own memory, within RLIMIT_MEMLOCK
    "membarrier", "pkey_alloc", "pkey_free", "pkey_mprotect", "remap_file_pages",  # its own memory
    "map_shadow_stack", "mseal",  # its own memory
    "exit", "exit_group",  # ends the caller
    "wait4", "waitid", "waitpid",  # its own children only, and it has none (no fork)
    "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigpending", "rt_sigsuspend",  # its own handlers
    "rt_sigtimedwait", "sigaltstack", "sigreturn", "sigprocmask",  # its own signals
    "arch_prctl", "set_thread_area", "get_thread_area",  # the calling thread's registers
    "prctl",  # options of the caller itself (those that reach others need capabilities it lacks)
    "seccomp",  # only narrows the caller's own calls
    "getpid", "getppid", "gettid", "getpgrp", "setsid",  # about itself; setsid makes its own session
    "getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid", "getgroups",  # its own ids
    "setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid",  # among the ids it holds
    "setgroups", "setfsuid", "setfsgid",  # same: any other id needs a capability it lacks
    "capget",  # reads capabilities (of any pid: their sets only, no way to change them)
    "capset",  # the kernel lets it change only its own
    "getrlimit", "ugetrlimit", "setrlimit",  # its own limits (raising a hard one needs a capability)
    "getrusage", "times",  # its own (or its children's: none) use of resources
    "getcpu", "sched_get_priority_max", "sched_get_priority_min",  # no process named
    "gettimeofday", "time",  # clocks (those that take a clock id: ``CLOCKS``)
    "getitimer", "setitimer", "alarm",  # its own timers
    "timer_settime", "timer_gettime", "timer_getoverrun", "timer_delete",  # own thread group's timers
    "socketpair",  # a pair of sockets, each reaching the other only
    "getsockname", "getpeername", "getsockopt", "setsockopt", "shutdown",  # its own sockets
    "send", "recv", "recvfrom", "recvmsg", "recvmmsg",  # its own sockets (sendto: with no address)
    "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_getsetattr",  # its IPC namespace's
    "mq_notify",  # same; it signals the caller only
    "uname", "sysinfo", "getrandom",  # the machine, as far as it shows itself
)  # fmt: skip

OWN = 0x3A5C7E91  # a placeholder for the sandbox's pid: never a pid (pid_max is at most 2**22)
GROUP = -OWN & 0xFFFFFFFF  # its process group, as kill() names one
_SELF = (((0, 0),), ((0, OWN),))  # first argument: 0 ("the caller") or its own pid
# Calls that name a process, a group or a user: allowed only in these forms, each a list of
# alternatives, each alternative (argument, value) pairs that must all hold (on the low 32 bits: a
# pid_t, however the caller extended it). Where the filter cannot know a thread's id, only the
# thread group's (its pid) passes.
ON_ITSELF = {
    "kill": (*_SELF, ((0, GROUP),)),  # itself, its group (0 or -pid): only it, after setsid and no fork
    "tkill": (((0, OWN),),),  # its main thread
    "tgkill": (((0, OWN),),),  # a thread of its own thread group
    "rt_sigqueueinfo": (((0, OWN),),),  # itself
    "rt_tgsigqueueinfo": (((0, OWN),),),  # a thread of its own
    "prlimit64": _SELF,  # its own limits (glibc's getrlimit and setrlimit call this with 0)
    "getpriority": (((0, 0), (1, 0)), ((0, 0), (1, OWN))),  # PRIO_PROCESS of itself, never a group or user
    "setpriority": (((0, 0), (1, 0)), ((0, 0), (1, OWN))),  # same
    "ioprio_get": (((0, 1), (1, 0)), ((0, 1), (1, OWN))),  # IOPRIO_WHO_PROCESS of itself
    "ioprio_set": (((0, 1), (1, 0)), ((0, 1), (1, OWN))),  # same
    "sched_getaffinity": _SELF,  # its own CPUs (os.sched_getaffinity(0), OpenBLAS)
    "sched_setaffinity": _SELF,
    "sched_getparam": _SELF,
    "sched_setparam": _SELF,
    "sched_getscheduler": _SELF,
    "sched_setscheduler": _SELF,
    "sched_getattr": _SELF,
    "sched_setattr": _SELF,
    "sched_rr_get_interval": _SELF,
    "get_robust_list": _SELF,  # another's would show where its memory is
    "getpgid": _SELF,  # another's group would say which processes run
    "getsid": _SELF,
    "setpgid": (((0, 0), (1, 0)), ((0, 0), (1, OWN)), ((0, OWN), (1, 0)), ((0, OWN), (1, OWN))),
}

# A clock id names a clock of the machine (CLOCK_REALTIME, CLOCK_MONOTONIC, ...: 0 and up), a thread's
# CPU clock (negative, bit 2 set: the kernel takes only the caller's own threads') or a process's
# CPU clock, ((~pid) << 3) | kind, which the kernel lets anyone read, time and sleep on, whatever
# the process: the worker's CPU time to the nanosecond would be a timing oracle on all it does. So
# these calls take a process's clock only for the caller (pid 0) or itself (``CLOCK_OF_OWN``).
CLOCKS = (
    "clock_gettime", "clock_getres", "clock_nanosleep", "timer_create",
    "clock_gettime64", "clock_getres_time64", "clock_nanosleep_time64",  # (32-bit architectures)
)  # fmt: skip


def _clock_of(pid: int) -> int:
    """The pid part of the clock ids of process ``pid``'s CPU clocks. A pid is below 2**22
    (pid_max's ceiling): only those bits count, so that the placeholders' (``OWN``'s) look like a
    real pid's to libseccomp, which lays out a program by the values it compares."""
    return (~(pid & 0x3FFFFF) << 3) & 0xFFFFFFFF


CLOCK_OF_OWN = _clock_of(OWN)  # the pid part of its CPU clocks
_CLOCK_PID = 0xFFFFFFF8  # the pid part of a clock id
_MACHINE_CLOCK = ((0, 0x80000000, 0),)  # (argument, mask, value): not negative
_THREAD_CLOCK = ((0, 0x80000004, 0x80000004),)
_PROCESS_CLOCKS = (((0, _CLOCK_PID, _CLOCK_PID),), ((0, _CLOCK_PID, CLOCK_OF_OWN),))  # pid 0, its own pid

SOCKET_FAMILIES = (1, 2, 10, 16)  # AF_UNIX, AF_INET, AF_INET6, AF_NETLINK
# Without namespaces (Landlock or nothing) a sandbox shares the host's network, IPC and files with
# its neighbours: these calls would reach them, and nothing a submission needs makes them. Sockets go
# too (``socket``; ``socketpair`` stays): Landlock leaves UDP and netlink open. File
# metadata goes because Landlock does not cover it: an extended attribute or a time stamp on a file
# the grading user owns would carry data from one submission to the next; truncation by path,
# because Landlock covers it only from ABI 3 (``ftruncate`` needs a file opened for writing).
SHARED_HOST = frozenset(
    {
        "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr",
        "setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr",
        "chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "fchownat", "lchown",
        "utime", "utimes", "utimensat", "futimesat", "truncate", "truncate64",
    }
)  # fmt: skip
# A descriptor's owner receives its I/O signals (SIGIO, or any signal F_SETSIG names, SIGKILL
# included), and F_SETOWN, F_SETOWN_EX, FIOSETOWN and SIOCSPGRP make any process of the same user its
# owner; F_NOTIFY and F_SETLEASE would signal it about others' use of a file: fcntl and ioctl keep
# only these commands, none of which sets an owner, a signal or a watch.
FCNTL_COMMANDS = (
    0, 1, 2, 3, 4, 5, 6, 7, 9, 11, 12, 13, 14, 16,  # F_DUPFD .. F_SETLKW, F_GETOWN, F_GETSIG, (64-bit locks), F_GETOWN_EX
    36, 37, 38,  # F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW
    1025, 1030, 1032, 1033, 1034,  # F_GETLEASE, F_DUPFD_CLOEXEC, F_GETPIPE_SZ, seals
)  # fmt: skip
# madvise on its own mappings, except what acts beyond them: MADV_COLD and MADV_PAGEOUT push pages
# of a shared file out of the page cache (see above), MADV_MERGEABLE lets the kernel merge its pages
# with other processes' (KSM: how long a write takes then tells whether another holds the same data)
MADVISE_ADVICE = (
    0, 1, 2, 3, 4, 8,  # NORMAL, RANDOM, SEQUENTIAL, WILLNEED (a read loads the page as well), DONTNEED, FREE
    10, 11, 14, 15, 16, 17, 18, 19,  # (DONT|DO)FORK, (NO)HUGEPAGE (numpy, glibc), (DONT|DO)DUMP, WIPE/KEEPONFORK
    22, 23, 24, 102, 103,  # POPULATE_READ/WRITE, DONTNEED_LOCKED, GUARD_INSTALL/REMOVE (glibc's thread stacks)
)  # fmt: skip
IOCTL_COMMANDS = (
    0x5401, 0x802C542A, 0x5413, 0x540F,  # TCGETS, TCGETS2, TIOCGWINSZ, TIOCGPGRP: "is it a terminal?"
    0x541B, 0x5421, 0x5450, 0x5451,  # FIONREAD, FIONBIO, FIONCLEX, FIOCLEX
)  # fmt: skip
# CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET
CLONE_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
CLONE_THREAD = 0x00010000

_ALLOW = 0x7FFF0000
_DENY = 0x00050000 | errno.ENOSYS  # SCMP_ACT_ERRNO(ENOSYS)
_CMP_EQ, _CMP_MASKED_EQ = 4, 7
_LOW32 = 0xFFFFFFFF
_INSN = struct.Struct("=HBBI")  # one classic BPF instruction: code, jt, jf, k
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K: jump if the accumulator equals k


SONAMES = ("libseccomp.so.2",)  # the library's name since 2012 (Linux only)


class _ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("a", ctypes.c_uint64), ("b", ctypes.c_uint64)]


@functools.lru_cache(maxsize=1)
def _libseccomp() -> ctypes.CDLL | None:
    """Looked up once, by its usual name first: ``find_library`` runs ldconfig (a process, tens of
    milliseconds), which a confined sandbox cannot."""
    for name in SONAMES:
        try:
            return ctypes.CDLL(name, use_errno=True)
        except OSError:
            continue
    found = ctypes.util.find_library("seccomp")
    return None if found is None else ctypes.CDLL(found, use_errno=True)


def compile_filter(*, own: int, shared_host: bool = False) -> bytes | None:
    """The allow-list for the process ``own`` as a classic BPF program for this machine's
    architecture; None where libseccomp is missing (then there is no filter, and the README says
    so). ``shared_host``: the sandbox has no namespaces of its own, so ``SHARED_HOST`` and
    ``socket`` are refused too."""
    lib = _libseccomp()
    if lib is None:
        return None
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_array.argtypes = [
        ctypes.c_void_p,
        ctypes.c_uint32,
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.POINTER(_ArgCmp),
    ]
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    ctx = lib.seccomp_init(_DENY)
    if not ctx:
        raise OSError("seccomp_init failed")
    try:

        def allow(syscall: str, *conditions: tuple[int, int, int, int]) -> None:
            number = lib.seccomp_syscall_resolve_name(syscall.encode())
            if number < 0:
                return  # not a system call of this architecture
            array = (_ArgCmp * max(len(conditions), 1))(*(_ArgCmp(*c) for c in conditions))
            if lib.seccomp_rule_add_array(ctx, _ALLOW, number, len(conditions), array) < 0:
                raise OSError(f"seccomp: cannot allow {syscall}")

        for syscall in ALLOWED:
            if not (shared_host and syscall in SHARED_HOST):
                allow(syscall)
        values = {OWN: own, GROUP: -own & _LOW32, CLOCK_OF_OWN: _clock_of(own)}
        for syscall, alternatives in ON_ITSELF.items():
            for alternative in alternatives:
                allow(syscall, *((arg, _CMP_MASKED_EQ, _LOW32, values.get(v, v)) for arg, v in alternative))
        for command in FCNTL_COMMANDS:
            allow("fcntl", (1, _CMP_EQ, command, 0))
            allow("fcntl64", (1, _CMP_EQ, command, 0))
        for command in IOCTL_COMMANDS:
            allow("ioctl", (1, _CMP_MASKED_EQ, _LOW32, command))
        for syscall in CLOCKS:
            for form in (_MACHINE_CLOCK, _THREAD_CLOCK, *_PROCESS_CLOCKS):
                allow(syscall, *((arg, _CMP_MASKED_EQ, mask, values.get(v, v)) for arg, mask, v in form))
        allow("sendto", (4, _CMP_EQ, 0, 0))  # to the socket's peer: no address
        for advice in MADVISE_ADVICE:
            allow("madvise", (2, _CMP_MASKED_EQ, _LOW32, advice))
        for family in () if shared_host else SOCKET_FAMILIES:
            allow("socket", (0, _CMP_EQ, family, 0))
        # threads only, in the caller's namespaces (clone3 stays refused: libc falls back to clone)
        allow("clone", (0, _CMP_MASKED_EQ, CLONE_NAMESPACES | CLONE_THREAD, CLONE_THREAD))
        fd = os.memfd_create("attnlab-seccomp", 0)
        try:
            if lib.seccomp_export_bpf(ctx, fd) < 0:
                raise OSError("seccomp_export_bpf failed")
            return os.pread(fd, os.fstat(fd).st_size, 0)
        finally:
            os.close(fd)
    finally:
        lib.seccomp_release(ctx)


class Template:
    """The allow-list compiled once, with ``OWN`` where a sandbox's pid goes: ``bake`` puts it in
    after the fork, in microseconds instead of a compilation's milliseconds. ``slots``: the
    instructions whose constant is the pid (0), its group (1) or its clocks' pid part (2); None where the program's
    shape depends on the pid's value (then each sandbox compiles its own)."""

    def __init__(self, program: bytes, slots: list[tuple[int, int]] | None, shared_host: bool):
        self.program, self.slots, self.shared_host = program, slots, shared_host

    def bake(self, pid: int) -> bytes:
        if self.slots is None:
            program = compile_filter(own=pid, shared_host=self.shared_host)
            assert program is not None  # the template was compiled with the same library
            return program
        out = bytearray(self.program)
        values = (pid, -pid & _LOW32, _clock_of(pid))
        for index, kind in self.slots:
            code, jt, jf, _ = _INSN.unpack_from(out, index * _INSN.size)
            _INSN.pack_into(out, index * _INSN.size, code, jt, jf, values[kind])
        return bytes(out)


def template(*, shared_host: bool = False) -> Template | None:
    """The allow-list with the pid left open (None where libseccomp is missing). Compiled with two
    placeholders: the instructions where the programs differ are where the pid goes, and they must
    differ in nothing but that constant."""
    first = compile_filter(own=OWN, shared_host=shared_host)
    other = OWN ^ 0x00FF00FF  # another value that is never a pid
    second = compile_filter(own=other, shared_host=shared_host)
    if first is None or second is None:
        return None
    slots: list[tuple[int, int]] = []
    same_shape = len(first) == len(second)
    # what each kind of slot holds (``Template.bake``'s order): the pid, its group, its clocks' pid part
    kinds = ((OWN, other), (GROUP, -other & _LOW32), (CLOCK_OF_OWN, _clock_of(other)))
    for index, (a, b) in enumerate(zip(_INSN.iter_unpack(first), _INSN.iter_unpack(second))):
        if not same_shape:
            break
        if a == b:
            continue
        # an equality test alone means the same whatever its constant
        if a[:3] != b[:3] or a[0] != _JEQ or (a[3], b[3]) not in kinds:
            same_shape = False
            break
        slots.append((index, kinds.index((a[3], b[3]))))
    return Template(first, slots if same_shape else None, shared_host)
