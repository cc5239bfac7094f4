"""Lessons 8-13, eleventh round: float32 rounding, a forgotten return, a leaf as the
root, the input's own grad taken for the upstream one, a loss left out of its sweep and
one grad never reset each get a hint naming that mistake; hooks left on parameters, a
detached model output and an optimizer setting of one's own are named in lesson 9; the
hints of lessons 10-13 name what was missed without giving the code away."""

from __future__ import annotations

import numpy as np
import pytest
from checker_results import never_states, outcome, refused, rejected_on_first_try
from lesson_answers_08 import OPS, TABLE, descend_with, run_backward, static_backward

import naivegraph as ng
import naivegraph.static as ns
from naivegraph.lessons import exercises as ex

F = ng.nn.functional


# -- 08-1: a derivative written without its return ----------------------------------------------
def _mul_without_return(a, b, i):
    b if i == 0 else a  # noqa: B018


def test_08_1_a_derivative_without_return_is_told_it_returns_none(capsys):
    table = {**TABLE, "mul": (TABLE["mul"][0], _mul_without_return)}
    result = rejected_on_first_try(capsys, ex.check_derivative_table, table, says="has no `return`")
    assert "replace every" not in result.message
    never_states(result, "b if i == 0 else a")


# -- 08-2: float32, the input's own grad, the loss left out ---------------------------------------
def _sweep_in_float32(nodes, loss):
    for n in nodes:
        n.grad = 0.0
    loss.grad = 1.0
    for n in reversed(nodes):
        if n.op is None:
            continue
        args = [i.value for i in n.inputs]
        for k, inp in enumerate(n.inputs):
            if inp.needs_grad:
                inp.grad = float(np.float32(inp.grad + n.grad * OPS[n.op][1](*args, k)))


def _sweep_with_the_inputs_own_grad(nodes, loss):
    for n in nodes:
        n.grad = 0.0
    loss.grad = 1.0
    for n in reversed(nodes):
        if n.op is None:
            continue
        args = [i.value for i in n.inputs]
        for k, inp in enumerate(n.inputs):
            if inp.needs_grad:
                inp.grad += inp.grad * OPS[n.op][1](*args, k)


def _sweep_without_the_loss(nodes, loss):
    for n in nodes:
        n.grad = 0.0
    loss.grad = 1.0
    for n in reversed(nodes[: nodes.index(loss)]):
        if n.op is None:
            continue
        args = [i.value for i in n.inputs]
        for k, inp in enumerate(n.inputs):
            if inp.needs_grad:
                inp.grad += n.grad * OPS[n.op][1](*args, k)


def test_08_2_a_sweep_rounding_to_float32_is_told_float32(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_static_backward, _sweep_in_float32, says="as a float32 holds it"
    )
    assert "not of a fixed number" not in result.message
    never_states(result, "OPS[", "reversed(")


def test_08_2_the_inputs_own_grad_as_upstream_is_named(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_static_backward,
        _sweep_with_the_inputs_own_grad,
        says="multiplied by the input's own grad",
    )
    assert "in which order" not in result.message
    never_states(result, "OPS[", "n.grad *")


def test_08_2_a_sweep_leaving_out_the_loss_is_named(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_static_backward,
        _sweep_without_the_loss,
        says="never visited the loss itself",
    )
    assert "in which order" not in result.message
    never_states(result, "OPS[", "reversed(")


def test_08_2_the_right_sweep_is_still_accepted(capsys):
    assert outcome(capsys, ex.check_static_backward, static_backward).passed


# -- 08-3: a backward called on a leaf ----------------------------------------------------------
def _run_backward_skipping_a_leaf_root(root):
    order, seen = [], set()

    def visit(node):
        if id(node) not in seen:
            seen.add(id(node))
            for inp in node.inputs:
                if inp.requires_grad:
                    visit(inp)
            order.append(node)

    visit(root)
    grads = {id(root): 1.0}
    for node in reversed(order):
        g = grads.pop(id(node), 0.0)
        if node.is_leaf:
            if node is not root:
                node.grad += g
            continue
        if node.saved is None:
            raise RuntimeError("the graph was freed by an earlier backward")
        for k, inp in enumerate(node.inputs):
            if inp.requires_grad:
                d = OPS[node.grad_fn][1](*node.saved, k)
                grads[id(inp)] = grads.get(id(inp), 0.0) + g * d
    return order


def test_08_3_a_backward_on_a_leaf_must_give_it_gradient_one(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_run_backward,
        _run_backward_skipping_a_leaf_root,
        says="the root may itself be a leaf",
    )
    assert "x.grad = 0" in result.message
    never_states(result, "node is not root", "OPS[")


def test_08_3_the_right_run_backward_is_still_accepted(capsys):
    assert outcome(capsys, ex.check_run_backward, run_backward).passed


# -- 08-6: float32 steps, one grad never reset ----------------------------------------------------
def _descent_in_float32(f, x0, y0, lr=0.1, steps=200):
    from lesson_answers_08 import Node

    x, y = Node(x0, requires_grad=True), Node(y0, requires_grad=True)
    for _ in range(steps):
        x.grad = y.grad = 0.0
        f(x, y).backward()
        x.value = float(np.float32(x.value - lr * x.grad))
        y.value = float(np.float32(y.value - lr * y.grad))
    return x.value, y.value


def _descent_zeroing_x_after_the_step(f, x0, y0, lr=0.1, steps=200):
    from lesson_answers_08 import Node

    x, y = Node(x0, requires_grad=True), Node(y0, requires_grad=True)
    for _ in range(steps):
        f(x, y).backward()
        x.value -= lr * x.grad
        y.value -= lr * y.grad
        x.grad = 0.0
    return x.value, y.value


def test_08_6_steps_rounded_to_float32_are_told_float32(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_gradient_descent, _descent_in_float32, says="values are float32 numbers"
    )
    never_states(result, "lr * x.grad", "-=")


def test_08_6_a_grad_never_reset_is_told_so(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_gradient_descent,
        _descent_zeroing_x_after_the_step,
        says="y.grad kept adding up",
    )
    assert "grads were never reset" in result.message
    never_states(result, "x.grad = 0.0")


def test_08_6_the_right_descent_is_still_accepted(capsys):
    assert outcome(capsys, ex.check_gradient_descent, descend_with()).passed


# -- 09-2: hooks left behind, a detached output, a seed set inside ----------------------------
def _train_step(model, opt, X, y, logits=lambda out: out, before=lambda model: None):
    before(model)
    opt.zero_grad()
    loss = F.cross_entropy(logits(model(X)), y)
    loss.backward()
    opt.step()
    return loss.item()


def _hooking(model):
    for p in model.parameters():
        p.register_hook(lambda g: g)


def test_09_2_hooks_piling_up_on_the_parameters_are_refused(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_train_step,
        lambda model, opt, X, y: _train_step(model, opt, X, y, before=_hooking),
        says="carry 60 hooks",
    )
    assert "pile up" in result.message
    never_states(result, "register_hook(", "zero_grad", "cross_entropy")


def test_09_2_a_loss_of_a_detached_output_is_told_the_graph_was_cut(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_train_step,
        lambda model, opt, X, y: _train_step(
            model, opt, X, y, logits=lambda out: out.detach().requires_grad_()
        ),
        says="cut off from the model's graph (detached)",
    )
    assert "cleared after backward" not in result.message
    never_states(result, "detach()", "cross_entropy")


def test_09_2_the_right_step_is_accepted(capsys):
    # a seed set inside the step is refused: test_checkers_09_13_round13.py
    assert outcome(capsys, ex.check_train_step, _train_step).passed


# -- 09-3: an optimizer setting of one's own -------------------------------------------------
def _static_with(**settings):
    def build_static(init, lr):
        with ns.Graph() as g:
            W1, b1, W2, b2 = (ns.Variable(v) for v in init)
            xs = ns.placeholder("X", shape=(None, 2), dtype=np.float32)
            ys = ns.placeholder("y", shape=(None,), dtype=np.int64)
            logits = ns.tanh(xs @ ns.t(W1) + b1) @ ns.t(W2) + b2
            loss = ns.cross_entropy(logits, ys)
            train = ns.optim.Adam([W1, b1, W2, b2], lr=lr, **settings).minimize(loss)
        return g.compile([xs, ys], [loss, train]), g.compile([xs], [logits])

    return build_static


@pytest.mark.parametrize("settings", [{"eps": 1e-6}, {"weight_decay": 1e-4}])
def test_09_3_an_optimizer_setting_of_ones_own_is_named(capsys, settings):
    result = rejected_on_first_try(
        capsys,
        ex.check_static_classifier,
        _static_with(**settings),
        says="An optimizer setting of your own",
    )
    assert ": The" not in result.message
    never_states(result, "1e-08", "ns.optim.Adam(")


def test_09_3_default_settings_are_still_accepted(capsys):
    assert outcome(capsys, ex.check_static_classifier, _static_with()).passed


# -- 10-3: an exponent that never grows --------------------------------------------------------
def _poly_graph():
    coef = np.random.default_rng(0).standard_normal(5) * 0.1
    with ns.Graph() as poly:
        xp = ns.placeholder("x", shape=(None,))
        top = ns.placeholder("top", shape=())
        a, b, c, d, e = [ns.Variable(np.array(v), name=n) for v, n in zip(coef, "abcde")]
        base = a + b * xp + c * xp**2.0 + d * xp**3.0
    return poly, (lambda p, y: p < top), base, xp, top, [a, b, c, d, e]


def _check_body(make_body):
    poly, more, base, xp, top, weights = _poly_graph()
    return ex.check_poly_loop(poly, more, make_body(xp, weights[-1]), base, xp, top, weights)


def test_10_3_a_body_whose_p_never_grows_is_told_p_must_grow_by_one(capsys):
    result = _check_body(lambda xp, e: lambda p, y: (p, y + e * xp**p))
    assert result.status == "fail", result.message
    assert "p must grow by one per pass" in result.message
    assert "without its condition" not in result.message
    never_states(result, "p + 1", "e * xp ** p")


def test_10_3_the_lessons_body_is_still_accepted(capsys):
    assert _check_body(lambda xp, e: lambda p, y: (p + 1.0, y + e * xp**p)).passed


# -- 11-2 / 11-3: a seed in the default dtype, a hint that names no code ----------------------
def _columns_by_jvp(seed):
    def jacobian_forward(f, x):
        n = x.shape[0]
        return ng.stack([ng.func.jvp(f, (x,), (seed(n, x)[i],))[1] for i in range(n)], dim=1)

    return jacobian_forward


def test_11_2_a_seed_without_a_dtype_is_told_to_match_x_dtype(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_jacobian_forward,
        _columns_by_jvp(lambda n, x: ng.eye(n)),
        says="must match x.dtype",
    )
    assert "float32" in result.message
    never_states(result, "dtype=x.dtype", "ng.eye(n, dtype")


def test_11_2_a_seed_in_x_dtype_is_still_accepted(capsys):
    right = _columns_by_jvp(lambda n, x: ng.eye(n, dtype=x.dtype))
    assert outcome(capsys, ex.check_jacobian_forward, right).passed


def test_11_3_rows_built_in_forward_mode_are_told_without_the_code(capsys):
    def by_columns(f, x):
        n = x.shape[0]
        eye = ng.eye(n, dtype=x.dtype)
        return ng.stack([ng.func.jvp(f, (x,), (eye[i],))[1] for i in range(n)], dim=1)

    first = rejected_on_first_try(
        capsys, ex.check_jacobian_reverse, by_columns, says="from forward-mode passes"
    )
    second = refused(outcome(capsys, ex.check_jacobian_reverse, by_columns), "one-hot seed")
    for result in (first, second):
        never_states(result, "call vjp_fn with the seed", "vjp_fn(seed)")


# -- 12-3: ones in place of dY; 12-5: a rule that asks for a static node ----------------------
def _matmul_with_ones(X, W, dY):
    ones = np.ones_like(dY)
    return ones @ W.T, X.T @ ones


def test_12_3_ones_in_place_of_dy_are_told_without_the_code(capsys):
    first = rejected_on_first_try(
        capsys, ex.check_matmul_backward, _matmul_with_ones, says="upstream gradient dY"
    )
    second = refused(
        outcome(capsys, ex.check_matmul_backward, _matmul_with_ones), "arrives from above"
    )
    for result in (first, second):
        never_states(result, "put the dY", "dY @ W.T", "X.T @ dY")


def test_12_5_a_rule_asking_for_a_static_node_is_told_it_gives_other_values_there(capsys):
    def partial(g, x, out):
        return g * F.sigmoid(-x) if isinstance(x, ns.Node) else g * F.sigmoid(x)

    result = rejected_on_first_try(
        capsys, ex.check_softplus_partial, partial, says="one formula must serve every kind"
    )
    assert "np.* cannot build a graph" not in result.message
    never_states(result, "sigmoid(x)")


def test_12_5_the_right_rule_is_still_accepted(capsys):
    assert outcome(capsys, ex.check_softplus_partial, lambda g, x, out: g * F.sigmoid(x)).passed


# -- 08-6: the leaves started as float32 numbers, y moved after x ---------------------------------
def _descent_from_float32_starts(f, x0, y0, lr=0.1, steps=200):
    from lesson_answers_08 import Node

    # the start rounded to float32; the steps then run in float64 (the grads are)
    x, y = Node(np.float32(x0), requires_grad=True), Node(np.float32(y0), requires_grad=True)
    for _ in range(steps):
        x.grad = y.grad = 0.0
        f(x, y).backward()
        x.value -= lr * x.grad
        y.value -= lr * y.grad
    return x.value, y.value


def _descent_moving_y_after_x(f, x0, y0, lr=0.1, steps=200):
    from lesson_answers_08 import Node

    x, y = Node(x0, requires_grad=True), Node(y0, requires_grad=True)
    for _ in range(steps):
        x.grad = 0.0
        f(x, y).backward()
        x.value -= lr * x.grad
        y.grad = 0.0
        f(x, y).backward()
        y.value -= lr * y.grad
    return x.value, y.value


def test_08_6_a_start_rounded_to_float32_is_told_so(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_gradient_descent,
        _descent_from_float32_starts,
        says="starts from x0 and y0 rounded to float32",
    )
    never_states(result, "lr * x.grad", "-=", "float(")


def test_08_6_y_moved_by_a_gradient_taken_after_x_moved_is_told_so(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_gradient_descent, _descent_moving_y_after_x, says="SAME point"
    )
    never_states(result, "lr * x.grad", "-=", "zero the grads, build f")
