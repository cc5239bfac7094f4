"""The comparisons with torch refuse what they must: a check that cannot fail checks nothing."""

import numpy as np
import pytest
from torch_oracle import assert_exact, assert_sum_close, assert_ulps, ulp_distance

ROOT_TWO = np.float64(1.4142135623730951)
ONE_ULP_BELOW = np.nextafter(ROOT_TWO, 0.0)


def test_the_ulp_distance_counts_representable_numbers_between():
    assert ulp_distance(ROOT_TWO, ONE_ULP_BELOW) == 1.0
    assert ulp_distance(np.float32(1.0), np.nextafter(np.float32(1.0), np.float32(2.0))) == 1.0


def test_a_transcendental_result_one_ulp_from_torchs_passes():
    assert_ulps(np.array([ROOT_TWO, 2.0]), np.array([ONE_ULP_BELOW, 2.0]))


def test_a_result_five_ulps_from_torchs_fails():
    far = ROOT_TWO
    for _ in range(5):
        far = np.nextafter(far, 0.0)
    with pytest.raises(AssertionError, match="5 ulps from torch"):
        assert_ulps(np.array([ROOT_TWO]), np.array([far]))


def test_nan_where_torch_has_a_number_fails_every_comparison():
    for check in (assert_ulps, assert_exact):
        with pytest.raises(AssertionError):
            check(np.array([np.nan, 1.0]), np.array([0.0, 1.0]))
    with pytest.raises(AssertionError, match="NaN differ"):
        assert_sum_close(np.array([np.nan]), np.array([0.0]), terms=4)


def test_an_infinity_of_the_other_sign_fails():
    with pytest.raises(AssertionError, match="infinities differ"):
        assert_ulps(np.array([np.inf]), np.array([-np.inf]))


def test_another_dtype_fails_even_with_equal_values():
    with pytest.raises(AssertionError, match="dtype float32 != torch's float64"):
        assert_ulps(np.array([1.0], np.float32), np.array([1.0]))


def test_an_exact_comparison_tells_negative_zero_from_zero():
    with pytest.raises(AssertionError, match="signed zeros differ"):
        assert_exact(np.array([-0.0]), np.array([0.0]))
    with pytest.raises(AssertionError):
        assert_exact(ROOT_TWO, ONE_ULP_BELOW)


def test_a_sum_may_differ_by_its_terms_rounding_and_no_more():
    exact = np.array([10.0])
    assert_sum_close(exact * (1 + 3 * np.finfo(float).eps), exact, terms=1)
    with pytest.raises(AssertionError):
        assert_sum_close(exact * (1 + 1e-12), exact, terms=8)
