"""Each mistake costs points once, in its own function: the call graph from the solution, the grading
order it gives, and references lent to the callers of a function that fails its own cases."""

import json
import zipfile

import numpy as np
import pytest

from attnlab import build, paths, release, testfiles
from attnlab.grade import calls
from attnlab.grade.runner import Grader, Lent, Limits
from attnlab.grade.session import Zygote

import bug_corpus


BUGS = bug_corpus.load().BUGS

# What each bundled sample gets wrong, by the functions that hold the mistake (its name says how it
# scores). A sample whose mistake is in a function others call (no_scaling, softmax_over_queries:
# scaled_dot_product_attention; the two sinusoidal_pe samples) loses points there and nowhere else.
SAMPLE_MISTAKES = {
    "concat_halves_score_partial": {"sinusoidal_pe"},
    "einsum_batched_score_full": set(),
    "equivariance_checks_only_swaps_score_partial": {"is_permutation_equivariant", "is_permutation_invariant"},
    "loops_score_full": set(),
    "missing_function_score_partial": {"pe_shift_matrix"},
    "no_scaling_score_partial": {"scaled_dot_product_attention"},
    "rope_clockwise_score_partial": {"rope"},
    "sin_cos_swapped_score_partial": {"sinusoidal_pe"},
    "softmax_over_queries_score_partial": {"scaled_dot_product_attention"},
    "vectorised_notebook_score_full": set(),
}


def test_is_the_call_graph_read_from_the_solution():
    graph = calls.graph(paths.solution_file().read_text(encoding="utf-8"))
    assert graph["scaled_dot_product_attention"] == ["softmax"]
    assert graph["self_attention"] == ["scaled_dot_product_attention"]
    assert graph["multi_head_attention"] == ["scaled_dot_product_attention"]
    assert graph["add_positional_encoding"] == ["sinusoidal_pe"]
    assert "permutation_matrix" in graph["is_permutation_equivariant"]
    assert graph["softmax"] == [] and graph["causal_mask"] == []


def test_does_a_call_through_a_helper_that_is_not_graded_count():
    graph = calls.graph("def a():\n    return helper()\n\ndef helper():\n    return b()\n\ndef b():\n    return 1\n")
    assert calls.reach("a", graph) == {"helper", "b"}
    assert calls.order(["a", "b"], graph) == ["b", "a"]


def test_is_a_call_chain_deeper_than_pythons_recursion_put_in_order():
    """A submission's graph may be as deep as it likes: a chain of 10,000 functions."""
    chain = [f"f{i:05d}" for i in range(10_000)]
    graph = {a: [b] for a, b in zip(chain, chain[1:])}
    assert calls.order(chain, graph) == chain[::-1]
    assert calls.among([chain[0], chain[-1]], graph) == {chain[0]: [chain[-1]], chain[-1]: []}


def test_is_a_reference_never_lent_to_a_function_it_calls_back():
    """The submission's own calls against the solution's direction (its positional encoding through
    the function that adds it, its softmax through the attention) make cycles: along them nothing
    is lent either way, and what the solution's graph lends elsewhere stays."""
    solution = calls.graph(paths.solution_file().read_text(encoding="utf-8"))
    student = {
        **solution,
        "sinusoidal_pe": ["add_positional_encoding"],
        "softmax": ["scaled_dot_product_attention"],
    }
    lendable = calls.lendable(student)
    assert "add_positional_encoding" not in lendable["sinusoidal_pe"]
    assert "sinusoidal_pe" not in lendable["add_positional_encoding"]
    assert "scaled_dot_product_attention" not in lendable["softmax"]
    assert "softmax" not in lendable["scaled_dot_product_attention"]
    assert {"scaled_dot_product_attention", "softmax"} <= lendable["self_attention"]
    assert calls.lendable(solution)["add_positional_encoding"] == {"sinusoidal_pe"}


def test_is_nothing_ever_lent_to_itself_or_to_a_function_it_calls():
    """Whatever calls a submission claims (here every function calling every other), no function
    is lent itself, nor a function that the solution has call it."""
    solution = calls.graph(paths.solution_file().read_text(encoding="utf-8"))
    everything = {name: sorted(solution) for name in solution}
    for name, lent in calls.lendable(everything).items():
        assert name not in lent
        assert not any(name in calls.reach(c, solution) for c in lent)
    assert all(not lent for lent in calls.lendable(everything).values())


def test_are_callees_graded_before_the_functions_that_call_them():
    names = [tf.name for tf in testfiles.load_dir(paths.tests_dir())]
    graph = calls.for_tests(paths.tests_dir())["calls"]
    ordered = calls.order(names, graph)
    assert sorted(ordered) == sorted(names)
    assert ordered.index("softmax") < ordered.index("scaled_dot_product_attention") < ordered.index("self_attention")
    assert ordered.index("sinusoidal_pe") < ordered.index("add_positional_encoding")
    assert ordered.index("permutation_matrix") < ordered.index("is_permutation_invariant")


def test_has_every_function_that_another_calls_a_reference_to_lend(test_files):
    """A test file lends ``reference``; one missing here would leave a caller charged for its callee."""
    graph = calls.for_tests(paths.tests_dir())["calls"]
    graded = {tf.name: tf for tf in test_files}
    called = {c for tf in test_files for c in calls.reach(tf.name, graph) if c in graded}
    assert called == {"softmax", "scaled_dot_product_attention", "sinusoidal_pe", "permutation_matrix"}
    assert all(graded[c].reference is not None for c in called)


def test_does_a_lent_reference_share_no_cache_with_the_tests(test_files, monkeypatch):
    """A reference lent to the student's code runs on whatever that code passes it. The oracle keeps
    the values its tests compute (one memo for every test and every student a worker grades), and an
    answer from it comes back hundreds of times sooner: the student's code could time which inputs
    the hidden cases, an earlier sandbox or an earlier student asked for, and leave marks there for
    a later one. A lent reference neither reads that memo nor fills it."""
    softmax = next(tf for tf in test_files if tf.name == "softmax").reference
    # the memo of the oracle this reference came from (another test may have imported the oracle
    # again, from a course's copy, since the test files were loaded)
    memo = softmax.__globals__
    assert "_copy" in memo, "the reference is the oracle's memoised softmax"
    touched = []
    copy = memo["_copy"]
    monkeypatch.setitem(memo, "_copy", lambda value: touched.append(1) or copy(value))
    asked, fresh = np.random.default_rng(7).normal(size=(2, 6, 5))
    expected = softmax(asked)  # the tests' own call: kept
    assert touched
    touched.clear()
    lent = Lent(softmax, 10.0)
    assert np.array_equal(lent(asked), expected) and lent(fresh).shape == fresh.shape
    assert touched == []


def test_do_the_public_tests_leave_the_reference_out():
    for name, text in release.files().items():
        if name.startswith("tests/"):
            assert "reference" not in text.split("def test_")[0], name


def test_does_the_course_setting_turn_isolation_off(tmp_path):
    (tmp_path / paths.MARKER).write_text("[grading]\nisolate_dependencies = false\n")
    (tmp_path / "solutions" / "pe_attention").mkdir(parents=True)
    (tmp_path / "solutions" / "pe_attention" / "pe_attention.py").write_text(paths.solution_file().read_text())
    with paths.use(course=tmp_path):
        found = calls.for_course("pe_attention")
    assert found["isolate"] is False and found["calls"]["self_attention"] == ["scaled_dot_product_attention"]
    with paths.use(course=paths.kit_root()):
        assert calls.for_course("pe_attention")["isolate"] is True


def test_does_a_marker_that_is_not_toml_say_so_in_one_line(tmp_path):
    (tmp_path / paths.MARKER).write_text("[grading\n")
    with paths.use(course=tmp_path), pytest.raises(paths.CourseError, match="is not valid TOML"):
        paths.setting("grading", "isolate_dependencies", True)


@pytest.mark.parametrize("marker", [b"[grading\n", b"[grading]\nisolate_dependencies = true # caf\xe9\n"])
def test_does_a_marker_that_cannot_be_read_stop_grading_rather_than_drop_the_course_settings(tmp_path, marker):
    """Taken as no course, it would grade with no call graph and nothing lent: other grades, silently."""
    (tmp_path / paths.MARKER).write_bytes(marker)
    tests = tmp_path / "autograder" / "pe_attention" / "tests"
    tests.mkdir(parents=True)
    with paths.use(course=tmp_path), pytest.raises(paths.MarkerError, match=paths.MARKER):
        calls.for_tests(tests)


def test_does_the_autograder_zip_carry_the_graph_that_attnlab_grade_uses(tmp_path):
    target = build.autograder_zip(out=tmp_path)
    with zipfile.ZipFile(target) as zf:
        shipped = json.loads(zf.read(calls.FILE))
    assert shipped == calls.for_course(paths.current_assignment())
    zipfile.ZipFile(target).extract(calls.FILE, tmp_path / "ag")
    assert calls.for_tests(tmp_path / "ag" / "tests") == shipped


@pytest.fixture(scope="module")
def one_run(graded_by_default):
    """Every bug of the corpus (composed with its correct base) and every sample, graded in one run
    (the session's, which test_no_leaks reads too)."""
    found = [json.loads(p.read_text()) for p in (graded_by_default / "submissions").glob("*/results.json")]
    return {results["extra_data"]["submission"]: results for results in found}


def _lost(results: dict) -> set[str]:
    extra = results["extra_data"]
    return {q for q, score in extra["questions"].items() if score < extra["possible"][q]}


@pytest.mark.slow
@pytest.mark.parametrize("overlay", BUGS, ids=[p.stem for p in BUGS])
def test_does_a_one_bug_submission_lose_points_in_its_function_and_nowhere_else(one_run, overlay):
    target = overlay.stem.split("_loses_")[1]
    results = one_run[f"bug_{overlay.stem}"]
    assert _lost(results) == {target}
    # the item analysis counts a mistake once: only the function with the bug has a named one
    named = {t["extra_data"]["question"] for t in results["tests"] if t["extra_data"]["misconception"]}
    assert named <= {target}


OWN_CALLS = bug_corpus.load().OWN_CALLS


# the base's functions built on its own where the solution's are not: no reference is lent along
# these edges (only the solution's graph lends), so the caller is graded with the student's callee
OWN_CALLERS = {"self_attention": "multi_head_attention", "pe_shift_matrix": "rope"}


@pytest.mark.slow
@pytest.mark.parametrize("overlay", OWN_CALLS, ids=[p.stem for p in OWN_CALLS])
def test_does_a_bug_in_a_function_the_students_own_code_calls_cost_points_there_and_point_callers_at_it(
    one_run, overlay
):
    """The base's multi_head_attention calls its self_attention, its rope its pe_shift_matrix, where
    the reference solution's call neither: nothing is lent there, so the caller may lose points too,
    and each of its failing rows sends the student to the callee with the whole sentence (a
    Gradescope box of its own has no "above"). Where the solution's graph does
    lend (softmax under attention) but the reference cannot stand in (the student's own softmax
    takes `dim`, and so does their attention's call of it), the caller keeps what it earns."""
    target = overlay.stem.split("_loses_")[1]
    results = one_run[f"own_{overlay.stem}"]
    lost = _lost(results)
    assert target in lost and lost <= {target, OWN_CALLERS.get(target)}
    for caller in lost - {target}:
        failing = [
            t["output"]
            for t in results["tests"]
            if t["extra_data"]["question"] == caller and t["score"] < t["max_score"]
        ]
        assert all(f"uses your `{target}`" in row and f"fix `{target}` first" in row for row in failing), failing


@pytest.mark.slow
def test_does_the_base_built_on_its_own_functions_get_full_marks(one_run):
    assert _lost(one_run["own_base"]) == set()


@pytest.mark.slow
@pytest.mark.parametrize("sample", sorted(SAMPLE_MISTAKES))
def test_does_a_sample_lose_points_only_where_its_mistakes_are(one_run, sample):
    assert _lost(one_run[sample]) == SAMPLE_MISTAKES[sample]


@pytest.mark.slow
def test_are_results_in_the_test_files_order_whatever_the_grading_order(one_run):
    rows = one_run["no_scaling_score_partial"]["tests"]
    questions = list(dict.fromkeys(t["extra_data"]["question"] for t in rows))
    assert questions == sorted(questions)


@pytest.mark.slow
def test_does_a_row_graded_with_a_lent_reference_say_so(one_run):
    rows = [t for t in one_run["no_scaling_score_partial"]["tests"] if t["extra_data"]["question"] == "self_attention"]
    assert rows and all(t["status"] == "passed" for t in rows)
    because = "graded with the reference `scaled_dot_product_attention`, because yours fails its own tests"
    assert all(t["output"].splitlines()[-1] == because for t in rows)
    untouched = [t for t in one_run["no_scaling_score_partial"]["tests"] if t["extra_data"]["question"] == "rope"]
    assert all(t["output"] == "passed" for t in untouched)


@pytest.mark.slow
def test_without_isolation_does_a_mistake_cost_its_callers_too(tmp_path):
    """The course setting off: the old behaviour, as under otter."""
    zygote = Zygote(uid=None, gid=None, memory_mb=2048, cpu_seconds=120)
    try:
        graph = calls.for_tests(paths.tests_dir())["calls"]
        sample = paths.sample_submissions_dir() / "no_scaling_score_partial.py"
        lost, rows = {}, {}
        for isolate in (True, False):
            grader = Grader(zygote, paths.tests_dir(), paths.support_dir(), Limits(), calls=graph, isolate=isolate)
            report = grader.grade(sample)
            lost[isolate] = {q.name for q in report.questions if q.score < q.possible}
            rows[isolate] = [c for q in report.questions if q.name == "self_attention" for c in q.cases]
    finally:
        zygote.close()
    assert lost[True] == {"scaled_dot_product_attention"}
    assert lost[False] > {"scaled_dot_product_attention", "self_attention"}
    # charged for its callee, the caller's rows point at it and guess no mistake of their own
    failed = [c for c in rows[False] if not c.passed]
    blame = "`self_attention` uses your `scaled_dot_product_attention`, which fails its own public test"
    # every row says it itself (a Gradescope box of its own has no "above")
    assert failed and all(c.message.startswith(blame) and "as above" not in c.message for c in failed)
    assert all(c.misconception is None for c in failed)
