"""Nothing a student receives holds a solution body, a hidden test case, oracle code or the key of a
graded quiz item.

What students receive: each assignment's student zip (notebook, .py twin, public tests, README and
the student tool wheel, every file inside it), the student tool wheel, the quiz notebook, the
committed release, and after grading their feedback.md and results.json rows (hidden rows too, once
grades are published on Gradescope). The batch includes a submission that tries to print every test
file. The scan itself is tested: leaks planted in a copy of the course must be found.
"""

from __future__ import annotations

import ast
import io
import json
import re
import shutil
import zipfile
from pathlib import Path

import nbformat
import pytest
import yaml

from attnlab import build, course, paths, samples, student_tool
from attnlab.quiz import bank, notebook

# an array printed whole: six or more decimals in a row, whether numpy's layout or nested lists
# (a message may show a few of the student's own values, as `[[0.576, 0.212, 0.212]]`)
ARRAY_DUMP = re.compile(r"(?:-?\d+\.\d+(?:[,\s\[\]]|\]\s*,?\s*\[)+){6,}")


# ---- what counts as a secret, read from a course folder ------------------------------------------


def _substantial(lines):
    return {ln.strip() for ln in lines if len(ln.strip()) > 24 and not ln.strip().startswith(("#", "@", '"""'))}


def _public_lines(assignment):
    """What the solution shows students anyway: signatures, docstrings, the story, demo cells."""
    text = paths.solution_file(assignment).read_text()
    return _substantial(re.sub(r"# BEGIN SOLUTION\n.*?# END SOLUTION", "", text, flags=re.S).splitlines())


def _hidden_case_lines(assignment):
    found = set()
    for test in paths.tests_dir(assignment).glob("*.py"):
        text = test.read_text()
        lines = text.splitlines()
        for node in ast.parse(text).body:
            if (
                isinstance(node, ast.FunctionDef)
                and node.decorator_list
                and "hidden=True" in ast.get_source_segment(text, node.decorator_list[0])
            ):
                found |= _substantial(lines[node.lineno - 1 : node.end_lineno])
    return found - _public_lines(assignment)


def _tool_lines():
    """The tool's own code, public to anyone who installs it (the student tool ships it)."""
    package = Path(student_tool.__file__).resolve().parent
    return set().union(
        *(
            _substantial(p.read_text().splitlines())
            for p in package.rglob("*.py")
            if "kit" not in p.relative_to(package).parts
        )
    )


def _oracle_lines(assignment):
    """Oracle lines, less the generic ones the tool's code also has (a stable softmax line in the quiz
    checker is no oracle leak); solution and hidden-case lines get no such allowance."""
    return (
        set().union(
            set(), *(_substantial(p.read_text().splitlines()) for p in paths.support_dir(assignment).rglob("*.py"))
        )
        - _public_lines(assignment)
        - _tool_lines()
    )


def _solution_lines(assignment):
    text = paths.solution_file(assignment).read_text()
    regions = re.findall(r"# BEGIN SOLUTION\n(.*?)# END SOLUTION", text, flags=re.S)
    return set().union(set(), *(_substantial(r.splitlines()) for r in regions)) - _public_lines(assignment)


def _graded_keys(bank_dir):
    """Keys and explanations of graded items that the bank's own prompts do not already show. A key
    that names a quantity of ``definitions.yaml`` (``score12``) refers to the definition students are
    taught; its value differs per student (the notes' own value is printed in the notes)."""
    from attnlab.quiz import definitions

    items = bank.load(bank_dir).values()
    ill = definitions.load(bank_dir).illustration
    names = set(ill.quantities) if ill else set()
    public = "\n".join(f"{i.title}\n{i.prompt}" for i in items)
    found = set()
    for item in items:
        if item.practice:
            continue
        key = item.key if isinstance(item.key, str) and item.key not in names else ""
        for text in (key, item.explanation):
            if len(text) >= 4 and text not in public:
                found.add(text)
    return found


def secrets(course_dir: Path) -> dict[str, set[str]]:
    """{kind: texts that must reach no student} for every assignment of the course."""
    with paths.use(course=course_dir):
        names = paths.assignments()
        return {
            "hidden test code": set().union(*(_hidden_case_lines(a) for a in names)),
            "oracle code": set().union(*(_oracle_lines(a) for a in names)),
            "solution code": set().union(*(_solution_lines(a) for a in names)),
            "graded quiz key": _graded_keys(paths.quiz_dir()),
        }


# ---- what students receive ------------------------------------------------------------------------


def _unpack(where: str, data: bytes, into: dict[str, str]) -> None:
    """Every file of a zip (or wheel), zips inside it included."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        for name in zf.namelist():
            inner = zf.read(name)
            if name.endswith((".zip", ".whl")):
                _unpack(f"{where}:{name}", inner, into)
            else:
                into[f"{where}:{name}"] = inner.decode("utf-8", errors="replace")


def received_from(dist: Path) -> dict[str, str]:
    """{where: text} for every file of a build that students receive."""
    texts: dict[str, str] = {}
    handed_out = sorted(dist.glob("*student.zip")) + sorted(dist.glob(f"{student_tool.NAME}-*.whl"))
    assert handed_out, f"nothing to scan in {dist}"
    for path in handed_out:
        _unpack(path.name, path.read_bytes(), texts)
    texts["quiz.ipynb"] = (dist / "quiz.ipynb").read_text()
    return texts


def scan(received: dict[str, str], found: dict[str, set[str]]) -> dict[str, dict[str, list[str]]]:
    """{kind: {where: secrets found there}}, plus graded items whose student copy kept a key."""
    leaks = {
        kind: {where: [s for s in texts if s in text][:2] for where, text in received.items()}
        for kind, texts in found.items()
    }
    leaks = {kind: {w: s for w, s in by_where.items() if s} for kind, by_where in leaks.items()}
    for where, text in received.items():
        if re.search(r"attnlab/quiz/quiz/[^/]+\.yaml$", where) and not where.endswith(
            (bank.DEFINITIONS_FILE, bank.SETTINGS_FILE)
        ):
            kept = [
                e["id"]
                for e in yaml.safe_load(text) or []
                if not e.get("practice") and set(e) - set(bank.STUDENT_FIELDS)
            ]
            if kept:
                leaks.setdefault("graded quiz key", {})[where] = kept
    return {kind: by_where for kind, by_where in leaks.items() if by_where}


def student_build(course_dir: Path, out: Path) -> Path:
    """The student-facing part of `attnlab build` (no otter needed): zips, wheel, quiz notebook."""
    out.mkdir(parents=True, exist_ok=True)
    with paths.use(course=course_dir):
        wheel = student_tool.build_wheel(out=out)
        for name in paths.assignments():
            build.student_zip(out=out, assignment=name, wheel=wheel)
        nb = notebook.notebook(list(bank.load(paths.quiz_dir()).values()))
        (out / "quiz.ipynb").write_text(nbformat.writes(nb))
    return out


# ---- the real build -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def received(dist, graded_by_default):
    """{where: text} for everything students receive, grading feedback included: that of every
    sample (the untouched stub too) and of one that tries to print every test file, read from the
    session's grading with the default options (the one-bug submissions graded there too are not
    read)."""
    graded = {p.stem for p in samples.bundled()} | {"untouched_stub_score_zero", "a_reads_tests"}
    texts = received_from(dist)
    for path in paths.release_dir().rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts:
            texts[f"release:{path.name}"] = path.read_text()
    for name in sorted(graded):
        folder = graded_by_default / "submissions" / name
        texts[f"feedback:{name}"] = (folder / "feedback.md").read_text()
        data = json.loads((folder / "results.json").read_text())
        shown = [data.get("output", "")] + [t.get("output", "") for t in data["tests"]]
        texts[f"results:{name}"] = "\n".join(shown)
    return texts


@pytest.mark.slow
def test_does_nothing_students_receive_hold_secrets(received):
    found = secrets(paths.kit_root())
    assert all(found.values()), f"the scan needs something of each kind to look for: {found.keys()}"
    assert any(where.endswith(".py") and ".whl:attnlab/" in where for where in received), "the tool is scanned"
    assert scan(received, found) == {}


@pytest.mark.slow
def test_does_graded_feedback_never_dump_an_array(received):
    graded = {k: v for k, v in received.items() if k.startswith(("feedback:", "results:"))}
    assert graded and not [k for k, v in graded.items() if ARRAY_DUMP.search(v)]


@pytest.mark.slow
def test_did_the_test_reading_submission_really_try(received):
    assert "feedback:a_reads_tests" in received


# ---- the scan finds leaks planted in a copy of the course ------------------------------------------


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"the plant needs {old!r} in {path}"
    path.write_text(text.replace(old, new, 1))


def _plant_hidden_case(root):
    _replace(root / "autograder/pe_attention/tests/causal_mask.py", "points=2, hidden=True", "points=2, hidden=False")


def _plant_solution_body(root):
    """causal_mask's solution in a helper that nothing grades: build refuses a graded function shipped
    whole, but a helper is given whole on purpose, so only the scan can tell."""
    sol = root / "solutions/pe_attention/pe_attention.py"
    sol.write_text(
        sol.read_text() + "\n\n# %%\ndef lower_triangle(n):\n    return np.tril(np.ones((n, n), dtype=bool))\n"
    )


def _plant_oracle(root):
    """The oracle as the notebook's text (as a demo cell it would define graded functions whole,
    which build refuses)."""
    oracle = (root / "autograder/pe_attention/support/attnlab_oracle/attention.py").read_text()
    sol = root / "solutions/pe_attention/pe_attention.py"
    sol.write_text(sol.read_text() + "\n\n# %% [markdown]\n" + "".join(f"# {line}\n" for line in oracle.splitlines()))


def _plant_graded_key(root):
    proof = root / "quiz/2_permutation_proof.yaml"
    _replace(
        proof, "    The permuted input $X' = PX$ has", "    Hint: (K')^T = K^T*P^T. The permuted input $X' = PX$ has"
    )


PLANTS = {
    "hidden test code": _plant_hidden_case,
    "solution code": _plant_solution_body,
    "oracle code": _plant_oracle,
    "graded quiz key": _plant_graded_key,
}


@pytest.mark.parametrize("kind", PLANTS)
def test_does_the_scan_find_a_leak_planted_in_the_course(kind, tmp_path):
    original = course.new(dest=tmp_path / "course")
    found = secrets(original)
    clean = scan(received_from(student_build(original, tmp_path / "clean")), found)
    assert clean == {}
    leaky = course.new(dest=tmp_path / "leaky")
    PLANTS[kind](leaky)
    leaks = scan(received_from(student_build(leaky, tmp_path / "leaky-dist")), found)
    assert kind in leaks, leaks


def test_does_the_scan_look_inside_the_wheel_and_at_its_quiz_bank(tmp_path):
    original = course.new(dest=tmp_path / "course")
    found = secrets(original)
    dist = student_build(original, tmp_path / "dist")
    wheel = dist / student_tool.wheel_name()
    planted = tmp_path / "planted" / wheel.name
    planted.parent.mkdir()
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(planted, "w") as dst:
        for name in src.namelist():
            data = src.read(name)
            if name == "attnlab/quiz/quiz/1_positional_encoding.yaml":
                entries = yaml.safe_load(data)
                graded = next(e for e in entries if not e.get("practice"))
                graded["key"] = "sin(pos)"
                data = yaml.safe_dump(entries).encode()
            dst.writestr(name, data)
        dst.write(original / "solutions/pe_attention/pe_attention.py", "attnlab/reference.py")
    shutil.copy(dist / "quiz.ipynb", planted.parent / "quiz.ipynb")
    leaks = scan(received_from(planted.parent), found)
    assert {"solution code", "graded quiz key"} <= set(leaks), leaks
    assert list(leaks["solution code"]) == [f"{wheel.name}:attnlab/reference.py"]
    assert leaks["graded quiz key"] == {f"{wheel.name}:attnlab/quiz/quiz/1_positional_encoding.yaml": [graded["id"]]}
