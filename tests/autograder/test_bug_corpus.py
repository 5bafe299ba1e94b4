"""Known one-bug submissions, graded in-process.

A bug fixture (tests/fixtures/bugs/<bug>_loses_<function>.py) holds only what the bug changes: the
function it breaks, and ``NAMED``, the variant its feedback must name (``looks like <NAMED>:``), or
None when no single known variant fits and the feedback must instead say how the result is wrong;
optionally ``SAYS``, text one of its messages must contain, and ``COMMON = True`` for a mistake common
enough that the public tests (what students run themselves) must catch it. It may cost points on the
function it is named after and on the base's functions that call it, nowhere else.
The test composes it with a correct base (tests/fixtures/alternatives/vectorised.py).
"""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import pytest

from in_process import grade_env

# how numpy prints an array (floats separated by spaces): no message may dump one
NUMPY_PRINT = re.compile(r"\[\[?\s*-?\d+\.\d*(e-?\d+)?\s+-?\d")

FIXTURES = Path(__file__).parent.parent / "fixtures"
BASE = FIXTURES / "alternatives" / "vectorised.py"
BUGS = sorted((FIXTURES / "bugs").glob("*_loses_*.py"))
# The base with its own functions calling others where the reference solution's do not, and the
# bugs in those others (of the corpus, and of own_calls/), for grade/test_dependencies: graded in
# isolation, each costs points in its own function alone.
OWN_BASE = FIXTURES / "own_calls" / "calls_its_own.py"
OWN_CALLED = ("self_attention", "pe_shift_matrix")
OWN_CALLS = [p for p in BUGS if p.stem.split("_loses_")[1] in OWN_CALLED]
OWN_CALLS += sorted((FIXTURES / "own_calls").glob("*_loses_*.py"))


def compose_own(overlay: Path | None = None) -> str:
    """The correct base with ``OWN_BASE`` over it, and ``overlay`` over both."""
    text = compose(OWN_BASE)
    return (
        text if overlay is None else f"{text}\n\n# ---- overlay: {overlay.name}\n{overlay.read_text(encoding='utf-8')}"
    )


def compose(overlay: Path, base: Path = BASE) -> str:
    """The base submission with the overlay's definitions after it (the later definition wins)."""
    base_text, overlay_text = base.read_text(encoding="utf-8"), overlay.read_text(encoding="utf-8")
    return f"{base_text}\n\n# ---- overlay: {overlay.name}\n{overlay_text}"


def _constant(overlay: Path, name: str, default=LookupError):
    for node in ast.parse(overlay.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == [name]:
            return ast.literal_eval(node.value)
    if default is LookupError:
        raise AssertionError(f"{overlay.name} does not set {name}")
    return default


def expected_label(overlay: Path) -> str | None:
    """The overlay's ``NAMED``: the variant its feedback must name, or None."""
    return _constant(overlay, "NAMED")


def callers(name: str, base: Path = BASE) -> set[str]:
    """The base's functions that call ``name``: a bug may cost them points too."""
    tree = ast.parse(base.read_text(encoding="utf-8"))
    return {
        f.name
        for f in tree.body
        if isinstance(f, ast.FunctionDef) and any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(f))
    } - {name}


def grade_overlay(overlay: Path, test_files) -> dict:
    env: dict = {}
    exec(compile(compose(overlay), str(overlay), "exec"), env)
    return grade_env(env, test_files)


def test_is_the_corpus_large_and_is_every_bug_file_aimed_at_a_graded_function(test_files):
    questions = {tf.name for tf in test_files}
    assert len(BUGS) >= 60
    for path in BUGS:
        assert path.stem.split("_loses_")[1] in questions, path.name
        expected_label(path)


def test_does_every_bug_file_hold_only_what_it_breaks():
    """An overlay redefines the function it is named after (and helpers of its own), nothing else."""
    base = {n.name for n in ast.parse(BASE.read_text()).body if isinstance(n, ast.FunctionDef)}
    for path in BUGS:
        defined = {n.name for n in ast.parse(path.read_text()).body if isinstance(n, ast.FunctionDef)}
        assert defined & base == {path.stem.split("_loses_")[1]}, path.name


@pytest.mark.parametrize("path", BUGS, ids=[p.stem for p in BUGS])
def test_does_the_bug_lose_points_only_on_its_function_under_its_name(path, test_files):
    target = path.stem.split("_loses_")[1]
    results = grade_overlay(path, test_files)
    score, possible, messages = results[target]
    assert score < possible, f"{path.name} kept full marks on {target}"
    others = {q: r[:2] for q, r in results.items() if q not in {target} | callers(target) and r[0] != r[1]}
    assert not others, f"{path.name} also lost points on {others}"
    says = _constant(path, "SAYS", None)
    assert says is None or any(says in m for m in messages), (says, messages)
    label = expected_label(path)
    named = [m.split("looks like ", 1)[1].split(":", 1)[0] for m in messages if "looks like " in m]
    if label is None:
        assert not named, f"{path.name} was named {named}, but no single known variant fits it"
    else:
        assert named and all(n.startswith(label) for n in named), (label, messages)
    assert not any(NUMPY_PRINT.search(m) or len(m) >= 600 for m in messages), messages


COMMON = [p for p in BUGS if _constant(p, "COMMON", False)]


@pytest.mark.parametrize("path", COMMON, ids=[p.stem for p in COMMON])
def test_do_the_public_tests_catch_a_common_mistake(path, test_files):
    target = path.stem.split("_loses_")[1]
    public = [
        dataclasses.replace(tf, cases=tuple(c for c in tf.cases if not c.hidden))
        for tf in test_files
        if tf.name == target
    ]
    score, possible, _ = grade_overlay(path, public)[target]
    assert score < possible, f"the public tests of {target} miss {path.stem}"


def test_does_the_base_get_full_marks(test_files):
    env: dict = {}
    exec(compile(BASE.read_text(), str(BASE), "exec"), env)
    lost = {q: r for q, r in grade_env(env, test_files).items() if r[0] != r[1]}
    assert not lost, lost
