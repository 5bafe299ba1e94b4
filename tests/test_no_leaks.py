"""Nothing a student receives holds hidden test source, oracle code, solution code or expected arrays.

What students receive: student.zip (notebook, .py twin, public tests, quiz notebook), the committed
release, and after grading their feedback.md and results.json rows (hidden rows too, once grades are
published on Gradescope). The batch includes a submission that tries to print every test file.
"""

import ast
import json
import re
import zipfile

import pytest

from attnlab import grade, paths, samples

pytestmark = pytest.mark.slow
FIXTURES = paths.kit_root() / "tests" / "fixtures" / "grade"


def _substantial(lines):
    return {l.strip() for l in lines if len(l.strip()) > 24 and not l.strip().startswith(("#", "@", '"""'))}


def _public_lines():
    """What the solution shows students anyway: signatures, docstrings, the story, demo cells."""
    text = paths.solution_file().read_text()
    return _substantial(re.sub(r"# BEGIN SOLUTION\n.*?# END SOLUTION", "", text, flags=re.S).splitlines())


def _hidden_case_lines():
    found = set()
    for test in paths.tests_dir().glob("*.py"):
        text = test.read_text()
        public = text.splitlines()
        for node in ast.parse(text).body:
            if isinstance(node, ast.FunctionDef) and "hidden=True" in ast.get_source_segment(text, node.decorator_list[0] if node.decorator_list else node):
                found |= _substantial(public[node.lineno - 1:node.end_lineno])
    return found - _public_lines()


def _oracle_lines():
    return set().union(*(_substantial(p.read_text().splitlines())
                         for p in paths.support_dir().rglob("*.py"))) - _public_lines()


def _solution_lines():
    text = paths.solution_file().read_text()
    regions = re.findall(r"# BEGIN SOLUTION\n(.*?)# END SOLUTION", text, flags=re.S)
    return set().union(*(_substantial(r.splitlines()) for r in regions)) - _public_lines()


SECRETS = {"hidden test code": _hidden_case_lines, "oracle code": _oracle_lines, "solution code": _solution_lines}
ARRAY_DUMP = re.compile(r"\[\[|(?:-?\d+\.\d+[,\s]+){6,}")


@pytest.fixture(scope="module")
def received(dist, tmp_path_factory):
    """{where: text} for everything students receive."""
    subs = tmp_path_factory.mktemp("subs")
    samples.copy_all(into=subs)
    twin = (FIXTURES / "twin.py").read_text()
    (subs / "reads_tests.py").write_text(twin + "\n\n" + (FIXTURES / "hostile" / "read_and_print_tests.py").read_text())
    out = tmp_path_factory.mktemp("results")
    grade.main(submissions=[subs], out=out, progress=False)
    texts = {}
    with zipfile.ZipFile(dist / "student.zip") as zf:
        texts.update({f"student.zip:{n}": zf.read(n).decode() for n in zf.namelist()})
    for path in paths.release_dir().rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts:
            texts[f"release:{path.name}"] = path.read_text()
    for feedback in out.glob("submissions/*/feedback.md"):
        texts[f"feedback:{feedback.parent.name}"] = feedback.read_text()
    for results in out.glob("submissions/*/results.json"):
        data = json.loads(results.read_text())
        shown = [data.get("output", "")] + [t.get("output", "") for t in data["tests"]]
        texts[f"results:{results.parent.name}"] = "\n".join(shown)
    return texts


@pytest.mark.parametrize("kind", SECRETS)
def test_does_nothing_students_receive_hold_secrets(received, kind):
    secrets = SECRETS[kind]()
    assert secrets, f"the scan needs {kind} to look for"
    leaks = {where: [s for s in secrets if s in text][:2] for where, text in received.items()}
    assert not {k: v for k, v in leaks.items() if v}


def test_does_graded_feedback_never_dump_an_array(received):
    graded = {k: v for k, v in received.items() if k.startswith(("feedback:", "results:"))}
    assert graded and not [k for k, v in graded.items() if ARRAY_DUMP.search(v)]


def test_did_the_test_reading_submission_really_try(received):
    assert "feedback:reads_tests" in received
