"""Which graded function calls which, from the reference solution, and the grading order it gives.

The graph is read from the solution's syntax (a function's body naming another top-level function),
so a new assignment gets it without writing it down. ``attnlab grade`` reads it from the course's
solution; ``attnlab build`` writes it into the autograder zip (``FILE``), which ships no solution.
With it, the runner grades callees first and grades a function whose callee failed its own cases
with the reference callee (the test file's ``reference``) lent in its place (``runner``).
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterable
from pathlib import Path

FILE = "calls.json"  # beside the tests folder in the autograder zip


def graph(source: str) -> dict[str, list[str]]:
    """For each function the solution defines at top level, the other top-level functions its body
    names (in name order). Helpers that are not graded stay in: a graded function may call another
    through one."""
    tree = ast.parse(source)
    functions = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    out: dict[str, list[str]] = {}
    for name, node in functions.items():
        named = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        out[name] = sorted((named & functions.keys()) - {name})
    return out


def order(names: Iterable[str], calls: dict[str, list[str]]) -> list[str]:
    """``names`` with every one that another calls (directly or further down) before it, otherwise
    in name order; a cycle, which a solution should not have, is broken where it is met. Walked with
    a list, not recursion: a graph may come from a submission, as deep as it likes."""
    wanted = set(names)
    done: list[str] = []
    seen: set[str] = set()
    for start in sorted(wanted):
        if start in seen:
            continue
        seen.add(start)
        # each entry: a function and the callees of it still to visit
        stack = [(start, iter(calls.get(start, [])))]
        while stack:
            name, callees = stack[-1]
            callee = next((c for c in callees if c not in seen), None)
            if callee is not None:
                seen.add(callee)
                stack.append((callee, iter(calls.get(callee, []))))
                continue
            stack.pop()
            if name in wanted:
                done.append(name)
    return done


def reach(name: str, calls: dict[str, list[str]]) -> set[str]:
    """Every function that ``name`` calls, directly or through others."""
    found: set[str] = set()
    todo = list(calls.get(name, []))
    while todo:
        callee = todo.pop()
        if callee not in found and callee != name:
            found.add(callee)
            todo += calls.get(callee, [])
    return found


def lendable(calls: dict[str, list[str]]) -> dict[str, set[str]]:
    """For each function, the functions whose references may stand in for the student's while it
    is graded: those it calls (directly or further down) that do not call it back. A reference that
    calls the function it is lent to, or itself, could compute that function: lent along a cycle
    (a ``sinusoidal_pe`` written through ``add_positional_encoding``, which calls it), each would be
    graded with the other's reference and neither formula written. ``calls`` is the solution's
    graph, perhaps with the submission's own calls added: those can add cycles, which lend less,
    but never an edge that the solution's graph runs the other way."""
    reach_of = {name: reach(name, calls) for name in calls}
    return {
        name: {c for c in reached if name not in reach_of.get(c, set()) and c != name}
        for name, reached in reach_of.items()
    }


def among(names: Iterable[str], calls: dict[str, list[str]]) -> dict[str, list[str]]:
    """For each of ``names``, the others of ``names`` that it reaches in ``calls`` (directly or
    through functions not in ``names``), in name order: ``calls`` reduced to what grading ``names``
    asks of it. A walk per name, so the work is ``len(names)`` times the size of ``calls``."""
    wanted = set(names)
    return {name: sorted(reach(name, calls) & wanted) for name in sorted(wanted)}


def for_course(assignment: str) -> dict:
    """What ``write`` stores, for an assignment of the active course: the graph of its solution and
    the course's setting (``[grading] isolate_dependencies``, default true)."""
    from .. import paths

    solution = paths.course_root() / "solutions" / assignment / f"{assignment}.py"
    calls = graph(solution.read_text(encoding="utf-8")) if solution.is_file() else {}
    return {"calls": calls, "isolate": bool(paths.setting("grading", "isolate_dependencies", True))}


def for_tests(tests_dir: Path) -> dict:
    """What grading with ``tests_dir`` uses: the ``FILE`` beside it (in an autograder zip), else the
    active course's solution for the assignment whose tests these are; without either, no graph
    (name order, nothing lent)."""
    shipped = tests_dir.parent / FILE
    if shipped.is_file():
        data = json.loads(shipped.read_text(encoding="utf-8"))
        calls = {str(k): [str(c) for c in v] for k, v in dict(data.get("calls") or {}).items()}
        return {"calls": calls, "isolate": bool(data.get("isolate", True))}
    from .. import paths

    try:
        return for_course(tests_dir.parent.name)
    except paths.MarkerError:
        raise  # a course whose settings cannot be read: grading without them would change grades
    except paths.CourseError:
        return {"calls": {}, "isolate": False}


def text(dependencies: dict, *, generated: str = "") -> str:
    """``dependencies`` (from ``for_course``) as the text of a ``FILE``; ``generated`` says by what
    (JSON has no comments: it is a key of its own)."""
    data = {**dependencies, **({"generated": generated} if generated else {})}
    return json.dumps(data, indent=1, sort_keys=True) + "\n"


def write(path: Path, dependencies: dict) -> None:
    """``dependencies`` as the autograder zip's ``FILE``."""
    path.write_text(text(dependencies), encoding="utf-8")
