"""The checkers of lessons 1 to 3 on an eleventh round of answers: names read off the
graph in the checking cell; a gradient computed by autograd, read off .grad or made with
.item() where a prediction is asked; a hook that changes its gradient through .data or
ignores it; two answers swapped or in the wrong order; a walk that compares tensors with
`in`, or keeps state in a helper's default argument; a number typed as a tensor.  Each
wrong answer is refused with a hint naming the mistake and no answer; the right forms
are accepted."""

from __future__ import annotations

import numpy as np
import pytest
from checker_results import never_states, refused, rejected_on_first_try
from lesson_answers_01_05 import find_leaves

import naivegraph as ng
from naivegraph.lessons import checking
from naivegraph.lessons import exercises as ex


def run_cell(source: str, namespace: dict | None = None):
    """Run ``source`` as a notebook cell (top-level code of its own module) and give
    back the ``result`` it assigns."""
    namespace = {"ng": ng, "ex": ex, "np": np} if namespace is None else namespace
    checking.TRIES.clear()
    exec(compile(source, "<cell>", "exec"), namespace)
    return namespace["result"]


# -- lesson 2 -------------------------------------------------------------------------

LESSON_2_GRAPH = (
    "w = ng.tensor([1.0, 2.0], requires_grad=True)\n"
    "x = ng.tensor([3.0, 4.0])\n"
    "b = ng.tensor(1.0, requires_grad=True)\n"
    "y = w.mul(x)\n"
    "z = y.add(b)\n"
)


def test_02_2_names_read_off_the_graph_in_the_cell_are_refused():
    result = run_cell(
        LESSON_2_GRAPH + "result = ex.check_next_functions(\n"
        "    [n.name() if n else None for n, _ in z.grad_fn.next_functions],\n"
        "    [n.name() if n else None for n, _ in y.grad_fn.next_functions],\n"
        ")\n"
    )
    refused(result, "reads the answer off the graph")
    assert ".next_functions" in result.message
    never_states(result, "MulBackward0", "AccumulateGrad")


def test_02_2_typed_names_in_the_same_cell_as_the_graph_are_accepted():
    result = run_cell(
        LESSON_2_GRAPH + "result = ex.check_next_functions("
        "['MulBackward0', 'AccumulateGrad'], ['AccumulateGrad', None])\n"
    )
    assert result.passed, result.message


def test_02_2_the_two_lists_swapped_are_named_as_swapped(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_next_functions,
        ["AccumulateGrad", None],
        ["MulBackward0", "AccumulateGrad"],
        says="swapped",
    )
    never_states(result, "MulBackward0", "'AccumulateGrad'")


def test_02_2_y_next_in_reverse_order_is_told_the_order_of_the_inputs(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_next_functions,
        ["MulBackward0", "AccumulateGrad"],
        [None, "AccumulateGrad"],
        says="in the wrong order",
    )
    assert "w first, then x" in result.message
    never_states(result, "MulBackward0", "'AccumulateGrad', None")


def test_02_1_the_two_tuples_swapped_are_named_as_swapped(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_leaf_flags,
        (True, False, True, True),
        (True, True, False, False),
        says="swapped",
    )
    never_states(result, "(True, True, False, False)", "(True, False, True, True)")
    assert ex.check_leaf_flags((True, True, False, False), (True, False, True, True)).passed


def _walk_with_in(t):
    out, stack = [], [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None:
            continue
        if node.name() == "AccumulateGrad" and node.variable not in out:
            out.append(node.variable)
        stack.extend(fn for fn, _ in node.next_functions)
    return out


def test_02_3_a_walk_that_dedups_with_in_is_told_in_compares_with_equals(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_find_leaves, _walk_with_in, says="compare with =="
    )
    assert "Compare by identity" in result.message
    never_states(result, "seen.add(id(node))")
    assert ex.check_find_leaves(find_leaves).passed


def _helper_walk(node, out=[], seen=set()):  # noqa: B006 - the mistake under test
    if node is None or id(node) in seen:
        return out
    seen.add(id(node))
    if node.name() == "AccumulateGrad":
        out.append(node.variable)
    for fn, _ in node.next_functions:
        _helper_walk(fn)
    return out


def _walk_through_helper(t):
    return _helper_walk(t.grad_fn)


def test_02_3_a_mutable_default_argument_of_a_helper_is_named(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_find_leaves,
        _walk_through_helper,
        says="a mutable default argument of _helper_walk()",
    )
    assert "keeps its value between calls" in result.message
    assert "tensors from elsewhere" not in result.message


# -- lesson 3 -------------------------------------------------------------------------

LESSON_3_X = "x = ng.tensor(3.0, requires_grad=True)\ny = x ** 2\ny.backward(retain_graph=True)\n"


def lesson_3_namespace() -> dict:
    """The notebook after the cell that makes x and y and runs one backward."""
    namespace = {"ng": ng, "ex": ex, "np": np}
    exec(compile(LESSON_3_X, "<cell>", "exec"), namespace)
    return namespace


@pytest.mark.parametrize(
    "call, uses",
    [
        ("ex.check_accumulated_grad(x.grad.item() * 2)", ".grad and .item"),
        ("ex.check_accumulated_grad(2 * float(x.grad))", ".grad"),
    ],
    ids=["item-times-two", "float-times-two"],
)
def test_03_2_a_value_made_from_x_grad_in_the_cell_is_refused(call, uses):
    result = run_cell(f"result = {call}\n", lesson_3_namespace())
    refused(result, "computes the value instead of predicting it")
    assert f"reads {uses}" in result.message
    never_states(result, "12", "12.0")


@pytest.mark.parametrize("answer", ["12.0", "12", "ng.tensor(12.0)"])
def test_03_2_the_prediction_as_a_number_or_a_typed_tensor_is_accepted(answer):
    result = run_cell(f"result = ex.check_accumulated_grad({answer})\n", lesson_3_namespace())
    assert result.passed, result.message


@pytest.mark.parametrize(
    "cell",
    [
        "x = ng.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
        "result = ex.check_vector_backward("
        "ng.autograd.grad(x * x, [x], ng.tensor([1, 0.1, 0.01]))[0])\n",
        "result = ex.check_vector_backward((lambda x: (x * x).backward("
        "ng.tensor([1, 0.1, 0.01])) or x.grad)(ng.tensor([1.0, 2.0, 3.0], "
        "requires_grad=True)))\n",
    ],
    ids=["autograd-grad", "backward-in-a-lambda"],
)
def test_03_3_a_cell_that_computes_x_grad_is_refused(cell):
    result = run_cell(cell)
    refused(result, "computes x.grad instead of working it out")
    never_states(result, "0.4", "0.06")


def test_03_3_the_three_numbers_typed_are_accepted():
    assert run_cell("result = ex.check_vector_backward([2.0, 0.4, 0.06])\n").passed


def _double_through_data(grad):
    grad.data = grad.data * 2
    return grad


def _double(grad):
    return grad * 2


def test_03_1_a_hook_that_doubles_through_data_is_refused(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_double_hook, _double_through_data, says="IN PLACE"
    )
    never_states(result, "grad * 2", "return grad * 2")
    assert ex.check_double_hook(_double).passed


def _ones_times_two(grad):
    return ng.ones(grad.shape) * 2


def test_03_1_a_hook_that_ignores_the_incoming_gradient_is_told_so(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_double_hook, _ones_times_two, says="ignores the gradient it is given"
    )
    assert "doubled some gradients" not in result.message
    never_states(result, "grad * 2")


# -- lesson 1 -------------------------------------------------------------------------


@pytest.mark.parametrize("wrong", [10, 10.0])
def test_01_3_two_paths_multiplied_are_told_paths_add(wrong, capsys):
    result = rejected_on_first_try(capsys, ex.check_l1_grad, wrong, says="paths add, not multiply")
    never_states(result, "7", "7.0", "28")


@pytest.mark.parametrize("wrong", [3.25, 13.0])
def test_01_3_w3_left_off_the_path_through_l3_is_named(wrong, capsys):
    result = rejected_on_first_try(
        capsys, ex.check_l1_grad, wrong, says="the path through l3 = l1 * w3"
    )
    assert "which is w3, not 1" in result.message
    never_states(result, "7", "7.0", "28")
    assert ex.check_l1_grad(7.0).passed


@pytest.mark.parametrize(
    "answer, pair",
    [((10.0, 8.0, 28.0), "w1.grad and w3.grad"), ((8.0, 28.0, 10.0), "w1.grad and w2.grad")],
    ids=["w1-w3", "w1-w2"],
)
def test_01_2_two_gradients_swapped_are_named(answer, pair, capsys):
    result = rejected_on_first_try(
        capsys, ex.check_leaf_grads, *answer, says=f"two of your gradients are swapped, {pair}"
    )
    never_states(result, "28, 8, 10")
    assert ex.check_leaf_grads(28.0, 8.0, 10.0).passed


def test_01_2_the_w1_recipe_names_the_concept_not_the_formula(capsys):
    checking.TRIES.clear()
    ex.check_leaf_grads(1.0, 8.0, 10.0)
    result = ex.check_leaf_grads(1.0, 8.0, 10.0)
    capsys.readouterr()
    refused(result, "l1's two paths to l4")
    assert "d l4/d l2 * d l2/d l1" not in result.message


@pytest.mark.parametrize("loss", [40.001, 40.0001, 39.99])
def test_01_1_a_loss_within_a_thousandth_is_told_close_but_not_exact(loss, capsys):
    result = rejected_on_first_try(
        capsys, ex.check_forward_values, 2, 5, 8, 40, loss, says="close, but not exact"
    )
    assert "redo that line" not in result.message
    assert ex.check_forward_values(2, 5, 8, 40, 40).passed


def test_01_1_a_loss_further_off_is_sent_back_to_the_model_cell(capsys):
    rejected_on_first_try(
        capsys, ex.check_forward_values, 2, 5, 8, 40, 40.5, says="redo that line by hand"
    )


def test_03_4_a_forgotten_e_to_the_x_is_told_a_factor_is_missing(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_manual_gradient, lambda x: 2 * x + x**2, says="A factor is missing"
    )
    assert "last digits" not in result.message
    never_states(result, "2 * x * ng.exp(x)", "(2 * x + x**2) * ng.exp(x)")
    assert ex.check_manual_gradient(lambda x: (2 * x + x**2) * ng.exp(x)).passed


def test_03_4_e_typed_as_a_number_is_still_told_to_use_exp(capsys):
    rejected_on_first_try(
        capsys,
        ex.check_manual_gradient,
        lambda x: (2 * x + x**2) * 2.718281828**x,
        says="use ng.exp",
    )


def test_03_3_a_nudged_answer_is_shown_with_all_its_digits(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_vector_backward, [2, 0.4, 0.0600001], says="near the products"
    )
    assert "you gave [2.0, 0.4, 0.0600001]" in result.message


def test_03_3_the_right_numbers_reversed_are_named_as_reversed(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_vector_backward, [0.06, 0.4, 2], says="in reverse order"
    )
    never_states(result, "0.06", "0.4")


def test_03_3_one_element_off_is_named_by_its_index(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_vector_backward, [2, 0.4, 0.6], says="element 2 (x = 3) is not"
    )
    never_states(result, "0.06")


def test_03_3_the_second_hint_names_the_idea_not_the_recipe(capsys):
    checking.TRIES.clear()
    ex.check_vector_backward([1, 1, 1])
    result = ex.check_vector_backward([1, 1, 1])
    capsys.readouterr()
    refused(result, "Jacobian is diagonal")
    assert "with dy/dx = 2x" not in result.message


def test_03_5_a_function_returning_none_is_not_shown_the_return_line(capsys):
    checking.TRIES.clear()

    def derivatives(f, x):
        (first,) = ng.autograd.grad(f(x), [x], create_graph=True)
        (second,) = ng.autograd.grad(first, [x])

    result = ex.check_second_derivative(derivatives)
    capsys.readouterr()
    assert "return first, second" not in result.message
    assert "both derivatives" in result.message
