"""One submission at a time: execution, calls across the channel, timeouts, crashes."""

import ast
import os

import pytest
from pathlib import Path

from attnlab import paths
from attnlab.grade import calls
from attnlab.grade.runner import Grader, Limits
from attnlab.grade.session import Output, Zygote

from attnlab.samples import expected_outcome, outcome
from known_outcomes import ENGINE, FIXTURES


@pytest.fixture(scope="module")
def zygote():
    from attnlab.grade.worker import claim_uid

    # a user id no other run's sandboxes hold (CI runs two Pythons' suites side by side)
    uid, lock = claim_uid() if os.geteuid() == 0 else (None, None)
    z = Zygote(uid=uid, gid=uid, memory_mb=2048, cpu_seconds=120)
    yield z
    z.close()
    if lock is not None:
        os.close(lock)


DEFAULT_LIMITS = Limits()


def grade(zygote, path, tests=ENGINE / "tests", support=None, limits=DEFAULT_LIMITS):
    """As a worker grades: with the call graph of the solution whose tests these are (references
    are lent only along it)."""
    return Grader(zygote, tests, support, limits, calls=calls.for_tests(Path(tests))["calls"]).grade(path)


@pytest.mark.parametrize("path", sorted((ENGINE / "submissions").iterdir()), ids=lambda p: p.name)
def test_does_each_engine_fixture_get_its_named_outcome(zygote, path):
    report = grade(zygote, path)
    assert outcome(report.score, report.possible) == expected_outcome(path.stem)


@pytest.mark.parametrize("path", sorted(paths.sample_submissions_dir().iterdir()), ids=lambda p: p.name)
def test_does_each_shared_sample_get_its_named_outcome(zygote, path):
    report = grade(zygote, path, paths.tests_dir(), paths.autograder_dir() / "support")
    assert outcome(report.score, report.possible) == expected_outcome(path.stem)


def test_does_a_test_see_its_input_changed_when_the_student_mutates_it(zygote):
    report = grade(zygote, ENGINE / "submissions" / "mutates_input_score_partial.py")
    failed = [c for q in report.questions for c in q.cases if not c.passed]
    assert [c.name for c in failed] == ["calls - 3"]
    assert failed[0].misconception == "in-place scaling"


def test_does_grader_check_score_the_question_as_it_was_at_that_cell(zygote):
    report = grade(zygote, ENGINE / "submissions" / "checked_early_score_partial.ipynb")
    failed = {c.name: c.message for q in report.questions for c in q.cases if not c.passed}
    assert list(failed) == ["calls - 4"] and "does not define `positive`" in failed["calls - 4"]
    assert any("RuntimeError: a broken cell" in e for e in report.errors)


def test_does_a_hanging_function_cost_only_its_own_points(zygote, tmp_path):
    twin = (FIXTURES / "twin.py").read_text()
    hang = tmp_path / "hang.py"
    hang.write_text(twin + "\n\ndef pe_shift_matrix(k, d_model, base=10000.0):\n    while True:\n        pass\n")
    honest = grade(zygote, FIXTURES / "twin.py", paths.tests_dir(), paths.autograder_dir() / "support")
    hung = grade(
        zygote, hang, paths.tests_dir(), paths.autograder_dir() / "support", Limits(call=1, statement=3, wall=60)
    )
    scores = {q.name: q.score for q in hung.questions}
    assert scores["pe_shift_matrix"] == 0
    assert scores["sinusoidal_pe"] == {q.name: q.score for q in honest.questions}["sinusoidal_pe"] > 0
    messages = [c.message for q in hung.questions for c in q.cases if q.name == "pe_shift_matrix"]
    assert all("timed out" in m for m in messages)


def test_does_a_hanging_callee_cost_only_its_own_points(zygote, tmp_path):
    """A softmax that never returns: the attention functions that call it time out with it, and are
    graded again with the reference softmax lent (a function struck for timing out with its own
    callee is not struck for a call with that callee's reference)."""
    from attnlab import release

    solution = release.solution.reference_source(paths.solution_file())
    hang = tmp_path / "hang.py"
    hang.write_text(solution + "\n\ndef softmax(x, axis=-1):\n    while True:\n        pass\n")
    report = grade(
        zygote, hang, paths.tests_dir(), paths.autograder_dir() / "support", Limits(call=1, statement=3, wall=120)
    )
    lost = {q.name for q in report.questions if q.score < q.possible}
    assert lost == {"softmax"}, {q.name: [c.message for c in q.cases if not c.passed] for q in report.questions}


def test_does_os_exit_at_import_keep_what_was_defined_before_it(zygote, tmp_path):
    sub = tmp_path / "exits.py"
    sub.write_text((ENGINE / "submissions" / "honest_score_full.py").read_text() + "\nimport os\nos._exit(3)\n")
    report = grade(zygote, sub)
    assert report.score == report.possible
    assert any("exited with status 3" in e for e in report.errors)


def test_does_the_fallback_without_namespaces_grade_and_sweep_daemons(tmp_path):
    """Where namespaces and a uid change are unavailable (a student's laptop), a subreaper zygote
    still collects and kills what a submission started in a new session."""
    sub = tmp_path / "daemon.py"
    sub.write_text(
        (ENGINE / "submissions" / "honest_score_full.py").read_text()
        + "\nimport subprocess, sys\nsubprocess.Popen([sys.executable, '-c', "
        "'import time\\nwhile True: time.sleep(1)  # attnlab-daemon-marker'], start_new_session=True)\n"
    )
    z = Zygote(uid=None, gid=None, memory_mb=2048, cpu_seconds=60, isolate=False)
    try:
        report = grade(z, sub)
    finally:
        z.close()
    assert report.score == report.possible
    cmdlines = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdlines.append(open(f"/proc/{pid}/cmdline", "rb").read())
        except OSError:
            pass
    assert not any(b"attnlab-daemon-marker" in c for c in cmdlines)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root")
def test_does_a_sandbox_never_run_as_root_even_where_namespaces_are_refused(tmp_path):
    """A container may refuse namespaces to root (Gradescope without CAP_SYS_ADMIN): the
    submission must still run as its own user, unable to write where only root may."""
    from attnlab.grade.worker import claim_uid

    secret = tmp_path / "root_only"
    secret.mkdir(mode=0o700)
    sub = tmp_path / "whoami.py"
    sub.write_text(
        (ENGINE / "submissions" / "honest_score_full.py").read_text()
        + f"\nimport os\nWHO = os.getuid()\ntry:\n    open({str(secret / 'x')!r}, 'w').write('x')\n"
        "    WROTE = True\nexcept OSError:\n    WROTE = False\n"
        "def whoami():\n    return WHO, WROTE\n"
    )
    uid, lock = claim_uid()
    z = Zygote(uid=uid, gid=uid, memory_mb=2048, cpu_seconds=60, isolate=False)
    try:
        report = grade(z, sub)
        sandbox = z.spawn(Output())
        sandbox.request("file", (sub.name, sub.read_bytes()), 10, "copying")
        sandbox.request("load", [sub.read_text()], 10, "compiling")
        for j in range(len(ast.parse(sub.read_text()).body)):
            sandbox.request("exec", (0, j), 10, "executing")
        assert tuple(sandbox.call("whoami", None, (), {}, 10)[0]) == (uid, False)
        sandbox.kill()
    finally:
        z.close()
        os.close(lock)
    assert report.score == report.possible
    assert not (secret / "x").exists()


CALLING_ATTENTION = """

def self_attention(X, W_Q, W_K, W_V, mask=None):
    return scaled_dot_product_attention(X @ W_Q, X @ W_K, X @ W_V, mask)


def multi_head_attention(X, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    d_h, d_v = W_Q.shape[1] // num_heads, W_V.shape[1] // num_heads
    heads = [
        scaled_dot_product_attention(
            X @ W_Q[:, h * d_h : (h + 1) * d_h], X @ W_K[:, h * d_h : (h + 1) * d_h], X @ W_V[:, h * d_v : (h + 1) * d_v], mask
        )[0]
        for h in range(num_heads)
    ]
    return np.concatenate(heads, axis=1) @ W_O
"""


def test_do_questions_lent_the_same_reference_share_one_fresh_sandbox(zygote, monkeypatch, tmp_path):
    # no scaling in scaled_dot_product_attention: self_attention and multi_head_attention both get
    # the reference lent; their public reruns and hidden cases need one sandbox besides the first
    # (both call scaled_dot_product_attention, and multi_head_attention not self_attention: it would
    # wait for self_attention's grade, which decides whether that reference is lent too)
    import bug_corpus

    corpus = bug_corpus.load()
    sample = tmp_path / "no_scaling.py"
    sample.write_text(
        corpus.compose(FIXTURES.parent / "bugs" / "missing_scale_loses_scaled_dot_product_attention.py")
        + CALLING_ATTENTION
    )
    spawned = []
    spawn = zygote.spawn
    monkeypatch.setattr(zygote, "spawn", lambda output, **kw: spawned.append(output) or spawn(output, **kw))
    tests = paths.tests_dir()
    graph = calls.for_tests(tests)["calls"]
    report = Grader(zygote, tests, paths.autograder_dir() / "support", DEFAULT_LIMITS, calls=graph).grade(sample)
    lent = {c.question for q in report.questions for c in q.cases if c.note}
    assert lent == {"self_attention", "multi_head_attention"}
    reruns = [c for q in report.questions for c in q.cases if c.note and not c.hidden]
    assert reruns, "a public case of a question lent a reference runs again with it"
    assert len(spawned) == 2


def test_does_a_two_way_cycle_score_no_more_than_leaving_both_formulas_out(zygote, tmp_path):
    """The positional encoding written through the function that adds it and the softmax through
    the attention (each of those the honest one-liner the other way): lent each other's
    references, all four would pass with neither formula written. It must score no more than the
    same one-liners on stubs, which are lent the stubs' references."""
    tests = paths.tests_dir()
    graph = calls.for_tests(tests)["calls"]
    twin = (FIXTURES / "twin.py").read_text()
    scores = {}
    for side in ("attack", "honest"):
        path = tmp_path / f"{side}.py"
        path.write_text(twin + "\n\n" + (FIXTURES / "pairs" / f"two_way_cycle.{side}.py").read_text())
        report = Grader(zygote, tests, paths.autograder_dir() / "support", DEFAULT_LIMITS, calls=graph).grade(path)
        scores[side] = {q.name: q.score for q in report.questions}
    assert sum(scores["attack"].values()) <= sum(scores["honest"].values())
    assert scores["attack"]["sinusoidal_pe"] == scores["attack"]["softmax"] == 0
    # the honest one-liners are graded with the stubs' references, as the solution's graph lends them
    assert scores["honest"]["add_positional_encoding"] > 0 and scores["honest"]["scaled_dot_product_attention"] > 0


# the sandbox's runtime made to answer "calls" with something that is no usable graph
FORGED_CALLS = {
    "not_a_graph": "None",
    "too_large": "{'f%d' % i: [] for i in range(25_000)}",
}


@pytest.mark.parametrize("forged", sorted(FORGED_CALLS))
def test_does_an_unreadable_call_graph_hide_no_two_way_cycle(zygote, tmp_path, forged):
    """The two-way cycle, with the runtime's reply to "calls" forged so that the grader cannot read
    the submission's own calls: the cycle those calls make must not go unseen and let each formula
    be graded with the other's reference. Unreadable, the graph lends nothing, and says so."""
    tests = paths.tests_dir()
    graph = calls.for_tests(tests)["calls"]
    twin = (FIXTURES / "twin.py").read_text()
    forge = (
        "\n\nimport gc as _gc\n\nfor _o in _gc.get_objects():\n"
        "    if type(_o).__name__ == 'Runtime' and hasattr(_o, 'do_calls'):\n"
        f"        _o.do_calls = lambda _body: {FORGED_CALLS[forged]}\n"
    )
    scores, notes = {}, {}
    for side in ("attack", "honest"):
        path = tmp_path / f"{side}.py"
        path.write_text(twin + "\n\n" + (FIXTURES / "pairs" / f"two_way_cycle.{side}.py").read_text() + forge)
        report = Grader(zygote, tests, paths.autograder_dir() / "support", DEFAULT_LIMITS, calls=graph).grade(path)
        scores[side] = sum(q.score for q in report.questions)
        notes[side] = report.notes
    assert scores["attack"] <= scores["honest"]
    assert any("could not be read" in n for n in notes["attack"])


def test_is_a_submission_left_ungraded_rather_than_scored_zero_when_no_sandbox_can_be_had():
    """A zygote gone (killed, say, by an earlier submission on a kernel that lets signals through)
    is the grader's failure, not the student's: no grade, so that ``attnlab grade`` retries it."""
    from attnlab.grade.runner import SandboxUnavailable

    z = Zygote(uid=None, gid=None, memory_mb=1024, cpu_seconds=60)
    z.proc.kill()
    z.proc.wait()
    try:
        with pytest.raises(SandboxUnavailable):
            grade(z, paths.sample_submissions_dir() / "loops_score_full.py", paths.tests_dir())
    finally:
        z.close()


# ---- the whole submission in one request, and the statement-by-statement run it falls back to

HONEST = (ENGINE / "submissions" / "honest_score_full.py").read_text()
NOTEBOOK = ENGINE / "submissions" / "checked_early_score_partial.ipynb"


def _with_cell(cells: list[str], path: Path) -> Path:
    """A notebook of the checked-early fixture's cells and ``cells`` after them."""
    import nbformat

    nb = nbformat.read(NOTEBOOK, as_version=4)
    nb.cells += [nbformat.v4.new_code_cell(c) for c in cells]
    nbformat.write(nb, path)
    return path


WHOLE_OR_STATEMENTS = {
    "raises mid-cell": lambda d: _write(d / "raises.py", "print('before')\nraise ValueError('stop')\n" + HONEST),
    "exits at a statement": lambda d: _write(
        d / "exits.py", HONEST + "\nprint('ran')\nimport os\nos._exit(3)\ndef double(x):\n    return 0\n"
    ),
    "hangs at a statement": lambda d: _write(
        d / "hangs.py", "def scale(x):\n    return 0\nwhile True:\n    pass\n" + HONEST
    ),
    "syntax error": lambda d: _write(d / "syntax.py", HONEST + "\ndef broken(:\n"),
    "a notebook that checks, raises, then exits": lambda d: _with_cell(
        ["print('late')", "import os\nos._exit(0)", "def scale(x):\n    return x"], d / "checks_then_exits.ipynb"
    ),
    "a notebook that checks and raises": lambda d: NOTEBOOK,
}


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _statement_by_statement(run, sb, first) -> bool:
    run.whole_failed = True
    sb.kill()
    return False


def _as_run(report) -> tuple:
    return (
        [(c.name, c.passed, c.message) for q in report.questions for c in q.cases],
        report.errors,
        report.log,
        report.notes,
    )


@pytest.mark.parametrize("case", sorted(WHOLE_OR_STATEMENTS), ids=str)
def test_does_running_the_submission_in_one_request_grade_as_running_it_statement_by_statement(
    zygote, tmp_path, monkeypatch, case
):
    """Whatever the whole-submission request meets (an error mid-cell, a process that exits or hangs,
    a syntax error, grader.check), the report is the statement-by-statement run's."""
    from attnlab.grade import runner

    path = WHOLE_OR_STATEMENTS[case](tmp_path)
    limits = Limits(call=1, statement=2, wall=60)
    whole = grade(zygote, path, limits=limits)
    with monkeypatch.context() as m:
        m.setattr(runner._Run, "run_whole", _statement_by_statement)
        by_statement = grade(zygote, path, limits=limits)
    assert _as_run(whole) == _as_run(by_statement)


def test_does_a_submission_that_runs_to_its_end_take_one_request_to_execute(zygote, monkeypatch):
    from attnlab.grade import session

    kinds: list[str] = []
    request = session.Sandbox.request

    def counted(self, kind, *args, **kwargs):
        kinds.append(kind)
        return request(self, kind, *args, **kwargs)

    monkeypatch.setattr(session.Sandbox, "request", counted)
    report = grade(zygote, NOTEBOOK)
    assert kinds.count("run") == 1 and "exec" not in kinds and "load" not in kinds
    assert any("RuntimeError: a broken cell" in e for e in report.errors)
