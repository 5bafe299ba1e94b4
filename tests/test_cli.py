"""The `attnlab` command: a user's mistakes get a message, never a traceback."""

from click.testing import CliRunner

from attnlab import cli, paths


def _run(*args):
    result = CliRunner().invoke(cli.main, list(args))
    return result.exit_code, result.output, result.exception


def test_does_building_into_an_unwritable_place_fail_with_a_message():
    code, output, exc = _run("build", "--out", "/proc/attnlab-cannot-write-here")
    assert code == 1 and "Error:" in output and "Traceback" not in output
    assert isinstance(exc, SystemExit)


def test_does_grading_a_missing_path_fail_with_a_message():
    code, output, _ = _run("grade", "/nonexistent/sub.py", "--out", "results")
    assert code == 2 and "does not exist" in output


def test_does_grading_require_an_output_folder(tmp_path):
    sub = tmp_path / "s.py"
    sub.write_text("")
    code, output, _ = _run("grade", str(sub))
    assert code == 2 and "--out" in output


def test_does_release_write_the_student_files(tmp_path):
    code, output, _ = _run("release", "--out", str(tmp_path))
    assert code == 0
    assert (tmp_path / "pe_attention.ipynb").is_file() and (tmp_path / "tests").is_dir()
    assert str(tmp_path / "pe_attention.py") in output


def test_does_the_help_list_every_command():
    code, output, _ = _run("--help")
    assert code == 0
    for command in ("build", "grade", "check", "demo", "quiz", "release", "new", "upload"):
        assert command in output


def test_does_grading_an_empty_folder_fail_with_a_message(tmp_path):
    code, output, _ = _run("grade", str(tmp_path), "--out", str(tmp_path / "results"))
    assert code == 1 and "no .ipynb or .py submissions" in output and "Traceback" not in output


def test_are_two_submissions_with_one_name_each_a_problem_with_a_message(tmp_path):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "same.py").write_text("")
    code, output, _ = _run("grade", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "r"))
    assert code == 3 and "2 submissions are named 'same'" in " ".join(output.split())


PROGRAM = """
import atexit, sys
from attnlab import cli

class TornDown:
    def __del__(self):
        print("torn down")

kept = TornDown()  # freed only by the interpreter's teardown
atexit.register(print, "atexit ran")
sys.argv = ["attnlab", *sys.argv[1:]]
cli.run(cli.main)
"""


def test_does_the_program_end_with_its_code_its_output_and_atexit_but_no_teardown(tmp_path):
    """The command skips the interpreter's teardown (freeing numpy and the engine takes 50-100 ms
    after the work is done), and loses nothing by it: the exit code, every line printed, and the
    atexit handlers, which clean up temporary folders."""
    import subprocess
    import sys

    def program(*args):
        done = subprocess.run([sys.executable, "-c", PROGRAM, *args], capture_output=True, text=True, cwd=tmp_path)
        return done.returncode, done.stdout, done.stderr

    code, out, _ = program("--version")
    assert code == 0 and "attnlab" in out and "atexit ran" in out and "torn down" not in out
    code, out, err = program("check", str(tmp_path / "missing.py"))
    assert code == 2 and "missing.py" in err and "atexit ran" in out and "torn down" not in out


def test_is_a_timeout_that_is_not_a_number_of_seconds_a_usage_error(tmp_path):
    sub = tmp_path / "s.py"
    sub.write_text("")
    for value in ("nan", "inf", "1e308"):
        code, output, _ = _run("grade", str(sub), "--out", str(tmp_path / "r"), "--timeout", value)
        assert code == 2 and "--timeout" in output and "Traceback" not in output


def _commands(group, path=()):
    """Every command path of ``group`` (lazy subgroups included), the group's own first."""
    import click

    yield path
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if isinstance(command, click.Group):
            yield from _commands(command, (*path, name))
        else:
            yield (*path, name)


def test_does_dash_h_show_the_help_in_every_command():
    for group in (cli.main, cli.student):
        for path in _commands(group):
            short = CliRunner().invoke(group, [*path, "-h"])
            long = CliRunner().invoke(group, [*path, "--help"])
            assert short.exit_code == 0 and short.output == long.output, (group.name, path, short.output)


def test_is_piped_output_left_unwrapped(tmp_path):
    """A path longer than a terminal is wide comes out whole on one line when the output is piped."""
    import subprocess
    import sys

    folder = tmp_path / ("a-folder-with-a-name-much-longer-than-eighty-columns-" * 2).rstrip("-")
    folder.mkdir()
    (folder / "empty.py").write_text("")
    env = {k: v for k, v in __import__("os").environ.items() if k != "COLUMNS"}
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from attnlab import cli; cli.run(cli.main)",
            "grade",
            str(folder),
            "--out",
            str(folder / "r"),
        ]
        + ["--course", str(paths.kit_root())],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert str(folder / "r" / "grades.csv") in done.stderr, done.stderr
