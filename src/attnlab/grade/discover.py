"""Finding the submissions in what instructors download, and who wrote each one.

Each path given to ``attnlab grade`` is a submission file, a folder, or a ``.zip`` holding a folder
(a whole download). A folder may mix these layouts:

- **flat**: ``alice.py``, ``bob.ipynb``: one submission per file, named by the file's stem;
- **one folder per student**: ``alice/pe_attention.py`` (at any depth inside): named by the folder;
- **Gradescope "Export submissions"**: ``submission_<id>/`` folders beside ``submission_metadata.yml``,
  whose ``:submitters:`` (``:name:``, ``:email:``, ``:sid:``) say who wrote each one;
- **Canvas bulk download**: every file named ``<name>_[LATE_]<user id>_<file id>_<original name>``;
  the files of one Canvas user id are one submission, named ``<name>_<user id>``;
- **a student's ``.zip``** (in any of the above): read as the folder it holds.

From one student's files exactly one is graded, as the Gradescope autograder picks: the notebook,
or else the ``.py`` file. Files identical to the student release (the untouched stub, the public
tests) are set aside first when the student submitted anything else. More than one notebook (or,
without a notebook, more than one ``.py``) is a problem for a human, never a guess.

Nothing here runs or imports student files. Zips are read member by member with limits on count,
size and depth; members with absolute or ``..`` paths and symbolic links are never written.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import stat
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

SUFFIXES = (".ipynb", ".py")
MAX_FILE = 100 * 1024 * 1024  # bytes: anything larger is not a submission
MAX_ZIP_MEMBERS = 2000
MAX_UNPACKED = 4 * 1024**3  # bytes unpacked from all zips of one run
MAX_ZIP_DEPTH = 2  # a student's zip inside a whole download's zip
MAX_DEPTH = 8  # folder levels searched inside one student's folder
METADATA = "submission_metadata.yml"
SKIPPED_DIRS = {"__pycache__", "__MACOSX", ".ipynb_checkpoints"}
# Canvas: sortable name lowercased without punctuation, optional LATE, user id, file id, original name
CANVAS = re.compile(r"^(?P<name>[^\W_]+)_(?P<late>LATE_)?(?P<uid>\d+)_(?P<fid>\d+)_(?P<file>.+)$")


@dataclass(frozen=True)
class Student:
    """Who wrote a submission, as far as its source says."""

    name: str = ""
    email: str = ""
    id: str = ""  # the LMS's id: a Canvas user id, a Gradescope SID
    login: str = ""  # a file or folder name that may be the student's login
    # the Canvas user id, when the source says it (a Canvas bulk download, a Canvas roster's ID):
    # ``attnlab upload canvas`` matches on it, since ``id`` may also be a Gradescope SID
    canvas_id: str = ""

    def label(self) -> str:
        extra = ", ".join(x for x in (self.id, self.email) if x)
        who = self.name or self.login or "?"
        return f"{who} ({extra})" if extra else who


@dataclass
class Submission:
    key: str  # unique in the batch, stable across downloads of the same work
    file: Path | None  # the file to grade; None when none could be chosen
    origin: str  # where it came from, for humans
    layout: str  # file, folder, gradescope, canvas, zip
    students: tuple[Student, ...] = ()
    notes: list[str] = field(default_factory=list)
    problem: str = ""  # why no file could be chosen

    def who(self) -> str:
        return "; ".join(s.label() for s in self.students) or self.key


@dataclass(frozen=True)
class Ignored:
    path: str
    why: str


@dataclass
class Found:
    submissions: list[Submission]
    ignored: list[Ignored]

    def layouts(self) -> Counter:
        return Counter(s.layout for s in self.submissions)


def find(paths: list[Path]) -> list[Path]:
    """Submission files of a flat layout: the files given, and the ``.ipynb``/``.py`` files inside
    given folders (``attnlab quiz grade`` names each submission by its file's stem)."""
    found: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            found += sorted(
                p for p in path.iterdir() if p.suffix in SUFFIXES and p.is_file() and not p.name.startswith((".", "_"))
            )
        elif path.suffix in SUFFIXES and path.is_file():
            found.append(path)
        else:
            raise FileNotFoundError(f"{path} is not a .ipynb or .py file or a folder of them")
    if not found:
        raise FileNotFoundError("no .ipynb or .py submissions in " + ", ".join(map(str, paths)))
    names: dict[str, Path] = {}
    for path in found:
        if path.stem in names and names[path.stem] != path:
            raise ValueError(f"two submissions are named {path.stem!r}: {names[path.stem]} and {path}")
        names[path.stem] = path
    return list(names.values())


def discover(paths: list[Path], *, unpack: Path, release: Path | None = None, exclude: Path | None = None) -> Found:
    """Every submission in ``paths``, with what was ignored and why.

    Zips are unpacked under ``unpack`` (a private scratch folder). ``release`` is the student
    release, whose unchanged files are set aside; ``exclude`` (the results folder, when it lies
    among the submissions) is never searched. Raises ``FileNotFoundError`` when nothing can be
    graded and ``ValueError`` for two submissions with one name or unreadable Gradescope metadata.
    """
    finder = _Finder(Path(unpack), _fingerprints(release), Path(exclude).resolve() if exclude else None)
    for path in map(Path, paths):
        if path.is_dir():
            finder.folder(path, str(path))
        elif path.is_file() and path.suffix.lower() == ".zip":
            inner = finder.unzip(path, str(path))
            if inner is not None:
                finder.folder(_single_child(inner), str(path))
        elif path.is_file() and path.suffix in SUFFIXES:
            finder.add(Submission(path.stem, path, str(path), "file", (Student(login=path.stem),)))
        elif path.exists():
            raise FileNotFoundError(f"{path} is not a .ipynb, .py or .zip file or a folder of them")
        else:
            raise FileNotFoundError(f"{path} does not exist")
    subs = finder.submissions
    if not subs:
        why = "; ".join(f"{i.path}: {i.why}" for i in finder.ignored[:5])
        raise FileNotFoundError(
            "no .ipynb or .py submissions in " + ", ".join(map(str, paths)) + (f" (ignored {why})" if why else "")
        )
    seen: dict[str, Submission] = {}
    for sub in subs:
        other = seen.get(sub.key)
        if other is not None and not (sub.file and other.file and sub.file.resolve() == other.file.resolve()):
            raise ValueError(f"two submissions are named {sub.key!r}: {other.origin} and {sub.origin}")
        seen.setdefault(sub.key, sub)
    return Found(list(seen.values()), finder.ignored)


class _Finder:
    def __init__(self, unpack: Path, release: set[str], exclude: Path | None):
        self.unpack, self.release, self.exclude = unpack, release, exclude
        self.submissions: list[Submission] = []
        self.ignored: list[Ignored] = []
        self.zips = 0
        self.unpacked = 0

    def add(self, sub: Submission) -> None:
        sub.key, sub.origin = _printable(sub.key), _printable(sub.origin)
        sub.students = tuple(dataclasses.replace(s, login=_printable(s.login)) for s in sub.students)
        self.submissions.append(sub)

    def ignore(self, shown: str, why: str) -> None:
        self.ignored.append(Ignored(_printable(shown), why))

    # ---- a folder given on the command line (or a whole download's zip)
    def folder(self, root: Path, shown: str) -> None:
        entries = sorted(root.iterdir(), key=lambda p: p.name)
        metadata = root / METADATA
        gradescope = _gradescope_metadata(metadata, shown) if metadata.is_file() else None
        files = [e for e in entries if _usable(e, self, f"{shown}/{e.name}") and e.is_file()]
        dirs = [e for e in entries if e.is_dir() and not e.is_symlink() and not _junk(e)]
        if self.exclude is not None and self.exclude in {d.resolve() for d in dirs}:
            dirs = [d for d in dirs if d.resolve() != self.exclude]
            self.ignore(f"{shown}/{self.exclude.name}", "the results folder")
        candidates = [f for f in files if f.suffix in SUFFIXES or f.suffix.lower() == ".zip"]
        canvas = {f: CANVAS.match(f.name) for f in candidates}
        if candidates and all(canvas.values()):
            self.canvas(canvas, shown)
        else:
            for f in candidates:
                where = f"{shown}/{f.name}"
                if f.name == "__init__.py":
                    self.ignore(where, "a package marker, not a submission")
                elif f.suffix in SUFFIXES:
                    self.add(Submission(f.stem, f, where, "file", (Student(login=f.stem),)))
                else:
                    self.bundle(f.stem, [f], where, "zip", (Student(login=f.stem),))
        for f in files:
            if f not in canvas and not (gradescope is not None and f.name == METADATA):
                self.ignore(f"{shown}/{f.name}", "not a .py, .ipynb or .zip file")
        for d in dirs:
            where = f"{shown}/{d.name}"
            if gradescope is not None:
                students = gradescope.get(d.name)
                sub = self.bundle(d.name, [d], where, "gradescope", students or (Student(login=d.name),))
                if students is None:
                    sub.notes.append(f"not listed in {METADATA}")
            else:
                self.bundle(d.name, [d], where, "folder", (Student(login=d.name),))

    def canvas(self, matches: dict[Path, re.Match | None], shown: str) -> None:
        groups: dict[str, list[Path]] = {}
        for f, m in matches.items():
            assert m is not None
            groups.setdefault(m["uid"], []).append(f)
        for uid, files in groups.items():
            first = matches[files[0]]
            assert first is not None
            key = f"{first['name']}_{uid}"
            where = f"{shown}/{files[0].name}" if len(files) == 1 else f"{shown}/{first['name']}_*{uid}_*"
            sub = self.bundle(key, files, where, "canvas", (Student(id=uid, login=first["name"], canvas_id=uid),))
            if any(matches[f]["late"] for f in files):  # type: ignore[index]
                sub.notes.append("late (Canvas)")

    # ---- one student's files: folders, zips and files, searched for the one to grade
    def bundle(
        self, key: str, roots: list[Path], origin: str, layout: str, students: tuple[Student, ...]
    ) -> Submission:
        found: list[tuple[Path, str]] = []
        others: list[str] = []
        for root in roots:
            self.collect(
                root,
                origin if len(roots) == 1 else f"{origin.rsplit('/', 1)[0]}/{root.name}",
                found,
                others,
                depth=0,
                zips=0,
            )
        sub = Submission(key, None, origin, layout, students)
        if len(found) > 1:
            kept = [(p, s) for p, s in found if _fingerprint(p) not in self.release]
            for p, s in found:
                if (p, s) not in kept:
                    self.ignore(s, "identical to the student release (an untouched stub or public test)")
            found = kept or found
        found = [(p, s) for p, s in found if p.name != "__init__.py"] or found
        notebooks = [(p, s) for p, s in found if p.suffix == ".ipynb"]
        scripts = [(p, s) for p, s in found if p.suffix == ".py"]
        if len(notebooks) > 1:
            sub.problem = "more than one notebook: " + ", ".join(s for _, s in notebooks)
        elif notebooks:
            sub.file = notebooks[0][0]
            for _, s in scripts:
                self.ignore(s, "the notebook beside it is graded (as on Gradescope)")
        elif len(scripts) > 1:
            sub.problem = "more than one .py file and no notebook: " + ", ".join(s for _, s in scripts)
        elif scripts:
            sub.file = scripts[0][0]
        else:
            sub.problem = "no .ipynb or .py file in it" + (f" (found {', '.join(others[:5])})" if others else "")
        if sub.file is not None:
            sub.origin = next(s for p, s in found if p == sub.file)
        self.add(sub)
        return sub

    def collect(self, path: Path, shown: str, found: list, others: list, depth: int, zips: int) -> None:
        if path.is_symlink():
            self.ignore(shown, "a symbolic link")
        elif path.is_dir():
            if depth > MAX_DEPTH:
                self.ignore(shown, f"more than {MAX_DEPTH} folders deep")
                return
            for child in sorted(path.iterdir(), key=lambda p: p.name):
                if _junk(child):
                    self.ignore(f"{shown}/{child.name}", "hidden or system file")
                else:
                    self.collect(child, f"{shown}/{child.name}", found, others, depth + 1, zips)
        elif path.suffix.lower() == ".zip":
            if zips >= MAX_ZIP_DEPTH:
                self.ignore(shown, "a zip inside a zip inside a zip")
                return
            inner = self.unzip(path, shown)
            if inner is not None:
                self.collect(inner, shown, found, others, depth + 1, zips + 1)
        elif path.suffix in SUFFIXES and path.is_file():
            if path.stat().st_size > MAX_FILE:
                self.ignore(shown, f"larger than {MAX_FILE >> 20} MB")
            else:
                found.append((path, shown))
        else:
            others.append(path.name)
            self.ignore(shown, "not a .py or .ipynb file")

    def unzip(self, path: Path, shown: str) -> Path | None:
        """The zip's files, written under the scratch folder; None (and a reason) when unreadable."""
        self.zips += 1
        dest = self.unpack / f"zip{self.zips}"
        try:
            with zipfile.ZipFile(path) as zf:
                infos = zf.infolist()
                if len(infos) > MAX_ZIP_MEMBERS:
                    self.ignore(shown, f"a zip with more than {MAX_ZIP_MEMBERS} files")
                    return None
                dest.mkdir(parents=True)
                for info in infos:
                    where = f"{shown}:{info.filename}"
                    parts = PurePosixPath(info.filename.replace("\\", "/")).parts
                    if info.is_dir():
                        continue
                    if not parts or info.filename.startswith(("/", "\\")) or ".." in parts or ":" in parts[0]:
                        self.ignore(where, "a path outside the zip")
                        continue
                    if stat.S_ISLNK(info.external_attr >> 16):
                        self.ignore(where, "a symbolic link")
                        continue
                    if Path(parts[-1]).suffix.lower() not in (*SUFFIXES, ".zip", ".yml"):
                        self.ignore(where, "not a .py, .ipynb or .zip file")
                        continue
                    budget = min(MAX_FILE, MAX_UNPACKED - self.unpacked)
                    data = _read_member(zf, info, budget)
                    if data is None:
                        self.ignore(where, "too large (or unreadable) inside its zip")
                        continue
                    self.unpacked += len(data)
                    target = dest.joinpath(*(_short(p) for p in parts))
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(data)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, NotImplementedError, EOFError) as e:
            self.ignore(shown, f"not a readable zip ({type(e).__name__}: {str(e)[:120]})")
            return None
        return dest


def _read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, budget: int) -> bytes | None:
    """The member's bytes, or None past ``budget`` (declared sizes can lie) or when encrypted."""
    try:
        with zf.open(info) as f:
            data = f.read(budget + 1)
    except (RuntimeError, zipfile.BadZipFile, OSError, EOFError):
        return None
    return None if len(data) > budget else data


def _short(part: str) -> str:
    """A path part that fits any file system (255 bytes)."""
    if len(part.encode()) <= 200:
        return part
    digest = hashlib.sha256(part.encode()).hexdigest()[:12]
    return part.encode()[:150].decode(errors="ignore") + f"-{digest}" + Path(part).suffix[:20]


def _printable(name: str) -> str:
    """A file name as valid text: bytes that are not UTF-8 (kept by Python as surrogates) become
    ``\\xNN``, so that every output can be written and printed."""
    try:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return name.encode("utf-8", "backslashreplace").decode("utf-8")


def _single_child(folder: Path) -> Path:
    """A zipped folder's content: the folder itself when the zip holds nothing else."""
    entries = [e for e in folder.iterdir() if not _junk(e)]
    return entries[0] if len(entries) == 1 and entries[0].is_dir() else folder


def _junk(path: Path) -> bool:
    """Folders and files no student wrote: hidden folders, macOS's ``._*`` and ``.DS_Store``,
    caches. (A file whose name merely starts with a dot is still a submission.)"""
    name = path.name
    return (
        name in SKIPPED_DIRS or name == ".DS_Store" or name.startswith("._") or (name.startswith(".") and path.is_dir())
    )


def _usable(path: Path, finder: _Finder, shown: str) -> bool:
    if _junk(path):
        finder.ignore(shown, "hidden or system file")
        return False
    if path.is_symlink():
        finder.ignore(shown, "a symbolic link")
        return False
    return True


def _gradescope_metadata(path: Path, shown: str) -> dict[str, tuple[Student, ...]]:
    """Folder name -> submitters, from a Gradescope export's ``submission_metadata.yml``."""
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
        raise ValueError(f"{shown}/{METADATA} cannot be read: {type(e).__name__}: {str(e)[:200]}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{shown}/{METADATA} is not a Gradescope export's metadata (no submissions in it)")
    out: dict[str, tuple[Student, ...]] = {}
    for folder, record in data.items():
        submitters = record.get(":submitters") if isinstance(record, dict) else None
        if not isinstance(submitters, list):
            continue
        out[str(folder)] = tuple(
            Student(name=_text(s.get(":name")), email=_text(s.get(":email")), id=_text(s.get(":sid")))
            for s in submitters
            if isinstance(s, dict)
        )
    return out


def _text(value: object) -> str:
    return "" if value is None else str(value).strip()


def _fingerprint(path: Path) -> str:
    """Equal for a file and an untouched copy of it: a notebook by its code cells only (running
    it changes outputs and counts), a .py by its text with any line endings."""
    try:
        data = path.read_bytes()
    except OSError:
        return ""
    if path.suffix == ".ipynb":
        try:
            cells = json.loads(data)["cells"]
            data = json.dumps([_source(c) for c in cells if c.get("cell_type") == "code"]).encode()
        except (ValueError, KeyError, TypeError, AttributeError):
            pass
    else:
        data = data.replace(b"\r\n", b"\n")
    return hashlib.sha256(data).hexdigest()


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def _fingerprints(release: Path | None) -> set[str]:
    if release is None or not Path(release).is_dir():
        return set()
    return {_fingerprint(p) for p in Path(release).rglob("*") if p.suffix in SUFFIXES and p.is_file()}


def unreadable(path: Path) -> str | None:
    """Why the file cannot be graded as a submission (not text, not a notebook), or None."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        return f"cannot be read ({e.strerror or e})"
    kind = _binary_kind(data)
    if kind:
        return f"{kind}, not a {'notebook' if path.suffix == '.ipynb' else 'Python file'}"
    if path.suffix == ".ipynb":
        return _unreadable_notebook(data)
    import io
    import tokenize

    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:  # an unknown declared encoding, or undecodable bytes in the first lines
        encoding = "utf-8"
    try:
        data.decode(encoding)
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        return (
            f"not UTF-8 text (byte 0x{data[e.start]:02x} on line {line}); re-save it as UTF-8 or declare its encoding"
        )
    return None


def _binary_kind(data: bytes) -> str:
    if data.startswith(b"PK\x03\x04") or data.startswith(b"PK\x05\x06"):
        return "a zip archive"
    if data.startswith(b"%PDF"):
        return "a PDF"
    if b"\x00" in data[:65536]:
        return "binary data"
    return ""


def _unreadable_notebook(data: bytes) -> str | None:
    try:
        nb = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError:
        return "not a notebook (not UTF-8 text)"
    except ValueError as e:
        return f"not a notebook (not JSON: {str(e)[:120]})"
    except RecursionError:
        return "not a notebook (JSON nested too deep)"
    older = isinstance(nb, dict) and isinstance(nb.get("worksheets"), list)  # nbformat 3: converted
    if not isinstance(nb, dict) or not (isinstance(nb.get("cells"), list) or older):
        return "not a notebook (JSON without a list of cells)"
    import nbformat

    try:
        nbformat.reads(data.decode("utf-8-sig"), as_version=4)
    except Exception as e:  # noqa: BLE001 - nbformat raises many kinds for malformed notebooks
        return f"not a notebook nbformat can read ({type(e).__name__}: {str(e)[:120]})"
    return None
