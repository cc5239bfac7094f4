"""Lessons 5-8, twelfth round: a setup that reseeds the global generator, changes the
body's weights or freezes the notebook's model; a prediction that softmaxes the output or
reads the notebook's X; a graph that is not new, a stale x, a weight changed before
compiling; an in-place rule; a typed-in tensor; a static sweep that leaves the computed
nodes' grads wrong, estimates by finite differences, runs one pass per leaf or moves the
values; a walk without a visited set and a sweep that skips unary ops are each refused with
a hint naming that mistake, never the answer.  A pass on the lab's stand-in engine says so,
and the layers cell of lesson 6 keeps the inference peak until 06-3 is solved."""

from __future__ import annotations

import contextlib
import inspect
import io
import re
from pathlib import Path

import numpy as np
import pytest
from checker_results import never_states, outcome, rejected_on_first_try
from lesson_answers_01_05 import finetune_with, predict_ok
from lesson_answers_06_07 import RULE_SECRETS, STEP_SECRETS, lesson_graph, static_model
from lesson_answers_08 import OPS, Node, descend_with, jacobian_with, run_backward, static_backward

import naivegraph as ng
import naivegraph.static as ns
from naivegraph.lessons import checking
from naivegraph.lessons import exercises as ex

FINETUNE_SECRETS = ("momentum=0.9", "lr=0.1", "Linear(8, n_classes)")


def _defined(source: str, **names):
    """The function a notebook cell defines from ``source``, with ``names`` as the
    notebook's globals (the cell's own model or X)."""
    space = {"ng": ng, "np": np, **names}
    exec(compile(source, "<cell>", "exec"), space)
    return space[re.search(r"def (\w+)", source).group(1)]


# -- 05-2: a reseeded generator, a body changed, the notebook's model frozen -------------------
def _finetune_reseeding(model, n_classes):
    for p in model.parameters():
        p.requires_grad = False
    ng.manual_seed(0)
    model.fc = ng.nn.Linear(8, n_classes)
    return ng.optim.SGD(model.fc.parameters(), lr=0.1, momentum=0.9)


def test_05_2_a_setup_that_reseeds_the_global_generator_is_refused(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_finetune_setup, _finetune_reseeding, says="reseeds the global random"
    )
    assert "ng.manual_seed" in result.message
    never_states(result, *FINETUNE_SECRETS)


def _finetune_halving_the_body(model, n_classes):
    for p in model.parameters():
        p.requires_grad = False
        with ng.no_grad():
            p.mul_(0.5)
    model.fc = ng.nn.Linear(8, n_classes)
    return ng.optim.SGD(model.fc.parameters(), lr=0.1, momentum=0.9)


def test_05_2_a_setup_that_changes_the_body_is_told_it_was_the_setup(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_finetune_setup,
        _finetune_halving_the_body,
        says="your function changed the values of the body's parameters",
    )
    assert "a training step" not in result.message
    never_states(result, *FINETUNE_SECRETS)


_FROZE_THE_NOTEBOOKS = """
def finetune_setup(m, n_classes):
    for p in model.parameters():
        p.requires_grad = False
    m.fc = ng.nn.Linear(8, n_classes)
    return ng.optim.SGD(m.fc.parameters(), lr=0.1, momentum=0.9)
"""


def test_05_2_freezing_the_notebooks_model_is_named_and_put_back(capsys):
    notebook_model = ng.nn.Sequential(ng.nn.Linear(2, 8), ng.nn.Tanh())
    setup = _defined(_FROZE_THE_NOTEBOOKS, model=notebook_model)
    result = rejected_on_first_try(
        capsys,
        ex.check_finetune_setup,
        setup,
        says="works on the notebook's `model`, not on the model it is given",
    )
    assert "(`m` in your function)" in result.message
    assert "the body is not frozen" not in result.message
    assert all(p.requires_grad for p in notebook_model.parameters())
    never_states(result, *FINETUNE_SECRETS)


def test_05_2_the_right_setups_are_still_accepted(capsys):
    assert outcome(capsys, ex.check_finetune_setup, finetune_with(lr=0.1, momentum=0.9)).passed
    right = _defined(_FROZE_THE_NOTEBOOKS.replace("model.parameters", "m.parameters"))
    assert outcome(capsys, ex.check_finetune_setup, right).passed


# -- 05-3: a softmax of the output, the notebook's X or model -------------------------------
def _predict_softmax(model, x):
    with ng.no_grad():
        return ng.nn.functional.softmax(model(x), dim=1)


def test_05_3_a_softmax_of_the_output_is_named(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_inference, _predict_softmax, says="returns a softmax of the model's"
    )
    assert "kept from an earlier call" not in result.message
    never_states(result, "ng.no_grad()", "return model(x)")


_GLOBAL_X = """
def predict(model, x):
    with ng.no_grad():
        return model(X)
"""

_GLOBAL_MODEL = """
def predict(m, x):
    with ng.no_grad():
        return model(x)
"""


def test_05_3_the_notebooks_x_read_instead_of_the_argument_is_named(capsys):
    predict = _defined(_GLOBAL_X, X=ng.randn(60, 2))
    result = rejected_on_first_try(
        capsys, ex.check_inference, predict, says="reads the notebook's `X`, not the x it is given"
    )
    assert "(`x` in your function)" in result.message
    assert "an array of shape" not in result.message
    never_states(result, "ng.no_grad()", "return model(x)")


def test_05_3_the_notebooks_model_read_instead_of_the_argument_is_named(capsys):
    notebook_model = ng.nn.Sequential(ng.nn.Linear(2, 2))
    predict = _defined(_GLOBAL_MODEL, model=notebook_model)
    result = rejected_on_first_try(
        capsys,
        ex.check_inference,
        predict,
        says="reads the notebook's `model`, not the model it is given",
    )
    assert "(`m` in your function)" in result.message
    never_states(result, "ng.no_grad()", "return model(x)")


def test_05_3_the_right_prediction_is_still_accepted(capsys):
    assert outcome(capsys, ex.check_inference, predict_ok).passed


# -- 06-1: g2 = g, a stale x, one node outside ------------------------------------------------
def _toy_loss(x, w1, w2, w3):
    return ns.mean((x * w1 + w2) * (x * w1 * w3))


def test_06_1_a_graph_that_is_not_new_is_told_so(capsys):
    g, *_ = lesson_graph()  # the lesson's graph, its placeholder named "input"
    g2 = g
    with g2:
        x = ns.placeholder("x", shape=(2, 2))
        loss = _toy_loss(x, *(ns.Variable(v) for v in (2.0, 3.0, 4.0)))
    result = rejected_on_first_try(
        capsys, ex.check_static_model, g2, x, loss, says="it is not a new graph"
    )
    assert "'input'" in result.message
    assert "running your graph failed" not in result.message
    never_states(result, "ns.mean(", "x * w1")


def test_06_1_a_stale_x_handed_over_is_named(capsys):
    _, stale_x, _ = static_model(_toy_loss)
    g2 = ns.Graph()
    with g2:
        x_in = ns.placeholder("x_in", shape=(2, 2))
        w1, w2, w3 = (ns.Variable(v, name=n) for v, n in ((2.0, "w1"), (3.0, "w2"), (4.0, "w3")))
        loss = _toy_loss(x_in, w1, w2, w3)
    result = rejected_on_first_try(
        capsys,
        ex.check_static_model,
        g2,
        stale_x,
        loss,
        says="the x you handed to the checker is the placeholder 'x'",
    )
    assert "'x_in'" in result.message
    assert "Build them inside" not in result.message
    never_states(result, "ns.mean(", "x * w1")


def test_06_1_one_node_outside_the_graph_belongs_to_it_in_the_singular(capsys):
    _, _, loss = static_model(_toy_loss)
    g2 = ns.Graph()
    with g2:
        x = ns.placeholder("x", shape=(2, 2))
    result = rejected_on_first_try(
        capsys, ex.check_static_model, g2, x, loss, says=f"{loss.name} belongs to"
    )
    assert "it was built outside" in result.message


def test_06_1_an_extra_placeholder_of_a_new_graph_is_not_called_an_old_graph(capsys):
    g2 = ns.Graph()
    with g2:
        x = ns.placeholder("x", shape=(2, 2))
        ns.placeholder("unused", shape=(2, 2))
        loss = _toy_loss(x, *(ns.Variable(v) for v in (2.0, 3.0, 4.0)))
    result = rejected_on_first_try(
        capsys, ex.check_static_model, g2, x, loss, says="Leave 'unused' out of the graph"
    )
    assert "not a new graph" not in result.message


def test_06_1_the_right_model_is_still_accepted(capsys):
    assert outcome(capsys, ex.check_static_model, *static_model(_toy_loss)).passed


# -- 06-2: a weight of g changed before compiling -----------------------------------------------
def test_06_2_a_weight_changed_before_compiling_is_named(capsys):
    g, x, (w1, _, _), loss, grads = lesson_graph()
    w1.value = np.array(5.0, dtype=np.float32)
    f = g.compile([x], [loss, *grads])
    result = rejected_on_first_try(
        capsys,
        ex.check_compiled_step,
        f,
        g,
        says="the Variable w1 of g no longer holds the value",
    )
    assert "fetch the loss node" not in result.message
    never_states(result, *STEP_SECRETS)


def test_06_2_the_right_step_is_still_accepted(capsys):
    g, x, _, loss, grads = lesson_graph()
    assert outcome(capsys, ex.check_compiled_step, g.compile([x], [loss, *grads]), g).passed


# -- the layers cell of lesson 6 waits for 06-3 ---------------------------------------------
def _layers_cell() -> str:
    source = (Path(ex.__file__).parents[1] / "course/src/06_static_graphs.py").read_text()
    return next(cell for cell in source.split("# %%") if "def layers(depth)" in cell)


@pytest.mark.parametrize("solved", [False, True])
def test_06_the_layers_cell_shows_the_inference_peak_only_once_06_3_is_solved(solved):
    pytest.importorskip("matplotlib")
    from naivegraph.lessons import plots, training
    from naivegraph.static.executor import Plan

    space = {"ns": ns, "ex": ex, "Plan": Plan, "plots": plots, "training": training}
    checking.SOLVED.discard("06-3")
    if solved:
        checking.SOLVED.add("06-3")
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            exec(_layers_cell(), space)
    finally:
        checking.SOLVED.discard("06-3")
    shown = printed.getvalue()
    assert ("inference 2" in shown) is solved, shown
    assert ("solve 06-3 first" in shown) is not solved, shown


# -- 07-1: a rule written into x in place --------------------------------------------------------
def _rule_in_place(x):
    if hasattr(x, "mul_"):
        x.mul_(ng.where(x > 0, 2.0, -1.0))
    return x


def test_07_1_a_rule_written_into_x_in_place_is_named(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_where_fix,
        _rule_in_place,
        says="writes its result into the x it is given",
    )
    assert "multiplied by -1, not kept" not in result.message
    never_states(result, *RULE_SECRETS)


def test_07_1_the_right_rule_is_still_accepted(capsys):
    assert outcome(capsys, ex.check_where_fix, lambda x: ng.where(x > 0, x * 2, x * -1)).passed


# -- 07-2: what the typed-in prediction may be -------------------------------------------------
def test_07_2_a_tensor_is_refused_with_what_is_taken(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_trace_pitfall,
        ng.tensor([2.0, 4.0]),
        ng.tensor([10.0, 20.0]),
        says="a plain list, or a one-dimensional numpy array of them), not a tensor",
    )
    assert "not an array" not in result.message
    never_states(result, "[2, 4]", "[10, 20]", "2.0, 4.0")


@pytest.mark.parametrize(
    "traced, eager",
    [([2.0, 4.0], [10.0, 20.0]), (np.array([2.0, 4.0]), np.array([10.0, 20.0]))],
    ids=["lists", "arrays"],
)
def test_07_2_lists_and_arrays_are_still_accepted(capsys, traced, eager):
    assert outcome(capsys, ex.check_trace_pitfall, traced, eager).passed


# -- 08-2: every node's grad, a reverse sweep, no value moved ----------------------------------
def _sweep_into_a_dict(computed_grad):
    def static_backward(nodes, loss):
        grads = {id(n): 0.0 for n in nodes}
        grads[id(loss)] = 1.0
        for n in reversed(nodes):
            if n.op is None or not n.needs_grad:
                continue
            vals = [i.value for i in n.inputs]
            for k, inp in enumerate(n.inputs):
                if inp.needs_grad:
                    grads[id(inp)] += grads[id(n)] * OPS[n.op][1](*vals, k)
        for n in nodes:
            n.grad = grads[id(n)] if n.op is None else computed_grad

    return static_backward


@pytest.mark.parametrize("computed_grad", [99.0, 0.0])
def test_08_2_computed_nodes_grads_left_wrong_are_refused(capsys, computed_grad):
    result = rejected_on_first_try(
        capsys,
        ex.check_static_backward,
        _sweep_into_a_dict(computed_grad),
        says="the leaves' gradients are right, but after your sweep the node",
    )
    assert "every node's grad to hold d loss / d node" in result.message
    never_states(result, "OPS[", "reversed(", "n.grad *")


def _forward(nodes, values):
    for n in nodes:
        if n.op is not None:
            values[id(n)] = OPS[n.op][0](*(values[id(i)] for i in n.inputs))
    return values


def _finite_differences(nodes, loss, h=1e-6):
    for n in nodes:
        n.grad = 0.0
    loss.grad = 1.0
    for leaf in [n for n in nodes if n.op is None and n.needs_grad]:
        start = leaf.value
        ends = []
        for step in (h, -h):
            leaf.value = start + step
            ends.append(_forward(nodes, {id(n): n.value for n in nodes})[id(loss)])
        leaf.value = start
        leaf.grad = (ends[0] - ends[1]) / (2 * h)


def _tangents_per_leaf(nodes, loss):
    for n in nodes:
        n.grad = 0.0
    loss.grad = 1.0
    for leaf in [n for n in nodes if n.op is None and n.needs_grad]:
        tangent = {id(n): 0.0 for n in nodes}
        tangent[id(leaf)] = 1.0
        for n in nodes:
            if n.op is None:
                continue
            vals = [i.value for i in n.inputs]
            tangent[id(n)] = sum(
                tangent[id(i)] * OPS[n.op][1](*vals, k) for k, i in enumerate(n.inputs)
            )
        leaf.grad = tangent[id(loss)]


def test_08_2_a_finite_difference_is_named_not_praised(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_static_backward,
        _finite_differences,
        says="(a finite difference)",
    )
    assert "your reverse sweep" not in result.message
    never_states(result, "reversed(", "n.grad *")


def test_08_2_forward_mode_one_pass_per_leaf_is_named(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_static_backward,
        _tangents_per_leaf,
        says="it goes through the graph once per leaf, as forward mode does",
    )
    never_states(result, "reversed(", "n.grad *")


def _sweep_then_step(nodes, loss):
    static_backward(nodes, loss)
    for n in nodes:
        if n.op is None and n.needs_grad:
            n.value -= 0.1 * n.grad


def test_08_2_an_sgd_step_inside_backward_is_told_the_values_moved(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_static_backward,
        _sweep_then_step,
        says="your backward changed the values of the leaves",
    )
    assert "start every grad from zero" not in result.message
    never_states(result, "OPS[", "reversed(")


def _sweep_up_to_the_loss(nodes, loss):
    for n in nodes:
        n.grad = 0.0 if n.needs_grad else None
    loss.grad = 1.0
    for n in nodes[: nodes.index(loss) + 1][::-1]:
        if n.op is None:
            continue
        args = [i.value for i in n.inputs]
        for k, inp in enumerate(n.inputs):
            if inp.needs_grad:
                inp.grad += n.grad * OPS[n.op][1](*args, k)


@pytest.mark.parametrize("sweep", [static_backward, _sweep_up_to_the_loss])
def test_08_2_right_sweeps_are_still_accepted(capsys, sweep):
    result = outcome(capsys, ex.check_static_backward, sweep)
    assert result.passed
    assert "Note:" not in result.message


# the right sweep's own source, defined again in a cell whose OPS is the lab's table
_SWEEP_SOURCE = inspect.getsource(static_backward)


def test_08_2_a_sweep_on_the_labs_table_passes_and_says_so(capsys):
    sweep = _defined(_SWEEP_SOURCE, OPS=ex.engine_table({}, lab=True))
    was_solved = "08-1" in checking.SOLVED  # the note for 08-1 not solved yet
    checking.SOLVED.discard("08-1")
    try:
        result = outcome(capsys, ex.check_static_backward, sweep)
    finally:
        if was_solved:
            checking.SOLVED.add("08-1")
    assert result.passed
    assert "the derivatives came from the lab's table" in result.message
    assert "run this check again once those exercises pass" in result.message


# -- 08-3: a walk without a visited set, unary ops skipped -------------------------------------
def _run_backward_with(seen: bool = True, unary: bool = True):
    def walk(root):
        order, visited = [], set()

        def visit(node):
            if seen and id(node) in visited:
                return
            visited.add(id(node))
            for inp in node.inputs:
                if inp.requires_grad:
                    visit(inp)
            order.append(node)

        visit(root)
        grads = {id(root): 1.0}
        for node in reversed(order):
            g = grads.get(id(node), 0.0)
            if node.is_leaf:
                node.grad += g
                continue
            if node.saved is None:
                raise RuntimeError("the graph was freed by an earlier backward")
            if not unary and len(node.saved) != 2:
                continue
            for k, inp in enumerate(node.inputs):
                if inp.requires_grad:
                    d = OPS[node.grad_fn][1](*node.saved, k)
                    grads[id(inp)] = grads.get(id(inp), 0.0) + g * d
        return order

    return walk


def test_08_3_a_walk_without_a_visited_set_is_told_a_node_is_listed_twice(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_run_backward,
        _run_backward_with(seen=False),
        says="a walk that does not remember where it has been",
    )
    assert re.search(r"lists a node \d+ times", result.message)
    assert "lists a node before one of its inputs" not in result.message
    never_states(result, "seen", "OPS[")


def test_08_3_a_sweep_that_skips_unary_ops_is_told_nothing_is_handed_on(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_run_backward,
        _run_backward_with(unary=False),
        says="hands nothing on at the sin node",
    )
    assert "another op than the node's own" not in result.message
    never_states(result, "OPS[", "g * d")


def test_08_3_the_right_run_backward_is_still_accepted(capsys):
    assert outcome(capsys, ex.check_run_backward, run_backward).passed


# -- 08-5 / 08-6 on the lab's stand-in engine -------------------------------------------------
class _NodeOnTheLabsEngine(Node):
    """The notebook's Node while 08-3 and 08-4 are unsolved (or use_reference is True):
    its backward runs the lab's run_backward and free_graph."""

    @staticmethod
    def frame(op, *inputs):
        inputs = [i if isinstance(i, Node) else _NodeOnTheLabsEngine(i) for i in inputs]
        values = tuple(i.value for i in inputs)
        out = _NodeOnTheLabsEngine(
            OPS[op][0](*values), requires_grad=any(i.requires_grad for i in inputs)
        )
        if out.requires_grad:
            out.grad_fn, out.inputs, out.saved = op, tuple(inputs), values
        return out

    __add__ = lambda self, o: _NodeOnTheLabsEngine.frame("add", self, o)  # noqa: E731
    __radd__ = lambda self, o: _NodeOnTheLabsEngine.frame("add", o, self)  # noqa: E731
    __sub__ = lambda self, o: _NodeOnTheLabsEngine.frame("sub", self, o)  # noqa: E731
    __mul__ = lambda self, o: _NodeOnTheLabsEngine.frame("mul", self, o)  # noqa: E731
    __rmul__ = lambda self, o: _NodeOnTheLabsEngine.frame("mul", o, self)  # noqa: E731
    __truediv__ = lambda self, o: _NodeOnTheLabsEngine.frame("div", self, o)  # noqa: E731
    __pow__ = lambda self, o: _NodeOnTheLabsEngine.frame("pow", self, o)  # noqa: E731
    sin = lambda self: _NodeOnTheLabsEngine.frame("sin", self)  # noqa: E731
    exp = lambda self: _NodeOnTheLabsEngine.frame("exp", self)  # noqa: E731

    def backward(self, retain_graph=False):
        order = ex.yours_or_labs("08-3", "run_backward", self, lab=True)
        if not retain_graph:
            ex.yours_or_labs("08-4", "free_graph", order, lab=True)


def _jacobian_on_the_labs_engine(F, x0, y0):
    J = []
    for k in range(len(F(_NodeOnTheLabsEngine(x0), _NodeOnTheLabsEngine(y0)))):
        x = _NodeOnTheLabsEngine(x0, requires_grad=True)
        y = _NodeOnTheLabsEngine(y0, requires_grad=True)
        F(x, y)[k].backward()
        J.append([x.grad, y.grad])
    return J


def _descent_on_the_labs_engine(f, x0, y0, lr=0.1, steps=200):
    x = _NodeOnTheLabsEngine(x0, requires_grad=True)
    y = _NodeOnTheLabsEngine(y0, requires_grad=True)
    for _ in range(steps):
        x.grad = y.grad = 0.0
        f(x, y).backward()
        x.value -= lr * x.grad
        y.value -= lr * y.grad
    return x.value, y.value


@pytest.mark.parametrize(
    "check, answer, name",
    [
        (ex.check_jacobian, _jacobian_on_the_labs_engine, "jacobian"),
        (ex.check_gradient_descent, _descent_on_the_labs_engine, "gradient_descent"),
    ],
    ids=["08-5", "08-6"],
)
def test_08_5_and_08_6_on_the_labs_engine_pass_and_say_whose_gradients(capsys, check, answer, name):
    result = outcome(capsys, check, answer)
    assert result.passed
    assert "the gradients it used came from the lab's run_backward and free_graph" in (
        result.message
    )
    assert f"Your {name} is right as written; run this check again" in result.message
    never_states(result, "OPS[", "grads.pop")


@pytest.mark.parametrize(
    "check, answer",
    [(ex.check_jacobian, jacobian_with("method")), (ex.check_gradient_descent, descend_with())],
    ids=["08-5", "08-6"],
)
def test_08_5_and_08_6_on_the_learners_engine_pass_without_a_note(capsys, check, answer):
    result = outcome(capsys, check, answer)
    assert result.passed
    assert "Note:" not in result.message
