"""Load the hand-written question bank (``quiz/*.yaml``) into items and check it is well formed."""

from __future__ import annotations

import keyword
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

TYPES = ("symbolic", "matrix", "numeric", "choice", "proof", "chain", "order", "free")
REQUIRED_IDS = ("pe-dim0", "pe-dim1", "wavelength", "shift-block", "proof-q", "proof-kt",
                "proof-a", "proof-z", "score-12")
AUTO_GRADED = tuple(t for t in TYPES if t != "free")
SIMPLEST_TYPES = ("symbolic", "matrix", "proof")
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
    key: Any = None  # answer text (symbolic, matrix, proof), number (numeric), labels (choice, order)
    symbols: dict[str, str] = field(default_factory=dict)  # name -> domain
    tolerance: float = 0.0
    variant: dict[str, Any] = field(default_factory=dict)  # numeric items recomputed per student
    options: dict[str, str] = field(default_factory=dict)  # choice options / order steps, by label
    option_feedback: dict[str, str] = field(default_factory=dict)
    feedback: tuple[Feedback, ...] = ()
    not_in_answer: dict[str, str] = field(default_factory=dict)  # proof: function -> why not
    start: str = ""  # chain: the given first expression
    rubric: tuple[str, ...] = ()
    explanation: str = ""  # shown once the item is answered right (or for free response)
    simplest: str = ""  # the prompt asks for the simplest form of this quantity (e.g. Z')
    practice: bool = False  # the key ships to students (self-check); otherwise only the autograder has it
    withheld: bool = False  # a student copy of a graded item: no key here, the instructor grades it

    @property
    def variable(self) -> str:
        """The name of the quiz notebook's answer variable: the id with ``-`` as ``_``."""
        return self.id.replace("-", "_")

    @property
    def multiple(self) -> bool:
        """A choice item with several right options (select all that apply)."""
        return self.type == "choice" and isinstance(self.key, list)


class BankError(ValueError):
    """The bank itself is malformed (an instructor's mistake, not a student's)."""


def default_folder() -> Path:
    """The bank shipped next to this package (inside the autograder), else the kit's ``quiz/``."""
    if SHIPPED_BANK.is_dir():
        return SHIPPED_BANK
    from ..paths import quiz_dir  # only inside attnlab; the shipped copy never gets here

    return quiz_dir()


def load(folder: Path | None = None) -> dict[str, Item]:
    """Every item of every ``*.yaml`` file in ``folder`` (default: :func:`default_folder`), by id, in file order."""
    folder = Path(folder) if folder is not None else default_folder()
    items: dict[str, Item] = {}
    for path in sorted(folder.glob("*.yaml")):
        entries = yaml.safe_load(path.read_text(encoding="utf-8")) or []
        if not isinstance(entries, list):
            raise BankError(f"{path.name}: the file must be a list of items")
        for entry in entries:
            item = _item(entry, path)
            if item.id in items:
                raise BankError(f"{path.name}: duplicate id {item.id!r}")
            items[item.id] = item
    return items


def _item(entry: dict[str, Any], path: Path) -> Item:
    where = f"{path.name}: item {entry.get('id', '?')!r}"
    for required in ("id", "type", "prompt", "points"):
        if required not in entry:
            raise BankError(f"{where} lacks '{required}'")
    if entry["type"] not in TYPES:
        raise BankError(f"{where}: type must be one of {', '.join(TYPES)}")
    variable = str(entry["id"]).replace("-", "_")
    if not variable.isidentifier() or keyword.iskeyword(variable):
        raise BankError(f"{where}: an id is letters, digits, '-' and '_' (it names a notebook variable)")
    if entry["type"] in AUTO_GRADED and "key" not in entry and not entry.get("withheld"):
        raise BankError(f"{where} lacks 'key'")
    options = entry.get("options", {}) or entry.get("steps", {})
    known = set(Item.__dataclass_fields__) | {"steps"}
    unknown = set(entry) - known
    if unknown:
        raise BankError(f"{where}: unknown fields {sorted(unknown)}")
    simplest = entry.get("simplest") or ""
    if simplest and entry["type"] not in SIMPLEST_TYPES:
        raise BankError(f"{where}: 'simplest' applies to {', '.join(SIMPLEST_TYPES)} items")
    if simplest is True:
        simplest = "the expected answer"
    return Item(
        id=str(entry["id"]),
        type=entry["type"],
        title=entry.get("title", entry["id"]),
        prompt=entry["prompt"].strip(),
        points=float(entry["points"]),
        source=path,
        key=entry.get("key"),
        symbols=dict(entry.get("symbols", {})),
        tolerance=float(entry.get("tolerance", 0.0)),
        variant=dict(entry.get("variant", {})),
        options={str(k): str(v).strip() for k, v in options.items()},
        option_feedback={str(k): str(v).strip() for k, v in entry.get("option_feedback", {}).items()},
        feedback=tuple(Feedback(str(f["answer"]), f["says"].strip()) for f in entry.get("feedback", [])),
        not_in_answer=dict(entry.get("not_in_answer", {})),
        start=str(entry.get("start", "")),
        rubric=tuple(entry.get("rubric", [])),
        explanation=str(entry.get("explanation", "")).strip(),
        simplest=str(simplest),
        practice=bool(entry.get("practice", False)),
        withheld=bool(entry.get("withheld", False)),
    )


class _BlockDumper(yaml.SafeDumper):
    """Writes multi-line text as ``|`` blocks, as the hand-written bank does."""


_BlockDumper.add_representer(str, lambda dumper, text: dumper.represent_scalar(
    "tag:yaml.org,2002:str", text, style="|" if "\n" in text else None))

# What a graded item's student copy leaves out: the key and whatever gives it away
WITHHELD_FIELDS = ("key", "explanation", "feedback", "option_feedback", "not_in_answer", "rubric")


def student_copy(*, bank_dir: Path, out_dir: Path) -> list[Path]:
    """Write a student-safe copy of the bank in ``bank_dir`` to ``out_dir``: practice items whole,
    graded items (every item without ``practice: true``) without their key. Comments are dropped too
    (a bank's comments may work an answer out)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for path in sorted(Path(bank_dir).glob("*.yaml")):
        entries = yaml.safe_load(path.read_text(encoding="utf-8")) or []
        safe = [entry if entry.get("practice") else
                {**{k: v for k, v in entry.items() if k not in WITHHELD_FIELDS}, "withheld": True}
                for entry in entries]
        target = out_dir / path.name
        target.write_text(f"# Student copy of quiz/{path.name} made by `attnlab build`: graded items carry no "
                          "key. Edit the course's bank and rebuild.\n"
                          + yaml.dump(safe, Dumper=_BlockDumper, sort_keys=False, allow_unicode=True), encoding="utf-8")
        written.append(target)
    return written
