"""Loading otter test files without otter, and deriving their public view."""

import textwrap

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


@pytest.mark.parametrize(
    "header, case_points, expected",
    [
        ("points = 6", ["None", "None", "None"], [2, 2, 2]),
        ("points = 5", ["1", "None", "None"], [1, 2, 2]),
        ("points = [1, 2, 3]", ["None", "None", "None"], [1, 2, 3]),
        ("", ["None", "None"], [0.5, 0.5]),
        ("", ["2", "0"], [2, 0]),
    ],
)
def test_are_points_shared_out_the_way_otter_does(tmp_path, header, case_points, expected):
    cases = "\n".join(f"@test_case(points={p})\ndef test_{i}():\n    pass\n" for i, p in enumerate(case_points))
    path = _write(tmp_path, f"from otter.test_files import test_case\nname = 'q'\n{header}\n{cases}")
    assert [c.points for c in testfiles.load(path).cases] == pytest.approx(expected)


def test_does_a_file_without_a_name_fail_clearly(tmp_path):
    with pytest.raises(ValueError, match="does not define 'name'"):
        testfiles.load(_write(tmp_path, "x = 1\n"))


def test_do_cases_get_the_whole_environment_through_env():
    seen = {}
    case = testfiles.Case("c", 1, False, lambda env, f: seen.update(env=env, f=f), ("env", "f"))
    testfiles.call_case(case, {"f": 1})
    assert seen == {"env": {"f": 1}, "f": 1}
