"""The system calls a submission may make: an allow-list, enforced by a seccomp filter.

Namespaces hide the host's files, processes, network and IPC; some kernel state has no namespace
(key rings, which are kept per user id; vsock, which reaches the machine's hypervisor; perf events,
BPF, userfaultfd, io_uring). The filter allows what Python, numpy and matplotlib use, on the model of
the container runtimes' default profile for a process without capabilities, and nothing else: any
other call fails with ENOSYS ("not implemented"), which libraries read as an older kernel and work
around. In particular: no key rings, no new namespaces, no mounts, no ptrace, and sockets only of the
local families (unix, netlink, and IP inside the sandbox's empty network namespace).

libseccomp (present wherever systemd or apt is) compiles the list once per zygote; each sandbox
installs the compiled program with one ``prctl`` (``jail.install_syscall_filter``). Loaded by path from ``sandbox.py``: imports
nothing from attnlab.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import functools
import os

ALLOWED = (
    # files and descriptors
    "access", "faccessat", "faccessat2", "open", "openat", "openat2", "creat", "close", "close_range",
    "read", "readv", "pread64", "preadv", "preadv2", "write", "writev", "pwrite64", "pwritev",
    "pwritev2", "lseek", "_llseek", "dup", "dup2", "dup3", "fcntl", "fcntl64", "ioctl", "flock",
    "fsync", "fdatasync", "sync", "syncfs", "sync_file_range", "fadvise64", "fadvise64_64",
    "readahead", "fallocate", "ftruncate", "ftruncate64", "truncate", "truncate64", "copy_file_range",
    "sendfile", "sendfile64", "splice", "tee", "vmsplice", "pipe", "pipe2",
    "stat", "stat64", "lstat", "lstat64", "fstat", "fstat64", "newfstatat", "fstatat64", "statx",
    "statfs", "statfs64", "fstatfs", "fstatfs64", "getdents", "getdents64", "getcwd", "chdir",
    "fchdir", "mkdir", "mkdirat", "mknod", "mknodat", "rmdir", "rename", "renameat", "renameat2",
    "link", "linkat", "symlink", "symlinkat", "unlink", "unlinkat", "readlink", "readlinkat",
    "chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "fchownat", "lchown", "umask",
    "utime", "utimes", "utimensat", "futimesat", "getxattr", "lgetxattr", "fgetxattr", "listxattr",
    "llistxattr", "flistxattr", "setxattr", "lsetxattr", "fsetxattr", "removexattr",
    "lremovexattr", "fremovexattr", "inotify_init", "inotify_init1", "inotify_add_watch",
    "inotify_rm_watch", "memfd_create",
    # waiting and events
    "select", "_newselect", "pselect6", "poll", "ppoll", "epoll_create", "epoll_create1",
    "epoll_ctl", "epoll_wait", "epoll_pwait", "epoll_pwait2", "eventfd", "eventfd2", "signalfd",
    "signalfd4", "timerfd_create", "timerfd_settime", "timerfd_gettime", "futex", "futex_waitv",
    "set_robust_list", "get_robust_list", "nanosleep", "clock_nanosleep", "pause",
    "restart_syscall", "sched_yield",
    # memory
    "brk", "mmap", "mmap2", "munmap", "mremap", "mprotect", "madvise", "mincore", "msync", "mlock",
    "mlock2", "munlock", "mlockall", "munlockall", "membarrier", "pkey_alloc", "pkey_free",
    "pkey_mprotect", "remap_file_pages", "map_shadow_stack", "mseal",
    # processes and threads (clone: see CLONE_NAMESPACES)
    "fork", "vfork", "execve", "execveat", "exit", "exit_group", "wait4", "waitid", "waitpid",
    "kill", "tkill", "tgkill", "pidfd_open", "pidfd_send_signal", "rt_sigaction", "rt_sigprocmask",
    "rt_sigreturn", "rt_sigpending", "rt_sigsuspend", "rt_sigtimedwait", "rt_sigqueueinfo",
    "rt_tgsigqueueinfo", "sigaltstack", "sigreturn", "sigprocmask", "set_tid_address", "rseq",
    "arch_prctl", "set_thread_area", "get_thread_area", "prctl", "seccomp",
    "getpid", "getppid", "gettid", "getpgid", "getpgrp", "setpgid", "getsid", "setsid",
    "getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid", "getgroups",
    "setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid", "setgroups", "setfsuid",
    "setfsgid", "capget", "capset", "getrlimit", "ugetrlimit", "setrlimit", "prlimit64",
    "getrusage", "getpriority", "setpriority", "ioprio_get", "ioprio_set", "sched_getaffinity",
    "sched_setaffinity", "sched_getparam", "sched_setparam", "sched_getscheduler",
    "sched_setscheduler", "sched_getattr", "sched_setattr", "sched_get_priority_max",
    "sched_get_priority_min", "sched_rr_get_interval", "getcpu",
    # time
    "clock_gettime", "clock_getres", "gettimeofday", "time", "times", "getitimer", "setitimer",
    "alarm", "timer_create", "timer_settime", "timer_gettime", "timer_getoverrun", "timer_delete",
    # sockets (socket itself: see SOCKET_FAMILIES)
    "socketpair", "bind", "listen", "accept", "accept4", "connect", "getsockname", "getpeername",
    "getsockopt", "setsockopt", "send", "sendto", "sendmsg", "sendmmsg", "recv", "recvfrom",
    "recvmsg", "recvmmsg", "shutdown",
    # System V and POSIX IPC (the sandbox's own IPC namespace)
    "shmget", "shmat", "shmdt", "shmctl", "semget", "semop", "semtimedop", "semctl", "msgget",
    "msgsnd", "msgrcv", "msgctl", "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive",
    "mq_notify", "mq_getsetattr",
    # the machine, as far as it shows itself
    "uname", "sysinfo", "getrandom",
)  # fmt: skip

SOCKET_FAMILIES = (1, 2, 10, 16)  # AF_UNIX, AF_INET, AF_INET6, AF_NETLINK
# Without namespaces (Landlock or nothing) a sandbox shares the host's network, IPC and files with
# its neighbours: these calls would reach them, and nothing a submission needs makes them. Sockets go
# too (``socket``; ``socketpair`` stays): Landlock leaves UDP, netlink and named unix sockets open. File
# metadata goes because Landlock does not cover it: an extended attribute or a time stamp on a file
# the grading user owns would carry data from one submission to the next; truncation by path,
# because Landlock covers it only from ABI 3 (``ftruncate`` needs a file opened for writing).
SHARED_HOST = frozenset(
    {
        "shmget", "shmat", "shmdt", "shmctl", "semget", "semop", "semtimedop", "semctl", "msgget",
        "msgsnd", "msgrcv", "msgctl", "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive",
        "mq_notify", "mq_getsetattr",
        "setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr",
        "chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "fchownat", "lchown",
        "utime", "utimes", "utimensat", "futimesat", "truncate", "truncate64",
    }
)  # fmt: skip
# Where Landlock cannot scope signals (ABI < 6) and the sandbox shares its user id with the grader,
# these reach only the sandbox itself or its process group (first argument: a pid, or a thread group
# id); pidfd_send_signal goes altogether (its target hides behind a descriptor).
SIGNALS = ("kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "pidfd_send_signal")
# A descriptor's owner receives its I/O signals (SIGIO, or any signal F_SETSIG names, SIGKILL
# included), and F_SETOWN, F_SETOWN_EX, FIOSETOWN and SIOCSPGRP make any process of the same user its
# owner: there, fcntl and ioctl keep only these commands, none of which sets an owner or its signal.
FCNTL_COMMANDS = (
    0, 1, 2, 3, 4, 5, 6, 7, 9, 11, 12, 13, 14, 16,  # F_DUPFD .. F_SETLKW, F_GETOWN, F_GETSIG, (64-bit locks), F_GETOWN_EX
    36, 37, 38,  # F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW
    1025, 1030, 1031, 1032, 1033, 1034,  # F_GETLEASE, F_DUPFD_CLOEXEC, pipe sizes, seals
)  # fmt: skip
IOCTL_COMMANDS = (
    0x5401, 0x802C542A, 0x5413, 0x540F,  # TCGETS, TCGETS2, TIOCGWINSZ, TIOCGPGRP: "is it a terminal?"
    0x541B, 0x5421, 0x5450, 0x5451,  # FIONREAD, FIONBIO, FIONCLEX, FIOCLEX
)  # fmt: skip
# CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET
CLONE_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000

_ALLOW = 0x7FFF0000
_DENY = 0x00050000 | errno.ENOSYS  # SCMP_ACT_ERRNO(ENOSYS)
_CMP_EQ, _CMP_MASKED_EQ = 4, 7


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


def compile_filter(*, shared_host: bool = False, signals_within: int | None = None) -> bytes | None:
    """The allow-list as a classic BPF program for this machine's architecture; None where
    libseccomp is missing (then there is no filter, and the README says so). ``shared_host``: the
    sandbox has no namespaces of its own, so ``SHARED_HOST`` and ``socket`` are refused too.
    ``signals_within``: the pid of a sandbox that only it and its process group may signal."""
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

        owners = ("fcntl", "fcntl64", "ioctl")
        for syscall in ALLOWED:
            if not (
                shared_host
                and syscall in SHARED_HOST
                or signals_within is not None
                and (syscall in SIGNALS or syscall in owners)
            ):
                allow(syscall)
        if signals_within is not None:
            for command in FCNTL_COMMANDS:
                allow("fcntl", (1, _CMP_EQ, command, 0))
                allow("fcntl64", (1, _CMP_EQ, command, 0))
            for command in IOCTL_COMMANDS:
                allow("ioctl", (1, _CMP_MASKED_EQ, 0xFFFFFFFF, command))
            # compared on the low 32 bits: a pid_t, however the caller extended it
            own, group = signals_within, -signals_within & 0xFFFFFFFF
            for target in (0, own, group):
                allow("kill", (0, _CMP_MASKED_EQ, 0xFFFFFFFF, target))
            for syscall in ("tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"):
                allow(syscall, (0, _CMP_MASKED_EQ, 0xFFFFFFFF, own))
        for family in () if shared_host else SOCKET_FAMILIES:
            allow("socket", (0, _CMP_EQ, family, 0))
        allow("clone", (0, _CMP_MASKED_EQ, CLONE_NAMESPACES, 0))  # clone3 stays denied: libc falls back
        fd = os.memfd_create("attnlab-seccomp", 0)
        try:
            if lib.seccomp_export_bpf(ctx, fd) < 0:
                raise OSError("seccomp_export_bpf failed")
            return os.pread(fd, os.fstat(fd).st_size, 0)
        finally:
            os.close(fd)
    finally:
        lib.seccomp_release(ctx)
