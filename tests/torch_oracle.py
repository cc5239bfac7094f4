"""How a result is held against torch's, by what IEEE 754 promises of it.

+ - * / are correctly rounded, so are comparisons, copies and indexing: every CPU and
every library gives the same bits, and those are compared exactly.  sqrt is correctly
rounded in IEEE 754 and in numpy, but torch 2.13 takes float64 sqrt of a long tensor from
MKL's vector library, which is one unit off for about 1% of inputs: compare it by ulps
unless the tensor is a few elements long.  pow, exp,
log, tanh, sin, ... are not: torch's vectorised kernels and numpy's loops may differ in
the last bit, and which kernel runs depends on the CPU (AVX2, AVX-512).  Those are
compared to a few units in the last place (``ULPS``).  Sums and matrix products add in
an order set by the vector width and the blocking, so their error grows with the number
of terms: ``assert_sum_close`` scales the tolerance with it.

Comparisons between naivegraph's own paths (fast layer on and off, static and dynamic)
run the same numpy kernels and stay bit for bit; they do not use this module.
"""

from __future__ import annotations

import numpy as np

ULPS = 4


def _as_array(value) -> np.ndarray:
    if hasattr(value, "detach"):
        value = value.detach()
    if hasattr(value, "numpy"):
        value = value.numpy()
    return np.asarray(value)


def _same_specials(a: np.ndarray, b: np.ndarray, what: str) -> np.ndarray:
    """NaN and infinities where torch has them; the mask of finite values left to compare."""
    assert a.shape == b.shape, f"{what}: shape {a.shape} != torch's {b.shape}"
    assert np.array_equal(np.isnan(a), np.isnan(b)), f"{what}: NaN differ\n{a!r}\n{b!r}"
    infinite = np.isinf(b)
    assert np.array_equal(np.isinf(a), infinite) and np.array_equal(a[infinite], b[infinite]), (
        f"{what}: infinities differ\n{a!r}\n{b!r}"
    )
    return np.isfinite(b)


def ulp_distance(ours, theirs) -> np.ndarray:
    """How many units in the last place of the larger magnitude separate two arrays.

    >>> float(ulp_distance(np.float64(1.4142135623730951), np.float64(1.414213562373095)))
    1.0
    """
    a, b = _as_array(ours), _as_array(theirs)
    dtype = np.result_type(a.dtype, b.dtype)
    a, b = a.astype(dtype), b.astype(dtype)
    spacing = np.spacing(np.maximum(np.abs(a), np.abs(b)))
    return np.abs(a.astype(np.float64) - b.astype(np.float64)) / spacing.astype(np.float64)


def assert_exact(ours, theirs, what: str = "result") -> None:
    """The same dtype and bits (zeros' signs included): for IEEE-exact operations."""
    a, b = _as_array(ours), _as_array(theirs)
    assert a.dtype == b.dtype, f"{what}: dtype {a.dtype} != torch's {b.dtype}"
    np.testing.assert_array_equal(a, b, err_msg=what)
    if a.dtype.kind == "f":
        zeros = (a == 0) & (b == 0)
        assert np.array_equal(np.signbit(a[zeros]), np.signbit(b[zeros])), (
            f"{what}: signed zeros differ\n{a!r}\n{b!r}"
        )


def assert_ulps(ours, theirs, what: str = "result", ulps: float = ULPS) -> None:
    """The same dtype, NaN and infinities; finite values within ``ulps`` units in the
    last place: for transcendental functions, whose last bit depends on the CPU."""
    a, b = _as_array(ours), _as_array(theirs)
    assert a.dtype == b.dtype, f"{what}: dtype {a.dtype} != torch's {b.dtype}"
    if a.dtype.kind != "f":
        np.testing.assert_array_equal(a, b, err_msg=what)
        return
    finite = _same_specials(a, b, what)
    distance = ulp_distance(a[finite], b[finite])
    assert distance.size == 0 or distance.max() <= ulps, (
        f"{what}: {distance.max():g} ulps from torch (at most {ulps})\n{a!r}\n{b!r}"
    )


def assert_sum_close(ours, theirs, terms: int, what: str = "result", ulps=ULPS) -> None:
    """Within the rounding error of adding ``terms`` values in another order: ``ulps``
    units of the result's magnitude per term (an upper bound for any summation order)."""
    a, b = _as_array(ours), _as_array(theirs)
    assert a.dtype == b.dtype, f"{what}: dtype {a.dtype} != torch's {b.dtype}"
    finite = _same_specials(a, b, what)
    scale = np.max(np.abs(b[finite]), initial=1.0)
    tolerance = ulps * max(terms, 1) * np.finfo(b.dtype).eps * scale
    np.testing.assert_allclose(a[finite], b[finite], rtol=0, atol=tolerance, err_msg=what)
