"""The ``attnlab quiz`` command group: a thin click layer over check, verify, grade, bank and interactive."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..lms.identity import QUIZ_ID
from . import bank
from .check import check as check_answer
from .interactive import run as run_interactive
from .kinds import KINDS
from .variants import illustration
from .verify import verify as run_verify


# -h as well as --help, as in the attnlab command: set here too, since this group also runs on its own
@click.group(invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--student", default=None, help="Student id: numeric items use this student's numbers.")
@click.option(
    "--course",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The course folder whose bank to use (default: the one holding the working directory).",
)
@click.pass_context
def quiz(ctx: click.Context, student: str | None, course: Path | None) -> None:
    """The self-assessment quiz. Without a subcommand: take it interactively in the terminal."""
    ctx.obj = {"student": student}
    if course is not None:
        from .. import paths

        ctx.with_resource(paths.use(course=course))
    if ctx.invoked_subcommand is None:
        run_interactive(items=bank.load(), student=student)


# An answer may begin with "-" (-sin(x), -1.5): unknown options are taken as answer text.
@quiz.command("check", context_settings={"ignore_unknown_options": True})
@click.argument("item_id", metavar="ID")
@click.argument("answer", nargs=-1, required=True, type=click.UNPROCESSED)
@click.option("--student", default=None, help="Your student number as on the roster: numeric items use your numbers.")
@click.pass_context
def check_cmd(ctx: click.Context, item_id: str, answer: tuple[str, ...], student: str | None) -> None:
    """Check ANSWER to question ID.

    Exit 0 right (or graded by hand or by your instructor: no verdict here), 1 wrong, 2 unreadable,
    3 a fault of the checker. An answer may start with "-" and may span several words.
    """
    items = bank.load()
    if item_id not in items:
        click.echo(f"No question '{item_id}'. Try `attnlab quiz list`.", err=True)
        sys.exit(2)
    text = " ".join(answer)
    verdict = check_answer(items[item_id], text, student=student or (ctx.obj or {}).get("student"))
    click.echo(verdict.message)
    sys.exit(verdict.exit_code)


@quiz.command("show")
@click.argument("item_id", metavar="ID")
@click.option("--student", default=None, help="Your student number as on the roster: show your own numbers.")
@click.pass_context
def show_cmd(ctx: click.Context, item_id: str, student: str | None) -> None:
    """Show question ID, with your own numbers for numeric questions."""
    items = bank.load()
    if item_id not in items:
        click.echo(f"No question '{item_id}'. Try `attnlab quiz list`.", err=True)
        sys.exit(2)
    item = items[item_id]
    numbers = illustration(student=student or (ctx.obj or {}).get("student"))
    click.echo(f"{item.title} ({item.points:g} pt)\n{numbers.render(item.prompt)}")
    if KINDS[item.type].per_student:
        # named as the numbers were drawn: a blank id draws none, and s1 is S1
        whose = f"student {numbers.student}'s numbers" if numbers.student else "the notes' numbers; yours differ"
        click.echo(f"({whose}: your quiz is graded with the numbers of {QUIZ_ID}; pass it as --student)")
    for label, text in item.options.items():
        click.echo(f"  {label}) {text}")


@quiz.command("verify")
@click.option(
    "--bank",
    "folder",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="The bank folder to verify (default: the kit's quiz/).",
)
def verify_cmd(folder: Path | None) -> None:
    """Derive every key from the definitions and prove the facts behind them; exit 1 if anything fails."""
    try:
        results = run_verify(folder=folder)
    except bank.BankError as err:
        raise click.ClickException(str(err)) from None
    for r in results:
        mark = "ok  " if r.ok else "FAIL"
        click.echo(f"{mark} {r.name}" + (f"  ({r.detail})" if r.detail else ""))
    failed = [r for r in results if not r.ok]
    click.echo(f"{len(results) - len(failed)}/{len(results)} passed")
    sys.exit(1 if failed else 0)


@quiz.command("list")
def list_cmd() -> None:
    """List the questions: id, type, points, how each is graded, title; then the totals."""
    from .kinds import KINDS

    items = list(bank.load().values())

    def how(item: bank.Item) -> str:
        if item.practice:
            return "practice"  # its key is in the student tool: for self-checking
        return "auto" if KINDS[item.type].has_key else "by hand"

    for item in items:
        click.echo(f"{item.id:<18} {item.type:<9} {item.points:>4g}  {how(item):<8}  {item.title}")
    by_hand = sum(i.points for i in items if how(i) == "by hand")
    auto = sum(i.points for i in items if how(i) != "by hand")
    practice = sum(how(i) == "practice" for i in items)
    click.echo(
        f"total {auto + by_hand:g} points: {auto:g} auto-graded, {by_hand:g} graded by hand; "
        f"{practice} practice question(s), {sum(i.points for i in items if i.practice):g} points"
    )


@quiz.command("grade")
@click.argument("submissions", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for quiz_grades.csv, the import files, each submission's results.json and the free-response answers.",
)
@click.option(
    "--roster",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Canvas gradebook export (CSV): names students, gives their student numbers; writes canvas_import.csv.",
)
@click.option("--column", default=None, help="The roster's quiz column, by title or Canvas id.")
@click.option(
    "--scale", is_flag=True, help="Scale canvas_import.csv's totals to the roster's Points Possible when they differ."
)
@click.option(
    "--hand-graded",
    "hand_graded",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="The free-response points you graded by hand (RESULTS/free_response/hand_graded.csv, "
    "filled in): merged into each submission's total.",
)
def grade_cmd(
    submissions: tuple[Path, ...],
    out: Path,
    roster: Path | None,
    column: str | None,
    scale: bool,
    hand_graded: Path | None,
) -> None:
    """Grade quiz notebooks and .py files (or folders, zips, LMS downloads of them) by reading their
    answers as text. Students are identified as `attnlab grade` identifies them; numeric questions use
    the numbers of the student number. Free-response answers are gathered into RESULTS/free_response/,
    one file per question, with a sheet for their points; give it back with --hand-graded.

    \b
    Exit status: 0 all graded; 1 nothing graded (the message says why); 3 graded, but something
    needs a human (listed)."""
    from rich.console import Console

    from ..grade.batch import found_lines
    from ..grade.report import shown
    from ..lms import imports
    from . import batch, handgrading

    try:
        run = batch.main(
            submissions=list(submissions), out=out, roster=roster, column=column, scale=scale, hand_graded=hand_graded
        )
    except (ValueError, FileNotFoundError) as err:
        raise click.ClickException(str(err)) from None
    except OSError as err:
        raise click.ClickException(f"{err.strerror or err}: {err.filename}" if err.filename else str(err)) from None
    for line in found_lines(run.found):  # what was found and ignored: in `attnlab grade`'s words
        Console(highlight=False, soft_wrap=True).print(line)
    for row in sorted(run.rows, key=lambda r: r.submission):
        total = "-" if row.total is None else f"{row.total:g}"
        click.echo(f"{shown(row.submission)}: {total}" + (f" ({row.status}: {row.problem})" if row.problem else ""))
    # the roster's students without a submission, submissions without a student, students claimed
    # twice: in `attnlab grade`'s words
    for line in imports.summary(run.claims, run.roster, run.matching):
        Console(highlight=False, soft_wrap=True).print(line)
    for name, why in run.not_written.items():
        click.echo(f"not written {name}: {why}")
    click.echo("wrote " + ", ".join(str(p) for p in run.written))
    if handgrading.items():
        sheet = out / handgrading.FOLDER / handgrading.SHEET
        click.echo(
            f"wrote {out / handgrading.FOLDER}/: the free-response answers, one file per question; "
            f"grade them in {sheet} and run this again with --hand-graded {sheet}"
        )
    sys.exit(run.exit_code)
