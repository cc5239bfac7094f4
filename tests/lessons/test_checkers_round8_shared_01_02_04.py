"""Every checker that takes the learner's function refuses one that keeps state between
calls (a counter in a global, a closure, an attribute of the function or of a module, a
global iterator), naming that state, while functions that only log through a method call
or write to their arguments are still taken; lessons 1, 2 and 4 refuse what a second run
through them still let pass."""

from __future__ import annotations

import itertools

import pytest
from checker_results import never_states, outcome, rejected_on_first_try
from lesson_answers_01_05 import find_leaves
from lesson_answers_01_05 import reset_data as reset_through_data_in_place
from lesson_answers_01_05 import reset_detach as reset_detached

import naivegraph as ng
from naivegraph.lessons import checking
from naivegraph.lessons import exercises as ex

# -- functions that keep state between calls ---------------------------------------------


def find_leaves_counting_on_itself(t):
    find_leaves_counting_on_itself.n = getattr(find_leaves_counting_on_itself, "n", 0) + 1
    if find_leaves_counting_on_itself.n > 12:
        return []
    return find_leaves(t)


TICKS = itertools.count()


def hook_counting_with_itertools(grad):
    return grad * 2 if next(TICKS) < 100 else grad


def hook_counting_on_the_module(grad):
    ng._calls = getattr(ng, "_calls", 0) + 1
    return grad * 2 if ng._calls < 100 else grad


def gradf_counting_on_itself(x):
    gradf_counting_on_itself.n = getattr(gradf_counting_on_itself, "n", 0) + 1
    if gradf_counting_on_itself.n > 2:
        return 2 * x * ng.exp(x)
    return (x**2 + 2 * x) * ng.exp(x)


def derivatives_counting_with_setattr(f, x):
    setattr(derivatives_counting_with_setattr, "n", 1)  # noqa: B010 - the form under test
    (first,) = ng.autograd.grad(f(x), [x], create_graph=True)
    (second,) = ng.autograd.grad(first, [x])
    return first, second


CALLS = [0]


def reset_counting_in_a_list(a):
    CALLS[0] += 1
    if CALLS[0] <= 8:
        with ng.no_grad():
            a.fill_(10.0)
    return a


COUNT = 0


def predict_counting_in_a_global(model, x):
    global COUNT
    COUNT += 1
    if COUNT > 6:
        return model(x)
    with ng.no_grad():
        return model(x)


def hook_counting_in_a_closure():
    n = 0

    def hook(grad):
        nonlocal n
        n += 1
        return grad * 2 if n < 100 else grad

    return hook


@pytest.mark.parametrize(
    "check, answer, state",
    [
        (ex.check_find_leaves, find_leaves_counting_on_itself, "find_leaves_counting_on_itself.n"),
        (ex.check_double_hook, hook_counting_with_itertools, "next(TICKS)"),
        (ex.check_double_hook, hook_counting_on_the_module, "ng._calls"),
        (ex.check_double_hook, hook_counting_in_a_closure(), "(n)"),
        (ex.check_manual_gradient, gradf_counting_on_itself, "gradf_counting_on_itself.n"),
        (
            ex.check_second_derivative,
            derivatives_counting_with_setattr,
            "setattr(derivatives_counting_with_setattr)",
        ),
        (ex.check_reset_leaf, reset_counting_in_a_list, "(CALLS)"),
        (ex.check_inference, predict_counting_in_a_global, "(COUNT)"),
    ],
)
def test_a_function_that_keeps_state_between_calls_is_refused_naming_the_state(
    check, answer, state, capsys
):
    result = rejected_on_first_try(
        capsys, check, answer, says="your function keeps state between calls ("
    )
    assert state in result.message
    assert "must give the same result for the same input" in result.message
    never_states(result, "fill_(10", "no_grad()", "ng.exp(x)", "create_graph")


def hook_logging_through_a_method(grad, log=[]):  # noqa: B006 - a log, read by nobody
    LOG.append(grad.detach())
    log.append(1)
    return grad * 2


LOG: list = []


def reset_writing_its_argument(a):
    with ng.no_grad():
        a.fill_(10.0)
    a.was_reset = True
    return a


@pytest.mark.parametrize(
    "check, answer",
    [
        (ex.check_double_hook, hook_logging_through_a_method),
        (ex.check_reset_leaf, reset_writing_its_argument),
        (ex.check_find_leaves, find_leaves),
    ],
)
def test_a_function_that_logs_through_a_method_or_writes_its_argument_is_taken(
    check, answer, capsys
):
    assert outcome(capsys, check, answer).passed


def test_state_kept_between_calls_names_globals_closures_and_attributes_only():
    def local_state(x):
        seen = {}

        def visit(y):
            seen[id(y)] = y  # the enclosing call's own dict: fresh on every call

        visit(x)
        return list(seen.values())

    assert checking.state_kept_between_calls(local_state) is None
    assert checking.state_kept_between_calls(find_leaves) is None
    assert checking.state_kept_between_calls(reset_counting_in_a_list) == "CALLS"
    assert checking.state_kept_between_calls(predict_counting_in_a_global) == "COUNT"
    assert checking.state_kept_between_calls(hook_counting_in_a_closure()) == "n"
    assert checking.state_kept_between_calls(print) is None


# -- 02-3: a deeper graph, a walk that changes the graph or runs the lab's walk -----------


def find_leaves_to_depth_60(t):
    leaves, seen = [], set()

    def visit(node, depth):
        if node is None or depth > 60 or id(node) in seen:
            return
        seen.add(id(node))
        if node.name() == "AccumulateGrad":
            leaves.append(node.variable)
        for child, _ in node.next_functions:
            visit(child, depth + 1)

    visit(t.grad_fn, 0)
    return leaves


def find_leaves_recursive(t):  # one frame per node: still right on the deepest graph
    found = {}

    def visit(node):
        if node is None or id(node) in found:
            return
        found[id(node)] = node
        for child, _ in node.next_functions:
            visit(child)

    visit(t.grad_fn)
    return [n.variable for n in found.values() if n.name() == "AccumulateGrad"]


def find_leaves_zeroing_their_gradients(t):
    leaves = find_leaves(t)
    for leaf in leaves:
        leaf.register_hook(lambda g: g * 0)
    return leaves


def find_leaves_scaling_them(t):
    leaves = find_leaves(t)
    with ng.no_grad():
        for leaf in leaves:
            leaf.mul_(0.0)
    return leaves


def find_leaves_adding_nothing_in_place(t):
    leaves = find_leaves(t)
    with ng.no_grad():
        for leaf in leaves:
            leaf.add_(0.0)
    return leaves


def find_leaves_retaining_t(t):
    t.retain_grad()
    return find_leaves(t)


def find_leaves_by_the_engine(t):
    from naivegraph.dynamic.engine import topological_order

    order = topological_order([t.grad_fn])
    return [n.variable for n in order if n.name() == "AccumulateGrad"]


@pytest.mark.parametrize(
    "walk, says",
    [
        (find_leaves_to_depth_60, "your walk stops before it reaches the leaf"),
        (find_leaves_zeroing_their_gradients, "a hook registered on a leaf"),
        (find_leaves_scaling_them, "the values of a leaf it found changed"),
        (find_leaves_adding_nothing_in_place, "changed in place (its _version moved on)"),
        (find_leaves_retaining_t, "t.retain_grad() called on the tensor it was given"),
        (find_leaves_by_the_engine, "calls the lab's own graph code (topological_order"),
    ],
)
def test_find_leaves_refuses_a_walk_that_stops_early_changes_the_graph_or_runs_the_lab(
    walk, says, capsys
):
    result = rejected_on_first_try(capsys, ex.check_find_leaves, walk, says=says)
    never_states(result, "id(node) in seen", "seen.add", "stack.extend")


def test_find_leaves_takes_a_recursive_walk_on_the_deepest_graph(capsys):
    assert outcome(capsys, ex.check_find_leaves, find_leaves_recursive).passed


def test_a_walk_that_runs_backward_then_crashes_is_reported_on_one_line(capsys):
    def walk(t):
        t.backward(retain_graph=True)
        raise ValueError("no leaves here")

    result = rejected_on_first_try(capsys, ex.check_find_leaves, walk, says="runs a backward")
    assert "ValueError" not in result.message


def test_a_walk_that_only_crashes_is_reported_with_its_error(capsys):
    def walk(t):
        raise ValueError("no leaves here")

    rejected_on_first_try(capsys, ex.check_find_leaves, walk, says="your code raised ValueError")


# -- 01: a complex number, a typed tensor of several numbers --------------------------


def test_leaf_grads_typed_as_complex_numbers_are_told_to_be_real(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_leaf_grads, 28 + 0j, 8, 10, says="that is a complex number"
    )
    assert "you gave a complex number" in result.message
    never_states(result, "28", "= 7")


def test_a_typed_tensor_of_four_numbers_for_l1_grad_is_told_one_number_is_asked(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_l1_grad, ng.full([2, 2], 7.0), says="ONE number is asked"
    )
    assert "you gave a tensor of several numbers" in result.message
    never_states(result, "7")


@pytest.mark.parametrize("answers", [(28, 8, 10), (28.0, 8.0, 10.0)])
def test_leaf_grads_typed_as_plain_numbers_are_still_taken(answers, capsys):
    assert outcome(capsys, ex.check_leaf_grads, *answers).passed


# -- 04-3: a float64 leaf, non-finite values, a .grad set, a near miss ------------------


def reset_through_data(a):
    a.data = ng.full(tuple(a.shape), 10.0)
    return a


def reset_by_subtracting_itself(a):
    with ng.no_grad():
        a.sub_(a).add_(10.0)
    return a


def reset_by_multiplying_by_zero(a):
    with ng.no_grad():
        a.mul_(0).add_(10.0)
    return a


def reset_with_a_zero_grad(a):
    with ng.no_grad():
        a.fill_(10.0)
    a.grad = ng.zeros_like(a)
    return a


def reset_near_ten(a):
    with ng.no_grad():
        a.fill_(10.000001)
    return a


@pytest.mark.parametrize(
    "reset, says",
    [
        (reset_through_data, "your reset changed the dtype of `a` from float64 to float32"),
        (reset_by_subtracting_itself, "the elements that held nan, inf and -inf are nan now"),
        (reset_by_multiplying_by_zero, "the elements that held nan, inf and -inf are nan now"),
        (reset_with_a_zero_grad, "a .grad of zeros is one all the same"),
    ],
)
def test_reset_refuses_a_new_dtype_a_value_computed_from_a_and_a_grad_set(reset, says, capsys):
    result = rejected_on_first_try(capsys, ex.check_reset_leaf, reset, says=says)
    never_states(result, "fill_(", "no_grad()")


def test_a_reset_near_ten_shows_the_digits_of_the_near_miss(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_reset_leaf, reset_near_ten, says="close, but not exact"
    )
    assert "you gave a = [10.000001," in result.message


@pytest.mark.parametrize(
    "reset", [reset_writing_its_argument, reset_detached, reset_through_data_in_place]
)
def test_a_reset_in_place_is_still_taken_on_every_leaf(reset, capsys):
    assert outcome(capsys, ex.check_reset_leaf, reset).passed
