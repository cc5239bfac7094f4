"""Exercise checkers for the lessons, and the tools that run lesson notebooks.

Every checker takes the learner's answer and returns a :class:`Result`:

* truthy when the answer is right, falsy otherwise;
* it prints one line: ``✓ correct [01-2]: ...``, ``✗ not yet [01-2]: expected ...,
  got ...; hint: ...`` or ``○ not done yet [01-2]: ...``;
* it never raises.  An answer still left as the placeholder ``...`` (or ``None``)
  reports "not done yet", so "Run All" reaches the last cell of a notebook.

>>> r = check_leaf_grads(28, 8, 10)
✓ correct [01-2]: w1.grad = 28, w2.grad = 8, w3.grad = 10.
>>> bool(r)
True
>>> bool(check_leaf_grads(..., 8, 10))
○ not done yet [01-2]: replace every `...` with your answer, then run the cell again.
False

Notebook helpers: :func:`solutions_notebook` swaps each exercise's reference
solution (kept in the cell metadata) into a notebook, and :func:`run_notebook`
executes a notebook and collects the exercise results printed by its cells.
"""

from __future__ import annotations

import copy
import html
import math
import re
import traceback
from pathlib import Path
from typing import Any, Callable, NamedTuple

import numpy as np

import naivegraph as ng
import naivegraph.static as ns

__all__ = [
    "Result", "CHECKERS", "solutions_notebook", "run_notebook", "NotebookRun",
    "parse_results", "exercise_ids",
]

PASS, FAIL, TODO = "pass", "fail", "todo"
_SYMBOL = {PASS: "✓ correct", FAIL: "✗ not yet", TODO: "○ not done yet"}
_LINE = re.compile(r"^(✓ correct|✗ not yet|○ not done yet) \[([\w.-]+)\]: ?(.*)$")
_STATUS_OF = {v: k for k, v in _SYMBOL.items()}
TODO_MESSAGE = "replace every `...` with your answer, then run the cell again."


# ----------------------------------------------------------------------------------
# Result
# ----------------------------------------------------------------------------------


def _execution_count() -> int | None:
    try:
        from IPython import get_ipython
    except Exception:  # pragma: no cover - IPython is optional
        return None
    shell = get_ipython()
    return getattr(shell, "execution_count", None) if shell is not None else None


class Result:
    """The outcome of one exercise check: truthy on pass, with a readable message."""

    def __init__(self, exercise: str, status: str, message: str) -> None:
        self.exercise = exercise
        self.status = status
        self.detail = message
        self._shown_in = _execution_count()

    @property
    def passed(self) -> bool:
        return self.status == PASS

    @property
    def done(self) -> bool:
        """False while the learner has not answered yet."""
        return self.status != TODO

    @property
    def message(self) -> str:
        return f"{_SYMBOL[self.status]} [{self.exercise}]: {self.detail}"

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        return self.message

    def _repr_html_(self) -> str:
        colour = {PASS: "#1a7f37", FAIL: "#b42318", TODO: "#6b7280"}[self.status]
        return (f'<div style="border-left:4px solid {colour};padding:2px 8px;'
                f'font-family:monospace;white-space:pre-wrap">{html.escape(self.message)}</div>')

    def _ipython_display_(self) -> None:
        # The checker already printed the message in the cell that made this result;
        # show it again only when the result is displayed from a later cell.
        if self._shown_in is not None and self._shown_in == _execution_count():
            return
        from IPython.display import display
        display({"text/plain": self.message, "text/html": self._repr_html_()}, raw=True)


def _report(exercise: str, status: str, message: str) -> Result:
    result = Result(exercise, status, message)
    print(result.message, flush=True)
    return result


def _todo(exercise: str, extra: str = "") -> Result:
    return _report(exercise, TODO, TODO_MESSAGE + (" " + extra if extra else ""))


def _ok(exercise: str, message: str) -> Result:
    return _report(exercise, PASS, message)


def _wrong(exercise: str, expected: str, got: str, hint: str) -> Result:
    return _report(exercise, FAIL, f"expected {expected}, got {got}; hint: {hint}")


def _fail(exercise: str, message: str) -> Result:
    return _report(exercise, FAIL, message)


# ----------------------------------------------------------------------------------
# Helpers shared by the checkers
# ----------------------------------------------------------------------------------


def _is_blank(x: Any, none_is_blank: bool = True) -> bool:
    """The placeholder ``...`` anywhere in the answer (and ``None`` at the top)."""
    if x is Ellipsis or (none_is_blank and x is None):
        return True
    if isinstance(x, (tuple, list)):
        return any(_is_blank(v, none_is_blank=False) for v in x)
    if isinstance(x, dict):
        return any(_is_blank(v, none_is_blank=False) for v in x.values())
    return False


def _array(x: Any) -> np.ndarray:
    """A float array from a number, list, numpy array or naivegraph tensor."""
    if hasattr(x, "detach") and hasattr(x, "numpy"):
        x = x.detach().numpy()
    elif hasattr(x, "value") and not isinstance(x, (int, float, np.ndarray)):
        x = x.value  # a static node that has run
    return np.asarray(x, dtype=np.float64)


def _show(x: Any) -> str:
    try:
        a = _array(x)
    except Exception:
        return repr(x) if len(repr(x)) < 80 else repr(x)[:77] + "..."
    if a.ndim == 0:
        v = float(a)
        return f"{v:g}"
    if a.size <= 8:
        return np.array2string(a, precision=4, separator=", ", suppress_small=True)
    return f"an array of shape {a.shape}"


def _close(got: Any, expected: Any, atol: float = 1e-6, rtol: float = 1e-5,
           shape_free: bool = True) -> bool:
    """True when ``got`` equals ``expected`` (numbers broadcast when ``shape_free``)."""
    try:
        g = _array(got)
    except Exception:
        return False
    e = np.asarray(expected, dtype=np.float64)
    if not shape_free and g.shape != e.shape:
        return False
    try:
        return bool(np.allclose(g, e, atol=atol, rtol=rtol)) and np.broadcast(g, e).shape == \
            np.broadcast_shapes(g.shape, e.shape)
    except ValueError:
        return False


def _hint_for(got: Any, mistakes: list[tuple[tuple, str]], otherwise: str) -> str:
    """The hint of the first known wrong answer that ``got`` equals, else ``otherwise``.

    ``mistakes`` lists ``(wrong values, hint)``: the values a common misconception gives.
    """
    for values, hint in mistakes:
        if any(_close(got, v) for v in values):
            return hint
    return otherwise


def _call(exercise: str, fn: Callable, *args, **kwargs):
    """Call the learner's function; a crash becomes a readable failure (not an exception)."""
    try:
        return True, fn(*args, **kwargs)
    except Exception as exc:  # any error is reported to the learner
        frames = traceback.extract_tb(exc.__traceback__)[1:]  # skip this helper's frame
        package = str(Path(__file__).resolve().parent)
        yours = [f for f in frames if not str(Path(f.filename).resolve()).startswith(package)]
        where = f" at line {yours[-1].lineno} of your code" if yours else ""
        first = str(exc).splitlines()[0] if str(exc) else ""
        return False, _fail(exercise, f"your code raised {type(exc).__name__}: {first}{where}; "
                                      "read the error, fix the cell and run it again.")


def _not_callable(exercise: str, fn: Any) -> Result | None:
    if _is_blank(fn):
        return _todo(exercise)
    if not callable(fn):
        return _fail(exercise, f"expected a function, got {type(fn).__name__}; hint: define it "
                               "with `def name(...):` and pass the name without calling it.")
    return None


def _returned_blank(exercise: str, value: Any) -> Result | None:
    if value is Ellipsis or value is None:
        return _todo(exercise, "(your function returned None: fill in its body and make it "
                               "`return` the answer.)")
    return None


def _answer(exercise: str, fn: Callable, *args) -> tuple[Result | None, Any]:
    """Call the learner's function: ``(None, value)``, or ``(result, None)`` when it
    raised or returned nothing, ``result`` being what the checker should return."""
    ok, value = _call(exercise, fn, *args)
    if not ok:
        return value, None
    blank = _returned_blank(exercise, value)
    return (blank, None) if blank is not None else (None, value)


CHECKERS: dict[str, Callable] = {}


def _checker(exercise: str):
    def register(fn: Callable) -> Callable:
        fn.exercise = exercise
        CHECKERS[exercise] = fn
        return fn
    return register


# ----------------------------------------------------------------------------------
# Lesson 01: computational graphs
# ----------------------------------------------------------------------------------


@_checker("01-1")
def check_forward_values(l1, l2, l3, l4, loss) -> Result:
    """The forward pass of the l1..l4 model, one element each, computed by hand."""
    ex = "01-1"
    answers = (l1, l2, l3, l4, loss)
    if _is_blank(answers):
        return _todo(ex)
    expected = (2.0, 5.0, 8.0, 40.0, 40.0)
    names = ("l1", "l2", "l3", "l4", "loss")
    hints = {
        "l1": "l1 = input * w1 and every input element is 1.",
        "l2": "l2 = l1 + w2: add w2 = 3 to each element of l1.",
        "l3": "l3 = l1 * w3: multiply l1 by w3 = 4.",
        "l4": "l4 = l2 * l3, element by element.",
        "loss": "loss is the mean of four equal numbers.",
    }
    for name, got, want in zip(names, answers, expected):
        if not _close(got, want):
            return _wrong(ex, f"{name} = {want:g}", f"{name} = {_show(got)}", hints[name])
    return _ok(ex, "l1 = 2, l2 = 5, l3 = 8, l4 = 40 and loss = 40 for every element.")


@_checker("01-2")
def check_leaf_grads(w1_grad, w2_grad, w3_grad) -> Result:
    """d loss / d w1, w2, w3 for the l1..l4 model, derived by hand."""
    ex = "01-2"
    if _is_blank((w1_grad, w2_grad, w3_grad)):
        return _todo(ex)
    got = (w1_grad, w2_grad, w3_grad)
    per_element = (7.0, 2.0, 2.5)
    for name, g, want, one in zip(("w1", "w2", "w3"), got, (28.0, 8.0, 10.0), per_element):
        if _close(g, want):
            continue
        if _close(g, one):
            hint = (f"{_show(g)} is the contribution of ONE element. {name} is a scalar broadcast "
                    "over the 2x2 input, so its gradient is the sum over all four elements.")
        elif _close(g, want / 4 / 4) or _close(g, want * 4):
            hint = "count the factor 1/4 from the mean exactly once, then sum over 4 elements."
        else:
            hint = {"w1": "w1 reaches the loss through both l2 and l3: d l4/d l1 = l3 + l2 * w3, "
                          "times d l1/d w1 = input.",
                    "w2": "d l4 / d w2 = l3 (product rule), then the mean's 1/4 and the sum.",
                    "w3": "d l4 / d w3 = l2 * l1, then the mean's 1/4 and the sum."}[name]
        return _wrong(ex, f"{name}.grad = {want:g}", _show(g), hint)
    return _ok(ex, "w1.grad = 28, w2.grad = 8, w3.grad = 10.")


@_checker("01-3")
def check_l1_grad(l1_grad) -> Result:
    """d loss / d l1 for one element of the l1..l4 model."""
    ex = "01-3"
    if _is_blank(l1_grad):
        return _todo(ex)
    if _close(l1_grad, 7.0):
        return _ok(ex, "d loss / d l1 = 0.25 * (l3 + l2 * w3) = 0.25 * (8 + 20) = 7 per element.")
    hint = _hint_for(l1_grad, [
        ((28.0,), "that is d loss / d w1 summed over elements; for l1 keep one element (and "
                  "its 1/4)."),
        ((2.0, 5.0), "l1 feeds two paths (through l2 and through l3): add both contributions."),
    ], "l4 = (l1 + w2) * (l1 * w3): differentiate with the product rule, then times 1/4.")
    return _wrong(ex, "7", _show(l1_grad), hint)


# ----------------------------------------------------------------------------------
# Lesson 02: leaf tensors
# ----------------------------------------------------------------------------------


def _bools(x) -> tuple | None:
    try:
        values = tuple(x)
    except TypeError:
        return None
    if not all(isinstance(v, (bool, np.bool_)) for v in values):
        return None
    return tuple(bool(v) for v in values)


@_checker("02-1")
def check_leaf_flags(is_leaf, requires_grad) -> Result:
    """(is_leaf, requires_grad) of a, b, c, d in: a = ones(3,4, rg=True); b = zeros; c = a + b; d = c.sum()."""
    ex = "02-1"
    if _is_blank((is_leaf, requires_grad)):
        return _todo(ex)
    want_leaf, want_rg = (True, True, False, False), (True, False, True, True)
    got_leaf, got_rg = _bools(is_leaf), _bools(requires_grad)
    if got_leaf is None or got_rg is None or len(got_leaf) != 4 or len(got_rg) != 4:
        return _fail(ex, "expected two tuples of four booleans (for a, b, c, d), e.g. "
                         "(True, False, True, True); hint: write True/False, not strings.")
    if got_rg != want_rg:
        return _wrong(ex, f"requires_grad = {want_rg}", str(got_rg),
                      "an op's output requires grad as soon as ONE input does; b was created "
                      "without requires_grad, so it does not.")
    if got_leaf != want_leaf:
        return _wrong(ex, f"is_leaf = {want_leaf}", str(got_leaf),
                      "a tensor is a leaf when it has no grad_fn: created by you (a, b), not "
                      "by an op that records history (c, d). A tensor that does not require "
                      "grad is always a leaf.")
    return _ok(ex, "a and b are leaves (made by you); c and d require grad because a does, and "
                   "are not leaves because an op made them.")


def _fn_name(x) -> Any:
    if x is None or isinstance(x, str):
        return x
    if isinstance(x, tuple) and len(x) == 2:
        return _fn_name(x[0])
    if hasattr(x, "name") and callable(x.name):
        return x.name()
    return type(x).__name__


@_checker("02-2")
def check_next_functions(z_next, y_next) -> Result:
    """Names in z.grad_fn.next_functions and y.grad_fn.next_functions for y = w * x; z = y + b."""
    ex = "02-2"
    if z_next is Ellipsis or y_next is Ellipsis or _is_blank(z_next, False) \
            or _is_blank(y_next, False):
        return _todo(ex)
    try:
        z_names = [_fn_name(v) for v in z_next]
        y_names = [_fn_name(v) for v in y_next]
    except TypeError:
        return _fail(ex, "expected two lists, e.g. ['AddBackward0', None]; hint: one entry per "
                         "input of the op, in order.")
    if z_names != ["MulBackward0", "AccumulateGrad"]:
        return _wrong(ex, "z: ['MulBackward0', 'AccumulateGrad']", str(z_names),
                      "z = y + b: the first input y was made by a multiplication, so its node "
                      "is y.grad_fn; the second input b is a leaf that requires grad, so its node "
                      "is the AccumulateGrad that will store b.grad.")
    if y_names != ["AccumulateGrad", None]:
        return _wrong(ex, "y: ['AccumulateGrad', None]", str(y_names),
                      "y = w * x: w requires grad (AccumulateGrad); x does not, so nothing "
                      "needs a gradient there and the entry is None.")
    return _ok(ex, "next_functions lists one (node, index) per input: the grad_fn of a computed "
                   "input, AccumulateGrad for a leaf that requires grad, None otherwise.")


@_checker("02-3")
def check_find_leaves(find_leaves) -> Result:
    """``find_leaves(t)`` returns the leaf tensors that ``t``'s gradient reaches."""
    ex = "02-3"
    bad = _not_callable(ex, find_leaves)
    if bad is not None:
        return bad
    a = ng.tensor([1.0, 2.0], requires_grad=True)
    b = ng.tensor(3.0, requires_grad=True)
    c = ng.tensor([5.0, 6.0])  # no grad: must not be reported
    cases = [
        ("(a * b + c).sum()", (a * b + c).sum(), {id(a), id(b)}),
        ("(a.exp() * a).mean()", (a.exp() * a).mean(), {id(a)}),
        ("(b * b * b)", b * b * b, {id(b)}),
    ]
    names = {id(a): "a", id(b): "b", id(c): "c"}
    for text, tensor, want in cases:
        stop, got = _answer(ex, find_leaves, tensor)
        if stop is not None:
            return stop
        try:
            got_ids = {id(t) for t in got}
        except TypeError:
            return _fail(ex, f"expected a list of tensors, got {type(got).__name__}; hint: "
                             "collect `node.variable` of every AccumulateGrad you meet.")
        if got_ids != want:
            shown = sorted(names.get(i, "<not a leaf>") for i in got_ids)
            return _wrong(ex, f"{sorted(names[i] for i in want)} for {text}", str(shown),
                          "walk grad_fn.next_functions with a stack; skip None entries; an "
                          "AccumulateGrad node's .variable is the leaf; visit each node once "
                          "and each leaf once.")
    return _ok(ex, "your walk finds exactly the leaves that receive a gradient.")


# ----------------------------------------------------------------------------------
# Lesson 03: getting at gradients
# ----------------------------------------------------------------------------------


@_checker("03-1")
def check_double_hook(hook) -> Result:
    """A tensor hook that doubles the gradient flowing through it."""
    ex = "03-1"
    bad = _not_callable(ex, hook)
    if bad is not None:
        return bad
    v = ng.tensor([0.0, 1.0, 2.0], requires_grad=True)
    seen = []

    def spy(g):
        seen.append(g)
        return _hooked(g)

    def _hooked(g):
        return hook(g)
    v.register_hook(spy)
    try:
        v.backward(ng.tensor([1.0, 2.0, 3.0]))
    except Exception as exc:  # any error: reported to the learner
        return _fail(ex, f"backward failed with your hook: {type(exc).__name__}: {exc}; hint: the "
                         "hook gets the gradient tensor and returns a tensor of the same shape.")
    if v.grad is None:
        return _fail(ex, "v.grad is None after backward; hint: return a tensor (or None to keep "
                         "the gradient as it is).")
    got = v.grad
    if _close(got, [1.0, 2.0, 3.0]):
        if hook(ng.tensor([1.0])) is None:
            return _todo(ex, "(your hook returned None, so the gradient was not changed: "
                             "`return` the new gradient.)")
        return _wrong(ex, "[2, 4, 6]", _show(got), "return the new gradient from the hook.")
    if not _close(got, [2.0, 4.0, 6.0]):
        return _wrong(ex, "[2, 4, 6]", _show(got), "double every element: `return grad * 2`.")
    return _ok(ex, "a hook that returns a tensor replaces the gradient: v.grad = [2, 4, 6].")


@_checker("03-2")
def check_accumulated_grad(x_grad) -> Result:
    """x = 3 (requires grad); y = x ** 2; y.backward(retain_graph=True) twice: x.grad?"""
    ex = "03-2"
    if _is_blank(x_grad):
        return _todo(ex)
    if _close(x_grad, 12.0):
        return _ok(ex, "each backward adds 2x = 6 into x.grad: 6 + 6 = 12.")
    hint = _hint_for(x_grad, [
        ((6.0,), "backward does not overwrite .grad, it adds to it; zero it between steps."),
        ((9.0, 18.0), "the gradient of x**2 is 2x, not x**2; then remember the second backward."),
    ], "d(x**2)/dx = 2x = 6 at x = 3; what happens to .grad after a second backward?")
    return _wrong(ex, "12", _show(x_grad), hint)


@_checker("03-3")
def check_manual_gradient(gradf) -> Result:
    """``gradf(x)``: the derivative of x**2 * exp(x), written by hand."""
    ex = "03-3"
    bad = _not_callable(ex, gradf)
    if bad is not None:
        return bad
    xs = np.array([[-1.5, -0.3, 0.0, 0.4], [1.0, 1.7, -2.2, 0.9], [2.5, -0.8, 0.1, 1.3]])
    want = 2 * xs * np.exp(xs) + xs ** 2 * np.exp(xs)
    stop, got = _answer(ex, gradf, ng.tensor(xs))
    if stop is not None:
        return stop
    if _close(got, want, shape_free=False):
        return _ok(ex, "2x e^x + x^2 e^x matches what autograd computes.")
    if _close(got, 2 * xs * np.exp(xs)):
        hint = "product rule: you have (x^2)' e^x; add x^2 (e^x)'."
    elif _close(got, xs ** 2 * np.exp(xs)):
        hint = "that is f(x) itself; the derivative of e^x is e^x, but x^2 also changes."
    else:
        hint = "(u v)' = u' v + u v' with u = x^2 and v = e^x."
    return _wrong(ex, "2x e^x + x^2 e^x (e.g. 2.7183*3 = 8.1548 at x = 1)", _show(got), hint)


@_checker("03-4")
def check_second_derivative(first, second) -> Result:
    """f(x) = x**3 at x = 3: first and second derivatives via autograd.grad(create_graph=True)."""
    ex = "03-4"
    if _is_blank((first, second)):
        return _todo(ex)
    if not _close(first, 27.0):
        return _wrong(ex, "first derivative 27", _show(first), "d(x^3)/dx = 3x^2 = 27 at x = 3.")
    if _close(second, 18.0):
        return _ok(ex, "f'(3) = 27 and f''(3) = 18: differentiate the graph that computed f'.")
    hint = _hint_for(second, [
        ((6.0,), "6x, evaluated at x = 3."),
        ((27.0, 54.0), "differentiate the first derivative (built with create_graph=True) once "
                       "more; do not reuse x.grad, which accumulates."),
    ], "d(3x^2)/dx = 6x.")
    return _wrong(ex, "second derivative 18", _show(second), hint)


@_checker("03-5")
def check_vector_backward(x_grad) -> Result:
    """x = [1, 2, 3]; y = x * x; y.backward(gradient=[1, 0.1, 0.01]): x.grad?"""
    ex = "03-5"
    if _is_blank(x_grad):
        return _todo(ex)
    want = [2.0, 0.4, 0.06]
    if _close(x_grad, want, shape_free=False):
        return _ok(ex, "backward(v) computes v^T J = v * 2x = [2, 0.4, 0.06].")
    hint = _hint_for(x_grad, [
        (([2.0, 4.0, 6.0],), "you computed 2x; each element is weighted by the matching entry "
                             "of `gradient`."),
        (([1.0, 0.2, 0.03],), "d(x*x)/dx is 2x, not x."),
    ], "x.grad[i] = gradient[i] * dy[i]/dx[i].")
    return _wrong(ex, "[2, 0.4, 0.06]", _show(x_grad), hint)


# ----------------------------------------------------------------------------------
# Lesson 04: in-place operations
# ----------------------------------------------------------------------------------


@_checker("04-1")
def check_versions(versions) -> Result:
    """b = a + 2; b[0] = 1000; b.mul_(2); c = b * 3; b += 1: b._version after each line."""
    ex = "04-1"
    if _is_blank(versions):
        return _todo(ex)
    try:
        got = [int(v) for v in versions]
    except (TypeError, ValueError):
        return _fail(ex, "expected a list of five integers; hint: one _version per line.")
    want = [0, 1, 2, 2, 3]
    if got == want:
        return _ok(ex, "each in-place op adds 1; out-of-place ops (like c = b * 3) leave b "
                       "alone: [0, 1, 2, 2, 3].")
    if got == [0, 1, 2, 3, 4]:
        hint = "c = b * 3 makes a NEW tensor; b itself is not changed."
    elif got[0] != 0:
        hint = "a fresh tensor starts at version 0."
    else:
        hint = "indexing assignment, mul_ and += are all in-place."
    return _wrong(ex, str(want), str(got), hint)


@_checker("04-2")
def check_reset_leaf(reset) -> Result:
    """``reset(a)`` sets every element of a leaf that requires grad to 10, and returns a."""
    ex = "04-2"
    bad = _not_callable(ex, reset)
    if bad is not None:
        return bad
    a = ng.tensor([10.0, 5.0, 2.0, 3.0], requires_grad=True)
    stop, got = _answer(ex, reset, a)
    if stop is not None:
        return stop
    if got is not a:
        return _fail(ex, "your function returned a different tensor; hint: change `a` itself "
                         "(in place, through a.data, a.detach() or under ng.no_grad()) and "
                         "return it, so every reference to the leaf sees the new values.")
    if not a.is_leaf or not a.requires_grad:
        return _wrong(ex, "a to stay a leaf that requires grad",
                      f"is_leaf={a.is_leaf}, requires_grad={a.requires_grad}",
                      "change the values without recording history (no_grad or .data), and do "
                      "not detach_() the leaf itself.")
    if not _close(a, [10.0] * 4, shape_free=False):
        return _wrong(ex, "[10, 10, 10, 10]", _show(a), "fill every element with 10.")
    loss = (a * a).mean()
    loss.backward()
    if not _close(a.grad, [5.0] * 4):
        return _wrong(ex, "a.grad = [5, 5, 5, 5] after (a*a).mean().backward()", _show(a.grad),
                      "the new values must be in place before the forward pass.")
    return _ok(ex, "a is still a leaf, holds 10s, and (a*a).mean() gives a.grad = 5s.")


@_checker("04-3")
def check_inplace_predictions(predictions) -> Result:
    """Which of three snippets raises at backward?  (True = raises)"""
    ex = "04-3"
    if _is_blank(predictions):
        return _todo(ex)
    got = _bools(predictions)
    if got is None or len(got) != 3:
        return _fail(ex, "expected three booleans, e.g. (True, False, False).")
    want = (True, False, True)
    if got == want:
        return _ok(ex, "(1) mul saved b, then b changed: error. (2) add saves nothing: fine. "
                       "(3) exp saves its OUTPUT, which add_ changed: error.")
    hints = ["(1) b * b saves b to compute the gradient 2b; b[0] = 1000 bumps its version.",
             "(2) c = b + 1 does not need b's value for backward (d c / d b = 1).",
             "(3) exp saves its result (d e^x / dx = e^x): changing it in place breaks that."]
    first = next(i for i in range(3) if got[i] != want[i])
    return _wrong(ex, str(want), str(got), hints[first])


# ----------------------------------------------------------------------------------
# Lesson 05: excluding subgraphs
# ----------------------------------------------------------------------------------


@_checker("05-1")
def check_requires_grad_flow(a_requires_grad, b_requires_grad, c_requires_grad) -> Result:
    """x, y plain; z requires grad: a = x + y; b = a + z; c = (b * 2) under no_grad."""
    ex = "05-1"
    answers = (a_requires_grad, b_requires_grad, c_requires_grad)
    if _is_blank(answers):
        return _todo(ex)
    got = _bools(answers)
    if got is None:
        return _fail(ex, "expected booleans (True / False).")
    want = (False, True, False)
    if got == want:
        return _ok(ex, "a: no input requires grad -> False. b: z does -> True. c: made under "
                       "no_grad -> False, whatever its inputs.")
    hints = ["a = x + y: neither x nor y requires grad.",
             "b = a + z: one input that requires grad is enough.",
             "inside no_grad nothing is recorded, so outputs do not require grad."]
    first = next(i for i in range(3) if got[i] != want[i])
    return _wrong(ex, str(want), str(got), hints[first])


def _tiny_net():

    class Net(ng.nn.Module):
        def __init__(self):
            super().__init__()
            self.body = ng.nn.Sequential(ng.nn.Linear(2, 8), ng.nn.Tanh(), ng.nn.Linear(8, 8),
                                         ng.nn.Tanh())
            self.fc = ng.nn.Linear(8, 2)

        def forward(self, x):
            return self.fc(self.body(x))

    ng.manual_seed(0)
    return Net()


@_checker("05-2")
def check_finetune_setup(setup) -> Result:
    """``setup(model, n_classes)`` freezes the model, gives it a new ``fc`` and returns an optimizer."""
    ex = "05-2"
    bad = _not_callable(ex, setup)
    if bad is not None:
        return bad
    model = _tiny_net()
    old_fc = model.fc
    body_before = [p.detach().numpy().copy() for p in model.body.parameters()]
    stop, opt = _answer(ex, setup, model, 3)
    if stop is not None:
        return stop
    if not hasattr(opt, "step") or not hasattr(opt, "param_groups") and not hasattr(opt, "params"):
        return _fail(ex, f"expected an optimizer, got {type(opt).__name__}; hint: return "
                         "ng.optim.SGD(model.fc.parameters(), lr=...).")
    if model.fc is old_fc:
        return _wrong(ex, "a new last layer model.fc", "the old one", "assign "
                      "model.fc = ng.nn.Linear(8, n_classes); new layers require grad.")
    if getattr(model.fc, "out_features", None) != 3:
        return _wrong(ex, "model.fc with 3 outputs", str(getattr(model.fc, "out_features", "?")),
                      "use the n_classes argument.")
    trainable = [p for p in model.body.parameters() if p.requires_grad]
    if trainable:
        return _wrong(ex, "every parameter of the body frozen (requires_grad=False)",
                      f"{len(trainable)} still trainable",
                      "loop over model.parameters() BEFORE replacing fc and set "
                      "p.requires_grad = False.")
    if not all(p.requires_grad for p in model.fc.parameters()):
        return _wrong(ex, "the new fc trainable", "some fc parameters frozen",
                      "freeze first, then create the new layer.")
    opt_params = {id(p) for group in getattr(opt, "param_groups", []) for p in group["params"]}
    if opt_params != {id(p) for p in model.fc.parameters()}:
        return _wrong(ex, "an optimizer over model.fc.parameters() only",
                      f"an optimizer over {len(opt_params)} tensors",
                      "give the optimizer only the new layer's parameters.")
    x = ng.randn(5, 2)
    target = ng.tensor([0, 1, 2, 0, 1])
    opt.zero_grad()
    loss = ng.nn.functional.cross_entropy(model(x), target)
    loss.backward()
    opt.step()
    if any(not np.array_equal(b, p.detach().numpy()) for b, p in
           zip(body_before, model.body.parameters())):
        return _fail(ex, "a training step changed the frozen body; hint: frozen parameters "
                         "must not be in the optimizer and must not require grad.")
    return _ok(ex, "the body is frozen, the new fc trains, and a step leaves the body as it was.")


@_checker("05-3")
def check_inference(predict) -> Result:
    """``predict(model, x)`` returns the model's output without recording any history."""
    ex = "05-3"
    bad = _not_callable(ex, predict)
    if bad is not None:
        return bad
    model = _tiny_net()
    x = ng.randn(4, 2)
    stop, out = _answer(ex, predict, model, x)
    if stop is not None:
        return stop
    with ng.no_grad():
        want = model(x).numpy()
    if not _close(out, want, shape_free=False):
        return _wrong(ex, "the model's output", _show(out), "return model(x).")
    if getattr(out, "requires_grad", False) or getattr(out, "grad_fn", None) is not None:
        return _wrong(ex, "an output that records no history", f"grad_fn={out.grad_fn.name()}",
                      "run the model inside `with ng.no_grad():` (detach() afterwards works too, "
                      "but only after the whole graph was built and kept in memory).")
    if not ng.is_grad_enabled():
        return _fail(ex, "grad mode is still off after your function; hint: use no_grad as a "
                         "`with` block (or decorator) so it switches back on.")
    return _ok(ex, "same output, no grad_fn, nothing saved for backward.")


# ----------------------------------------------------------------------------------
# Lesson 06: static graphs
# ----------------------------------------------------------------------------------


@_checker("06-1")
def check_static_model(graph, x, loss) -> Result:
    """The l1..l4 model built in a static graph: placeholder x, Variables w1..w3, node loss."""
    ex = "06-1"
    if _is_blank(loss) or _is_blank(graph) or _is_blank(x):
        return _todo(ex)
    if not hasattr(loss, "inputs") or not hasattr(graph, "forward"):
        return _fail(ex, f"expected a static node for loss, got {type(loss).__name__}; hint: "
                         "build it from x and the Variables with +, * and ns.mean.")
    try:
        graph.forward({x: np.ones((2, 2))})
        value = loss.value
    except Exception as exc:  # any error: reported to the learner
        return _fail(ex, f"running the graph failed: {type(exc).__name__}: {exc}")
    if not _close(value, 40.0):
        return _wrong(ex, "loss = 40 for x = ones(2, 2)", _show(value),
                      "l1 = x * w1, l2 = l1 + w2, l3 = l1 * w3, loss = mean(l2 * l3).")
    try:
        graph.forward({x: 2 * np.ones((2, 2))})
        value2 = loss.value
    except Exception as exc:  # any error: reported to the learner
        return _fail(ex, f"running the graph failed: {type(exc).__name__}: {exc}")
    if not _close(value2, (4 + 3) * (4 * 4)):
        return _wrong(ex, "loss = 112 for x = 2 * ones(2, 2)", _show(value2),
                      "use the placeholder x, not a constant, so new feeds change the result.")
    return _ok(ex, "the graph gives 40 for ones and 112 for twos: built once, run twice.")


@_checker("06-2")
def check_compiled_step(f) -> Result:
    """``f(x)`` compiled from the graph returns [loss, d loss/d w1, d loss/d w2, d loss/d w3]."""
    ex = "06-2"
    bad = _not_callable(ex, f)
    if bad is not None:
        return bad
    stop, out = _answer(ex, f, np.ones((2, 2)))
    if stop is not None:
        return stop
    try:
        values = [float(_array(v)) for v in out]
    except Exception:  # any error: reported to the learner
        return _fail(ex, f"expected a list of 4 scalars, got {_show(out)}; hint: "
                         "outputs=[loss, *ns.gradients(loss, [w1, w2, w3])].")
    if len(values) != 4:
        return _wrong(ex, "4 outputs", f"{len(values)}", "fetch loss and the three gradients.")
    if not _close(values, [40.0, 28.0, 8.0, 10.0]):
        return _wrong(ex, "[40, 28, 8, 10]", _show(values),
                      "list the outputs as loss, then the gradients in the order w1, w2, w3.")
    ok, out2 = _call(ex, f, 2 * np.ones((2, 2)))
    if not ok:
        return out2
    # l1 = 2x*... at x = 2: l1 = 4, l2 = 7, l3 = 16; dw1 = x*(l3 + l2*w3) summed/4 = 2*(16+28)=88
    if not _close([float(_array(v)) for v in out2], [112.0, 88.0, 16.0, 28.0]):
        return _wrong(ex, "[112, 88, 16, 28] for x = 2 * ones", _show(out2),
                      "the compiled function must use its argument as the placeholder feed.")
    return _ok(ex, "one compiled function returns the loss and all three symbolic gradients.")


@_checker("06-3")
def check_memory_plan(peak_values) -> Result:
    """Most intermediate values alive at once when a planned run executes a chain of ops."""
    ex = "06-3"
    if _is_blank(peak_values):
        return _todo(ex)
    try:
        got = int(peak_values)
    except (TypeError, ValueError):
        return _fail(ex, "expected an integer.")
    if got == 2:
        return _ok(ex, "in a chain each value is needed only by the next op: the planner keeps "
                       "the input of the running op and its output, then frees the input.")
    hint = ("without a plan every one would stay alive; with a plan, count the values alive while "
            "ONE op runs: its input and its output.") if got != 1 else \
        "while an op runs, both its input and its output exist."
    return _wrong(ex, "2", str(got), hint)


# ----------------------------------------------------------------------------------
# Lesson 07: static vs dynamic
# ----------------------------------------------------------------------------------


@_checker("07-2")
def check_trace_pitfall(traced_result, eager_result) -> Result:
    """f(x) = x * SCALE traced while SCALE = 2; then SCALE = 10: traced f([1, 2]) and eager f([1, 2])."""
    ex = "07-2"
    if _is_blank((traced_result, eager_result)):
        return _todo(ex)
    if not _close(eager_result, [10.0, 20.0], shape_free=False):
        return _wrong(ex, "eager f([1, 2]) = [10, 20]", _show(eager_result),
                      "eager mode reads SCALE every time it runs, so it sees 10.")
    if _close(traced_result, [10.0, 20.0]):
        return _wrong(ex, "the traced graph to give [2, 4]", _show(traced_result),
                      "tracing ran f once; SCALE was read then and stored as a constant node.")
    if not _close(traced_result, [2.0, 4.0], shape_free=False):
        return _wrong(ex, "traced f([1, 2]) = [2, 4]", _show(traced_result),
                      "the recorded graph is x * 2, whatever SCALE is later.")
    return _ok(ex, "the trace froze SCALE = 2 into a constant; eager mode reads it every call.")


@_checker("07-1")
def check_where_fix(f) -> Result:
    """``f(x)``: x * 2 where x > 0, else x * -1, written so that ``ns.trace`` can record it."""
    ex = "07-1"
    bad = _not_callable(ex, f)
    if bad is not None:
        return bad
    stop, eager = _answer(ex, f, ng.tensor([1.0, -2.0]))
    if stop is not None:
        return stop
    try:
        traced = ns.trace(f, np.ones(2))
    except Exception as exc:  # any error: reported to the learner
        return _fail(ex, f"tracing failed: {type(exc).__name__}: {str(exc).splitlines()[0]}; "
                         "hint: no Python `if` on tensor values: choose with ng.where(cond, a, b).")
    for feed, want in (([1.0, 2.0], [2.0, 4.0]), ([-1.0, -2.0], [1.0, 2.0]),
                       ([3.0, -1.0], [6.0, 1.0])):
        ok, got = _call(ex, traced, np.array(feed))
        if not ok:
            return got
        if not _close(got, want, shape_free=False):
            return _wrong(ex, f"{want} for x = {feed}", _show(got),
                          "ng.where(x > 0, x * 2, x * -1) chooses per element inside the graph.")
    if not _close(eager, [2.0, 2.0], shape_free=False):
        return _wrong(ex, "eager f([1, -2]) = [2, 2]", _show(eager), "the same function must "
                      "work in dynamic mode too.")
    return _ok(ex, "the choice now lives in the graph: one traced graph serves every input, and "
                   "the same function still runs eagerly.")


# ----------------------------------------------------------------------------------
# Lesson 08: build your own
# ----------------------------------------------------------------------------------


@_checker("08-1")
def check_derivative_table(table) -> Result:
    """Rows of the scalar engine's table: name -> (function, derivative)."""
    ex = "08-1"
    if _is_blank(table) or not isinstance(table, dict):
        return _todo(ex) if _is_blank(table) else _fail(ex, "expected a dict.")
    points = [(0.7, 1.9), (-1.3, 0.4), (2.1, -0.6)]
    for name in ("mul", "div", "sin", "exp"):
        row = table.get(name)
        if _is_blank(row) or row is None:
            return _todo(ex, f"(the row {name!r} is still blank.)")
        fn, dfn = row
        if _is_blank(fn) or _is_blank(dfn):
            return _todo(ex, f"(the row {name!r} is still blank.)")
        binary = name in ("mul", "div")
        for a, b in points:
            args = (a, b) if binary else (a,)
            ok, value = _call(ex, fn, *args)
            if not ok:
                return value
            want_value = {"mul": a * b, "div": a / b, "sin": math.sin(a), "exp": math.exp(a)}[name]
            if value is None or value is Ellipsis:
                return _todo(ex, f"(the function of {name!r} returned None.)")
            if not _close(value, want_value):
                return _wrong(ex, f"{name}{args} = {want_value:.4g}", _show(value),
                              f"the first entry of the {name!r} row computes the value.")
            for i in range(len(args)):
                ok, d = _call(ex, dfn, *args, i)
                if not ok:
                    return d
                if d is None or d is Ellipsis:
                    return _todo(ex, f"(the derivative of {name!r} returned None.)")
                eps = 1e-6
                up = list(args)
                dn = list(args)
                up[i] += eps
                dn[i] -= eps
                numeric = (fn(*up) - fn(*dn)) / (2 * eps)
                if not _close(d, numeric, atol=1e-5, rtol=1e-4):
                    return _wrong(ex, f"d {name}/d arg{i} at {args} = {numeric:.4g}", _show(d),
                                  f"derivative(*args, i) is the partial derivative with respect "
                                  f"to argument i (0 = first); check the {name!r} row.")
    return _ok(ex, "every row's derivative matches finite differences.")


@_checker("08-2")
def check_jacobian(J) -> Result:
    """Jacobian of (x*y, x + sin y, exp(x) * y) at (x, y) = (1, 2)."""
    ex = "08-2"
    if _is_blank(J):
        return _todo(ex)
    x, y = 1.0, 2.0
    want = np.array([[y, x], [1.0, math.cos(y)], [math.exp(x) * y, math.exp(x)]])
    try:
        got = _array(J)
    except Exception:  # any error: reported to the learner
        return _fail(ex, "expected a 3x2 array (rows: outputs, columns: inputs).")
    if got.shape == (2, 3) and np.allclose(got, want.T, atol=1e-6):
        return _wrong(ex, "a 3x2 matrix (one row per output)", "its transpose",
                      "row i holds the gradient of output i: J[i, j] = d f_i / d x_j.")
    if got.shape != (3, 2):
        return _wrong(ex, "shape (3, 2)", f"shape {got.shape}", "one row per output, one column "
                      "per input.")
    if not np.allclose(got, want, atol=1e-6):
        bad = np.argwhere(~np.isclose(got, want, atol=1e-6))[0]
        return _wrong(ex, f"J[{bad[0]}, {bad[1]}] = {want[tuple(bad)]:.4f}",
                      f"{got[tuple(bad)]:.4f}", "run one backward per output and reset the "
                      "input grads (and free or retain the graph) between runs.")
    return _ok(ex, "one backward pass per output gives one row of the Jacobian.")


@_checker("08-3")
def check_minimum(point) -> Result:
    """Where gradient descent on f(x, y) = (x - 1)**2 + 2 * (y + 2)**2 + x * y / 2 ends."""
    ex = "08-3"
    if _is_blank(point):
        return _todo(ex)
    try:
        x, y = point
    except (TypeError, ValueError):
        return _fail(ex, f"expected a pair (x, y), got {_show(point)}.")
    # grad: 2(x-1) + y/2 = 0, 4(y+2) + x/2 = 0
    A = np.array([[2.0, 0.5], [0.5, 4.0]])
    b = np.array([2.0, -8.0])
    want = np.linalg.solve(A, b)
    got = np.array([float(_array(x)), float(_array(y))])
    if np.allclose(got, want, atol=1e-3):
        return _ok(ex, f"minimum at ({want[0]:.4f}, {want[1]:.4f}).")
    if np.allclose(got, [1.0, -2.0], atol=1e-3):
        hint = "(1, -2) ignores the x*y/2 coupling term; run the descent on the full f."
    elif np.any(~np.isfinite(got)) or np.abs(got).max() > 1e3:
        hint = "the iterates blew up: the learning rate is too large (try 0.1)."
    else:
        hint = "take more steps, or a larger (but stable) learning rate; stop when the grads ~ 0."
    return _wrong(ex, f"({want[0]:.4f}, {want[1]:.4f})", f"({got[0]:.4f}, {got[1]:.4f})", hint)


# ----------------------------------------------------------------------------------
# Lesson 09: capstone
# ----------------------------------------------------------------------------------


@_checker("09-1")
def check_accuracy_fn(accuracy) -> Result:
    """``accuracy(logits, labels)``: fraction of rows whose argmax equals the label."""
    ex = "09-1"
    bad = _not_callable(ex, accuracy)
    if bad is not None:
        return bad
    logits = np.array([[2.0, 1.0], [0.1, 0.3], [5.0, -1.0], [0.0, 0.2], [1.0, 3.0]])
    labels = np.array([0, 1, 1, 0, 1])
    stop, got = _answer(ex, accuracy, logits, labels)
    if stop is not None:
        return stop
    if _close(got, 0.6):
        ok, got2 = _call(ex, accuracy, ng.tensor(logits), ng.tensor(labels))
        if ok and _close(got2, 0.6):
            return _ok(ex, "accuracy = mean(argmax(logits, axis=1) == labels) = 3/5.")
        if not ok:
            return got2
        return _wrong(ex, "0.6 for tensors too", _show(got2), "convert with np.asarray first.")
    if _close(got, 3):
        hint = "divide the count of correct rows by the number of rows."
    elif _close(got, 0.4):
        hint = "argmax over the class axis (axis=1), one prediction per row."
    else:
        hint = "predictions = logits.argmax(axis=1); compare them with the labels; average."
    return _wrong(ex, "0.6", _show(got), hint)


@_checker("09-2")
def check_train_step(train_step) -> Result:
    """``train_step(model, optimizer, X, y)`` does one step and returns the loss as a float."""
    ex = "09-2"
    bad = _not_callable(ex, train_step)
    if bad is not None:
        return bad
    ng.manual_seed(1)
    rng = np.random.default_rng(1)
    X = rng.normal(size=(32, 2))
    y = (X[:, 0] + X[:, 1] > 0).astype(np.int64)
    model = ng.nn.Sequential(ng.nn.Linear(2, 8), ng.nn.Tanh(), ng.nn.Linear(8, 2))
    opt = ng.optim.SGD(model.parameters(), lr=0.5)
    losses = []
    for _ in range(15):
        stop, loss = _answer(ex, train_step, model, opt, ng.tensor(X), ng.tensor(y))
        if stop is not None:
            return stop
        try:
            losses.append(float(_array(loss)))
        except Exception:  # any error: reported to the learner
            return _fail(ex, f"expected the loss as a number, got {type(loss).__name__}; "
                             "hint: return loss.item().")
    if not all(np.isfinite(losses)):
        return _wrong(ex, "finite losses", _show(losses), "check the loss function.")
    if losses[-1] >= losses[0] * 0.9:
        hint = ("the loss did not go down: call optimizer.zero_grad() before backward (else "
                "gradients pile up), then loss.backward(), then optimizer.step().")
        return _wrong(ex, "a loss that goes down over 15 steps",
                      f"{losses[0]:.3f} -> {losses[-1]:.3f}", hint)
    grads = [p.grad for p in model.parameters()]
    ok, _ = _call(ex, train_step, model, opt, ng.tensor(X), ng.tensor(y))
    first = next(p for p in model.parameters())
    g = first.grad
    if g is not None and grads[0] is not None and _array(g).shape == _array(grads[0]).shape:
        # with zero_grad the new grad is one step's gradient; without, it is a running sum
        single = ng.nn.functional.cross_entropy(model(ng.tensor(X)), ng.tensor(y))
        model_grads = ng.autograd.grad(single, [first])[0]
        if not _close(g, model_grads, atol=1e-4, rtol=1e-2) and \
                np.abs(_array(g)).max() > 3 * np.abs(_array(model_grads)).max() + 1e-8:
            return _wrong(ex, "one step's gradient in p.grad", "a sum over steps",
                          "call optimizer.zero_grad() at the start of each step.")
    return _ok(ex, f"the loss goes down: {losses[0]:.3f} -> {losses[-1]:.3f} in 15 steps.")


# ----------------------------------------------------------------------------------
# Running lesson notebooks
# ----------------------------------------------------------------------------------


class ExerciseOutcome(NamedTuple):
    exercise: str
    status: str  # "pass", "fail" or "todo"
    message: str

    @property
    def passed(self) -> bool:
        return self.status == PASS


class NotebookRun(NamedTuple):
    notebook: Any
    results: list


def exercise_ids(nb) -> list[str]:
    """The exercise ids declared in a notebook's cell metadata, in order."""
    return [c.metadata["naivegraph"]["exercise"] for c in nb.cells
            if "exercise" in c.get("metadata", {}).get("naivegraph", {})]


def _read(path_or_nb):
    import nbformat
    if isinstance(path_or_nb, (str, Path)):
        return nbformat.read(str(path_or_nb), as_version=4)
    return path_or_nb


def solutions_notebook(path):
    """The notebook with every exercise cell's source replaced by its reference solution."""
    nb = copy.deepcopy(_read(path))
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("naivegraph", {})
        if "solution" in meta:
            cell.source = meta["solution"]
    return nb


def parse_results(nb) -> list[ExerciseOutcome]:
    """Exercise results printed in the outputs of an executed notebook."""
    found = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for out in cell.get("outputs", []):
            text = out.get("text", "") if out.get("output_type") == "stream" else \
                out.get("data", {}).get("text/plain", "")
            for line in str(text).splitlines():
                m = _LINE.match(line.strip())
                if m:
                    found.append(ExerciseOutcome(m.group(2), _STATUS_OF[m.group(1)], m.group(3)))
    return found


def run_notebook(path, solutions: bool = False, timeout: int = 300,
                 kernel_name: str | None = None) -> NotebookRun:
    """Execute a lesson notebook top to bottom; return it with its exercise results.

    ``solutions=True`` runs the reference solutions instead of the learner's blanks.
    The working directory is the notebook's folder.  Raises
    ``nbclient.exceptions.CellExecutionError`` when a cell fails.
    """
    from nbclient import NotebookClient
    nb = solutions_notebook(path) if solutions else _read(path)
    if not solutions:
        nb = copy.deepcopy(nb)
    folder = Path(path).resolve().parent if isinstance(path, (str, Path)) else Path.cwd()
    client = NotebookClient(nb, timeout=timeout, kernel_name=kernel_name or _kernel_name(),
                            resources={"metadata": {"path": str(folder)}})
    client.execute()
    return NotebookRun(nb, parse_results(nb))


def _kernel_name() -> str:
    """``python3`` is the kernel ipykernel provides for the running interpreter."""
    return "python3"
