"""Lessons 10-13: updates probed at the lesson's scale and two batch sizes, loops whose
gradients are checked too, whole numbers compared exactly, the library's own rules
refused, learner state put back, and an amortisation plot whose lines all differ."""

from __future__ import annotations

import numpy as np
import pytest
from checker_results import rejection_message
from custom_functions import cube_with
from lesson_answers_10_13 import LR, UPDATE_SECRETS, lesson_network
from lesson_answers_10_13 import sum_by_hand as sum_right

import naivegraph as ng
import naivegraph.autograd.forward_ad as fwAD
import naivegraph.static as ns
from naivegraph.dynamic import forward
from naivegraph.lessons import exercises as ex
from naivegraph.lessons import plots


# -- 10-1 -----------------------------------------------------------------------------------
def test_update_with_its_gradient_clipped_below_the_lessons_scale_is_refused():
    def clipped(w, grad, loss, x):
        return w.assign(w - LR * ns.clamp(grad, -5e5, 5e5))

    message = rejection_message(ex.check_update_nodes(*lesson_network(clipped)), *UPDATE_SECRETS)
    assert "not by one step of gradient descent" in message


def test_update_that_depends_on_the_batch_size_is_refused():
    def per_batch(w, grad, loss, x):
        rows = ns.sum(x * 0.0 + 1.0) / 1000.0
        return w.assign(w - LR * grad / rows * 5.0)

    message = rejection_message(ex.check_update_nodes(*lesson_network(per_batch)), *UPDATE_SECRETS)
    assert "depend on the batch size" in message


@pytest.mark.parametrize(
    "pred",
    [lambda loss: loss < 1e30, lambda loss: ns.constant(True)],
)
def test_update_inside_a_cond_is_accepted(pred):
    def in_cond(w, grad, loss, x):
        return w.assign(ns.cond(pred(loss), lambda: w - LR * grad, lambda: w))

    assert ex.check_update_nodes(*lesson_network(in_cond))


def test_update_right_with_weights_stored_as_zeros_after_it_is_told_their_gradient_is_zero():
    def right(w, grad, loss, x):
        return w.assign(w - LR * grad)

    def zeros(w1, w2):
        w1.assign(np.zeros((1000, 100), np.float32))

    result = ex.check_update_nodes(*lesson_network(right, after=zeros))
    message = rejection_message(result, *UPDATE_SECRETS)
    assert "gradient is exactly 0 at the value w1 holds now" in message
    assert "only zeros" in message and "assign given an array" in message


def test_update_written_the_lessons_way_still_passes_at_the_lessons_scale():
    assert ex.check_update_nodes(*lesson_network(lambda w, grad, loss, x: w.assign(w - LR * grad)))


# -- 10-2 -----------------------------------------------------------------------------------
@pytest.mark.parametrize("predicted", [(2.00001, 2, 3), (2, 2, 3.00002), (2, 1.9999999, 3)])
def test_run_semantics_near_whole_numbers_are_refused(predicted):
    message = rejection_message(ex.check_run_semantics(predicted), "(2.0, 2.0, 3.0)")
    assert "whole number" in message


@pytest.mark.parametrize("predicted", [(2, 2, 3), (2.0, 2.0, 3.0), [np.float64(2), 2, 3]])
def test_run_semantics_exact_answer_still_passes(predicted):
    assert ex.check_run_semantics(predicted)


# -- 10-3 -----------------------------------------------------------------------------------
XS_DATA = np.linspace(-1.0, 2.0, 200)
POLY_SECRETS = ("p + 1.0, y + e", "e * xp ** p")


def check_body(make_body):
    rng = np.random.default_rng(0)
    coef = rng.standard_normal(5) * 0.1
    with ns.Graph() as poly:
        xp = ns.placeholder("x", shape=(None,))
        top = ns.placeholder("top", shape=())
        a, b, c, d, e = [ns.Variable(np.array(v), name=n) for v, n in zip(coef, "abcde")]
        base = a + b * xp + c * xp**2.0 + d * xp**3.0

    def more(p, y):
        return p < top

    return ex.check_poly_loop(poly, more, make_body(xp, e), base, xp, top, [a, b, c, d, e])


def test_poly_loop_with_the_right_values_but_no_gradient_of_e_is_refused():
    def body(xp, e):
        return lambda p, y: (p + 1.0, y + ns.floor_divide(e, 1e-300) * 1e-300 * xp**p)

    message = rejection_message(check_body(body), *POLY_SECRETS)
    assert "gradient with respect to e" in message


@pytest.mark.parametrize(
    "body",
    [
        lambda xp, e: lambda p, y: (p + 1.0, ns.where(p < 6.0, y + e * xp**p, y)),
        lambda xp, e: lambda p, y: (p + 1.0, y + ns.where(p < 6.0, e, e * 0.5) * xp**p),
    ],
)
def test_poly_loop_right_only_up_to_top_six_is_refused(body):
    message = rejection_message(check_body(body), *POLY_SECRETS)
    assert "with top = 7" in message


def test_poly_loop_with_a_term_scaled_by_a_hair_is_refused():
    message = rejection_message(
        check_body(lambda xp, e: lambda p, y: (p + 1.0, y + e * xp**p * 1.000001)), *POLY_SECRETS
    )
    assert "close to the polynomial but not equal" in message


def test_poly_loop_reading_the_data_array_is_told_it_ignores_the_placeholder():
    message = rejection_message(
        check_body(lambda xp, e: lambda p, y: (p + 1.0, y + e * XS_DATA**p)), *POLY_SECRETS
    )
    assert "does not depend on the placeholder xp" in message and "xs_data" in message
    assert "dtype" not in message


@pytest.mark.parametrize(
    "body",
    [
        lambda xp, e: lambda p, y: (p + 1.0, y + e * xp**p),
        lambda xp, e: lambda p, y: (p + 1, xp**p * e + y),
    ],
)
def test_poly_loop_right_forms_still_pass(body):
    assert check_body(body)


def test_lesson_10_says_the_static_polynomial_is_float32_and_what_same_means():
    from pathlib import Path

    text = Path("naivegraph/course/src/10_static_graphs_for_real.py").read_text()
    assert "default dtype, float32" in text and "float64 tensor" in text
    assert "equal to float32's precision" in text


# -- 11 -------------------------------------------------------------------------------------
class Dual:
    def __init__(self, value, tangent=0.0):
        self.value, self.tangent = value, tangent

    def __add__(self, other):
        other = other if isinstance(other, Dual) else Dual(other)
        return Dual(self.value + other.value, self.tangent + other.tangent)

    def __sub__(self, other):
        other = other if isinstance(other, Dual) else Dual(other)
        return Dual(self.value - other.value, self.tangent - other.tangent)


def dual_with(div_tangent, add=None):
    cls = type("Dual", (Dual,), {})

    def make(v, t=0.0):
        return v if isinstance(v, Dual) else cls(v, t)

    cls.__mul__ = lambda s, o: cls(
        s.value * make(o).value, s.tangent * make(o).value + s.value * make(o).tangent
    )
    cls.__truediv__ = lambda s, o: cls(s.value / make(o).value, div_tangent(s, make(o)))
    if add is not None:
        cls.__add__ = add
    return cls


def right_div(u, v):
    return (u.tangent * v.value - u.value * v.tangent) / v.value**2


def test_dual_with_its_add_overwritten_is_refused():
    broken = dual_with(
        right_div,
        add=lambda s, o: Dual(s.value + (o.value if isinstance(o, Dual) else o), s.tangent),
    )
    message = rejection_message(ex.check_dual_rules(broken), "u.tangent * v.value")
    assert "Dual's __add__ no longer gives its rule" in message


def test_div_with_a_denominator_of_the_wrong_sign_is_told_the_denominator():
    def abs_denominator(u, v):
        return (u.tangent * v.value - u.value * v.tangent) / (abs(v.value) * v.value)

    message = rejection_message(ex.check_dual_rules(dual_with(abs_denominator)), "v.value ** 2")
    assert "the denominator is not" in message and "the numerator's change" not in message


def test_div_with_the_numerator_reversed_is_still_told_the_sign():
    def reversed_numerator(u, v):
        return (u.value * v.tangent - u.tangent * v.value) / v.value**2

    message = rejection_message(ex.check_dual_rules(dual_with(reversed_numerator)))
    assert "the numerator's change counts positively" in message


def test_dual_written_right_still_passes():
    assert ex.check_dual_rules(dual_with(right_div))


def jacobian_forward(leave=None, typo=False):
    def jacobian(f, x):
        n = x.shape[0]
        columns = []
        for i in range(n):
            seed = ng.eye(n, dtype=x.dtype)[i]
            if leave == "grad mode":
                ng.set_grad_enabled(False)
            if leave == "dtype":
                ng.set_default_dtype(ng.float64)
            if typo:
                fwAD.enter_dual_level()
                out = f(fwAD.make_dual(x, seed))
                columns.append(fwAD.unpack_dual(out).tangnet)
                fwAD.exit_dual_level()
            else:
                _, column = ng.func.jvp(f, (x,), (seed,))
                columns.append(column)
        return ng.stack(columns, dim=1)

    return jacobian


def jacobian_reverse(debug=False, leave=False):
    def jacobian(f, x):
        y, vjp_fn = ng.func.vjp(f, x)
        m = y.shape[0]
        rows = []
        for i in range(m):
            if debug and i == 0:
                f(x)  # a debug print's call
            if leave:
                ng.set_grad_enabled(False)
            (row,) = vjp_fn(ng.eye(m, dtype=y.dtype)[i])
            rows.append(row)
        return ng.stack(rows, dim=0)

    return jacobian


@pytest.mark.parametrize(
    "check, answer",
    [
        (lambda a: ex.check_jacobian_forward(a), jacobian_forward(leave="grad mode")),
        (lambda a: ex.check_jacobian_forward(a), jacobian_forward(leave="dtype")),
        (lambda a: ex.check_jacobian_reverse(a), jacobian_reverse(leave=True)),
    ],
)
def test_jacobian_that_leaves_state_changed_is_not_accepted_and_the_state_is_put_back(
    check, answer
):
    dtype = ng.get_default_dtype()
    result = check(answer)
    assert not result.passed and result.status == "fail"
    assert ng.is_grad_enabled() and ng.get_default_dtype() == dtype


def test_jacobian_with_a_typo_after_entering_a_dual_level_reports_the_typo_and_closes_it():
    message = rejection_message(ex.check_jacobian_forward(jacobian_forward(typo=True)))
    assert "AttributeError" in message and "tangnet" in message
    assert "Nested forward mode" not in message
    assert forward.dual.level is None
    assert ex.check_jacobian_forward(jacobian_forward())  # fixed: accepted, no leak left


def test_jacobian_reverse_with_a_debug_call_of_f_is_accepted_as_forward_is():
    assert ex.check_jacobian_reverse(jacobian_reverse(debug=True))
    assert ex.check_jacobian_reverse(jacobian_reverse())


def test_jacobian_reverse_recording_f_again_per_row_is_still_refused():
    def again(f, x):
        y, _ = ng.func.vjp(f, x)
        rows = []
        for i in range(y.shape[0]):
            y, vjp_fn = ng.func.vjp(f, x)
            (row,) = vjp_fn(ng.eye(y.shape[0], dtype=y.dtype)[i])
            rows.append(row)
        return ng.stack(rows, dim=0)

    assert "recorded the forward pass again" in rejection_message(ex.check_jacobian_reverse(again))


# -- 12 -------------------------------------------------------------------------------------
def sum_library(grad, shape):
    from naivegraph.ops.shapes import sum_to

    return sum_to(grad, shape)


def test_sum_to_shape_by_the_librarys_sum_to_is_refused():
    message = rejection_message(ex.check_sum_to_shape(sum_library), "keepdims=True")
    assert "the library's own sum_to" in message


def test_sum_to_shape_scaled_by_a_hair_is_refused():
    message = rejection_message(
        ex.check_sum_to_shape(lambda g, s: sum_right(g, s) * (1 + 1e-9)), "keepdims=True"
    )
    assert "close but not equal" in message


def test_sum_to_shape_for_at_most_two_leading_dims_is_refused():
    def two(grad, shape):
        for _ in range(2):
            if grad.ndim - len(shape) >= 1:
                grad = grad.sum(axis=0)
        return grad.sum(axis=tuple(i for i, n in enumerate(shape) if n == 1), keepdims=True)

    message = rejection_message(ex.check_sum_to_shape(two), "keepdims=True")
    assert "MORE than one leading dimension" in message


def test_sum_to_shape_written_by_hand_still_passes():
    assert ex.check_sum_to_shape(sum_right)


def matmul_library(X, W, dY):
    from naivegraph.ops.table import _matmul_partial

    out = X @ W
    return _matmul_partial(0)(dY, X, W, out), _matmul_partial(1)(dY, X, W, out)


def matmul_table(X, W, dY):
    from naivegraph.ops.table import OPS

    partials, out = OPS["matmul"].partials, X @ W
    return partials[0](dY, X, W, out), partials[1](dY, X, W, out)


@pytest.mark.parametrize("answer", [matmul_library, matmul_table])
def test_matmul_backward_by_the_librarys_rule_is_refused(answer):
    message = rejection_message(ex.check_matmul_backward(answer), "dY @ W.T", "X.T @ dY")
    assert "the library's own rule for a matrix product" in message


def test_matmul_backward_by_hand_still_passes():
    assert ex.check_matmul_backward(lambda X, W, dY: (dY @ W.T, X.T @ dY))


def cube_class(backward):
    """``custom_functions.cube_with`` for a backward written of ``(x, grad_output)``."""
    return cube_with(lambda ctx, grad_output: backward(*ctx.saved_tensors, grad_output))


def test_cube_clamping_x_at_1e5_is_refused():
    cube = cube_class(lambda x, g: 3 * x.clamp(-1e5, 1e5) ** 2 * g)
    message = rejection_message(ex.check_cube_function(cube), "3 * x ** 2")
    assert "wrong at |x| = 1e4 and beyond" in message


def test_cube_written_right_still_passes():
    assert ex.check_cube_function(cube_class(lambda x, g: 3 * x**2 * g))


# -- 13 -------------------------------------------------------------------------------------
def test_every_line_of_the_amortisation_plot_has_its_own_colour():
    for setup in (
        {"dynamic": 0.0, "traced + compiled": 0.01},
        {"traced": 0.01, "dynamic": 0.0, "static": 0.02, "eager": 0.0},
    ):
        fig = plots.amortisation(setup, {name: 1e-4 for name in setup}, runs=50)
        colours = [line.get_color() for line in fig.axes[0].lines if line.get_label() in setup]
        assert len(colours) == len(setup) and len(set(colours)) == len(setup)


@pytest.mark.parametrize("op", [ns.tanh, ng.tanh, np.tanh, "tanh"])
def test_baked_branch_accepts_the_activation_function_itself(op):
    assert ex.check_baked_branch((op, 3))


@pytest.mark.parametrize("op", [ns.relu, ng.relu])
def test_baked_branch_tells_relu_given_as_a_function_it_is_the_other_branch(op):
    message = rejection_message(ex.check_baked_branch((op, 3)), '"tanh"')
    assert "which shape did the example have" in message
