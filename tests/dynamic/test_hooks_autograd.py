"""Hooks, accumulation, backward(inputs=...), autograd.grad, functional, custom Function."""

from __future__ import annotations

import pytest

import naivegraph as ng

# -- tensor hooks --------------------------------------------------------------------------------


def test_leaf_hook_replacement_changes_accumulated_grad():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    x.register_hook(lambda g: g + 10)
    (x * 3).sum().backward()
    assert x.grad.tolist() == [13.0, 13.0]


def test_non_leaf_hook_replacement_flows_to_its_inputs():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    seen = []
    y.register_hook(lambda g: seen.append(g.tolist()) or g * 0.5)
    (y * y).sum().backward()
    assert seen == [[6.0, 12.0]]
    assert x.grad.tolist() == [9.0, 18.0]  # 3 * 0.5 * 2y


def test_hook_returning_none_keeps_gradient_and_hooks_chain_in_order():
    x = ng.tensor([1.0], requires_grad=True)
    y = x * 2
    order = []
    y.register_hook(lambda g: order.append("first"))
    y.register_hook(lambda g: order.append("second") or g * 10)
    y.register_hook(lambda g: order.append(("third", g.item())) or None)
    y.sum().backward()
    assert order == ["first", "second", ("third", 10.0)]
    assert x.grad.item() == 20.0


def test_removed_hook_no_longer_runs():
    x = ng.tensor([1.0], requires_grad=True)
    calls = []
    handle = x.register_hook(lambda g: calls.append(1))
    (x * 2).sum().backward()
    handle.remove()
    handle.remove()  # removing twice is harmless
    (x * 2).sum().backward()
    assert calls == [1] and x.grad.item() == 4.0


def test_retain_grad_sees_hook_replaced_gradient():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    y.register_hook(lambda g: g * 2)
    y.retain_grad()
    y.sum().backward()
    assert y.grad.tolist() == [2.0, 2.0] and x.grad.tolist() == [2.0, 2.0]


def test_node_post_hook_and_prehook():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    seen = {}

    def prehook(grad_outputs):
        seen["pre"] = [g.tolist() for g in grad_outputs]
        return (grad_outputs[0] * 2,)

    def posthook(grad_inputs, grad_outputs):
        seen["post_in"] = [None if g is None else g.tolist() for g in grad_inputs]
        seen["post_out"] = [g.tolist() for g in grad_outputs]

    h1 = y.grad_fn.register_prehook(prehook)
    h2 = y.grad_fn.register_hook(posthook)
    y.sum().backward(retain_graph=True)
    assert seen["pre"] == [[1.0, 1.0]]
    assert seen["post_out"] == [[2.0, 2.0]]
    assert seen["post_in"] == [[6.0, 6.0], None]  # the python scalar 3 gets no gradient
    assert x.grad.tolist() == [6.0, 6.0]
    h1.remove()
    h2.remove()
    x.grad = None
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_node_post_hook_can_replace_grad_inputs():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: (ng.ones(2) * 7,))
    y.sum().backward()
    assert x.grad.tolist() == [7.0, 7.0]


# -- accumulation and backward(inputs=) ------------------------------------------------------------


def test_gradients_accumulate_across_two_backwards():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    (x * 3).sum().backward()
    assert x.grad.tolist() == [5.0, 7.0]
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_accumulated_grad_does_not_alias_the_graph_gradient():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = ng.tensor([1.0, 2.0], requires_grad=True)
    (x + y).sum().backward()
    x.grad.add_(100.0)
    assert y.grad.tolist() == [1.0, 1.0]


def test_backward_inputs_accumulates_only_into_those():
    x = ng.tensor(2.0, requires_grad=True)
    w = ng.tensor(3.0, requires_grad=True)
    loss = x * w
    loss.backward(inputs=[w], retain_graph=True)
    assert w.grad.item() == 2.0 and x.grad is None
    loss.backward(inputs=x)
    assert x.grad.item() == 3.0 and w.grad.item() == 2.0


def test_backward_inputs_can_name_a_non_leaf():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    (y * y).sum().backward(inputs=[y])
    with pytest.warns(UserWarning, match="not a leaf Tensor"):
        assert y.grad.tolist() == [4.0, 8.0]
    assert x.grad is None


def test_ng_backward_of_several_tensors():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    ng.autograd.backward([(x * 2).sum(), x * x], [None, ng.ones(2)])
    assert x.grad.tolist() == [4.0, 6.0]


# -- autograd.grad ---------------------------------------------------------------------------------


def test_autograd_grad_returns_without_accumulating():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    (g,) = ng.autograd.grad((x**2).sum(), x)
    assert g.tolist() == [2.0, 4.0] and x.grad is None and not g.requires_grad


def test_autograd_grad_with_grad_outputs():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    (g,) = ng.autograd.grad(x**2, x, grad_outputs=ng.tensor([1.0, 10.0]))
    assert g.tolist() == [2.0, 40.0]


def test_autograd_grad_of_intermediate():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    (gy,) = ng.autograd.grad((y * y).sum(), y)
    assert gy.tolist() == [6.0, 12.0]


def test_second_derivative_of_cube_is_six_x():
    x = ng.tensor([1.0, -2.0, 0.5], requires_grad=True)
    (dx,) = ng.autograd.grad((x**3).sum(), x, create_graph=True)
    assert dx.requires_grad and dx.tolist() == [3.0, 12.0, 0.75]
    (d2x,) = ng.autograd.grad(dx.sum(), x)
    assert d2x.tolist() == [6.0, -12.0, 3.0]


def test_third_derivative_through_backward_create_graph():
    x = ng.tensor(2.0, requires_grad=True)
    y = x**4
    y.backward(create_graph=True)
    g1 = x.grad
    assert g1.item() == 32.0 and g1.requires_grad
    x.grad = None
    (g2,) = ng.autograd.grad(g1, x, create_graph=True)
    (g3,) = ng.autograd.grad(g2, x)
    assert (g2.item(), g3.item()) == (48.0, 48.0)


def test_functional_jacobian_values():
    J = ng.autograd.functional.jacobian(lambda x: x**2, ng.tensor([1.0, 2.0]))
    assert J.tolist() == [[2.0, 0.0], [0.0, 4.0]]
    A = ng.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    J = ng.autograd.functional.jacobian(lambda x: A @ x, ng.tensor([1.0, 1.0, 1.0]))
    assert J.tolist() == A.tolist()
    Ja, Jb = ng.autograd.functional.jacobian(
        lambda a, b: a * b, (ng.tensor([1.0, 2.0]), ng.tensor([3.0, 4.0]))
    )
    assert Ja.tolist() == [[3.0, 0.0], [0.0, 4.0]] and Jb.tolist() == [[1.0, 0.0], [0.0, 2.0]]


def test_functional_hessian_values():
    H = ng.autograd.functional.hessian(lambda x: (x**3).sum(), ng.tensor([1.0, 2.0]))
    assert H.tolist() == [[6.0, 0.0], [0.0, 12.0]]
    H = ng.autograd.functional.hessian(lambda x: x[0] * x[1] + x[0] ** 2, ng.tensor([1.0, 2.0]))
    assert H.tolist() == [[2.0, 1.0], [1.0, 0.0]]


# -- custom Function -------------------------------------------------------------------------------


class Square(ng.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x * grad


def test_custom_function_forward_backward_and_name():
    x = ng.tensor([1.0, 3.0], requires_grad=True)
    y = Square.apply(x)
    assert y.grad_fn.name() == "SquareBackward" and type(y.grad_fn).__name__ == "SquareBackward"
    assert y.grad_fn.next_functions[0][0].variable is x
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 6.0]


def test_custom_function_saved_tensors_version_check_and_second_backward():
    x = ng.tensor([1.0, 3.0], requires_grad=True)
    h = x * 1
    y = Square.apply(h)
    h.add_(1.0)
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0 instead"):
        y.sum().backward()
    y = Square.apply(x)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.sum().backward()


def test_custom_function_gradcheck_and_create_graph():
    x = ng.tensor([0.5, -1.5], dtype=ng.float64, requires_grad=True)  # gradcheck wants float64
    assert ng.autograd.gradcheck(Square.apply, (x,))
    (g,) = ng.autograd.grad(Square.apply(x).sum(), x, create_graph=True)
    (gg,) = ng.autograd.grad(g.sum(), x)
    assert gg.tolist() == [2.0, 2.0]


def test_custom_function_mark_dirty_in_place():
    class AddOneInPlace(ng.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1.0)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad

    x = ng.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    out = AddOneInPlace.apply(h)
    assert out is h and h.tolist() == [3.0, 5.0]
    assert h._version == 2  # the change inside forward, and mark_dirty's bump
    assert h.grad_fn.name() == "AddOneInPlaceBackward"
    (h * 3).sum().backward()
    assert x.grad.tolist() == [6.0, 6.0]
    leaf = ng.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        AddOneInPlace.apply(leaf)


def test_custom_function_without_inputs_requiring_grad_records_nothing():
    y = Square.apply(ng.tensor([2.0]))
    assert y.grad_fn is None and not y.requires_grad
    with ng.no_grad():
        y = Square.apply(ng.tensor([2.0], requires_grad=True))
    assert y.grad_fn is None
