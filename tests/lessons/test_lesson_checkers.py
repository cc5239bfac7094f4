"""Every exercise checker accepts its reference answer, rejects typical wrong answers,
reports a blank answer as "not done yet", and never raises."""

from __future__ import annotations

import numpy as np
import pytest

import naivegraph as ng
from naivegraph.lessons import exercises as ex


# -- reference answers and typical mistakes, as functions where the checker wants one ------

def find_leaves(t):
    leaves, seen, stack = [], set(), [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if node.name() == "AccumulateGrad":
            leaves.append(node.variable)
        stack.extend(fn for fn, _ in node.next_functions)
    return leaves


def find_leaves_no_dedup(t):  # a leaf reached twice is reported twice -> same set, so
    return [n.variable for n, _ in t.grad_fn.next_functions if n is not None
            and n.name() == "AccumulateGrad"]  # only direct inputs: misses deeper leaves


def reset_no_grad(a):
    with ng.no_grad():
        a.fill_(10.0)
    return a


def reset_inplace_leaf(a):
    a[:] = 10.0
    return a


def reset_new_tensor(a):
    return ng.full([4], 10.0, requires_grad=True)


def setup_ok(model, n):
    for p in model.parameters():
        p.requires_grad = False
    model.fc = ng.nn.Linear(8, n)
    return ng.optim.SGD(model.fc.parameters(), lr=0.1, momentum=0.9)


def setup_not_frozen(model, n):
    model.fc = ng.nn.Linear(8, n)
    return ng.optim.SGD(model.fc.parameters(), lr=0.1)


def setup_all_params(model, n):
    for p in model.parameters():
        p.requires_grad = False
    model.fc = ng.nn.Linear(8, n)
    return ng.optim.SGD(model.parameters(), lr=0.1)


def predict_ok(model, x):
    with ng.no_grad():
        return model(x)


def predict_grad_off(model, x):
    ng.set_grad_enabled(False)
    return model(x)


# exercise -> (checker, right args, [wrong args, ...], blank args)
CASES = {
    "01-1": (ex.check_forward_values, (2, 5, 8, 40, 40),
             [(2, 5, 8, 40, 160), (2, 3, 8, 40, 40), (1, 5, 8, 40, 40)], (..., ..., ..., ..., ...)),
    "01-2": (ex.check_leaf_grads, (28, 8, 10), [(7, 2, 2.5), (28, 2, 10), (28, 8, 2)],
             (..., ..., ...)),
    "01-3": (ex.check_l1_grad, (7.0,), [(28.0,), (2.0,), (1.75,)], (...,)),
    "02-1": (ex.check_leaf_flags, ((True, True, False, False), (True, False, True, True)),
             [((True, True, True, True), (True, False, True, True)),
              ((True, True, False, False), (True, True, True, True)),
              (("True", "True", "False", "False"), (True, False, True, True))],
             (..., ...)),
    "02-2": (ex.check_next_functions, (["MulBackward0", "AccumulateGrad"], ["AccumulateGrad", None]),
             [(["AddBackward0", "AccumulateGrad"], ["AccumulateGrad", None]),
              (["MulBackward0", "AccumulateGrad"], ["AccumulateGrad", "AccumulateGrad"]),
              (["MulBackward0", None], ["AccumulateGrad", None])],
             (..., ...)),
    "02-3": (ex.check_find_leaves, (find_leaves,),
             [(find_leaves_no_dedup,), (lambda t: [],), (lambda t: t.grad_fn,)], (...,)),
    "03-1": (ex.check_double_hook, (lambda g: g * 2,),
             [(lambda g: g * 3,), (lambda g: g + 2,), (lambda g: g.sum(),)], (...,)),
    "03-2": (ex.check_accumulated_grad, (12.0,), [(6.0,), (18.0,), (0.0,)], (...,)),
    "03-3": (ex.check_manual_gradient, (lambda x: 2 * x * ng.exp(x) + x ** 2 * ng.exp(x),),
             [(lambda x: 2 * x * ng.exp(x),), (lambda x: x ** 2 * ng.exp(x),),
              (lambda x: undefined_name,)], (...,)),  # noqa: F821
    "03-4": (ex.check_second_derivative, (27.0, 18.0), [(27.0, 6.0), (27.0, 45.0), (9.0, 18.0)],
             (..., ...)),
    "03-5": (ex.check_vector_backward, ([2.0, 0.4, 0.06],),
             [([2.0, 4.0, 6.0],), ([1.0, 0.2, 0.03],), (2.46,)], (...,)),
    "04-1": (ex.check_versions, ([0, 1, 2, 2, 3],),
             [([0, 1, 2, 3, 4],), ([1, 2, 3, 3, 4],), ([0, 1, 1, 1, 2],)], (...,)),
    "04-2": (ex.check_reset_leaf, (reset_no_grad,),
             [(reset_inplace_leaf,), (reset_new_tensor,), (lambda a: a.detach_(),)], (...,)),
    "04-3": (ex.check_inplace_predictions, ((True, False, True),),
             [((True, True, True),), ((True, False, False),), ((False, False, True),)], (...,)),
    "05-1": (ex.check_requires_grad_flow, (False, True, False),
             [(True, True, False), (False, True, True), (False, False, False)], (..., ..., ...)),
    "05-2": (ex.check_finetune_setup, (setup_ok,),
             [(setup_not_frozen,), (setup_all_params,), (lambda m, n: setup_ok(m, 2),)], (...,)),
    "05-3": (ex.check_inference, (predict_ok,),
             [(lambda m, x: m(x),), (predict_grad_off,), (lambda m, x: m(x).sum(),)], (...,)),
}


def test_every_checker_has_cases():
    # lessons 6-9 are covered by test_checkers_06_09.py
    assert set(CASES) == {k for k in ex.CHECKERS if k[:2] not in ("06", "07", "08", "09")}


@pytest.mark.parametrize("exercise", sorted(CASES))
def test_checker_accepts_the_reference_answer(exercise, capsys):
    checker, right, _, _ = CASES[exercise]
    result = checker(*right)
    assert result, result.message
    assert result.exercise == exercise and result.status == "pass"
    assert capsys.readouterr().out.startswith(f"✓ correct [{exercise}]")


@pytest.mark.parametrize("exercise", sorted(CASES))
def test_checker_rejects_typical_wrong_answers(exercise, capsys):
    checker, _, wrongs, _ = CASES[exercise]
    assert len(wrongs) >= 2
    for wrong in wrongs:
        result = checker(*wrong)
        assert not result and result.status == "fail", (wrong, result.message)
        out = capsys.readouterr().out
        assert out.startswith(f"✗ not yet [{exercise}]"), out
    ng.set_grad_enabled(True)


@pytest.mark.parametrize("exercise", sorted(CASES))
def test_blank_answer_is_not_done_yet(exercise, capsys):
    checker, _, _, blank = CASES[exercise]
    result = checker(*blank)
    assert not result and not result.done
    assert capsys.readouterr().out.startswith(f"○ not done yet [{exercise}]")


def test_function_left_with_an_empty_body_is_not_done_yet():
    def empty(*args):
        ...
    for exercise in ("02-3", "03-1", "03-3", "04-2", "05-2", "05-3"):
        result = ex.CHECKERS[exercise](empty)
        assert result.status == "todo", (exercise, result.message)


def test_failure_messages_teach():
    result = ex.check_leaf_grads(7, 2, 2.5)
    assert "expected" in result.message and "got" in result.message and "hint:" in result.message
    assert "sum" in result.message


def test_result_repr_and_html():
    result = ex.check_l1_grad(7.0)
    assert repr(result) == result.message
    assert "✓ correct" in result._repr_html_()


def test_parse_results_reads_printed_lines():
    import nbformat
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("x")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout",
                                           text="hello\n✗ not yet [03-2]: expected 12, got 6\n")]
    nb.cells.append(cell)
    (outcome,) = ex.parse_results(nb)
    assert outcome.exercise == "03-2" and outcome.status == "fail"
