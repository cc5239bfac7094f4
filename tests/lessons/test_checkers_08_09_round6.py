"""Lessons 8 and 9: the lab's own code never passes as the learner's, however it is
wrapped; fixed sizes, counts and tolerances no longer let an estimate, a cut-off or a
near miss through; each hint names the mistake made and gives none of the answer away;
the right answers are still accepted."""

from __future__ import annotations

import math

import lesson_answers_08
import numpy as np
import pytest
from checker_results import never_states, outcome, rejected_on_first_try
from lesson_answers_08 import (
    OPS,
    TABLE,
    Node,
    descend_with,
    free_graph,
    jacobian_with,
    run_backward,
    static_backward,
    table_with,
)

import naivegraph as ng
import naivegraph.static as ns
from naivegraph.lessons import exercises as ex
from naivegraph.lessons.checkers import lesson08, lesson09
from naivegraph.lessons.training import derivative_table

LABS = "your answer calls the lab's own version"


# ------------------------------------------------------------- the lab's own code
@pytest.mark.parametrize(
    "check, wrapper",
    [
        (
            ex.check_static_backward,
            lambda nodes, loss: lesson08.reference("static_backward")(nodes, loss),
        ),
        (ex.check_run_backward, lambda root: lesson08.reference("run_backward")(root)),
        (ex.check_free_graph, lambda order: lesson08.reference("free_graph")(order)),
        (ex.check_jacobian, lambda F, x0, y0: lesson08.reference("jacobian", Node)(F, x0, y0)),
        (
            ex.check_gradient_descent,
            lambda f, x0, y0, lr, steps: lesson08.reference("gradient_descent", Node)(
                f, x0, y0, lr, steps
            ),
        ),
    ],
    ids=["08-2", "08-3", "08-4", "08-5", "08-6"],
)
def test_08_a_wrapper_around_the_labs_reference_is_refused(capsys, check, wrapper):
    result = rejected_on_first_try(capsys, check, wrapper, says=LABS)
    assert "write your own" in result.message
    never_states(result, "reversed(", "OPS[", "saved = None", ".backward()")


def test_08_1_rows_of_the_labs_table_are_refused(capsys):
    lab = derivative_table()
    table = table_with(mul=lab["mul"], exp=(math.exp, lambda a, i: lab["exp"][1](a, i)))
    result = rejected_on_first_try(capsys, ex.check_derivative_table, table, says=LABS)
    assert "the lab's derivative table" in result.message
    never_states(result, "b if i == 0", "math.exp(a)")


def test_08_2_a_sweep_reading_the_labs_table_instead_of_ops_is_refused(capsys):
    def sweep(nodes, loss):
        table = derivative_table()
        for n in nodes:
            n.grad = 0.0
        loss.grad = 1.0
        for n in reversed(nodes):
            if n.op is not None:
                args = [i.value for i in n.inputs]
                for k, inp in enumerate(n.inputs):
                    if inp.needs_grad:
                        inp.grad += n.grad * table[n.op][1](*args, k)

    rejected_on_first_try(capsys, ex.check_static_backward, sweep, says=LABS)


def test_08_the_labs_table_standing_in_as_ops_is_fine_for_a_sweep_reading_ops(capsys):
    lab = derivative_table()
    saved = dict(OPS)
    OPS.clear()
    OPS.update(lab)  # the notebook's OPS while 08-1 is unsolved
    try:
        assert outcome(capsys, ex.check_static_backward, static_backward)
        assert outcome(capsys, ex.check_run_backward, run_backward)
        assert outcome(capsys, ex.check_jacobian, jacobian_with("method"))
    finally:
        OPS.clear()
        OPS.update(saved)


def test_08_5_and_08_6_the_labs_run_backward_behind_node_backward_is_fine(capsys, monkeypatch):
    # what Node.backward runs while 08-3 is unsolved: the lab's run_backward
    monkeypatch.setattr(lesson_answers_08, "run_backward", lesson08.reference("run_backward"))
    assert outcome(capsys, ex.check_jacobian, jacobian_with("method"))
    assert outcome(capsys, ex.check_gradient_descent, descend_with("method"))


def test_08_3_library_autograd_behind_run_backward_is_refused(capsys):
    def through_ng(root):
        leaves, order = {}, []

        def build(node):
            if node.is_leaf:
                if id(node) not in leaves:
                    leaves[id(node)] = (
                        node,
                        ng.tensor(node.value, dtype=ng.float64, requires_grad=True),
                    )
                    order.append(node)
                return leaves[id(node)][1]
            if node.saved is None:
                raise RuntimeError("freed")
            args = [
                build(i) if i.requires_grad else ng.tensor(v, dtype=ng.float64)
                for i, v in zip(node.inputs, node.saved)
            ]
            op = {
                "add": lambda a, b: a + b,
                "sub": lambda a, b: a - b,
                "mul": lambda a, b: a * b,
                "div": lambda a, b: a / b,
                "pow": lambda a, b: a**b,
                "sin": ng.sin,
                "exp": ng.exp,
            }[node.grad_fn]
            order.append(node)
            return op(*args)

        out = build(root)
        if root.is_leaf:
            root.grad += 1.0
            return [root]
        out.backward()
        for node, t in leaves.values():
            node.grad += t.grad.item()
        return order

    result = rejected_on_first_try(
        capsys, ex.check_run_backward, through_ng, says="runs naivegraph's autograd"
    )
    never_states(result, "OPS[node.grad_fn]", "grads[id(")


def test_08_2_the_engine_wrapper_is_refused_and_leaves_nothing_solved(capsys):
    rejected_on_first_try(
        capsys,
        ex.check_static_backward,
        lambda nodes, loss: lesson08.reference("static_backward")(nodes, loss),
        says=LABS,
    )
    assert not ex.solved("08-2")


@pytest.mark.parametrize(
    "check, wrapper",
    [
        (ex.check_accuracy_fn, lesson09.reference("accuracy")),
        (ex.check_accuracy_fn, lambda l, y: lesson09.reference("accuracy")(l, y)),
        (ex.check_train_step, lesson09.reference("train_step")),
        (ex.check_train_step, lambda m, o, X, y: lesson09.reference("train_step")(m, o, X, y)),
        (ex.check_static_classifier, lesson09.reference("build_static")),
        (ex.check_static_classifier, lambda init, lr: lesson09.reference("build_static")(init, lr)),
    ],
    ids=["09-1", "09-1-wrapped", "09-2", "09-2-wrapped", "09-3", "09-3-wrapped"],
)
def test_09_the_labs_reference_assigned_or_wrapped_is_refused(capsys, check, wrapper):
    result = rejected_on_first_try(capsys, check, wrapper, says=LABS)
    never_states(result, "argmax", "zero_grad", "ns.placeholder")


# ------------------------------------------------------------------------- 08-1
def test_08_1_a_complex_step_through_numpy_is_refused(capsys):
    rows = {
        "sin": (math.sin, lambda a, i: np.sin(float(a) + 1e-30j).imag / 1e-30),
        "exp": (math.exp, lambda a, i: np.exp(float(a) + 1e-30j).imag / 1e-30),
    }
    result = rejected_on_first_try(
        capsys, ex.check_derivative_table, table_with(**rows), says="complex step"
    )
    never_states(result, "math.cos(a)", "math.exp(a)")


def test_08_1_a_derivative_dividing_by_an_argument_fails_at_zero(capsys):
    rows = {"mul": (lambda a, b: a * b, lambda a, b, i: (a * b) / (a if i == 0 else b))}
    result = outcome(capsys, ex.check_derivative_table, table_with(**rows))
    assert result.status == "fail" and "ZeroDivisionError" in result.message
    never_states(result, "b if i == 0")


# ------------------------------------------------------------------------- 08-2
def test_08_2_a_sweep_of_the_last_sixty_nodes_is_refused(capsys):
    def sweep(nodes, loss):
        for n in nodes:
            n.grad = 0.0
        loss.grad = 1.0
        for n in list(reversed(nodes))[:60]:
            if n.op is not None:
                args = [i.value for i in n.inputs]
                for k, inp in enumerate(n.inputs):
                    if inp.needs_grad:
                        inp.grad += n.grad * OPS[n.op][1](*args, k)

    result = rejected_on_first_try(capsys, ex.check_static_backward, sweep, says="on a long graph")
    never_states(result, "reversed(", "0.99 **")


def test_08_2_an_empty_body_is_told_it_does_nothing(capsys):
    def sweep(nodes, loss):
        pass

    result = rejected_on_first_try(
        capsys, ex.check_static_backward, sweep, says="your static_backward does nothing yet"
    )
    assert "notebook's own graph" not in result.message


def test_08_2_the_right_sweep_is_still_accepted(capsys):
    assert outcome(capsys, ex.check_static_backward, static_backward)


# ------------------------------------------------------------------------- 08-3
def test_08_3_gradients_written_into_computed_nodes_are_refused(capsys):
    def writes(root):
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
                node.grad += g
                continue
            if node.saved is None:
                raise RuntimeError("freed")
            node.grad = g
            for k, inp in enumerate(node.inputs):
                if inp.requires_grad:
                    d = OPS[node.grad_fn][1](*node.saved, k)
                    grads[id(inp)] = grads.get(id(inp), 0.0) + g * d
        return order

    result = rejected_on_first_try(
        capsys, ex.check_run_backward, writes, says="wrote gradients into computed nodes' .grad"
    )
    never_states(result, "OPS[node.grad_fn]", "grads.pop")


def test_08_3_a_backward_that_breaks_after_forty_calls_is_refused(capsys):
    calls = []

    def counting(root):
        calls.append(1)
        order = run_backward(root)
        if len(calls) >= 40:
            for node in order:
                if node.is_leaf and node.grad:
                    node.grad *= 1.5
        return order

    result = rejected_on_first_try(
        capsys,
        ex.check_run_backward,
        counting,
        says="gives other gradients when it is called again",
    )
    never_states(result, "OPS[", "grads[id(")


def test_08_3_a_walk_without_a_seen_set_is_told_its_reads_not_its_entries(capsys):
    def no_seen(root):
        order = []

        def visit(node):
            for inp in node.inputs:
                if inp.requires_grad:
                    visit(inp)
            if node not in order:
                order.append(node)

        visit(root)
        grads = {id(root): 1.0}
        for node in reversed(order):
            g = grads.pop(id(node), 0.0)
            if node.is_leaf:
                node.grad += g
                continue
            if node.saved is None:
                raise RuntimeError("freed")
            for k, inp in enumerate(node.inputs):
                if inp.requires_grad:
                    d = OPS[node.grad_fn][1](*node.saved, k)
                    grads[id(inp)] = grads.get(id(inp), 0.0) + g * d
        return order

    result = rejected_on_first_try(
        capsys, ex.check_run_backward, no_seen, says="reads of node inputs for 37 nodes"
    )
    assert "entries for" not in result.message


def test_08_3_the_right_run_backward_is_still_accepted(capsys):
    assert outcome(capsys, ex.check_run_backward, run_backward)


# ------------------------------------------------------------------------- 08-4
@pytest.mark.parametrize(
    "cut",
    [lambda order: order[2:], lambda order: order[-3:]],
    ids=["order[2:]", "order[-3:]"],
)
def test_08_4_freeing_a_fixed_part_of_the_order_is_refused(capsys, cut):
    def free(order):
        for n in cut(order):
            if not n.is_leaf:
                n.saved = None

    result = rejected_on_first_try(
        capsys, ex.check_free_graph, free, says="kept their saved values"
    )
    assert "wherever it stands" in result.message
    never_states(result, "saved = None", "is_leaf")


def test_08_4_the_right_free_graph_is_still_accepted(capsys):
    assert outcome(capsys, ex.check_free_graph, free_graph)


# ------------------------------------------------------------------------- 08-5
def test_08_5_a_fine_stencil_with_one_backward_is_refused(capsys):
    def stencil(F, x0, y0):
        F(Node(x0, requires_grad=True), Node(y0, requires_grad=True))[0].backward()
        h = 0.05
        c = [1 / 280, -4 / 105, 1 / 5, -4 / 5, 0, 4 / 5, -1 / 5, 4 / 105, -1 / 280]
        rows = len(F(Node(x0), Node(y0)))
        J = [[0.0, 0.0] for _ in range(rows)]
        for j in range(2):
            for m, w in zip(range(-4, 5), c):
                if w:
                    p = (x0 + m * h, y0) if j == 0 else (x0, y0 + m * h)
                    out = F(Node(p[0]), Node(p[1]))
                    for i in range(rows):
                        J[i][j] += w * out[i].value / h
        return J

    result = rejected_on_first_try(
        capsys, ex.check_jacobian, stencil, says="close to the engine's but not exact"
    )
    never_states(result, "F(x, y)[k].backward()", "J.append")


def test_08_5_the_right_jacobians_are_still_accepted(capsys):
    assert outcome(capsys, ex.check_jacobian, jacobian_with("method"))
    assert outcome(capsys, ex.check_jacobian, jacobian_with("run_backward"))


# ------------------------------------------------------------------------- 08-6
def test_08_6_a_descent_capped_at_five_hundred_steps_is_refused(capsys):
    def capped(f, x0, y0, lr=0.1, steps=200):
        x, y = Node(x0, requires_grad=True), Node(y0, requires_grad=True)
        for _ in range(min(steps, 500)):
            x.grad = y.grad = 0.0
            f(x, y).backward()
            x.value -= lr * x.grad
            y.value -= lr * y.grad
        return x.value, y.value

    result = rejected_on_first_try(
        capsys, ex.check_gradient_descent, capped, says="your descent stops early"
    )
    never_states(result, "-= lr", "min(")


def test_08_6_a_learning_rate_a_hair_off_is_refused(capsys):
    def off(f, x0, y0, lr=0.1, steps=200):
        x, y = Node(x0, requires_grad=True), Node(y0, requires_grad=True)
        for _ in range(steps):
            x.grad = y.grad = 0.0
            f(x, y).backward()
            x.value -= lr * (1 + 1e-9) * x.grad
            y.value -= lr * (1 + 1e-9) * y.grad
        return x.value, y.value

    result = rejected_on_first_try(
        capsys, ex.check_gradient_descent, off, says="no factor of its own"
    )
    never_states(result, "-= lr", "x.grad = y.grad = 0.0")


def test_08_6_the_right_descents_are_still_accepted(capsys):
    assert outcome(capsys, ex.check_gradient_descent, descend_with("method"))
    assert outcome(capsys, ex.check_gradient_descent, descend_with("run_backward"))


# ------------------------------------------------------------------------- 09-1
def right_accuracy(logits, labels):
    return float(np.mean(np.asarray(logits).argmax(axis=1) == np.asarray(labels)))


def test_09_1_ties_counted_as_right_are_refused(capsys):
    def ties(logits, labels):
        L, y = np.asarray(logits), np.asarray(labels)
        return float(np.mean(L[np.arange(len(y)), y] >= L.max(axis=1)))

    result = rejected_on_first_try(
        capsys, ex.check_accuracy_fn, ties, says="largest logit appears twice"
    )
    never_states(result, "argmax(axis=1)", "0.5 for")


def test_09_1_an_accuracy_rounded_to_five_digits_is_refused(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_accuracy_fn,
        lambda l, y: round(right_accuracy(l, y), 5),
        says="your accuracy is rounded",
    )
    never_states(result, "argmax")


def test_09_1_an_accuracy_written_into_the_callers_logits_is_refused(capsys):
    cases = [(c[0].copy(), c[1].copy()) for c in lesson09._ACCURACY_CASES]

    def shifts(logits, labels):
        L = np.asarray(logits)
        L -= L.max(axis=1, keepdims=True)
        return float(np.mean(L.argmax(axis=1) == np.asarray(labels)))

    result = rejected_on_first_try(
        capsys, ex.check_accuracy_fn, shifts, says="changed the logits it was given"
    )
    never_states(result, "argmax")
    assert all(np.array_equal(c[0], k[0]) for c, k in zip(lesson09._ACCURACY_CASES, cases))


def test_09_1_the_right_accuracy_is_still_accepted(capsys):
    assert outcome(capsys, ex.check_accuracy_fn, right_accuracy)
    assert outcome(capsys, ex.check_accuracy_fn, lambda l, y: ng.tensor(right_accuracy(l, y)))


# ------------------------------------------------------------------------- 09-2
def step_with(after=None, clip=None, scale=1.0, rounding=None):
    def train_step(model, optimizer, X, y):
        optimizer.zero_grad()
        loss = ng.nn.functional.cross_entropy(model(X), y)
        (loss * scale if scale != 1.0 else loss).backward()
        if clip is not None:
            for p in model.parameters():
                p.grad.clamp_(-clip, clip)
        optimizer.step()
        if after is not None:
            after(model)
        value = loss.item()
        return round(value, rounding) if rounding is not None else value

    return train_step


@pytest.mark.parametrize("clip", [0.3, 1.0, 10.0, 100.0])
def test_09_2_clipped_gradients_are_refused(capsys, clip):
    result = rejected_on_first_try(
        capsys, ex.check_train_step, step_with(clip=clip), says="no clipping"
    )
    never_states(result, "zero_grad", "cross_entropy(")


def test_09_2_a_rounded_loss_is_refused(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_train_step, step_with(rounding=7), says="the loss you return is rounded"
    )
    never_states(result, "loss.item()" + " ", "zero_grad")


def test_09_2_a_model_left_in_eval_mode_is_refused(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_train_step,
        step_with(after=lambda m: m.eval()),
        says="left the model in evaluation mode",
    )
    never_states(result, "zero_grad", "cross_entropy(")


def test_09_2_a_scaled_loss_is_told_its_scale_not_an_accumulation(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_train_step, step_with(scale=1.0001), says="1.0001 times the gradient"
    )
    assert "add up over backward calls" not in result.message


def test_09_2_a_leaked_default_dtype_is_not_accepted_and_is_put_back(capsys):
    def leaks(model, optimizer, X, y):
        value = step_with()(model, optimizer, X, y)
        ng.set_default_dtype(ng.float64)
        return value

    before = ng.get_default_dtype()
    result = ex.check_train_step(leaks)
    capsys.readouterr()
    assert not result.passed
    assert ng.get_default_dtype() == before
    assert outcome(capsys, ex.check_train_step, step_with())


def test_09_2_the_right_step_is_still_accepted(capsys):
    assert outcome(capsys, ex.check_train_step, step_with())


# ------------------------------------------------------------------------- 09-3
def build_with(extra=0.0):
    def build_static(init, lr):
        with ns.Graph() as g:
            W1, b1, W2, b2 = (ns.Variable(w) for w in init)
            xs = ns.placeholder("X", shape=(None, 2), dtype=np.float32)
            ys = ns.placeholder("y", shape=(None,), dtype=np.int64)
            logits = ns.tanh(xs @ ns.t(W1) + b1) @ ns.t(W2) + b2
            loss = ns.cross_entropy(logits, ys)
            if extra:
                loss = loss + extra
            train = ns.optim.Adam([W1, b1, W2, b2], lr=lr).minimize(loss)
        return g.compile([xs, ys], [loss, train]), g.compile([xs], [logits])

    return build_static


def test_09_3_a_constant_added_to_the_loss_is_refused(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_static_classifier, build_with(1e-5), says="a constant added to the loss"
    )
    never_states(result, "ns.cross_entropy(", "ns.placeholder")


def test_09_3_the_right_graph_is_still_accepted(capsys):
    assert outcome(capsys, ex.check_static_classifier, build_with())


# sanity of the fixture: the module's table is the right one
def test_the_table_these_tests_read_is_the_right_one(capsys):
    assert outcome(capsys, ex.check_derivative_table, TABLE)
