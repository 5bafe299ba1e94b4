"""What a sandbox may read: the interpreter's standard library, the distributions an assignment
allows (with their dependencies), and the shared libraries that those can load. Nothing else of the
host exists for it: no site-packages beyond the allowed packages (the kit's own package, which holds
the reference solution, is not among them), no home, no /run, no /srv, no other checkout.

The shared libraries are found from the files, not from what a process has imported: every shared
object under the allowed trees (the standard library's extension modules and the packages'), and
the interpreter, name the libraries they need (ELF ``DT_NEEDED``), which are looked up as the
dynamic loader looks them up (``RPATH``/``RUNPATH``, ``LD_LIBRARY_PATH``, ``/etc/ld.so.cache``, the
default folders), and so on for those. So the view is the same whatever the zygote imported before
computing it, and the zygote may import its optional modules (``preloads.py``) at any later time.
Loaded by file path: imports nothing from attnlab.
"""

from __future__ import annotations

import os
import re
import site
import stat
import struct
import sys
import sysconfig
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used: a zygote without the allow-list (``attnlab check``) skips it
    from importlib import metadata

# Always allowed: the array library every assignment uses, and IPython, whose input transformer
# turns a notebook's magics into Python inside the sandbox.
BASE_DISTRIBUTIONS = ("numpy", "ipython")
SYSTEM_FILES = ("/etc/ld.so.cache",)


def distributions(names: list[str]) -> list[Distribution]:
    """The named distributions and everything they require (extras left out), where installed."""
    found = _metadata_folders()
    seen: dict[str, Distribution] = {}
    todo = list(names)
    while todo:
        name = _normal(todo.pop())
        if name in seen:
            continue
        dist = _distribution(name, found)
        if dist is None:
            continue
        seen[name] = dist
        for req in requirements(dist):
            if "extra ==" in req or "extra==" in req:
                continue
            m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req)
            if m:
                todo.append(m.group(1))
    return list(seen.values())


class DistInfo:
    """An installed distribution's ``.dist-info`` folder, read directly: what ``view`` reads of an
    ``importlib.metadata.Distribution``, without importing that module (with the email package
    behind it, a tenth of the zygote's start-up)."""

    files = requires = None  # a folder without RECORD or METADATA: nothing listed, nothing required

    def __init__(self, folder: str):
        self.folder = folder

    def read_text(self, name: str) -> str | None:
        try:
            with open(os.path.join(self.folder, name), encoding="utf-8") as f:
                return f.read()
        except OSError:
            return None

    def locate_file(self, path: str) -> str:
        return os.path.join(os.path.dirname(self.folder), path)


if TYPE_CHECKING:
    Distribution = metadata.Distribution | DistInfo


def _metadata_folders() -> dict[str, str] | None:
    """Where ``importlib.metadata.distribution`` finds each distribution, by its name as
    ``_normal`` spells it, as that function searches: the folders of ``sys.path`` in order, each
    listed once, the first ``.dist-info`` or ``.egg-info`` of a name winning. None where it would
    search more than folders (a zip or an egg on the path, a finder of distributions besides the
    path's): then it answers for every name (``_distribution``)."""
    from importlib.machinery import PathFinder

    if [f for f in sys.meta_path if hasattr(f, "find_distributions")] != [PathFinder]:
        return None
    found: dict[str, str] = {}
    for entry in sys.path:
        folder = entry or "."
        if os.path.basename(folder).lower().endswith(".egg"):
            return None
        try:
            children = os.listdir(folder)
        except NotADirectoryError:
            return None
        except OSError:
            continue  # missing: nothing found there
        for child in children:
            low = child.lower()
            if low.endswith((".dist-info", ".egg-info")):
                found.setdefault(_normal(low.rpartition(".")[0].partition("-")[0]), os.path.join(folder, child))
    return found


def _distribution(name: str, found: dict[str, str] | None) -> Distribution | None:
    """The distribution ``name`` (spelt as ``_normal`` spells it): the ``.dist-info`` folder that
    ``found`` names for it, read directly; importlib.metadata's answer for anything else."""
    if found is not None:
        folder = found.get(name)
        if folder is None:
            return None
        if folder.lower().endswith(".dist-info") and os.path.isdir(folder):
            return DistInfo(folder)
    from importlib import metadata

    try:
        return metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return None


def requirements(dist: Distribution) -> list[str]:
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


def package_files(dist: Distribution) -> tuple[set[str], set[str]]:
    """(the top-level files and folders a distribution installed into its site folder, the shared
    objects among its files), from one reading of its RECORD."""
    base = os.path.realpath(str(dist.locate_file("")))
    record = dist.read_text("RECORD")  # read directly: dist.files builds a Path per file (slow)
    if record is not None:
        names = [line.split(",", 1)[0].replace("\\", "/") for line in record.splitlines()]
    else:
        names = [f.as_posix() for f in dist.files or []]
    # ("": a name given by its absolute path, outside the site folder like "..", not the folder itself)
    tops = {name.split("/", 1)[0] for name in names if name} - {"", "..", "__pycache__"}
    tops = {top for top in tops if not top.endswith(".pth") and os.path.exists(os.path.join(base, top))}
    # (what is not a shared object after all is found out when it is read: not an ELF file)
    shared = {os.path.join(base, name) for name in names if ".so" in name and name.split("/", 1)[0] in tops}
    return {os.path.realpath(os.path.join(base, top)) for top in tops}, shared


def _is_shared_object(name: str) -> bool:
    return name.endswith(".so") or ".so." in name


def site_dirs() -> set[str]:
    dirs = set(site.getsitepackages()) | {site.getusersitepackages()}
    dirs |= {p for p in sys.path if os.path.basename(p) in ("site-packages", "dist-packages")}
    return {os.path.realpath(d) for d in dirs if d and os.path.isdir(d)}


def mapped_libraries() -> set[str]:
    """Shared objects mapped into this process (the interpreter's and the allowed packages')."""
    paths = set()  # each file once: a library is mapped in several parts
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split(maxsplit=5)
            if len(parts) == 6 and parts[5].startswith("/"):
                paths.add(parts[5].strip())
    return {os.path.realpath(p) for p in paths if not p.endswith(" (deleted)") and os.path.isfile(p)}


def view(allowed: list[str]) -> tuple[list[str], list[str]]:
    """(read-only binds, masks) for a sandbox that may import ``allowed`` distributions."""
    stdlib = {os.path.realpath(sysconfig.get_paths()[k]) for k in ("stdlib", "platstdlib")}
    packages: set[str] = set()
    shared: set[str] = set()
    for dist in distributions([*BASE_DISTRIBUTIONS, *allowed]):
        tops, objects = package_files(dist)
        packages |= tops
        shared |= objects
    trees = stdlib | packages
    for folder in {os.path.join(d, "lib-dynload") for d in stdlib}:
        if os.path.isdir(folder):
            shared |= {os.path.join(folder, n) for n in os.listdir(folder) if _is_shared_object(n)}
    shared.add(os.path.realpath(sys.executable))
    # what this process maps that no file names (the locale's files) and, by their paths as the
    # loader opens them, the libraries that the shared objects need
    found = mapped_libraries() | needed_libraries(sorted(shared))
    libs = {p for p in found if not any(_within(p, t) for t in trees)}
    binds = trees | libs | {p for p in SYSTEM_FILES if os.path.isfile(p)}
    masks = {d for d in site_dirs() if any(_within(d, t) and d != t for t in trees)}
    return sorted(binds), sorted(masks)


def landlock_view(binds: list[str], masks: list[str]) -> tuple[list[str], list[str]]:
    """The view as Landlock can have it: (paths that may be read, folders that may only be listed).
    A Landlock rule allows a path and everything beneath it, and nothing masks part of that; so a
    bound tree that holds a mask (the interpreter's folder, holding site-packages with this kit's
    solution and hidden tests in it once installed) is allowed entry by entry, down to the mask.
    The mask may be listed: the import system lists a site folder to find the allowed packages in it,
    each bound (so readable) on its own."""
    readable: list[str] = []
    carved: set[str] = set()
    for path in binds:
        readable += _carve(path, [m for m in masks if _within(m, path)], carved)
    return sorted(set(readable)), sorted(masks)


def _carve(path: str, masks: list[str], carved: set[str]) -> list[str]:
    """``path`` and what is beneath it, less ``masks`` (real paths beneath it), as few paths as can
    be; ``carved``: the folders already taken apart (a link back up would lead to one again)."""
    if not masks:
        return [path]
    if path in masks or path in carved or not os.path.isdir(path):
        return []
    carved.add(path)
    kept = []
    for entry in os.scandir(path):
        real = os.path.realpath(entry.path)  # a rule follows a symbolic link: carve where it leads
        kept += _carve(real, [m for m in masks if _within(m, real)], carved)
    return kept


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


# ---- the shared libraries that shared objects need, found as the dynamic loader finds them --------

_DT_NEEDED, _DT_STRTAB, _DT_STRSZ, _DT_RPATH, _DT_RUNPATH = 1, 5, 10, 15, 29
_PT_LOAD, _PT_DYNAMIC = 1, 2
LD_CACHE = "/etc/ld.so.cache"


class _Elf:
    """The dynamic section of an ELF shared object or executable: the libraries it needs, its
    ``RPATH`` and ``RUNPATH`` (folders, ``$ORIGIN`` expanded), and its class and machine (the loader
    only takes a library of the same)."""

    def __init__(self, path: str):
        self.path = path
        self.needed: list[str] = []
        self.rpath: list[str] = []
        self.runpath: list[str] = []
        with open(path, "rb") as f:
            ident = f.read(64)
            if len(ident) < 52 or ident[:4] != b"\x7fELF" or ident[4] not in (1, 2) or ident[5] not in (1, 2):
                raise ValueError(f"not an ELF file: {path}")
            wide, order = ident[4] == 2, "<" if ident[5] == 1 else ">"
            self.kind = (ident[4], ident[5], struct.unpack_from(order + "H", ident, 18)[0])
            if wide:
                phoff, phentsize, phnum = (
                    struct.unpack_from(order + "Q", ident, 32)[0],
                    *struct.unpack_from(order + "HH", ident, 54),
                )
                phdr, dyn = order + "IIQQQQQQ", order + "qQ"
            else:
                phoff, phentsize, phnum = (
                    struct.unpack_from(order + "I", ident, 28)[0],
                    *struct.unpack_from(order + "HH", ident, 42),
                )
                phdr, dyn = order + "IIIIIIII", order + "iI"
            f.seek(phoff)
            table = f.read(phentsize * phnum)
            loads, dynamic = [], None
            for i in range(phnum):
                fields = struct.unpack_from(phdr, table, i * phentsize)
                if wide:
                    p_type, _, p_offset, p_vaddr, _, p_filesz = fields[:6]
                else:
                    p_type, p_offset, p_vaddr, _, p_filesz = fields[:5]
                if p_type == _PT_LOAD:
                    loads.append((p_vaddr, p_offset, p_filesz))
                elif p_type == _PT_DYNAMIC:
                    dynamic = (p_offset, p_filesz)
            if dynamic is None:
                return  # statically linked: needs nothing
            f.seek(dynamic[0])
            data = f.read(dynamic[1])
            entries: list[tuple[int, int]] = []
            size = struct.calcsize(dyn)
            for off in range(0, len(data) - size + 1, size):
                tag, value = struct.unpack_from(dyn, data, off)
                if tag == 0:
                    break
                entries.append((tag, value))
            table_of = dict(entries)
            if _DT_STRTAB not in table_of:
                return
            address = table_of[_DT_STRTAB]
            offset = next((o + address - v for v, o, n in loads if v <= address < v + n), None)
            if offset is None:
                return
            f.seek(offset)
            strings = f.read(table_of.get(_DT_STRSZ, 1 << 16))

        def text(at: int) -> str:
            return strings[at : strings.index(b"\0", at)].decode("utf-8", "surrogateescape")

        origin = os.path.dirname(os.path.abspath(path))
        for tag, value in entries:
            if tag == _DT_NEEDED:
                self.needed.append(text(value))
            elif tag in (_DT_RPATH, _DT_RUNPATH):
                folders = [_expand(d, origin) for d in text(value).split(":") if d]
                (self.rpath if tag == _DT_RPATH else self.runpath).extend(folders)


def _expand(folder: str, origin: str) -> str:
    for token in ("$ORIGIN", "${ORIGIN}"):
        folder = folder.replace(token, origin)
    return os.path.normpath(folder)


def ld_cache(path: str = LD_CACHE) -> dict[str, list[str]]:
    """The loader's cache (glibc's format, ``glibc-ld.so.cache1.1``, alone or after the old one):
    each library name with the paths it stands for, in the cache's order."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return {}
    magic = b"glibc-ld.so.cache1.1"
    start = data.find(magic)
    if start < 0:
        return {}
    count = struct.unpack_from("<I", data, start + 20)[0]
    out: dict[str, list[str]] = {}

    def text(at: int) -> str:
        return data[at : data.index(b"\0", at)].decode("utf-8", "surrogateescape")

    for i in range(count):
        _, key, value = struct.unpack_from("<iII", data, start + 48 + 24 * i)
        # offsets count from the new format's header (the start of the file when it is alone)
        out.setdefault(text(start + key), []).append(text(start + value))
    return out


def default_folders() -> list[str]:
    """Where the loader looks last (glibc's trusted folders), multiarch ones first."""
    arch = sysconfig.get_config_var("MULTIARCH") or ""
    folders = [f"/lib/{arch}", f"/usr/lib/{arch}"] if arch else []
    return folders + (["/lib64", "/usr/lib64"] if sys.maxsize > 2**32 else []) + ["/lib", "/usr/lib"]


def _parsed(path: str, parsed: dict[tuple[int, int], _Elf | None]) -> _Elf | None:
    """The ELF file at ``path`` (None: none there), read unless ``parsed`` holds it already."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    key = (st.st_dev, st.st_ino)
    if key not in parsed:
        try:
            parsed[key] = _Elf(path) if stat.S_ISREG(st.st_mode) else None
        except (OSError, ValueError, struct.error, IndexError):
            parsed[key] = None
    return parsed[key]


def needed_libraries(objects: list[str], *, cache: dict[str, list[str]] | None = None) -> set[str]:
    """The libraries that ``objects`` need, directly or through each other, as paths the dynamic
    loader opens them by (a symbolic link as it is named: the view binds what it points to there)
    together with their real paths. A name is looked up where the loader would look: the needing
    object's ``RPATH`` (and the interpreter's) unless it has a ``RUNPATH``, ``LD_LIBRARY_PATH``, its
    ``RUNPATH``, the cache (every entry of that name: the loader picks among them by the CPU's
    capabilities), the default folders; the first folder holding a library of the same class and
    machine wins."""
    cache = ld_cache() if cache is None else cache
    env_path = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d]
    defaults = default_folders()
    parsed: dict[tuple[int, int], _Elf | None] = {}  # by (device, inode): a file read once
    looked: dict[str, _Elf | None] = {}  # by path: each looked at once (every object needs libc)

    def elf(path: str) -> _Elf | None:
        if path not in looked:
            looked[path] = _parsed(path, parsed)
        return looked[path]

    main = elf(sys.executable)
    kind = main.kind if main else None
    main_rpath = main.rpath if main and not main.runpath else []

    def fits(path: str) -> bool:
        found = elf(path)
        return found is not None and (kind is None or found.kind == kind)

    out: set[str] = set()
    todo = list(objects)
    seen: set[int] = set()
    while todo:
        obj = elf(todo.pop())
        if obj is None or id(obj) in seen:
            continue
        seen.add(id(obj))
        for name in obj.needed:
            if "/" in name:
                hits = [name] if fits(name) else []
            else:
                rpath = [] if obj.runpath else obj.rpath + main_rpath
                hits = []
                for folder in (*rpath, *env_path, *obj.runpath):
                    if fits(os.path.join(folder, name)):
                        hits = [os.path.join(folder, name)]
                        break
                if not hits:
                    hits = [p for p in cache.get(name, []) if fits(p)]
                if not hits:
                    hits = next(([os.path.join(d, name)] for d in defaults if fits(os.path.join(d, name))), [])
            for hit in hits:
                if hit not in out:
                    out |= {hit, os.path.realpath(hit)}
                    todo.append(hit)
    return out
