"""Custom autograd Functions the PyTorch 2 way, checked against torch 2.13.

Each test runs the same program on ``naivegraph`` and on ``torch`` (the oracle) and
compares values, gradients, error types and the key phrase of the message.
"""

from __future__ import annotations

import numpy as np
import pytest

import naivegraph as ng
from naivegraph.autograd.function import Function, FunctionCtx, once_differentiable

torch = pytest.importorskip("torch")

LIBS = [ng, torch]


def tensor(lib, values, requires_grad=False):
    return lib.tensor(values, dtype=lib.float64, requires_grad=requires_grad)


def as_list(t):
    return None if t is None else t.detach().tolist()


def outcome(program):
    """What ``program`` gave, or the type and message of what it raised."""
    try:
        return ("ok", program())
    except Exception as error:  # noqa: BLE001 - the error itself is compared
        return (type(error).__name__, str(error))


def same_error(ours, theirs, phrase):
    assert ours[0] == theirs[0]
    assert phrase in ours[1] and phrase in theirs[1]


# -- forward without ctx, with setup_context --------------------------------------------------


def mul_add(lib):
    class MulAdd(lib.autograd.Function):
        @staticmethod
        def forward(x, y):
            return x * y, x + y

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, y = inputs
            ctx.save_for_backward(x, y)
            ctx.seen = (type(output).__name__, len(output), ctx.needs_input_grad)

        @staticmethod
        def backward(ctx, g_prod, g_sum):
            x, y = ctx.saved_tensors
            return g_prod * y + g_sum, g_prod * x + g_sum

    return MulAdd


@pytest.mark.parametrize("lib", LIBS, ids=["naivegraph", "torch"])
def test_setup_context_function_gives_values_names_and_gradients(lib):
    x = tensor(lib, [1.0, 2.0], requires_grad=True)
    y = tensor(lib, [3.0, 4.0])
    prod, total = mul_add(lib).apply(x, y)
    assert prod.tolist() == [3.0, 8.0] and total.tolist() == [4.0, 6.0]
    assert prod.grad_fn.name() == "MulAddBackward"
    assert prod.grad_fn.seen == ("tuple", 2, (True, False))
    (prod.sum() + 2 * total.sum()).backward()
    assert x.grad.tolist() == [5.0, 6.0]


@pytest.mark.parametrize("lib", LIBS, ids=["naivegraph", "torch"])
def test_forward_and_setup_context_run_without_recording(lib):
    seen = []

    class Probe(lib.autograd.Function):
        @staticmethod
        def forward(x):
            seen.append(("forward", lib.is_grad_enabled()))
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            seen.append(("setup", lib.is_grad_enabled(), output.requires_grad))

        @staticmethod
        def backward(ctx, g):
            return g * 2

    Probe.apply(tensor(lib, [1.0], requires_grad=True))
    assert seen == [("forward", False), ("setup", False, False)]


def test_forward_with_ctx_and_setup_context_is_a_type_error_as_in_torch():
    def program(lib):
        class Both(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass

            @staticmethod
            def backward(ctx, g):
                return g

        return outcome(lambda: Both.apply(tensor(lib, [1.0], requires_grad=True)))

    same_error(program(ng), program(torch), "missing")


def test_forward_without_ctx_and_no_setup_context_is_a_type_error_as_in_torch():
    def program(lib):
        class NoSetup(lib.autograd.Function):
            @staticmethod
            def forward(x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g

        return outcome(lambda: NoSetup.apply(tensor(lib, [1.0], requires_grad=True)))

    same_error(program(ng), program(torch), "takes 1 positional argument but 2 were given")


def test_missing_backward_and_missing_forward_raise_torchs_errors():
    def program(lib, which):
        if which == "backward":

            class Half(lib.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    return x * 2

            x = tensor(lib, [1.0], requires_grad=True)
            return outcome(lambda: Half.apply(x).sum().backward())

        class Other(lib.autograd.Function):
            @staticmethod
            def backward(ctx, g):
                return g

        return outcome(lambda: Other.apply(tensor(lib, [1.0], requires_grad=True)))

    same_error(
        program(ng, "backward"),
        program(torch, "backward"),
        "You must implement either the backward or vjp method",
    )
    same_error(
        program(ng, "forward"), program(torch, "forward"), "You must implement the forward function"
    )


# -- the ng.autograd.function module -----------------------------------------------------------


def test_autograd_function_module_exposes_torchs_names():
    assert ng.autograd.function.Function is ng.autograd.Function is Function
    assert ng.autograd.function.FunctionCtx is FunctionCtx
    assert callable(once_differentiable)
    for name in ("Function", "FunctionCtx", "once_differentiable"):
        assert hasattr(torch.autograd.function, name)


# -- grads of unused outputs: materialised, or None --------------------------------------------


def two_outputs(lib, materialize):
    received = []

    class Two(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(materialize)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g_a, g_b):
            received.append((as_list(g_a), as_list(g_b)))
            return (g_a if g_a is not None else 0) * 2 + (g_b if g_b is not None else 0) * 3

    return Two, received


@pytest.mark.parametrize("materialize", [True, False])
def test_unused_output_grads_are_zeros_unless_materialising_is_off(materialize):
    results = []
    for lib in LIBS:
        Two, received = two_outputs(lib, materialize)
        x = tensor(lib, [1.0, 2.0], requires_grad=True)
        a, _ = Two.apply(x)
        a.sum().backward()
        results.append((received, x.grad.tolist()))
    assert results[0] == results[1]
    expected_unused = [0.0, 0.0] if materialize else None
    assert results[0] == ([([1.0, 1.0], expected_unused)], [2.0, 2.0])


def sort_program(lib):
    received: list = []

    class Sort(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            order = lib.tensor(np.argsort(x.numpy()))
            values = x[order]
            ctx.mark_non_differentiable(order)
            ctx.save_for_backward(order)
            return values, order

        @staticmethod
        def backward(ctx, g_values, g_order):
            (order,) = ctx.saved_tensors
            received.append((g_order.tolist(), str(g_order.dtype).split(".")[-1]))
            out = lib.zeros_like(g_values)
            out[order] = g_values
            return out

    x = tensor(lib, [3.0, 1.0, 2.0], requires_grad=True)
    values, order = Sort.apply(x)
    (values * tensor(lib, [1.0, 2.0, 3.0])).sum().backward()
    return order.requires_grad, order.tolist(), received, x.grad.tolist()


def test_non_differentiable_output_gets_zeros_of_its_dtype_and_no_grad():
    assert sort_program(ng) == sort_program(torch)
    assert sort_program(ng) == (False, [1, 2, 0], [([0, 0, 0], "int64")], [3.0, 1.0, 2.0])


def test_only_non_differentiable_output_cannot_be_backpropagated():
    def program(lib):
        class Mask(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x * 2
                ctx.mark_non_differentiable(y)
                return y

            @staticmethod
            def backward(ctx, g):
                return g

        y = Mask.apply(tensor(lib, [1.0], requires_grad=True))
        assert not y.requires_grad and y.grad_fn is None
        return outcome(lambda: y.sum().backward())

    same_error(program(ng), program(torch), "does not require grad")


# -- ctx as seen from grad_fn; needs_input_grad; saved_tensors after backward -------------------


def scale(lib):
    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, factor, bias):
            ctx.factor = factor
            ctx.save_for_backward(x)
            return x * factor + bias

        @staticmethod
        def backward(ctx, g):
            return g * ctx.factor, None, g

    return Scale


@pytest.mark.parametrize("lib", LIBS, ids=["naivegraph", "torch"])
def test_grad_fn_answers_for_its_ctx(lib):
    x = tensor(lib, [1.0, 2.0], requires_grad=True)
    bias = tensor(lib, [0.5, 0.5])
    y = scale(lib).apply(x, 3.0, bias)
    assert y.grad_fn.factor == 3.0
    assert y.grad_fn.needs_input_grad == (True, False, False)
    assert y.grad_fn.saved_tensors[0] is x
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_saved_tensors_after_backward_raise_the_second_backward_error():
    def program(lib):
        x = tensor(lib, [1.0, 2.0], requires_grad=True)
        y = scale(lib).apply(x, 3.0, tensor(lib, [0.0, 0.0]))
        y.sum().backward()
        return outcome(lambda: y.grad_fn.saved_tensors)

    same_error(program(ng), program(torch), "Trying to backward through the graph a second time")


def test_saved_tensors_survive_backward_with_retain_graph():
    for lib in LIBS:
        x = tensor(lib, [1.0, 2.0], requires_grad=True)
        y = scale(lib).apply(x, 3.0, tensor(lib, [0.0, 0.0]))
        y.sum().backward(retain_graph=True)
        assert y.grad_fn.saved_tensors[0] is x


def test_node_without_such_attribute_names_its_class():
    x = ng.tensor([1.0], requires_grad=True)
    y = scale(ng).apply(x, 2.0, ng.tensor([0.0]))
    with pytest.raises(AttributeError, match="'ScaleBackward' object has no attribute 'nope'"):
        y.grad_fn.nope


# -- once_differentiable ------------------------------------------------------------------------


def square_once(lib, decorate):
    states = []

    class SquareOnce(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**2

        @staticmethod
        def backward(ctx, g):
            states.append(lib.is_grad_enabled())
            (x,) = ctx.saved_tensors
            return 2 * x * g

    if decorate:
        SquareOnce.backward = staticmethod(
            lib.autograd.function.once_differentiable(SquareOnce.backward)
        )
    return SquareOnce, states


def test_once_differentiable_backward_runs_without_recording():
    for lib in LIBS:
        SquareOnce, states = square_once(lib, decorate=True)
        x = tensor(lib, [1.0, 2.0], requires_grad=True)
        (g,) = lib.autograd.grad(SquareOnce.apply(x).sum(), x, create_graph=True)
        assert states == [False]
        assert g.tolist() == [2.0, 4.0]
        assert not g.requires_grad  # the incoming gradient did not require grad


def test_double_backward_through_once_differentiable_raises_torchs_error():
    def program(lib):
        SquareOnce, _ = square_once(lib, decorate=True)
        x = tensor(lib, [1.0, 2.0], requires_grad=True)
        (g,) = lib.autograd.grad((SquareOnce.apply(x) ** 2).sum(), x, create_graph=True)
        assert g.requires_grad and g.tolist() == [4.0, 32.0]
        return outcome(lambda: g.sum().backward())

    same_error(
        program(ng),
        program(torch),
        "trying to differentiate twice a function that was marked with @once_differentiable",
    )


def test_without_once_differentiable_the_double_backward_works():
    results = []
    for lib in LIBS:
        SquareOnce, states = square_once(lib, decorate=False)
        x = tensor(lib, [1.0, 2.0], requires_grad=True)
        (g,) = lib.autograd.grad((SquareOnce.apply(x) ** 2).sum(), x, create_graph=True)
        g.sum().backward()
        results.append((states, x.grad.tolist()))
    # the second pass runs backward again, now without create_graph
    assert results[0] == results[1] == ([True, False], [12.0, 48.0])


# -- numpy() inside forward, under no_grad, and elsewhere ----------------------------------------


def sine_via_numpy(lib):
    class ViaNumpy(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return lib.tensor(np.sin(x.numpy()))

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * lib.tensor(np.cos(x.detach().numpy()))

    x = tensor(lib, [0.0, 1.0], requires_grad=True)
    ViaNumpy.apply(x).sum().backward()
    return x.grad.tolist()


def test_numpy_is_allowed_inside_forward_on_a_tensor_that_requires_grad():
    assert sine_via_numpy(ng) == sine_via_numpy(torch) == [1.0, np.cos(1.0)]


def test_numpy_is_refused_on_a_tensor_that_requires_grad_outside_no_grad():
    ours = outcome(lambda: ng.tensor([1.0], requires_grad=True).numpy())
    theirs = outcome(lambda: torch.tensor([1.0], requires_grad=True).numpy())
    same_error(ours, theirs, "Can't call numpy() on Tensor that requires grad.")
    same_error(ours, theirs, "Use tensor.detach().numpy() instead.")
    for lib in LIBS:
        x = tensor(lib, [1.0], requires_grad=True)
        with lib.no_grad():
            assert x.numpy().tolist() == [1.0]


def test_a_backward_that_returns_a_list_is_refused_with_torchs_runtime_error():
    class Double(ng.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return [grad * 2]  # a list is one value, not one gradient per input

    x = ng.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"expected Variable or None \(got list\)") as error:
        Double.apply(x).sum().backward()
    assert "one gradient tensor (or None) per forward input" in str(error.value)
    assert x.grad is None
