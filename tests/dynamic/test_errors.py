"""Every error of the dynamic-mode contract: type, key phrase, and usable objects after."""

from __future__ import annotations

import numpy as np
import pytest

import naivegraph as ng


def test_requires_grad_on_integer_dtype_raises():
    with pytest.raises(RuntimeError, match="Only Tensors of floating point"):
        ng.tensor([1, 2, 3], requires_grad=True)
    t = ng.arange(3)
    with pytest.raises(RuntimeError, match="Only Tensors of floating point"):
        t.requires_grad_()
    assert not t.requires_grad and t.tolist() == [0, 1, 2]


def test_backward_of_non_scalar_without_gradient_raises_and_graph_survives():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    with pytest.raises(
        RuntimeError, match="grad can be implicitly created only for scalar outputs"
    ):
        y.backward()
    assert x.grad is None
    y.backward(ng.ones(2))
    assert x.grad.tolist() == [2.0, 4.0]


def test_backward_gradient_of_wrong_shape_raises_mismatch_in_shape():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    with pytest.raises(RuntimeError, match="Mismatch in shape") as info:
        y.backward(ng.ones(3))
    assert "torch.Size([3])" in str(info.value) and "torch.Size([2])" in str(info.value)
    assert x.grad is None
    y.backward(ng.tensor([1.0, 0.5]))
    assert x.grad.tolist() == [2.0, 2.0]


def test_autograd_grad_outputs_of_wrong_shape_raises_mismatch_in_shape():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        ng.autograd.grad(x * 2, x, grad_outputs=ng.ones(2, 1))


@pytest.mark.parametrize(
    "make",
    [
        lambda: ng.tensor([1.0, 2.0]).sum(),
        lambda: ng.tensor(3.0),
        lambda: _under_no_grad(),
    ],
)
def test_backward_of_tensor_without_grad_fn_raises(make):
    out = make()
    with pytest.raises(
        RuntimeError, match="element 0 of tensors does not require grad and does not have a grad_fn"
    ):
        out.backward()
    assert out.grad is None and out.grad_fn is None


def _under_no_grad():
    x = ng.tensor([1.0], requires_grad=True)
    with ng.no_grad():
        return (x * 2).sum()


def test_retain_grad_on_tensor_not_requiring_grad_raises():
    t = ng.ones(2)
    with pytest.raises(
        RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"
    ):
        t.retain_grad()
    assert not t.retains_grad


def test_register_hook_on_tensor_not_requiring_grad_raises():
    t = ng.ones(2)
    with pytest.raises(
        RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"
    ):
        t.register_hook(lambda g: g)
    t.requires_grad_()
    handle = t.register_hook(lambda g: g * 3)
    (t * 1).sum().backward()
    assert t.grad.tolist() == [3.0, 3.0]
    handle.remove()


@pytest.mark.parametrize(
    "change",
    [
        lambda a: a.add_(1.0),
        lambda a: a.sub_(1.0),
        lambda a: a.mul_(2.0),
        lambda a: a.div_(2.0),
        lambda a: a.pow_(2),
        lambda a: a.exp_(),
        lambda a: a.fill_(0.0),
        lambda a: a.zero_(),
        lambda a: a.clamp_(0.0, 1.0),
        lambda a: a.__setitem__(0, 5.0),
        lambda a: a.copy_(ng.zeros(3)),
    ],
)
def test_in_place_on_leaf_requiring_grad_raises_and_leaves_it_unchanged(change):
    a = ng.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match="a leaf Variable that requires grad is being used in an in-place operation.",
    ):
        change(a)
    assert a.tolist() == [1.0, 2.0, 3.0] and a._version == 0
    assert a.is_leaf and a.grad_fn is None
    (a * a).sum().backward()
    assert a.grad.tolist() == [2.0, 4.0, 6.0]


def test_in_place_on_view_of_leaf_requiring_grad_raises():
    a = ng.tensor([1.0, 2.0, 3.0], requires_grad=True)
    view = a[1:]
    with pytest.raises(
        RuntimeError,
        match="a view of a leaf Variable that requires grad is being "
        "used in an in-place operation.",
    ):
        view.mul_(2.0)
    assert a.tolist() == [1.0, 2.0, 3.0]


def test_modified_saved_tensor_raises_with_versions_and_graph_stays_usable_after_undo():
    a = ng.tensor([1.0, 3.0], requires_grad=True)
    b = a + 2
    loss = (b * b).mean()
    b.mul_(1.0)
    with pytest.raises(RuntimeError) as info:
        loss.backward()
    message = str(info.value)
    assert (
        "one of the variables needed for gradient computation has been modified by an "
        "inplace operation" in message
    )
    assert "is at version 1; expected version 0 instead." in message
    assert a.grad is None


def test_saved_output_modified_in_place_raises():
    # exp saves its result: changing the result afterwards breaks its backward.
    x = ng.tensor([0.0, 1.0], requires_grad=True)
    y = x.exp()
    y.add_(1.0)
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0 instead"):
        y.sum().backward()
    assert x.grad is None


def test_in_place_chain_that_overwrites_a_saved_output_raises():
    x = ng.tensor([0.5, 1.0], requires_grad=True)
    y = (x * 1).exp_().add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_second_backward_raises_and_first_grads_stay():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    loss = (x * x).sum()
    loss.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        loss.backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_second_autograd_grad_raises():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    loss = (x.exp()).sum()
    ng.autograd.grad(loss, x)
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        ng.autograd.grad(loss, x)


def test_second_backward_through_graph_without_saved_tensors_is_allowed():
    # As in torch: nothing was freed, so nothing is missing (add/sum save no tensors).
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    loss = (x + 1).sum()
    loss.backward()
    loss.backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_autograd_grad_of_input_not_requiring_grad_raises():
    x = ng.tensor([1.0], requires_grad=True)
    c = ng.tensor([1.0])
    with pytest.raises(
        RuntimeError, match="One of the differentiated Tensors does not require grad"
    ):
        ng.autograd.grad((x * c).sum(), [x, c])


def test_autograd_grad_of_unused_input_raises_without_allow_unused():
    x = ng.tensor([1.0], requires_grad=True)
    unused = ng.tensor([1.0], requires_grad=True)
    loss = (x * 2).sum()
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        ng.autograd.grad(loss, [x, unused], retain_graph=True)
    gx, gu = ng.autograd.grad(loss, [x, unused], allow_unused=True)
    assert gx.tolist() == [2.0] and gu is None


def test_backward_with_empty_inputs_raises():
    x = ng.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="'inputs' argument to backward\\(\\) cannot be empty."):
        (x * 2).sum().backward(inputs=[])


def test_matmul_of_zero_dim_raises():
    with pytest.raises(RuntimeError, match="both arguments to matmul need to be at least 1D"):
        ng.tensor(2.0) @ ng.ones(2)


def test_invalid_reshape_raises():
    with pytest.raises(RuntimeError, match="is invalid for input of size 6"):
        ng.ones(2, 3).reshape(4, 2)


def test_failing_hook_leaves_leaf_grads_unchanged():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    w = ng.tensor([3.0], requires_grad=True)
    y = x * w
    y.register_hook(lambda g: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        y.sum().backward(retain_graph=True)
    assert x.grad is None and w.grad is None
    assert np.allclose(y.detach().numpy(), [3.0, 6.0])
