"""Lessons 8 and 9: the lab's own code is seen however it is run (in a thread, with the
watch switched off, from a copied code object, through the table's own wrapper) and no
other engine does lesson 8's work; near misses that rounding, a cut-off or a test point
hid are refused with a hint naming them; the right answers are still accepted; the
notebooks run the lab's stand-ins without handing them out."""

from __future__ import annotations

import functools
import json
import math
import sys
import threading
import types
from pathlib import Path

import numpy as np
import pytest
from checker_results import never_states, outcome, rejected_on_first_try
from lesson_answers_08 import OPS, TABLE, Node, descend_with, jacobian_with, run_backward
from lesson_answers_08 import static_backward as right_static_backward

import naivegraph as ng
from naivegraph.lessons import checking
from naivegraph.lessons import exercises as ex
from naivegraph.lessons.checkers import lesson08, lesson09
from naivegraph.lessons.training import derivative_table

LABS = "your answer calls the lab's own version"
WATCH = "your answer switched off the lab's watch"


def _in_thread(fn, *args):
    out: dict = {}

    def run():
        try:
            out["value"] = fn(*args)
        except Exception as exc:  # raised again in the caller's thread
            out["error"] = exc

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    if "error" in out:
        raise out["error"]
    return out["value"]


def _watch_off(fn, *args):
    before = sys.getprofile()
    sys.setprofile(None)
    try:
        return fn(*args)
    finally:
        sys.setprofile(before)


def _copied(fn):
    return types.FunctionType(
        fn.__code__.replace(co_name="mine"), fn.__globals__, "mine", fn.__defaults__, fn.__closure__
    )


# ------------------------------------------------------------- the lab's own code
@pytest.mark.parametrize("way", [_in_thread, _watch_off], ids=["thread", "watch off"])
@pytest.mark.parametrize(
    "check, answer",
    [
        (
            ex.check_static_backward,
            lambda way: lambda nodes, loss: way(lesson08.reference("static_backward"), nodes, loss),
        ),
        (
            ex.check_run_backward,
            lambda way: lambda root: way(lesson08.reference("run_backward"), root),
        ),
        (
            ex.check_jacobian,
            lambda way: lambda F, x0, y0: way(lesson08.reference("jacobian", Node), F, x0, y0),
        ),
        (
            ex.check_train_step,
            lambda way: lambda m, o, X, y: way(lesson09.reference("train_step"), m, o, X, y),
        ),
        (
            ex.check_accuracy_fn,
            lambda way: lambda logits, y: way(lesson09.reference("accuracy"), logits, y),
        ),
    ],
    ids=["08-2", "08-3", "08-5", "09-2", "09-1"],
)
def test_the_labs_version_run_in_a_thread_or_with_the_watch_off_is_refused(
    capsys, check, answer, way
):
    result = rejected_on_first_try(
        capsys, check, answer(way), says=LABS if way is _in_thread else WATCH
    )
    never_states(result, "OPS[", "cross_entropy", "argmax")


def test_an_answer_that_removes_the_watch_for_good_is_refused(capsys):
    def static_backward(nodes, loss):
        sys.setprofile(None)
        right_static_backward(nodes, loss)

    result = rejected_on_first_try(capsys, ex.check_static_backward, static_backward, says=WATCH)
    assert sys.getprofile() is None
    never_states(result, "OPS[", "reversed(")


def test_a_copied_code_object_of_the_labs_function_is_refused(capsys):
    jacobian = _copied(lesson08.reference("jacobian", Node))
    result = rejected_on_first_try(
        capsys, ex.check_jacobian, lambda F, x0, y0: jacobian(F, x0, y0), says=LABS
    )
    never_states(result, "backward()", "requires_grad=True")
    handed_in = rejected_on_first_try(
        capsys, ex.check_jacobian, jacobian, says="that is the lab's version"
    )
    never_states(handed_in, "backward()")


def test_a_copied_code_object_of_a_row_of_the_labs_table_is_refused(capsys):
    table = {**TABLE, "mul": (TABLE["mul"][0], _copied(derivative_table()["mul"][1]))}
    result = rejected_on_first_try(capsys, ex.check_derivative_table, table, says=LABS)
    never_states(result, "b if i == 0 else a")


def test_the_tables_wrapper_from_the_checker_module_grants_no_exemption(capsys):
    rows = derivative_table()
    table = {**TABLE, "mul": (TABLE["mul"][0], lesson08._through_ops(rows["mul"][1], object()))}
    result = rejected_on_first_try(capsys, ex.check_derivative_table, table, says=LABS)
    never_states(result, "b if i == 0 else a")


@pytest.mark.parametrize(
    "wrap",
    [
        functools.partial,
        functools.singledispatch,
        lambda fn: functools.partial(ex.yours_or_labs, "08-2", "static_backward", lab=True),
    ],
    ids=["partial", "singledispatch", "yours_or_labs"],
)
def test_the_labs_version_behind_a_library_wrapper_is_refused(capsys, wrap):
    answer = wrap(lesson08.reference("static_backward"))
    result = rejected_on_first_try(capsys, ex.check_static_backward, answer, says="lab's")
    never_states(result, "OPS[", "reversed(")


def test_the_checkers_own_runs_need_no_helper_an_answer_can_call():
    assert not hasattr(lesson08.LabCalls, "checkers_own")
    assert not hasattr(lesson08.LabCalls, "paused")


def test_the_right_answers_are_still_accepted_under_the_watch(capsys):
    assert outcome(capsys, ex.check_derivative_table, TABLE)
    assert outcome(capsys, ex.check_static_backward, right_static_backward)
    assert outcome(capsys, ex.check_run_backward, run_backward)
    assert outcome(capsys, ex.check_jacobian, jacobian_with("method"))
    assert outcome(capsys, ex.check_gradient_descent, descend_with("method"))


def test_a_right_answer_that_runs_a_thread_of_its_own_is_accepted(capsys):
    def static_backward(nodes, loss):
        _in_thread(right_static_backward, nodes, loss)

    assert outcome(capsys, ex.check_static_backward, static_backward)


# ------------------------------------------------------------- other engines (lesson 8)
def test_08_1_a_derivative_by_sympy_is_refused(capsys):
    sympy = pytest.importorskip("sympy")
    s = sympy.Symbol("s")

    def d_sin(a, i):
        return float(sympy.diff(sympy.sin(s), s).subs(s, float(a)))

    table = {**TABLE, "sin": (TABLE["sin"][0], d_sin)}
    result = rejected_on_first_try(
        capsys, ex.check_derivative_table, table, says="your answer calls into sympy"
    )
    never_states(result, "math.cos", "cos(a)")


def test_08_1_a_derivative_by_mpmath_is_refused(capsys):
    mpmath = pytest.importorskip("mpmath")

    def d_sin(a, i):
        return float(mpmath.diff(mpmath.sin, float(a)))

    table = {**TABLE, "sin": (TABLE["sin"][0], d_sin)}
    result = rejected_on_first_try(
        capsys, ex.check_derivative_table, table, says="your answer calls into mpmath"
    )
    never_states(result, "math.cos", "cos(a)")


def test_08_1_a_derivative_by_torchs_engine_called_directly_is_refused(capsys):
    torch = pytest.importorskip("torch")

    def d_sin(a, i):
        t = torch.tensor(float(a), dtype=torch.float64, requires_grad=True)
        out = torch.sin(t)
        torch.autograd.Variable._execution_engine.run_backward(
            (out,), (torch.ones((), dtype=torch.float64),), False, False, (), True, True
        )
        return float(t.grad)

    table = {**TABLE, "sin": (TABLE["sin"][0], d_sin)}
    result = rejected_on_first_try(
        capsys, ex.check_derivative_table, table, says="your answer calls into torch"
    )
    never_states(result, "math.cos", "cos(a)")


# ------------------------------------------------------------------------- 08-1
def test_08_1_a_rule_right_only_near_the_first_points_is_refused(capsys):
    def d_mul(a, b, i):
        if abs(a) < 100 and abs(b) < 100:
            return b if i == 0 else a
        return 0.0

    table = {**TABLE, "mul": (TABLE["mul"][0], d_mul)}
    result = rejected_on_first_try(
        capsys, ex.check_derivative_table, table, says="the derivative of 'mul' with respect to its"
    )
    never_states(result, "b if i == 0 else a")


def test_08_1_the_exact_rules_are_accepted_far_out_and_at_0(capsys):
    assert outcome(capsys, ex.check_derivative_table, TABLE)
    other = {**TABLE, "sin": (math.sin, lambda a, i: math.sin(a + math.pi / 2))}
    assert outcome(capsys, ex.check_derivative_table, other)


# ------------------------------------------------------------------------- 08-3
def test_08_3_gradients_rounded_to_float32_are_refused(capsys):
    def rounded(root):
        order = run_backward_float32(root)
        return order

    result = rejected_on_first_try(capsys, ex.check_run_backward, rounded, says="float32")
    never_states(result, "OPS[", "reversed(")


def run_backward_float32(root):
    order, seen = [], set()

    def visit(node):
        if id(node) in seen:
            return
        seen.add(id(node))
        for inp in node.inputs:
            if inp.requires_grad:
                visit(inp)
        order.append(node)

    visit(root)
    grads = {id(root): 1.0}
    for node in reversed(order):
        g = grads.pop(id(node), 0.0)
        if node.is_leaf:
            node.grad += g
            continue
        if node.saved is None:
            raise RuntimeError("Trying to backward through the graph a second time")
        for k, inp in enumerate(node.inputs):
            if inp.requires_grad:
                grads[id(inp)] = float(
                    np.float32(grads.get(id(inp), 0.0) + g * OPS[node.grad_fn][1](*node.saved, k))
                )
    return order


# ------------------------------------------------------------------------- 08-5
def test_08_5_a_jacobian_in_float32_is_told_so(capsys):
    right = jacobian_with("method")

    def in_float32(F, x0, y0):
        return np.array(right(F, x0, y0), dtype=np.float32)

    result = rejected_on_first_try(
        capsys, ex.check_jacobian, in_float32, says="your Jacobian holds float32 numbers"
    )
    assert "an estimate" not in result.message
    never_states(result, "backward()")


# ------------------------------------------------------------------------- 08-6
def _descent(limit=None, stop_below=None):
    def gradient_descent(f, x0, y0, lr=0.1, steps=200):
        x, y = Node(x0, requires_grad=True), Node(y0, requires_grad=True)
        for _ in range(steps if limit is None else min(steps, limit)):
            x.grad = y.grad = 0.0
            f(x, y).backward()
            if stop_below is not None and abs(x.grad) + abs(y.grad) < stop_below:
                break
            x.value -= lr * x.grad
            y.value -= lr * y.grad
        return x.value, y.value

    return gradient_descent


@pytest.mark.parametrize(
    "early", [{"limit": 2000}, {"stop_below": 1e-14}], ids=["capped at 2000", "stops below 1e-14"]
)
def test_08_6_a_cap_or_a_stop_on_a_tiny_gradient_is_refused(capsys, early):
    result = rejected_on_first_try(
        capsys, ex.check_gradient_descent, _descent(**early), says="your descent stops early"
    )
    never_states(result, "-= lr", "x.grad = y.grad = 0.0")


def test_08_6_the_linear_descent_takes_thousands_of_steps():
    low, high = lesson08._EXACT_STEPS
    assert 2000 < low < high


# ------------------------------------------------------------------------- 09-1
def test_09_1_the_last_of_tied_classes_is_told_argmax_takes_the_first(capsys):
    def last_of_ties(logits, labels):
        L = np.asarray(logits)
        return float(np.mean((L.shape[1] - 1 - L[:, ::-1].argmax(axis=1)) == np.asarray(labels)))

    result = rejected_on_first_try(
        capsys, ex.check_accuracy_fn, last_of_ties, says="the first of them"
    )
    assert "right for two classes" not in result.message
    never_states(result, "argmax(axis=1) ==")


def test_09_1_float64_and_its_float32_rounding_are_accepted_and_other_roundings_told(capsys):
    def exact(logits, labels):
        return float(np.mean(np.asarray(logits).argmax(axis=1) == np.asarray(labels)))

    def in_float32(logits, labels):
        hits = np.asarray(logits).argmax(axis=1) == np.asarray(labels)
        return np.mean(hits.astype(np.float32))

    assert outcome(capsys, ex.check_accuracy_fn, exact)
    assert outcome(capsys, ex.check_accuracy_fn, in_float32)
    result = rejected_on_first_try(
        capsys,
        ex.check_accuracy_fn,
        lambda l, y: round(exact(l, y), 8),
        says="your accuracy is rounded",
    )
    never_states(result, "argmax(axis=1) ==")


# ------------------------------------------------------------------------- 09-2
def test_09_2_a_loss_scaled_by_one_plus_a_millionth_is_refused(capsys):
    def scaled(model, optimizer, X, y):
        optimizer.zero_grad()
        loss = ng.nn.functional.cross_entropy(model(X), y)
        (loss * (1 + 1e-6)).backward()
        optimizer.step()
        return loss.item()

    result = rejected_on_first_try(
        capsys, ex.check_train_step, scaled, says="times the gradient of the loss you return"
    )
    never_states(result, "zero_grad()", "cross_entropy(")


def test_09_2_the_right_steps_are_still_accepted(capsys):
    def right(model, optimizer, X, y):
        optimizer.zero_grad()
        loss = ng.nn.functional.cross_entropy(model(X), y)
        loss.backward()
        optimizer.step()
        return loss.item()

    def by_module(model, optimizer, X, y):
        loss = ng.nn.CrossEntropyLoss()(model(X), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return float(loss)

    assert outcome(capsys, ex.check_train_step, right)
    assert outcome(capsys, ex.check_train_step, by_module)


# ------------------------------------------------------------- the notebooks
NOTEBOOKS = Path(ex.__file__).resolve().parents[1] / "course"


@pytest.mark.parametrize("name", ["08_build_your_own", "09_capstone"])
def test_the_notebooks_bind_no_lab_function_to_a_name(name):
    cells = json.loads((NOTEBOOKS / f"{name}.ipynb").read_text())["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    for word in (
        "reference(",
        "import reference",
        "derivative_table()",
        "checkers.lesson0",
        "lessons.training",
        "globals()",
    ):
        assert word not in code, word
    assert "ex.yours_or_labs(" in code


@pytest.mark.parametrize(
    "name, cell",
    [("08_build_your_own", 0), ("09_capstone", 8)],
)
def test_the_notebooks_promise_no_more_than_the_checks_do(name, cell):
    text = "".join(json.loads((NOTEBOOKS / f"{name}.ipynb").read_text())["cells"][cell]["source"])
    assert "refuses any answer" not in text
    assert "not in your namespace" in text


def test_yours_or_labs_runs_the_labs_version_until_the_exercise_passes(monkeypatch):
    monkeypatch.setattr(checking, "SOLVED", set())
    logits, labels = np.array([[0.0, 1.0], [2.0, 1.0]]), np.array([1, 1])
    # the notebook's accuracy, still blank, among the caller's names
    monkeypatch.setitem(globals(), "accuracy", lambda logits, labels: ...)

    assert ex.yours_or_labs("09-1", "accuracy", logits, labels) == 0.5
    checking.SOLVED.add("09-1")
    assert ex.yours_or_labs("09-1", "accuracy", logits, labels) is Ellipsis
    assert ex.yours_or_labs("09-1", "accuracy", logits, labels, lab=True) == 0.5
    with pytest.raises(KeyError, match="does not ask for a function 'train_step'"):
        ex.yours_or_labs("09-1", "train_step", logits, labels)
