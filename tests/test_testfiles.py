"""Loading otter test files without otter, and deriving their public view."""

import csv
import textwrap
from pathlib import Path

import pytest

from attnlab import testfiles

SAMPLE = textwrap.dedent("""\
    OK_FORMAT = False

    from otter.test_files import test_case
    import helper_for_hidden

    name = "q"

    SECRET = 41


    def _oracle(x):
        # only hidden cases use this
        return x + SECRET


    def _shape_of(x):
        return len(x)


    @test_case(points=1, hidden=False)
    def test_public(f):
        assert _shape_of(f([1, 2])) == 2


    @test_case(points=3, hidden=True)
    def test_hidden(f):
        assert f([1]) == [_oracle(1)]
""")


def _write(tmp_path, text, name="q.py"):
    folder = tmp_path / "tests"
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(text)
    return folder / name


def test_does_the_public_view_drop_hidden_cases_and_what_only_they_use():
    public = testfiles.public_source(SAMPLE)
    assert "test_hidden" not in public and "_oracle" not in public and "SECRET" not in public
    assert "helper_for_hidden" not in public
    assert "def test_public" in public and "def _shape_of" in public and 'name = "q"' in public


def test_is_the_public_view_itself_a_loadable_test_file(tmp_path):
    path = _write(tmp_path, testfiles.public_source(SAMPLE))
    tf = testfiles.load(path)
    assert [c.hidden for c in tf.cases] == [False]
    testfiles.call_case(tf.cases[0], {"f": lambda xs: xs})


def test_are_cases_loaded_with_their_points_visibility_and_parameters(tmp_path):
    path = _write(tmp_path, SAMPLE.replace("import helper_for_hidden\n", ""))
    tf = testfiles.load(path)
    assert tf.name == "q"
    assert [(c.points, c.hidden, c.params) for c in tf.cases] == [(1, False, ("f",)), (3, True, ("f",))]
    assert tf.points == 4 and tf.needs() == {"f"}


# a file's total and its cases' own points -> each case's points, as otter shares them out
SHARED_POINTS = [
    ("points = 6", ["None", "None", "None"], [2, 2, 2]),
    ("points = 5", ["1", "None", "None"], [1, 2, 2]),
    ("points = [1, 2, 3]", ["None", "None", "None"], [1, 2, 3]),
    ("", ["None", "None"], [0.5, 0.5]),
    ("", ["2", "0"], [2, 0]),
]


def _points_file(tmp_path, header, case_points):
    cases = "\n".join(f"@test_case(points={p})\ndef test_{i}():\n    pass\n" for i, p in enumerate(case_points))
    return _write(tmp_path, f"from otter.test_files import test_case\nname = 'q'\n{header}\n{cases}")


@pytest.mark.parametrize("header, case_points, expected", SHARED_POINTS)
def test_are_points_shared_out_the_way_otter_does(tmp_path, header, case_points, expected):
    path = _points_file(tmp_path, header, case_points)
    assert [c.points for c in testfiles.load(path).cases] == pytest.approx(expected)


def test_does_a_file_without_a_name_fail_clearly(tmp_path):
    with pytest.raises(ValueError, match="does not define 'name'"):
        testfiles.load(_write(tmp_path, "x = 1\n"))


def test_do_cases_get_the_whole_environment_through_env():
    seen = {}
    case = testfiles.Case("c", 1, False, lambda env, f: seen.update(env=env, f=f), ("env", "f"))
    testfiles.call_case(case, {"f": 1})
    assert seen == {"env": {"f": 1}, "f": 1}


def _shape(tests):
    return [(t.name, t.points, t.all_or_nothing, [(c.name, c.points, c.hidden) for c in t.cases]) for t in tests]


def test_does_reading_each_shipped_test_folder_give_what_loading_it_gives():
    """Do the names, cases, points and visibility read from the text of the bundled test files (the
    batch's grades.csv columns and the rows of unreadable submissions) match those of running them?"""
    from attnlab.grade.runner import load_tests

    root = Path(__file__).resolve().parents[1]
    folders = sorted(root.glob("autograder/*/tests")) + sorted((root / "tests" / "fixtures").glob("**/tests"))
    assert len(folders) >= 3
    for folder in folders:
        read = testfiles.outline_dir(folder)
        assert read is not None, folder
        support = folder.parent / "support"
        assert _shape(read) == _shape(load_tests(folder, support if support.is_dir() else None)), folder


def test_does_reading_a_file_give_what_loading_it_gives(tmp_path):
    """Is the sample file (case names left to the defaults, points per case, a hidden case) read
    as it loads?"""
    path = _write(tmp_path, SAMPLE.replace("import helper_for_hidden\n", "") + "\nall_or_nothing = True\n")
    assert _shape(testfiles.outline_dir(path.parent)) == _shape([testfiles.load(path)])


@pytest.mark.parametrize("header, case_points, expected", SHARED_POINTS)
def test_are_points_read_the_way_they_are_shared_out(tmp_path, header, case_points, expected):
    path = _points_file(tmp_path, header, case_points)
    (read,) = testfiles.outline_dir(path.parent)
    assert [c.points for c in read.cases] == pytest.approx(expected)


CASE = "@test_case(points=1)\ndef test_a():\n    pass\n"


@pytest.mark.parametrize(
    "body",
    [
        f"for i in range(3):\n    pass\n{CASE}",  # a loop may make cases
        f"{CASE}test_b = test_a\n",  # an alias puts the case in the module twice
        f"points = 2 * 3\n{CASE}",  # computed points
        f"points = sum([1, 2])\n{CASE}",
        f"from helpers import test_shared\n{CASE}",  # an import that may be a case
        f"from functools import *\n{CASE}",
        "@test_case(points=1)\n@staticmethod\ndef test_a():\n    pass\n",  # another decorator
        f"name = 'other'\n{CASE}",  # the name bound twice
        f"{CASE}{CASE}",  # a case defined again under its name
        f"register()\n{CASE}",  # a call at the top level
        "@test_case('a', 1)\ndef test_a():\n    pass\n",  # options by position
        "@test_case(points=N)\ndef test_a():\n    pass\n",  # options that are not literals
        f"x = (y := 1)\n{CASE}",
        f"if True:\n    {CASE.replace(chr(10), chr(10) + '    ')}",
        f"class C:\n    pass\n{CASE}",
    ],
)
def test_is_a_file_that_may_make_its_cases_when_it_runs_left_to_be_loaded(tmp_path, body):
    """Is a test file whose cases, names or points only running it can tell (a loop, an alias, a
    call, a computed value, an import of a non-standard module) never read from its text?"""
    _write(tmp_path, "from otter.test_files import test_case\nname = 'q'\n" + body)
    assert testfiles.outline_dir(tmp_path / "tests") is None


def test_is_one_such_file_enough_to_load_the_whole_folder(tmp_path):
    """Does one file that must run send the whole folder to be loaded (no half-read columns)?"""
    _write(tmp_path, "from otter.test_files import test_case\nname = 'a'\n" + CASE, name="a.py")
    _write(tmp_path, "from otter.test_files import test_case\nname = 'b'\nregister()\n" + CASE, name="b.py")
    assert testfiles.outline_dir(tmp_path / "tests") is None


# points a file may not give: a negative would let a wrong submission outscore a right one
BAD_POINTS = [
    ("", ["-2"], "'q - 1'"),
    ("", ["1", "-0.5"], "'q - 2'"),
    ("", ["float('nan')"], "'q - 1'"),
    ("", ["float('inf')"], "'q - 1'"),
    ("points = -3", ["None"], "the file's total"),
    ("points = [1, -1]", ["None", "None"], "'q - 2'"),
]


@pytest.mark.parametrize("header, case_points, named", BAD_POINTS)
def test_are_points_below_zero_or_not_finite_refused_in_one_line_naming_the_file_and_case(
    tmp_path, header, case_points, named
):
    path = _points_file(tmp_path, header, case_points)
    with pytest.raises(testfiles.BadTestFile) as refused:
        testfiles.load(path)
    message = str(refused.value)
    assert str(path) in message and named in message and "\n" not in message


def test_is_a_case_worth_zero_points_still_a_case(tmp_path):
    """A case worth 0 runs and shows its result without counting: otter allows it, and so does the kit."""
    (case,) = testfiles.load(_points_file(tmp_path, "", ["0"])).cases
    assert case.points == 0


def _course_with_points(tmp_path, points: str):
    """A copy of the course whose first hidden causal_mask case is worth ``points`` (file text)."""
    from attnlab import course

    mine = course.new(dest=tmp_path / "course")
    tests = mine / "autograder" / "pe_attention" / "tests" / "causal_mask.py"
    text = tests.read_text()
    assert "points=2, hidden=True" in text, "the edit needs causal_mask's hidden case worth 2"
    tests.write_text(text.replace("points=2, hidden=True", f"points={points}, hidden=True", 1))
    return mine


def _refusals(tmp_path, mine):
    """{command: (exit code, output)} of every command that loads the course's test files."""
    from click.testing import CliRunner

    from attnlab import cli, samples

    submission = next(p for p in samples.bundled() if p.suffix == ".py")
    commands = {
        "build": ["build", "--out", str(tmp_path / "dist")],
        "release": ["release"],
        "release --out": ["release", "--out", str(tmp_path / "release")],
        "grade": ["grade", str(submission), "--out", str(tmp_path / "results"), "-j", "1"],
    }
    found = {}
    for label, args in commands.items():
        result = CliRunner().invoke(cli.main, [*args, "--course", str(mine)])
        found[label] = (result.exit_code, result.output)
    return found


def test_do_build_release_and_grade_refuse_a_negative_case_in_one_line_writing_nothing(tmp_path):
    """A hidden case worth -2 made the build ship "59 of 59 points" and a wrong causal_mask outscore
    a right one: does every command say which file and case, in one line, and write nothing?"""
    mine = _course_with_points(tmp_path, "-2")
    for label, (code, output) in _refusals(tmp_path, mine).items():
        assert code != 0 and "Traceback" not in output, label
        (line,) = [ln for ln in output.splitlines() if "causal_mask.py" in ln]
        assert "'causal_mask - 2'" in line and "-2" in line, label
    assert not (tmp_path / "dist" / "student.zip").exists() and not (tmp_path / "release").exists()
    assert not (tmp_path / "results" / "grades.csv").exists()


# points that are not numbers: each summed into a TypeError traceback, or (True) counted as 1
NOT_NUMBERS = [
    ("", ['"2"'], "'q - 1'"),
    ("", ["True"], "'q - 1'"),
    ("", ["[1, 2]"], "'q - 1'"),
    ("points = '6'", ["None"], "the file's total"),
    ("points = [1, None]", ["None", "None"], "'q - 2'"),
    ("points = ['1', 2]", ["None", "None"], "'q - 1'"),
]


@pytest.mark.parametrize("header, case_points, named", NOT_NUMBERS)
def test_are_points_that_are_not_numbers_refused_in_one_line_naming_the_file_and_case(
    tmp_path, header, case_points, named
):
    path = _points_file(tmp_path, header, case_points)
    with pytest.raises(testfiles.BadTestFile) as refused:
        testfiles.load(path)
    message = str(refused.value)
    assert str(path) in message and named in message and "\n" not in message


def test_do_build_release_and_grade_refuse_points_given_as_text_in_one_line_writing_nothing(tmp_path):
    """points="2" gave a TypeError traceback from all three: does each now say which file and case?"""
    mine = _course_with_points(tmp_path, '"2"')
    for label, (code, output) in _refusals(tmp_path, mine).items():
        assert code != 0 and "Traceback" not in output, label
        (line,) = [ln for ln in output.splitlines() if "causal_mask.py" in ln]
        assert "'causal_mask - 2'" in line and "'2'" in line, label
    assert not (tmp_path / "dist" / "student.zip").exists() and not (tmp_path / "release").exists()
    assert not (tmp_path / "results" / "grades.csv").exists()


def test_are_numbers_of_other_kinds_and_unset_points_still_accepted(tmp_path):
    """A numpy number or a fraction is a number; a case without points (None) gets the file's share."""
    header = "import numpy as np\nfrom fractions import Fraction\npoints = 5"
    path = _points_file(tmp_path, header, ["np.float64(1.5)", "Fraction(1, 2)", "None"])
    assert [c.points for c in testfiles.load(path).cases] == pytest.approx([1.5, 0.5, 3])


def test_is_a_question_of_cases_worth_a_tenth_and_a_fifth_worth_three_tenths(tmp_path):
    """Its points possible (results.json's, otter's points_possible) are 0.3, not the float sum
    0.30000000000000004?"""
    assert testfiles.load(_points_file(tmp_path, "", ["0.1", "0.2"])).points == 0.3


# an instructor's test folder that holds a file no test file can be: each stopped every command
# with a traceback
UNLOADABLE = {
    "__init__.py": "",  # as a Python package has: no name, no cases
    "typo.py": "name = 'typo'\ndef test_a(:\n",
    "imports.py": "import attnlab_no_such_module\nname = 'imports'\n",
    "raises.py": "name = 'raises'\nPOINTS = 1 / 0\n",
}


@pytest.mark.parametrize("file", sorted(UNLOADABLE))
def test_do_build_release_and_grade_refuse_a_test_file_that_cannot_be_loaded_in_one_line(tmp_path, file):
    """Does every command that loads the tests say which file and why, in one line, and write nothing?"""
    from attnlab import course

    mine = course.new(dest=tmp_path / "course")
    (mine / "autograder" / "pe_attention" / "tests" / file).write_text(UNLOADABLE[file])
    for label, (code, output) in _refusals(tmp_path, mine).items():
        assert code != 0 and "Traceback" not in output, (label, output[-1500:])
        assert len([ln for ln in output.splitlines() if file in ln]) == 1, (label, output[-1500:])
    assert not (tmp_path / "dist" / "student.zip").exists() and not (tmp_path / "release").exists()
    # a file that fails only when run is met by the graders, after the run has begun: nothing graded
    grades = tmp_path / "results" / "grades.csv"
    if grades.exists():
        rows = list(csv.DictReader(grades.open(encoding="utf-8")))
        assert rows and all(r["total"] == "" and r["status"] == "not graded" for r in rows), rows
