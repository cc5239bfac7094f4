"""Lessons 5-8, thirteenth round: the lesson's own cells leave no answer in the kernel
(lesson 6's chain cell plans only once 06-3 is solved; lesson 8's demo graph no longer
takes the name f of 08-6); 07-2 follows values an earlier cell computed with traced or
scaled, and takes the learner's own arithmetic as a prediction; 08-4 refuses a free that
changes a node's inputs; and each hint names the mistake the learner made (a step taken
inside the setup, an op after the no_grad block, a frozen Variable, a transpose, a tensor
as a count, a 2-D array, a tuple of partials, a sweep to the first input only, a
derivative called with the output or with nodes, a freed graph swallowed, the lab's
engine switched on, swapped coordinates, the notebook's f), never the answer; the right
forms are still accepted."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import numpy as np
import pytest
from checker_results import never_states, outcome, refused, rejected_on_first_try
from lesson_answers_01_05 import finetune_with, predict_ok
from lesson_answers_06_07 import notebook_shell, run_answer_cell, run_in_notebook
from lesson_answers_08 import (
    OPS,
    TABLE,
    Node,
    descend_with,
    jacobian_with,
    run_backward,
    static_backward,
    table_with,
)

import naivegraph as ng
import naivegraph.static as ns
from naivegraph.lessons import checking
from naivegraph.lessons import exercises as ex

COURSE = Path(ex.__file__).parents[1] / "course/src"


def _cell_with(lesson: str, text: str) -> str:
    source = (COURSE / lesson).read_text()
    return next(cell for cell in source.split("# %%") if text in cell)


FINETUNE_SECRETS = ("momentum=0.9", "lr=0.1", "Linear(8, n_classes)")


# -- 05-2: a warm-up step inside the setup ----------------------------------------------------
def _finetune_warming_up(model, n_classes):
    for p in model.parameters():
        p.requires_grad = False
    model.fc = ng.nn.Linear(8, n_classes)
    opt = ng.optim.SGD(model.fc.parameters(), lr=0.1, momentum=0.9)
    opt.zero_grad()
    x, labels = ng.randn(6, 2), ng.tensor([0, 1, 2, 0, 1, 2])
    ng.nn.functional.cross_entropy(model(x), labels % n_classes).backward()
    opt.step()
    return opt


def _finetune_with_a_backward(model, n_classes):
    opt = finetune_with(lr=0.1, momentum=0.9)(model, n_classes)
    model(ng.randn(3, 2)).sum().backward()
    return opt


@pytest.mark.parametrize(
    "setup, says",
    [
        (_finetune_warming_up, "your setup already took an optimizer step"),
        (_finetune_with_a_backward, "your setup already ran a backward"),
    ],
)
def test_05_2_a_step_taken_inside_the_setup_is_named_not_the_settings(capsys, setup, says):
    result = rejected_on_first_try(capsys, ex.check_finetune_setup, setup, says=says)
    assert "look at the learning rate" not in result.message
    never_states(result, *FINETUNE_SECRETS)


def test_05_2_the_setup_without_a_step_is_still_accepted(capsys):
    assert outcome(capsys, ex.check_finetune_setup, finetune_with(lr=0.1, momentum=0.9)).passed


# -- 05-3: an op on the output after the no_grad block --------------------------------------
def _predict_then_add(model, x):
    with ng.no_grad():
        out = model(x)
    return out + 0 * x.sum()


def test_05_3_an_op_after_the_block_is_named_not_the_models_call(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_inference, _predict_then_add,
        says="the model itself ran with recording off, but your function goes on computing",
    )
    assert "the model ran with recording on" not in result.message
    assert "AddBackward0" in result.message
    never_states(result, "ng.no_grad()", "return model(x)")


def test_05_3_an_op_after_the_block_on_values_without_history_is_accepted(capsys):
    def scaled_after(model, x):
        with ng.no_grad():
            out = model(x)
        return out * 1.0

    assert outcome(capsys, ex.check_inference, predict_ok).passed
    assert outcome(capsys, ex.check_inference, scaled_after).passed


# -- 06-3: the chain cell plans only once 06-3 is solved --------------------------------------
@pytest.mark.parametrize("solved", [False, True])
def test_06_3_the_chain_cell_leaves_no_plan_and_no_count_until_06_3_is_solved(solved):
    from naivegraph.lessons import plots, training
    from naivegraph.static.executor import Plan

    space = {"ns": ns, "ex": ex, "Plan": Plan, "plots": plots, "training": training}
    checking.SOLVED.discard("06-3")
    if solved:
        checking.SOLVED.add("06-3")
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            exec(_cell_with("06_static_graphs.py", "with ns.Graph() as chain:"), space)
    finally:
        checking.SOLVED.discard("06-3")
    assert ("alive" in space, "plan" in space) == (solved, solved)
    assert ("-> peak 2" in printed.getvalue()) is solved
    if solved:
        assert space["alive"] == [1, 2, 2, 2, 2, 2, 2]


def test_06_3_the_cells_after_the_chain_cell_run_without_its_plan():
    pytest.importorskip("matplotlib")
    from naivegraph.lessons import plots, training
    from naivegraph.static.executor import Plan

    space = {"ns": ns, "ex": ex, "Plan": Plan, "plots": plots, "training": training}
    checking.SOLVED.discard("06-3")
    with contextlib.redirect_stdout(io.StringIO()):
        exec(_cell_with("06_static_graphs.py", "with ns.Graph() as chain:"), space)
        exec(_cell_with("06_static_graphs.py", "def layers(depth)"), space)
    assert "alive" not in space and "plan" not in space
    assert "training" in space["timelines"]


@pytest.mark.parametrize(
    "count, says",
    [
        (ng.tensor(2), "give the count as a plain number, not a tensor"),
        (2j, "got 2j, a complex number"),
    ],
)
def test_06_3_a_tensor_or_a_complex_count_is_told_what_it_is(capsys, count, says):
    result = rejected_on_first_try(capsys, ex.check_memory_plan, count, says=says)
    assert "no fractional part" not in result.message
    never_states(result, "peak 2", "only its input and its output")


def test_06_3_a_count_typed_as_a_number_is_still_accepted(capsys):
    for count in (2, 1 + 1, np.float32(2), int("2")):
        assert outcome(capsys, ex.check_memory_plan, count).passed


# -- 06-1: a Variable made trainable=False, a transposed step ------------------------------
def _model_graph(body, frozen=False):
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(2, 2))
        w1, w2, w3 = (ns.Variable(v, name=n) for v, n in ((2.0, "w1"), (3.0, "w2"), (4.0, "w3")))
        if frozen:
            w2 = ns.Variable(3.0, name="w2b", trainable=False)
        loss = body(x, w1, w2, w3)
    return g, x, loss


def _model(x, w1, w2, w3):
    return ns.mean((x * w1 + w2) * (x * w1 * w3))


MODEL_SECRETS = ("40", "112", "ns.mean(", "x * w1")


def test_06_1_a_variable_made_with_trainable_false_is_named_as_such(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_static_model, *_model_graph(_model, frozen=True),
        says="your loss reads the Variable w2b, made with trainable=False",
    )
    assert "typed in as a number" not in result.message
    never_states(result, *MODEL_SECRETS)


def test_06_1_a_transposed_factor_is_named_as_a_transpose(capsys):
    def transposed(x, w1, w2, w3):
        return ns.mean((x * w1 + w2) * ns.t(x * w1 * w3))

    result = rejected_on_first_try(
        capsys, ex.check_static_model, *_model_graph(transposed),
        says="your loss transposes a step (t)",
    )
    assert "abs, relu" not in result.message
    never_states(result, *MODEL_SECRETS)


def test_06_1_the_model_is_still_accepted_with_both_factors_transposed(capsys):
    def both(x, w1, w2, w3):
        return ns.mean((x * w1 + w2).T * (x * w1 * w3).T)

    assert outcome(capsys, ex.check_static_model, *_model_graph(_model)).passed
    assert outcome(capsys, ex.check_static_model, *_model_graph(both)).passed


# -- 07-2: values an earlier cell computed; the learner's own arithmetic ----------------------
@pytest.fixture
def shell():
    yield from notebook_shell("run, also = traced, scaled\n")


@pytest.mark.parametrize(
    "earlier, answer, says",
    [
        (
            "r1 = traced(np.array([1.0, 2.0])).tolist()\nr2 = scaled(ng.tensor([1.0, 2.0])).tolist()",
            "traced_result = r1\neager_result = r2",
            "traced (in a cell above that set `r1`)",
        ),
        (
            "consts = [float(n.value) for n in traced.graph.nodes if n.op == 'constant']",
            "traced_result = [1 * consts[0], 2 * consts[0]]\neager_result = [1 * SCALE, 2 * SCALE]",
            "(in a cell above that set `consts`)",
        ),
    ],
)
def test_07_2_values_an_earlier_cell_computed_with_the_lessons_functions_are_refused(
    shell, earlier, answer, says
):
    run_in_notebook(shell, earlier)
    result = refused(run_answer_cell(shell, answer), "your answer was computed, not predicted")
    assert says in result.message
    never_states(result, "[2, 4]", "[10, 20]")


def test_07_2_the_answer_cell_that_runs_traced_keeps_its_message(shell):
    result = run_answer_cell(
        shell, "traced_result = traced(np.array([1.0, 2.0])).tolist()\neager_result = [10, 20]"
    )
    refused(result, "your answer cell calls traced")


def test_07_2_a_notebook_name_for_traced_called_in_the_answer_cell_is_refused(shell):
    result = run_answer_cell(
        shell, "traced_result = run(np.array([1.0, 2.0])).tolist()\neager_result = [10, 20]"
    )
    refused(result, "your answer cell calls `run`")


@pytest.mark.parametrize(
    "earlier, answer",
    [
        ("", "traced_result = (np.array([1.0, 2.0]) * 2).tolist()\neager_result = [10, 20]"),
        ("", "traced_result = list(range(2, 5, 2))\neager_result = list(range(10, 25, 10))"),
        ("guess = [2.0, 4.0]", "traced_result = guess\neager_result = [1 * SCALE, 2 * SCALE]"),
        ("", "traced_result = np.array([2.0, 4.0])\neager_result = [10.0, 20.0]"),
    ],
)
def test_07_2_a_prediction_of_the_learners_own_arithmetic_is_accepted(shell, earlier, answer):
    if earlier:
        run_in_notebook(shell, earlier)
    result = run_answer_cell(shell, answer)
    assert result.status == "pass", result.message


def test_07_2_a_two_dimensional_array_is_told_its_shape_not_called_a_tensor(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_trace_pitfall, np.array([[2.0, 4.0]]), [10.0, 20.0],
        says="you gave an array of shape (1, 2)",
    )
    assert "tensor" not in result.message
    assert "other than one dimension" not in result.message
    never_states(result, "[2, 4]", "[10, 20]")


# -- 08-4: a free that changes a node's inputs ------------------------------------------------
def _free_dropping_constants(order):
    for n in order:
        if not n.is_leaf:
            n.saved = None
            n.inputs = tuple(i for i in n.inputs if i.requires_grad)


def _free_reversing_inputs(order):
    for n in order:
        if not n.is_leaf:
            n.saved = None
            n.inputs = tuple(reversed(n.inputs))


@pytest.mark.parametrize(
    "free, says",
    [
        (_free_dropping_constants, "freeing dropped the sub node's constant input"),
        (_free_reversing_inputs, "freeing changed the inputs of the mul node"),
    ],
)
def test_08_4_a_free_that_changes_a_nodes_inputs_is_refused(capsys, free, says):
    result = rejected_on_first_try(capsys, ex.check_free_graph, free, says=says)
    never_states(result, "saved = None", "the structure and the leaves remain", "is_leaf:")


def test_08_4_a_free_that_keeps_the_inputs_is_still_accepted(capsys):
    def as_a_list(order):
        for n in order:
            if n.grad_fn is not None:
                n.saved = None
                n.inputs = list(n.inputs)

    def intended(order):
        for n in order:
            if not n.is_leaf:
                n.saved = None

    for free in (as_a_list, intended):
        result = outcome(capsys, ex.check_free_graph, free)
        assert result.passed and "the structure and the leaves remain" in result.message


# -- lesson 8: the demo graph leaves the name f to 08-6 ---------------------------------------
def test_08_only_the_cell_of_08_6_binds_the_name_f():
    import ast

    source = (COURSE / "08_build_your_own.py").read_text()
    binding = []
    for cell in source.split("# %%"):
        tree = ast.parse(cell.partition("\n")[2])  # the line after "# %%" is its tag
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else []
            names = {t.id for t in targets if isinstance(t, ast.Name)}
            if "f" in names or (isinstance(node, ast.FunctionDef) and node.name == "f"):
                binding.append(cell)
    assert len(binding) == 1 and "def gradient_descent" in binding[0]


# -- 08-1: a derivative that returns every partial at once -----------------------------------
def test_08_1_a_derivative_returning_both_partials_is_told_to_return_one(capsys):
    both = table_with(div=(lambda a, b: a / b, lambda a, b, i: (1 / b, -a / b**2)))
    result = rejected_on_first_try(
        capsys, ex.check_derivative_table, both, says="the derivative of 'div' returned 2 numbers"
    )
    assert "check the sign" not in result.message
    never_states(result, "-a / b ** 2", "1 / b if i == 0")


def test_08_1_a_derivative_choosing_its_partial_by_i_is_still_accepted(capsys):
    chosen = table_with(div=(lambda a, b: a / b, lambda a, b, i: [1 / b, -a / (b * b)][i]))
    assert outcome(capsys, ex.check_derivative_table, chosen).passed
    assert outcome(capsys, ex.check_derivative_table, TABLE).passed


# -- 08-2: a sweep that hands on to the first input only -------------------------------------
def _static_backward_first_input_only(nodes, loss):
    for n in nodes:
        n.grad = 0.0
    loss.grad = 1.0
    for n in reversed(nodes):
        if n.op is None:
            continue
        args = [i.value for i in n.inputs]
        for k, inp in enumerate(n.inputs[:1]):
            if inp.needs_grad:
                inp.grad += n.grad * OPS[n.op][1](*args, k)


def test_08_2_a_sweep_to_the_first_input_only_is_told_it_skips_the_others(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_static_backward, _static_backward_first_input_only,
        says="your sweep hands a share to the first input of each node only",
    )
    assert "not keep only the last" not in result.message
    never_states(result, "n.inputs", "enumerate(", "inp.grad +=")


def test_08_2_the_right_sweep_is_still_accepted(capsys):
    assert outcome(capsys, ex.check_static_backward, static_backward).passed


# -- 08-3: the derivative called with the output or with nodes; run_backward that frees --------
def _sweep(derivative_args, free=False):
    """run_backward, its derivative called with what ``derivative_args(node)`` gives."""

    def run_backward(root):
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
                raise RuntimeError("the graph was freed by an earlier backward")
            for k, inp in enumerate(node.inputs):
                if inp.requires_grad:
                    d = OPS[node.grad_fn][1](*derivative_args(node), k)
                    grads[id(inp)] = grads.get(id(inp), 0.0) + g * d
        if free:
            for node in order:
                if not node.is_leaf:
                    node.saved = None
        return order

    return run_backward


@pytest.mark.parametrize(
    "wrong, says",
    [
        (
            _sweep(lambda n: (n.value,) if len(n.saved) == 1 else n.saved),
            "calls sin's derivative with the sin node's own output",
        ),
        (_sweep(lambda n: n.inputs), "hands it the input nodes themselves"),
        (_sweep(lambda n: n.saved, free=True), "your run_backward frees the graph itself"),
    ],
)
def test_08_3_the_values_handed_to_the_derivative_and_freeing_are_named(capsys, wrong, says):
    result = rejected_on_first_try(capsys, ex.check_run_backward, wrong, says=says)
    for elsewhere in ("Build the order by depth-first search", "another op than the node's own",
                      "read the error"):
        assert elsewhere not in result.message
    never_states(result, "*node.saved", "node.saved = None", "OPS[node.grad_fn][1]")


def test_08_3_the_right_run_backward_is_still_accepted(capsys):
    assert outcome(capsys, ex.check_run_backward, run_backward).passed
    assert outcome(capsys, ex.check_run_backward, _sweep(lambda n: n.saved)).passed


# -- 08-5: a freed graph's error swallowed; the engine switched inside the function ----------
def _jacobian_swallowing(F, x0, y0):
    x, y = Node(x0, requires_grad=True), Node(y0, requires_grad=True)
    outs = F(x, y)
    rows = []
    for out in outs:
        x.grad = y.grad = 0.0
        try:
            out.backward()
        except RuntimeError:
            pass
        rows.append([x.grad, y.grad])
    return rows


use_reference = False  # the notebook's switch, as lesson 8 names it


def _jacobian_switching(F, x0, y0):
    global use_reference
    use_reference = True
    return jacobian_with("method")(F, x0, y0)


def test_08_5_a_swallowed_runtime_error_is_named(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_jacobian, _jacobian_swallowing,
        says="your code caught it and went on",
    )
    assert "the graph was already used by a backward that freed it" in result.message
    assert "Work it out by hand" not in result.message
    never_states(result, "retain_graph=True", "J.append", "Node(x0, requires_grad=True)")


def test_08_5_setting_use_reference_inside_jacobian_is_named_as_switching_the_engine(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_jacobian, _jacobian_switching,
        says="your function sets use_reference, the notebook's switch",
    )
    assert use_reference is False
    never_states(result, "J.append", "Node(x0, requires_grad=True)")


def test_08_5_the_right_jacobians_are_still_accepted(capsys):
    for backward in ("method", "run_backward"):
        assert outcome(capsys, ex.check_jacobian, jacobian_with(backward)).passed


# -- 08-6: the point as (y, x); the notebook's f -----------------------------------------------
def f(x, y):  # the notebook's f of 08-6
    return (x - 1) ** 2 + 2 * (y + 2) ** 2 + x * y / 2


def _descent_swapped(f, x0, y0, lr=0.1, steps=200):
    x, y = descend_with()(f, x0, y0, lr, steps)
    return y, x


def _descent_on_the_notebooks_f(ff, x0, y0, lr=0.1, steps=200):
    x, y = Node(x0, requires_grad=True), Node(y0, requires_grad=True)
    for _ in range(steps):
        x.grad = y.grad = 0.0
        f(x, y).backward()
        x.value -= lr * x.grad
        y.value -= lr * y.grad
    return x.value, y.value


@pytest.mark.parametrize(
    "descent, says",
    [
        (_descent_swapped, "your pair gives y first"),
        (
            _descent_on_the_notebooks_f,
            "your function calls the notebook's f, not the function it is given as its "
            "first argument (`ff` in your function)",
        ),
    ],
)
def test_08_6_the_point_swapped_or_the_notebooks_f_is_named(capsys, descent, says):
    result = rejected_on_first_try(capsys, ex.check_gradient_descent, descent, says=says)
    assert "use the f, start, lr and steps you are given" not in result.message
    def checkers_f(x, y):  # the f the checker descends, from (0.5, 1.0) with lr 0.05
        return (x - 2) ** 2 + 3 * (y + 1) ** 2 + x * y / 4

    end = descend_with()(checkers_f, 0.5, 1.0, 0.05, 60)
    never_states(result, "-= lr", "x.grad = y.grad = 0", *(f"{v:.4g}" for v in end))


def test_08_6_the_right_descents_are_still_accepted(capsys):
    for backward in ("method", "run_backward"):
        assert outcome(capsys, ex.check_gradient_descent, descend_with(backward)).passed
