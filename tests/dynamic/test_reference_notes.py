"""Every dynamic-graph example of the reference notes, with the numbers they show.

The notes were written against older PyTorch releases; the assertions use the modern
(PyTorch 2.x) spelling: ``ExpBackward0`` where a note prints ``ExpBackward``, a Tensor
where a note prints ``Variable containing:``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import naivegraph as ng
from naivegraph.dynamic.node import AccumulateGrad

NON_LEAF_GRAD = "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed"
LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."


def l1_to_l4_model():
    """Note 000: l1 = input*w1, l2 = l1+w2, l3 = l1*w3, l4 = l2*l3, loss = mean(l4)."""
    input = ng.ones([2, 2], requires_grad=False)
    w1 = ng.tensor(2.0, requires_grad=True)
    w2 = ng.tensor(3.0, requires_grad=True)
    w3 = ng.tensor(4.0, requires_grad=True)
    l1 = input * w1
    l2 = l1 + w2
    l3 = l1 * w3
    l4 = l2 * l3
    loss = l4.mean()
    return input, (w1, w2, w3), (l1, l2, l3, l4), loss


# -- note 000: a Function node per op -------------------------------------------------


def test_exp_of_two_prints_value_and_exp_backward():
    a = ng.tensor(2.0, requires_grad=True)
    b = a.exp()
    assert repr(b) == "tensor(7.3891, grad_fn=<ExpBackward0>)"
    assert str(b) == "tensor(7.3891, grad_fn=<ExpBackward0>)"
    assert b.grad_fn.name() == "ExpBackward0"
    assert type(b.grad_fn).__name__ == "ExpBackward0"


def test_l1_to_l4_forward_values_and_grad_fns():
    input, (w1, w2, w3), (l1, l2, l3, l4), loss = l1_to_l4_model()
    assert repr(w1.data) == "tensor(2.)"
    assert w1.grad is None and w1.grad_fn is None
    assert repr(l1.data) == "tensor([[2., 2.],\n        [2., 2.]])"
    assert l1.grad_fn.name() == "MulBackward0"
    assert repr(l1.grad_fn).startswith("<MulBackward0 object at 0x")
    assert repr(loss.data) == "tensor(40.)"
    assert loss.item() == 40.0
    assert loss.grad_fn.name() == "MeanBackward0"
    assert [t.requires_grad for t in (input, w1, w2, w3, l1, l2, l3, l4, loss)] == [False] + [
        True
    ] * 8
    np.testing.assert_array_equal(
        l2.numpy() if not l2.requires_grad else l2.detach().numpy(), np.full((2, 2), 5.0)
    )
    np.testing.assert_array_equal(l3.detach().numpy(), np.full((2, 2), 8.0))
    np.testing.assert_array_equal(l4.detach().numpy(), np.full((2, 2), 40.0))


def test_l1_to_l4_backward_gives_28_8_10():
    _, (w1, w2, w3), _, loss = l1_to_l4_model()
    loss.backward()
    assert (w1.grad.item(), w2.grad.item(), w3.grad.item()) == (28.0, 8.0, 10.0)
    assert (repr(w1.grad), repr(w2.grad), repr(w3.grad)) == (
        "tensor(28.)",
        "tensor(8.)",
        "tensor(10.)",
    )
    # The scalar weights were broadcast over 2x2: their gradient is the sum, a scalar.
    assert w1.grad.shape == w2.grad.shape == w3.grad.shape == ()


def test_non_leaf_grads_are_none_after_backward_and_warn():
    _, _, (l1, l2, l3, l4), loss = l1_to_l4_model()
    loss.backward()
    for t in (l1, l2, l3, l4, loss):
        with pytest.warns(UserWarning, match=NON_LEAF_GRAD):
            assert t.grad is None


def test_leaf_grad_access_does_not_warn():
    _, (w1, _, _), _, loss = l1_to_l4_model()
    loss.backward()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert w1.grad.item() == 28.0


def test_retain_grad_keeps_intermediate_gradients():
    _, (w1, _, _), (l1, _, _, l4), loss = l1_to_l4_model()
    l1.retain_grad()
    l4.retain_grad()
    loss.retain_grad()
    assert l1.retains_grad and l4.retains_grad and loss.retains_grad
    loss.backward()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # retained: no non-leaf warning
        assert repr(loss.grad) == "tensor(1.)"
        assert repr(l4.grad) == "tensor([[0.2500, 0.2500],\n        [0.2500, 0.2500]])"
        assert repr(l1.grad) == "tensor([[7., 7.],\n        [7., 7.]])"
    assert w1.grad.item() == 28.0


def test_hooks_print_intermediate_gradients_without_keeping_them(capsys):
    _, _, (l1, _, _, l4), loss = l1_to_l4_model()
    l1.register_hook(lambda grad: print("l1 grad: ", grad))
    l4.register_hook(lambda grad: print("l4 grad: ", grad))
    loss.register_hook(lambda grad: print("loss grad: ", grad))
    loss.backward()
    assert capsys.readouterr().out == (
        "loss grad:  tensor(1.)\n"
        "l4 grad:  tensor([[0.2500, 0.2500],\n        [0.2500, 0.2500]])\n"
        "l1 grad:  tensor([[7., 7.],\n        [7., 7.]])\n"
    )
    with pytest.warns(UserWarning, match=NON_LEAF_GRAD):
        assert loss.grad is None


def test_user_created_tensor_is_leaf_and_computed_one_is_not():
    a = ng.ones([2, 2], requires_grad=True)
    assert a.is_leaf is True
    b = a + 2
    assert b.is_leaf is False
    assert a.grad_fn is None and b.grad_fn.name() == "AddBackward0"


# -- note 000: in-place operations ----------------------------------------------------


def test_rebinding_to_exp_is_not_in_place():
    a = ng.tensor([3.0, 1.0])
    first = a
    data_before = a.detach().numpy().copy()
    a = a.exp()
    assert a is not first
    assert first._version == 0
    np.testing.assert_array_equal(first.numpy(), data_before)  # the old tensor is untouched


def test_setitem_is_in_place():
    a = ng.tensor([3.0, 1.0])
    first = a
    storage = a.numpy()
    a[0] = 10
    assert a is first and id(a) == id(first)
    assert a.numpy() is storage  # same memory, changed
    assert a._version == 1
    assert repr(a) == "tensor([10.,  1.])"


def test_version_counter_bumps_and_saved_tensor_modified_raises():
    a = ng.tensor([1.0, 3.0], requires_grad=True)
    b = a + 2
    assert b._version == 0
    loss = (b * b).mean()
    b[0] = 1000.0
    assert b._version == 1
    with pytest.raises(RuntimeError) as info:
        loss.backward()
    message = str(info.value)
    assert message.startswith(
        "one of the variables needed for gradient computation has been "
        "modified by an inplace operation"
    )
    assert "is at version 1; expected version 0 instead" in message
    assert a.grad is None  # nothing was accumulated


def test_in_place_on_non_leaf_not_needed_by_backward_is_fine():
    # y = x + 1 does not need x's value for its gradient: no version check, no error.
    a = ng.tensor([1.0, 3.0], requires_grad=True)
    b = a * 2
    loss = (b + 1).sum()
    b[0] = 1000.0
    loss.backward()
    assert a.grad.tolist() == [2.0, 2.0]


def test_setitem_on_leaf_requiring_grad_raises():
    a = ng.tensor([10.0, 5.0, 2.0, 3.0], requires_grad=True)
    assert repr(a) == "tensor([10.,  5.,  2.,  3.], requires_grad=True)"
    assert a.is_leaf
    with pytest.raises(RuntimeError, match=LEAF_INPLACE):
        a[:] = 0
    assert a.tolist() == [10.0, 5.0, 2.0, 3.0] and a._version == 0 and a.is_leaf


@pytest.mark.parametrize("change", ["add_", "iadd"])
def test_add_in_place_on_leaf_requiring_grad_raises(change):
    a = ng.tensor([10.0, 5.0, 2.0, 3.0], requires_grad=True)
    original = a
    with pytest.raises(RuntimeError, match=LEAF_INPLACE):
        if change == "add_":
            a.add_(10.0)
        else:
            a += 10.0
    assert a is original
    assert a.tolist() == [10.0, 5.0, 2.0, 3.0] and a._version == 0
    assert a.is_leaf and a.requires_grad and a.grad_fn is None


@pytest.mark.parametrize("route", ["data", "detach"])
def test_changing_leaf_through_data_or_detach_gives_grads_of_5(route):
    a = ng.tensor([10.0, 5.0, 2.0, 3.0], requires_grad=True)
    original = a
    if route == "data":
        a.data.fill_(10.0)
    else:
        a.detach().fill_(10.0)
    assert a is original
    assert repr(a) == "tensor([10., 10., 10., 10.], requires_grad=True)"
    assert a.is_leaf
    loss = (a * a).mean()
    loss.backward()
    assert repr(a.grad) == "tensor([5., 5., 5., 5.])"


def test_changing_leaf_under_no_grad_gives_grads_of_5():
    a = ng.tensor([10.0, 5.0, 2.0, 3.0], requires_grad=True)
    with ng.no_grad():
        a[:] = 10.0
    assert repr(a) == "tensor([10., 10., 10., 10.], requires_grad=True)"
    assert a.is_leaf and a.grad_fn is None
    loss = (a * a).mean()
    loss.backward()
    assert repr(a.grad) == "tensor([5., 5., 5., 5.])"


# -- note 000 / 004: the graph is freed by backward ----------------------------------


def test_second_backward_without_retain_graph_raises():
    a = ng.tensor([3.0, 1.0], requires_grad=True)
    b = a * a
    loss = b.mean()
    loss.backward()
    assert a.grad.tolist() == [3.0, 1.0]
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        loss.backward()
    assert a.grad.tolist() == [3.0, 1.0]  # the failed pass accumulated nothing
    # Building the graph again works.
    a = ng.tensor([3.0, 1.0], requires_grad=True)
    loss = (a * a).mean()
    loss.backward()
    assert a.grad.tolist() == [3.0, 1.0]


def test_second_backward_error_mentions_retain_graph():
    a = ng.tensor([3.0, 1.0], requires_grad=True)
    loss = (a * a).mean()
    loss.backward()
    with pytest.raises(RuntimeError, match=r"Specify retain_graph=True"):
        loss.backward()


def test_retain_graph_allows_second_backward_and_accumulates():
    a = ng.tensor([3.0, 1.0], requires_grad=True)
    loss = (a * a).mean()
    loss.backward(retain_graph=True)
    loss.backward()
    assert a.grad.tolist() == [6.0, 2.0]


def test_dynamic_graph_has_values_at_once():
    # Note 004: c = a + b holds its value immediately in a dynamic graph.
    a = ng.tensor(2.0, requires_grad=True)
    b = ng.tensor(3.0, requires_grad=True)
    c = a + b
    assert c.item() == 5.0


# -- note 001: Variable, requires_grad propagation, next_functions -------------------


def test_variable_example_flags_and_grads():
    Variable = ng.autograd.Variable
    a = Variable(ng.ones(3, 4), requires_grad=True)
    b = Variable(ng.zeros(3, 4))
    c = a.add(b)
    d = c.sum()
    d.backward()
    assert isinstance(a, ng.Tensor)
    assert (a.requires_grad, b.requires_grad, c.requires_grad, d.requires_grad) == (
        True,
        False,
        True,
        True,
    )
    assert (a.is_leaf, b.is_leaf, c.is_leaf, d.is_leaf) == (True, True, False, False)
    np.testing.assert_array_equal(a.grad.numpy(), np.ones((3, 4)))
    assert b.grad is None
    with pytest.warns(UserWarning, match=NON_LEAF_GRAD):
        assert c.grad is None
    with pytest.warns(UserWarning, match=NON_LEAF_GRAD):
        assert d.grad is None
    assert a.grad_fn is None and b.grad_fn is None
    assert c.grad_fn.name() == "AddBackward0" and d.grad_fn.name() == "SumBackward0"


def test_x_squared_exp_matches_hand_derived_gradient():
    def f(x):
        return x**2 * ng.exp(x)

    def gradf(x):
        return 2 * x * ng.exp(x) + x**2 * ng.exp(x)

    ng.manual_seed(0)
    x = ng.autograd.Variable(ng.randn(3, 4), requires_grad=True)
    y = f(x)
    y.backward(ng.ones(y.size()))
    expected = gradf(x.detach())
    np.testing.assert_allclose(x.grad.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)
    xs = x.detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), 2 * xs * np.exp(xs) + xs**2 * np.exp(xs), rtol=1e-12)


def test_non_scalar_backward_without_gradient_raises():
    x = ng.randn(3, 4, requires_grad=True)
    y = x**2 * ng.exp(x)
    with pytest.raises(
        RuntimeError, match="grad can be implicitly created only for scalar outputs"
    ):
        y.backward()
    assert x.grad is None
    y.backward(ng.ones(y.size()))  # the graph is intact after the error
    assert x.grad.shape == (3, 4)


def test_next_functions_of_y_equals_w_times_x_plus_b():
    x = ng.autograd.Variable(ng.ones(1))
    w = ng.autograd.Variable(ng.rand(1), requires_grad=True)
    b = ng.autograd.Variable(ng.rand(1), requires_grad=True)
    y = w.mul(x)
    z = y.add(b)
    assert (x.is_leaf, w.is_leaf, b.is_leaf, y.is_leaf, z.is_leaf) == (
        True,
        True,
        True,
        False,
        False,
    )
    assert (
        x.requires_grad,
        w.requires_grad,
        b.requires_grad,
        y.requires_grad,
        z.requires_grad,
    ) == (False, True, True, True, True)
    assert (x.grad_fn, w.grad_fn, b.grad_fn) == (None, None, None)
    assert y.grad_fn.name() == "MulBackward0" and z.grad_fn.name() == "AddBackward0"

    (w_node, w_nr), x_edge = y.grad_fn.next_functions
    assert isinstance(w_node, AccumulateGrad) and type(w_node).__name__ == "AccumulateGrad"
    assert w_node.variable is w and w_nr == 0
    assert x_edge == (None, 0)

    (y_node, y_nr), (b_node, b_nr) = z.grad_fn.next_functions
    assert z.grad_fn.next_functions[0][0] is y.grad_fn
    assert y_node is y.grad_fn and y_nr == 0
    assert isinstance(b_node, AccumulateGrad) and b_node.variable is b and b_nr == 0
    assert len(y.grad_fn.next_functions) == 2 and len(z.grad_fn.next_functions) == 2
    # The same leaf always shows the same AccumulateGrad node while the graph lives.
    assert (w * 2).grad_fn.next_functions[0][0] is w_node


def test_hook_doubling_gradient_gives_twos_and_remove_restores():
    v = ng.autograd.Variable(ng.tensor([0.0, 0.0, 0.0]), requires_grad=True)
    h = v.register_hook(lambda grad: grad * 2)  # double the gradient
    v.backward(ng.tensor([1.0, 1.0, 1.0]))
    assert repr(v.grad) == "tensor([2., 2., 2.])"
    h.remove()
    v.grad = None
    v.backward(ng.tensor([1.0, 1.0, 1.0]))
    assert v.grad.tolist() == [1.0, 1.0, 1.0]


def test_volatile_warns_and_has_no_effect():
    with pytest.warns(UserWarning, match="volatile was removed and now has no effect"):
        x = ng.autograd.Variable(ng.ones(1), volatile=True)
    w = ng.autograd.Variable(ng.rand(1), requires_grad=True)
    y = w.mul(x)
    assert (x.requires_grad, w.requires_grad, y.requires_grad) == (False, True, True)
    assert y.grad_fn.name() == "MulBackward0"


def test_volatile_message_points_to_no_grad():
    with pytest.warns(UserWarning, match="no_grad"):
        ng.autograd.Variable(ng.ones(1), volatile=True)


# -- notes 002 / 003: excluding subgraphs, freezing a model ---------------------------


def test_requires_grad_propagation_from_one_input():
    x = ng.randn(5, 5)
    y = ng.randn(5, 5)
    z = ng.randn((5, 5), requires_grad=True)
    assert not x.requires_grad and not y.requires_grad
    a = x + y
    assert a.requires_grad is False and a.grad_fn is None
    b = a + z
    assert b.requires_grad is True and b.grad_fn.name() == "AddBackward0"


class _Net(ng.nn.Module):
    """A stand-in for a pretrained network: a base and a final fully-connected layer."""

    def __init__(self):
        super().__init__()
        self.base = ng.nn.Sequential(ng.nn.Linear(4, 8), ng.nn.Tanh())
        self.fc = ng.nn.Linear(8, 3)

    def forward(self, x):
        return self.fc(self.base(x))


def test_freezing_model_and_training_only_new_last_layer():
    ng.manual_seed(1)
    model = _Net()
    for param in model.parameters():
        param.requires_grad = False
    model.fc = ng.nn.Linear(8, 2)  # new parameters require grad by default
    assert all(p.requires_grad for p in model.fc.parameters())
    assert not any(p.requires_grad for p in model.base.parameters())
    frozen = [p.detach().numpy().copy() for p in model.base.parameters()]
    new_before = [p.detach().numpy().copy() for p in model.fc.parameters()]

    optimizer = ng.optim.SGD(model.fc.parameters(), lr=1e-2, momentum=0.9)
    x = ng.randn(16, 4)
    target = ng.randn(16, 2)
    losses = []
    for _ in range(30):
        optimizer.zero_grad()
        hidden = model.base(x)
        assert hidden.requires_grad is False  # nothing is recorded in the frozen base
        loss = ng.nn.functional.mse_loss(model(x), target)
        loss.backward()
        losses.append(loss.item())
        optimizer.step()

    for p, before in zip(model.base.parameters(), frozen):
        np.testing.assert_array_equal(p.detach().numpy(), before)
        assert p.grad is None
    for p, before in zip(model.fc.parameters(), new_before):
        assert not np.array_equal(p.detach().numpy(), before)
    assert losses[-1] < losses[0]
    assert all(later <= earlier + 1e-12 for earlier, later in zip(losses[:5], losses[1:6]))
