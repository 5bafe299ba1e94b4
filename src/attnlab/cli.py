"""The ``attnlab`` command: a thin layer over the keyword-only ``main`` functions.

Instructor commands work on a course folder: ``--course DIR``, else the one holding the working
directory (``attnlab new DIR`` makes one). Heavy imports (otter, sympy, the grading engine) happen
inside the commands, so that ``attnlab check`` starts fast. ``student`` is the student tool's command:
``check`` and ``quiz`` only.
"""

from __future__ import annotations

import importlib
import math
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from . import __version__, importpath, paths


class _Commands(click.Group):
    """A group whose ``quiz`` subgroup is imported only when used (sympy takes a while), and where
    a missing or wrong course folder is a one-line error, in every subcommand."""

    lazy = {"quiz": "attnlab.quiz.commands:quiz"}

    def list_commands(self, ctx):
        return sorted(set(super().list_commands(ctx)) | set(self.lazy))

    def get_command(self, ctx, name):
        if name in self.lazy:
            module, attr = self.lazy[name].split(":")
            return getattr(importlib.import_module(module), attr)
        return super().get_command(ctx, name)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except paths.CourseError as err:
            raise click.ClickException(str(err)) from None


# -h as well as --help, in every subcommand (a child context inherits its parent's help options)
HELP = {"help_option_names": ["-h", "--help"]}


@click.group(cls=_Commands, context_settings=HELP)
@click.version_option(__version__, prog_name="attnlab")
def main():
    """Attention Lab: build, grade and check the positional-encoding and attention assignment."""


@click.group(cls=_Commands, context_settings=HELP)
@click.version_option(__version__, prog_name="attnlab")
def student():
    """Attention Lab, the student's tool: check your work against the public tests, practise the quiz."""


def _fail_cleanly(err: OSError) -> click.ClickException:
    return click.ClickException(f"{err.strerror or err}: {err.filename}" if err.filename else str(err))


def course_options(command):
    """``--course`` and ``--assignment``, shared by the commands that work on a course."""
    command = click.option(
        "--assignment",
        default=None,
        metavar="NAME",
        help="The assignment (a folder of the course's solutions/); default: every one, or the only one.",
    )(command)
    return click.option(
        "--course",
        "course",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help="The course folder (default: the one holding the working directory).",
    )(command)


@main.command()
@click.argument("dest", type=click.Path(path_type=Path))
def new(dest: Path):
    """Create a course folder DEST of your own from the bundled course."""
    from . import course

    try:
        made = course.new(dest=dest)
    except OSError as err:
        raise _fail_cleanly(err) from None
    click.echo(f"created the course folder {made}; run attnlab commands inside it")


@main.command()
@click.option(
    "--out",
    "out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("dist"),
    show_default=True,
    help="Folder for the student and autograder zips, the student tool and the quiz files.",
)
@click.option(
    "--unchecked",
    is_flag=True,
    help="Build even when the course fails its own checks (quiz verify; the reference solution "
    "graded by its tests); the output lists what is shipped unchecked.",
)
@course_options
def build(out: Path, unchecked: bool, course: Path | None, assignment: str | None):
    """Build each assignment's student zip and autograder zip, the student tool and the quiz files,
    once the course passes its own checks: every quiz key derives (attnlab quiz verify) and each
    reference solution gets full marks from its own tests."""
    from . import build as build_
    from . import selfcheck

    with paths.use(course=course, assignment=assignment):
        try:
            for path in build_.main(out=out, assignment=assignment, unchecked=unchecked, say=click.echo):
                click.echo(f"wrote {path}")
        except selfcheck.Refused as err:
            raise click.ClickException(str(err)) from None
        except OSError as err:
            raise _fail_cleanly(err) from None


@main.command()
@click.option(
    "--out",
    "out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder to write into (default: the course's assignments/<assignment>/).",
)
@course_options
def release(out: Path | None, course: Path | None, assignment: str | None):
    """Regenerate the student release (notebook, .py twin, public tests) from the solution."""
    from . import release as release_

    with paths.use(course=course, assignment=assignment):
        names = [assignment] if assignment else paths.assignments()
        if out is not None and len(names) > 1:
            raise click.UsageError("--out takes one assignment: add --assignment NAME")
        try:
            for name in names:
                for path in release_.main(out=out, assignment=name):
                    click.echo(f"wrote {path}")
        except OSError as err:
            raise _fail_cleanly(err) from None


def _finite(param: click.Parameter, value: float) -> float:
    """A number of seconds a limit can be set to: FloatRange lets nan through (no comparison is true)."""
    if not math.isfinite(value):
        raise click.BadParameter(f"{value} is not a number of seconds", param=param)
    return value


@main.command()
@click.argument("submissions", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for grades.csv, found.csv, the item analysis and submissions/<name>/.",
)
@click.option(
    "--roster",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Canvas gradebook export (CSV): checked before grading; writes canvas_import.csv.",
)
@click.option(
    "--column",
    default=None,
    help="The roster's assignment column to fill, by title or Canvas id (default: pe_attention).",
)
@click.option(
    "--scale",
    is_flag=True,
    help="When the roster's Points Possible differs from the autograder's total, scale canvas_import.csv's "
    "totals to it instead of refusing.",
)
@click.option(
    "--jobs", "-j", type=click.IntRange(min=1), default=None, help="Submissions graded at once (default: one per core)."
)
@click.option("--force", is_flag=True, help="Regrade submissions that are unchanged since they were graded.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1, max=3600.0),
    callback=lambda ctx, param, value: _finite(param, value),
    default=10.0,
    show_default=True,
    help="Seconds one call of a student function may take.",
)
@click.option(
    "--memory-mb",
    type=click.IntRange(min=256),
    default=2048,
    show_default=True,
    help="Memory limit of each submission's sandbox.",
)
@course_options
def grade(
    submissions: tuple[Path, ...],
    out: Path,
    roster: Path | None,
    column: str | None,
    scale: bool,
    jobs: int | None,
    force: bool,
    timeout: float,
    memory_mb: int,
    course: Path | None,
    assignment: str | None,
):
    """Grade submissions in isolated processes: files, folders of them, one folder per student, a
    Gradescope export, a Canvas bulk download, or zips of these.

    \b
    Exit status: 0 everything graded and nothing needs a human;
    1 nothing was graded (bad roster, no submissions: the message says why);
    2 wrong usage; 3 graded, but something needs a human (listed in the summary and grades.csv).
    """
    from . import grade as grade_

    try:
        with paths.use(course=course, assignment=assignment):
            paths.current_assignment()  # several assignments and none chosen: say so before grading
            run = grade_.main(
                submissions=list(submissions),
                out=out,
                roster=roster,
                column=column,
                scale=scale,
                jobs=jobs,
                force=force,
                timeout=timeout,
                memory_mb=memory_mb,
            )
    except OSError as err:
        raise _fail_cleanly(err) from None
    except ValueError as err:  # e.g. a bad roster, two submissions with the same name
        raise click.ClickException(str(err)) from None
    except grade_.Interrupted as err:
        import signal

        try:
            click.echo(
                f"Stopped by {signal.Signals(err.signum).name}: every submission graded so far is kept in "
                f"{err.out or out} (grades.csv lists them). Run the same command again to grade the rest.",
                err=True,
            )
        except OSError:  # no terminal left to tell
            pass
        raise SystemExit(128 + err.signum) from None
    raise SystemExit(run.exit_code)


@main.command()
@click.argument("submission", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-q", "--question", default=None, help="Check one question (a function name) only.")
@course_options
def check(submission: Path | None, question: str | None, course: Path | None, assignment: str | None):
    """Run the public tests on your notebook or .py file (in the assignment folder: the one you
    changed last)."""
    from . import check as check_

    if course is None and assignment is None:  # a student's folder needs no course
        raise SystemExit(check_.main(submission=submission, question=question))
    with paths.use(course=course, assignment=assignment):
        raise SystemExit(check_.main(submission=submission, question=question, assignment=assignment))


student.add_command(check)


@main.group()
def upload():
    """Put graded results into an LMS."""


@upload.command("canvas")
@click.argument("results", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--url", required=True, help="Your Canvas's address, e.g. https://canvas.example.edu.")
@click.option("--course", "course_id", required=True, type=int, help="The Canvas course id (in the course's address).")
@click.option(
    "--assignment", "assignment_id", required=True, type=int, help="The Canvas assignment id (in its address)."
)
@click.option("--yes", is_flag=True, help="Make the changes (without it: only show them).")
@click.option("--force", is_flag=True, help="Also overwrite grades changed by hand in Canvas since the last upload.")
def canvas(results: Path, url: str, course_id: int, assignment_id: int, yes: bool, force: bool):
    """Put each graded student's total and feedback from RESULTS (what `attnlab grade` wrote) into a
    Canvas assignment, with the access token in the environment variable CANVAS_TOKEN. Run it in the
    course folder: RESULTS's questions tell the assignment and its points.

    \b
    Exit status: 0 done (or, without --yes, shown); 1 stopped, the message says why (before any
    change, or part-way when Canvas failed: a re-run resumes); 2 wrong usage; 3 done, but something
    listed needs a human (a submission not graded or matching no student, a grade set by hand in
    Canvas and kept).
    """
    from .lms import canvas_upload

    try:
        done = canvas_upload.main(
            results=results, url=url, course=course_id, assignment=assignment_id, apply=yes, force=force
        )
    except canvas_upload.UploadError as err:
        raise click.ClickException(str(err)) from None
    except OSError as err:
        raise _fail_cleanly(err) from None
    raise SystemExit(done.exit_code)


@main.command()
@click.option(
    "--out",
    "out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("attnlab-demo"),
    show_default=True,
    help="Folder for the demo's output.",
)
@click.option(
    "--course",
    "course",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The course folder (default: the one holding the working directory, else a "
    "temporary copy of the bundled course).",
)
@click.option("--assignment", default=None, metavar="NAME", help="The assignment (default: the only one).")
def demo(out: Path, course: Path | None, assignment: str | None):
    """Build everything and grade the bundled sample submissions: the whole flow in one command."""
    from . import demo as demo_

    try:
        as_named = demo_.main(out=out, course_dir=paths.check_course(course) if course else None, assignment=assignment)
    except OSError as err:
        raise _fail_cleanly(err) from None
    raise SystemExit(0 if as_named else 1)


# Wide enough that no line breaks: rich takes a width from COLUMNS before it asks the terminal
UNWRAPPED = "100000"


def unwrapped_when_piped() -> None:
    """Output read by a program or kept in a file is not wrapped: rich wraps what is not a terminal at
    80 columns, which breaks paths mid-word. A COLUMNS the user set is kept; on a terminal, the
    terminal's width still applies."""
    try:
        terminal = sys.stdout.isatty() and sys.stderr.isatty()
    except (AttributeError, ValueError):  # no stream, or a closed one: certainly not a terminal
        terminal = False
    if not terminal:
        os.environ.setdefault("COLUMNS", UNWRAPPED)


def run(command: click.Command) -> NoReturn:
    """``command`` as a program: its exit code, without the interpreter's teardown
    (``importpath.exit_now``)."""
    unwrapped_when_piped()
    try:
        command.main()  # standalone: always ends in SystemExit
        code: Any = 0
    except SystemExit as e:
        code = e.code
    if code is None:
        code = 0
    elif not isinstance(code, int):  # as the interpreter does with sys.exit("message")
        print(code, file=sys.stderr)
        code = 1
    importpath.exit_now(code)


def student_program() -> NoReturn:
    """The student tool's ``attnlab`` command."""
    run(student)


if __name__ == "__main__":
    run(main)
