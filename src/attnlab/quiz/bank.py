"""Load the hand-written question bank (``quiz/*.yaml``) into items and check it is well formed.

Every field is checked against its item type (each type's module in ``kinds`` lists its fields): an
unknown field, or one that the type does not use (a ``decimals`` on a choice item), is an error that
names the file and the line.
``definitions.yaml`` is not a list of items: it holds what ``verify`` derives the keys from, and
``settings.yaml`` (optional) the bank's settings (``SETTINGS``).

A practice item's key ships to students, so by default it scores nothing: it loads with 0 points,
whatever its ``points`` says, and every total, export and autograder follows. The bank setting
``practice_scores: true`` gives practice items their points.
"""

from __future__ import annotations

import dataclasses
import keyword
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import yaml

COMMON = ("id", "type", "title", "points", "prompt", "practice", "explanation")
DEFINITIONS_FILE = "definitions.yaml"
SETTINGS_FILE = "settings.yaml"
SETTINGS = {"practice_scores": False}  # each setting of the bank and its default
# The copy of the bank that travels with the checker inside the quiz autograder zip
SHIPPED_BANK = Path(__file__).resolve().parent / "quiz"


@dataclass(frozen=True)
class Feedback:
    """A known wrong answer and what to tell the student who gives it."""

    answer: str
    says: str


@dataclass(frozen=True, eq=False)  # identity equality: items are cached by identity
class Item:
    id: str
    type: str
    title: str
    prompt: str
    points: float
    source: Path
    line: int = 0  # where the item starts in its file (1-based)
    practice: bool = False  # practice: the key ships to students; graded: only the quiz autograder has it
    key: Any = None  # answer text (symbolic, matrix, proof, chain end), quantity (numeric), labels
    symbols: dict[str, str] = field(default_factory=dict)  # name -> domain
    decimals: int = 0  # numeric: the precision the prompt asks for
    rounded: dict[str, int] = field(default_factory=dict)  # numeric: steps the prompt rounds, to decimals
    notes: float | None = None  # numeric: the value the notes print for their own numbers
    options: dict[str, str] = field(default_factory=dict)  # choice options / order steps, by label
    option_feedback: dict[str, str] = field(default_factory=dict)
    feedback: tuple[Feedback, ...] = ()
    not_in_answer: dict[str, str] = field(default_factory=dict)  # proof: function -> why not
    start: str = ""  # chain: what the first step is checked against (instructor-only: it may be A'V')
    solution: str = ""  # chain: a worked chain from the start to the key
    needs: dict[str, tuple[str, ...]] = field(default_factory=dict)  # order: step -> steps it uses
    rubric: tuple[str, ...] = ()
    explanation: str = ""  # shown once the item is answered right (or for free response)
    simplest: str = ""  # the prompt asks for the simplest form of this quantity (e.g. Z')
    holds: tuple[str, ...] = ()  # equations over ANSWER and the definitions that the key satisfies
    where: dict[str, str] = field(default_factory=dict)  # answer symbols in terms of the definitions
    # symbols that are not independent (s and c, the sine and cosine of one angle): what each stands
    # for, in terms of other symbols (any name not among ``symbols`` is a real number the answer cannot
    # name); answer and key are compared with these put in
    stands_for: dict[str, str] = field(default_factory=dict)

    @property
    def variable(self) -> str:
        """The name of the quiz notebook's answer variable: the id with ``-`` as ``_``."""
        return self.id.replace("-", "_")

    @property
    def multiple(self) -> bool:
        """A choice item with several right options (select all that apply)."""
        return self.type == "choice" and isinstance(self.key, list)

    @property
    def tolerance(self) -> float:
        """Half a unit of the last decimal the prompt asks for: an answer that rounds to the key."""
        return 0.5 * 10.0**-self.decimals

    @property
    def where_defined(self) -> str:
        return f"{self.source.name}, line {self.line}"


class BankError(ValueError):
    """The bank itself is malformed (an instructor's mistake, not a student's)."""


_chosen: list[Path] = []  # the folder `using` chose, innermost last


@contextmanager
def using(folder: Path) -> Iterator[None]:
    """Inside the block, :func:`default_folder` is ``folder``: every part of the quiz that reads the
    bank or its definitions (numbers, proof symbols, keys) reads that one folder's."""
    _chosen.append(Path(folder))
    try:
        yield
    finally:
        _chosen.pop()


def default_folder() -> Path:
    """The folder `using` chose, else the bank shipped next to this package (inside the
    autograder), else the active course's ``quiz/``."""
    if _chosen:
        return _chosen[-1]
    if SHIPPED_BANK.is_dir():
        return SHIPPED_BANK
    from ..paths import quiz_dir  # only inside attnlab; the shipped copy never gets here

    return quiz_dir()


def load(folder: Path | None = None) -> dict[str, Item]:
    """Every item of every ``*.yaml`` file in ``folder`` (default: :func:`default_folder`), by id, in file order."""
    folder = Path(folder) if folder is not None else default_folder()
    practice_scores = settings(folder)["practice_scores"]
    items: dict[str, Item] = {}
    for path in sorted(folder.glob("*.yaml")):
        if path.name in (DEFINITIONS_FILE, SETTINGS_FILE):
            continue
        for entry, lines in _entries(path):
            item = _item(entry, lines, path)
            if item.id in items:
                raise BankError(
                    f"{path.name}, line {item.line}: duplicate id {item.id!r} (first at {items[item.id].where_defined})"
                )
            items[item.id] = item if practice_scores or not item.practice else dataclasses.replace(item, points=0.0)
    return items


def settings(folder: Path) -> dict[str, Any]:
    """The bank's settings from ``folder/settings.yaml``, each missing one at its default."""
    path = Path(folder) / SETTINGS_FILE
    if not path.is_file():
        return dict(SETTINGS)
    try:
        given = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as err:
        raise BankError(f"{path.name}: not valid YAML ({err})") from None
    if not isinstance(given, dict):
        raise BankError(f"{path.name}: the settings are a mapping, e.g. 'practice_scores: false'")
    for name, value in given.items():
        if name not in SETTINGS:
            raise BankError(f"{path.name}: unknown setting {name!r} (known: {', '.join(SETTINGS)})")
        if not isinstance(value, type(SETTINGS[name])):
            raise BankError(f"{path.name}: {name} is {type(SETTINGS[name]).__name__}, not {value!r}")
    return {**SETTINGS, **given}


def _entries(path: Path) -> list[tuple[dict[str, Any], dict[str, int]]]:
    """Each item of the file with the line of each of its fields (``""``: the item's own line)."""
    text = path.read_text(encoding="utf-8")
    try:
        entries = yaml.safe_load(text) or []
        root = yaml.compose(text)
    except yaml.YAMLError as err:
        raise BankError(f"{path.name}: not valid YAML ({err})") from None
    if not isinstance(entries, list):
        raise BankError(f"{path.name}: the file must be a list of items")
    out = []
    for entry, node in zip(entries, root.value if root is not None else []):
        line = node.start_mark.line + 1
        if not isinstance(entry, dict):
            raise BankError(f"{path.name}, line {line}: an item is a mapping of fields")
        lines = {"": line}
        for key_node, _ in node.value:
            lines[str(key_node.value)] = key_node.start_mark.line + 1
        out.append((entry, lines))
    return out


def _item(entry: dict[str, Any], lines: dict[str, int], path: Path) -> Item:
    def where(name: str = "") -> str:
        return f"{path.name}, line {lines.get(name, lines[''])}: item {entry.get('id', '?')!r}"

    from .kinds import KINDS  # the types' own modules read answers with sympy: load them when needed

    fields = {name: k.fields for name, k in KINDS.items()}
    for required in ("id", "type", "prompt", "points"):
        if required not in entry:
            raise BankError(f"{where()} lacks '{required}'")
    kind = entry["type"]
    if kind not in KINDS:
        raise BankError(f"{where('type')}: type must be one of {', '.join(KINDS)}")
    allowed = set(COMMON) | set(fields[kind])
    for name in entry:
        if name not in allowed:
            users = [t for t, names in fields.items() if name in names]
            why = f"'{name}' belongs to {', '.join(users)} items" if users else f"unknown field '{name}'"
            raise BankError(f"{where(name)}: {why}, not to a {kind} item")
    variable = str(entry["id"]).replace("-", "_")
    if not variable.isidentifier() or keyword.iskeyword(variable):
        raise BankError(f"{where('id')}: an id is letters, digits, '-' and '_' (it names a notebook variable)")
    practice = entry.get("practice", False)
    if not isinstance(practice, bool):
        raise BankError(f"{where('practice')}: practice is true or false")
    if KINDS[kind].has_key and "key" not in entry and practice:
        raise BankError(f"{where()}: a practice item needs its 'key'")
    decimals = entry.get("decimals", 0)
    if kind == "numeric" and (not isinstance(decimals, int) or isinstance(decimals, bool) or decimals < 0):
        raise BankError(f"{where('decimals')}: decimals is a whole number >= 0")
    simplest = entry.get("simplest") or ""
    if simplest is True:
        simplest = "the expected answer"
    holds = entry.get("holds", ())
    holds = (holds,) if isinstance(holds, str) else tuple(str(h) for h in holds)
    return Item(
        id=str(entry["id"]),
        type=kind,
        title=entry.get("title", entry["id"]),
        prompt=entry["prompt"].strip(),
        points=float(entry["points"]),
        source=path,
        line=lines[""],
        practice=practice,
        key=entry.get("key"),
        symbols=dict(entry.get("symbols", {})),
        decimals=int(decimals),
        rounded={str(k): int(v) for k, v in (entry.get("rounded") or {}).items()},
        notes=float(entry["notes"]) if "notes" in entry else None,
        options={str(k): str(v).strip() for k, v in (entry.get("options") or entry.get("steps") or {}).items()},
        option_feedback={str(k): str(v).strip() for k, v in entry.get("option_feedback", {}).items()},
        feedback=tuple(Feedback(str(f["answer"]), f["says"].strip()) for f in entry.get("feedback", [])),
        not_in_answer=dict(entry.get("not_in_answer", {})),
        start=str(entry.get("start", "")),
        solution=str(entry.get("solution", "")),
        needs={str(k): tuple(str(x) for x in v) for k, v in (entry.get("needs") or {}).items()},
        rubric=tuple(entry.get("rubric", [])),
        explanation=str(entry.get("explanation", "")).strip(),
        simplest=str(simplest),
        holds=holds,
        where={str(k): str(v) for k, v in entry.get("where", {}).items()},
        stands_for={str(k): str(v) for k, v in entry.get("stands_for", {}).items()},
    )


# ---- the student's copy ----------------------------------------------------------------------

# What a graded item keeps in a student's copy: enough to show and read an answer, nothing that
# gives the answer away (no key, known wrong answers, per-option reasons, explanation, derivation,
# a chain's start or worked solution, step dependencies, rubric or the notes' value).
STUDENT_FIELDS = (
    "id",
    "type",
    "title",
    "points",
    "prompt",
    "practice",
    "symbols",
    "decimals",
    "options",
    "steps",
    "simplest",
)
STUDENT_BANNER = (
    "# Student copy of {name}, written by attnlab.quiz.bank.student_copy from the instructor's bank;\n"
    "# graded items carry no key. Rebuild it from the bank, do not edit it.\n"
)


def student_copy(*, bank_dir: Path, out_dir: Path) -> list[Path]:
    """Write a copy of the bank that is safe to give students: practice items whole, graded items
    without their key or anything that reveals it. Returns the files written (``definitions.yaml``
    and ``settings.yaml``, which hold no key, are copied as they are)."""
    bank_dir, out_dir = Path(bank_dir), Path(out_dir)
    load(bank_dir)  # refuse to copy a malformed bank
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for path in sorted(bank_dir.glob("*.yaml")):
        target = out_dir / path.name
        if path.name in (DEFINITIONS_FILE, SETTINGS_FILE):
            target.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
        else:
            entries = [
                entry if entry.get("practice") is True else {k: v for k, v in entry.items() if k in STUDENT_FIELDS}
                for entry, _ in _entries(path)
            ]
            text = yaml.safe_dump(entries, sort_keys=False, allow_unicode=True, width=100)
            target.write_text(STUDENT_BANNER.format(name=path.name) + text, encoding="utf-8")
        written.append(target)
    return written
