"""Checkers of lessons 1-5 refuse an answer that leaves global state changed (naming
it), take by-hand answers exact, see a backward pass run where the work is by hand,
walk deep graphs, and take flags given as a generator."""

from __future__ import annotations

import numpy as np
import pytest
from checker_results import never_states, outcome, rejected_on_first_try
from lesson_answers_01_05 import find_leaves, reset_detach, reset_ellipsis, reset_no_grad

import naivegraph as ng
from naivegraph.lessons import checking
from naivegraph.lessons import exercises as ex

# -- global state left changed: refused, named, and put back -----------------------------


def hook_leaving_anomaly_on(grad):
    ng.autograd.set_detect_anomaly(True)
    return grad * 2


def hook_leaving_float64(grad):
    ng.set_default_dtype(ng.float64)
    return grad * 2


def gradf_leaving_grad_off(x):
    ng.set_grad_enabled(False)
    return x * (x + 2) * ng.exp(x)


def walk_leaving_grad_off(t):
    ng.set_grad_enabled(False)
    return find_leaves(t)


def predict_leaving_anomaly_on(model, x):
    ng.autograd.set_detect_anomaly(True)
    with ng.no_grad():
        return model(x)


@pytest.mark.parametrize(
    "check, answer, says",
    [
        (ex.check_double_hook, hook_leaving_anomaly_on, "left anomaly detection on"),
        (ex.check_double_hook, hook_leaving_float64, "changed the default dtype"),
        (ex.check_manual_gradient, gradf_leaving_grad_off, "left grad mode off"),
        (ex.check_find_leaves, walk_leaving_grad_off, "left grad mode off"),
        (ex.check_inference, predict_leaving_anomaly_on, "left anomaly detection on"),
    ],
)
def test_an_answer_that_leaves_global_state_changed_is_refused_and_the_state_put_back(
    check, answer, says, capsys
):
    dtype = ng.get_default_dtype()
    result = rejected_on_first_try(capsys, check, answer, says=says)
    assert "you gave a function that left" in result.message
    never_states(result, "grad * 2", "return grad")
    assert ng.is_grad_enabled()
    assert not ng.autograd.is_anomaly_enabled()
    assert ng.get_default_dtype() == dtype


def test_the_state_hint_says_how_to_change_it_for_a_while_only(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_double_hook, hook_leaving_float64, says="try/finally"
    )
    assert "dtype=" in result.message
    result = rejected_on_first_try(
        capsys, ex.check_double_hook, hook_leaving_anomaly_on, says="detect_anomaly()"
    )


def hook_changing_state_for_a_while(grad):
    with ng.autograd.set_detect_anomaly(True), ng.no_grad():
        was = ng.get_default_dtype()
        ng.set_default_dtype(ng.float64)
        try:
            return grad * 2
        finally:
            ng.set_default_dtype(was)


def test_state_changed_for_a_while_only_is_accepted(capsys):
    assert outcome(capsys, ex.check_double_hook, hook_changing_state_for_a_while).passed


def test_reseeding_is_not_refused(capsys):
    def hook(grad):
        ng.manual_seed(0)
        return grad * 2

    assert outcome(capsys, ex.check_double_hook, hook).passed


def test_every_registered_checker_watches_the_state():
    assert all(getattr(fn, "_keeps_learner_state", False) for fn in checking.CHECKERS.values())


def test_a_watched_check_that_failed_for_the_state_counts_one_try(capsys):
    checking.TRIES.clear()

    @checking.keeps_learner_state
    def check(fn):
        fn()
        return checking.not_yet("00-9", ["something else.", "stronger."], gave="x")

    result = outcome(capsys, check, lambda: ng.set_grad_enabled(False))
    assert "left grad mode off" in result.message
    assert checking.TRIES["00-9"] == 1
    assert ng.is_grad_enabled()
    del checking.TRIES["00-9"]


# -- lesson 1 -----------------------------------------------------------------------------

MODEL = """
import naivegraph as ng
input = ng.ones([2, 2])
w1 = ng.tensor(2.0, requires_grad=True)
w2 = ng.tensor(3.0, requires_grad=True)
w3 = ng.tensor(4.0, requires_grad=True)
l1 = input * w1
l2 = l1 + w2
l3 = l1 * w3
l4 = l2 * l3
loss = l4.mean()
"""


def cell(capsys, code: str):
    """Run ``code`` as a notebook cell after the lesson's model cell; it sets ``r``."""
    space: dict = {"ex": ex, "np": np}
    exec(MODEL, space)
    checking.TRIES.clear()
    exec(code, space)
    printed = capsys.readouterr().out
    assert printed.strip() == space["r"].message
    return space["r"]


@pytest.mark.parametrize(
    "code, secret",
    [
        ("r = ex.check_forward_values(2, 5, 8, 40.0003, 40)", "= 40 "),
        ("r = ex.check_leaf_grads(28.0002, 8, 10)", "= 28 "),
        ("r = ex.check_l1_grad(7.00006)", "is 7 "),
    ],
)
def test_01_a_near_miss_of_a_by_hand_value_is_refused(code, secret, capsys):
    result = cell(capsys, code)
    assert result.status == "fail"
    assert "close, but not exact" in result.message
    hint = result.message.split("hint:", 1)[1]
    assert "40" not in hint and "28" not in hint and "7" not in hint
    never_states(result, secret)


@pytest.mark.parametrize(
    "code",
    [
        "r = ex.check_forward_values(2, 5, 8, 40, 40.0)",
        "r = ex.check_forward_values(*np.float32([2, 5, 8, 40, 40]))",
        "r = ex.check_leaf_grads(np.float32(28), 8.0, np.float32(10.0))",
        "r = ex.check_l1_grad(np.float32(0.25) * np.float32(28))",
    ],
)
def test_01_exact_values_and_their_float32_forms_are_accepted(code, capsys):
    assert cell(capsys, code).passed


@pytest.mark.parametrize(
    "code, says",
    [
        (
            "g = [g.item() for g in ng.autograd.grad(loss, [w1, w2, w3])]\n"
            "r = ex.check_leaf_grads(*g)",
            "the graph of `loss` was freed",
        ),
        (
            "loss.backward(retain_graph=True)\n"
            "r = ex.check_leaf_grads(w1.grad.item(), w2.grad.item(), w3.grad.item())",
            "w1, w2 or w3 holds a .grad",
        ),
        (
            "L1 = input * w1\nL1.retain_grad()\n((L1 + w2) * (L1 * w3)).mean().backward()\n"
            "r = ex.check_l1_grad(L1.grad[0, 0].item())",
            "w1, w2 or w3 holds a .grad",
        ),
    ],
)
def test_01_gradients_computed_by_autograd_in_the_cell_are_refused(code, says, capsys):
    result = cell(capsys, code)
    assert result.status == "fail"
    assert says in result.message
    assert "Re-run the notebook's cells from the top" in result.message
    never_states(result, "28", "= 8", "10", "= 7")


def test_01_gradients_computed_by_torch_are_refused(capsys):
    torch = pytest.importorskip("torch")
    code = (
        "t1, t2, t3 = (torch.tensor(v, requires_grad=True) for v in (2.0, 3.0, 4.0))\n"
        "T1 = torch.ones(2, 2) * t1\n((T1 + t2) * (T1 * t3)).mean().backward()\n"
        "r = ex.check_leaf_grads(t1.grad.item(), t2.grad.item(), t3.grad.item())"
    )
    space: dict = {"ex": ex, "torch": torch}
    exec(MODEL, space)
    checking.TRIES.clear()
    exec(code, space)
    result = space["r"]
    capsys.readouterr()
    assert result.status == "fail"
    assert "torch's autograd" in result.message
    never_states(result, "28", "10")


def test_01_1_a_negative_forward_value_is_not_told_about_the_chain_rule(capsys):
    result = cell(capsys, "r = ex.check_forward_values(2, 5, 8, -40, 40)")
    assert result.status == "fail"
    assert "the forward pass only adds and multiplies" in result.message
    never_states(result, "chain rule", "40 ")


def test_01_2_swapped_gradients_are_named_as_swapped(capsys):
    result = cell(capsys, "r = ex.check_leaf_grads(28, 10, 8)")
    assert result.status == "fail"
    assert "two of your gradients are swapped" in result.message
    never_states(result, "= 8", "= 10", "w2.grad = 10")


def test_01_right_answers_in_a_fresh_notebook_are_accepted(capsys):
    assert cell(capsys, "r = ex.check_leaf_grads(28, 8, 10)").passed
    assert cell(capsys, "r = ex.check_l1_grad(7)").passed


# -- lesson 2 -----------------------------------------------------------------------------


def find_leaves_keyed_by_node(t):
    found: dict = {}

    def visit(node):
        if node is None or node in found:
            return
        found[node] = node
        for fn, _ in node.next_functions:
            visit(fn)

    visit(t.grad_fn)
    return [node.variable for node in found if node.name() == "AccumulateGrad"]


def find_leaves_to_depth_6(t):
    out, seen = [], set()

    def visit(node, depth):
        if node is None or depth > 6 or id(node) in seen:
            return
        seen.add(id(node))
        if node.name() == "AccumulateGrad":
            out.append(node.variable)
        for fn, _ in node.next_functions:
            visit(fn, depth + 1)

    visit(t.grad_fn, 0)
    return out


def find_leaves_freezing_them(t):
    leaves = find_leaves(t)
    for leaf in leaves:
        leaf.requires_grad_(False)
    return leaves


def find_leaves_setting_grad(t):
    leaves = find_leaves(t)
    for leaf in leaves:
        leaf.grad = ng.zeros_like(leaf)
    return leaves


SEEN: set = set()


def find_leaves_with_a_module_set(t):
    leaves, stack = [], [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in SEEN:
            continue
        SEEN.add(id(node))
        if node.name() == "AccumulateGrad":
            leaves.append(node.variable)
        stack.extend(fn for fn, _ in node.next_functions)
    return leaves


def find_leaves_with_a_default_set(t, seen=set()):  # noqa: B006 - the mistake under test
    leaves, stack = [], [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if node.name() == "AccumulateGrad":
            leaves.append(node.variable)
        stack.extend(fn for fn, _ in node.next_functions)
    return leaves


@pytest.mark.parametrize(
    "walk, says",
    [
        (find_leaves_to_depth_6, "your walk stops before it reaches the leaf"),
        (find_leaves_freezing_them, "requires_grad switched off on a leaf it found"),
        (find_leaves_setting_grad, "a .grad set on a leaf it found"),
        (find_leaves_with_a_module_set, "keeps state between calls (the module-level SEEN)"),
        (
            find_leaves_with_a_default_set,
            "keeps state between calls (a mutable default argument of",
        ),
    ],
)
def test_02_3_walks_wrong_beyond_shallow_fresh_graphs_are_refused(walk, says, capsys):
    SEEN.clear()
    result = rejected_on_first_try(capsys, ex.check_find_leaves, walk, says=says)
    never_states(result, "stack.extend", "node.variable)", "seen.add")


@pytest.mark.parametrize("walk", [find_leaves, find_leaves_keyed_by_node])
def test_02_3_right_walks_are_accepted(walk, capsys):
    assert outcome(capsys, ex.check_find_leaves, walk).passed


def test_02_3_the_text_says_t_has_a_grad_fn():
    from pathlib import Path

    source = Path(ng.__file__).parent / "course" / "src" / "02_leaf_tensors.py"
    assert "so it has a `grad_fn` (a leaf `t` is not asked for)" in source.read_text()


@pytest.mark.parametrize(
    "check, args",
    [
        (
            ex.check_leaf_flags,
            (
                (v for v in (True, True, False, False)),
                (v for v in (True, False, True, True)),
            ),
        ),
        (ex.check_inplace_predictions, ((v for v in (True, False, True)),)),
        (ex.check_inplace_predictions, ([True, False, True],)),
        (ex.check_inplace_predictions, ((True, False, True),)),
    ],
)
def test_flags_given_as_a_generator_tuple_or_list_are_accepted(check, args, capsys):
    assert outcome(capsys, check, *args).passed


@pytest.mark.parametrize(
    "check, args",
    [
        (
            ex.check_leaf_flags,
            ({"a": True, "b": True, "c": False, "d": False}, [True, False, True, True]),
        ),
        (ex.check_inplace_predictions, ({"1": True, "2": False, "3": True},)),
    ],
)
def test_flags_given_as_a_dict_are_told_to_give_a_list_in_order(check, args, capsys):
    result = rejected_on_first_try(capsys, check, *args, says="that is a dict")
    never_states(result, "strings are not booleans", "True, False")


def test_wrong_flags_given_as_a_generator_get_their_hint(capsys):
    rejected_on_first_try(
        capsys,
        ex.check_inplace_predictions,
        (v for v in (True, True, True)),
        says="look again at snippet (2)",
    )


# -- lesson 4 -----------------------------------------------------------------------------


def test_04_1_versions_given_as_a_computed_tensor_are_told_to_give_plain_ints(capsys):
    computed = ng.tensor([0.0, 1, 2, 2, 3], requires_grad=True) * 1
    result = rejected_on_first_try(capsys, ex.check_versions, computed, says="that is a tensor")
    never_states(result, "fraction", "[0, 1, 2, 2, 3]")


def reset_forcing_grad_on(a):
    ng.set_grad_enabled(False)
    a.fill_(10.0)
    ng.set_grad_enabled(True)
    return a


def reset_slicing(a):
    with ng.no_grad():
        a[:] = 10.0
    return a


def reset_data_slicing(a):
    a.data[:] = 10.0
    return a


def reset_leaving_a_none_hook(a):
    with ng.no_grad():
        a.fill_(10.0)
    a.register_hook(lambda g: None)
    return a


def reset_leaving_anomaly_on(a):
    ng.autograd.set_detect_anomaly(True)
    with ng.no_grad():
        a.fill_(10.0)
    return a


@pytest.mark.parametrize(
    "reset, says",
    [
        (reset_forcing_grad_on, "left grad mode on where the caller had it off"),
        (reset_slicing, "fails on a 0-d leaf"),
        (reset_data_slicing, "fails on a 0-d leaf"),
        (reset_leaving_a_none_hook, "leaves a hook registered on `a`"),
        (reset_leaving_anomaly_on, "left anomaly detection on"),
    ],
)
def test_04_3_resets_right_only_for_the_checker_s_old_cases_are_refused(reset, says, capsys):
    result = rejected_on_first_try(capsys, ex.check_reset_leaf, reset, says=says)
    never_states(result, "fill_(10", "a[...]", "with ng.no_grad():\n")
    assert ng.is_grad_enabled()
    assert not ng.autograd.is_anomaly_enabled()


def reset_data(a):
    a.data.fill_(10.0)
    return a


def reset_copy(a):
    with ng.no_grad():
        a.copy_(ng.full_like(a, 10.0))
    return a


@pytest.mark.parametrize(
    "reset", [reset_no_grad, reset_detach, reset_data, reset_ellipsis, reset_copy]
)
def test_04_3_right_resets_are_accepted_with_the_new_cases(reset, capsys):
    assert outcome(capsys, ex.check_reset_leaf, reset).passed
