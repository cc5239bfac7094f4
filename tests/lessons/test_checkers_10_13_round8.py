"""Lessons 10-13: updates probed on the lesson's batch and scale and inside ns.cond, loops
probed over the lesson's x range and every top, library rules and torch refused however
an answer reaches them, the caller's x left alone, Duals with plain numbers, whole-word
names.  Each hint gives no answer away, and the right forms still pass."""

from __future__ import annotations

import inspect
import textwrap

import numpy as np
import pytest
from checker_results import rejection_message
from custom_functions import LINEAR_SECRETS, cube_right, cube_with, linear_right, linear_with
from lesson_answers_10_13 import LR, UPDATE_SECRETS, lesson_network

import naivegraph as ng
import naivegraph.static as ns
from naivegraph.func.transforms import jacfwd as _jacfwd
from naivegraph.func.transforms import jacrev as _jacrev
from naivegraph.lessons import exercises as ex
from naivegraph.lessons.library_calls import LibraryCalls
from naivegraph.ops import F
from naivegraph.ops.table import OPS


# -- 10-1 -----------------------------------------------------------------------------------
@pytest.mark.parametrize("pred", [lambda loss: ns.constant(True), lambda loss: loss < 1e30])
def test_update_scaled_by_a_hair_inside_a_cond_is_refused_with_its_factor(pred):
    def scaled(w, grad, loss, x):
        return w.assign(ns.cond(pred(loss), lambda: w - LR * grad * 1.00001, lambda: w))

    message = rejection_message(ex.check_update_nodes(*lesson_network(scaled)), *UPDATE_SECRETS)
    assert "times a step of gradient descent, not exactly one" in message


def test_update_right_only_on_data_ten_times_the_lessons_is_refused():
    def by_scale(w, grad, loss, x):
        return w.assign(w - LR * grad * ns.where(ns.max(ns.abs(x)) > 6.0, 1.0, 2.0))

    message = rejection_message(ex.check_update_nodes(*lesson_network(by_scale)), *UPDATE_SECRETS)
    assert "batch of 64 rows, x of the lesson's scale" in message
    assert "on the data's scale" in message


def test_update_right_only_on_small_batches_is_refused():
    def small_batches(w, grad, loss, x):
        n = ns.sum(x[:, 0] * 0.0 + 1.0)
        return w.assign(w - LR * grad * ns.minimum(n, 8.0) / n)

    message = rejection_message(
        ex.check_update_nodes(*lesson_network(small_batches)), *UPDATE_SECRETS
    )
    assert "depend on the batch size" in message


@pytest.mark.parametrize(
    "update",
    [
        lambda w, grad, loss, x: w.assign(w - LR * grad),
        lambda w, grad, loss, x: w.assign(ns.cond(loss < 1e30, lambda: w - LR * grad, lambda: w)),
    ],
)
def test_update_written_the_lessons_way_still_passes_plain_and_in_a_cond(update):
    assert ex.check_update_nodes(*lesson_network(update))


# -- 10-3 -----------------------------------------------------------------------------------
XS_DATA = np.linspace(-1.0, 2.0, 200)
POLY_SECRETS = ("p + 1.0, y + e", "e * xp ** p")


def poly_graph():
    rng = np.random.default_rng(0)
    coef = rng.standard_normal(5) * 0.1
    with ns.Graph() as poly:
        xp = ns.placeholder("x", shape=(None,))
        top = ns.placeholder("top", shape=())
        a, b, c, d, e = [ns.Variable(np.array(v), name=n) for v, n in zip(coef, "abcde")]
        base = a + b * xp + c * xp**2.0 + d * xp**3.0

    def more(p, y):
        return p < top

    return poly, more, base, xp, top, [a, b, c, d, e]


def check_body(make_body, graph=None):
    poly, more, base, xp, top, weights = graph or poly_graph()
    return ex.check_poly_loop(poly, more, make_body(xp, weights[-1]), base, xp, top, weights)


def test_poly_loop_reading_the_data_array_is_told_so_again_and_leaves_no_probe_nodes():
    graph = poly_graph()
    body = lambda xp, e: lambda p, y: (p + 1.0, y + e * XS_DATA**p)  # noqa: E731
    for _ in range(2):  # a second attempt gets the same hint
        message = rejection_message(check_body(body, graph), *POLY_SECRETS)
        assert "does not depend on the placeholder xp" in message and "xs_data" in message
    assert [p.name for p in graph[0].placeholders] == ["x", "top"]


def test_poly_loop_right_only_up_to_the_checkers_old_x_range_is_refused():
    message = rejection_message(
        check_body(lambda xp, e: lambda p, y: (p + 1.0, y + e * ns.clamp(xp, -1.6, 1.6) ** p)),
        *POLY_SECRETS,
    )
    assert "with top = 5" in message


def test_poly_loop_right_only_up_to_top_nine_is_refused():
    message = rejection_message(
        check_body(lambda xp, e: lambda p, y: (p + 1.0, ns.where(p < 9.0, y + e * xp**p, y))),
        *POLY_SECRETS,
    )
    assert "with top = 10" in message


def test_poly_loop_right_form_still_passes_twice():
    graph = poly_graph()
    body = lambda xp, e: lambda p, y: (p + 1.0, y + e * xp**p)  # noqa: E731
    assert check_body(body, graph)
    assert check_body(body, graph)


# -- 11-1 -----------------------------------------------------------------------------------
DUAL_SECRETS = ("u.tangent * v.value", "v.value ** 2", "(u'v - uv')")


def template_dual(mul, div, wrap=True, default=0.0):
    """The lesson's Dual, with ``mul`` and ``div`` as the exercise's two functions."""

    class Dual:
        def __init__(self, value, tangent=default):
            self.value, self.tangent = value, tangent

        def __add__(self, other):
            other = other if isinstance(other, Dual) else Dual(other)
            return Dual(self.value + other.value, self.tangent + other.tangent)

        def __sub__(self, other):
            other = other if isinstance(other, Dual) else Dual(other)
            return Dual(self.value - other.value, self.tangent - other.tangent)

    def as_dual(other):
        return other if isinstance(other, Dual) or not wrap else Dual(other, 0.0)

    Dual.__mul__ = lambda self, other: Dual(*mul(self, as_dual(other)))
    Dual.__truediv__ = lambda self, other: Dual(*div(self, as_dual(other)))
    return Dual


def mul_right(u, v):
    return u.value * v.value, u.tangent * v.value + u.value * v.tangent


def div_right(u, v):
    return u.value / v.value, (u.tangent * v.value - u.value * v.tangent) / v.value**2


def test_dual_div_that_bounds_the_denominator_is_refused_at_a_small_divisor():
    def bounded(u, v):
        return u.value / v.value, (u.tangent * v.value - u.value * v.tangent) / max(
            v.value**2, 0.25
        )

    message = rejection_message(
        ex.check_dual_rules(template_dual(mul_right, bounded)), *DUAL_SECRETS
    )
    assert "div's tangent is off" in message


def test_dual_div_with_an_epsilon_in_the_denominator_is_told_an_epsilon():
    def with_epsilon(u, v):
        return u.value / v.value, (u.tangent * v.value - u.value * v.tangent) / (v.value**2 + 1e-14)

    message = rejection_message(
        ex.check_dual_rules(template_dual(mul_right, with_epsilon)), *DUAL_SECRETS
    )
    assert "your div's tangent is close but not exact" in message
    assert "an epsilon added to the denominator" in message


def test_dual_whose_wrappers_no_longer_wrap_numbers_is_refused():
    message = rejection_message(
        ex.check_dual_rules(template_dual(mul_right, div_right, wrap=False)), *DUAL_SECRETS
    )
    assert "Dual * 2.5 does not give its rule" in message
    assert "turn a plain number into a Dual" in message


def test_dual_with_a_default_tangent_of_one_is_told_its_init_changed():
    message = rejection_message(
        ex.check_dual_rules(template_dual(mul_right, div_right, default=1.0)), *DUAL_SECRETS
    )
    assert "Dual(2.5) has tangent 1" in message and "__init__" in message
    assert "__add__ no longer" not in message


def test_dual_of_the_template_written_right_still_passes():
    assert ex.check_dual_rules(template_dual(mul_right, div_right))


# -- 11-2, 11-3 -----------------------------------------------------------------------------
def test_jacobian_forward_by_jacfwd_imported_under_another_name_is_refused():
    message = rejection_message(ex.check_jacobian_forward(lambda f, x: _jacfwd(f)(x)))
    assert "ng.func.jacfwd (or its like) built it" in message


def test_jacobian_reverse_by_jacrev_imported_under_another_name_is_refused():
    def once(f, x):
        rows = []
        J = None
        for i in range(f(x).shape[0]):
            J = _jacrev(f)(x) if i == 0 else J
            rows.append(J[i])
        return ng.stack(rows, dim=0)

    message = rejection_message(ex.check_jacobian_reverse(once))
    assert "ng.func.jacrev (or its like) built it" in message


def test_jacobian_reverse_with_a_new_forward_pass_per_row_is_refused():
    def per_row(f, x):
        y, vjp_fn = ng.func.vjp(f, x)
        rows = []
        for i in range(y.shape[0]):
            xx = x.detach().requires_grad_()
            f(xx)[i].backward()
            rows.append(xx.grad)
        return ng.stack(rows, dim=0)

    message = rejection_message(ex.check_jacobian_reverse(per_row))
    assert "recorded the forward pass again" in message


def test_jacobian_forward_by_autograd_functional_jvp_is_told_it_is_two_vjps():
    def by_functional(f, x):
        n = x.shape[0]
        columns = [
            ng.autograd.functional.jvp(f, x, ng.eye(n, dtype=x.dtype)[i])[1] for i in range(n)
        ]
        return ng.stack(columns, dim=1)

    message = rejection_message(ex.check_jacobian_forward(by_functional), "ng.func.jvp(f, (x,)")
    assert "ng.autograd.functional.jvp is built from two VJPs" in message


def reverse_right(touch=None):
    def jacobian(f, x):
        y, vjp_fn = ng.func.vjp(f, x)
        m = y.shape[0]
        rows = []
        for i in range(m):
            (row,) = vjp_fn(ng.eye(m, dtype=y.dtype)[i])
            rows.append(row)
        if touch is not None:
            touch(x)
        return ng.stack(rows, dim=0)

    return jacobian


@pytest.mark.parametrize(
    "touch, phrase",
    [
        (lambda x: x.requires_grad_(True), "set x to require grad"),
        (lambda x: x.mul_(1.001), "changed x in place"),
    ],
)
def test_jacobian_that_changes_the_callers_x_is_told_so(touch, phrase):
    message = rejection_message(ex.check_jacobian_reverse(reverse_right(touch)))
    assert phrase in message and "the caller's tensor" in message


def test_jacobian_reverse_right_still_passes():
    assert ex.check_jacobian_reverse(reverse_right())


# -- 11-4 -----------------------------------------------------------------------------------
def test_mode_choice_in_the_modes_own_names_is_accepted():
    assert ex.check_mode_choice(("reverse", "forward", "forward"))
    assert ex.check_mode_choice(("jacrev", "jacfwd", "jacfwd"))
    assert not ex.check_mode_choice(("forward", "forward", "forward"))


# -- 12 -------------------------------------------------------------------------------------
def cube_by_the_table(ctx, grad_output):
    (x,) = ctx.saved_tensors
    return OPS["pow_scalar"].partials[0](grad_output, x, x**3, exponent=3.0)


def test_cube_backward_by_the_op_tables_power_rule_is_refused():
    message = rejection_message(ex.check_cube_function(cube_with(cube_by_the_table)))
    assert "calls the library's own rule for 'pow_scalar'" in message
    assert ex.check_cube_function(cube_with(cube_right))


def test_matmul_backward_through_the_addmm_entry_is_refused():
    def by_addmm(X, W, dY):
        p = OPS["addmm"].partials
        return p[1](dY, None, X, W, None), p[2](dY, None, X, W, None)

    message = rejection_message(ex.check_matmul_backward(by_addmm), "dY @ W.T", "X.T @ dY")
    assert "the library's own rule for a matrix product" in message


def test_matmul_backward_by_static_gradients_is_refused():
    def by_gradients(X, W, dY):
        with ns.Graph() as g:
            xn, wn = ns.constant(X), ns.constant(W)
            out = ns.addmm(ns.constant(np.zeros_like(dY)), xn, wn)
            gx, gw = ns.gradients(ns.sum(out * ns.constant(dY)), [xn, wn])
        return tuple(g.run([gx, gw], {}))

    message = rejection_message(ex.check_matmul_backward(by_gradients), "dY @ W.T")
    assert "ns.gradients" in message


def test_matmul_backward_by_torchs_backward_node_is_refused():
    torch = pytest.importorskip("torch")

    def by_torch(X, W, dY):
        t1 = torch.from_numpy(X).requires_grad_()
        t2 = torch.from_numpy(W).requires_grad_()
        a, b = (t1 @ t2).grad_fn(torch.from_numpy(dY))
        return a.detach().numpy(), b.detach().numpy()

    message = rejection_message(ex.check_matmul_backward(by_torch), "dY @ W.T")
    assert "your answer calls torch" in message


def test_sum_to_shape_by_torchs_sum_to_size_is_refused():
    torch = pytest.importorskip("torch")

    def by_torch(grad, shape):
        return torch.from_numpy(grad).sum_to_size(*shape).numpy()

    message = rejection_message(ex.check_sum_to_shape(by_torch))
    assert "your answer calls torch" in message


def linear_by_the_table(ctx, grad_output):
    x, w = ctx.saved_tensors
    grad_x = grad_w = None
    if ctx.needs_input_grad[0]:
        grad_x = OPS["addmm"].partials[1](grad_output, None, x, w, None)
    if ctx.needs_input_grad[1]:
        grad_w = OPS["matmul"].partials[1](grad_output, x, w, None)
    return grad_x, grad_w


def test_linear_backward_by_the_op_tables_rules_is_refused():
    message = rejection_message(
        ex.check_linear_function(linear_with(linear_by_the_table)), *LINEAR_SECRETS
    )
    assert "the library's own rule for a matrix product" in message
    assert ex.check_linear_function(linear_with(linear_right))


@pytest.mark.parametrize(
    "partial",
    [
        lambda g, x, out: g * F.sigmoid(-x) if isinstance(x, ns.Node) else g * F.sigmoid(x),
        lambda g, x, out: g * F.sigmoid(x) * (2.0 if isinstance(x, ns.Node) else 1.0),
    ],
)
def test_softplus_rule_wrong_only_on_static_nodes_is_refused(partial):
    message = rejection_message(ex.check_softplus_partial(partial), "F.sigmoid", "sigmoid(x)")
    assert "on static nodes the node it builds, run, gives other values" in message


def test_softplus_rule_with_a_constant_added_is_refused_and_right_forms_pass():
    result = ex.check_softplus_partial(lambda g, x, out: g * F.sigmoid(x) + 1e-14)
    assert result.status == "fail"
    assert ex.check_softplus_partial(lambda g, x, out: g * F.sigmoid(x))
    assert ex.check_softplus_partial(lambda g, x, out: g * (1 - F.exp(-out)))


@pytest.mark.parametrize("name", ["SqrtBackward1", "SqrtBackward", "sqrt_backward0"])
def test_first_nan_with_a_wrong_suffix_is_told_the_op_is_right(name):
    message = rejection_message(ex.check_first_nan(name), "SqrtBackward0")
    assert "right op; give its backward's name exactly" in message
    assert ex.check_first_nan("SqrtBackward0")


# -- 13 -------------------------------------------------------------------------------------
def test_baked_branch_reads_an_op_only_as_a_whole_word():
    assert not ex.check_baked_branch(("relu.tanh", 3))
    assert ex.check_baked_branch(("x.tanh()", 3))
    assert ex.check_baked_branch(("tanh", 3))


# -- the watcher ----------------------------------------------------------------------------
def library_rule(a, b):
    total = 0.0
    for value in (a, b, a * b):
        total = total + value * 2.0
    return total


def test_library_calls_sees_a_copy_of_a_watched_function_made_in_the_learners_code():
    namespace: dict = {}
    exec(textwrap.dedent(inspect.getsource(library_rule)), namespace)  # noqa: S102
    with LibraryCalls({"rule": library_rule}) as calls:
        namespace["library_rule"](1.0, 2.0)
    assert calls.called == ["rule"]
