"""Engine findings of the second trust round, each checked against torch 2.13."""

import numpy as np
import pytest

import naivegraph as ng

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("lib", [ng, torch], ids=["naivegraph", "torch"])
def test_backward_with_fewer_gradients_than_outputs_is_refused(lib):
    a = lib.ones(2, requires_grad=True)
    b = lib.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="got 2 tensors and 1 gradients"):
        lib.autograd.backward([a * 2, b * 3], [lib.ones(2)])
    assert a.grad is None and b.grad is None


@pytest.mark.parametrize("lib", [ng, torch], ids=["naivegraph", "torch"])
def test_grad_with_fewer_grad_outputs_than_outputs_is_refused(lib):
    a = lib.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="got 2 tensors and 1 gradients"):
        lib.autograd.grad([a * 2, a * 3], a, grad_outputs=[lib.ones(2)])


def test_retained_grad_accumulates_over_backward_calls_like_torch():
    results = []
    for lib in (ng, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        h = x * 2
        h.retain_grad()
        loss = (h * 3).sum()
        loss.backward(retain_graph=True)
        loss.backward()
        results.append((h.grad.tolist(), x.grad.tolist()))
    assert results[0] == results[1] == ([6.0, 6.0], [12.0, 12.0])


def test_retained_grad_set_to_none_starts_afresh():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    h.retain_grad()
    loss = h.sum()
    loss.backward(retain_graph=True)
    h.grad = None
    loss.backward()
    np.testing.assert_array_equal(h.grad.numpy(), [1.0, 1.0])


def test_accumulated_grad_of_a_0d_tensor_is_a_tensor_that_can_be_zeroed():
    x = ng.tensor(1.0, requires_grad=True)
    h = x * 2
    h.retain_grad()
    h.backward(retain_graph=True)
    h.backward()
    h.grad.zero_()
    x.grad.zero_()
    assert h.grad.item() == 0.0 and x.grad.item() == 0.0


def _wrong_shape(grad):
    return ng.ones(3)


def _wrong_dtype(grad):
    return grad.double()  # the gradient of a float32 (default) tensor


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize(
    "hook, phrase",
    [
        (_wrong_shape, "has changed the size of value"),
        (_wrong_dtype, "has changed the type of value"),
    ],
)
def test_tensor_hook_that_changes_the_gradient_is_refused_and_grads_stay(
    hook, phrase, create_graph
):
    a = ng.tensor([1.0, 2.0], requires_grad=True)
    b = ng.tensor([3.0, 4.0], requires_grad=True)
    a.grad = ng.tensor([10.0, 10.0])
    (a * b).sum().backward()
    before = (a.grad.tolist(), b.grad.tolist())
    b.register_hook(hook)
    with pytest.raises(RuntimeError, match=f"hook '{hook.__name__}' {phrase}"):
        (a * b).sum().backward(create_graph=create_graph)
    assert (a.grad.tolist(), b.grad.tolist()) == before


@pytest.mark.parametrize("where", ["prehook", "posthook", "intermediate"])
def test_node_and_intermediate_hooks_that_change_the_shape_are_refused(where):
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    if where == "prehook":
        h.grad_fn.register_prehook(lambda grads: (ng.ones(3),))
    elif where == "posthook":
        h.grad_fn.register_hook(lambda grad_inputs, grad_outputs: (ng.ones(3), None))
    else:
        h.register_hook(lambda grad: grad.sum())
    with pytest.raises(RuntimeError, match="has changed the size of value"):
        h.sum().backward()
    assert x.grad is None


@pytest.mark.parametrize("lib", [ng, torch], ids=["naivegraph", "torch"])
def test_assigning_a_grad_of_another_dtype_is_refused(lib):
    x = lib.ones(2, requires_grad=True, dtype=lib.float64)
    with pytest.raises(RuntimeError, match="attempting to assign a gradient with dtype"):
        x.grad = lib.tensor([1, 2])
    assert x.grad is None


def test_refused_grad_assignment_keeps_the_next_backward_whole():
    a = ng.tensor([1.0, 2.0], requires_grad=True)
    b = ng.tensor([3.0, 4.0], requires_grad=True)
    with pytest.raises(RuntimeError):
        a.grad = ng.tensor([1, 2])
    (a * b).sum().backward()
    assert a.grad.tolist() == [3.0, 4.0] and b.grad.tolist() == [1.0, 2.0]


def test_jacobian_of_an_integer_input_raises_as_torch():
    with pytest.raises(RuntimeError, match="floating point"):
        torch.autograd.functional.jacobian(lambda x: x * 2, torch.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="floating point"):
        ng.autograd.functional.jacobian(lambda x: x * 2, ng.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="floating point"):
        ng.autograd.functional.hessian(lambda x: (x * x).sum(), ng.tensor([1, 2]))
