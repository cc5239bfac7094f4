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

from pathlib import Path

import numpy as np
import pytest
from checker_results import never_states, refused, rejected_on_first_try
from lesson_answers_01_05 import (
    CHECK_01_1,
    CHECK_01_2,
    MODEL,
    derivatives,
    find_leaves,
    reset_detach,
    reset_no_grad,
)
from lesson_answers_06_07 import notebook_shell, run_in_notebook

import naivegraph as ng
from naivegraph.lessons import checking, earlier_cells
from naivegraph.lessons import exercises as ex


@pytest.fixture
def shell():
    yield from notebook_shell()


# -- lesson 1: values read off the model in the checked cell -----------------------------

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
        "l1_value, l2_value, l3_value = ng.tensor(2.0), np.float32(5), np.array(8.0)\n"
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
        "w1_grad, w2_grad, w3_grad = ng.tensor(28.0), np.float64(8), ng.tensor(10.0)\n",
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


# -- lesson 2 ----------------------------------------------------------------------------


def test_02_1_flags_typed_into_a_tensor_are_told_it_is_a_tensor(capsys):
    flags = ng.tensor([True, True, False, False])
    result = rejected_on_first_try(
        capsys, ex.check_leaf_flags, flags, (True, False, True, True), says="that is a tensor"
    )
    assert "not a tensor holding them" in result.message
    never_states(result, "True, True, False, False", "write each value as True or False")


@pytest.mark.parametrize(
    "flags",
    [
        ((True, True, False, False), (True, False, True, True)),
        ([True, True, False, False], np.array([True, False, True, True])),
    ],
)
def test_02_1_flags_as_tuples_lists_or_numpy_arrays_are_accepted(flags):
    assert ex.check_leaf_flags(*flags).passed


def walk_then(change):
    """The right walk, that also does ``change`` to each leaf's .grad it finds."""

    def find_leaves_changing_grad(t):
        leaves = find_leaves(t)
        for leaf in leaves:
            change(leaf)
        return leaves

    return find_leaves_changing_grad


def _zero_held(leaf):
    if leaf.grad is not None:
        leaf.grad.zero_()


def _replace_held(leaf):
    if leaf.grad is not None:
        leaf.grad = ng.zeros_like(leaf)


def _add_to_held(leaf):
    if leaf.grad is not None:
        leaf.grad += 1


def _clear(leaf):
    leaf.grad = None


@pytest.mark.parametrize(
    "change, says",
    [  # findings 12, 13 and 14: only `grad is None` was compared
        (_zero_held, "the .grad a leaf it found already held, zeroed, replaced or added to"),
        (_replace_held, "the .grad a leaf it found already held, zeroed, replaced or added to"),
        (_add_to_held, "the .grad a leaf it found already held, zeroed, replaced or added to"),
        # the MISFIT: a cleared .grad was told "a .grad set on a leaf it found"
        (_clear, "the .grad a leaf it found held, cleared to None"),
    ],
)
def test_02_3_a_walk_that_changes_a_grad_a_leaf_already_held_is_refused(change, says, capsys):
    result = rejected_on_first_try(capsys, ex.check_find_leaves, walk_then(change), says=says)
    never_states(result, "a .grad set on a leaf", "seen.add", 'AccumulateGrad"')


def test_02_3_a_walk_that_keeps_the_none_entries_is_told_to_skip_them(capsys):
    def find_leaves_keeping_none(t):
        leaves, seen, stack = [], set(), [t.grad_fn]
        while stack:
            node = stack.pop()
            if node is None:
                leaves.append(None)
                continue
            if id(node) in seen:
                continue
            seen.add(id(node))
            if node.name() == "AccumulateGrad":
                leaves.append(node.variable)
            stack.extend(fn for fn, _ in node.next_functions)
        return leaves

    result = rejected_on_first_try(
        capsys, ex.check_find_leaves, find_leaves_keeping_none, says="your list holds None"
    )
    never_states(result, "not nodes", "NoneType", "seen.add")


def test_02_3_the_right_walk_is_still_accepted():
    assert ex.check_find_leaves(find_leaves).passed


def _lesson_cells(stem: str) -> list[str]:
    nbformat = pytest.importorskip("nbformat")
    path = Path(ng.__file__).parent / "course" / f"{stem}.ipynb"
    notebook = nbformat.read(path, as_version=4)
    return [cell.source for cell in notebook.cells if cell.cell_type == "code"]


def test_02_the_cell_that_drops_non_leaf_gradients_runs_again_without_error(shell):
    # the TEXT ERROR: its comment promised a re-run, and the second backward raised
    cells = _lesson_cells("02_leaf_tensors")
    again = next(i for i, c in enumerate(cells) if "this cell can be run again" in c)
    for cell in cells[: again + 1]:
        shell.run_cell(cell, store_history=True)
    second = shell.run_cell(cells[again], store_history=True)
    assert second.error_in_exec is None, second.error_in_exec
    assert [float(shell.user_ns[n].grad[0]) for n in ("w", "b")] == [1.0, 1.0]


# -- lesson 3 ----------------------------------------------------------------------------

LESSON_3_X = "x = ng.tensor(3.0, requires_grad=True)\ny = x ** 2\ny.backward(retain_graph=True)"
CHECK_03_2 = "\nex.check_accumulated_grad(x_grad_after_two)"


def test_03_2_a_derivative_taken_by_ng_func_in_the_cell_is_refused(shell):
    # finding 15
    cell = "x_grad_after_two = 2 * float(ng.func.jacrev(lambda t: t ** 2)(x))" + CHECK_03_2
    result = refused(run_in_notebook(shell, LESSON_3_X, cell), "it runs ng.func.jacrev")
    never_states(result, "12")


@pytest.mark.parametrize(
    "answer",
    ["x_grad_after_two = 12.0", "x_grad_after_two = float(2 * x * 2)", "x_grad_after_two = 6 + 6"],
)
def test_03_2_a_predicted_value_is_accepted(shell, answer, monkeypatch):
    # x's cell is the lesson's own (its backward is the lesson's, not the learner's)
    monkeypatch.setattr(earlier_cells, "_lesson_sources", lambda: frozenset([LESSON_3_X]))
    assert run_in_notebook(shell, LESSON_3_X, answer + CHECK_03_2).passed


def test_03_2_a_backward_run_in_an_earlier_cell_is_told_as_such(shell):
    # the MISFIT: the checked cell ran no backward, an earlier one did
    result = run_in_notebook(
        shell, LESSON_3_X, "y.backward(retain_graph=True)", "x_grad_after_two = 12" + CHECK_03_2
    )
    refused(result, "a backward ran again on y (in a cell of yours, this one or an earlier one)")
    never_states(result, "your cell ran backward itself")


@pytest.mark.parametrize(
    "answer, says",
    [  # findings 16 and 17
        (
            "x_grad = ng.func.vjp(lambda t: t * t, ng.tensor([1.0, 2.0, 3.0]))[1]"
            "(ng.tensor([1.0, 0.1, 0.01]))[0]",
            "ng.func.vjp",
        ),
        (
            "x_grad = ng.tensor([1.0, 0.1, 0.01]) @ ng.func.jacrev(lambda t: t * t)"
            "(ng.tensor([1.0, 2.0, 3.0]))",
            "ng.func.jacrev",
        ),
    ],
)
def test_03_3_a_vector_jacobian_product_taken_by_ng_func_is_refused(shell, answer, says):
    result = run_in_notebook(shell, answer + "\nex.check_vector_backward(x_grad)")
    refused(result, "your cell computes x.grad instead of working it out")
    assert says in result.message
    never_states(result, "0.4", "0.06")


@pytest.mark.parametrize(
    "answer",
    [
        "x_grad = [2.0, 0.4, 0.06]",
        "x_grad = [v * 2 * xi for v, xi in zip([1, 0.1, 0.01], [1, 2, 3])]",
    ],
)
def test_03_3_a_product_worked_out_in_the_cell_is_accepted(shell, answer):
    assert run_in_notebook(shell, answer + "\nex.check_vector_backward(x_grad)").passed


V = ng.zeros(3, requires_grad=True)


def double_by_setting_a_grad(grad):
    V.grad = grad * 2


def test_03_1_a_hook_that_sets_a_grad_instead_of_returning_is_told_to_return(capsys):
    # the MISFIT: it was told "keeps state between calls (V.grad)"
    result = rejected_on_first_try(
        capsys, ex.check_double_hook, double_by_setting_a_grad, says="your hook returns nothing"
    )
    never_states(result, "keeps state between calls", "grad * 2", "2 * grad")


def derivatives_at_a_point_of_its_own(f, x):
    xx = ng.tensor(3.0, dtype=ng.float64, requires_grad=True)
    (first,) = ng.autograd.grad(f(xx), [xx], create_graph=True)
    (second,) = ng.autograd.grad(first, [xx])
    return first, second


def test_03_5_a_function_that_ignores_its_x_is_told_so(capsys):
    # the MISFIT: it was told only that the first derivative is wrong
    result = rejected_on_first_try(
        capsys,
        ex.check_second_derivative,
        derivatives_at_a_point_of_its_own,
        says="calls f on a tensor of its own, never on the x it is given",
    )
    never_states(result, "create_graph=True", "autograd.grad(f(x)")


def test_03_5_the_right_derivatives_and_ng_func_grad_twice_are_accepted():
    assert ex.check_second_derivative(derivatives).passed

    def twice(f, x):
        first = ng.func.grad(f)(x)
        return first, ng.func.grad(ng.func.grad(f))(x)

    assert ex.check_second_derivative(twice).passed


# -- lesson 4 ----------------------------------------------------------------------------

SNIPPETS = (
    "def one():\n"
    "    a = ng.tensor([1.0, 3.0], requires_grad=True)\n"
    "    b = a + 2; loss = (b * b).sum(); b[0] = 1000.0; loss.backward()\n"
    "def two():\n"
    "    a = ng.tensor([1.0, 3.0], requires_grad=True)\n"
    "    b = a * 2; loss = (b + 1).sum(); b.add_(1); loss.backward()\n"
    "def three():\n"
    "    a = ng.tensor([1.0, 3.0], requires_grad=True)\n"
    "    b = a.exp(); loss = b.sum(); b.add_(1); loss.backward()\n"
    "out = []\n"
    "for fn in (one, two, three):\n"
    "    try:\n"
    "        fn(); out.append(False)\n"
    "    except RuntimeError:\n"
    "        out.append(True)\n"
)
SNIPPET_TEXTS = (
    "texts = [\n"
    "    'a = ng.tensor([1.0, 3.0], requires_grad=True)\\nb = a + 2\\nloss = (b * b).sum()\\n'\n"
    "    'b[0] = 1000.0\\nloss' + '.back' + 'ward()',\n"
    "    'a = ng.tensor([1.0, 3.0], requires_grad=True)\\nb = a * 2\\nloss = (b + 1).sum()\\n'\n"
    "    'b.add_(1)\\nloss' + '.back' + 'ward()',\n"
    "    'a = ng.tensor([1.0, 3.0], requires_grad=True)\\nb = a.exp()\\nloss = b.sum()\\n'\n"
    "    'b.add_(1)\\nloss' + '.back' + 'ward()',\n"
    "]\n"
    "out = []\n"
    "for text in texts:\n"
    "    try:\n"
    "        exec(text); out.append(False)\n"
    "    except RuntimeError:\n"
    "        out.append(True)\n"
)


@pytest.mark.parametrize("cell, says", [(SNIPPETS, "a backward"), (SNIPPET_TEXTS, "exec")])
def test_04_2_snippets_run_in_the_cell_are_refused(shell, cell, says):
    # findings 18 and 19: the checker did not read the cell
    result = run_in_notebook(
        shell, cell + "raises = tuple(out)\nex.check_inplace_predictions(raises)"
    )
    refused(result, "your cell runs the snippets instead of predicting what they do")
    assert says in result.message
    never_states(result, "(True, False, True)", "True, False, True")


def test_04_2_a_typed_prediction_is_accepted(shell):
    cell = "raises = [True, False, True]\nex.check_inplace_predictions(raises)"
    assert run_in_notebook(shell, cell).passed


def reset_switching_grad_mode_by_hand(a):
    ng.set_grad_enabled(False)
    a.fill_(10.0)
    ng.set_grad_enabled(True)
    return a


def test_04_3_grad_mode_switched_back_on_by_hand_is_pointed_to_a_with_block(capsys):
    # the MISFIT: the learner wanted recording off, and was pointed to enable_grad alone
    result = rejected_on_first_try(
        capsys,
        ex.check_reset_leaf,
        reset_switching_grad_mode_by_hand,
        says="left grad mode on where the caller had it off",
    )
    assert "`with ng.no_grad():` to stop recording" in result.message
    assert ng.is_grad_enabled()


W = None


def reset_into_a_global(a):
    global W
    W = ng.full_like(a, 10.0, requires_grad=True)
    return W


def test_04_3_a_reset_returning_a_new_tensor_kept_in_a_global_is_told_so(capsys):
    # the MISFIT: it was told "keeps state between calls (W)"
    result = rejected_on_first_try(
        capsys, ex.check_reset_leaf, reset_into_a_global, says="returned a different tensor"
    )
    never_states(result, "keeps state between calls", "fill_(10", "no_grad")


def test_04_3_the_right_resets_are_still_accepted():
    assert ex.check_reset_leaf(reset_no_grad).passed
    assert ex.check_reset_leaf(reset_detach).passed
