"""Mismatches with torch found by the round-2 fuzzer (``test_aliasing_hooks_special_values``), each
reduced to a few lines.  All are known bugs today: ``xfail(strict=True)`` keeps the suite
green and turns into XPASS when a fix lands; then remove the mark and the matching name
from ``KNOWN_BUG_CLASSES`` in ``random_programs.py``.

Each test runs the same function on torch and on naivegraph and asserts both answers:
torch's (pinned as an exact value) and naivegraph's equal to it.
"""

import contextlib
import math
import warnings

import numpy as np
import pytest

import naivegraph as ng
import naivegraph.static as ns

torch = pytest.importorskip("torch")

NAN = math.nan


@contextlib.contextmanager
def torch_float64_default():
    """Python floats mean float64 in naivegraph; make them mean the same in torch."""
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.set_default_dtype(old)


def both(f):
    """f(torch) and f(naivegraph)."""
    with torch_float64_default():
        want = f(torch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return want, f(ng)


def arr(t) -> np.ndarray:
    return t.detach().numpy()


def assert_same(got, want):
    np.testing.assert_array_equal(arr(got), arr(want))  # NaN == NaN here
    zero = arr(want) == 0
    assert np.array_equal(np.signbit(arr(got))[zero], np.signbit(arr(want))[zero])


def raises_same(f, error, phrase):
    with torch_float64_default(), pytest.raises(error, match=phrase):
        f(torch)
    with pytest.raises(error, match=phrase):
        f(ng)


# -- views and in-place writes (KNOWN_BUG_CLASSES: view_inplace_grad, plain_view_write,
#    inplace_into_view, int_index_0d_view, view_of_noncontiguous, expanded_write,
#    noop_squeeze_view) ----------------------------------------------------------------
def test_view_read_after_mul_inplace_on_base_gets_the_new_gradient():
    def f(M):
        x = M.tensor([1.0, 2.0, 3.0], requires_grad=True)
        a = x * 1.0
        v = a[0:1]
        a.mul_(2)
        v.sum().backward()
        return x.grad

    want, got = both(f)
    assert_same(want, torch.tensor([2.0, 0.0, 0.0]))
    assert_same(got, want)


def test_view_read_after_exp_inplace_on_base_differentiates_the_exp():
    def f(M):
        x = M.tensor([1.0, 2.0], requires_grad=True)
        a = x * 1.0
        v = a.view(2)
        a.exp_()
        v.sum().backward()
        return x.grad

    want, got = both(f)  # float32, the default in both
    np.testing.assert_allclose(arr(want), np.exp([1.0, 2.0]), rtol=4e-7)  # exp: a few ulps
    np.testing.assert_allclose(arr(got), arr(want), rtol=4e-7)


def test_tensor_added_into_base_gets_gradient_through_an_earlier_view():
    def f(M):
        x = M.tensor([1.0, 2.0], requires_grad=True)
        y = M.tensor([1.0, 2.0], requires_grad=True)
        a = x * 1.0
        v = a.view(2)
        a.add_(y)
        (v * M.tensor([3.0, 4.0])).sum().backward()
        return y.grad

    want, got = both(f)
    assert_same(want, torch.tensor([3.0, 4.0]))
    assert got is not None
    assert_same(got, want)


def test_tensor_added_into_view_of_plain_tensor_gets_gradient():
    def f(M):
        b = M.zeros(3)
        y = M.tensor([1.0, 2.0], requires_grad=True)
        b[0:2].add_(y)
        (b * M.tensor([1.0, 2.0, 3.0])).sum().backward()
        return y.grad

    want, got = both(f)
    assert_same(want, torch.tensor([1.0, 2.0]))
    assert_same(got, want)


def test_inplace_into_view_of_intermediate_rewrites_its_history():
    def f(M):
        x = M.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        a = x * 1.5
        a[0].add_(0.5)
        a.sum().backward()
        return x.grad

    want, got = both(f)
    assert_same(want, torch.full((2, 2), 1.5))
    assert_same(got, want)


def test_int_index_of_1d_tensor_is_a_view_that_sees_later_writes():
    def f(M):
        a = M.zeros(3)
        v = a[0]
        a.add_(1.0)
        return v

    want, got = both(f)
    assert want.item() == 1.0
    assert got.item() == 1.0


def test_view_of_transposed_tensor_raises_and_points_to_reshape():
    raises_same(lambda M: M.ones(2, 3).t().view(-1), RuntimeError, "view size is not compatible")


def test_add_inplace_into_expanded_view_raises_runtime_error():
    def f(M):
        M.zeros(1, 1).squeeze().expand(2).add_(M.tensor(1.0))

    raises_same(f, RuntimeError, "more than one element of the written-to tensor")


def test_fill_inplace_into_expanded_view_fills_the_base():
    def f(M):
        b = M.zeros(3, 1)
        b.expand(3, 2).fill_(1.0)
        return b

    want, got = both(f)
    assert_same(want, torch.ones(3, 1))
    assert_same(got, want)


def test_inplace_on_noop_squeeze_of_leaf_raises_leaf_error():
    def f(M):
        M.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True).squeeze().add_(0.5)

    raises_same(f, RuntimeError, "leaf Variable that requires grad")


# -- repeated backward (retain_grad_accumulate, data_reassign) -------------------------
def test_retained_grad_accumulates_over_two_backward_calls():
    def f(M):
        x = M.tensor([1.0, 2.0], requires_grad=True)
        h = x * 2
        h.retain_grad()
        loss = h.sum()
        loss.backward(retain_graph=True)
        loss.backward()
        return h.grad

    want, got = both(f)
    assert_same(want, torch.tensor([2.0, 2.0]))
    assert_same(got, want)


def test_backward_after_data_reassignment_uses_the_new_data():
    def f(M):
        x = M.tensor([1.0, 2.0], requires_grad=True)
        y = x * x
        x.data = M.tensor([5.0, 6.0])
        y.sum().backward()
        return x.grad

    want, got = both(f)
    assert_same(want, torch.tensor([10.0, 12.0]))
    assert_same(got, want)


# -- special values (pow_at_zero, nan_max_min, nan_relu_abs, max_min_zero_tie) ---------
def test_pow_gradient_at_zero_base_and_zero_exponent_is_zero():
    def f(M):
        x = M.tensor(0.0, requires_grad=True)
        y = M.tensor(0.0, requires_grad=True)
        (x**y).backward()
        return x.grad

    want, got = both(f)
    assert want.item() == 0.0
    assert got.item() == 0.0


def test_max_over_nan_sends_the_gradient_to_the_nan():
    def f(M):
        x = M.tensor([NAN, 1.0], requires_grad=True)
        x.max().backward()
        return x.grad

    want, got = both(f)
    assert_same(want, torch.tensor([1.0, 0.0]))
    assert_same(got, want)


def test_min_dim_over_nan_sends_the_gradient_to_the_nan():
    def f(M):
        x = M.tensor([NAN, 1.0], requires_grad=True)
        x.min(dim=0).values.backward()
        return x.grad

    want, got = both(f)
    assert_same(want, torch.tensor([1.0, 0.0]))
    assert_same(got, want)


def test_maximum_with_nan_gives_both_operands_the_gradient():
    def f(M):
        x = M.tensor([NAN, 1.0], requires_grad=True)
        y = M.tensor([2.0, NAN], requires_grad=True)
        M.maximum(x, y).sum().backward()
        return x.grad, y.grad

    (wx, wy), (gx, gy) = both(f)
    assert_same(wx, torch.tensor([1.0, 1.0]))
    assert_same(gx, wx)
    assert_same(gy, wy)


def test_maximum_of_zero_and_negative_zero_returns_the_first_operand():
    want, got = both(lambda M: M.maximum(M.tensor([0.0, -0.0]), M.tensor([-0.0, 0.0])))
    assert list(np.signbit(arr(want))) == [False, True]
    assert_same(got, want)


def test_relu_keeps_negative_zero_and_passes_gradient_at_nan():
    def f(M):
        x = M.tensor([NAN, -0.0], requires_grad=True)
        r = x.relu()
        r.sum().backward()
        return r, x.grad

    (wr, wg), (gr, gg) = both(f)
    assert list(np.signbit(arr(wr))) == [False, True]
    assert_same(wg, torch.tensor([1.0, 0.0]))
    assert_same(gr, wr)
    assert_same(gg, wg)


def test_abs_gradient_at_nan_is_zero():
    def f(M):
        x = M.tensor([NAN], requires_grad=True)
        x.abs().sum().backward()
        return x.grad

    want, got = both(f)
    assert_same(want, torch.tensor([0.0]))
    assert_same(got, want)


# -- dtypes (where_nonbool, zero_dim_promotion, bool_subtraction) ----------------------
def test_where_with_integer_condition_raises():
    raises_same(
        lambda M: M.where(M.tensor([1, 0]), M.tensor([1.0, 2.0]), M.tensor([3.0, 4.0])),
        RuntimeError,
        "condition to be a boolean tensor",
    )


@pytest.mark.parametrize(
    "da, db, want",
    [
        (np.float32, np.int32, "float32"),
        (np.int32, np.int64, "int32"),
        (np.float32, np.float64, "float32"),
    ],
)
def test_zero_dim_tensor_does_not_promote_a_1d_tensor_of_the_same_kind(da, db, want):
    def f(M):
        a = M.tensor(np.array([1, 2], dtype=da))
        return (a + M.tensor(np.array(3, dtype=db))).dtype

    torch_dtype, ng_dtype = both(f)
    assert str(torch_dtype) == "torch." + want
    assert np.dtype(ng_dtype).name == want


def test_subtracting_bool_tensors_raises_runtime_error():
    raises_same(
        lambda M: M.tensor([True, False]) - M.tensor(True),
        RuntimeError,
        "Subtraction, the `-` operator",
    )


def test_subtracting_a_bool_from_an_int_tensor_raises():
    raises_same(
        lambda M: M.tensor(np.array([1, 2], dtype=np.int32)) - True,
        RuntimeError,
        "Subtraction, the `-` operator, with a bool",
    )


# -- hooks (hook_changes_type) -----------------------------------------------------------
def test_hook_that_changes_the_dtype_raises():
    def f(M):
        x = M.tensor([1.0, 2.0], requires_grad=True)
        x.register_hook(lambda g: g.to(M.float16))
        (x * 2).sum().backward()

    raises_same(f, RuntimeError, "has changed the type of value")


def test_hook_that_changes_the_shape_raises():
    def f(M):
        x = M.tensor([1.0, 2.0], requires_grad=True)
        x.register_hook(lambda g: g.sum())
        (x * 2).sum().backward()

    raises_same(f, RuntimeError, "has changed the size of value")


# -- static passes (fixed: passes keep signed zeros) ---------------------------------------
def _compiled(build, *arrays):
    g = ns.Graph()
    with g:
        inputs, outputs = build()
    return [np.asarray(v) for v in g.compile(inputs, outputs, optimize=True)(*arrays)]


def test_optimised_graph_adds_zero_to_negative_zero_like_torch():
    def build():
        x = ns.placeholder("x", shape=(2,))
        return [x], [x + 0.0]

    (out,) = _compiled(build, np.array([-0.0, 1.0]))
    want = (torch.tensor([-0.0, 1.0], dtype=torch.float64) + 0.0).numpy()
    assert list(np.signbit(want)) == [False, False]
    assert list(np.signbit(out)) == list(np.signbit(want))


def test_optimised_graph_keeps_multiplications_by_zero_and_negative_zero_apart():
    def build():
        x = ns.placeholder("x", shape=(1,))
        return [x], [1.0 / (x * 0.0), 1.0 / (x * -0.0)]

    with np.errstate(divide="ignore"):
        pos, neg = _compiled(build, np.array([2.0]))
    assert pos.tolist() == [math.inf]
    assert neg.tolist() == [-math.inf]
