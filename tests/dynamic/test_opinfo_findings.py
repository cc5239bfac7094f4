"""Behaviours the OpInfo differential suite (tests/fidelity) found missing or wrong in
dynamic mode, each pinned with exact values (float64 pinned; the default dtype is not
relied on)."""

from __future__ import annotations

import numpy as np
import pytest

import naivegraph as ng
import naivegraph.autograd.forward_ad as fwad

F64 = ng.float64


def log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def test_add_and_sub_functions_take_torchs_alpha():
    x = ng.tensor([1.0, 2.0], dtype=F64, requires_grad=True)
    y = ng.tensor([10.0, 20.0], dtype=F64, requires_grad=True)
    assert ng.add(x, y, alpha=2).tolist() == [21.0, 42.0]
    assert ng.sub(x, y, alpha=0.5).tolist() == [-4.0, -8.0]
    ng.sub(x, y, alpha=3).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0] and y.grad.tolist() == [-3.0, -3.0]


def test_add_without_alpha_stays_one_addition():
    x = ng.tensor([1.0, 2.0], dtype=F64, requires_grad=True)
    assert ng.add(x, 1.0).grad_fn.name() == "AddBackward0"


def test_transpose_of_a_0d_tensor_swaps_dim_0_with_itself():
    x = ng.tensor(2.5, dtype=F64, requires_grad=True)
    y = x.transpose(0, -1)
    assert y.shape == () and y.item() == 2.5
    y.backward()
    assert x.grad.item() == 1.0


def test_transpose_of_a_0d_tensor_refuses_dim_1():
    with pytest.raises(IndexError, match=r"expected to be in range of \[-1, 0\], but got 1"):
        ng.tensor(2.5, dtype=F64).transpose(0, 1)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_over_an_empty_dim_gives_an_empty_result(name):
    x = ng.zeros(5, 0, 0, dtype=F64, requires_grad=True)
    y = getattr(x, name)(-1)
    assert y.shape == (5, 0, 0)
    y.sum().backward()
    assert x.grad.shape == (5, 0, 0)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_of_an_all_minus_inf_row_is_still_nan(name):
    # the identity given to numpy's max for empty rows must not change a row of -inf
    y = getattr(ng.tensor([[-np.inf, -np.inf]], dtype=F64), name)(1)
    assert np.isnan(y.numpy()).all()


def test_cross_entropy_with_class_probabilities_sums_over_dim_1_of_a_k_dim_input():
    rng = np.random.default_rng(0)
    logits, p = rng.normal(size=(2, 3, 4)), rng.uniform(size=(2, 3, 4))
    expected = -(p * log_softmax(logits, axis=1)).sum(axis=1)
    x = ng.tensor(logits, dtype=F64, requires_grad=True)
    target = ng.tensor(p, dtype=F64)
    none = ng.nn.functional.cross_entropy(x, target, reduction="none")
    assert none.shape == (2, 4)
    np.testing.assert_allclose(none.detach().numpy(), expected, rtol=1e-14)
    mean = ng.nn.functional.cross_entropy(x, target)
    np.testing.assert_allclose(mean.item(), expected.mean(), rtol=1e-14)


def test_nll_loss_takes_one_unbatched_sample():
    logp = ng.tensor([-0.5, -1.5, -2.5], dtype=F64, requires_grad=True)
    loss = ng.nn.functional.nll_loss(logp, ng.tensor(1))
    assert loss.shape == () and loss.item() == 1.5
    loss.backward()
    assert logp.grad.tolist() == [0.0, -1.0, 0.0]
    none = ng.nn.functional.nll_loss(logp, ng.tensor(2), reduction="none")
    assert none.shape == () and none.item() == 2.5


def test_nll_loss_refuses_a_batch_of_targets_for_one_unbatched_sample():
    with pytest.raises(ValueError, match="nll_loss: an input of shape \\(3,\\) is one sample"):
        ng.nn.functional.nll_loss(ng.zeros(3, dtype=F64), ng.tensor([1, 2]))


def test_all_and_any_take_a_tuple_of_dims():
    x = ng.tensor([[[1.0, 0.0], [1.0, 1.0]], [[1.0, 1.0], [1.0, 1.0]]], dtype=F64)
    assert x.all(dim=(1, 2)).tolist() == [False, True]
    assert x.all(dim=(0, -1), keepdim=True).tolist() == [[[False], [True]]]
    assert x.any(dim=(0, 1, 2)).item() is True


def test_all_and_any_over_no_dims_reduce_nothing():
    x = ng.tensor([[1.0, 0.0], [2.0, 1.0]], dtype=F64)
    assert x.all(dim=()).tolist() == [[True, False], [True, True]]
    assert x.any(dim=()).tolist() == [[True, False], [True, True]]


def test_all_and_any_of_a_0d_tensor_take_dim_0_and_minus_1():
    x = ng.tensor(0.0, dtype=F64)
    assert x.all(dim=0, keepdim=True).item() is False
    assert ng.tensor(3.0, dtype=F64).any(dim=-1).item() is True
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.all(dim=1)


def test_clamp_refuses_a_bound_that_carries_a_forward_mode_tangent():
    # the bound is read as plain values: its tangent would be dropped silently
    with fwad.dual_level():
        bound = fwad.make_dual(ng.zeros(3, dtype=F64), ng.ones(3, dtype=F64))
        with pytest.raises(RuntimeError, match="clamp: a min bound that carries a forward-mode"):
            ng.ones(3, dtype=F64).clamp(min=bound)


def test_clamp_takes_a_bound_tensor_without_a_tangent_in_forward_mode():
    with fwad.dual_level():
        x = fwad.make_dual(ng.tensor([-1.0, 2.0], dtype=F64), ng.tensor([1.0, 1.0], dtype=F64))
        y = x.clamp(min=ng.zeros(2, dtype=F64))
        assert fwad.unpack_dual(y).tangent.tolist() == [0.0, 1.0]


def test_addmm_takes_torchs_beta_and_alpha():
    bias = ng.tensor([[1.0, 2.0]], dtype=F64, requires_grad=True)
    a = ng.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=F64, requires_grad=True)
    b = ng.tensor([[1.0, 0.0], [0.0, 1.0]], dtype=F64)
    out = ng.addmm(bias, a, b, beta=0.5, alpha=2.0)
    assert out.tolist() == [[2.5, 5.0], [6.5, 9.0]]
    out.sum().backward()
    assert bias.grad.tolist() == [[1.0, 1.0]]  # 0.5 per row, two rows
    assert a.grad.tolist() == [[2.0, 2.0], [2.0, 2.0]]


def test_addmm_with_beta_0_ignores_the_values_of_input():
    bias = ng.tensor([[np.nan, np.inf]], dtype=F64)
    out = ng.addmm(bias, ng.eye(2, dtype=F64), ng.ones(2, 2, dtype=F64), beta=0)
    assert out.tolist() == [[1.0, 1.0], [1.0, 1.0]]
