"""What the student release must never give away: a graded function with its solution in it.

The release copies each definition cell of the solution with its solution regions cut out
(``solution.strip_solutions``) and each demo cell as it is. A graded name therefore reaches
students whole when the release binds it with a ``def`` that no region cut into (none was marked),
in a demo cell (shipped uncut), or other than with a ``def`` (an alias of a helper, a lambda).
Helpers that no test grades are given whole on purpose (``default_permutations``): they are not
checked here.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

import nbformat

from ..paths import CourseError
from . import solution

# IPython's line magics and shell escapes: not Python, and never a definition
_MAGIC = re.compile(r"^\s*[%!]")


class SolutionShipped(CourseError):
    """The release would hand students the solution of a graded function: nothing is written."""


def given_away(sol: nbformat.NotebookNode, *, graded: set[str]) -> list[str]:
    """Each graded name the release made from ``sol`` would ship whole, with how, in solution order."""
    found: list[str] = []
    for cell in sol.cells:
        if cell.cell_type != "code":
            continue
        demo = solution.is_demo(cell)
        shipped = _parse(cell.source if demo else solution.strip_solutions(cell.source))
        if shipped is None:
            continue  # a demo cell that is not Python (a cell magic): it defines nothing
        whole = {ast.dump(n) for n in _bindings(_parse(solution.unmark(cell.source)) or shipped)}
        for node in _bindings(shipped):
            name = _name(node)
            if name not in graded:
                continue
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found.append(f"`{name}` is bound other than by a def holding a solution region")
            elif demo:
                found.append(f"`{name}` is defined in a demo cell, which ships as it is")
            elif ast.dump(node) in whole:
                found.append(f"`{name}` has no solution region")
    return found


def refusal(problems: list[str], *, solution_file: str) -> str:
    """One line per graded name given away, and how to mark its solution."""
    head = f"{solution_file} would give students the solution of a graded function, so nothing was written:"
    how = (
        "Put each graded function's body between a `# BEGIN SOLUTION` and an `# END SOLUTION` line "
        "inside its def, in a cell that is not a demo (students get `raise NotImplementedError` there)."
    )
    return "\n".join([head, *(f"  - {p}" for p in problems), how])


def _parse(code: str) -> ast.Module | None:
    masked = "\n".join("pass" if _MAGIC.match(line) else line for line in code.splitlines())
    try:
        return ast.parse(masked)
    except SyntaxError:
        return None


def _bindings(tree: ast.Module) -> Iterator[ast.AST]:
    """The statements (or names) that bind a name at the module's top level, wherever they sit in
    its ``if``, ``try``, ``with`` or loop blocks; the bodies of functions and classes bind their own."""
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop(0)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield from node.names
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            yield node
            continue
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue  # their names are their own
        todo[:0] = list(ast.iter_child_nodes(node))


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.alias):
        return (node.asname or node.name).split(".")[0]
    if isinstance(node, ast.Name):
        return node.id
    assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    return node.name
