"""``ng.autograd.gradgradcheck``: second derivatives against finite differences, with the
verdicts and errors of ``torch.autograd.gradgradcheck`` (torch 2.13 as the oracle)."""

from __future__ import annotations

import pytest

import naivegraph as ng

torch = pytest.importorskip("torch")

LIBS = [ng, torch]


def leaf(lib, values):
    return lib.tensor(values, dtype=lib.float64, requires_grad=True)


def outcome(program):
    try:
        return "ok", program()
    except Exception as error:  # noqa: BLE001 - the error itself is compared
        return type(error).__name__, str(error)


def cube_with_flat_second_derivative(lib):
    """x ** 3 whose backward is right once but not twice: it detaches x."""

    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x.detach() ** 2 * g

    return Cube


FUNCTIONS = {
    "sin times x": lambda lib: (lambda x: x.sin() * x, (leaf(lib, [0.5, -1.0]),)),
    "two inputs, two outputs": lambda lib: (
        lambda x, y: (x * y.exp(), x.sin()),
        (leaf(lib, [0.5, 2.0]), leaf(lib, [1.0, -0.5])),
    ),
    "matrix product": lambda lib: (
        lambda a, b: (a @ b).tanh(),
        (leaf(lib, [[1.0, 0.5], [0.0, -1.0]]), leaf(lib, [[0.3], [0.7]])),
    ),
    "softmax": lambda lib: (lambda x: x.softmax(0), (leaf(lib, [0.1, 0.2, 0.3]),)),
}


@pytest.mark.parametrize("case", sorted(FUNCTIONS))
def test_correct_second_derivatives_pass_as_in_torch(case):
    for lib in LIBS:
        func, inputs = FUNCTIONS[case](lib)
        assert lib.autograd.gradgradcheck(func, inputs) is True


def test_first_derivatives_can_pass_while_second_derivatives_fail():
    verdicts = []
    for lib in LIBS:
        cube = cube_with_flat_second_derivative(lib).apply
        x = leaf(lib, [1.0, 2.0])
        verdicts.append(
            (
                lib.autograd.gradcheck(cube, (x,)),
                lib.autograd.gradgradcheck(cube, (x,), raise_exception=False),
            )
        )
    assert verdicts == [(True, False), (True, False)]


def flat_cube_check(lib):
    cube = cube_with_flat_second_derivative(lib).apply
    return outcome(lambda: lib.autograd.gradgradcheck(cube, (leaf(lib, [1.0]),)))


def test_failed_check_raises_gradcheck_error_naming_output_and_input():
    for kind, message in (flat_cube_check(ng), flat_cube_check(torch)):
        assert kind == "GradcheckError"
        assert message.startswith("Jacobian mismatch for output 0 with respect to input 0,")
    assert issubclass(ng.autograd.GradcheckError, RuntimeError)


def test_given_grad_outputs_are_used():
    for lib in LIBS:
        x = leaf(lib, [0.5, 1.5])
        v = leaf(lib, [2.0, -1.0])
        assert lib.autograd.gradgradcheck(lambda x: x.exp() * x, (x,), (v,)) is True


def wrong_shape_check(lib):
    x, v = leaf(lib, [1.0, 2.0]), leaf(lib, [1.0, 2.0, 3.0])
    return outcome(lambda: lib.autograd.gradgradcheck(lambda x: x.exp(), (x,), (v,)))


def test_grad_outputs_of_the_wrong_shape_are_refused():
    for kind, message in (wrong_shape_check(ng), wrong_shape_check(torch)):
        assert kind == "RuntimeError"
        assert "Mismatch in shape: grad_output[0] has a shape of" in message


def test_once_differentiable_function_fails_the_check_as_in_torch():
    def program(lib):
        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x**2

            @staticmethod
            @lib.autograd.function.once_differentiable
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 2 * x * g

        return outcome(lambda: lib.autograd.gradgradcheck(Square.apply, (leaf(lib, [1.0]),)))

    # its backward records nothing, so the analytical second derivative is 0
    for kind, message in (program(ng), program(torch)):
        assert kind == "GradcheckError"
        assert message.startswith("Jacobian mismatch for output 0 with respect to input 0,")
        assert "analytical:" in message


def test_gradcheck_checks_every_output_of_a_tuple():
    for lib in LIBS:
        x = leaf(lib, [0.5, 2.0])
        assert lib.autograd.gradcheck(lambda x: (x.exp(), x.sin() * x), (x,)) is True
