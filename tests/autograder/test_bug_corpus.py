"""Known one-bug submissions (tests/fixtures/bugs/<bug>_loses_<function>.py), graded in-process.

Each file is a whole correct submission with exactly one mistake in the function its name ends with.
"""

from pathlib import Path

import pytest

from in_process import grade_file

BUGS = sorted((Path(__file__).parent.parent / "fixtures" / "bugs").glob("*_loses_*.py"))

# The variant a bug's feedback must name, as "looks like <variant>".
NAMED = {
    "wrong_axis_loses_softmax": "softmax over axis 0",
    "no_max_subtraction_loses_softmax": "no max-subtraction",
    "global_max_loses_softmax": "a global instead of a row maximum",
    "integer_output_loses_softmax": "an integer output array",
    "few_default_perms_loses_is_permutation_equivariant": "too few default permutations",
    "triu_loses_causal_mask": "an upper-triangular (triu) mask",
    "strict_loses_causal_mask": "a strict causal mask",
    "missing_scale_loses_scaled_dot_product_attention": "no 1/sqrt(d_k) scaling",
    "divides_by_d_k_loses_scaled_dot_product_attention": "scores divided by d_k",
    "scales_by_d_v_loses_scaled_dot_product_attention": "scaling by sqrt(d_v)",
    "k_not_transposed_loses_scaled_dot_product_attention": "K not transposed",
    "qk_swapped_loses_scaled_dot_product_attention": "Q and K swapped",
    "softmax_over_queries_loses_scaled_dot_product_attention": "softmax over queries",
    "mask_after_softmax_loses_scaled_dot_product_attention": "mask applied after the softmax without renormalising",
    "inverted_mask_loses_scaled_dot_product_attention": "an inverted mask",
    "multiplicative_mask_loses_scaled_dot_product_attention": "a multiplicative mask",
    "qk_weights_swapped_loses_self_attention": "Q and K swapped",
    "scales_by_d_model_loses_self_attention": "scaling by sqrt(d_model)",
    "scales_by_d_v_loses_self_attention": "scaling by sqrt(d_v)",
    "ignores_mask_loses_self_attention": "the mask ignored",
    "strided_heads_loses_multi_head_attention": "heads split strided",
    "no_transpose_back_loses_multi_head_attention": "heads merged without transposing back",
    "forgets_w_o_loses_multi_head_attention": "W_O forgotten",
    "scales_by_d_model_loses_multi_head_attention": "scaling by sqrt(d_model) inside the heads",
    "scales_by_full_width_loses_multi_head_attention": "scaling by sqrt(the full width",
    "ignores_mask_loses_multi_head_attention": "the mask ignored",
    "builds_inverse_loses_permutation_matrix": "the inverse permutation",
    "tests_invariance_loses_is_permutation_equivariant": "a check for invariance",
    "identity_only_loses_is_permutation_equivariant": "checking only the identity",
    "one_swap_loses_is_permutation_equivariant": "checking only one swap",
    "sorted_rows_loses_is_permutation_equivariant": "comparing sorted rows or row multisets",
    "row_multiset_loses_is_permutation_equivariant": "comparing sorted rows or row multisets",
    "any_for_all_loses_is_permutation_equivariant": "any() instead of all()",
    "exact_equality_loses_is_permutation_equivariant": "exact equality",
    "inverse_permutation_loses_is_permutation_equivariant": "the inverse permutation",
    "tests_equivariance_loses_is_permutation_invariant": "a check for equivariance",
    "identity_only_loses_is_permutation_invariant": "checking only the identity",
    "any_for_all_loses_is_permutation_invariant": "any() instead of all()",
    "exact_equality_loses_is_permutation_invariant": "exact equality",
    "sorted_rows_loses_is_permutation_invariant": "comparing sorted rows or row multisets",
    "rotate_half_loses_rope": "the rotate-half layout",
    "clockwise_loses_rope": "a clockwise rotation",
    "positions_from_one_loses_rope": "positions counted from 1",
    "slopes_from_zero_loses_alibi_bias": "slopes starting at h = 0",
    "wrong_sign_loses_alibi_bias": "the wrong sign",
}


def test_is_the_corpus_large_and_is_every_bug_file_aimed_at_a_graded_function(test_files):
    questions = {tf.name for tf in test_files}
    assert len(BUGS) >= 40
    for path in BUGS:
        assert path.stem.split("_loses_")[1] in questions, path.name


@pytest.mark.parametrize("path", BUGS, ids=[p.stem for p in BUGS])
def test_does_the_bug_lose_points_only_on_its_function(path, test_files):
    target = path.stem.split("_loses_")[1]
    results = grade_file(path, test_files)
    score, possible, messages = results[target]
    assert score < possible, f"{path.name} kept full marks on {target}"
    others = {q: r[:2] for q, r in results.items() if q != target and r[0] != r[1]}
    assert not others, f"{path.name} also lost points on {others}"
    if path.stem in NAMED:
        assert any(f"looks like {NAMED[path.stem]}" in m for m in messages), messages
    assert all("[[" not in m and len(m) < 500 for m in messages), messages


def test_does_every_named_bug_have_a_file():
    assert set(NAMED) <= {p.stem for p in BUGS}
