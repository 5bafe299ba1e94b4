"""Which of a zygote's slow optional imports a submission is going to use, read off its text.

A zygote imports numpy and the standard modules before its first fork (``sandbox.PRELOAD``). Other
modules are slow to import and most submissions never use them: matplotlib.pyplot takes over half
a second, numpy.testing and IPython's converter of magics a tenth each. Those (``OPTIONAL`` and the
assignment's own ``preload``) are imported by the zygote only once a submission is going to use one,
before it forks that submission's sandbox, so that it and every later sandbox have it.

The worker reads what a submission is going to import off its text with a few linear scans, never
parsing it (a crafted source can make a parser slow; parsing happens in the sandbox). The result is
a hint: a false one costs one import, a missed one (a module imported by a name built at run time)
only lets the sandbox import the module itself, more slowly. So only the first ``SCANNED``
characters are read: a huge submission costs the worker no more than a large one.
"""

from __future__ import annotations

import re

# the engine's own: numpy's testing helpers, and IPython's converter of %magic, !shell and x? lines
# (``sandbox.python_source``)
OPTIONAL = ("numpy.testing", "IPython.core.inputtransformer2")
_CONVERTER = "IPython.core.inputtransformer2"
SCANNED = 1 << 20  # characters, over all cells: about 0.2 s of the worker's time at worst

_IMPORT = re.compile(r"(?:^|;)[ \t]*import[ \t]+([\w. \t,]+)", re.M)
_FROM = re.compile(r"(?:^|;)[ \t]*from[ \t]+([\w.]+)[ \t]+import[ \t]+\(?([\w. \t,]*)", re.M)
_TESTING = re.compile(r"\.testing\b")
_IPYTHON = re.compile(r"^[ \t]*[%!?]|^[ \t]*[\w.]+\?\??[ \t]*$", re.M)


def _names(listed: str) -> list[str]:
    """``a.b as c, d`` -> ["a.b", "d"]."""
    return [part.split()[0] for part in listed.split(",") if part.split()]


def named(cells: list[str]) -> set[str]:
    """The modules the cells import by name (``import a.b``: "a.b"; ``from a import b``: "a" and
    "a.b"), with "numpy.testing" for a ``.testing`` attribute and the IPython converter for a line
    that needs converting."""
    found: set[str] = set()
    left = SCANNED
    for text in cells:
        if left <= 0:
            break
        text = text[:left]
        left -= len(text)
        for m in _IMPORT.finditer(text):
            found.update(_names(m.group(1)))
        for m in _FROM.finditer(text):
            package = m.group(1)
            found.add(package)
            found.update(f"{package}.{name}" for name in _names(m.group(2)))
        if _TESTING.search(text):
            found.add("numpy.testing")
        if _IPYTHON.search(text):
            found.add(_CONVERTER)
    return found


def wanted(optional: tuple[str, ...] | list[str], cells: list[str]) -> list[str]:
    """The modules of ``optional`` that the cells are going to import: named, or a submodule of
    theirs named (``matplotlib.pyplot`` for a preload of ``matplotlib``)."""
    found = named(cells)
    return [m for m in optional if any(n == m or n.startswith(m + ".") for n in found)]
