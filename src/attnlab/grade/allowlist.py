"""What a sandbox may read: the interpreter's standard library, the distributions an assignment
allows (with their dependencies), and the shared libraries those have loaded. Nothing else of the
host exists for it: no site-packages beyond the allowed packages (the kit's own package, which holds
the reference solution, is not among them), no home, no /run, no /srv, no other checkout.

Computed once in the zygote, after it has imported the allowed packages, so that the shared
libraries they need are the ones mapped into it. Loaded by file path: imports nothing from attnlab.
"""

from __future__ import annotations

import os
import re
import site
import sys
import sysconfig
from importlib import metadata

# Always allowed: the array library every assignment uses, and IPython, whose input transformer
# turns a notebook's magics into Python inside the sandbox.
BASE_DISTRIBUTIONS = ("numpy", "ipython")
SYSTEM_FILES = ("/etc/ld.so.cache",)


def distributions(names: list[str]) -> list[metadata.Distribution]:
    """The named distributions and everything they require (extras left out), where installed."""
    seen: dict[str, metadata.Distribution] = {}
    todo = list(names)
    while todo:
        name = _normal(todo.pop())
        if name in seen:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        seen[name] = dist
        for req in requirements(dist):
            if "extra ==" in req or "extra==" in req:
                continue
            m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req)
            if m:
                todo.append(m.group(1))
    return list(seen.values())


def requirements(dist: metadata.Distribution) -> list[str]:
    """``dist.requires``, read from the Requires-Dist headers of its METADATA directly: the email
    parser behind ``requires`` takes most of the zygote's time for the allow-list."""
    text = dist.read_text("METADATA")
    if text is None:
        return dist.requires or []
    out: list[str] = []
    current: list[str] | None = None
    for line in text.splitlines():
        if not line:
            break  # the headers end at the first empty line (one of spaces folds a header)
        if line[0] in " \t":
            if current is not None:
                current.append(line.strip())  # a folded header goes on
            continue
        if current is not None:
            out.append(" ".join(current))
        name, _, value = line.partition(":")
        current = [value.strip()] if name.strip().lower() == "requires-dist" else None
    if current is not None:
        out.append(" ".join(current))
    return out


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def package_paths(dist: metadata.Distribution) -> set[str]:
    """The top-level files and folders a distribution installed into its site folder."""
    base = os.path.realpath(str(dist.locate_file("")))
    record = dist.read_text("RECORD")  # read directly: dist.files builds a Path per file (slow)
    if record is not None:
        tops = {line.split(",", 1)[0].replace("\\", "/").split("/", 1)[0] for line in record.splitlines()}
    else:
        tops = {f.parts[0] for f in dist.files or [] if f.parts}
    tops -= {"..", "/", "__pycache__"}
    return {
        os.path.realpath(os.path.join(base, top))
        for top in tops
        if not top.endswith(".pth") and os.path.exists(os.path.join(base, top))
    }


def site_dirs() -> set[str]:
    dirs = set(site.getsitepackages()) | {site.getusersitepackages()}
    dirs |= {p for p in sys.path if os.path.basename(p) in ("site-packages", "dist-packages")}
    return {os.path.realpath(d) for d in dirs if d and os.path.isdir(d)}


def mapped_libraries() -> set[str]:
    """Shared objects mapped into this process (the interpreter's and the allowed packages')."""
    out = set()
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split(maxsplit=5)
            if len(parts) == 6 and parts[5].startswith("/"):
                path = parts[5].strip()
                if not path.endswith(" (deleted)") and os.path.isfile(path):
                    out.add(os.path.realpath(path))
    return out


def view(allowed: list[str]) -> tuple[list[str], list[str]]:
    """(read-only binds, masks) for a sandbox that may import ``allowed`` distributions."""
    stdlib = {os.path.realpath(sysconfig.get_paths()[k]) for k in ("stdlib", "platstdlib")}
    packages: set[str] = set()
    for dist in distributions([*BASE_DISTRIBUTIONS, *allowed]):
        packages |= package_paths(dist)
    trees = stdlib | packages
    libs = {p for p in mapped_libraries() if not any(_within(p, t) for t in trees)}
    binds = trees | libs | {p for p in SYSTEM_FILES if os.path.isfile(p)}
    masks = {d for d in site_dirs() if any(_within(d, t) and d != t for t in trees)}
    return sorted(binds), sorted(masks)


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")
