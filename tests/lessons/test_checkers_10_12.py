"""The checkers of lessons 10-12 accept right answers in any equivalent form, reject each
typical wrong one with a hint, never print the expected answer, and never raise."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from checker_results import rejection_message
from custom_functions import cube_right, cube_with
from lesson_answers_10_13 import jacobian_forward, sum_to_shape
from polynomial_graph import poly_graph

import naivegraph as ng
import naivegraph.static as ns
from naivegraph.lessons import checking
from naivegraph.lessons import exercises as ex

# -- 12-1: a custom Function --------------------------------------------------------------


def also_right_backward(ctx, grad_output):  # the same, written another way
    (x,) = ctx.saved_tensors
    return grad_output * x * x * 3.0


def no_upstream(ctx, grad_output):
    (x,) = ctx.saved_tensors
    return 3 * x**2


def power_rule_slip(ctx, grad_output):
    (x,) = ctx.saved_tensors
    return 2 * x * grad_output


@pytest.mark.parametrize("backward", [cube_right, also_right_backward])
def test_cube_function_accepts_the_chain_rule_in_any_form(backward):
    assert ex.check_cube_function(cube_with(backward))


def in_place_mul_(ctx, grad_output):
    (x,) = ctx.saved_tensors
    return grad_output.mul_(3 * x**2)


def in_place_imul(ctx, grad_output):
    (x,) = ctx.saved_tensors
    grad_output *= 3 * x**2
    return grad_output


def in_place_on_a_new_tensor(ctx, grad_output):  # right: the new tensor is its own
    (x,) = ctx.saved_tensors
    return (3 * x**2).mul_(grad_output)


@pytest.mark.parametrize("backward", [in_place_mul_, in_place_imul])
def test_cube_function_changing_grad_output_in_place_is_refused(backward):
    message = rejection_message(ex.check_cube_function(cube_with(backward)), "3 * x ** 2 * grad_output",
                       "3x^2")
    assert "IN PLACE" in message
    again = rejection_message(ex.check_cube_function(cube_with(backward)), "3 * x ** 2 * grad_output")
    assert "NEW tensor" in again


def test_cube_function_in_place_on_its_own_new_tensor_is_accepted():
    assert ex.check_cube_function(cube_with(in_place_on_a_new_tensor))


def test_cube_function_without_grad_output_gets_a_chain_rule_hint_then_a_stronger_one():
    first = rejection_message(ex.check_cube_function(cube_with(no_upstream)), "3 * x ** 2 * grad_output")
    assert "what if y feeds further ops" in first
    second = rejection_message(ex.check_cube_function(cube_with(no_upstream)), "3 * x ** 2 * grad_output")
    assert "combines with the local derivative" in second
    assert "multiply the local derivative by grad_output" not in second  # that is the code
    assert 'ex.reveal("12-1")' in second


def test_cube_function_with_the_wrong_power_rule_is_sent_to_the_power_rule():
    message = rejection_message(ex.check_cube_function(cube_with(power_rule_slip)))
    assert "power rule" in message


def test_cube_function_that_raises_is_reported_not_raised():
    def broken(ctx, grad_output):
        return undefined_name  # noqa: F821

    message = rejection_message(ex.check_cube_function(cube_with(broken)))
    assert "your code raised NameError" in message


def test_cube_function_with_blank_backward_is_not_done_yet():
    assert ex.check_cube_function(cube_with(lambda ctx, g: ...)).status == "todo"
    assert ex.check_cube_function(...).status == "todo"


# -- 12-2: sum back to a shape --------------------------------------------------------------


def sum_to_shape_by_loop(grad, shape):  # right, written differently
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, n in enumerate(shape):
        if n == 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad


def drops_the_kept_ones(grad, shape):  # forgets keepdims
    grad = grad.sum(axis=tuple(range(grad.ndim - len(shape))))
    return grad.sum(axis=tuple(i for i, n in enumerate(shape) if n == 1))


def only_leading(grad, shape):  # forgets stretched dimensions
    return grad.sum(axis=tuple(range(grad.ndim - len(shape))))


def averages(grad, shape):
    return sum_to_shape(grad, shape) / max(1, grad.size // max(1, int(np.prod(shape))))


@pytest.mark.parametrize("fn", [sum_to_shape, sum_to_shape_by_loop])
def test_sum_to_shape_accepts_right_answers(fn):
    assert ex.check_sum_to_shape(fn)


@pytest.mark.parametrize(
    "fn, phrase",
    [(drops_the_kept_ones, "keepdims=True"), (only_leading, "stretch"), (averages, "sum")],
)
def test_sum_to_shape_rejects_typical_mistakes_with_their_hint(fn, phrase):
    assert phrase in rejection_message(ex.check_sum_to_shape(fn))


def test_sum_to_shape_blank_body_is_not_done_yet():
    assert ex.check_sum_to_shape(lambda grad, shape: None).status == "todo"


# -- 12-3: matmul's backward ----------------------------------------------------------------


@pytest.mark.parametrize(
    "fn",
    [
        lambda X, W, dY: (dY @ W.T, X.T @ dY),
        lambda X, W, dY: (np.matmul(dY, W.transpose()), (dY.T @ X).T),
    ],
)
def test_matmul_backward_accepts_right_answers(fn):
    assert ex.check_matmul_backward(fn)


@pytest.mark.parametrize(
    "fn, phrase",
    [
        (lambda X, W, dY: (X.T @ dY, dY @ W.T), "swapped"),
        (lambda X, W, dY: (dY @ W, X @ dY), "both of your products need fixing"),
        (lambda X, W, dY: (dY @ W.T, X @ dY), "product for dW does not fit"),
        (lambda X, W, dY: (dY @ W.T * 2, X.T @ dY), "constant factor"),
        (lambda X, W, dY: (dY @ W.T, (X.T @ dY) + 1), "not the right values"),
    ],
)
def test_matmul_backward_rejects_typical_mistakes(fn, phrase):
    assert phrase in rejection_message(ex.check_matmul_backward(fn), "dY @ W.T", "X.T @ dY")


def test_matmul_backward_returning_naivegraph_tensors_is_refused():
    def via_tensors(X, W, dY):
        return ng.tensor(dY) @ ng.tensor(W).T, ng.tensor(X).T @ ng.tensor(dY)

    message = rejection_message(ex.check_matmul_backward(via_tensors), "dY @ W.T", "X.T @ dY")
    assert "naivegraph tensors" in message and "numpy arrays" in message


def test_matmul_backward_returning_one_array_says_return_two():
    message = rejection_message(ex.check_matmul_backward(lambda X, W, dY: dY @ W.T))
    assert "(dX, dW)" in message


# -- 12-6: which backward made the NaN ------------------------------------------------------


@pytest.mark.parametrize("name", ["SqrtBackward0", " 'SqrtBackward0' "])
def test_first_nan_accepts_the_name(name):
    assert ex.check_first_nan(name)


@pytest.mark.parametrize(
    "name, phrase",
    [("sqrt", "exactly as grad_fn.name() spells"),
     ("MulBackward0", "returns finite numbers here"),
     ("SumBackward0", "returns finite numbers here")],
)
def test_first_nan_rejects_close_misses_without_the_answer(name, phrase):
    message = rejection_message(ex.check_first_nan(name), "SqrtBackward0")
    assert phrase in message
    assert message.lower().count("follow the gradient") <= 1  # said once, not twice


def test_first_nan_blank_is_not_done_and_a_number_is_refused():
    assert ex.check_first_nan(...).status == "todo"
    assert ex.check_first_nan(3).status == "fail"


# -- 11-1: dual numbers -----------------------------------------------------------------


class Dual:
    def __init__(self, value, tangent=0.0):
        self.value, self.tangent = value, tangent


def dual_with(mul_tangent, div_tangent):
    class Made(Dual):
        def __mul__(self, o):
            return Dual(self.value * o.value, mul_tangent(self, o))

        def __truediv__(self, o):
            return Dual(self.value / o.value, div_tangent(self, o))

    return Made


def product_rule(u, v):
    return u.tangent * v.value + u.value * v.tangent


def quotient_rule(u, v):
    return (u.tangent * v.value - u.value * v.tangent) / v.value**2


def test_dual_rules_accept_the_product_and_quotient_rules_in_any_form():
    assert ex.check_dual_rules(dual_with(product_rule, quotient_rule))
    assert ex.check_dual_rules(
        dual_with(
            lambda u, v: v.value * u.tangent + v.tangent * u.value,
            lambda u, v: u.tangent / v.value - u.value * v.tangent / (v.value * v.value),
        )
    )


@pytest.mark.parametrize(
    "mul, div, phrase",
    [
        (lambda u, v: u.tangent * v.tangent, quotient_rule, "OTHER factor"),
        (lambda u, v: u.tangent * v.value, quotient_rule, "two terms"),
        (product_rule, lambda u, v: (u.value * v.tangent - u.tangent * v.value) / v.value**2,
         "wrong sign"),
        (product_rule, lambda u, v: (u.tangent * v.value - u.value * v.tangent) / v.value,
         "v squared"),
    ],
)
def test_dual_rules_reject_each_slip_with_its_own_hint_and_no_formula(mul, div, phrase):
    message = rejection_message(ex.check_dual_rules(dual_with(mul, div)), "u'v + uv'", "(u'v - uv')")
    assert phrase in message


def test_dual_rules_second_try_gives_the_rule_and_the_way_to_the_answer():
    made = dual_with(lambda u, v: u.tangent * v.tangent, quotient_rule)
    rejection_message(ex.check_dual_rules(made))
    assert 'ex.reveal("11-1")' in ex.check_dual_rules(made).message


def test_dual_rules_blank_is_not_done_yet():
    assert ex.check_dual_rules(dual_with(lambda u, v: ..., quotient_rule)).status == "todo"


# -- 11-2 and 11-3: Jacobians from JVPs and VJPs ------------------------------------------


def jacobian_reverse(f, x):
    y, vjp_fn = ng.func.vjp(f, x)
    m = y.shape[0]
    return ng.stack([vjp_fn(ng.eye(m, dtype=y.dtype)[i])[0] for i in range(m)], dim=0)


def stacked_wrong_way(f, x):
    return jacobian_forward(f, x).T


def one_seed_only(f, x):
    n = x.shape[0]
    column = ng.func.jvp(f, (x,), (ng.eye(n, dtype=x.dtype)[0],))[1]
    return ng.stack([column] * n, dim=1)


def typed_by_hand(f, x):
    return ng.tensor([[2.0, 1.0], [-1.5, 1.75]])


def test_jacobians_accept_one_pass_per_column_or_row():
    assert ex.check_jacobian_forward(jacobian_forward)
    assert ex.check_jacobian_reverse(jacobian_reverse)


@pytest.mark.parametrize(
    "fn, phrase",
    [(stacked_wrong_way, "transposed"), (one_seed_only, "different row of the identity"),
     (typed_by_hand, "4 outputs")],
)
def test_jacobians_reject_typical_mistakes_including_a_hand_typed_matrix(fn, phrase):
    assert phrase in rejection_message(ex.check_jacobian_forward(fn), "-1.5", "1.75")


def test_jacobian_with_a_blank_left_in_its_loop_is_not_done_yet():
    def unfinished(f, x):
        columns = []
        for i in range(x.shape[0]):
            ...
        return ng.stack(columns, dim=1)

    assert ex.check_jacobian_reverse(unfinished).status == "todo"


# -- 11-4: choosing the mode --------------------------------------------------------------


def test_mode_choice_accepts_the_cheaper_mode_in_any_case():
    assert ex.check_mode_choice(("jacrev", "jacfwd", "jacfwd"))
    assert ex.check_mode_choice(["JACREV", " jacfwd", "jacfwd "])


def test_mode_choice_points_at_the_first_wrong_case_without_the_answer():
    message = rejection_message(ex.check_mode_choice(("jacfwd", "jacfwd", "jacfwd")), "jacrev\"")
    assert "case 1 (10000 inputs, 1 output)" in message


def test_mode_choice_refuses_other_words():
    assert "three strings" in rejection_message(ex.check_mode_choice(("forward", "reverse", "x")))


# -- 10-1: update nodes -------------------------------------------------------------------

LR = 1e-3


def two_layer(update):
    """The lesson's network (smaller) with updates made by ``update(w, grad, lr)``."""
    rng = np.random.default_rng(1)
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None, 6))
        y = ns.placeholder("y", shape=(None, 2))
        w1 = ns.Variable(rng.standard_normal((6, 4)).astype(np.float32), name="w1")
        w2 = ns.Variable(rng.standard_normal((4, 2)).astype(np.float32), name="w2")
        loss = ns.sum((ns.matmul(ns.relu(ns.matmul(x, w1)), w2) - y) ** 2.0)
        grad_w1, grad_w2 = ns.gradients(loss, [w1, w2])
        new_w1, new_w2 = update(w1, grad_w1, LR), update(w2, grad_w2, LR)
    return g, x, y, w1, w2, new_w1, new_w2, LR


@pytest.mark.parametrize(
    "update",
    [
        lambda w, grad, lr: w.assign(w - lr * grad),
        lambda w, grad, lr: ns.assign(w, w + (-lr) * grad),
    ],
)
def test_update_nodes_accept_assign_nodes_and_leave_the_weights_as_they_were(update):
    args = two_layer(update)
    w1, w2 = args[3], args[4]
    before = w1.value.copy(), w2.value.copy()
    assert ex.check_update_nodes(*args)
    assert np.array_equal(w1.value, before[0]) and np.array_equal(w2.value, before[1])


@pytest.mark.parametrize(
    "update, phrase",
    [
        (lambda w, grad, lr: w - lr * grad, "not an update"),
        (lambda w, grad, lr: w.assign(w + lr * grad), "which way should it move"),
        (lambda w, grad, lr: w.assign(w.value - lr * grad), "fixed when the node was built"),
    ],
)
def test_update_nodes_reject_each_typical_mistake_without_the_answer(update, phrase):
    message = rejection_message(ex.check_update_nodes(*two_layer(update)), "assign(w1 - ")
    assert phrase in message


def test_update_nodes_refuse_a_value_that_is_not_a_node():
    args = list(two_layer(lambda w, grad, lr: w.assign(w - lr * grad)))
    args[5] = np.zeros((6, 4))
    assert "should be a node" in rejection_message(ex.check_update_nodes(*args))


# -- 10-2: what a run sees ----------------------------------------------------------------


def test_run_semantics_accepts_the_values_as_numbers_or_arrays():
    assert ex.check_run_semantics((2, 2, 3))
    assert ex.check_run_semantics([np.array(2.0), 2.0, np.float32(3.0)])


@pytest.mark.parametrize(
    "predicted, phrase",
    [((2.0, 3.0, 3.0), "same run"), ((1.0, 2.0, 3.0), "fetching the assign node"), ((2.0, 2.0, 2.0), "stored")],
)
def test_run_semantics_rejects_each_misreading_with_its_hint(predicted, phrase):
    assert phrase in rejection_message(ex.check_run_semantics(predicted), "(2.0, 2.0, 3.0)")


# -- 10-3: the loop body ------------------------------------------------------------------


def check_body(make_body):
    poly, more, base, xp, top, weights = poly_graph()
    body = make_body(xp, weights[-1])
    return ex.check_poly_loop(poly, more, body, base, xp, top, weights)


def test_poly_loop_accepts_the_body_in_any_form():
    assert check_body(lambda xp, e: lambda p, y: (p + 1.0, y + e * xp**p))
    assert check_body(lambda xp, e: lambda p, y: [1.0 + p, e * ns.pow(xp, p) + y])


@pytest.mark.parametrize(
    "make_body, phrase",
    [
        (lambda xp, e: lambda p, y: (p, y + e * xp**p), "maximum_iterations"),
        (lambda xp, e: lambda p, y: (p + 1.0, y + e * xp**4.0), "x to the 4th"),
        (lambda xp, e: lambda p, y: (y + e * xp**p, p + 1.0), "yours come swapped"),
    ],
)
def test_poly_loop_rejects_each_typical_mistake(make_body, phrase):
    assert phrase in rejection_message(check_body(make_body), "p + 1.0, y + e")


def test_poly_loop_with_the_blank_left_is_not_done_yet():
    def body(p, y):
        return ...

    poly, more, base, xp, top, weights = poly_graph()
    assert ex.check_poly_loop(poly, more, body, base, xp, top, weights).status == "todo"


# -- 10-4: the tracing trap ---------------------------------------------------------------


def test_trace_trap_accepts_the_counts():
    assert ex.check_trace_trap((1, 2))
    assert ex.check_trace_trap([1.0, np.int64(2)])


@pytest.mark.parametrize(
    "terms, phrase", [((2, 2), "no new trace"), ((1, 1), "run the Python function again")]
)
def test_trace_trap_rejects_each_misreading(terms, phrase):
    assert phrase in rejection_message(ex.check_trace_trap(terms), "(1, 2)")


# -- What a learner working through lessons 10-12 ran into --------------------------------
# Each test below is one mistake tried on a checker, or one flaw of a lesson's text.


LESSONS = Path(__file__).resolve().parents[2] / "naivegraph" / "course"


def lesson_cells(stem: str) -> list:
    nbformat = pytest.importorskip("nbformat")
    return nbformat.read(str(LESSONS / f"{stem}.ipynb"), as_version=4).cells


def exercise_index(cells: list, exercise: str) -> int:
    return next(i for i, c in enumerate(cells)
                if c.metadata.get("naivegraph", {}).get("exercise") == exercise)


def test_update_nodes_name_the_weight_left_unchanged_not_one_that_moved():
    # new_w1 right, new_w2 computes the step but is no assign node: w2 never moves.
    def update(w, grad, lr):
        return w.assign(w - lr * grad) if w.name == "w1" else w - lr * grad

    message = rejection_message(ex.check_update_nodes(*two_layer(update)))
    assert "left w2 unchanged" in message


def test_update_nodes_reusing_w1s_update_for_w2_says_both_update_w1():
    args = list(two_layer(lambda w, grad, lr: w.assign(w - lr * grad)))
    args[6] = args[5]
    message = rejection_message(ex.check_update_nodes(*args), "assign(w2")
    assert "both update w1" in message and "left w2 unchanged" not in message


def test_the_update_exercise_text_does_not_give_its_answer_before_the_check():
    cells = lesson_cells("10_static_graphs_for_real")
    before = "".join(c.source for c in cells[: exercise_index(cells, "10-1")])
    assert "assign(w1 - learning_rate * grad_w1)" not in before
    assert "w2.assign(" not in before


@pytest.mark.parametrize("predicted", ["223", (2, 2, 3, 4), (True, 2, 3), 2.0, None])
def test_run_semantics_wants_three_numbers_not_a_string_or_another_count(predicted):
    result = ex.check_run_semantics(predicted)
    if predicted is None:
        assert result.status == "todo"
    else:
        assert "three numbers" in rejection_message(result)


def test_run_semantics_hint_for_the_assign_value_does_not_compute_it():
    message = rejection_message(ex.check_run_semantics((1.0, 2.0, 3.0)))
    assert "fetching the assign node" in message and "v = 1" not in message


@pytest.mark.parametrize(
    "make_body, phrase",
    [
        (lambda xp, e: lambda p, y: (p + 1.0, y + e * xp ** (p + 1.0)), "one too high"),
        (lambda xp, e: lambda p, y: (p + 1.0, e * xp**p), "running sum"),
        # e's number typed in: right values, but training could never change e
        (lambda xp, e: lambda p, y: (p + 1.0, y + float(e.value) * xp**p), "copied from e"),
    ],
)
def test_poly_loop_names_the_exponent_slip_the_lost_sum_and_a_copied_number(make_body, phrase):
    assert phrase in rejection_message(check_body(make_body), "p + 1.0, y + e")


def test_poly_loop_leaves_e_as_it_was():
    poly, more, base, xp, top, weights = poly_graph()
    e = weights[-1]
    assert ex.check_poly_loop(poly, more, lambda p, y: (p + 1.0, y + e * xp**p), base, xp,
                              top, weights)
    assert float(e.value) == 0.5


@pytest.mark.parametrize("terms", ["12", (1.5, 2), (1, 2, 3), (1,), ("one", "two")])
def test_trace_trap_wants_exactly_two_integers(terms):
    assert "two integers" in rejection_message(ex.check_trace_trap(terms), "(1, 2)")


def test_jacobian_returned_as_a_list_is_asked_to_be_stacked_not_called_transposed():
    def as_list(f, x):
        n = x.shape[0]
        return [ng.func.jvp(f, (x,), (ng.eye(n, dtype=x.dtype)[i],))[1] for i in range(n)]

    message = rejection_message(ex.check_jacobian_forward(as_list))
    assert "ng.stack" in message and "transposed" not in message


def test_jacobian_of_unpacked_pairs_points_at_what_each_call_returns():
    def pairs(f, x):
        n = x.shape[0]
        cols = [ng.stack(ng.func.jvp(f, (x,), (ng.eye(n, dtype=x.dtype)[i],))) for i in range(n)]
        return ng.stack(cols, dim=1)

    def tuples(f, x):
        y, vjp_fn = ng.func.vjp(f, x)
        m = y.shape[0]
        return ng.stack([ng.stack(vjp_fn(ng.eye(m, dtype=y.dtype)[i])) for i in range(m)])

    assert "one axis too many" in rejection_message(ex.check_jacobian_forward(pairs))
    assert "one axis too many" in rejection_message(ex.check_jacobian_reverse(tuples))


def test_jacobian_forward_of_the_primal_outputs_says_which_of_the_pair_is_the_column():
    def primals(f, x):
        n = x.shape[0]
        cols = [ng.func.jvp(f, (x,), (ng.eye(n, dtype=x.dtype)[i],))[0] for i in range(n)]
        return ng.stack(cols, dim=1)

    message = rejection_message(ex.check_jacobian_forward(primals))
    assert "f(x) itself" in message and "different row" not in message


@pytest.mark.parametrize(
    "built_by_reverse_mode, phrase",
    [
        (jacobian_reverse, "reverse-mode passes"),
        (lambda f, x: ng.func.jacrev(f)(x), "writes that loop itself"),
    ],
)
def test_jacobian_forward_refuses_a_right_matrix_built_by_reverse_mode(
    built_by_reverse_mode, phrase
):
    assert phrase in rejection_message(ex.check_jacobian_forward(built_by_reverse_mode))


def test_jacobian_reverse_refuses_a_right_matrix_built_by_forward_mode_or_by_jacrev():
    assert "forward-mode passes" in rejection_message(ex.check_jacobian_reverse(jacobian_forward))
    message = rejection_message(ex.check_jacobian_reverse(lambda f, x: ng.func.jacrev(f)(x)))
    assert "writes that loop itself" in message


def test_mode_choice_accepts_the_transforms_themselves():
    assert ex.check_mode_choice((ng.func.jacrev, ng.func.jacfwd, ng.func.jacfwd))


def test_cube_function_with_numbers_typed_by_hand_is_caught_on_another_x():
    def typed(ctx, grad_output):  # 3x^2 for the lesson's x = [0.5, -1, 2], typed in
        return ng.tensor([0.75, 3.0, 12.0], dtype=ng.float64) * grad_output

    assert "typed in" in rejection_message(ex.check_cube_function(cube_with(typed)))


def test_cube_function_with_x_cubed_times_three_is_sent_to_the_power_rule():
    def slip(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return 3 * x**3 * grad_output

    assert "power rule" in rejection_message(ex.check_cube_function(cube_with(slip)))


def test_matmul_backward_shape_mismatch_gets_the_shapes_hint_not_numpys_words():
    message = rejection_message(ex.check_matmul_backward(lambda X, W, dY: (dY @ W, X @ dY)))
    assert "gufunc" not in message and "dX must be (5, 3)" in message


def test_matmul_backward_transposed_dw_is_named_and_last_hint_is_not_the_formula():
    fn = lambda X, W, dY: (dY @ W.T, dY.T @ X)  # noqa: E731
    assert "shape of W transposed" in rejection_message(ex.check_matmul_backward(fn))
    wrong_values = lambda X, W, dY: (dY @ W.T * 2, X.T @ dY)  # noqa: E731
    rejection_message(ex.check_matmul_backward(wrong_values))
    last = rejection_message(ex.check_matmul_backward(wrong_values), "transposed W", "transposed X")
    assert 'ex.reveal("12-3")' in last


def test_matmul_backward_that_raises_otherwise_still_names_the_learners_error():
    def broken(X, W, dY):
        return undefined_name  # noqa: F821

    assert "your code raised NameError" in rejection_message(ex.check_matmul_backward(broken))


def test_first_nan_with_call_brackets_is_told_the_op_is_right():
    assert "right op" in rejection_message(ex.check_first_nan("SqrtBackward0()"))


def test_first_nan_no_message_names_the_answer():
    for name in ["MulBackward0", "SumBackward0", "PowBackward0", "sqrt"]:
        rejection_message(ex.check_first_nan(name), "SqrtBackward0")
    assert "grad_fn.name()" in rejection_message(ex.check_first_nan(3), "SqrtBackward0")


def test_anomaly_detection_output_comes_after_the_nan_exercise_check():
    cells = lesson_cells("12_write_your_own_op")
    check = exercise_index(cells, "12-6")
    anomaly = [i for i, c in enumerate(cells)
               if c.cell_type == "code" and "detect_anomaly()" in c.source]
    assert anomaly and all(i > check for i in anomaly)


def test_lesson_12_does_not_say_the_checker_ran_gradcheck():
    # check_cube_function compares one backward with the chain rule; it runs no gradcheck
    cells = lesson_cells("12_write_your_own_op")
    assert not any("The checker ran it" in c.source for c in cells)


def test_lesson_11_says_jvp_runs_forward_mode_and_where_the_lines_cross():
    text = "".join(c.source for c in lesson_cells("11_forward_and_reverse_mode"))
    assert "runs real forward mode" in text and "transpose trick" not in text
    assert "cross at $n = m$ (dashed), and that is about where they" in text


# -- answers that skip the exercise's point, and hints that name the real mistake ----------


def test_update_nodes_given_assign_of_an_array_are_told_assign_stored_it_at_once():
    def computed_now(w, grad, lr):  # the new value run outside the graph, then assigned
        return w.assign(np.zeros(w.shape, dtype=np.float32) + w.value)

    args = two_layer(computed_now)
    assert args[5] is args[3]  # assign(array) hands back the Variable itself
    message = rejection_message(ex.check_update_nodes(*args), "assign(w1 - ", "w - lr")
    assert "stores it at once" in message and "adds an update node" in message
    assert "left w1 unchanged" not in message


def test_update_nodes_stronger_hints_do_not_write_the_update_out():
    for update in (lambda w, grad, lr: w - lr * grad, lambda w, grad, lr: w.assign(w + lr * grad)):
        checking.TRIES.clear()
        ex.check_update_nodes(*two_layer(update))
        second = rejection_message(ex.check_update_nodes(*two_layer(update)), "assign(w1 - ")
        for code in ("Variable.assign(node)", "learning_rate * gradient", "old value -"):
            assert code not in second, (code, second)


def jacobian_reverse_vjp_per_row(f, x):  # the forward pass recorded again for every row
    y, _ = ng.func.vjp(f, x)
    m = y.shape[0]
    rows = []
    for i in range(m):
        _, vjp_fn = ng.func.vjp(f, x)
        (row,) = vjp_fn(ng.eye(m, dtype=y.dtype)[i])
        rows.append(row)
    return ng.stack(rows, dim=0)


def jacobian_reverse_grad_per_row(f, x):  # autograd.grad of each output of a new f(x)
    rows = []
    for i in range(f(x).shape[0]):
        leaf = x.detach().requires_grad_(True)
        rows.append(ng.autograd.grad(f(leaf)[i], leaf)[0])
    return ng.stack(rows, dim=0)


@pytest.mark.parametrize("fn", [jacobian_reverse_vjp_per_row, jacobian_reverse_grad_per_row])
def test_jacobian_reverse_recording_the_forward_pass_again_per_row_is_refused(fn):
    message = rejection_message(ex.check_jacobian_reverse(fn), "vjp_fn(seed)", "(row,) =")
    assert "each row recorded the forward pass again" in message


def returns_a_list(ctx, grad_output):
    (x,) = ctx.saved_tensors
    return [3 * x**2 * grad_output]


def test_cube_function_whose_backward_returns_a_list_is_told_what_autograd_takes():
    # torch refuses it as well: "expected Variable or None (got list)"
    message = rejection_message(ex.check_cube_function(cube_with(returns_a_list)), "3 * x ** 2")
    assert "a tuple with one gradient per input" in message and "torch refuses it too" in message


def returns_a_list_of_arrays(grad, shape):
    return list(sum_to_shape(grad, shape))


def sums_everything(grad, shape):  # grad.sum() without an axis: one number
    return grad.sum()


def sums_the_wrong_axis(grad, shape):
    return grad.sum(axis=-1)


def test_sum_to_shape_returning_a_list_is_refused():
    message = rejection_message(ex.check_sum_to_shape(returns_a_list_of_arrays), "keepdims=True)\n")
    assert "returned a list" in message and "numpy array" in message


@pytest.mark.parametrize(
    "fn, phrase", [(sums_everything, "a sum without axis adds up every element"),
                   (sums_the_wrong_axis, "which dimensions did broadcasting add")]
)
def test_sum_to_shape_keepdims_hint_only_where_the_shape_lost_its_ones(fn, phrase):
    message = rejection_message(ex.check_sum_to_shape(fn))
    assert phrase in message and "must stay" not in message
    assert "must stay (keepdims=True)" in rejection_message(ex.check_sum_to_shape(drops_the_kept_ones))


def matmul_backward_by_autograd(X, W, dY):
    Xt, Wt = ng.tensor(X, requires_grad=True), ng.tensor(W, requires_grad=True)
    (Xt @ Wt).backward(ng.tensor(dY))
    return Xt.grad.numpy(), Wt.grad.numpy()


def matmul_backward_by_vjp(X, W, dY):
    _, vjp_fn = ng.func.vjp(lambda a, b: a @ b, ng.tensor(X), ng.tensor(W))
    return tuple(g.numpy() for g in vjp_fn(ng.tensor(dY)))


@pytest.mark.parametrize("fn", [matmul_backward_by_autograd, matmul_backward_by_vjp])
def test_matmul_backward_computed_by_the_librarys_autograd_is_refused(fn):
    message = rejection_message(ex.check_matmul_backward(fn), "dY @ W.T", "X.T @ dY")
    assert "asks naivegraph's autograd" in message and "numpy arrays" in message


def test_cube_function_stronger_hint_does_not_give_the_derivative():
    ex.check_cube_function(cube_with(power_rule_slip))
    second = rejection_message(ex.check_cube_function(cube_with(power_rule_slip)), "3x^2", "3 * x")
    assert "chain rule" in second


def test_first_nan_stronger_hint_does_not_say_which_formula_divides_by_zero():
    ex.check_first_nan("MulBackward0")
    second = rejection_message(ex.check_first_nan("MulBackward0"), "SqrtBackward0")
    assert "divides by" not in second and "in the order they run" in second
