"""Every exercise checker accepts its reference answer, rejects typical wrong answers,
reports a blank answer as "not done yet", and never raises."""

from __future__ import annotations

import numpy as np
import pytest

import naivegraph as ng
from naivegraph.lessons import exercises as ex


# -- reference answers and typical mistakes, as functions where the checker wants one ------

def _static_model(body):
    import naivegraph.static as ns
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(2, 2))
        w1, w2, w3 = ns.Variable(2.0), ns.Variable(3.0), ns.Variable(4.0)
        loss = body(ns, x, w1, w2, w3)
    return g, x, loss


def _compiled(order):
    import naivegraph.static as ns
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(2, 2))
        w = [ns.Variable(2.0), ns.Variable(3.0), ns.Variable(4.0)]
        loss = ns.mean((x * w[0] + w[1]) * (x * w[0] * w[2]))
        grads = ns.gradients(loss, w)
    outs = [loss, *grads]
    return g.compile([x], [outs[i] for i in order])


def train_ok(model, opt, X, y):
    opt.zero_grad()
    loss = ng.nn.functional.cross_entropy(model(X), y)
    loss.backward()
    opt.step()
    return loss.item()


def train_no_zero(model, opt, X, y):
    loss = ng.nn.functional.cross_entropy(model(X), y)
    loss.backward()
    opt.step()
    return loss.item()


def train_no_step(model, opt, X, y):
    opt.zero_grad()
    loss = ng.nn.functional.cross_entropy(model(X), y)
    loss.backward()
    return loss.item()


def branchy(x):
    if x.sum() > 0:
        return x * 2
    return x * -1


import math  # noqa: E402

TABLE = {
    "mul": (lambda a, b: a * b, lambda a, b, i: b if i == 0 else a),
    "div": (lambda a, b: a / b, lambda a, b, i: 1 / b if i == 0 else -a / b ** 2),
    "sin": (lambda a: math.sin(a), lambda a, i: math.cos(a)),
    "exp": (lambda a: math.exp(a), lambda a, i: math.exp(a)),
}


def _table(**changes):
    table = dict(TABLE)
    table.update(changes)
    return table


J = [[2.0, 1.0], [1.0, math.cos(2.0)], [math.e * 2, math.e]]
MINIMUM = tuple(np.linalg.solve([[2.0, 0.5], [0.5, 4.0]], [2.0, -8.0]))

# exercise -> (checker, right args, [wrong args, ...], blank args)
CASES = {
    "06-1": (ex.check_static_model,
             _static_model(lambda ns, x, w1, w2, w3: ns.mean((x * w1 + w2) * (x * w1 * w3))),
             [_static_model(lambda ns, x, w1, w2, w3: ns.sum((x * w1 + w2) * (x * w1 * w3))),
              _static_model(lambda ns, x, w1, w2, w3: ns.mean((2.0 * w1 + w2) * (2.0 * w1 * w3))),
              _static_model(lambda ns, x, w1, w2, w3: ns.mean((x * w1 + w2) * (x * w3)))],
             (..., ..., ...)),
    "06-2": (ex.check_compiled_step, (_compiled([0, 1, 2, 3]),),
             [(_compiled([0, 3, 2, 1]),), (_compiled([0, 1]),), (lambda x: [40, 28, 8, 10],)],
             (...,)),
    "06-3": (ex.check_memory_plan, (2,), [(7,), (1,), ("two",)], (...,)),
    "07-2": (ex.check_trace_pitfall, ([2.0, 4.0], [10.0, 20.0]),
             [([10.0, 20.0], [10.0, 20.0]), ([2.0, 4.0], [2.0, 4.0]), ([1.0, 2.0], [10.0, 20.0])],
             (..., ...)),
    "07-1": (ex.check_where_fix, (lambda x: ng.where(x > 0, x * 2, x * -1),),
             [(branchy,), (lambda x: x * 2,), (lambda x: ng.where(x > 0, x * 2, x),)], (...,)),
    "08-1": (ex.check_derivative_table, (TABLE,),
             [(_table(mul=(lambda a, b: a * b, lambda a, b, i: a if i == 0 else b)),),
              (_table(div=(lambda a, b: a / b, lambda a, b, i: 1 / b if i == 0 else a / b ** 2)),),
              (_table(sin=(lambda a: math.sin(a), lambda a, i: -math.cos(a))),)], (...,)),
    "08-2": (ex.check_jacobian, (J,), [(np.array(J).T,), (np.array(J)[:, ::-1],),
                                       ([[2.0, 1.0], [1.0, 1.0], [5.44, 2.72]],)], (...,)),
    "08-3": (ex.check_minimum, (MINIMUM,), [((1.0, -2.0),), ((-2.0, 2.0),), ((np.nan, 1e9),)],
             (...,)),
    "09-1": (ex.check_accuracy_fn,
             (lambda l, y: float(np.mean(np.asarray(l).argmax(1) == np.asarray(y))),),
             [(lambda l, y: int(np.sum(np.asarray(l).argmax(1) == np.asarray(y))),),
              (lambda l, y: float(np.mean(np.asarray(l).argmax(0)[:len(y)] == np.asarray(y))),),
              (lambda l, y: float(np.mean(np.asarray(l).argmin(1) == np.asarray(y))),)], (...,)),
    "09-2": (ex.check_train_step, (train_ok,), [(train_no_zero,), (train_no_step,),
                                                 (lambda m, o, X, y: "loss",)], (...,)),
}


def test_every_checker_has_cases():
    # lessons 1-5 and 10-12 have their own files: test_checkers_01_05.py, ..._10_12.py
    assert set(CASES) == {e for e in ex.CHECKERS if "06" <= e[:2] <= "09"}


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
    for exercise in ("07-1", "09-1", "09-2"):
        result = ex.CHECKERS[exercise](empty)
        assert result.status == "todo", (exercise, result.message)


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


def test_a_crash_inside_naivegraph_is_reported_at_the_learners_line(capsys):
    import inspect

    import naivegraph.static as ns

    def f_fixed(x):
        return ns.where(x > 0, x * 2, x * -1)  # static where on a dynamic tensor: refused

    line = inspect.getsourcelines(f_fixed)[1] + 1
    assert not ex.check_where_fix(f_fixed)
    out = capsys.readouterr().out
    assert f"raised TypeError at line {line} of your code: dynamic tensors" in out
