"""The checkers of lessons 1 to 4 on a twelfth round of answers, typed into notebook
cells as a learner does: a value read off the model through float(), int(), numpy, a
list or the forward pass run again; a derivative taken by ng.func (jacrev, vjp, grad)
or by autograd.grad imported under another name; a walk that changes a .grad a leaf
already held; snippets run in the cell that predicts them; and hints that now name the
mistake made (several numbers packed into one answer, a tensor of flags, None entries
kept, a .grad cleared, a backward run in an earlier cell, a function that ignores the
x it is given, a hook that sets a .grad instead of returning one, a reset that returns
a new tensor, grad mode switched back on by hand).  Each wrong answer is refused with
a hint naming the mistake and no answer; the right forms are still accepted."""

from __future__ import annotations

import numpy as np
import pytest
from checker_results import never_states, refused, rejected_on_first_try
from lesson_answers_06_07 import notebook_shell

import naivegraph as ng
from naivegraph.lessons import checking
from naivegraph.lessons import exercises as ex


@pytest.fixture
def shell():
    yield from notebook_shell()


def run_in_notebook(shell, *cells: str):
    """Run ``cells`` one after another as notebook cells; the last one's result."""
    result = None
    for cell in cells:
        checking.TRIES.clear()
        result = shell.run_cell(cell, store_history=True).result
    return result


# -- lesson 1: values read off the model in the checked cell -----------------------------

MODEL = (
    "input = ng.ones(2, 2)\n"
    "w1 = ng.tensor(2.0, requires_grad=True)\n"
    "w2 = ng.tensor(3.0, requires_grad=True)\n"
    "w3 = ng.tensor(4.0, requires_grad=True)\n"
    "l1 = input * w1\nl2 = l1 + w2\nl3 = l1 * w3\nl4 = l2 * l3\nloss = l4.mean()\n"
)
CHECK_01_1 = "ex.check_forward_values(l1_value, l2_value, l3_value, l4_value, loss_value)"
FORWARD_VALUES = ("2", "5", "8", "40")


@pytest.mark.parametrize(
    "answer, names",
    [
        (  # findings 1 and 2: float() and int() read the value as .item() does
            "l1_value = float(l1[0, 0]); l2_value = float(l2[0, 0]); l3_value = float(l3[0, 0])\n"
            "l4_value = float(l4[0, 0]); loss_value = float(loss)\n",
            "l1, l2, l3, l4, loss",
        ),
        (
            "l1_value = int(l1[0, 0]); l2_value = int(l2[0, 0]); l3_value = int(l3[0, 0])\n"
            "l4_value = int(l4[0, 0]); loss_value = int(loss)\n",
            "l1, l2, l3, l4, loss",
        ),
        (  # finding 3: through numpy
            "l1_value = np.asarray(l1)[0, 0]; l2_value = np.asarray(l2)[0, 0]\n"
            "l3_value = np.asarray(l3)[0, 0]; l4_value = np.asarray(l4)[0, 0]\n"
            "loss_value = np.asarray(loss)\n",
            "l1, l2, l3, l4, loss",
        ),
        (  # finding 4: a list comprehension on the line above the check
            "v = [float(t[0, 0]) for t in (l1, l2, l3, l4)] + [float(loss)]\n"
            "l1_value, l2_value, l3_value, l4_value, loss_value = v\n",
            "l1, l2, l3, l4, loss",
        ),
        (  # finding 5: the forward pass run again under no_grad
            "with ng.no_grad():\n"
            "    v = [input[0, 0] * w1]\n"
            "    v.append(v[0] + w2)\n"
            "    v.append(v[0] * w3)\n"
            "    v.append(v[1] * v[2])\n"
            "l1_value = float(v[0]); l2_value = float(v[1]); l3_value = float(v[2])\n"
            "l4_value = float(v[3]); loss_value = float(v[3])\n",
            "w1, w2, w3",
        ),
    ],
)
def test_01_1_a_value_read_off_the_model_in_the_cell_is_refused(shell, answer, names):
    result = run_in_notebook(shell, MODEL, answer + CHECK_01_1)
    refused(result, "your cell reads the value off the model")
    assert f"the model's tensors ({names})" in result.message
    never_states(result, *(f"= {v}" for v in FORWARD_VALUES))


@pytest.mark.parametrize(
    "answer",
    [
        "l1_value, l2_value, l3_value, l4_value, loss_value = 2.0, 5.0, 8.0, 40.0, 40.0\n",
        "l1_value = 1 * 2.0\nl2_value = l1_value + 3\nl3_value = l1_value * 4\n"
        "l4_value = l2_value * l3_value\nloss_value = (4 * l4_value) / 4\n",
        "v = [1.0 * 2.0]\nv.append(v[0] + 3.0)\nv.append(v[0] * 4.0)\nv.append(v[1] * v[2])\n"
        "l1_value, l2_value, l3_value, l4_value = v\nloss_value = float(np.mean([v[3]] * 4))\n",
        "l1_value, l2_value, l3_value = ng.tensor(2.0), np.float32(5), np.array([8.0])\n"
        "l4_value, loss_value = np.array(40), 40\n",
    ],
)
def test_01_1_values_worked_out_in_the_cell_are_accepted(shell, answer):
    assert run_in_notebook(shell, MODEL, answer + CHECK_01_1).passed


def test_01_1_a_model_built_in_the_cell_above_typed_values_is_not_what_they_came_from(shell):
    cell = MODEL + "l1_value, l2_value, l3_value, l4_value, loss_value = 2, 5, 8, 40, 40\n"
    assert run_in_notebook(shell, cell + CHECK_01_1).passed
    read = (
        MODEL
        + "l1_value = float(l1[0, 0])\nl2_value, l3_value, l4_value, loss_value = 5, 8, 40, 40\n"
    )
    refused(run_in_notebook(shell, read + CHECK_01_1), "the model's tensors (l1)")


# -- lesson 1: derivatives taken by the library in the checked cell ------------------------

CHECK_01_2 = "ex.check_leaf_grads(w1_grad, w2_grad, w3_grad)"
F_OF_WEIGHTS = "def f(a, b, c):\n    x1 = input * a\n    return ((x1 + b) * (x1 * c)).mean()\n"


@pytest.mark.parametrize(
    "setup, answer, says",
    [
        (  # finding 6
            "",
            F_OF_WEIGHTS + "g = ng.func.jacrev(f, argnums=(0, 1, 2))(w1, w2, w3)\n"
            "w1_grad = float(g[0]); w2_grad = float(g[1]); w3_grad = float(g[2])\n",
            "ng.func.jacrev",
        ),
        (  # finding 7
            "",
            F_OF_WEIGHTS + "out, pull = ng.func.vjp(f, w1, w2, w3)\ng = pull(ng.tensor(1.0))\n"
            "w1_grad = float(g[0]); w2_grad = float(g[1]); w3_grad = float(g[2])\n",
            "ng.func.vjp",
        ),
        (  # ng.func.grad is named as what it is, not as a read of .grad
            "",
            F_OF_WEIGHTS + "g = ng.func.grad(f, argnums=(0, 1, 2))(w1, w2, w3)\n"
            "w1_grad = float(g[0]); w2_grad = float(g[1]); w3_grad = float(g[2])\n",
            "it uses ng.func.grad.",
        ),
        (  # finding 8: autograd.grad imported under another name in an earlier cell
            "from naivegraph.autograd import grad as agrad",
            "g = agrad(loss, [w1, w2, w3], retain_graph=True)\n"
            "w1_grad = float(g[0]); w2_grad = float(g[1]); w3_grad = float(g[2])\n",
            "agrad (that is ng.autograd.grad)",
        ),
        (  # jacfwd reached through a module kept under another name
            "import naivegraph.func as F",
            F_OF_WEIGHTS + "g = F.jacfwd(f, argnums=(0, 1, 2))(w1, w2, w3)\n"
            "w1_grad = float(g[0]); w2_grad = float(g[1]); w3_grad = float(g[2])\n",
            "F.jacfwd (that is ng.func.jacfwd)",
        ),
    ],
)
def test_01_2_a_derivative_taken_by_the_library_in_the_cell_is_refused(shell, setup, answer, says):
    result = run_in_notebook(shell, MODEL, setup or "pass", answer + CHECK_01_2)
    refused(result, "your cell computes the value instead of working it out by hand")
    assert says in result.message, result.message
    never_states(result, "28", "w2.grad = 8", "10.", "uses .grad")


@pytest.mark.parametrize(
    "answer",
    [
        "w1_grad, w2_grad, w3_grad = 28.0, 8.0, 10.0\n",
        "per = [0.25 * (8 + 5 * 4) * 1, 0.25 * 8, 0.25 * 5 * 2]\n"
        "w1_grad, w2_grad, w3_grad = (4 * p for p in per)\n",
        "w1_grad, w2_grad, w3_grad = ng.tensor(28.0), np.float64(8), ng.tensor([10.0])\n",
    ],
)
def test_01_2_gradients_worked_out_in_the_cell_are_accepted(shell, answer):
    assert run_in_notebook(shell, MODEL, answer + CHECK_01_2).passed


def test_01_2_three_values_packed_into_one_name_are_told_so(shell):
    # the MISFIT of 01-2: the cell reads no .grad, it packed three numbers in w1_grad
    cell = "w1_grad = (28, 8, 10); w2_grad = None; w3_grad = None\n" + CHECK_01_2
    result = refused(
        run_in_notebook(shell, MODEL, cell), "holds several numbers and another is None"
    )
    never_states(result, "until a backward pass", "w2.grad = 8")


CHECK_01_3 = "ex.check_l1_grad(l1_grad)"
F_OF_L1 = "def f(x):\n    return ((x + w2) * (x * w3)).mean()\n"


@pytest.mark.parametrize(
    "answer, says",
    [
        (F_OF_L1 + "J = ng.func.jacrev(f)(l1)\nl1_grad = float(J[0, 0])\n", "ng.func.jacrev"),
        (  # finding 11
            F_OF_L1 + "_, pb = ng.func.vjp(f, l1)\n"
            "l1_grad = np.asarray(pb(ng.tensor(1.0))[0])[0, 0]\n",
            "ng.func.vjp",
        ),
    ],
)
def test_01_3_a_derivative_taken_by_the_library_in_the_cell_is_refused(shell, answer, says):
    result = refused(
        run_in_notebook(shell, MODEL, answer + CHECK_01_3),
        "your cell computes the value instead of working it out by hand",
    )
    assert says in result.message
    never_states(result, "7")


@pytest.mark.parametrize(
    "answer", ["l1_grad = 0.25 * (8 * 1 + 5 * 4)\n", "l1_grad = np.float32(7)\n"]
)
def test_01_3_a_gradient_worked_out_in_the_cell_is_accepted(shell, answer):
    assert run_in_notebook(shell, MODEL, answer + CHECK_01_3).passed
