"""Where the trusted side imports from: the installed package, the standard library, its
dependencies and the course's own support folder; never a folder a student can name files in.

Python puts such a folder first on the import path in two ordinary ways: ``python -m``/``-c`` put the
working folder there, and an empty entry in ``PYTHONPATH`` (``PYTHONPATH=$PYTHONPATH:/x`` with nothing
before) means the working folder too. An instructor grading from inside a folder of submissions, one of
them named ``numpy.py``, would then run that file as numpy with the hidden tests in reach. So:

- ``python_command`` starts every trusted child interpreter (the grading workers) in isolated mode
  (``-I``: no ``PYTHONPATH``, no user site, neither the working folder nor a script's folder on the
  path), with the one folder that holds this package named explicitly, from the file-system root;
- ``trusted_entry`` runs first in the ``attnlab`` command, before anything else is imported: it drops
  the working folder and every empty or relative entry from the path, whatever the caller's
  environment says (the folder holding this package stays: a checkout run from ``src/``).
"""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path
from typing import NoReturn

# the folder that holds the ``attnlab`` package: site-packages, or a checkout's ``src/``
PACKAGE_ROOT = str(Path(__file__).resolve().parents[1])


def python_command(module: str, function: str) -> list[str]:
    """The command line that runs ``module.function()`` in a fresh, isolated interpreter."""
    boot = (
        "import sys\n"
        f"if {PACKAGE_ROOT!r} not in sys.path: sys.path.insert(0, {PACKAGE_ROOT!r})\n"
        f"from {module} import {function}\n"
        f"{function}()"
    )
    return [sys.executable, "-I", "-c", boot]


def unsafe_entries(path: list[str], *, cwd: str) -> list[str]:
    """The entries of ``path`` that name the working folder: empty, relative, or ``cwd`` itself,
    unless that is the folder holding this package or one of the interpreter's own folders."""
    here = os.path.realpath(cwd)
    own = {os.path.realpath(p) for p in [PACKAGE_ROOT, *sysconfig.get_paths().values()]}
    return [
        entry
        for entry in path
        if not entry or not os.path.isabs(entry) or (os.path.realpath(entry) == here and here not in own)
    ]


def make_trusted() -> None:
    """Drop the working folder, however it is named, from this process's import path."""
    try:
        cwd = os.getcwd()
    except OSError:  # the working folder was removed: only empty and relative entries can name it
        cwd = "/nonexistent"
    bad = unsafe_entries(sys.path, cwd=cwd)
    sys.path[:] = [p for p in sys.path if p not in bad]


def trusted_entry() -> None:
    """The ``attnlab`` command: the path made trusted before the CLI (and click) is imported."""
    make_trusted()
    from .cli import main, run

    run(main)


def exit_now(code: int) -> NoReturn:
    """End a trusted program (the command, a grading worker) once its work is written, without the
    interpreter's teardown, which frees every module (numpy, the engine, the tests) for 50-100 ms
    after the work is done. What that teardown would do that matters still happens: atexit handlers
    run (temporary folders' clean-up among them) and the standard streams are flushed; the trusted
    side's only threads are daemons, and it writes files through ``with`` blocks."""
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nobody is reading
            pass
    os._exit(code)
