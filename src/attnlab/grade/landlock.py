"""Landlock: file-system confinement an unprivileged process can put on itself, where namespaces are
refused (Ubuntu since 24.04 restricts unprivileged user namespaces; many containers refuse them).

A sandbox makes a ``ruleset`` while it still has its privileges and ``enforce``s it once, after
``no_new_privileges`` and before its system-call filter: from then on it and everything it starts
may read (never execute) only the listed trees and files, and write only its scratch folder. What
the running kernel's Landlock ABI handles decides the rest:
truncation from ABI 3, TCP bind and connect from ABI 4 (no rule allows a port), abstract unix
sockets and signals to processes outside the sandbox from ABI 6. ``describe`` states what holds for
an ABI. Below ``MIN_ABI`` no ruleset is made: ABI 1 and 2 check only the read right on an
``open(..., O_TRUNC)``, so a sandbox could empty every file it may read (the instructor's packages,
the interpreter's library). TCP and signals are the system-call filter's too (it refuses ``socket``
and signals to other processes), so ABI 4 and 6 are used where the kernel has them, not required.

The three system calls are called directly (their numbers are the same on every architecture,
being newer than the split tables). Loaded by file path inside the sandbox's zygote, so it imports
nothing from attnlab.
"""

from __future__ import annotations

import ctypes
import os

SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
# everything ABI 1 handles: execute, read and write files, read folders, remove and make entries
FS_ABI1 = (1 << 13) - 1
# the rights a rule may give on a file (the others apply to folders only)
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1
MIN_ABI = 3  # Linux 6.2: the first that handles truncation

# the C library through the symbols this process already has (``find_library`` would run ldconfig)
_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1  # the kernel's struct is packed: 12 bytes
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def abi() -> int:
    """The kernel's Landlock ABI version; 0 where there is none (not Linux, too old, not enabled)."""
    try:
        version = _libc.syscall(ctypes.c_long(SYS_CREATE_RULESET), None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    except AttributeError:  # a libc without syscall(): not Linux
        return 0
    return max(int(version), 0)


def handled_fs(version: int) -> int:
    """The file-system rights a ruleset of ``version`` handles (denies unless a rule allows them)."""
    rights = FS_ABI1
    if version >= 2:
        rights |= REFER
    if version >= 3:
        rights |= TRUNCATE
    if version >= 5:
        rights |= IOCTL_DEV
    return rights


def describe(version: int) -> str:
    """What a sandbox confined on this ABI is denied (signals only from ABI 6: see the caller)."""
    text = (
        f"landlock (ABI {version}): reads only the interpreter, its standard library and the allowed "
        "packages, writes only its own scratch folder"
    )
    if version >= 4:
        text += ", no TCP"
    if version >= 6:
        text += ", no signals to processes outside it"
    return text


def _check(ret: int, what: str) -> int:
    if ret < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"landlock {what}: {os.strerror(err)}")
    return ret


def ruleset(
    *, read: list[str], write: list[str], devices: dict[str, int], listed: tuple[str, ...] | list[str] = ()
) -> int:
    """A ruleset (its descriptor, for ``enforce``): ``read`` trees and files may be read, ``listed``
    trees only listed, ``write`` folders fully used, each of ``devices`` (path -> rights, e.g.
    READ_FILE | WRITE_FILE) used as given; nothing else of the file system. Paths that do not exist
    are skipped. Made before the process gives up its privileges, a rule can name a path that only
    the privileged can reach."""
    version = abi()
    if version < MIN_ABI:
        raise OSError(38, f"landlock: ABI {version}, below {MIN_ABI}, cannot refuse truncating a readable file")
    fs = handled_fs(version)
    attr = _RulesetAttr(fs, NET_BIND_TCP | NET_CONNECT_TCP, SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL)
    # an older kernel knows a shorter struct: give it only the fields it knows
    size = 8 if version < 4 else 16 if version < 6 else 24
    fd = _check(
        _libc.syscall(ctypes.c_long(SYS_CREATE_RULESET), ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0)),
        "create_ruleset",
    )
    try:
        rules = [(p, READ_FILE | READ_DIR) for p in read] + [(p, READ_DIR) for p in listed]
        rules += [(p, fs) for p in write] + list(devices.items())
        for path, rights in rules:
            try:
                parent = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                if not os.path.isdir(path):
                    rights &= FILE_RIGHTS
                rule = _PathBeneath(rights & fs, parent)
                _check(
                    _libc.syscall(
                        ctypes.c_long(SYS_ADD_RULE),
                        ctypes.c_int(fd),
                        ctypes.c_int(RULE_PATH_BENEATH),
                        ctypes.byref(rule),
                        ctypes.c_uint32(0),
                    ),
                    f"add_rule {path}",
                )
            finally:
                os.close(parent)
    except BaseException:
        os.close(fd)
        raise
    return fd


def enforce(ruleset_fd: int) -> None:
    """Confine this process and everything it starts from now on (after ``no_new_privileges``)."""
    try:
        _check(
            _libc.syscall(ctypes.c_long(SYS_RESTRICT_SELF), ctypes.c_int(ruleset_fd), ctypes.c_uint32(0)),
            "restrict_self",
        )
    finally:
        os.close(ruleset_fd)
