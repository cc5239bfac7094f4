"""Lessons 5-8, sixteenth round: each hint names what the learner did. The notebook's own
optimizer returned by a setup; grad mode switched off where the body was to be frozen;
the last layer alone run under no_grad; a second placeholder that nothing reads; the
Variables fetched where their gradients belong; a sweep that skips every node's first
input; an order returned reversed, shown by the names of the graph's nodes. None gives
the answer away, and the right forms are still accepted."""

from __future__ import annotations

import inspect
import re

import numpy as np
import pytest
from checker_results import never_states, outcome, refused, rejected_on_first_try
from lesson_answers_01_05 import finetune_with, predict_inference_mode, predict_ok
from lesson_answers_06_07 import (
    MODEL_SECRETS,
    STEP_SECRETS,
    lesson_graph,
    model,
    notebook_shell,
    run_answer_cell,
    run_in_notebook,
    static_model,
)
from lesson_answers_08 import OPS, Node, descend_with, run_backward, static_backward

import naivegraph as ng
import naivegraph.static as ns
from naivegraph.lessons import exercises as ex

FINETUNE_SECRETS = ("momentum=0.9", "lr=0.1", "Linear(8, n_classes)")
INFERENCE_SECRETS = ("with ng.no_grad():\n", "return model(x)")


def _defined(source: str, **names):
    """The function a notebook cell defines from ``source``, with ``names`` as the
    notebook's globals."""
    space = {"ng": ng, "np": np, **names}
    exec(compile(source, "<cell>", "exec"), space)
    return space[re.search(r"def (\w+)", source).group(1)]


# -- 05-2: the notebook's optimizer; grad mode off instead of freezing -----------------------
_LESSON_5_MODEL = (
    "class Net(ng.nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.body = ng.nn.Sequential(ng.nn.Linear(2, 8), ng.nn.Tanh())\n"
    "        self.fc = ng.nn.Linear(8, 2)\n"
    "    def forward(self, x):\n"
    "        return self.fc(self.body(x))\n"
    "model = Net()\n"
    "for p in model.parameters():\n"
    "    p.requires_grad = False\n"
    "model.fc = ng.nn.Linear(8, 3)\n"
    "optimizer = ng.optim.SGD(model.fc.parameters(), lr=0.1, momentum=0.9)\n"
)


@pytest.fixture
def shell():
    yield from notebook_shell()


def test_05_2_the_notebooks_optimizer_returned_is_told_it_holds_another_models_parameters(
    shell,
):
    result = run_in_notebook(
        shell,
        _LESSON_5_MODEL,
        "def finetune_setup(model, n_classes):\n"
        "    for p in model.parameters():\n"
        "        p.requires_grad = False\n"
        "    model.fc = ng.nn.Linear(8, n_classes)\n"
        "    return optimizer\n",
        "ex.check_finetune_setup(finetune_setup)",
    )
    refused(result, "your function returned the notebook's `optimizer`")
    assert "every tensor it holds is a parameter of another model, not of the model " in (
        result.message
    )
    assert "must hold only the new layer's parameters" not in result.message
    never_states(result, *FINETUNE_SECRETS)


def test_05_2_an_optimizer_that_also_holds_another_models_parameter_is_told_how_many(capsys):
    stranger = ng.nn.Linear(8, 2)

    def setup(model, n_classes):
        for p in model.parameters():
            p.requires_grad = False
        model.fc = ng.nn.Linear(8, n_classes)
        return ng.optim.SGD([*model.fc.parameters(), stranger.bias], lr=0.1, momentum=0.9)

    result = rejected_on_first_try(
        capsys,
        ex.check_finetune_setup,
        setup,
        says="an optimizer that also holds another model's parameters: 1 of the 3 "
        "tensors it holds is a parameter of another model",
    )
    never_states(result, *FINETUNE_SECRETS)


def test_05_2_grad_mode_switched_off_instead_of_freezing_is_told_it_freezes_nothing(capsys):
    def setup(model, n_classes):
        ng.set_grad_enabled(False)
        model.fc = ng.nn.Linear(8, n_classes)
        return ng.optim.SGD(model.fc.parameters(), lr=0.1, momentum=0.9)

    result = rejected_on_first_try(
        capsys,
        ex.check_finetune_setup,
        setup,
        says="switched grad mode off for the whole program (ng.set_grad_enabled(False)), "
        "and that freezes nothing",
    )
    again = outcome(capsys, ex.check_finetune_setup, setup)  # a second try: every hint
    refused(again, "requires_grad off on every parameter of the body")
    for said in (result, again):
        assert "with ng.no_grad()" not in said.message
        never_states(said, *FINETUNE_SECRETS)
    assert ng.is_grad_enabled() is True


def test_05_2_grad_mode_left_off_after_freezing_still_gets_the_grad_mode_hint(capsys):
    def setup(model, n_classes):
        for p in model.parameters():
            p.requires_grad = False
        ng.set_grad_enabled(False)
        model.fc = ng.nn.Linear(8, n_classes)
        return ng.optim.SGD(model.fc.parameters(), lr=0.1, momentum=0.9)

    result = rejected_on_first_try(
        capsys, ex.check_finetune_setup, setup, says="your function left grad mode off"
    )
    assert "freezes nothing" not in result.message
    assert ng.is_grad_enabled() is True


def test_05_2_right_setups_are_still_accepted(capsys):
    def by_list(net, k):
        net.requires_grad_(False)
        net.fc = ng.nn.Linear(in_features=8, out_features=k)
        return ng.optim.SGD([net.fc.weight, net.fc.bias], lr=0.1, momentum=0.9)

    for setup in (finetune_with(lr=0.1, momentum=0.9), by_list):
        assert outcome(capsys, ex.check_finetune_setup, setup).passed


# -- 05-3: the last layer alone under no_grad ---------------------------------------------------
def _last_layer_under_no_grad(model, x):
    h = model.body(x)
    with ng.no_grad():
        return model.fc(h)


def test_05_3_the_last_layer_alone_under_no_grad_is_told_the_body_recorded(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_inference,
        _last_layer_under_no_grad,
        says="your function ran model.fc with recording off (inside no_grad, say), but "
        "model.body before it with recording on",
    )
    assert "detach" not in result.message
    never_states(result, *INFERENCE_SECRETS)


def test_05_3_an_output_detached_after_the_model_is_still_told_so(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_inference,
        lambda model, x: model(x).detach(),
        says="detached after the forward pass",
    )
    assert "model.fc" not in result.message


def test_05_3_right_predictions_are_still_accepted(capsys):
    @ng.no_grad()
    def decorated(model, x):
        return model(x)

    for predict in (predict_ok, predict_inference_mode, decorated):
        assert outcome(capsys, ex.check_inference, predict).passed


# -- 06-1: a second placeholder that nothing reads ----------------------------------------------
def _two_placeholders():
    g2 = ns.Graph()
    with g2:
        x = ns.placeholder("x", shape=(2, 2))
        x = ns.placeholder("x2", shape=(None, 2))
        w1, w2, w3 = (ns.Variable(v, name=n) for v, n in ((2.0, "w1"), (3.0, "w2"), (4.0, "w3")))
        loss = model(x, w1, w2, w3)
    return g2, x, loss


def test_06_1_a_second_placeholder_that_nothing_reads_is_named(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_static_model,
        *_two_placeholders(),
        says="your graph holds two placeholders: 'x', which nothing in the graph reads, "
        "and 'x2', which your loss reads",
    )
    assert "it is not a new graph" not in result.message
    assert "g2 = g" not in result.message
    never_states(result, *MODEL_SECRETS)


def test_06_1_a_graph_built_before_is_still_told_it_is_not_a_new_graph(capsys):
    g, _, (w1, w2, w3), _, _ = lesson_graph()
    with g:
        x = ns.placeholder("x", shape=(2, 2))
        loss = model(x, w1, w2, w3)
    result = rejected_on_first_try(
        capsys, ex.check_static_model, g, x, loss, says="it is not a new graph"
    )
    never_states(result, *MODEL_SECRETS)


def test_06_1_right_graphs_are_still_accepted(capsys):
    def batched(x, w1, w2, w3):
        return ns.sum((w1 * x + w2) * (w3 * (w1 * x))) * 0.25

    for body in (model, batched):
        assert outcome(capsys, ex.check_static_model, *static_model(body)).passed


# -- 06-2: the Variables fetched where their gradients belong -----------------------------------
def test_06_2_variables_fetched_for_their_gradients_are_named(capsys):
    g, x, _, loss, _ = lesson_graph()
    result = rejected_on_first_try(
        capsys,
        ex.check_compiled_step,
        g.compile(["input"], [loss.name, "w1", "w2", "w3"]),
        g,
        says="outputs 2, 3 and 4 of f are the Variables 'w1', 'w2' and 'w3' themselves",
    )
    assert "fetching a Variable gives the value it holds" in result.message
    assert "ns.gradients was given another node" not in result.message
    never_states(result, *STEP_SECRETS)


def test_06_2_one_variable_fetched_for_its_gradient_is_named(capsys):
    g, x, (_, _, w3), loss, grads = lesson_graph()
    result = rejected_on_first_try(
        capsys,
        ex.check_compiled_step,
        g.compile([x], [loss, grads[0], grads[1], w3]),
        g,
        says="output 4 of f is the Variable 'w3' itself",
    )
    never_states(result, *STEP_SECRETS)


def test_06_2_the_compiled_step_is_still_accepted(capsys):
    g, x, _, loss, grads = lesson_graph()
    for f in (
        g.compile([x], [loss, *grads]),
        g.compile([g["input"]], [g[loss.name], *grads], optimize=False),
    ):
        assert outcome(capsys, ex.check_compiled_step, f, g).passed


# -- 08-2: a sweep that skips every node's first input -----------------------------------------
_SWEEP_SOURCE = inspect.getsource(static_backward)
SWEEP_SECRETS = ("enumerate(n.inputs)", "inp.grad +=", "OPS[n.op]", "reversed(nodes)")


@pytest.mark.parametrize(
    "old, new",
    [
        ("enumerate(n.inputs)", "list(enumerate(n.inputs))[1:]"),
        ("if inp.needs_grad:", "if inp.needs_grad and k > 0:"),
    ],
)
def test_08_2_a_sweep_that_skips_the_first_input_is_told_so(capsys, old, new):
    assert old in _SWEEP_SOURCE
    sweep = _defined(_SWEEP_SOURCE.replace(old, new), OPS=OPS)
    result = rejected_on_first_try(
        capsys,
        ex.check_static_backward,
        sweep,
        says="your sweep never hands a share to the first input of a node",
    )
    assert "The order of the visits is not the problem" in result.message
    assert "in which order must the nodes be visited" not in result.message
    never_states(result, *SWEEP_SECRETS)


def test_08_2_a_sweep_in_creation_order_is_still_asked_about_the_order(capsys):
    forward = _SWEEP_SOURCE.replace("for n in reversed(nodes):", "for n in nodes[1:]:")
    assert forward != _SWEEP_SOURCE
    result = rejected_on_first_try(
        capsys,
        ex.check_static_backward,
        _defined(forward, OPS=OPS),
        says="in which order must the nodes be visited",
    )
    assert "first input" not in result.message


def test_08_2_right_sweeps_are_still_accepted(capsys):
    by_index = _SWEEP_SOURCE.replace(
        "for k, inp in enumerate(n.inputs):", "for k in range(len(n.inputs)):\n"
        "            inp = n.inputs[k]"
    )
    assert by_index != _SWEEP_SOURCE
    for sweep in (_defined(_SWEEP_SOURCE, OPS=OPS), _defined(by_index, OPS=OPS)):
        assert outcome(capsys, ex.check_static_backward, sweep).passed


# -- 08-3: an order returned reversed, shown by the nodes' names --------------------------------
_WALK_SOURCE = inspect.getsource(run_backward)


def test_08_3_an_order_returned_reversed_is_shown_by_the_names_of_its_nodes(capsys):
    reversed_order = _WALK_SOURCE.replace("return order", "return order[::-1]")
    assert reversed_order != _WALK_SOURCE
    result = rejected_on_first_try(
        capsys,
        ex.check_run_backward,
        _defined(reversed_order, OPS=OPS),
        says="you gave the order [f, c * sin(c), sin(c), c, y, x] for "
        "f = c * sin(c) + c, c = x * y",
    )
    assert "should return the order it used (a list ending with root)" in result.message
    assert "object at 0x" not in result.message
    never_states(result, "id(node)", "seen.add(", "visit(")


def test_08_3_a_tuple_without_its_root_is_shown_in_round_brackets(capsys):
    no_root = _WALK_SOURCE.replace("return order", "return tuple(order[:-1])")
    result = rejected_on_first_try(
        capsys,
        ex.check_run_backward,
        _defined(no_root, OPS=OPS),
        says="you gave the order (x, y, c, sin(c), c * sin(c)) for",
    )
    assert "_Node" not in result.message


def test_08_3_right_walks_are_still_accepted(capsys):
    as_tuple = _WALK_SOURCE.replace("return order", "return tuple(order)")
    for walk in (run_backward, _defined(as_tuple, OPS=OPS)):
        assert outcome(capsys, ex.check_run_backward, walk).passed


def test_07_2_a_typed_prediction_beside_a_print_of_scaled_is_accepted():
    for shell in notebook_shell():
        result = run_answer_cell(
            shell,
            "print(scaled(ng.tensor([3.0])))\n"
            "traced_result = [2.0, 4.0]\neager_result = [10.0, 20.0]",
        )
        assert result.passed, result.message


def test_07_2_a_prediction_computed_by_scaled_is_still_refused():
    for shell in notebook_shell():
        result = run_answer_cell(
            shell,
            "traced_result = [2.0, 4.0]\neager_result = scaled(ng.tensor([1.0, 2.0])).tolist()",
        )
        assert not result.passed and "calls scaled" in result.message, result.message


def test_08_6_a_descent_that_caps_the_lr_it_is_given_is_refused(capsys):
    def gradient_descent(f, x0, y0, lr=0.1, steps=200):
        lr = min(lr, 0.05)  # right at the checker's first lr, 0.05, only
        x, y = Node(x0, requires_grad=True), Node(y0, requires_grad=True)
        for _ in range(steps):
            x.grad = y.grad = 0.0
            f(x, y).backward()
            x.value -= lr * x.grad
            y.value -= lr * y.grad
        return x.value, y.value

    result = outcome(capsys, ex.check_gradient_descent, gradient_descent)
    assert not result.passed and "right for one step size" in result.message, result.message
    never_states(result, "0.05")


def test_08_6_the_plain_descent_is_still_accepted(capsys):
    assert outcome(capsys, ex.check_gradient_descent, descend_with()).passed


@pytest.mark.parametrize("look", ["print(traced)", "print(scaled)", "print(type(traced))",
                                  "display(traced)"])
def test_07_2_a_typed_prediction_beside_a_look_at_the_functions_is_accepted(look):
    for shell in notebook_shell():
        result = run_answer_cell(
            shell, look + "\ntraced_result = [2.0, 4.0]\neager_result = [10.0, 20.0]"
        )
        assert result.passed, result.message
