"""Questions about `attnlab quiz verify` (attnlab.quiz.verify): does it derive every key?

Each corruption below edits a copy of the bank the way a slip of the instructor would; verify must
fail on every one of them, on the item that was broken, and pass the untouched copy.
"""

import shutil

import pytest

from attnlab.quiz import verify
from attnlab.quiz.bank import default_folder

PE, PROOF, NUMERIC, THEORY = (
    "1_positional_encoding.yaml",
    "2_permutation_proof.yaml",
    "3_numeric_illustration.yaml",
    "4_theory.yaml",
)

CORRUPTIONS = {  # name -> (file, text in it, replacement, id of the item that must fail)
    # wrong keys, one per item type
    "pe-dim0 doubled frequency": (PE, "key: sin(pos)\n", "key: sin(2*pos)\n", "pe-dim0"),
    "pe-dim0 cosine": (PE, "key: sin(pos)\n", "key: cos(pos)\n", "pe-dim0"),
    "pe-dim1 of pair 1": (PE, "key: cos(pos)\n", "key: cos(pos/10000**(2/d_model))\n", "pe-dim1"),
    "wavelength without 2 pi": (PE, "key: 2*pi*10000**(2*i/d_model)", "key: 10000**(2*i/d_model)", "wavelength"),
    "wavelength exponent": (PE, "key: 2*pi*10000**(2*i/d_model)", "key: 2*pi*10000**(i/d_model)", "wavelength"),
    "wavelength doubled": (PE, "key: 2*pi*10000**(2*i/d_model)", "key: 4*pi*10000**(2*i/d_model)", "wavelength"),
    "shift-block transposed": (
        PE,
        'key: "[[cos(k*w), sin(k*w)], [-sin(k*w), cos(k*w)]]"',
        'key: "[[cos(k*w), -sin(k*w)], [sin(k*w), cos(k*w)]]"',
        "shift-block",
    ),
    "rel-rotation sign": (PE, "key: s*cos(k*w) + c*sin(k*w)", "key: s*cos(k*w) - c*sin(k*w)", "rel-rotation"),
    "proof-q reversed": (PROOF, "key: P*Q\n", "key: Q*P\n", "proof-q"),
    "proof-kt unreversed": (PROOF, "key: K^T*P^T", "key: P^T*K^T", "proof-kt"),
    "proof-a conjugated the wrong way": (PROOF, "key: P*A*P^T", "key: P^T*A*P", "proof-a"),
    "proof-a rows only": (PROOF, "key: P*A*P^T", "key: P*A", "proof-a"),
    "proof-z undefined product": (PROOF, "key: P*Z\n  simplest", "key: Z*P^T\n  simplest", "proof-z"),
    "proof-z invariance": (PROOF, "key: P*Z\n  simplest", "key: Z\n  simplest", "proof-z"),
    "proof-z scaled by d_k": (PROOF, "key: P*Z\n  simplest", "key: P*Z*d_k/2\n  simplest", "proof-z"),
    "chain ends early": (PROOF, "  key: P*Z\n  solution", "  key: P*A*V\n  solution", "proof-chain"),
    "chain start wrong": (PROOF, "start: softmax(P*S*P^T)*(P*V)", "start: softmax(P*S*P^T)*V", "proof-chain"),
    "score-12 is score21": (NUMERIC, "key: score12", "key: score21", "score-12"),
    "score-12 is score11": (NUMERIC, "key: score12", "key: score11", "score-12"),
    "weight-21 is weight12": (NUMERIC, "key: weight21", "key: weight12", "weight-21"),
    "weight-21 is its complement": (NUMERIC, "key: weight21", "key: 1 - weight22 + 0.001", "weight-21"),
    "rope sign": (NUMERIC, "+ (q2*k1 - q1*k2)*sin", "+ (q1*k2 - q2*k1)*sin", "rope-relative"),
    "choice key moved": (
        PE,
        '  key: a\n  option_feedback:\n    b: "For i = 0',
        '  key: b\n  option_feedback:\n    b: "For i = 0',
        "fast-pair",
    ),
    "choice key to an unexplained option": (
        THEORY,
        '  key: d\n  option_feedback:\n    a: "APE adds a vector',
        '  key: a\n  option_feedback:\n    a: "APE adds a vector',
        "th-rope",
    ),
    "order key swapped": (PROOF, "key: [b, d, c, e, a]", "key: [d, b, c, e, a]", "proof-order"),
    # wrong tolerances: widened 100x, or not what the prompt asks for
    "score-12 tolerance 100x": (NUMERIC, "decimals: 2", "decimals: 0", "score-12"),
    "weight-21 tolerance 100x": (NUMERIC, "key: weight21\n  decimals: 5", "key: weight21\n  decimals: 3", "weight-21"),
    "weight-21 tolerance finer than asked": (
        NUMERIC,
        "key: weight21\n  decimals: 5",
        "key: weight21\n  decimals: 6",
        "weight-21",
    ),
    "weight-21 scores not rounded as asked": (NUMERIC, "rounded: {score21: 2, score22: 2}", "rounded: {}", "weight-21"),
    "weight-21-scaled scaled by d_k": (
        NUMERIC,
        "key: sweight21",
        "key: exp(score21/2)/(exp(score21/2) + exp(score22/2))",
        "weight-21-scaled",
    ),
    "notes' value wrong": (NUMERIC, "notes: 21.97", "notes: 21.96", "score-12"),
    # wrong domains
    "pos real": (
        PE,
        "symbols: {pos: nonneg, d_model: even_pos_int}\n  key: sin(pos)",
        "symbols: {pos: real, d_model: even_pos_int}\n  key: sin(pos)",
        "pe-dim0",
    ),
    "pos an integer": (
        PE,
        "symbols: {pos: nonneg, d_model: even_pos_int}\n  key: cos(pos)",
        "symbols: {pos: nonneg_int, d_model: even_pos_int}\n  key: cos(pos)",
        "pe-dim1",
    ),
    "i real": (
        PE,
        "symbols: {i: nonneg_int, d_model: even_pos_int}",
        "symbols: {i: real, d_model: even_pos_int}",
        "wavelength",
    ),
    "k real": (PE, "symbols: {k: int, w: positive}", "symbols: {k: real, w: positive}", "shift-block"),
    "theta any sign": (NUMERIC, "theta: positive}", "theta: real}", "rope-relative"),
    # a derivation removed: the key would only be graded against itself
    "no derivation": (PE, "  holds: ANSWER = PE(pos, 0)\n", "", "pe-dim0"),
}


@pytest.fixture(scope="module")
def pristine():
    return {r.name: r for r in verify.verify(folder=default_folder())}


def test_the_bank_passes(pristine):
    """Does every fact and every item of the shipped bank verify?"""
    failed = [f"{r.name}: {r.detail}" for r in pristine.values() if not r.ok]
    assert not failed


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_every_corruption_fails_on_its_item(tmp_path, name):
    """Does verify fail a copy of the bank with one corrupted key, tolerance or domain, on that item?"""
    file, old, new, item_id = CORRUPTIONS[name]
    bank = tmp_path / "quiz"
    shutil.copytree(default_folder(), bank)
    text = (bank / file).read_text(encoding="utf-8")
    assert text.count(old) == 1, "the corruption must apply to exactly one place"
    (bank / file).write_text(text.replace(old, new), encoding="utf-8")
    failed = [r for r in verify.verify(folder=bank) if not r.ok]
    assert [r.name.split()[1] for r in failed] == [item_id], [f"{r.name}: {r.detail}" for r in failed]


def test_a_missing_required_id_fails(tmp_path):
    """Does verify fail a bank that lacks one of SPEC's ids?"""
    bank = tmp_path / "quiz"
    shutil.copytree(default_folder(), bank)
    text = (bank / PE).read_text(encoding="utf-8")
    (bank / PE).write_text(text.replace("- id: pe-dim1", "- id: pe-dim-one"), encoding="utf-8")
    results = {r.name: r for r in verify.verify(folder=bank)}
    assert not results["required ids"].ok and "pe-dim1" in results["required ids"].detail


@pytest.mark.slow
def test_softmax_commutes_with_every_permutation():
    """Is softmax(P S P^T) = P softmax(S) P^T for all 30 permutations at n = 3, 4?"""
    assert verify.softmax_commutes_with_permutations().ok


@pytest.mark.slow
def test_self_attention_is_equivariant():
    """Is Z(P X) = P Z(X) with symbolic X and weights?"""
    assert verify.self_attention_is_equivariant().ok


def test_permutations_are_orthogonal():
    """Is P^T P = I for every permutation?"""
    assert verify.permutations_are_orthogonal().ok


def test_pe_breaks_equivariance():
    """Does adding PE give a counterexample to equivariance?"""
    assert verify.pe_breaks_equivariance().ok


# One corruption of each kind of definition (quiz/definitions.yaml): text in it, its replacement.
DEFINITION_CORRUPTIONS = {
    "a symbol's domain": ("  pos: nonneg\n", "  pos: real\n"),
    "a case of PE": ("2*i: sin(pos/10000**(2*i/d_model))", "2*i: cos(pos/10000**(2*i/d_model))"),
    "omega": ("is: 1/10000**(2*i/d_model)", "is: 1/10000**(i/d_model)"),
    "RoPE's rotation": (
        "[[cos(t*theta), -sin(t*theta)], [sin(t*theta)",
        "[[cos(t*theta), sin(t*theta)], [-sin(t*theta)",
    ),
    "a matrix definition": ("    Q: X*W_Q\n", "    Q: X*W_K\n"),
    "the permutation": ("  permutation: P\n", "  permutation: A\n"),
    "the proof's scalars": ("  scalars: [d_k]\n", "  scalars: []\n"),
    "an illustration input": ("X1: [[0.10, 1.30]]", "X1: [[0.20, 1.30]]"),
    "a quantity": ("score12: (X1*W_Q)*(X2*W_K)^T", "score12: (X1*W_Q)*(X1*W_K)^T"),
    "a scaled quantity": ("scaled21: score21/sqrt(2)", "scaled21: score21/2"),
    "how variants are drawn": ("W_Q: {integers: [1, 3]}", "W_Q: {integers: [0, 0]}"),
    "a quantity kept nontrivial": ("nontrivial: {score12: 2", "nontrivial: {score13: 2"),
    "a known wrong answer kept apart": ("[score11, score21, score22]", "[score11, score21x, score22]"),
}


@pytest.fixture(scope="module")
def new_course(tmp_path_factory):
    """A course made by `attnlab new`, as an instructor makes one."""
    from click.testing import CliRunner

    from attnlab.cli import main

    course = tmp_path_factory.mktemp("made") / "course"
    assert CliRunner().invoke(main, ["new", str(course)]).exit_code == 0
    return course


def _verify_from_elsewhere(course, elsewhere, monkeypatch):
    from click.testing import CliRunner

    from attnlab.cli import main

    monkeypatch.chdir(elsewhere)
    return CliRunner().invoke(main, ["quiz", "--course", str(course), "verify"])


@pytest.mark.parametrize("name", [None, *sorted(DEFINITION_CORRUPTIONS)])
def test_verify_of_another_course_reads_all_of_its_definitions(new_course, tmp_path, monkeypatch, name):
    """Run from a folder outside any course, does `quiz --course C verify` pass C as made and fail
    C with any one of its definitions corrupted?"""
    course = tmp_path / "course"
    shutil.copytree(new_course, course)
    if name is not None:
        old, new = DEFINITION_CORRUPTIONS[name]
        path = course / "quiz" / "definitions.yaml"
        text = path.read_text(encoding="utf-8")
        assert text.count(old) == 1, "the corruption must apply to exactly one place"
        path.write_text(text.replace(old, new), encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = _verify_from_elsewhere(course, elsewhere, monkeypatch)
    assert result.exit_code == (0 if name is None else 1), result.output[-2000:]


def test_show_and_check_use_the_named_courses_numbers(new_course, tmp_path, monkeypatch):
    """From outside any course, do `quiz --course C show` and `check` use C's own illustration
    numbers (here X1 = [0.20, 1.30], so Q_1 = [4.1, 1.7] and Score(1, 2) = 4.1*4.12 + 1.7*3.66 = 23.114)?"""
    from click.testing import CliRunner

    from attnlab.cli import main

    course = tmp_path / "course"
    shutil.copytree(new_course, course)
    path = course / "quiz" / "definitions.yaml"
    path.write_text(path.read_text().replace("X1: [[0.10, 1.30]]", "X1: [[0.20, 1.30]]"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    shown = CliRunner().invoke(main, ["quiz", "--course", str(course), "show", "score-12"])
    assert "[0.20, 1.30]" in shown.output
    assert CliRunner().invoke(main, ["quiz", "--course", str(course), "check", "score-12", "23.11"]).exit_code == 0
    assert CliRunner().invoke(main, ["quiz", "--course", str(course), "check", "score-12", "21.97"]).exit_code == 1


def test_a_misspelt_quantity_name_is_refused_by_name(new_course, tmp_path, monkeypatch):
    """Does verify say which name under `nontrivial` or `distinct` is no quantity, rather than fail
    each numeric item with a bare KeyError?"""
    course = tmp_path / "course"
    shutil.copytree(new_course, course)
    path = course / "quiz" / "definitions.yaml"
    path.write_text(
        path.read_text(encoding="utf-8").replace("score21, score22]", "score21x, score22]"), encoding="utf-8"
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = _verify_from_elsewhere(course, elsewhere, monkeypatch)
    assert result.exit_code == 1
    assert "score21x" in result.output and "KeyError" not in result.output, result.output[-2000:]
