"""`attnlab build`: each assignment's student zip and otter autograder zip, and the student tool."""

import json
import re
import zipfile

from attnlab import build, paths, student_tool


def _solution_lines():
    """Every substantial line that appears in the solution file only inside solution regions."""
    text = paths.solution_file().read_text()
    regions = re.findall(r"# BEGIN SOLUTION\n(.*?)# END SOLUTION", text, flags=re.S)
    outside = re.sub(r"# BEGIN SOLUTION\n.*?# END SOLUTION", "", text, flags=re.S)
    public = {ln.strip() for ln in outside.splitlines()}
    lines = {ln.strip() for r in regions for ln in r.splitlines()} - public
    return {ln for ln in lines if len(ln) > 12 and not ln.startswith("#")}


STUDENT_ZIP = "student.zip"
AUTOGRADER_ZIP = "autograder.zip"


def test_does_a_one_assignment_course_get_the_zip_names_spec_pins(dist):
    assert (dist / "student.zip").is_file() and (dist / "autograder.zip").is_file()
    assert not list(dist.glob(f"{paths.ASSIGNMENT}_*.zip"))


def test_does_the_student_zip_hold_the_notebook_twin_public_tests_and_the_student_tool(dist):
    names = set(zipfile.ZipFile(dist / STUDENT_ZIP).namelist())
    a = paths.ASSIGNMENT
    assert {f"{a}/{a}.ipynb", f"{a}/{a}.py"} <= names
    assert {f"{a}/tests/{p.name}" for p in paths.tests_dir().glob("*.py")} <= names
    assert "quiz/quiz.ipynb" in names
    wheel = student_tool.wheel_name()
    assert wheel in names and (dist / wheel).is_file()
    assert zipfile.ZipFile(dist / STUDENT_ZIP).read(wheel) == (dist / wheel).read_bytes()
    readme = zipfile.ZipFile(dist / STUDENT_ZIP).read("README.md").decode()
    assert f"pip install {wheel}" in readme


def test_is_the_student_zip_free_of_hidden_cases_and_solution_code(dist):
    secrets = _solution_lines()
    assert secrets, "the scan needs solution lines to look for"
    with zipfile.ZipFile(dist / STUDENT_ZIP) as zf:
        for name in zf.namelist():
            if name.endswith(".whl"):
                continue  # the student tool: tests/test_no_leaks.py and tests/test_student_tool.py
            text = zf.read(name).decode()
            assert "hidden=True" not in text, name
            assert "attnlab_oracle" not in text, name
            leaked = [line for line in secrets if line in text]
            assert not leaked, f"{name} leaks solution code: {leaked[:3]}"


def test_does_the_autograder_zip_have_otters_layout_and_every_test(dist):
    with zipfile.ZipFile(dist / AUTOGRADER_ZIP) as zf:
        names = set(zf.namelist())
        config = json.loads(zf.read("otter_config.json"))
        env = zf.read("environment.yml").decode()
    assert {"run_autograder", "setup.sh", "environment.yml", "otter_config.json"} <= names
    assert {f"tests/{p.name}" for p in paths.tests_dir().glob("*.py")} <= names
    assert "files/attnlab_oracle/__init__.py" in names
    assert not any(n.startswith("files/") and n.count("/") == 1 and n.endswith(".py") for n in names), (
        "a top-level .py support file would stop otter from finding a .py submission"
    )
    # otter writes the top-level score only when points_possible is set
    assert config["points_possible"] == build.points_possible() > 0
    assert re.search(r"numpy==\d", env) and re.search(r"otter-grader\[grading.*\]==7\.", env)


def test_does_the_autograder_zip_carry_the_assignments_sandbox_settings_beside_its_tests(tmp_path):
    """The engine reads sandbox.yaml next to tests/: on Gradescope that is the zip's root."""
    from attnlab import course

    mine = course.new(dest=tmp_path / "course")
    settings = "packages: [numpy]\npreload: []\n"
    (mine / "autograder" / "pe_attention" / "sandbox.yaml").write_text(settings)
    (tmp_path / "dist").mkdir()
    with paths.use(course=mine):
        target = build.autograder_zip(out=tmp_path / "dist", assignment="pe_attention")
    with zipfile.ZipFile(target) as zf:
        assert zf.read("sandbox.yaml").decode() == settings and "tests/causal_mask.py" in zf.namelist()


def _course_with(tmp_path, *, planted: str = "", key: str = ""):
    """A copy of the course with ``planted`` after the reference softmax's result (e.g. ``* 1.01``) and
    the graded item wavelength's key replaced by ``key``."""
    from attnlab import course

    mine = course.new(dest=tmp_path / "course")
    if planted:
        solution = mine / "solutions" / "pe_attention" / "pe_attention.py"
        right = "    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)\n"
        text = solution.read_text()
        assert text.count(right) == 1, "the planted bug needs the reference softmax's return line"
        solution.write_text(text.replace(right, right.rstrip("\n") + f" {planted}\n"))
    if key:
        bank = mine / "quiz" / "1_positional_encoding.yaml"
        right = "  key: 2*pi*10000**(2*i/d_model)\n"
        text = bank.read_text()
        assert text.count(right) == 1, "the corrupted key needs wavelength's key line"
        bank.write_text(text.replace(right, f"  key: {key}\n"))
    return mine


def _build(mine, out, *options):
    from click.testing import CliRunner

    from attnlab import cli

    result = CliRunner().invoke(cli.main, ["build", "--course", str(mine), "--out", str(out), *options])
    return result.exit_code, result.output


def test_does_build_refuse_a_reference_softmax_that_its_own_tests_fail(tmp_path):
    """A bug in the reference would grade every student against it: the build names the function
    and its failing test, and writes nothing."""
    code, output = _build(_course_with(tmp_path, planted="* 1.01"), tmp_path / "dist")
    assert code != 0 and "Traceback" not in output
    assert "the reference `softmax` scores 1 of 6" in output and "'softmax - 2'" not in output
    assert "first 'softmax - 1'" in output and "--unchecked" in output
    assert not (tmp_path / "dist" / "student.zip").exists()


def test_does_build_refuse_a_quiz_key_that_quiz_verify_rejects(tmp_path):
    code, output = _build(_course_with(tmp_path, key="2*pi*10000**(i/d_model)"), tmp_path / "dist")
    assert code != 0 and "item wavelength" in output and "softmax" not in output
    assert not (tmp_path / "dist" / "quiz_canvas.zip").exists()


def test_does_an_unchecked_build_ship_and_say_what_it_ships_unchecked(tmp_path):
    code, output = _build(
        _course_with(tmp_path, planted="* 1.01", key="2*pi*10000**(i/d_model)"), tmp_path / "dist", "--unchecked"
    )
    assert code == 0 and (tmp_path / "dist" / "student.zip").is_file()
    unchecked = output.split("SHIPPED UNCHECKED", 1)[1].split("wrote ", 1)[0]
    assert "item wavelength" in unchecked and "the reference `softmax`" in unchecked


def test_does_the_bundled_course_pass_its_own_checks():
    from attnlab import selfcheck

    checks = selfcheck.run(assignments=paths.assignments())
    total = build.points_possible()
    assert not checks.failures
    assert f"the reference of {paths.ASSIGNMENT} ({total:g} of {total:g} points" in checks.summary()


def _course_with_unmarked_function(tmp_path):
    """A copy of the course with a new graded function, scale_twice, whose body has no solution region."""
    from attnlab import course

    mine = course.new(dest=tmp_path / "course")
    solution = mine / "solutions" / "pe_attention" / "pe_attention.py"
    body = "    return np.asarray(S, dtype=float) / d_k\n"
    solution.write_text(solution.read_text() + f'\n\n# %%\ndef scale_twice(S, d_k):\n    """S / d_k."""\n{body}')
    tests = mine / "autograder" / "pe_attention" / "tests"
    (tests / "scale_twice.py").write_text(
        "from otter.test_files import test_case\n\nname = 'scale_twice'\n\n\n"
        "@test_case(points=2, hidden=True)\ndef test_hidden(scale_twice):\n    assert scale_twice(9.0, 9) == 1\n"
    )
    return mine, body.strip()


def test_does_build_refuse_to_ship_a_graded_function_without_a_solution_region(tmp_path):
    """It shipped the function's whole body to students: does build (even --unchecked) and release
    now refuse, name the function and say how to mark its solution, writing nothing?"""
    from click.testing import CliRunner

    from attnlab import cli

    mine, body = _course_with_unmarked_function(tmp_path)
    for options in ([], ["--unchecked"]):
        code, output = _build(mine, tmp_path / "dist", *options)
        assert code != 0 and "Traceback" not in output, options
        assert "`scale_twice` has no solution region" in output and "# BEGIN SOLUTION" in output, options
        assert not list((tmp_path / "dist").iterdir()), options
    result = CliRunner().invoke(cli.main, ["release", "--course", str(mine), "--out", str(tmp_path / "release")])
    assert result.exit_code != 0 and "`scale_twice` has no solution region" in result.output
    assert not (tmp_path / "release").exists()
    assert body in (mine / "solutions" / "pe_attention" / "pe_attention.py").read_text()
