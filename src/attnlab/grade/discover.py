"""Finding the submissions in what instructors download, and who wrote each one.

Each path given to ``attnlab grade`` is a submission file, a folder, or a ``.zip`` holding a folder
(a whole download). A folder may mix these layouts:

- **flat**: ``alice.py``, ``bob.ipynb``: one submission per file, named by the file's stem;
- **one folder per student**: ``alice/pe_attention.py`` (at any depth inside): named by the folder;
- **Gradescope "Export submissions"**: ``submission_<id>/`` folders beside ``submission_metadata.yml``,
  whose ``:submitters:`` (``:name:``, ``:email:``, ``:sid:``) say who wrote each one;
- **Canvas bulk download**: every file named ``<name>_[LATE_]<user id>_<file id>_<original name>``;
  the files of one Canvas user id are one submission, named ``<name>_<user id>``;
- **Moodle "Download all submissions"**: ``<full name>_<participant id>_assignsubmission_file_/``
  folders (or files with that prefix): one submission per participant id, named ``<full name>_<id>``;
- a Canvas or Moodle student who handed in only files that are not code (a PDF) is a submission
  with that problem, not a student without one;
- **a student's ``.zip``** (in any of the above): read as the folder it holds.

From one student's files exactly one is graded, as the Gradescope autograder picks: the notebook,
or else the ``.py`` file. Files identical to the student release (the untouched stub, the public
tests) are set aside first when the student submitted anything else. More than one notebook (or,
without a notebook, more than one ``.py``) is a problem for a human, never a guess.

Nothing here runs or imports student files, and only regular files are opened: a FIFO, a device,
a socket or a symbolic link inside what was given is listed as ignored with the reason, never read.
What cannot be read (no permission, too large, an encrypted or corrupt zip) is listed too, and a
student left with nothing to grade because of it gets that reason as the submission's problem;
it never stops the run. Nor does anything else that goes wrong while one student's files are
searched (a notebook nested too deep to compare, two submissions with one name): it is that
student's problem, and the others are found as usual. Zips are read member by member with limits on count, size and depth, and
on what one submission's zips may unpack; members with absolute or ``..`` paths and symbolic
links are never written. A results folder of ``attnlab grade`` is never searched.

How files are named and what happens when two share a name: see ``discover``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import re
import stat
import zipfile
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ..lms import gradescope, moodle
from ..lms.canvas import DOWNLOAD_NAME as CANVAS
from ..lms.identity import Student

SUFFIXES = (".ipynb", ".py")
MAX_FILE = 100 * 1024 * 1024  # bytes: anything larger is not a submission
MAX_CODE = 16 * 1024 * 1024  # bytes of a .py (a notebook's outputs may take the rest of MAX_FILE)
MAX_ZIP_MEMBERS = 2000
MAX_UNPACKED = 4 * 1024**3  # bytes unpacked from the zips of one run and kept (what is not graded is deleted)
MAX_SHARE = 256 * 1024**2  # bytes the zips of one submission may unpack (at least MAX_FILE)
MAX_ZIP_DEPTH = 2  # a student's zip inside a whole download's zip
MAX_DEPTH = 8  # folder levels searched inside one student's folder
METADATA = gradescope.METADATA
STORE = "submissions"  # what ``attnlab grade`` writes in its results folder, never searched
RESULT_FILES = frozenset(
    {
        "grades.csv",
        "found.csv",
        "moodle_import.csv",
        "canvas_import.csv",
        "item_analysis.csv",
        "item_analysis.svg",
        "misconceptions.csv",
    }
)
SKIPPED_DIRS = {"__pycache__", "__MACOSX", ".ipynb_checkpoints"}


@dataclass
class Submission:
    key: str  # unique in the batch, stable across downloads of the same work
    file: Path | None  # the file to grade; None when none could be chosen
    origin: str  # where it came from, for humans
    layout: str  # file, folder, gradescope, canvas, moodle, zip
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


def discover(paths: list[Path], *, unpack: Path, release: Path | None = None, exclude: Path | None = None) -> Found:
    """Every submission in ``paths``, with what was ignored and why.

    Zips are unpacked under ``unpack`` (a private scratch folder). ``release`` is the student
    release, whose unchanged files are set aside; ``exclude`` (the results folder, when it lies
    among the submissions) is never searched, and neither is any other results folder of
    ``attnlab grade`` (a folder holding its ``grades.csv`` or ``found.csv`` beside ``submissions/``).

    Names: a file, folder or zip inside a given folder is named by its stem; the entries of one
    folder that share a stem (``bob.py`` and ``bob.ipynb``, ``bob/`` and ``bob.zip``) are one
    student's files, from which one is graded as from a student's folder (the notebook, else the
    ``.py``; an identical copy counts once), the others listed as ignored with the reason. A zip
    named here is one student's submission, named by the zip's stem, when all it holds is one
    student's work (one notebook, or no notebook and one ``.py``, besides release files); otherwise
    (a Gradescope export's metadata, Canvas-named files, zips inside it, or more than one file to
    grade) it is read as a whole download; a zip with nothing to grade in it is one submission with
    that problem. Between two submissions with one name from different ``paths`` nothing is
    guessed: each is a problem, named apart (the same file named twice counts once).

    A file, a folder or a zip that cannot be read (no permission, not a regular file, over a limit,
    encrypted, corrupt) is listed as ignored with the reason, and a submission left with nothing
    to grade because of it says so in its ``problem``; only regular files are ever opened.

    Raises ``FileNotFoundError`` when nothing can be graded or a path does not exist, and
    ``ValueError`` for unreadable Gradescope metadata.
    """
    finder = _Finder(Path(unpack), _fingerprints(release), _resolved(Path(exclude)) if exclude else None)
    finder.given_zips = max(1, sum(Path(p).suffix.lower() == ".zip" for p in paths))
    for path in map(Path, paths):
        try:
            st = path.stat()  # (a path named here may be a symbolic link: its owner chose it)
        except FileNotFoundError:
            raise FileNotFoundError(f"{path} does not exist") from None
        except OSError as e:
            finder.ignore(str(path), reason(e))
            continue
        if stat.S_ISDIR(st.st_mode):
            finder.folder(path, str(path))
        elif stat.S_ISREG(st.st_mode) and path.suffix.lower() == ".zip":
            finder.zipped(path)
        elif stat.S_ISREG(st.st_mode) and path.suffix in SUFFIXES:
            why = _too_large(path, st.st_size) or _probe(path, follow=True)
            if why:
                finder.ignore(str(path), why)
            sub = Submission(path.stem, None if why else path, str(path), "file", (Student(login=path.stem),))
            sub.problem = f"{path.name}: {why}" if why else ""
            finder.add(sub)
        else:
            raise FileNotFoundError(f"{path} is not a .ipynb, .py or .zip file or a folder of them")
    subs = finder.submissions
    if not subs:
        why = "; ".join(f"{i.path}: {i.why}" for i in finder.ignored[:5])
        raise FileNotFoundError(
            "no .ipynb or .py submissions in " + ", ".join(map(str, paths)) + (f" (ignored {why})" if why else "")
        )
    return Found(_named_once(subs), finder.ignored)


def _named_once(subs: list[Submission]) -> list[Submission]:
    """The submissions with the same file named twice counted once. Submissions from different
    paths sharing a name are each a problem (nothing is guessed), under a name of their own."""
    named: dict[str, list[Submission]] = {}
    for sub in subs:
        same = named.setdefault(sub.key, [])
        if not any(sub.file and other.file and _resolved(sub.file) == _resolved(other.file) for other in same):
            same.append(sub)
    out: list[Submission] = []
    for key, same in named.items():
        if len(same) > 1:
            where = " and ".join(other.origin for other in same[:3]) + (" ..." if len(same) > 3 else "")
            for sub in same:
                digest = hashlib.sha256(sub.origin.encode("utf-8", "surrogatepass")).hexdigest()[:8]
                sub.key, sub.file = f"{key}-{digest}", None
                sub.problem = f"{len(same)} submissions are named {key!r} ({where}): a human must say whose each is"
        out += same
    return out


class _Finder:
    def __init__(self, unpack: Path, release: set[str], exclude: Path | None):
        self.unpack, self.release, self.exclude = unpack, release, exclude
        self.submissions: list[Submission] = []
        self.ignored: list[Ignored] = []
        self.zips = 0
        self.unpacked = 0  # bytes in the scratch folder now (what a submission did not use is deleted)
        self.written: list[tuple[Path, int]] = []  # files unpacked, in order
        self.share: int | None = None  # bytes the zips of the submission being searched may still unpack
        self.over = ""  # why a zip past ``share`` is refused
        self.given_zips = 1  # zips named on the command line: each may unpack its share of MAX_UNPACKED
        self.refused: list[str] = []  # what the submission being searched holds and could not be read

    def add(self, sub: Submission) -> None:
        sub.key, sub.origin = _printable(sub.key), _printable(sub.origin)
        sub.students = tuple(dataclasses.replace(s, login=_printable(s.login)) for s in sub.students)
        self.submissions.append(sub)

    def ignore(self, shown: str, why: str) -> None:
        self.ignored.append(Ignored(_printable(shown), why))

    def refuse(self, shown: str, why: str) -> None:
        """Something that may have been (part of) a submission and cannot be read: ignored, and
        named in the problem of the submission being searched when nothing else is graded."""
        self.ignore(shown, why)
        self.refused.append(f"{_printable(shown)}: {why}")

    def entries(self, folder: Path, shown: str) -> list[tuple[Path, os.stat_result]] | None:
        """The folder's entries by name, each with its own ``lstat`` (nothing followed); None (and
        the reason) when the folder cannot be listed."""
        try:
            names = sorted(os.listdir(folder))
        except OSError as e:
            self.refuse(shown, reason(e))
            return None
        out = []
        for name in names:
            try:
                out.append((folder / name, os.lstat(folder / name)))
            except OSError as e:
                self.refuse(f"{shown}/{name}", reason(e))
        return out

    def results(self, folder: Path) -> str:
        """Why ``folder`` is a results folder of ``attnlab grade`` (never searched), or ""."""
        if self.exclude is not None and _resolved(folder) == self.exclude:
            return "the results folder"
        return "an earlier results folder of attnlab grade" if _is_results(folder) else ""

    # ---- a folder given on the command line (or a whole download's zip)
    def folder(self, root: Path, shown: str) -> None:
        entries = self.entries(root, shown)
        if entries is None:
            return
        own = bool(self.results(root))  # `--out X X`: grade X's files, not what attnlab grade wrote there
        kinds = {p.name: st.st_mode for p, st in entries}
        submitters = None
        if stat.S_ISREG(kinds.get(METADATA, 0)):
            try:
                data = read_regular(root / METADATA, follow=False)
            except OSError as e:
                raise ValueError(f"{shown}/{METADATA} cannot be read: {reason(e)}") from None
            submitters = gradescope.submitters(data, f"{shown}/{METADATA}")
        files: list[Path] = []
        dirs: list[Path] = []
        for p, st in entries:
            where, mode = f"{shown}/{p.name}", st.st_mode
            if _junk(p.name, stat.S_ISDIR(mode)):
                self.ignore(where, "hidden or system file")
            elif stat.S_ISLNK(mode):
                self.ignore(where, "a symbolic link")
            elif own and stat.S_ISDIR(mode) and p.name == STORE:
                self.ignore(where, "written by attnlab grade (the results of each submission)")
            elif own and p.name in RESULT_FILES:
                self.ignore(where, "written by attnlab grade")
            elif stat.S_ISDIR(mode):
                why = self.results(p)
                if why:
                    self.ignore(where, why)
                else:
                    dirs.append(p)
            elif stat.S_ISREG(mode):
                files.append(p)
            else:
                self.ignore(where, f"{_what(mode)}, not a regular file")
        files = [f for f in files if not (submitters is not None and f.name == METADATA)]
        canvas = {f: m for f in files if (m := CANVAS.match(f.name))}
        by_moodle = {p: m for p in (*files, *dirs) if (m := moodle.DOWNLOAD_NAME.match(p.name))}
        if canvas and len(canvas) * 2 > len(files):  # a Canvas download, perhaps with a stray file
            self.download("canvas", canvas, shown)
            self.strays([f for f in files if f not in canvas], shown, "Canvas", "<name>_<user id>_<file id>_<file>")
            files = []
        elif by_moodle and len(by_moodle) * 2 > len(files) + len(dirs):  # Moodle's, folders or files
            self.download("moodle", by_moodle, shown)
            strays = [p for p in (*files, *dirs) if p not in by_moodle]
            self.strays(strays, shown, "Moodle", "<full name>_<participant id>_assignsubmission_...")
            files, dirs = [], []
        candidates = [f for f in files if f.suffix in SUFFIXES or f.suffix.lower() == ".zip"]
        wanted = set(candidates)  # (a class's files: a list's ``in`` made this loop quadratic in them)
        for f in files:
            if f not in wanted:
                self.ignore(f"{shown}/{f.name}", "not a .py, .ipynb or .zip file")
        groups: dict[str, list[Path]] = {}
        for f in candidates:
            if f.name == "__init__.py":
                self.ignore(f"{shown}/{f.name}", "a package marker, not a submission")
            else:
                groups.setdefault(f.stem, []).append(f)
        for d in dirs:
            if submitters is not None:
                students = submitters.get(d.name)
                sub = self.bundle(d.name, [d], f"{shown}/{d.name}", "gradescope", students or (Student(login=d.name),))
                if students is None:
                    sub.notes.append(f"not listed in {METADATA}")
            else:
                groups.setdefault(d.name, []).append(d)
        for key, roots in groups.items():
            layout = (
                "folder"
                if any(r in dirs for r in roots)
                else "zip"
                if all(r.suffix.lower() == ".zip" for r in roots)
                else "file"
            )
            where = f"{shown}/{roots[0].name}" if len(roots) == 1 else f"{shown}/{key}.*"
            self.bundle(key, roots, where, layout, (Student(login=key),))

    def zipped(self, path: Path) -> None:
        """A zip named on the command line: one student's submission or a whole download; what
        goes wrong while it is read is the problem of the submission it is named for."""
        mark = len(self.written)
        try:
            self._zipped(path, mark)
        except Exception as e:  # noqa: BLE001 - (see ``bundle``)
            self.failed(path.stem, str(path), "zip", (Student(login=path.stem),), e, mark)

    def _zipped(self, path: Path, mark: int) -> None:
        self.share, self.refused = MAX_UNPACKED // self.given_zips, []
        self.over = f"unpacks to more than {_size(self.share)}, its share of what the run may unpack"
        try:
            inner = self.unzip(path, str(path), follow=True)
            refused = self.refused
        finally:
            self.share, self.refused = None, []
        if isinstance(inner, str):
            sub = Submission(path.stem, None, str(path), "zip", (Student(login=path.stem),))
            sub.problem = f"{path.name}: {inner}"
            self.add(sub)
        elif self.one_students(content := _single_child(inner)):
            self.bundle(path.stem, [content], str(path), "zip", (Student(login=path.stem),), mark, refused)
        else:
            self.folder(content, str(path))

    def one_students(self, root: Path) -> bool:
        """Whether an unzipped folder holds one student's work rather than a whole download (see
        ``discover``)."""
        counts = Counter[str]()
        stack = [(root, 0)]
        while stack:
            folder, depth = stack.pop()
            try:
                names = os.listdir(folder)
            except OSError:
                continue
            for name in names:
                p = folder / name
                try:
                    mode = os.lstat(p).st_mode
                except OSError:
                    continue
                if _junk(name, stat.S_ISDIR(mode)):
                    continue
                if stat.S_ISDIR(mode) and depth < MAX_DEPTH:
                    stack.append((p, depth + 1))
                elif p.suffix.lower() == ".zip" or (folder == root and (name == METADATA or CANVAS.match(name))):
                    return False
                elif stat.S_ISREG(mode) and p.suffix in SUFFIXES and name != "__init__.py":
                    release = _fingerprint(p) in self.release
                    counts[p.suffix + ("=" if release else "")] += 1
        notebooks, scripts = counts[".ipynb"], counts[".py"]
        if not notebooks and not scripts:  # only release files: judge by those
            notebooks, scripts = counts[".ipynb="], counts[".py="]
        # (nothing to grade in it: the zip's own problem, with what could not be read)
        return notebooks == 1 or (notebooks == 0 and scripts <= 1)

    def download(self, lms: str, matches: dict[Path, re.Match], shown: str) -> None:
        """An LMS's download: each student's files (and, from Moodle, folders) by the id in their
        names. A student who handed in only files that are not code gets that as the problem."""
        groups: dict[str, list[Path]] = {}
        for p, m in matches.items():
            groups.setdefault(m["uid" if lms == "canvas" else "pid"], []).append(p)
        for uid, found in groups.items():
            first = matches[found[0]]
            key = f"{first['name']}_{uid}"
            if lms == "canvas":
                student = Student(id=uid, login=first["name"], canvas_id=uid)
                where = f"{shown}/{found[0].name}" if len(found) == 1 else f"{shown}/{first['name']}_*{uid}_*"
            else:
                student = moodle.student(first)
                where = f"{shown}/{found[0].name}" if len(found) == 1 else f"{shown}/{key}_*"
            roots = [p for p in found if p.is_dir() or p.suffix in SUFFIXES or p.suffix.lower() == ".zip"]
            for p in found:
                if p not in roots:
                    self.ignore(f"{shown}/{p.name}", "not a .py, .ipynb or .zip file")
            if roots:
                sub = self.bundle(key, roots, where, lms, (student,))
            else:
                names = ", ".join(matches[p]["file"] for p in found[:5])
                sub = Submission(key, None, where, lms, (student,))
                sub.problem = f"only files that are not code ({names}): nothing to grade, a human must look"
                self.add(sub)
            if lms == "canvas" and any(matches[p]["late"] for p in found):
                sub.notes.append("late (Canvas)")

    def strays(self, paths: list[Path], shown: str, lms: str, pattern: str) -> None:
        for p in paths:
            self.ignore(
                f"{shown}/{p.name}",
                f"not named as {lms} names the rest of this download ({pattern}), so not graded: "
                "a human must say whose it is",
            )

    # ---- one student's files: folders, zips and files, searched for the one to grade
    def bundle(
        self,
        key: str,
        roots: list[Path],
        origin: str,
        layout: str,
        students: tuple[Student, ...],
        mark: int | None = None,
        refused: list[str] | None = None,
    ) -> Submission:
        """One submission from ``roots``; what its zips unpacked and it does not grade is deleted
        again from the scratch folder (from ``mark`` in ``written``, when given). ``refused``: what
        of it could not be read before (a zip named on the command line).

        Whatever goes wrong while one student's files are searched (a file too deep to compare,
        a limit of the machine) is that student's problem, never the run's."""
        mark = len(self.written) if mark is None else mark
        try:
            return self._bundle(key, roots, origin, layout, students, mark, refused)
        except Exception as e:  # noqa: BLE001 - any failure on one student's files is theirs alone
            return self.failed(key, origin, layout, students, e, mark)

    def failed(
        self, key: str, origin: str, layout: str, students: tuple[Student, ...], e: Exception, mark: int
    ) -> Submission:
        """A submission whose files could not be searched, with why; what it unpacked is deleted."""
        for p, n in self.written[mark:]:
            with contextlib.suppress(OSError):
                p.unlink()
                self.unpacked -= n
        del self.written[mark:]
        sub = Submission(key, None, origin, layout, students)
        sub.problem = f"its files could not be searched ({type(e).__name__}: {str(e)[:120]}): a human must look"
        self.add(sub)
        return sub

    def _bundle(
        self,
        key: str,
        roots: list[Path],
        origin: str,
        layout: str,
        students: tuple[Student, ...],
        mark: int,
        refused: list[str] | None,
    ) -> Submission:
        found: list[tuple[Path, str]] = []
        others: list[str] = []
        self.share, self.refused = MAX_SHARE, list(refused or [])
        self.over = f"unpacks to more than {_size(MAX_SHARE)}, more than one submission may use"
        try:
            for root in roots:
                shown = origin if len(roots) == 1 else f"{origin.rsplit('/', 1)[0]}/{root.name}"
                self.collect(root, shown, found, others, depth=0, zips=0)
            refused = self.refused
        finally:
            self.share, self.refused = None, []
        sub = Submission(key, None, origin, layout, students)
        if len(found) > 1:
            kept = [(p, s) for p, s in found if _fingerprint(p) not in self.release]
            for p, s in found:
                if (p, s) not in kept:
                    self.ignore(s, "identical to the student release (an untouched stub or public test)")
            found = kept or found
        if len(found) > 1:  # the same file twice: e.g. a student's folder beside the zip it was unpacked from
            first: dict[str, str] = {}
            for p, s in list(found):
                copy = first.setdefault(p.name + "\0" + _fingerprint(p), s)
                if copy != s:
                    found.remove((p, s))
                    self.ignore(s, f"a copy of {copy}")
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
        elif refused:
            sub.problem = "no .ipynb or .py file that could be read: " + "; ".join(refused[:3])
        else:
            sub.problem = "no .ipynb or .py file in it" + (f" (found {', '.join(others[:5])})" if others else "")
        if sub.file is not None:
            sub.origin = next(s for p, s in found if p == sub.file)
            if refused:
                sub.notes.append("not read: " + "; ".join(refused[:3]))
        for p, n in self.written[mark:]:
            if p != sub.file:
                with contextlib.suppress(OSError):
                    p.unlink()
                    self.unpacked -= n
        self.add(sub)
        return sub

    def collect(
        self, path: Path, shown: str, found: list, others: list, depth: int, zips: int, st: os.stat_result | None = None
    ) -> None:
        if st is None:
            try:
                st = os.lstat(path)
            except OSError as e:
                self.refuse(shown, reason(e))
                return
        mode = st.st_mode
        if stat.S_ISLNK(mode):
            self.ignore(shown, "a symbolic link")
        elif stat.S_ISDIR(mode):
            if depth > MAX_DEPTH:
                self.ignore(shown, f"more than {MAX_DEPTH} folders deep")
                return
            why = self.results(path)
            if why:
                self.ignore(shown, why)
                return
            for child, child_st in self.entries(path, shown) or []:
                if _junk(child.name, stat.S_ISDIR(child_st.st_mode)):
                    self.ignore(f"{shown}/{child.name}", "hidden or system file")
                else:
                    self.collect(child, f"{shown}/{child.name}", found, others, depth + 1, zips, child_st)
        elif not stat.S_ISREG(mode):
            others.append(path.name)
            self.refuse(shown, f"{_what(mode)}, not a regular file")
        elif path.suffix.lower() == ".zip":
            if zips >= MAX_ZIP_DEPTH:
                self.ignore(shown, "a zip inside a zip inside a zip")
                return
            inner = self.unzip(path, shown)
            if isinstance(inner, Path):
                self.collect(inner, shown, found, others, depth + 1, zips + 1)
        elif path.suffix in SUFFIXES:
            why = _too_large(path, st.st_size) or _probe(path)
            if why:
                self.refuse(shown, why)
            else:
                found.append((path, shown))
        else:
            others.append(path.name)
            self.ignore(shown, "not a .py or .ipynb file")

    def unzip(self, path: Path, shown: str, *, follow: bool = False) -> Path | str:
        """The zip's files, written under the scratch folder; or why it was not read (also
        listed as ignored, and in the submission's problem when nothing else is graded).

        A zip may unpack at most what is left of the run's ``MAX_UNPACKED`` and of its share: inside
        one submission, what is left of that submission's ``MAX_SHARE``; named on the command line,
        ``MAX_UNPACKED`` split evenly between the zips named there. A zip over it is refused whole."""
        self.zips += 1
        dest = self.unpack / f"zip{self.zips}"
        mark, spent = len(self.written), 0  # (spent: when the zip cannot be opened)
        left = MAX_UNPACKED - self.unpacked
        budget = left if self.share is None else min(self.share, left)
        over = (
            self.over
            if self.share is not None and self.share <= left
            else f"unpacks past what the run may unpack ({_size(MAX_UNPACKED)} in all)"
        )
        try:
            with os.fdopen(_open_regular(path, follow=follow), "rb") as raw, zipfile.ZipFile(raw) as zf:
                spent, why = self._unpack(zf, dest, shown, budget, over)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError) as e:
            why = f"not a readable zip ({type(e).__name__}: {str(e)[:120]})"
        except _Refused as e:
            why = reason(e)
        except OSError as e:
            why = f"not a readable zip ({e.strerror or e})"
        if why:
            for p, n in self.written[mark:]:
                with contextlib.suppress(OSError):
                    p.unlink()
                    self.unpacked -= n
            del self.written[mark:]
            self.refuse(shown, why)
            return why
        if self.share is not None:
            self.share -= spent
        return dest

    def _unpack(self, zf: zipfile.ZipFile, dest: Path, shown: str, budget: int, over: str) -> tuple[int, str]:
        """Write the zip's members that may be submissions under ``dest``: the bytes written, and
        why the whole zip is refused ("" when it is not)."""
        infos = zf.infolist()
        if len(infos) > MAX_ZIP_MEMBERS:
            return 0, f"a zip with more than {MAX_ZIP_MEMBERS} files"
        dest.mkdir(parents=True)
        spent = 0
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
            if info.flag_bits & 0x1:
                self.refuse(where, "encrypted (a password-protected zip)")
                continue
            limit = min(MAX_FILE, budget - spent)
            data = _read_member(zf, info, limit)
            if isinstance(data, str):
                self.refuse(where, data)
                continue
            if data is None:
                if limit < MAX_FILE:
                    return spent, over
                self.refuse(where, f"too large inside its zip (more than {_size(MAX_FILE)})")
                continue
            target = dest.joinpath(*(_short(p) for p in parts))
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            spent += len(data)
            self.unpacked += len(data)
            self.written.append((target, len(data)))
        return spent, ""


def _read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int) -> bytes | str | None:
    """The member's bytes; None past ``limit`` (declared sizes can lie); why when unreadable."""
    try:
        with zf.open(info) as f:
            data = f.read(limit + 1)
    except (RuntimeError, zipfile.BadZipFile, NotImplementedError, OSError, EOFError, zlib.error) as e:
        return f"corrupt or unreadable inside its zip ({type(e).__name__}: {str(e)[:120]})"
    return None if len(data) > limit else data


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
    entries = [e for e in folder.iterdir() if not _junk(e.name, e.is_dir())]
    return entries[0] if len(entries) == 1 and entries[0].is_dir() else folder


def _junk(name: str, folder: bool) -> bool:
    """Folders and files no student wrote: hidden folders, macOS's ``._*`` and ``.DS_Store``,
    caches. (A file whose name merely starts with a dot is still a submission.)"""
    return name in SKIPPED_DIRS or name == ".DS_Store" or name.startswith("._") or (name.startswith(".") and folder)


class _Refused(OSError):
    """A path that is not opened (its one argument says why): not a regular file, or too large."""


def _what(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device file"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def reason(e: OSError) -> str:
    """Why a path could not be read (``read_regular``, ``_open_regular``), in words."""
    return str(e.args[0]) if isinstance(e, _Refused) else f"cannot be read ({e.strerror or type(e).__name__})"


def _open_regular(path: Path, *, follow: bool = False) -> int:
    """A read-only descriptor of ``path`` when it is a regular file; ``_Refused`` (never opened)
    when it is a FIFO, a device, a socket or (unless ``follow``) a symbolic link; OSError when
    it cannot be read. Checked before opening (opening a device can act on it) and again on the
    descriptor, which never waits for a FIFO's writer (O_NONBLOCK) nor follows a link swapped in."""
    mode = (os.stat if follow else os.lstat)(path).st_mode
    if not stat.S_ISREG(mode):
        raise _Refused(f"{_what(mode)}, not a regular file")
    nofollow = 0 if follow else getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_NONBLOCK", 0) | nofollow)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _Refused(f"{_what(mode)}, not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(path: Path, limit: int = MAX_FILE, *, follow: bool = True) -> bytes:
    """The bytes of ``path`` when it is a regular file of at most ``limit`` bytes (else
    ``OSError``: see ``_open_regular``); ``reason`` says why in words."""
    with os.fdopen(_open_regular(Path(path), follow=follow), "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise _Refused(f"larger than {_size(limit)}")
    return data


def _probe(path: Path, *, follow: bool = False) -> str:
    """Why ``path`` cannot be read as a submission, or ""."""
    try:
        os.close(_open_regular(path, follow=follow))
    except OSError as e:
        return reason(e)
    return ""


def _too_large(path: Path, size: int) -> str:
    """Why a submission file of ``size`` bytes is too large to be one, or "": the grader would send
    its code to the sandbox in one message, and blame the student when that broke the protocol."""
    limit = MAX_FILE if path.suffix == ".ipynb" else MAX_CODE
    return f"larger than {_size(limit)}" if size > limit else ""


def _size(n: int) -> str:
    return f"{n / 1024**3:.3g} GiB" if n >= 1024**3 else f"{n / 1024**2:.3g} MiB" if n >= 1024**2 else f"{n} bytes"


def _resolved(path: Path) -> Path:
    try:
        return Path(path).resolve()
    except (OSError, RuntimeError):
        return Path(os.path.abspath(path))


def _is_results(folder: Path) -> bool:
    """Whether ``folder`` is what ``attnlab grade`` writes: ``grades.csv`` or ``found.csv`` beside
    ``submissions/``."""
    try:
        if not stat.S_ISDIR(os.lstat(folder / STORE).st_mode):
            return False
    except OSError:
        return False
    for name in ("grades.csv", "found.csv"):
        with contextlib.suppress(OSError):
            if stat.S_ISREG(os.lstat(folder / name).st_mode):
                return True
    return False


def _fingerprint(path: Path) -> str:
    """Equal for a file and an untouched copy of it: a notebook by its code cells only (running
    it changes outputs and counts), a .py by its text with any line endings."""
    try:
        data = read_regular(path)
    except OSError:
        return ""
    if path.suffix == ".ipynb":
        try:
            cells = json.loads(data)["cells"]
            data = json.dumps([_source(c) for c in cells if c.get("cell_type") == "code"]).encode()
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):  # (compared as bytes)
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
    return {_fingerprint(p) for p in Path(release).rglob("*") if p.suffix in SUFFIXES and p.is_file()} - {""}


def unreadable(path: Path, *, data: bytes | None = None) -> str | None:
    """Why the file cannot be graded as a submission (not text, not a notebook), or None; ``data``:
    its bytes, read already."""
    try:
        data = Path(path).read_bytes() if data is None else data
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
