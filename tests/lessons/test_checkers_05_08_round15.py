"""Lessons 5-8, fifteenth round: each hint names what the learner did. A head with one
output more than there are classes; a closed form that never runs the graph, a function
around the compiled function, the compiled function's plan, a first output that is not
the loss; an in-place method after ng.where, told without the ng.where advice; a sweep
whose OPS still holds the lab's table after 08-1 passed; a walk that merges two nodes of
equal value; a Jacobian rounded, or with its columns swapped or its rows reordered. None
gives the answer away, and the right forms (unusual ones too) are still accepted."""

from __future__ import annotations

import inspect
import re

import numpy as np
import pytest
from checker_results import never_states, outcome, refused, rejected_on_first_try
from lesson_answers_01_05 import finetune_with
from lesson_answers_06_07 import STEP_SECRETS, lesson_graph
from lesson_answers_08 import OPS, Node, jacobian_with, run_backward, static_backward

import naivegraph as ng
import naivegraph.static as ns
from naivegraph.lessons import checking
from naivegraph.lessons import exercises as ex

FINETUNE_SECRETS = ("momentum=0.9", "lr=0.1", "Linear(8, n_classes)")


def _defined(source: str, **names):
    """The function a notebook cell defines from ``source``, with ``names`` as the
    notebook's globals."""
    space = {"ng": ng, "np": np, **names}
    exec(compile(source, "<cell>", "exec"), space)
    return space[re.search(r"def (\w+)", source).group(1)]


# -- 05-2: a head one output too wide ----------------------------------------------------------
def _setup_sized(size):
    def setup(model, n_classes):
        for p in model.parameters():
            p.requires_grad = False
        model.fc = ng.nn.Linear(8, size(n_classes))
        return ng.optim.SGD(model.fc.parameters(), lr=0.1, momentum=0.9)

    return setup


@pytest.mark.parametrize(
    "size, says",
    [
        (lambda n: n + 1, "but has one output more than there are classes"),
        (lambda n: n - 1, "but has one output fewer than there are classes"),
        (lambda n: n + 2, "but has two outputs more than there are classes"),
    ],
)
def test_05_2_a_head_that_follows_n_classes_but_is_off_is_told_by_how_much(capsys, size, says):
    result = rejected_on_first_try(capsys, ex.check_finetune_setup, _setup_sized(size), says=says)
    assert "it follows the n_classes argument" in result.message
    assert "not a fixed number" not in result.message
    never_states(result, *FINETUNE_SECRETS)


def test_05_2_a_head_of_a_fixed_size_is_still_told_to_follow_the_argument(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_finetune_setup,
        _setup_sized(lambda n: 4),
        says="size it by the n_classes argument, not a fixed number",
    )
    assert "more than there are classes" not in result.message
    never_states(result, *FINETUNE_SECRETS)


def test_05_2_heads_sized_by_the_argument_are_still_accepted(capsys):
    for setup in (
        finetune_with(lr=0.1, momentum=0.9),
        _setup_sized(lambda n: int(n)),
        _setup_sized(lambda n: n + 1 - 1),
    ):
        assert outcome(capsys, ex.check_finetune_setup, setup).passed


# -- 06-2: what f is, when it is not a compiled function ---------------------------------------
def _closed_form(xv):
    xv = np.asarray(xv, dtype=np.float64)
    return [
        np.mean((2 * xv + 3) * 8 * xv),
        np.mean(16 * xv**2 + 12 * xv),
        np.mean(8 * xv),
        np.mean(4 * xv**2 + 6 * xv),
    ]


def test_06_2_a_closed_form_is_told_it_does_not_use_the_graph(capsys):
    g = lesson_graph()[0]
    result = rejected_on_first_try(
        capsys,
        ex.check_compiled_step,
        _closed_form,
        g,
        says="f does not use the graph at all",
    )
    assert "drives the graph run by run" not in result.message
    never_states(result, *STEP_SECRETS)


def test_06_2_a_function_around_the_compiled_function_is_told_so(capsys):
    g, x, _, loss, grads = lesson_graph()
    compiled = g.compile([x], [loss, *grads])
    for wrapper in (
        lambda xv: [float(v) for v in compiled(xv)],
        lambda xv: list(compiled(xv)),
    ):
        result = rejected_on_first_try(
            capsys,
            ex.check_compiled_step,
            wrapper,
            g,
            says="f is a Python function around a compiled function",
        )
        assert "the compiled function itself is what the exercise asks for" in (
            result.message.lower()
        )
        assert "drives the graph run by run" not in result.message
        never_states(result, *STEP_SECRETS)


def test_06_2_a_function_that_runs_the_graph_is_still_told_it_drives_it(capsys):
    g, x, _, loss, grads = lesson_graph()
    for f in (
        lambda xv: g.run([loss, *grads], {x: xv}),
        lambda xv: g.forward({x: xv}, fetches=[loss, *grads]),
    ):
        result = rejected_on_first_try(
            capsys, ex.check_compiled_step, f, g, says="drives the graph run by run"
        )
        assert "does not use the graph" not in result.message
        never_states(result, *STEP_SECRETS)


def test_06_2_the_compiled_functions_plan_is_told_it_is_the_plan(capsys):
    g, x, _, loss, grads = lesson_graph()
    result = rejected_on_first_try(
        capsys,
        ex.check_compiled_step,
        g.compile([x], [loss, *grads]).plan,
        g,
        says="that is the compiled function's plan (its .plan)",
    )
    assert "def name(" not in result.message
    assert "the compiled function is" in result.message
    never_states(result, *STEP_SECRETS)


def test_06_2_an_intermediate_fetched_first_is_told_it_is_not_the_loss(capsys):
    g, x, _, loss, grads = lesson_graph()
    intermediate = loss.inputs[0]  # the (2, 2) node the mean is taken of
    result = rejected_on_first_try(
        capsys,
        ex.check_compiled_step,
        g.compile([x], [intermediate, *grads]),
        g,
        says="the first output fetched is not the loss",
    )
    assert "list the three Variables" not in result.message
    never_states(result, *STEP_SECRETS)


def test_06_2_a_single_number_fetched_first_that_is_not_the_loss_is_told_so(capsys):
    g, x, (w1, _, _), loss, grads = lesson_graph()
    with g:
        other = ns.mean(x * w1)
    result = rejected_on_first_try(
        capsys,
        ex.check_compiled_step,
        g.compile([x], [other, *grads]),
        g,
        says="the first output fetched is not the loss",
    )
    assert "the three gradients are right" in result.message
    never_states(result, *STEP_SECRETS)


def test_06_2_compiled_functions_are_still_accepted(capsys):
    g, x, _, loss, grads = lesson_graph()
    names = [loss.name, *(d.name for d in grads)]
    for f in (
        g.compile([x], [loss, *grads]),
        g.compile(inputs=[x.name], outputs=names, optimize=False),
        g.compile([g.nodes[0]], [g[loss.name]] + list(grads)),
    ):
        assert outcome(capsys, ex.check_compiled_step, f, g).passed


# -- 07-1: an in-place method after ng.where ---------------------------------------------------
def _where_then_mul_(x):
    result = ng.where(x > 0, x * 2, x * -1)
    result.mul_(1)
    return result


def _rule(x):
    return ng.where(x > 0, x * 2, x * -1)


def test_07_1_an_in_place_method_after_where_is_named_without_the_where_advice(capsys):
    for f in (_where_then_mul_, lambda x: _rule(x).add_(0)):
        result = rejected_on_first_try(
            capsys,
            ex.check_where_fix,
            f,
            says="an in-place method of tensors that a traced graph node does not have",
        )
        again = outcome(capsys, ex.check_where_fix, f)  # a second try: every hint
        refused(again, "an in-place method")
        for said in (result, again):
            assert "Choose per element" not in said.message
            assert "condition, value where true" not in said.message
            never_states(said, "ng.where(", "x * 2, x * -1")


def test_07_1_a_method_without_where_still_gets_the_advice_on_a_second_try(capsys):
    def doubled_in_place(x):
        return x.mul_(2)

    rejected_on_first_try(
        capsys, ex.check_where_fix, doubled_in_place, says="uses .mul_, an in-place method"
    )
    again = outcome(capsys, ex.check_where_fix, doubled_in_place)
    refused(again, "Choose per element with a function that takes (condition")


def test_07_1_rules_with_where_are_still_accepted(capsys):
    for f in (_rule, lambda x: x * ng.where(x > 0, 2.0, -1.0), lambda x: _rule(x) * 1):
        assert outcome(capsys, ex.check_where_fix, f).passed


# -- 08-2: OPS still the lab's table after 08-1 passed -------------------------------------------
_SWEEP_SOURCE = inspect.getsource(static_backward)


@pytest.fixture
def solved_08_1():
    """08-1 solved for the test, as the notebook records it once its check passes."""
    was = "08-1" in checking.SOLVED
    checking.SOLVED.add("08-1")
    yield
    if not was:
        checking.SOLVED.discard("08-1")


def test_08_2_a_stale_ops_after_08_1_passed_is_told_to_rerun_its_cell(capsys, solved_08_1):
    sweep = _defined(_SWEEP_SOURCE, OPS=ex.engine_table({}, lab=True))
    result = outcome(capsys, ex.check_static_backward, sweep)
    assert result.passed
    assert "08-1 is solved, but OPS still holds the lab's table" in result.message
    assert "re-run the cell that sets OPS" in result.message
    assert "while 08-1 is not solved" not in result.message


def test_08_2_a_sweep_on_the_learners_table_has_no_note(capsys, solved_08_1):
    result = outcome(capsys, ex.check_static_backward, _defined(_SWEEP_SOURCE, OPS=OPS))
    assert result.passed
    assert "Note:" not in result.message


# -- 08-3: a visited set keyed by the nodes' values ----------------------------------------------
_BY_VALUE = inspect.getsource(run_backward).replace("id(node)", "node.value", 2)


def test_08_3_a_walk_that_merges_equal_values_is_told_so(capsys):
    walk = _defined(_BY_VALUE, OPS=OPS)
    result = rejected_on_first_try(
        capsys,
        ex.check_run_backward,
        walk,
        says="took two different nodes with equal values for one and the same",
    )
    assert "by the node itself (or its id)" in ex.check_run_backward(walk).message
    assert "Which order guarantees that?" not in result.message
    never_states(result, "id(node)", "seen.add(", "0.5403", "2.38177", "4.7635")


def test_08_3_walks_keyed_by_the_node_are_still_accepted(capsys):
    by_node = inspect.getsource(run_backward).replace("id(node)", "node", 2)
    for walk in (run_backward, _defined(by_node, OPS=OPS)):
        assert outcome(capsys, ex.check_run_backward, walk).passed


# -- 08-5: a rounded Jacobian; columns swapped; rows reordered ----------------------------------
def _jacobian(row, order=lambda rows: rows):
    def jacobian(F, x0, y0):
        J = []
        for k in range(len(F(Node(x0), Node(y0)))):
            x, y = Node(x0, requires_grad=True), Node(y0, requires_grad=True)
            F(x, y)[k].backward()
            J.append(row(x.grad, y.grad))
        return order(J)

    return jacobian


JACOBIAN_SECRETS = ("x.grad, y.grad", "J.append(", "2.0, 1.0", "0.5403")


@pytest.mark.parametrize(
    "row, says",
    [
        (lambda gx, gy: [round(gx, 6), round(gy, 6)], "rounded to 6 decimal places"),
        (lambda gx, gy: [float(f"{gx:.4g}"), gy], "rounded to 3 decimal places"),
    ],
)
def test_08_5_a_rounded_jacobian_is_told_it_is_rounded(capsys, row, says):
    result = rejected_on_first_try(
        capsys, ex.check_jacobian, _jacobian(row), says="your Jacobian is rounded"
    )
    assert says in result.message
    assert "as an estimate is" not in result.message
    never_states(result, *JACOBIAN_SECRETS)


def test_08_5_swapped_columns_are_named(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_jacobian,
        _jacobian(lambda gx, gy: [gy, gx]),
        says="the columns are swapped",
    )
    assert "the column index is the input" in result.message.lower()
    assert "is off" not in result.message
    never_states(result, *JACOBIAN_SECRETS)


def test_08_5_rows_in_another_order_are_named(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_jacobian,
        _jacobian(lambda gx, gy: [gx, gy], order=lambda rows: rows[::-1]),
        says="your rows are the right ones, in another order",
    )
    assert "row i holds the gradient of output i" in result.message
    never_states(result, *JACOBIAN_SECRETS)


def test_08_5_right_jacobians_are_still_accepted(capsys):
    for jacobian in (
        jacobian_with("method"),
        _jacobian(lambda gx, gy: (gx, gy), order=np.array),
        _jacobian(lambda gx, gy: [float(np.float64(gx)), gy + 0.0]),
    ):
        assert outcome(capsys, ex.check_jacobian, jacobian).passed


def test_08_3_a_walk_that_misses_nodes_for_another_reason_is_not_told_they_merged(capsys):
    first_input_only = inspect.getsource(run_backward).replace(
        "for inp in node.inputs:\n                if inp.requires_grad:",
        "for inp in node.inputs[:1]:\n                if inp.requires_grad:",
    )
    assert first_input_only != inspect.getsource(run_backward)
    result = outcome(capsys, ex.check_run_backward, _defined(first_input_only, OPS=OPS))
    assert result.status == "fail", result.message
    assert "equal values" not in result.message
