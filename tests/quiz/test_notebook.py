"""Questions about the quiz notebook and its autograder (attnlab.quiz.notebook)."""

import ast
import json
import subprocess
import sys
import textwrap
import re
from concurrent.futures import ThreadPoolExecutor

import nbformat
import pytest

from attnlab import paths
from attnlab.quiz import notebook as quiz_notebook
from attnlab.quiz.check import key_text
from otter_runs import otter_run

HOSTILE = "__import__('os').system('touch {marker}')"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """``main(out=...)`` once: the notebook, the test files and the zip."""
    out = tmp_path_factory.mktemp("dist")
    return out, quiz_notebook.main(out=out)


def _code(nb) -> dict[str, str]:
    """Answer variable -> the source of its cell."""
    return {c.source.split(" = ")[0]: c.source for c in nb.cells if c.cell_type == "code"}


def test_main_writes_the_notebook_tests_and_zip(built, items):
    """Does main() write quiz.ipynb, one test file per auto-graded item and the zip, and return them?"""
    out, written = built
    auto = [i for i in items.values() if i.type != "free"]
    assert written[0] == out / "quiz.ipynb" and written[-1] == out / "quiz_autograder.zip"
    assert sorted(p.name for p in written[1:-1]) == sorted(f"{i.variable}.py" for i in auto)
    assert all(p.parent == out / "quiz_tests" for p in written[1:-1])


def test_every_item_has_a_question_and_an_empty_answer_cell(built, items):
    """Is each item a Markdown cell (prompt, syntax) followed by `<id with _> = ""`?"""
    nb = nbformat.read(built[0] / "quiz.ipynb", as_version=4)
    cells = nb.cells[1:]
    assert len(cells) == 2 * len(items)
    for item, (md, code) in zip(items.values(), zip(cells[::2], cells[1::2])):
        assert md.cell_type == "markdown" and item.title in md.source
        assert f"Answer in `{item.variable}` as" in md.source
        assert code.source == f'{item.variable} = ""'
    assert "graded by hand; 0 auto-graded points" in _markdown_of(nb, "sa-q5")
    assert "`pos` (a number >= 0)" in _markdown_of(nb, "pe-dim0")
    assert r"\sin\left(pos" in _markdown_of(nb, "pe-dim0")  # the prompt's LaTeX, as written


def _markdown_of(nb, item_id: str) -> str:
    return next(c.source for c in nb.cells if c.cell_type == "markdown" and f"`{item_id}`" in c.source)


def test_notebook_holds_no_key(built, items):
    """Does no question cell show its own symbolic, matrix, proof or numeric key?"""
    nb = nbformat.read(built[0] / "quiz.ipynb", as_version=4)
    for item in items.values():
        if item.type in ("symbolic", "matrix", "proof", "chain", "numeric"):
            assert key_text(item) not in _markdown_of(nb, item.id), item.id


def test_test_files_hold_no_key(built, items):
    """Does no test file contain its item's key, only a call to the checker?"""
    for item in items.values():
        if item.type in ("symbolic", "matrix", "proof", "chain", "numeric"):
            text = (built[0] / "quiz_tests" / f"{item.variable}.py").read_text()
            assert str(item.key) not in text and key_text(item) not in text
            assert f'check_variable("{item.id}", {item.variable})' in text


def test_test_file_is_otter_format_with_the_item_points(built, items):
    """Does otter read a test file as a 0-point public case and a hidden case worth the item's points?"""
    from otter.test_files import ExceptionTestFile

    test_file = ExceptionTestFile.from_file(str(built[0] / "quiz_tests" / "proof_z.py"))
    assert test_file.name == "proof_z"
    assert [(c.hidden, c.points) for c in test_file.test_cases] == [(False, 0), (True, 2)]


def test_zip_config_and_pinned_requirements(built, items):
    """Does the zip carry points_possible = the auto-graded points and exact pins, the same as the
    code autograder's for the packages both install?"""
    import zipfile

    with zipfile.ZipFile(built[0] / "quiz_autograder.zip") as z:
        config = json.loads(z.read("otter_config.json"))
        names = z.namelist()
        environment = z.read("environment.yml").decode()
    assert config == {"lang": "python", "points_possible": sum(i.points for i in items.values() if i.type != "free")}
    assert "files/attnlab_quiz/check.py" in names and "files/attnlab_quiz/quiz/2_permutation_proof.yaml" in names
    assert not any(n.startswith("files/") and n.count("/") == 1 for n in names)  # a package, no loose .py
    code_pins = (paths.autograder_dir() / "requirements.txt").read_text()
    for package in ("numpy", "sympy", "pyyaml"):
        pin = re.search(rf"^{package}==[\d.]+$", (paths.autograder_dir("quiz") / "requirements.txt").read_text(), re.M)
        assert pin, package
        assert pin.group(0) in environment and pin.group(0) in code_pins


def test_shipped_modules_import_only_numpy_sympy_yaml_and_the_stdlib(tmp_path):
    """Do the shipped modules, as the zip holds them, import at top level only the stdlib, numpy, sympy
    (and its mpmath), yaml and each other?"""
    allowed = set(sys.stdlib_module_names) | {"numpy", "sympy", "mpmath", "yaml"}
    shipped = quiz_notebook.support_package(tmp_path / quiz_notebook.PACKAGE)
    modules = {p.relative_to(shipped).with_suffix("").as_posix() for p in shipped.rglob("*.py")}
    assert {*quiz_notebook.SHIPPED, *quiz_notebook.SHARED} == modules
    for module in sorted(modules):
        tree = ast.parse((shipped / f"{module}.py").read_text())
        for node in tree.body:
            if isinstance(node, ast.Import):
                assert all(a.name.split(".")[0] in allowed for a in node.names), module
            elif isinstance(node, ast.ImportFrom):
                if node.level:  # resolve the relative import inside the shipped package
                    package = module.split("/")[:-1]
                    assert node.level <= len(package) + 1, module
                    base = package[: len(package) + 1 - node.level]
                    target = "/".join([*base, *(node.module or "").split(".")]).strip("/")
                    assert (
                        target in modules
                        or f"{target}/__init__" in modules
                        or (not node.module and "/".join([*base, "__init__"]).lstrip("/") in modules)
                    ), module
                else:
                    assert node.module.split(".")[0] in allowed | {"__future__"}, module


def test_is_a_shipped_module_importing_from_outside_the_quiz_package_refused(tmp_path, monkeypatch):
    """Does building the support package fail, naming the module, when a checker module imports an
    attnlab module the zip does not ship?"""
    source = tmp_path / "src" / "quiz"
    source.mkdir(parents=True)
    for module in ("__init__", "grading"):
        (source / f"{module}.py").write_text("from ..paths import quiz_dir\n" if module == "grading" else "")
    monkeypatch.setattr(quiz_notebook, "SOURCE", source)
    monkeypatch.setattr(quiz_notebook, "SHIPPED", ("__init__", "grading"))
    monkeypatch.setattr(quiz_notebook, "SHARED", ())
    with pytest.raises(ValueError, match=r"src/attnlab/quiz/grading.py imports from outside the quiz package"):
        quiz_notebook.support_package(tmp_path / "out", bank=tmp_path)


def test_shipped_package_checks_answers_without_attnlab(tmp_path):
    """Does attnlab_quiz/, with attnlab unimportable, run a test file's cases with the right verdicts?"""
    quiz_notebook.support_package(tmp_path / "attnlab_quiz")
    (tmp_path / "proof_z.py").write_text(quiz_notebook.test_file(quiz_notebook.load()["proof-z"]))
    script = textwrap.dedent("""
        import sys
        sys.modules["attnlab"] = None  # the kit itself is not in the autograder image
        from attnlab_quiz.check import check_variable
        assert check_variable("proof-z", "P*Z").status == "right"
        allowed = set(sys.stdlib_module_names) | {"numpy", "sympy", "mpmath", "yaml", "_yaml",
                                                  "attnlab_quiz", "attnlab", "__main__",
                                                  "cython_runtime", "_distutils_hack"}
        loaded = {m.split(".")[0] for m in sys.modules if not m.startswith("_cython_")}
        print(sorted(loaded - allowed))  # numpy's cython runtime and setuptools' .pth hook aside
        import proof_z
        proof_z.test_checked.test_func("P*Z")
        for answer in ("P*A*V", None, "__import__('os')"):
            try:
                proof_z.test_checked.test_func(answer)
            except AssertionError as exc:
                print(exc)
            else:
                raise SystemExit(f"{answer!r} passed")
    """)
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines.pop(0) == "[]"  # nothing imported beyond numpy, sympy (mpmath), yaml, stdlib
    assert lines[0].startswith("That equals Z', but it is not in its simplest form")
    assert "text in quotes" in lines[1] and lines[2].startswith("Cannot read this answer")
    assert "P*Z" not in result.stdout


@pytest.mark.slow
def test_blank_notebook_runs_top_to_bottom(built):
    """Does the student's notebook run top to bottom in a Jupyter kernel?"""
    from nbclient import NotebookClient

    nb = nbformat.read(built[0] / "quiz.ipynb", as_version=4)
    NotebookClient(nb, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(built[0])}}).execute()
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")


@pytest.fixture(scope="module")
def graded(built, items, tmp_path_factory):
    """`otter run -a quiz_autograder.zip` on three notebooks at once: key, blank, partly wrong."""
    out = built[0]
    work = tmp_path_factory.mktemp("graded")
    marker = work / "pwned"
    keys = {i.id: key_text(i) or "An answer in words." for i in items.values()}
    partial = {**keys, "pe-dim0": "cos(pos)", "proof-z": "P*A*V", "score-12": HOSTILE.format(marker=marker)}
    for name, answers in {"key": keys, "blank": {}, "partial": partial}.items():
        (work / name).mkdir()
        nbformat.write(
            quiz_notebook.notebook(list(items.values()), answers=answers), work / name / f"quiz_{name}.ipynb"
        )

    def run(name: str) -> dict:
        notebook = work / name / f"quiz_{name}.ipynb"
        done = otter_run(out / "quiz_autograder.zip", notebook, work / name / "results", timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        tests = json.loads((work / name / "results" / "results.json").read_text())["tests"]
        return {t["name"]: t for t in tests if "max_score" in t}

    with ThreadPoolExecutor(3) as pool:
        results = dict(zip(("key", "blank", "partial"), pool.map(run, ("key", "blank", "partial"))))
    return results, marker


def _total(rows) -> float:
    return sum(r["score"] for r in rows.values())


@pytest.mark.slow
def test_key_notebook_scores_full_marks(graded, items):
    """Does the key-filled notebook score every auto-graded point through otter run?"""
    rows = graded[0]["key"]
    assert _total(rows) == sum(i.points for i in items.values() if i.type != "free")
    assert set(rows) == {i.variable for i in items.values() if i.type != "free"}


@pytest.mark.slow
def test_blank_notebook_scores_zero(graded):
    """Does the notebook as handed out score 0?"""
    assert _total(graded[0]["blank"]) == 0


@pytest.mark.slow
def test_partly_wrong_notebook_scores_partially_with_feedback(graded, items):
    """Do a wrong, a not-simplest and a hostile answer lose exactly their points, with feedback?"""
    rows = graded[0]["partial"]
    full = sum(i.points for i in items.values() if i.type != "free")
    assert _total(rows) == full - sum(items[i].points for i in ("pe-dim0", "proof-z", "score-12"))
    assert rows["pe_dim0"]["score"] == rows["proof_z"]["score"] == rows["score_12"]["score"] == 0
    assert "not in its simplest form" in rows["proof_z"]["output"]
    assert "P*Z" not in rows["proof_z"]["output"]


@pytest.mark.slow
def test_hostile_answer_scores_zero_and_runs_nothing(graded):
    """Is `__import__('os').system('touch ...')` as an answer unreadable, with nothing executed?"""
    assert graded[0]["partial"]["score_12"]["score"] == 0
    assert "Cannot read this answer" in graded[0]["partial"]["score_12"]["output"]
    assert not graded[1].exists()


def test_formulas_in_prose_show_as_typed(items):
    """Does `2*pi*10000` in an option reach the notebook's Markdown with its stars escaped (not
    rendered as "2 *pi* 10000"), while math and code spans stay as they are?"""
    from attnlab.quiz.notebook import question

    text = question(items["fast-pair"])
    assert "2\\*pi\\*10000" in text and "2*pi*10000" not in text
    assert "$10000^{2i/d_{model}}$" in text
