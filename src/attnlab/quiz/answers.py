"""Read a quiz submission's answer variables without executing anything.

Quiz answers are text, so a submission (``.ipynb`` or ``.py``) is read, never run: each code cell
is parsed with :mod:`ast` and the top-level assignments ``<variable> = "<text>"`` are taken, the
last one winning, as running the notebook top to bottom would. An assignment of anything but a
plain string literal (an f-string, a call, a name, ``+``) records that the variable holds no
readable answer. Cells that do not parse are skipped with a note. The notebook is read with
:mod:`json` (nbformat 4's layout) so that the copy shipped in the autograder needs only the stdlib.
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from ..userfiles import NotAFile, read_bytes

MAX_BYTES = 20_000_000  # a quiz notebook is a few kB; anything near this is not one
MAX_CELL_CHARS = 100_000  # a cell beyond this is read line by line (answers are one line each)
MAX_LINE_CHARS = 20_000  # twice the longest answer the checker reads
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\s*(?::[^=]*)?=[^=]")
_MAGIC = re.compile(r"^\s*[%!]")
MAX_MAGICS = 50  # magic lines blanked per cell before it counts as not Python


class UnreadableFile(ValueError):
    """The submission file itself cannot be read (not its answers: those get notes)."""


@dataclass(frozen=True)
class Answer:
    """What a variable holds: ``text`` when its last assignment is a string literal, else ``problem``."""

    text: str | None
    problem: str = ""


@dataclass
class Answers:
    variables: dict[str, Answer] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # about the file (cells skipped), never about answers


def read(path: Path) -> Answers:
    """The string answers assigned at top level in ``path`` (``.ipynb`` or ``.py``)."""
    path = Path(path)
    try:
        text = read_bytes(path, limit=MAX_BYTES).decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        raise UnreadableFile(f"{path.name} is not UTF-8 text") from None
    except NotAFile as err:
        raise UnreadableFile(str(err).replace(str(path), path.name, 1)) from None
    if path.suffix == ".ipynb":
        return from_cells(notebook_cells(text, name=path.name))
    if path.suffix == ".py":
        return from_cells([(path.name, text)])  # one cell, as otter runs a .py file
    raise UnreadableFile(f"{path.name} is not a notebook (.ipynb) or a Python file (.py)")


def notebook_cells(text: str, *, name: str = "the notebook") -> list[tuple[str, str]]:
    """(label, source) of each code cell of an nbformat-4 notebook, minus cells otter ignores."""
    try:
        nb = json.loads(text)
    except ValueError:
        raise UnreadableFile(f"{name} is not a valid notebook (it is not JSON)") from None
    except RecursionError:
        raise UnreadableFile(f"{name} is not a valid notebook (its JSON is nested too deep)") from None
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list):
        raise UnreadableFile(f"{name} is not a valid notebook (it has no list of cells)")
    found = []
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code" or _ignored(cell):
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(s, str) for s in source):
            source = "".join(source)
        if isinstance(source, str):
            found.append((f"cell {number}", source))
    return found


def _ignored(cell: dict) -> bool:
    """A cell tagged for otter to skip (``otter_ignore``), as otter's runner skips it."""
    metadata = cell.get("metadata")
    if not isinstance(metadata, dict):
        return False
    tags = metadata.get("tags")
    otter = metadata.get("otter")
    return (isinstance(tags, list) and "otter_ignore" in tags) or (
        isinstance(otter, dict) and otter.get("ignore") is True
    )


def from_cells(cells: list[tuple[str, str]]) -> Answers:
    """The answers assigned in these (label, source) cells, in order."""
    answers = Answers()
    for label, source in cells:
        if len(source) > MAX_CELL_CHARS:
            answers.notes.append(f"{label} is over {MAX_CELL_CHARS:,} characters: only its one-line answers were read.")
            trees = [_parse(line) for line in _answer_lines(source)]
        else:
            trees = [_parse(source)]
            if trees[0] is None:
                answers.notes.append(f"{label} is not valid Python and was skipped: any answer in it was not read.")
        for tree in trees:
            for node in tree.body if tree else ():
                for name, answer in _assigned(node):
                    answers.variables[name] = answer
    return answers


def _answer_lines(source: str):
    """The lines of a very long cell that could be an answer, ``name = ...`` at the margin and no
    longer than an answer may be, one at a time: the parser's memory grows with what it is given,
    a few hundred bytes per character, so a long cell is never handed to it whole."""
    start = 0
    while start < len(source):
        end = source.find("\n", start)
        end = len(source) if end < 0 else end
        if end - start <= MAX_LINE_CHARS and _ASSIGNMENT.match(source, start, end):
            yield source[start:end]
        start = end + 1


def _parse(source: str) -> ast.Module | None:
    """The cell's syntax tree; an IPython magic line (``%...``, ``!...``) the parser trips on is
    blanked and the cell parsed again, so a ``%`` line inside a string stays as it is."""
    lines = source.split("\n")
    for _ in range(MAX_MAGICS + 1):
        try:
            with warnings.catch_warnings():  # e.g. invalid escapes in a student's string
                warnings.simplefilter("ignore")
                return ast.parse("\n".join(lines))
        except SyntaxError as err:
            where = (err.lineno or 0) - 1
            if not (0 <= where < len(lines) and _MAGIC.match(lines[where])):
                return None
            lines[where] = ""
        except (ValueError, RecursionError, MemoryError):  # null bytes, nesting too deep
            return None
    return None


def _assigned(node: ast.stmt) -> list[tuple[str, Answer]]:
    """(variable, answer) for each name a top-level statement assigns."""
    if isinstance(node, ast.Assign):
        pairs = []
        for target in node.targets:
            pairs += _unpack(target, node.value)
        return pairs
    if isinstance(node, ast.AnnAssign) and node.value is not None:
        return _unpack(node.target, node.value)
    if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        return [
            (
                node.target.id,
                Answer(
                    None,
                    f"{node.target.id} is changed with an operator such as "
                    f"+=; assign the whole answer as one text in quotes.",
                ),
            )
        ]
    return []


def _unpack(target: ast.expr, value: ast.expr) -> list[tuple[str, Answer]]:
    if isinstance(target, ast.Name):
        return [(target.id, _literal(target.id, value))]
    if isinstance(target, (ast.Tuple, ast.List)):
        names = [t.id for t in target.elts if isinstance(t, ast.Name)]
        if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) == len(names):
            return [pair for t, v in zip(target.elts, value.elts) for pair in _unpack(t, v)]
        return [
            (name, Answer(None, f'{name} is assigned by unpacking; write {name} = "..." on its own line.'))
            for name in names
        ]
    return []


def _literal(name: str, value: ast.expr) -> Answer:
    """A string literal's text (implicit concatenation and parentheses included), or why not."""
    if isinstance(value, ast.Constant) and type(value.value) is str:
        return Answer(value.value)
    if isinstance(value, ast.JoinedStr):
        kind = "it is an f-string"
    elif isinstance(value, ast.Constant):
        kind = "it is not text"
    else:
        kind = "it is computed by code, which is not run"
    return Answer(
        None,
        f"{name} is not a plain string answer ({kind}): write the answer itself as "
        f'text in quotes, e.g. {name} = "...".',
    )
