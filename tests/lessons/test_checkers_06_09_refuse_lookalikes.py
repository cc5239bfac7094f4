"""Lessons 6-9: answers that agree with the right one only on the checker's easy cases
are refused with a hint naming their mistake (never the expected value or code), the
right answer in its usual and unusual forms is still accepted, and no checker raises."""

from __future__ import annotations

import cmath
import math

import numpy as np
import pytest
from checker_results import never_states, outcome, rejected_on_first_try
from lesson_answers_06_07 import notebook_shell, run_answer_cell
from lesson_answers_06_07 import unnamed_static_model as static_model
from lesson_answers_08 import OPS, TABLE, static_backward

import naivegraph as ng
import naivegraph.static as ns
from naivegraph.lessons import exercises as ex


# ------------------------------------------------------------------------- lesson 6
@pytest.mark.parametrize(
    "body",
    [
        lambda x, w1, w2, w3: ns.mean(x * w1 + w2) * ns.mean(x * w1 * w3),
        lambda x, w1, w2, w3: ns.max((x * w1 + w2) * (x * w1 * w3)),
        lambda x, w1, w2, w3: ns.min((x * w1 + w2) * (x * w1 * w3)),
        lambda x, w1, w2, w3: (ns.mean(x) * w1 + w2) * (ns.mean(x) * w1 * w3),
    ],
)
def test_06_1_a_loss_right_only_for_feeds_of_equal_elements_is_refused(capsys, body):
    result = rejected_on_first_try(
        capsys,
        ex.check_static_model,
        *static_model(body),
        says="wrong for a feed of different numbers",
    )
    assert "only the loss reduces them" in result.message
    never_states(result, "102", "ns.mean((")


@pytest.mark.parametrize(
    "body",
    [
        lambda x, w1, w2, w3: ns.mean(ns.abs((x * w1 + w2) * (x * w1 * w3))),
        lambda x, w1, w2, w3: ns.mean(ns.relu((x * w1 + w2) * (x * w1 * w3))),
        lambda x, w1, w2, w3: ns.mean((ns.abs(x) * w1 + w2) * (x * w1 * w3)),
    ],
)
def test_06_1_a_loss_right_for_positive_feeds_only_is_refused(capsys, body):
    result = rejected_on_first_try(
        capsys,
        ex.check_static_model,
        *static_model(body),
        says="some negative",
    )
    assert "changes signs (abs, relu)" in result.message
    never_states(result, "102", "ns.mean((")


def test_06_1_the_model_is_still_accepted_with_the_mean_as_a_method(capsys):
    def steps(x, w1, w2, w3):
        l1 = x * w1
        return ((l1 + w2) * (w3 * l1)).mean()

    assert outcome(capsys, ex.check_static_model, *static_model(steps))


def test_06_1_the_last_resort_hint_does_not_point_at_the_rebound_loss(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_static_model,
        *static_model(lambda x, w1, w2, w3: ns.mean(x * w1 * w2 * w3)),
        says="what the graph g of the cells above printed for ones",
    )
    assert "`loss.value`" not in result.message


def test_06_3_text_is_told_it_is_text(capsys):
    result = rejected_on_first_try(capsys, ex.check_memory_plan, "2", says="got the text '2'")
    assert "without quotes" in result.message
    assert outcome(capsys, ex.check_memory_plan, 2)
    assert outcome(capsys, ex.check_memory_plan, np.int64(2))


# ------------------------------------------------------------------------- lesson 7
def test_07_1_a_threshold_just_above_zero_is_refused(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_where_fix,
        lambda x: ng.where(x > 0.001, x * 2, x * -1),
        says="exactly where the rule does",
    )
    never_states(result, "x * 2, x * -1", "x > 0,")
    assert outcome(capsys, ex.check_where_fix, lambda x: ng.where(x > 0, 2 * x, -x))
    assert outcome(capsys, ex.check_where_fix, lambda x: ng.where(0 < x, x + x, 0 - x))


def test_07_1_mask_assignment_is_told_masks_do_not_trace_not_about_an_if(capsys):
    def f_fixed(x):
        y = x * 2
        y[x <= 0] = -y[x <= 0]
        return y

    result = rejected_on_first_try(
        capsys, ex.check_where_fix, f_fixed, says="assigning with a mask"
    )
    assert "`if`" not in result.message
    assert "ng.where" in result.message
    never_states(result, "x * 2, x * -1")


def test_07_1_static_where_in_the_function_is_sent_to_ng_where_not_ns_constant(capsys):
    def f_fixed(x):
        return ns.where(x > 0, x * 2, x * -1)

    result = rejected_on_first_try(
        capsys, ex.check_where_fix, f_fixed, says="Choose per element with ng.where"
    )
    assert "ns.constant" not in result.message
    never_states(result, "x * 2, x * -1")


def test_07_2_a_typed_in_tensor_is_told_to_type_a_plain_list_not_that_it_ran(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_trace_pitfall,
        ng.tensor([2.0, 4.0]),
        [10.0, 20.0],
        says="as numbers you type in: a list of two numbers",
    )
    assert "came from running" not in result.message
    never_states(result, "[2, 4]", "[10, 20]")


@pytest.fixture
def shell():
    yield from notebook_shell()


@pytest.mark.parametrize(
    "answer, calls",
    [
        (
            "traced_result = traced(np.array([1.0, 2.0])).tolist()\neager_result = [10.0, 20.0]",
            "traced",
        ),
        (
            "traced_result = [2.0, 4.0]\n"
            "eager_result = list(scaled(ng.tensor([1.0, 2.0])).tolist())",
            "scaled",
        ),
        (
            "traced_result = traced.__call__(np.array([1.0, 2.0])).tolist()\n"
            "eager_result = scaled(ng.tensor([1.0, 2.0])).tolist()",
            "traced and scaled",
        ),
    ],
)
def test_07_2_an_answer_cell_that_runs_the_functions_is_refused(shell, answer, calls):
    result = run_answer_cell(shell, answer)
    assert result.status == "fail", result.message
    assert f"your answer cell calls {calls}" in result.message
    never_states(result, "[2, 4]", "[10, 20]")


def test_07_2_a_prediction_typed_in_the_answer_cell_is_accepted(shell):
    assert run_answer_cell(shell, "traced_result = [2.0, 4.0]\neager_result = [10, 20]")
    assert run_answer_cell(shell, "traced_result = (2, 4)\neager_result = [10.0, 20.0]")


# ------------------------------------------------------------------------- lesson 8
def stripped_five_point(f, h=1e-3):
    """A five-point stencil on the arguments made plain floats first."""

    def derivative(*args):
        *values, i = args
        values = [float(v) for v in values]

        def at(step):
            moved = list(values)
            moved[i] = moved[i] + step * h
            return f(*moved)

        return (-at(2) + 8 * at(1) - 8 * at(-1) + at(-2)) / (12 * h)

    return derivative


def numpy_central(f, h=1e-4):
    """A central difference that shifts the argument with np.add."""

    def derivative(*args):
        *values, i = args
        up, down = list(values), list(values)
        up[i], down[i] = np.add(up[i], h), np.add(down[i], -h)
        return (f(*up) - f(*down)) / (2 * h)

    return derivative


@pytest.mark.parametrize("row", ["mul", "div", "sin", "exp"])
@pytest.mark.parametrize("estimate", [stripped_five_point, numpy_central])
def test_08_1_a_stencil_on_arguments_stripped_of_the_probe_is_refused(capsys, row, estimate):
    f = TABLE[row][0]
    table = {**TABLE, row: (f, estimate(f))}
    result = rejected_on_first_try(capsys, ex.check_derivative_table, table, says=f"{row!r}")
    assert "estimate" in result.message
    never_states(result, "cos(", "-a / b", "1 / b")


@pytest.mark.parametrize(
    "d_sin",
    [
        lambda a, i: cmath.sin(complex(a, 1e-30)).imag / 1e-30,
        lambda a, i: float(np.sin(complex(a, 1e-30)).imag / 1e-30),
        lambda a, i: cmath.sin(float(a) + 1e-30j).imag / 1e-30,
    ],
)
def test_08_1_a_complex_step_the_probe_cannot_see_is_refused(capsys, d_sin):
    table = {**TABLE, "sin": (TABLE["sin"][0], d_sin)}
    result = rejected_on_first_try(capsys, ex.check_derivative_table, table, says="complex step")
    never_states(result, "cos(")


def test_08_1_exact_rules_in_unusual_forms_are_still_accepted(capsys):
    f_exp = TABLE["exp"][0]
    other = {
        **TABLE,
        "sin": (math.sin, lambda a, i: math.sin(a + math.pi / 2)),
        "exp": (f_exp, lambda a, i: f_exp(float(a))),
        "div": (TABLE["div"][0], lambda a, b, i: [1.0 / b, -(a / b) / b][i]),
        "mul": (TABLE["mul"][0], lambda a, b, i: float(np.multiply(1.0, (b, a)[i]))),
    }
    assert outcome(capsys, ex.check_derivative_table, other)
    assert outcome(capsys, ex.check_derivative_table, TABLE)


def static_backward_skipping_failures(nodes, loss):
    """Hands every input a gradient and skips only derivatives that fail."""
    for n in nodes:
        n.grad = 0.0
    loss.grad = 1.0
    for n in reversed(nodes):
        if n.op is None:
            continue
        args = [i.value for i in n.inputs]
        for k, inp in enumerate(n.inputs):
            try:
                inp.grad += n.grad * OPS[n.op][1](*args, k)
            except ValueError:
                pass


def static_backward_by_paths(nodes, loss):
    """Follows every path from the loss down, ignoring the list: exponential."""
    for n in nodes:
        n.grad = 0.0

    def push(node, g):
        node.grad += g
        if node.op is None:
            return
        args = [i.value for i in node.inputs]
        for k, inp in enumerate(node.inputs):
            if inp.needs_grad:
                push(inp, g * OPS[node.op][1](*args, k))

    push(loss, 1.0)


def test_08_2_a_sweep_that_gives_constants_gradients_is_refused(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_static_backward,
        static_backward_skipping_failures,
        says="a constant of (x - 3) ** 2 received a gradient",
    )
    never_states(result, "inp.needs_grad", "if inp.")


def test_08_2_a_sweep_that_follows_every_path_is_refused(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_static_backward, static_backward_by_paths, says="stacked diamonds"
    )
    assert "one pass over it visits each node once" in result.message
    never_states(result, "reversed(nodes)")


def test_08_2_a_sweep_of_another_list_is_told_to_use_the_nodes_given(capsys):
    notebook_graph: list = []  # a graph of the notebook's own, not the one passed in

    def sweep_global(nodes, loss):
        static_backward(notebook_graph, loss)

    result = rejected_on_first_try(
        capsys, ex.check_static_backward, sweep_global, says="sweep the `nodes` argument"
    )
    assert "starts at 0.0" not in result.message


def test_08_2_the_sweep_in_its_usual_and_unusual_forms_is_accepted(capsys):
    def static_backward_indexed(nodes, loss):
        for n in nodes:
            n.grad = 0.0
        loss.grad = 1.0
        for j in range(len(nodes) - 1, -1, -1):
            n = nodes[j]
            if not n.inputs:
                continue
            for k, inp in enumerate(n.inputs):
                if not inp.needs_grad:
                    continue
                inp.grad = inp.grad + n.grad * OPS[n.op][1](*[i.value for i in n.inputs], k)

    assert outcome(capsys, ex.check_static_backward, static_backward)
    assert outcome(capsys, ex.check_static_backward, static_backward_indexed)


def run_backward(root, keep_in_nodes=False):
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
        if keep_in_nodes and not node.is_leaf:  # the gradient parked in the node's .grad
            node.grad += g
            g = node.grad
        if node.is_leaf:
            node.grad += g
            continue
        if node.saved is None:
            raise RuntimeError("the graph was freed")
        for k, inp in enumerate(node.inputs):
            if inp.requires_grad:
                grads[id(inp)] = grads.get(id(inp), 0.0) + g * OPS[node.grad_fn][1](*node.saved, k)
    return order


def test_08_3_gradients_kept_in_computed_nodes_are_refused_on_a_second_backward(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_run_backward,
        lambda root: run_backward(root, keep_in_nodes=True),
        says="two backwards through the same graph",
    )
    assert "local to this call" in result.message
    never_states(result, "48")
    assert outcome(capsys, ex.check_run_backward, run_backward)


def test_08_the_labs_reference_functions_are_refused_as_the_answer(capsys):
    from naivegraph.lessons.checkers import lesson08

    class Node:  # enough of the notebook's Node for reference() to build with
        def __init__(self, value, requires_grad=False):
            self.value, self.requires_grad = value, requires_grad

    for check, name in (
        (ex.check_static_backward, "static_backward"),
        (ex.check_run_backward, "run_backward"),
        (ex.check_free_graph, "free_graph"),
        (ex.check_jacobian, "jacobian"),
        (ex.check_gradient_descent, "gradient_descent"),
    ):
        result = rejected_on_first_try(
            capsys, check, lesson08.reference(name, Node), says="that is the lab's version"
        )
        assert "write your own" in result.message


def ng_jacobian(F, x0, y0):
    rows = []
    for k in range(len(F(ng.tensor(x0), ng.tensor(y0)))):
        x = ng.tensor(x0, dtype=ng.float64, requires_grad=True)
        y = ng.tensor(y0, dtype=ng.float64, requires_grad=True)
        F(x, y)[k].backward()
        rows.append([float(x.grad), float(y.grad)])
    return rows


def torch_jacobian(F, x0, y0):
    import torch

    rows = []
    for k in range(len(F(torch.tensor(x0), torch.tensor(y0)))):
        x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
        y = torch.tensor(y0, dtype=torch.float64, requires_grad=True)
        F(x, y)[k].backward()
        rows.append([float(x.grad), float(y.grad)])
    return rows


@pytest.mark.parametrize(
    "jacobian, library", [(ng_jacobian, "naivegraph"), (torch_jacobian, "torch")]
)
def test_08_5_a_jacobian_from_a_librarys_autograd_is_refused(capsys, jacobian, library):
    result = rejected_on_first_try(
        capsys, ex.check_jacobian, jacobian, says=f"runs {library}'s autograd"
    )
    assert "the Node engine you built" in result.message


def ng_descent(f, x0, y0, lr=0.1, steps=200):
    x = ng.tensor(x0, dtype=ng.float64, requires_grad=True)
    y = ng.tensor(y0, dtype=ng.float64, requires_grad=True)
    for _ in range(steps):
        x.grad = y.grad = None
        f(x, y).backward()
        with ng.no_grad():
            x -= lr * x.grad
            y -= lr * y.grad
    return float(x), float(y)


def test_08_6_a_descent_on_a_librarys_autograd_is_refused(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_gradient_descent, ng_descent, says="naivegraph's autograd"
    )
    assert "the Node engine you built" in result.message


# ------------------------------------------------------------------------- lesson 9
def test_09_1_an_accuracy_returned_as_a_fraction_is_accepted(capsys):
    from fractions import Fraction

    def accuracy(logits, labels):
        predicted = np.asarray(logits).argmax(axis=1)
        hits = int((predicted == np.asarray(labels)).sum())
        return Fraction(hits, len(predicted))

    assert outcome(capsys, ex.check_accuracy_fn, accuracy)


@pytest.mark.parametrize(
    "answer, uses",
    [
        (
            "t = traced\ntraced_result = t(np.array([1.0, 2.0])).tolist()\n"
            "eager_result = [10.0, 20.0]",
            "uses traced",
        ),
        (
            "traced_result = traced.graph.run(traced.outputs[0], "
            "{traced.inputs[0]: np.array([1.0, 2.0])}).tolist()\neager_result = [10.0, 20.0]",
            "uses traced",
        ),
        (
            "traced_result = [2.0, 4.0]\n"
            "eager_result = [float(v) for v in map(scaled, [1.0, 2.0])]",
            "uses scaled",
        ),
    ],
)
def test_07_2_an_answer_cell_that_runs_a_function_under_another_name_is_refused(
    shell, answer, uses
):
    result = run_answer_cell(shell, answer)
    assert result.status == "fail", result.message
    assert f"your answer cell {uses}" in result.message
    never_states(result, "[2, 4]", "[10, 20]")
