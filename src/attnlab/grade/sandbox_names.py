"""Which requests each side of the channel answers, read from the code (for the protocol check)."""

from __future__ import annotations

import ast
from typing import cast
from pathlib import Path

HERE = Path(__file__).parent


def runtime_requests() -> set[str]:
    """The ``do_<kind>`` handlers of the sandbox's Runtime."""
    tree = ast.parse((HERE / "sandbox.py").read_text())
    runtime = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Runtime")
    return {f.name[3:] for f in runtime.body if isinstance(f, ast.FunctionDef) and f.name.startswith("do_")}


def trusted_requests() -> set[str]:
    """The kinds the trusted Sandbox._serve compares against."""
    tree = ast.parse((HERE / "session.py").read_text())
    serve = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "_serve")
    return {
        cast(str, c.comparators[0].value)
        for c in ast.walk(serve)
        if isinstance(c, ast.Compare)
        and isinstance(c.left, ast.Name)
        and c.left.id == "kind"
        and isinstance(c.comparators[0], ast.Constant)
    }
