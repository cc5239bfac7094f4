"""The checkers of lessons 4 to 7 on an eleventh round of answers: a notebook cell that
reads the versions or runs the planner above its last line; versions typed into a
tensor; one element of a leaf set; a fine-tuning setup that leaves eval mode or swaps
the layer's sizes; a static loss that divides by a typed count; a loss reading a
placeholder of its own; nodes built outside the graph's block; a gradient fetched
twice; answers typed as a numpy array.  Wrong answers are refused with a hint naming
the mistake and no answer; the right forms are accepted."""

from __future__ import annotations

import numpy as np
import pytest
from checker_results import never_states, refused, rejected_on_first_try
from lesson_answers_01_05 import finetune_with, reset_no_grad
from lesson_answers_06_07 import model, notebook_shell, static_model

import naivegraph as ng
import naivegraph.static as ns
from naivegraph.lessons import checking
from naivegraph.lessons import exercises as ex


@pytest.fixture
def shell():
    yield from notebook_shell()


def run_in_notebook(shell, cell: str):
    """Run ``cell`` as Jupyter does (its last line, an expression, compiled apart from
    the lines above it) and give back the value of that last line."""
    checking.TRIES.clear()
    return shell.run_cell(cell, store_history=True).result


# -- 04-1 ---------------------------------------------------------------------------------

READ_VERSIONS = (
    "a = ng.tensor([1.0, 3.0], requires_grad=True)\ns = []\n"
    "b = a + 2; s.append(b._version)\n"
    "with ng.no_grad():\n    b[0] = 1000\ns.append(b._version)\n"
    "b.mul_(2); s.append(b._version)\nc = b * 3; s.append(b._version)\n"
    "b += 1; s.append(b._version)\n"
    "ex.check_versions(s)"
)


def test_04_1_a_notebook_cell_that_reads_the_versions_above_the_check_is_refused(shell):
    result = refused(run_in_notebook(shell, READ_VERSIONS), "reads the versions off the tensors")
    assert "._version" in result.message
    never_states(result, "[0, 1, 2, 2, 3]")


def test_04_1_a_notebook_cell_that_types_the_versions_is_accepted(shell):
    assert run_in_notebook(shell, "s = [0, 1, 2, 2, 3]\nex.check_versions(s)").passed


def test_04_1_versions_typed_into_a_tensor_without_history_are_accepted():
    checking.TRIES.clear()
    assert ex.check_versions(ng.tensor([0, 1, 2, 2, 3])).passed
    assert ex.check_versions(np.array([0, 1, 2, 2, 3])).passed


def test_04_1_wrong_versions_typed_into_a_tensor_are_judged_as_numbers(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_versions, ng.tensor([0, 1, 2, 3, 4]), says="makes a NEW tensor c"
    )
    never_states(result, "[0, 1, 2, 2, 3]")


# -- 04-3 ---------------------------------------------------------------------------------


def set_first_element(a):
    with ng.no_grad():
        a[0] = 10.0
    return a


def test_04_3_setting_one_element_is_told_only_one_element_was_set(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_reset_leaf, set_first_element, says="only one element of `a` was set"
    )
    assert "slice" not in result.message
    never_states(result, "fill_", "a[:]", "[...]")
    checking.TRIES.clear()
    assert ex.check_reset_leaf(reset_no_grad).passed


# -- 05-2 ---------------------------------------------------------------------------------


def setup_left_in_eval(model, n_classes):
    opt = finetune_with(lr=0.1, momentum=0.9)(model, n_classes)
    model.eval()
    return opt


def setup_with_swapped_sizes(model, n_classes):
    for p in model.parameters():
        p.requires_grad = False
    model.fc = ng.nn.Linear(n_classes, 8)
    return ng.optim.SGD(model.fc.parameters(), lr=0.1, momentum=0.9)


def test_05_2_a_setup_that_leaves_eval_mode_is_refused(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_finetune_setup, setup_left_in_eval, says="left the model in eval mode"
    )
    never_states(result, "model.train()", "Linear(8")
    checking.TRIES.clear()
    assert ex.check_finetune_setup(finetune_with(lr=0.1, momentum=0.9)).passed


def test_05_2_a_layer_with_its_sizes_swapped_is_told_the_order_of_linears_arguments(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_finetune_setup,
        setup_with_swapped_sizes,
        says="Linear(in_features, out_features)",
    )
    assert "the two sizes are swapped" in result.message
    assert "gufunc" not in result.message
    never_states(result, "Linear(8, n_classes)")


# -- 06-1 ---------------------------------------------------------------------------------


def batch_model(body):
    """Lesson 6's graph with a placeholder of any number of rows."""
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(None, 2))
        w1, w2, w3 = (ns.Variable(v, name=n) for v, n in zip((2.0, 3.0, 4.0), ("w1", "w2", "w3")))
        loss = body(x, w1, w2, w3)
    return g, x, loss


def sum_over_four(x, w1, w2, w3):
    return ns.sum((x * w1 + w2) * (x * w1 * w3)) / 4


def test_06_1_a_sum_divided_by_a_typed_count_is_refused_for_other_batch_sizes(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_static_model, *batch_model(sum_over_four), says="wrong for a batch of 3"
    )
    assert "A count typed into the loss fits one batch size only" in result.message
    never_states(result, "ns.mean(", "40", "112")
    checking.TRIES.clear()
    assert ex.check_static_model(*batch_model(model)).passed
    checking.TRIES.clear()
    assert ex.check_static_model(*static_model(sum_over_four)).passed  # two rows: the same


def test_06_1_a_loss_reading_a_placeholder_of_its_own_is_told_it_does_not_read_x(capsys):
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(2, 2))
        xx = ns.placeholder("x2", shape=(2, 2))
        w1, w2, w3 = (ns.Variable(v, name=n) for v, n in zip((2.0, 3.0, 4.0), ("w1", "w2", "w3")))
        loss = model(xx, w1, w2, w3)
    result = rejected_on_first_try(
        capsys, ex.check_static_model, g, x, loss, says="does not read the placeholder 'x'"
    )
    assert "'x2'" in result.message
    assert "needs a value" not in result.message


def test_06_1_nodes_built_outside_the_graphs_block_are_told_to_build_inside_it(capsys):
    g2 = ns.Graph()
    outside = ns.Graph()
    with outside:
        x = ns.placeholder("x", shape=(2, 2))
        w1, w2, w3 = (ns.Variable(v, name=n) for v, n in zip((2.0, 3.0, 4.0), ("w1", "w2", "w3")))
        loss = model(x, w1, w2, w3)
    result = rejected_on_first_try(
        capsys, ex.check_static_model, g2, x, loss, says="built outside the graph's `with` block"
    )
    assert "ns.reset_default_graph()" in result.message
    assert f"{g2.name}['x']" not in result.message


# -- 06-2 ---------------------------------------------------------------------------------


def test_06_2_a_gradient_fetched_twice_is_told_one_is_missing(capsys):
    g = ns.Graph()
    with g:
        x = ns.placeholder("input", shape=(2, 2))
        w1, w2, w3 = (ns.Variable(v, name=n) for v, n in zip((2.0, 3.0, 4.0), ("w1", "w2", "w3")))
        loss = model(x, w1, w2, w3)
        dw1, dw2, dw3 = ns.gradients(loss, [w1, w2, w3])
    f = g.compile([x], [loss, dw1, dw1, dw3])
    result = rejected_on_first_try(
        capsys, ex.check_compiled_step, f, g, says="one gradient is fetched twice"
    )
    assert "w2 is not among the outputs" in result.message
    assert "another quantity" not in result.message
    never_states(result, "28", "8.0", "dw2]")


# -- 06-3 ---------------------------------------------------------------------------------

RUN_THE_PLAN = (
    "from naivegraph.static.executor import Plan\nfrom naivegraph.lessons import training\n"
    "with ns.Graph() as chain:\n    x = ns.placeholder('x', shape=(1000,))\n"
    "    y = ns.exp(ns.sin(ns.cos(ns.tanh(x * 2) + 1)) - 3)\n"
    "plan = Plan(chain, [y], [x])\n"
    "alive = training.live_values(plan, count_fetched=True)\n"
    "ex.check_memory_plan(max(alive))"
)


def test_06_3_a_notebook_cell_that_runs_the_planner_is_refused(shell):
    result = refused(run_in_notebook(shell, RUN_THE_PLAN), "runs the planner instead of predicting")
    assert "Plan and live_values" in result.message
    assert run_in_notebook(shell, "peak = 2\nex.check_memory_plan(peak)").passed


# -- 07-2 ---------------------------------------------------------------------------------


def test_07_2_predictions_typed_as_numpy_arrays_are_accepted(shell):
    result = run_in_notebook(
        shell,
        "SCALE = 10.0\ntraced_result = np.array([2.0, 4.0])\n"
        "eager_result = np.array([10.0, 20.0])\n"
        "ex.check_trace_pitfall(traced_result, eager_result)",
    )
    assert result.passed, result.message
