"""Run a command as on a machine that refuses user namespaces (stock Ubuntu 24.04), without touching
the machine's settings: a seccomp filter answers ``unshare``, ``setns`` and ``clone`` with
CLONE_NEWUSER with EPERM, as the kernel does there, then the command is executed under it.

    python without_userns.py PROGRAM ARGS...

``clone3`` hides its flags from seccomp (they are in memory): it gets ENOSYS, and glibc falls back
to ``clone``, whose flags the filter sees. Standard library only: the command may be another
interpreter.
"""

import ctypes
import ctypes.util
import errno
import os
import sys
from pathlib import Path

WRAPPER = Path(__file__)
WHY_NOT_WITHOUT_USERNS = "simulates refused user namespaces: needs libseccomp, and Landlock to fall back on"
ALLOW = 0x7FFF0000
CLONE_NEWUSER = 0x10000000
CMP_MASKED_EQ = 7
PR_SET_NO_NEW_PRIVS = 38


class ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("a", ctypes.c_uint64), ("b", ctypes.c_uint64)]


def refuse(lib: ctypes.CDLL, ctx: int, name: str, err: int, *conditions: ArgCmp) -> None:
    number = lib.seccomp_syscall_resolve_name(name.encode())
    array = (ArgCmp * max(len(conditions), 1))(*conditions)
    if lib.seccomp_rule_add_array(ctx, 0x00050000 | err, number, len(conditions), array) < 0:
        raise OSError(f"seccomp: cannot refuse {name}")


def can_refuse_userns() -> bool:
    """Whether this machine can run the Landlock mode that a refusal leads to."""
    from attnlab.grade import landlock  # here: the wrapper itself runs outside the kit's environment

    return ctypes.util.find_library("seccomp") is not None and landlock.abi() >= 1


def main(argv: list[str]) -> None:
    lib = ctypes.CDLL(ctypes.util.find_library("seccomp"), use_errno=True)
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_array.argtypes = [
        ctypes.c_void_p,
        ctypes.c_uint32,
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.POINTER(ArgCmp),
    ]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    ctx = lib.seccomp_init(ALLOW)
    refuse(lib, ctx, "unshare", errno.EPERM)
    refuse(lib, ctx, "setns", errno.EPERM)
    refuse(lib, ctx, "clone", errno.EPERM, ArgCmp(0, CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER))
    refuse(lib, ctx, "clone3", errno.ENOSYS)
    # what an unprivileged process needs before it may install a filter
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    if lib.seccomp_load(ctx) < 0:
        raise OSError("seccomp_load failed")
    os.execv(argv[0], argv)


if __name__ == "__main__":
    main(sys.argv[1:])
