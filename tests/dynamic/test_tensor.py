"""Tensor creation, dtypes, repr, data/detach semantics and requires_grad flags."""

from __future__ import annotations

import numpy as np
import pytest

import naivegraph as ng

NON_FLOAT = "Only Tensors of floating point and complex dtype can require gradients"


# -- creation and dtypes --------------------------------------------------------------------


def test_tensor_of_python_ints_is_int64_and_of_bools_is_bool():
    assert ng.tensor([1, 2]).dtype == np.int64
    assert ng.tensor(3).dtype == np.int64
    assert ng.tensor([True, False]).dtype == np.bool_
    assert ng.tensor([1.0, 2.0]).dtype == np.float32  # the default dtype, as torch's
    assert ng.tensor(2.0).dtype == np.float32
    assert ng.Tensor([1, 2]).dtype == np.float32  # the legacy constructor makes floats


def test_tensor_of_int_list_works_as_cross_entropy_target():
    loss = ng.nn.functional.cross_entropy(ng.zeros(2, 4), ng.tensor([0, 3]))
    assert loss.item() == pytest.approx(np.log(4.0))


def test_tensor_copies_its_data_and_from_numpy_shares_it():
    array = np.ones(2)
    copied = ng.tensor(array)
    shared = ng.from_numpy(array)
    array[0] = 5.0
    assert copied.tolist() == [1.0, 1.0]
    assert shared.tolist() == [5.0, 1.0]


def test_float32_is_kept_and_its_grads_are_float32():
    x = ng.tensor(np.array([1.0, 2.0], dtype=np.float32), requires_grad=True)
    w = ng.tensor(3.0, dtype=ng.float32, requires_grad=True)
    y = (x * w + 1.5).exp().sum()  # python floats do not promote float32
    assert y.dtype == np.float32
    y.backward()
    assert x.grad.dtype == np.float32 and w.grad.dtype == np.float32
    assert repr(ng.tensor([1.0, 2.0], dtype=ng.float32)) == "tensor([1., 2.])"  # the default
    assert repr(ng.tensor([1.0, 2.0], dtype=ng.float64)) == "tensor([1., 2.], dtype=float64)"


def test_shapes_given_as_ints_or_sequences():
    assert ng.ones([2, 2]).shape == (2, 2)
    assert ng.ones(2, 2).shape == (2, 2)
    assert ng.randn(3, 4).shape == (3, 4)
    assert ng.randn((3, 4)).shape == (3, 4)
    assert ng.zeros((5,)).shape == (5,)
    assert ng.full((2, 3), 1.5).tolist() == [[1.5] * 3] * 2
    assert ng.arange(3).tolist() == [0, 1, 2]
    assert ng.ones_like(ng.zeros(2, 3)).shape == (2, 3)
    x = ng.ones(2, 3)
    assert x.size() == (2, 3) and x.size(1) == 3 and x.ndim == 2 and x.shape == (2, 3)


@pytest.mark.parametrize(
    "make",
    [
        lambda: ng.tensor([1, 2], requires_grad=True),
        lambda: ng.ones(2, dtype=ng.int64, requires_grad=True),
        lambda: ng.arange(3).requires_grad_(),
    ],
)
def test_requires_grad_on_integer_tensor_raises(make):
    with pytest.raises(RuntimeError, match=NON_FLOAT):
        make()


def test_requires_grad_error_leaves_integer_tensor_usable():
    t = ng.tensor([1, 2])
    with pytest.raises(RuntimeError, match=NON_FLOAT):
        t.requires_grad = True
    assert t.requires_grad is False and (t + 1).tolist() == [2, 3]


# -- repr ---------------------------------------------------------------------------------


def test_repr_matches_torch():
    assert repr(ng.tensor([1.0, 2.0], requires_grad=True)) == "tensor([1., 2.], requires_grad=True)"
    assert repr(ng.tensor(28.0)) == "tensor(28.)"
    assert repr(ng.full((2, 2), 0.25)) == "tensor([[0.2500, 0.2500],\n        [0.2500, 0.2500]])"
    assert repr(ng.tensor([10.0, 1.0])) == "tensor([10.,  1.])"
    assert repr(ng.tensor([1, 2])) == "tensor([1, 2])"
    x = ng.tensor(2.0, requires_grad=True)
    assert repr(x * 3) == "tensor(6., grad_fn=<MulBackward0>)"


# -- requires_grad, leaves, detach, data ------------------------------------------------------


def test_requires_grad_can_be_set_on_leaves_only():
    x = ng.tensor([1.0, 2.0])
    x.requires_grad = True
    assert x.requires_grad and x.is_leaf
    y = x * 2
    with pytest.raises(
        RuntimeError, match="you can only change requires_grad flags of leaf variables"
    ):
        y.requires_grad = False
    assert y.requires_grad and y.grad_fn.name() == "MulBackward0"


def test_requires_grad_underscore_returns_self():
    x = ng.tensor([1.0, 2.0])
    assert x.requires_grad_() is x and x.requires_grad
    assert x.requires_grad_(False) is x and not x.requires_grad


def test_detach_shares_memory_and_version_but_not_history():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    d = y.detach()
    assert d.requires_grad is False and d.grad_fn is None and d.is_leaf
    assert np.shares_memory(d.numpy(), y.detach().numpy())
    d[0] = 7.0
    assert y.tolist() == [7.0, 4.0]
    assert y._version == 1  # shared version counter


def test_detach_in_place_makes_a_leaf():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    assert y.detach_() is y
    assert y.grad_fn is None and y.is_leaf and not y.requires_grad
    z = (y * x).sum()
    z.backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_data_shares_memory_and_is_invisible_to_autograd():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = x * x  # saves x
    data = x.data
    assert data.requires_grad is False and data.grad_fn is None
    assert np.shares_memory(data.numpy(), x.detach().numpy())
    data.mul_(10.0)
    assert x.tolist() == [10.0, 20.0]
    assert x._version == 0  # no version bump: the change is invisible
    y.sum().backward()  # no error; uses the changed values
    assert x.grad.tolist() == [20.0, 40.0]


def test_numpy_of_tensor_requiring_grad_raises():
    x = ng.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        x.numpy()
    assert x.detach().numpy().tolist() == [1.0]


def test_item_and_tolist():
    assert ng.tensor([[3.5]]).item() == 3.5
    assert ng.tensor([[1.0, 2.0]]).tolist() == [[1.0, 2.0]]
    with pytest.raises(RuntimeError, match="cannot be converted to Scalar"):
        ng.tensor([1.0, 2.0]).item()


# -- in-place writes through indexing ----------------------------------------------------------


def test_setitem_with_broadcast_tensor_value_sums_its_gradient():
    x = ng.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    v = ng.tensor(5.0, requires_grad=True)
    y = x * 1.0
    y[ng.tensor([[True, False], [True, True]])] = v
    y.sum().backward()
    assert v.grad.shape == () and v.grad.item() == 3.0
    assert x.grad.tolist() == [[0.0, 1.0], [0.0, 0.0]]


def test_in_place_chain_keeps_correct_gradient():
    x = ng.tensor([0.5, -1.0], requires_grad=True)
    y = (x * 1).mul_(2).add_(1).exp_()
    assert y.grad_fn.name() == "ExpBackward0"
    y.sum().backward()
    expected = 2 * np.exp(2 * np.array([0.5, -1.0]) + 1)
    np.testing.assert_allclose(x.grad.numpy(), expected)


# -- max / min ties ----------------------------------------------------------------------------


def test_max_along_dim_with_ties_gives_gradient_to_the_returned_index_only():
    x = ng.tensor([[1.0, 1.0, 0.0], [2.0, 3.0, 3.0]], requires_grad=True)
    values, indices = x.max(1)
    assert indices.tolist() == [0, 1]
    values.sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]


def test_min_along_dim_with_ties_gives_gradient_to_the_returned_index_only():
    x = ng.tensor([[0.0, 5.0], [0.0, 5.0]], requires_grad=True)
    values, indices = x.min(0, keepdim=True)
    assert indices.tolist() == [[0, 0]]
    values.sum().backward()
    assert x.grad.tolist() == [[1.0, 1.0], [0.0, 0.0]]


def test_full_max_with_ties_shares_the_gradient_evenly():
    x = ng.tensor([[1.0, 1.0, 0.0]], requires_grad=True)
    x.max().backward()
    assert x.grad.tolist() == [[0.5, 0.5, 0.0]]


def test_maximum_with_ties_shares_the_gradient_evenly():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    ng.maximum(x, ng.tensor([1.0, 0.0])).sum().backward()
    assert x.grad.tolist() == [0.5, 1.0]


# -- .data and flatten: torch's refusals ------------------------------------------------------


@pytest.mark.parametrize("dtype", [ng.int64, ng.bool])
def test_data_of_another_kind_than_float_on_a_tensor_that_requires_grad_is_refused(dtype):
    x = ng.ones(2, dtype=ng.float32, requires_grad=True)
    with pytest.raises(RuntimeError, match="requires gradients must be floating point or complex"):
        x.data = ng.ones(2, dtype=dtype)
    assert x.dtype == np.float32  # unchanged
    x.data = ng.ones(2, dtype=ng.float64)  # another float dtype is allowed, as in torch
    assert x.dtype == np.float64 and x.requires_grad
    y = ng.ones(2, dtype=ng.float32)
    y.data = ng.ones(2, dtype=dtype)  # no gradient wanted: anything goes
    assert y.dtype == dtype


@pytest.mark.parametrize(
    "shape, start, end, error, phrase",
    [
        ((3,), 1, -1, IndexError, "expected to be in range of [-1, 0], but got 1"),
        ((), 1, -1, IndexError, "expected to be in range of [-1, 0], but got 1"),
        ((3,), 0, -2, IndexError, "expected to be in range of [-1, 0], but got -2"),
        ((2, 3), -3, -1, IndexError, "expected to be in range of [-2, 1], but got -3"),
        ((2, 3), 1, 0, RuntimeError, "start_dim cannot come after end_dim"),
    ],
)
def test_flatten_refuses_dims_out_of_range_as_torch(shape, start, end, error, phrase):
    with pytest.raises(error) as caught:
        ng.ones(shape).flatten(start, end)
    assert phrase in str(caught.value)


def test_flatten_in_range_keeps_its_shapes():
    assert ng.ones(()).flatten().shape == (1,) and ng.ones(3).flatten(-1).shape == (3,)
    assert ng.ones(2, 3, 4).flatten(1).shape == (2, 12)
    assert ng.ones(2, 3, 4).flatten(0, 1).shape == (6, 4)
