"""A notebook cell that computes its answer on a line above the check, as Jupyter
compiles it (the last line apart from the lines above): the checkers of 01-1, 02-2 and
03-2 read the whole cell, so an answer read off the model, the graph or ``.grad`` there
is refused as it is inside the check's own line; an answer typed there is accepted."""

from __future__ import annotations

import pytest
from checker_results import never_states, refused
from lesson_answers_06_07 import notebook_shell

from naivegraph.lessons import checking


@pytest.fixture
def shell():
    yield from notebook_shell()


def run_in_notebook(shell, cell: str):
    checking.TRIES.clear()
    return shell.run_cell(cell, store_history=True).result


MODEL = (
    "input = ng.ones(2, 2)\n"
    "w1, w2, w3 = (ng.tensor(v, requires_grad=True) for v in (2.0, 3.0, 4.0))\n"
    "l1 = input * w1\nl2 = l1 + w2\nl3 = l1 * w3\nl4 = l2 * l3\nloss = l4.mean()\n"
)


def test_01_1_a_value_read_off_the_model_above_the_check_is_refused(shell):
    cell = (
        MODEL
        + "l1_value = l1[0, 0].item()\nl2_value, l3_value, l4_value, loss_value = 5, 8, 40, 40\n"
        "ex.check_forward_values(l1_value, l2_value, l3_value, l4_value, loss_value)"
    )
    refused(run_in_notebook(shell, cell), "computes the value instead of working it out by hand")


def test_01_1_values_typed_above_the_check_are_accepted(shell):
    cell = (
        MODEL + "l1_value, l2_value, l3_value, l4_value, loss_value = 2, 5, 8, 40, 40\n"
        "ex.check_forward_values(l1_value, l2_value, l3_value, l4_value, loss_value)"
    )
    assert run_in_notebook(shell, cell).passed


GRAPH = (  # the lesson's graph: z = y + b, y = w * x, x needs no gradient
    "w = ng.tensor([1.0, 2.0], requires_grad=True)\nx = ng.tensor([3.0, 4.0])\n"
    "b = ng.tensor([0.5, 0.5], requires_grad=True)\ny = w.mul(x)\nz = y + b\n"
)


def test_02_2_names_read_off_the_graph_above_the_check_are_refused(shell):
    cell = (
        GRAPH + "z_next = [n.name() if n else None for n, _ in z.grad_fn.next_functions]\n"
        "y_next = [n.name() if n else None for n, _ in y.grad_fn.next_functions]\n"
        "ex.check_next_functions(z_next, y_next)"
    )
    result = refused(run_in_notebook(shell, cell), "reads the answer off the graph")
    never_states(result, "AccumulateGrad")


def test_03_2_a_grad_read_above_the_check_is_refused_and_a_typed_number_accepted(shell):
    # the lesson's cell above ran one backward; the exercise's cell predicts the second
    run_in_notebook(
        shell, "x = ng.tensor(3.0, requires_grad=True)\ny = x ** 2\ny.backward(retain_graph=True)"
    )
    read = "x_grad_after_two = x.grad.item() * 2\nex.check_accumulated_grad(x_grad_after_two)"
    refused(run_in_notebook(shell, read), ".grad")
    typed = "x_grad_after_two = 12.0\nex.check_accumulated_grad(x_grad_after_two)"
    assert run_in_notebook(shell, typed).passed
