"""The checkers of lessons 1 and 2 on a fifteenth round of answers, where the refusal
was right but its diagnosis was not: a gradient computed in a cell above with a
derivative function (jacrev, or autograd.grad with create_graph=True, whose result is
recorded like one of the model's tensors) is said to be autograd's, by name; a .grad
assigned by hand is told apart from a backward pass; a model tensor handed over under
a name of the learner's is named as the model names it; in 02-2 a name inside a tuple
and an empty string for None are named as such; in 02-3 a walk that meets every leaf
but drops some of them (a slice, a filter) is told so, not that it merged leaves.
Each wrong answer is refused with a hint naming the mistake and no answer; the right
forms are accepted."""

from __future__ import annotations

import pytest
from checker_results import never_states, outcome, refused, rejected_on_first_try
from lesson_answers_01_05 import CHECK_01_1, CHECK_01_2, MODEL, find_leaves
from lesson_answers_06_07 import notebook_shell, run_in_notebook

from naivegraph.lessons import exercises as ex

CHECK_01_3 = "ex.check_l1_grad(l1_grad)"
NAMES = (
    "names = {'input': input, 'w1': w1, 'w2': w2, 'w3': w3, 'l1': l1, 'l2': l2, "
    "'l3': l3, 'l4': l4, 'loss': loss}"
)


@pytest.fixture
def shell():
    yield from notebook_shell()


def test_01_3_a_gradient_computed_with_jacrev_in_a_cell_above_names_jacrev(shell):
    above = "f = lambda t: ((t + w2) * (t * w3)).mean()\nJJ = ng.func.jacrev(f)(l1)"
    result = run_in_notebook(shell, MODEL, above, "l1_grad = float(JJ[0, 0])\n" + CHECK_01_3)
    refused(result, "uses ng.func.jacrev (in a cell above that set `JJ`)")
    never_states(result, "7", "the model's tensors (JJ)")


@pytest.mark.parametrize(
    "above, cell, check, value",
    [
        (
            "g1, g2, g3 = ng.autograd.grad(loss, [w1, w2, w3], create_graph=True)",
            "w1_grad, w2_grad, w3_grad = float(g1), float(g2), float(g3)\n",
            CHECK_01_2,
            "28",
        ),
        (
            "jj, = ng.autograd.grad(loss, [l1], create_graph=True)",
            "l1_grad = float(jj[0, 0])\n",
            CHECK_01_3,
            "7",
        ),
    ],
    ids=["01-2", "01-3"],
)
def test_a_gradient_recorded_with_create_graph_in_a_cell_above_is_said_to_be_autograds(
    shell, above, cell, check, value
):
    result = run_in_notebook(shell, MODEL, above, cell + check)
    refused(result, "uses autograd (in a cell above that set")
    never_states(result, value, "the model's tensors")


@pytest.mark.parametrize(
    "above, cell",
    [
        ("g1, g2, g3 = 28.0, 8.0, 10.0", "w1_grad, w2_grad, w3_grad = g1, g2, g3\n" + CHECK_01_2),
        ("JJ = ng.tensor(7.0)", "l1_grad = JJ\n" + CHECK_01_3),
    ],
    ids=["01-2", "01-3"],
)
def test_numbers_typed_in_a_cell_above_are_still_accepted(shell, above, cell):
    result = run_in_notebook(shell, MODEL, above, cell)
    assert result.passed, result.message


def test_01_2_a_grad_set_by_assignment_is_not_called_a_backward_pass(shell):
    cell = "w1_grad, w2_grad, w3_grad = 28, 8, 10\n" + CHECK_01_2
    result = run_in_notebook(shell, MODEL, "w1.grad = ng.tensor(28.0)", cell)
    refused(result, "w1.grad holds a value a cell above assigned to it")
    assert "no backward ran, but the model is changed" in result.message
    assert "`w1.grad = None`" in result.message
    never_states(result, "a backward pass already ran", "computed by autograd")


def test_01_3_grads_set_by_assignment_are_all_named(shell):
    above = "w1.grad = ng.tensor(28.0)\nw3.grad = ng.tensor(10.0)"
    result = run_in_notebook(shell, MODEL, above, "l1_grad = 7\n" + CHECK_01_3)
    refused(result, "w1.grad, w3.grad holds a value a cell above assigned")
    assert "(and the same for the others)" in result.message


def test_01_2_typed_gradients_are_accepted_once_the_assigned_grad_is_set_back(shell):
    cell = "w1_grad, w2_grad, w3_grad = 28, 8, 10\n" + CHECK_01_2
    result = run_in_notebook(shell, MODEL, "w1.grad = ng.tensor(28.0)", "w1.grad = None", cell)
    assert result.passed, result.message


def test_01_2_a_backward_that_ran_after_an_assigned_grad_is_still_a_backward(shell):
    cell = "w1_grad, w2_grad, w3_grad = 28, 8, 10\n" + CHECK_01_2
    result = run_in_notebook(shell, MODEL, "w1.grad = ng.tensor(1.0)", "loss.backward()", cell)
    refused(result, "a backward pass already ran on the lesson's model")


def test_01_1_a_model_tensor_taken_from_a_dict_is_named_as_the_model_names_it(shell):
    cell = (
        "l1_value, l2_value, l3_value, l4_value = 2, 5, 8, 40\n"
        "loss_value = names['loss']\n" + CHECK_01_1
    )
    result = run_in_notebook(shell, MODEL, NAMES, cell)
    refused(result, "computed from the model's tensors (loss)")
    never_states(result, "loss_value", "40")


def test_01_1_typed_values_are_accepted_beside_the_dict_of_model_tensors(shell):
    cell = "l1_value, l2_value, l3_value, l4_value, loss_value = 2, 5, 8, 40, 40\n" + CHECK_01_1
    result = run_in_notebook(shell, MODEL, NAMES, cell)
    assert result.passed, result.message


@pytest.mark.parametrize(
    "y_next, container",
    [
        ([("AccumulateGrad",), None], "tuple"),
        ([["AccumulateGrad"], None], "list"),
    ],
)
def test_02_2_a_name_inside_a_tuple_is_told_so(capsys, y_next, container):
    result = rejected_on_first_try(
        capsys,
        ex.check_next_functions,
        ["MulBackward0", "AccumulateGrad"],
        y_next,
        says=f"an entry of your y_next is inside a {container}",
    )
    never_states(result, "AccumulateGrad", "MulBackward0", "which node writes")


def test_02_2_an_empty_string_for_none_is_told_it_is_not_none(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_next_functions,
        ["MulBackward0", "AccumulateGrad"],
        ["AccumulateGrad", ""],
        says="'' (an empty string) is not None",
    )
    never_states(result, "no gradient has to reach it")


@pytest.mark.parametrize(
    "z_next, y_next",
    [
        (("MulBackward0", "AccumulateGrad"), ("AccumulateGrad", None)),
        (["MulBackward0", "AccumulateGrad"], ["AccumulateGrad", None]),
    ],
)
def test_02_2_the_right_names_in_a_tuple_or_a_list_are_accepted(z_next, y_next):
    assert ex.check_next_functions(z_next, y_next).passed


def _first_leaf_only(t):
    return find_leaves(t)[:1]


def _leaves_with_a_dimension(t):
    return [v for v in find_leaves(t) if v.dim() > 0]


def _leaves_by_node_name(t):
    found, seen, stack = [], set(), [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node.name() in seen:
            continue
        seen.add(node.name())
        if node.name() == "AccumulateGrad":
            found.append(node.variable)
        stack.extend(fn for fn, _ in node.next_functions)
    return found


def test_02_3_a_walk_that_cuts_its_list_short_is_told_leaves_are_missing(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_find_leaves,
        _first_leaf_only,
        says="your walk returns fewer leaves than the graph holds, yet it meets every leaf's node",
    )
    never_states(result, "by a key", "merged", "three", "3 leaves")


def test_02_3_a_walk_that_filters_every_leaf_away_is_told_none_are_returned(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_find_leaves,
        _leaves_with_a_dimension,
        says="your walk returns no leaves at all, yet it meets every leaf's node",
    )
    never_states(result, "merged", "look alike")


def test_02_3_a_walk_that_remembers_nodes_by_name_is_still_told_its_key(capsys):
    rejected_on_first_try(
        capsys,
        ex.check_find_leaves,
        _leaves_by_node_name,
        says="by a key that two different ones can share",
    )


def test_02_3_the_right_walk_is_accepted():
    assert ex.check_find_leaves(find_leaves).passed


@pytest.mark.parametrize("wrap", ["set", "tuple", "iter"])
def test_02_3_leaves_returned_in_another_container_than_a_list_are_told_to_return_a_list(
    capsys, wrap
):
    def wrapped(t):
        return {"set": set, "tuple": tuple, "iter": iter}[wrap](find_leaves(t))

    result = outcome(capsys, ex.check_find_leaves, wrapped)
    assert not result.passed and "the exercise asks for a list" in result.message, result.message


@pytest.mark.parametrize(
    "above",
    [
        ("w1.grad = w2.grad = w3.grad = None",),
        ("w1.grad = ng.tensor(28.0)", "w1.grad = None"),
    ],
    ids=["reset", "assigned, then reset"],
)
def test_01_2_a_backward_after_grads_set_back_to_none_is_called_a_backward_pass(shell, above):
    cell = (
        "l = ((input * w1 + w2) * (input * w1 * w3)).mean()\nl.backward()\n"
        "w1_grad, w2_grad, w3_grad = [list(g.reshape(1))[0] for g in (w1.grad, w2.grad, w3.grad)]\n"
        + CHECK_01_2
    )
    result = run_in_notebook(shell, MODEL, *above, cell)
    refused(result, "a backward pass already ran")
    assert "set by assignment" not in result.message and "no backward ran" not in result.message
    never_states(result, "28", "8.0", "10.0")
