"""Lessons 6-9: answers a tiny amount away from the right one (a term of 1e-9, a
threshold of 1e-9, a derivative off by 1e-12, a descent that stops early) are refused,
right answers written another way (a torch-style mask cast, the engine's run_backward
called directly) are accepted, and each hint names the mistake actually made, never the
expected value or code."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from checker_results import never_states, outcome, rejected_on_first_try
from lesson_answers_06_07 import model
from lesson_answers_06_07 import unnamed_static_model as static_model
from lesson_answers_08 import (
    OPS,
    descend_with,
    jacobian_with,
    run_backward,
    table_with,
)

import naivegraph as ng
import naivegraph.static as ns
from naivegraph.lessons import exercises as ex


# ------------------------------------------------------------------------- 06-1
@pytest.mark.parametrize(
    "body, says",
    [
        (lambda x, w1, w2, w3: model(x, w1, w2, w3) + 1e-9 * w2, "by a tiny amount for a feed"),
        (lambda x, w1, w2, w3: model(x, w1, w2, w3) * (1 + 1e-12), "by a tiny amount for a feed"),
        (
            lambda x, w1, w2, w3: model(x, w1, w2, w3) + 1e-9 * w2 - 3e-9,
            "changes with w2 by a tiny amount",
        ),
        (
            lambda x, w1, w2, w3: model(x, w1, w2, w3) + 1e-9 * w1 * w1 - 4e-9,
            "changes with w1 by a tiny amount",
        ),
    ],
)
def test_06_1_a_loss_a_tiny_term_away_from_the_model_is_refused(capsys, body, says):
    result = rejected_on_first_try(
        capsys, ex.check_static_model, *static_model(body), says="computed in float64 your loss"
    )
    assert says in result.message
    never_states(result, "40", "112", "102", "ns.mean(", "x * w1")


@pytest.mark.parametrize(
    "body",
    [
        model,
        lambda x, w1, w2, w3: ns.mean(x * w1 * w3 * (x * w1 + w2)),
        lambda x, w1, w2, w3: ns.mean(w3 * (x * x * w1 * w1 + x * w1 * w2)),
        lambda x, w1, w2, w3: ns.sum((x * w1 + w2) * (w3 * (w1 * x))) / 4,
        lambda x, w1, w2, w3: ((x * w1 + w2) * (x * w1 * w3)).mean() + 0.0 * w2,
    ],
)
def test_06_1_the_model_written_in_another_order_is_still_accepted(capsys, body):
    assert outcome(capsys, ex.check_static_model, *static_model(body))


# ------------------------------------------------------------------------- 07-1
@pytest.mark.parametrize("threshold", [1e-9, 1e-300, -1e-9, -1e-300])
def test_07_1_a_threshold_a_hair_away_from_zero_is_refused(capsys, threshold):
    result = rejected_on_first_try(
        capsys,
        ex.check_where_fix,
        lambda x: ng.where(x > threshold, x * 2, x * -1),
        says="wrong for entries close to it",
    )
    never_states(result, "x * 2, x * -1", "ng.where(")


@pytest.mark.parametrize(
    "f",
    [
        lambda x: ng.where(x > 0, x * 2, x * -1),
        lambda x: ng.where(x >= 0, x * 2, x * -1),  # the same at 0: both branches give 0
        lambda x: ng.where(x.gt(0), 2 * x, -x),
        # masks multiplied in give nan at x = inf, where the rule gives inf: refused since
        # round 9 (test_checkers_07_round9.py)
    ],
)
def test_07_1_a_torch_style_mask_or_comparison_is_accepted(capsys, f):
    assert outcome(capsys, ex.check_where_fix, f)


@pytest.mark.parametrize(
    "factory",
    [lambda x: ng.zeros_like(x), lambda x: ng.full_like(x, 0.0), lambda x: ng.tensor(0.0)],
)
def test_07_1_a_tensor_made_inside_the_traced_function_is_told_it_does_not_mix(capsys, factory):
    result = rejected_on_first_try(
        capsys,
        ex.check_where_fix,
        lambda x: ng.where(x > factory(x), x * 2, x * -1),
        says="makes a tensor while it runs",
    )
    assert "a tensor and a node do not mix" in result.message
    assert "Python `if`" not in result.message and "ns.constant" not in result.message
    never_states(result, "x * 2, x * -1", "x > 0")


@pytest.mark.parametrize("reduce", [lambda x: x.sum(), lambda x: x.mean(), lambda x: ng.max(x)])
def test_07_1_a_condition_on_a_reduction_is_told_it_decides_once_for_every_entry(capsys, reduce):
    result = rejected_on_first_try(
        capsys,
        ex.check_where_fix,
        lambda x: ng.where(reduce(x) > 0, x * 2, x * -1),
        says="chooses one branch for the whole input",
    )
    assert "each entry by its own sign" in result.message
    assert "check both branches" not in result.message
    never_states(result, "x * 2, x * -1", "x > 0,")


def test_07_1_a_result_summed_to_one_number_is_told_its_shape(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_where_fix,
        lambda x: ng.where(x > 0, x * 2, x * -1).sum(),
        says="returns values of shape () for an x of shape (2,)",
    )
    assert "check both branches" not in result.message
    never_states(result, "x * 2, x * -1")


# ------------------------------------------------------------------------- lesson 8
@pytest.mark.parametrize(
    "rows, op",
    [
        ({"sin": (math.sin, lambda a, i: math.cos(a) + 1e-12)}, "'sin'"),
        ({"exp": (math.exp, lambda a, i: math.exp(a) * (1 + 1e-13))}, "'exp'"),
        ({"mul": (lambda a, b: a * b, lambda a, b, i: float(b if i == 0 else a) + 1e-12)}, "'mul'"),
        (
            {"div": (lambda a, b: a / b, lambda a, b, i: 1 / b + 1e-12 if i == 0 else -a / b**2)},
            "'div'",
        ),
    ],
)
def test_08_1_a_derivative_a_tiny_term_off_is_refused(capsys, rows, op):
    result = rejected_on_first_try(
        capsys, ex.check_derivative_table, table_with(**rows), says="is close but not exact"
    )
    assert f"the derivative of {op}" in result.message
    assert "a small term added" in result.message
    never_states(result, "math.cos(a)", "math.exp(a)", "-a / b", "b if i == 0")


@pytest.mark.parametrize(
    "rows",
    [
        {},
        {"sin": (np.sin, lambda a, i: np.cos(a)), "exp": (np.exp, lambda a, i: np.exp(a))},
        {"div": (lambda a, b: a / b, lambda a, b, i: 1 / b if i == 0 else -(a / b) / b)},
        {"div": (lambda a, b: a / b, lambda a, b, i: b**-1 if i == 0 else -a / (b * b))},
        {"sin": (math.sin, lambda a, i: math.sin(a + math.pi / 2))},
        {"exp": (math.exp, lambda a, i: math.e**a)},
    ],
)
def test_08_1_the_exact_derivatives_written_another_way_are_still_accepted(capsys, rows):
    assert outcome(capsys, ex.check_derivative_table, table_with(**rows))


THE_RUN_BACKWARD = run_backward


@pytest.mark.parametrize("backward", ["method", "run_backward"])
def test_08_5_the_engines_run_backward_called_directly_is_accepted_as_its_backward(
    capsys, backward
):
    assert outcome(capsys, ex.check_jacobian, jacobian_with(backward))


@pytest.mark.parametrize("backward", ["method", "run_backward"])
def test_08_6_the_engines_run_backward_called_directly_is_accepted_as_its_backward(
    capsys, backward
):
    assert outcome(capsys, ex.check_gradient_descent, descend_with(backward))


def test_08_5_and_08_6_leave_the_notebooks_run_backward_as_it_was(capsys):
    assert outcome(capsys, ex.check_jacobian, jacobian_with("run_backward"))
    assert outcome(capsys, ex.check_gradient_descent, descend_with("run_backward"))
    assert globals()["run_backward"] is THE_RUN_BACKWARD


@pytest.mark.parametrize(
    "early, ran",
    [
        # the long run takes a number of steps chosen at random, beyond any fixed stop
        ({"stop_after": 100}, r"asked for (\d+) steps, it ran 100 backward passes"),
        ({"stop_below": 1e-3}, r"asked for (\d+) steps, it ran 2"),
    ],
)
def test_08_6_a_descent_that_stops_early_is_refused_though_it_passes_the_short_run(
    capsys, early, ran
):
    result = rejected_on_first_try(
        capsys, ex.check_gradient_descent, descend_with(**early), says="your descent stops early"
    )
    asked = re.search(ran, result.message)
    assert asked and 300 <= int(asked.group(1)) <= 600, result.message
    never_states(result, "-= lr", "x.grad = y.grad = 0.0", "f(x, y).backward()")


@pytest.mark.parametrize(
    "needs, leaves",
    [
        ((True, False), "the leaf y you passed F was made without requires_grad=True"),
        ((False, True), "the leaf x you passed F was made without requires_grad=True"),
        ((False, False), "the leaves x and y you passed F were made without requires_grad"),
    ],
)
def test_08_5_leaves_made_without_requires_grad_are_named(capsys, needs, leaves):
    result = rejected_on_first_try(
        capsys, ex.check_jacobian, jacobian_with("method", needs), says=leaves
    )
    assert "at line" not in result.message and "entry [" not in result.message
    never_states(result, "F(x, y)[k].backward()", "J.append")


# ------------------------------------------------------------------------- 08-2
def sweep_with(order="reversed", zero=True):
    """static_backward, the nodes walked as ``order`` says, grads zeroed first or not."""

    def static_backward(nodes, loss):
        if zero:
            for n in nodes:
                n.grad = 0.0
        loss.grad = 1.0
        if order == "reverse() as a list":
            walk = nodes.reverse()
        elif order == "reverse() in place":
            nodes.reverse()
            walk = nodes
        else:
            walk = reversed(nodes)
        for n in walk:
            if n.op is None:
                continue
            args = [i.value for i in n.inputs]
            for k, inp in enumerate(n.inputs):
                if inp.needs_grad:
                    inp.grad += n.grad * OPS[n.op][1](*args, k)

    return static_backward


def test_08_2_reverse_used_as_a_list_is_told_it_returns_none_and_reorders_the_graph(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_static_backward,
        sweep_with("reverse() as a list"),
        says="nodes.reverse() reverses the list in place and returns None",
    )
    assert "must stay in creation order" in result.message
    assert "TypeError" not in result.message
    never_states(result, "reversed(nodes)", "inp.grad +=")


def test_08_2_a_list_reversed_in_place_is_told_the_graphs_list_must_stay_in_order(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_static_backward,
        sweep_with("reverse() in place"),
        says="your sweep reordered the list it was given, in place",
    )
    assert "returns None" not in result.message
    assert "start every grad from zero" not in result.message
    never_states(result, "reversed(nodes)", "inp.grad +=")


def test_08_2_a_sweep_that_never_zeroes_is_told_grads_start_as_none(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_static_backward,
        sweep_with(zero=False),
        says="a grad was still None when your sweep computed with it",
    )
    assert "set every node's grad to zero" in result.message
    never_states(result, "n.grad = 0.0", "loss.grad = 1.0", "reversed(nodes)")


def test_08_2_the_sweep_over_a_reversed_view_is_still_accepted(capsys):
    assert outcome(capsys, ex.check_static_backward, sweep_with())


# ------------------------------------------------------------------------- 08-3
def backward_with(seed="one", follow="requires_grad", row=lambda node, inp: (node.grad_fn, 1)):
    """run_backward, seeded with 1 or with the root's value, following every input or
    only those that require grad, each node multiplying by the table entry ``row`` picks."""

    def run_backward(root):
        order, seen = [], set()

        def visit(node):
            if id(node) not in seen:
                seen.add(id(node))
                for inp in node.inputs:
                    if follow == "every input" or inp.requires_grad:
                        visit(inp)
                order.append(node)

        visit(root)
        grads = {id(root): 1.0 if seed == "one" else root.value}
        for node in reversed(order):
            g = grads.pop(id(node), 0.0)
            if node.is_leaf:
                node.grad += g
                continue
            if node.saved is None:
                raise RuntimeError("the graph was freed by an earlier backward")
            for k, inp in enumerate(node.inputs):
                if inp.requires_grad:
                    op, entry = row(node, inp)
                    d = OPS[op][entry](*node.saved, k)
                    grads[id(inp)] = grads.get(id(inp), 0.0) + g * d
        return order

    return run_backward


def test_08_3_a_root_seeded_with_its_value_is_told_what_reaches_it_first(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_run_backward,
        backward_with(seed="value"),
        says="starts from the root's value",
    )
    assert "d root / d root" in result.message
    assert "several paths" not in result.message
    never_states(result, "1.0}", "{id(root): 1")


def test_08_3_an_order_that_visits_the_constants_is_told_they_keep_no_grad(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_run_backward,
        backward_with(follow="every input"),
        says="reached the constant 2 and added into its grad, which is None",
    )
    assert "only the inputs that require grad" in result.message
    never_states(result, "if inp.requires_grad", "visit(inp)")


@pytest.mark.parametrize(
    "row, says",
    [
        (lambda node, inp: (node.grad_fn, 0), "calls the first entry of a row, the op's function"),
        (lambda node, inp: ("sin", 1), "the derivative of another op than the node's own"),
        (lambda node, inp: (inp.grad_fn, 1), "the derivative of another op than the node's own"),
        (lambda node, inp: ("mul", 1), "the derivative of another op than the node's own"),
    ],
)
def test_08_3_a_sweep_that_reads_the_wrong_entry_of_the_table_is_told_which(capsys, row, says):
    result = rejected_on_first_try(capsys, ex.check_run_backward, backward_with(row=row), says=says)
    assert "your code raised" not in result.message
    never_states(result, "OPS[node.grad_fn][1]", "*node.saved, k)")


def test_08_3_the_table_watched_for_the_diagnosis_is_given_back_and_right_passes(capsys):
    table = OPS
    assert outcome(capsys, ex.check_run_backward, backward_with())
    rejected_on_first_try(
        capsys, ex.check_run_backward, backward_with(row=lambda n, i: ("sin", 1)), says="another op"
    )
    assert globals()["OPS"] is table


# ------------------------------------------------------------------------- 09-1
def right_rows(logits, labels):
    return np.asarray(logits).argmax(axis=1) == np.asarray(labels)


@pytest.mark.parametrize(
    "accuracy, says",
    [
        (lambda z, y: round(float(np.mean(right_rows(z, y))), 2), "your accuracy is rounded"),
        (lambda z, y: round(float(np.mean(right_rows(z, y)))), "your accuracy is rounded"),
        (
            lambda z, y: float(np.sum(right_rows(z, y)) / 5),
            "you divide the count of right rows by a fixed 5",
        ),
        (
            lambda z, y: float(np.mean(np.asarray(z).argmax(axis=0) == np.asarray(y))),
            "your predictions hold 2 entries, one per class, where the batch has 5 labels",
        ),
        (
            lambda z, y: float(np.mean(np.asarray(z).argmax(dim=1) == np.asarray(y))),
            "dim= is torch's name",
        ),
        (
            lambda z, y: float(np.mean(np.argmax(np.asarray(z), dim=1) == np.asarray(y))),
            "numpy's argmax calls it axis",
        ),
    ],
)
def test_09_1_each_accuracy_mistake_gets_its_own_hint(capsys, accuracy, says):
    result = rejected_on_first_try(capsys, ex.check_accuracy_fn, accuracy, says=says)
    assert "right for two classes" not in result.message
    never_states(result, "axis=1", "argmax(1)", "0.333", "3/5", "len(labels)")


# ------------------------------------------------------------------------- 09-3
def build_static_with(minimized="loss", step_outputs="loss, train", classify_inputs=1, wrap=()):
    """build_static for 09-3, right by default, or with one mistake."""

    def build_static(init, lr):
        with ns.Graph() as g:
            W1, b1, W2, b2 = (
                ns.Variable(w, name=n) for w, n in zip(init, ("W1", "b1", "W2", "b2"))
            )
            xs = ns.placeholder("X", shape=(None, 2), dtype=np.float32)
            ys = ns.placeholder("y", shape=(None,), dtype=np.int64)
            logits = ns.tanh(xs @ ns.t(W1) + b1) @ ns.t(W2) + b2
            loss = ns.cross_entropy(logits, ys)
            target = logits if minimized == "logits" else loss
            train = ns.optim.Adam([W1, b1, W2, b2], lr=lr).minimize(target)
        fetched = [logits] if step_outputs == "logits" else [loss, train]
        step = g.compile([xs, ys], fetched)
        classify = g.compile([xs, ys][:classify_inputs], [logits])
        if "step" in wrap:
            step = (lambda run: lambda X, y: run(X, y))(step)
        if "classify" in wrap:
            classify = (lambda run: lambda points: run(points))(classify)
        return step, classify

    return build_static


@pytest.mark.parametrize(
    "mistake, says, not_says",
    [
        (
            {"minimized": "logits"},
            "your training op minimizes the logits, not the loss",
            "Adam over all four",
        ),
        (
            {"step_outputs": "logits"},
            "an array of shape (32, 2), one row of two scores per point: the logits",
            "[loss, train]",
        ),
        ({"classify_inputs": 2}, "classify was compiled with 2 inputs", "your code raised"),
    ],
)
def test_09_3_each_static_graph_mistake_gets_its_own_hint(capsys, mistake, says, not_says):
    result = rejected_on_first_try(
        capsys, ex.check_static_classifier, build_static_with(**mistake), says=says
    )
    assert not_says not in result.message
    never_states(result, "[loss, train]", "minimize(loss)", "compile([xs]", "[xs, ys]")


@pytest.mark.parametrize(
    "wrap, says",
    [
        (("step",), "step is a Python function that drives the graph"),
        (("classify",), "classify is a Python function that drives the graph"),
        (("step", "classify"), "step and classify are Python functions that drive the graph"),
    ],
)
def test_09_3_uncompiled_functions_are_told_so_in_agreement_with_their_number(capsys, wrap, says):
    rejected_on_first_try(
        capsys, ex.check_static_classifier, build_static_with(wrap=wrap), says=says
    )


def test_09_3_the_graph_compiled_into_both_functions_is_still_accepted(capsys):
    assert outcome(capsys, ex.check_static_classifier, build_static_with())
