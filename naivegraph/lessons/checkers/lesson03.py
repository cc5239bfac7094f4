"""Checkers of lesson 03: getting at gradients."""

from __future__ import annotations

import dis
import os
import random
import sys

import numpy as np

import naivegraph as ng
from naivegraph.dynamic import tensor as tensor_module
import naivegraph.static as static_package

from ..checking import _is_library  # the frames of the library, skipped
from ..library_calls import LibraryCalls, package_directory
from ..checking import (
    cell_computes,
    forgot_return,
    learner_frame,
    keeps_learner_state,
    AutogradCalls,
    Result,
    as_array,
    call_answer,
    checker,
    close,
    correct,
    crash_message,
    failed,
    hint_for,
    is_blank,
    is_tensor,
    learner_namespace,
    not_callable,
    not_done,
    not_yet,
    DualLevels,
    returned_blank,
    show,
    typed_as_text,
    tensor_changes,
    tensor_state,
)

HOOK_ANSWER = """def double(grad):
    return grad * 2

A hook that RETURNS a tensor replaces the gradient that flows on.  Make a new tensor
(grad * 2): changing `grad` in place (grad *= 2, grad.mul_(2)) alters a tensor that
autograd and other hooks may still be using."""


# Incoming gradients the hook is tried on: a sign change and a shape of its own each,
# so a typed-in result or a gradient made positive does not pass; one is large (1000
# elements, 3-D), so a hook right for small gradients only does not pass either.  Some
# hold elements in the thousands or near zero (a hook that clips, or skips what is
# small, fails there), some are float64 (a hook that casts, or doubles float32 only,
# fails there) and one is 0-d (a hook that takes len() of its gradient fails there).
HOOK_CASES = (
    np.array([1.0, 2.0, 3.0], dtype=np.float32),
    np.array([-1.5, 0.0, 4.0], dtype=np.float32),
    np.array([[-1.0, 2.5], [0.5, -3.0]], dtype=np.float32),
    np.random.default_rng(3).standard_normal((10, 10, 10)).astype(np.float32),
    np.array([0.5, 300.0, -2500.0, 7000.0, -1.0e6], dtype=np.float32),
    np.array([2.0, 1e-7, -1e-30, 3e-38, -0.75], dtype=np.float32),
    np.array([[0.1, -7.25, 1e-300], [4.0e5, -3.5, 2.0 / 3.0]], dtype=np.float64),
    np.array(-2.5, dtype=np.float32),
    np.array(1.0e-12, dtype=np.float64),
)


def _hook_calls() -> list:
    """The incoming gradients, in the order the hook gets them: each case in turn, round
    after round, for a number of calls drawn anew at each check, so a hook that counts
    its calls and stops doubling after some number of them meets that number.  The
    first two share a shape: a typed-in result shows."""
    calls = random.Random().randint(40, 80)
    return [HOOK_CASES[i % len(HOOK_CASES)] for i in range(calls)]


def _returns_only_none(fn) -> bool:
    """Whether every `return` of a function gives None (or it has none at all): read
    from its compiled code, without calling it."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return False
    instructions = list(dis.get_instructions(code))
    for before, ins in zip([None, *instructions], instructions):
        if ins.opname == "RETURN_CONST" and ins.argval is not None:
            return False
        if ins.opname == "RETURN_VALUE" and not (
            before is not None and before.opname == "LOAD_CONST" and before.argval is None
        ):
            return False
    return True


def _hook_returning_nothing(hook) -> Result | None:
    """The refusal of a hook that returns nothing (it sets a .grad, or fills a global,
    instead), asked before the state it writes is: that is the plainer mistake."""
    if not _returns_only_none(hook):
        return None
    return not_yet(
        "03-1",
        [
            "your hook returns nothing (None): it stores its result somewhere instead (a "
            ".grad, a global). A hook hands the new gradient back by RETURNING it, and "
            "backward passes on what the hook returns; returning None leaves the gradient "
            "as it arrived.",
            "compute the new gradient from `grad` and return it; set nothing outside "
            "the hook.",
        ],
        gave="a hook that returns None and writes its result elsewhere",
    )


@checker("03-1", answer=HOOK_ANSWER, first_look=_hook_returning_nothing)
@keeps_learner_state
def check_double_hook(hook) -> Result:
    """A tensor hook that doubles the gradient flowing through it, without touching it."""
    ex = "03-1"
    bad = not_callable(ex, hook)
    if bad is not None:
        return bad
    state_before = _hook_state(hook)
    first_grad, doubled = None, False
    for call, incoming in enumerate(_hook_calls()):
        result, v_grad = _run_hook(ex, hook, incoming)
        if result is not None:
            return result
        if first_grad is None:
            first_grad = v_grad
        elif (
            incoming is not HOOK_CASES[0]
            and np.shape(v_grad) == np.shape(first_grad)
            and np.array_equal(v_grad, first_grad)
        ):
            return not_yet(
                ex,
                [
                    "your hook returns the same gradient whatever arrives: the tensor it "
                    "returns must be computed from `grad`, the gradient it is given.",
                    HOOK_SECOND_HINT,
                ],
                gave=f"the same v.grad for the incoming gradients {show(HOOK_CASES[0])} "
                f"and {show(incoming)}",
            )
        result = _judge_hook(ex, hook, incoming, v_grad, doubled, call + 1)
        if result is not None:
            return result
        doubled = True
    changed = [name for name, value in _hook_state(hook).items() if state_before.get(name) != value]
    if changed:
        return not_yet(
            ex,
            [
                "a hook should give the same result for the same gradient; yours keeps "
                f"state between calls ({', '.join(changed)}): it changes something outside "
                "itself each time it runs, and a hook runs on every backward, as often as "
                "the caller likes.",
                "compute the new gradient from `grad` alone, with nothing counted or "
                "stored from one call to the next.",
            ],
            gave=f"a hook that changes {', '.join(changed)} on each call",
        )
    return correct(
        ex, "a hook that returns a tensor replaces the gradient: v.grad is twice what arrived."
    )


HOOK_SECOND_HINT = (
    "the hook runs on every backward, with a new incoming gradient each time: what it "
    "returns replaces that gradient, so build the new one from the one it receives, "
    "the same way on every call."
)

# Values of these types are copied for comparison; anything else (a tensor, a module,
# a file) is left alone: a hook may log what it sees into a list of tensors.
_SIMPLE = (int, float, complex, bool, str, bytes, type(None))


def _snapshot(value, depth: int = 0):
    """A comparable copy of ``value`` when it is made of numbers and strings (possibly
    in lists, tuples, dicts, sets or a small numpy array), else None."""
    if isinstance(value, _SIMPLE) or isinstance(value, np.generic):
        return ("value", value)
    if depth > 3:
        return None
    if isinstance(value, np.ndarray):
        return ("array", value.shape, value.tobytes()) if value.size <= 10_000 else None
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [_snapshot(v, depth + 1) for v in value]
        if any(i is None for i in items):
            return None
        if isinstance(value, (set, frozenset)):
            items = sorted(items, key=repr)
        return (type(value).__name__, tuple(items))
    if isinstance(value, dict):
        pairs = [(repr(k), _snapshot(v, depth + 1)) for k, v in value.items()]
        if any(v is None for _, v in pairs):
            return None
        return ("dict", tuple(sorted(pairs)))
    return None


def _names_used(code) -> set[str]:
    """The global names a function's code (and the code nested in it) refers to."""
    names = set(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= _names_used(const)
    return names


def _hook_state(hook) -> dict[str, object]:
    """What a hook can change from one call to the next, copied: its closure cells, the
    global names it uses, its attributes (or its object's, for a method or a callable
    object), where they hold plain numbers and strings."""
    state: dict[str, object] = {}

    def keep(name: str, value) -> None:
        snap = _snapshot(value)
        if snap is not None:
            state[name] = snap

    owner = getattr(hook, "__self__", None)
    fn = getattr(hook, "__func__", hook)
    if not hasattr(fn, "__code__"):
        owner, fn = hook, type(hook).__dict__.get("__call__")
        fn = getattr(fn, "__func__", fn)
    for holder in (owner, fn):
        for name, value in dict(getattr(holder, "__dict__", {}) or {}).items():
            if not name.startswith("__"):
                keep(name, value)
    code = getattr(fn, "__code__", None)
    if code is None:
        return state
    for name, cell in zip(code.co_freevars, getattr(fn, "__closure__", None) or ()):
        try:
            keep(name, cell.cell_contents)
        except ValueError:  # a cell not filled yet
            continue
    globs = getattr(fn, "__globals__", {})
    for name in _names_used(code):
        if name in globs and not name.startswith("__"):
            keep(name, globs[name])
    return state


def _run_hook(ex: str, hook, incoming) -> tuple[Result | None, np.ndarray | None]:
    """Backward through a leaf with ``hook`` on it: ``(None, v.grad)`` or a failure."""
    incoming = ng.tensor(incoming)
    v = ng.zeros(tuple(incoming.shape), dtype=incoming.dtype, requires_grad=True)
    received: list = []

    def record(g):  # runs first and changes nothing: what the learner's hook is given
        received.append((g, g.numpy().copy()))

    def watched(g):  # the learner's hook, with the tensor it is given kept to compare
        before = g.numpy().copy()
        out = hook(g)
        received.append((g, before))
        return out

    v.register_hook(record)
    v.register_hook(watched)
    try:
        v.backward(incoming)
    except Exception as exc:  # any error: reported to the learner
        other = _returned_dtype(hook, incoming)
        if other is not None:
            return not_yet(
                ex,
                [
                    f"your hook returns a tensor of dtype {other}, and the gradient it "
                    f"gets is {_dtype_name(incoming.dtype)}: backward refuses a hook that "
                    "changes the gradient's dtype. Return a gradient of the dtype it "
                    "arrived in: no cast.",
                    "whatever you compute from `grad`, leave its dtype as it is.",
                ],
                gave=f"a hook that returns {other} for a {_dtype_name(incoming.dtype)} gradient",
            ), None
        return failed(
            ex,
            f"backward failed with your hook: {type(exc).__name__}: "
            f"{str(exc).rstrip('.')}; hint: the hook gets the gradient tensor and returns "
            "a tensor of the same shape.",
        ), None
    if any(not np.array_equal(g.numpy(), before) for g, before in received):
        return not_yet(
            ex,
            [
                "your hook changed the gradient it was given IN PLACE: that tensor is "
                "autograd's, other hooks and the engine may still read it.",
                "leave `grad` as it is and return a NEW tensor computed from it.",
            ],
            gave="a hook that modifies `grad` in place",
        ), None
    if v.grad is None:
        return failed(
            ex,
            "v.grad is None after backward; hint: return a tensor (or None to keep "
            "the gradient as it is).",
        ), None
    return None, v.grad.numpy().copy()


def _dtype_name(dtype) -> str:
    return str(dtype).rsplit(".", 1)[-1]


def _returned_dtype(hook, incoming) -> str | None:
    """The dtype of what ``hook`` returns for ``incoming`` when it is not the
    gradient's own, else None."""
    try:
        out = hook(incoming.clone())
    except Exception:  # the backward's error is the one reported
        return None
    dtype = getattr(out, "dtype", None)
    if dtype is None or dtype == incoming.dtype:
        return None
    return _dtype_name(dtype)


def _float32_inside(got, x) -> bool:
    """Whether every value of ``got``, returned for a float64 ``x``, is a float32
    number: a result computed in float32 and cast back (a float64 estimate almost
    never lands on float32 numbers alone)."""
    if x.dtype != ng.float64:
        return False
    values = np.asarray(as_array(got), dtype=np.float64)
    with np.errstate(over="ignore"):
        return bool(np.array_equal(values.astype(np.float32).astype(np.float64), values))


def _readable(values) -> str:
    """Gradients shown with their tiny elements as they are (1e-07, not 0.): the
    incoming gradients mix sizes on purpose, and rounding hides what a hook did."""
    try:
        a = np.asarray(as_array(values), dtype=np.float64)
    except Exception:  # not numbers: shown as they are
        return show(values)
    if a.ndim == 0 or a.size > 8:
        return show(values)
    return np.array2string(a, separator=", ", suppress_small=False, precision=6)


def _judge_hook(
    ex: str, hook, incoming, v_grad: np.ndarray, doubled: bool, call: int = 1
) -> Result | None:
    """None when ``v_grad`` is exactly twice ``incoming`` (doubling a float is exact),
    else the hint for the mistake; ``doubled`` says the hook doubled the gradients it
    was given before this one, on its earlier calls (``call`` counts them from 1)."""
    arrived = np.asarray(incoming).astype(np.float64)
    if np.shape(v_grad) == arrived.shape and np.array_equal(v_grad, 2 * arrived):
        return None
    gave = f"v.grad = {_readable(v_grad)} for an incoming gradient {_readable(arrived)}"
    if np.shape(v_grad) == arrived.shape and arrived.ndim:
        # The first element that is not doubled, to every digit: a tiny or huge one
        # hides in the rounded display of the whole tensor.
        at = tuple(np.argwhere(v_grad != 2 * arrived)[0])
        gave += f" (element {[int(i) for i in at]}: {v_grad[at]:.9g} for {arrived[at]:.9g})"
    if doubled:
        gave += f" (call {call} of your hook)"
    if (
        arrived.ndim
        and np.shape(v_grad) == arrived.shape
        and np.unique(v_grad).size == 1
        and np.unique(arrived).size > 1
    ):
        return not_yet(
            ex,
            [
                "your hook returns the same value in every element, whatever arrives: "
                "it ignores the gradient it is given (`grad`), and builds a new one from "
                "its shape alone.",
                HOOK_SECOND_HINT,
            ],
            gave=gave,
        )
    if (
        (doubled and close(v_grad, arrived, shape_free=False))
        or _partly_doubled(v_grad, arrived)
        or _doubled_small_only(v_grad, arrived)
    ):
        return not_yet(
            ex,
            [
                "your hook doubled some gradients but not others: a hook must double "
                "every gradient it receives, every element, whatever its size or shape, "
                "on every call.",
                "no condition on the values or the size, no count of the calls: the hook "
                "does the same to whatever arrives.",
            ],
            gave=gave,
        )
    if close(v_grad, arrived, shape_free=False):
        if _returns_none(hook):
            return forgot_return(ex, hook, None)
        return not_yet(ex, "the gradient went through unchanged: return the NEW gradient.")
    if close(v_grad, -2 * arrived, shape_free=False) and np.any(arrived):
        return not_yet(
            ex,
            [
                "your v.grad has the size of twice what arrived, with the opposite sign: "
                "a positive gradient comes out negative and a negative one positive. "
                "Doubling keeps the sign of each element.",
                HOOK_SECOND_HINT,
            ],
            gave=gave,
        )
    if close(v_grad, 2 * arrived, shape_free=False):
        return not_yet(
            ex,
            [
                "your v.grad is near twice what arrived, but not exactly: doubling a "
                "floating-point number is exact, so the checker compares exactly. Scale "
                "by exactly the factor, with nothing added.",
                HOOK_SECOND_HINT,
            ],
            gave=gave,
        )
    first = hint_for(
        v_grad,
        [
            ((arrived + 2,), "you added 2 to every element; doubling is a product."),
            ((arrived**2,), "you squared the gradient; doubling is a product."),
            (
                (2 * np.abs(arrived), np.abs(arrived)),
                "the signs are lost: for a negative incoming gradient your hook gives a "
                "positive one. Twice a negative number is negative: only scale the "
                "gradient, do not take its absolute value.",
            ),
        ],
        "compare v.grad with the gradient that arrived: each element should be twice "
        "as big, with its sign.",
    )
    return not_yet(ex, [first, HOOK_SECOND_HINT], gave=gave)


def _partly_doubled(v_grad: np.ndarray, arrived: np.ndarray) -> bool:
    """Each element either doubled or passed unchanged, and some of each."""
    if np.shape(v_grad) != arrived.shape:
        return False
    twice = (v_grad == 2 * arrived) & (arrived != 0)
    same = (v_grad == arrived) & (arrived != 0)
    return bool(twice.any() and same.any() and np.all(twice | same | (arrived == 0)))


def _doubled_small_only(v_grad: np.ndarray, arrived: np.ndarray) -> bool:
    """Elements doubled exactly up to some size, and the larger ones not (a hook that
    clips, or caps, the gradient): the doubled ones are the smallest."""
    if np.shape(v_grad) != arrived.shape:
        return False
    size = np.abs(arrived)
    twice = (v_grad == 2 * arrived) & (arrived != 0)
    others = ~twice & (arrived != 0)
    return bool(twice.any() and others.any() and size[twice].max() < size[others].min())


def _returns_none(hook) -> bool:
    ok, value = call_answer("03-1", hook, ng.tensor([1.0]))
    return ok and value is None


ACCUMULATED_ANSWER = """x_grad_after_two = 12.
d(x**2)/dx = 2x = 6 at x = 3.  backward does not overwrite .grad, it ADDS to it
(AccumulateGrad), so after two backward passes x.grad = 6 + 6 = 12."""


@checker("03-2", answer=ACCUMULATED_ANSWER, predicts=True)
def check_accumulated_grad(x_grad) -> Result:
    """x = 3 (requires grad); y = x ** 2; y.backward(retain_graph=True) twice: x.grad?"""
    ex = "03-2"
    if x_grad is Ellipsis:
        return not_done(ex)
    raises = isinstance(x_grad, BaseException) or (
        isinstance(x_grad, type) and issubclass(x_grad, BaseException)
    )
    if x_grad is None or raises or typed_as_text([x_grad]):  # "error", or "12" in quotes
        return not_yet(
            ex,
            [
                "a number is asked: x.grad after the second backward. That backward "
                "runs: the first call passed retain_graph=True, which keeps the graph "
                "for another pass. Type the value as a number, without quotes.",
                "think about what AccumulateGrad does with a gradient when .grad already "
                "holds one.",
            ],
            gave="None"
            if x_grad is None
            else "an error"
            if raises
            else "text (a string in quotes)",
        )
    computed = cell_computes()
    uses = f"runs {computed}" if computed else ""
    if not computed:
        computed = cell_computes(reads=("grad", "item"))
        uses = f"reads {computed}"
    if computed:
        return not_yet(
            ex,
            [
                f"your cell computes the value instead of predicting it: it {uses}. "
                "The exercise asks you to PREDICT x.grad after a second "
                "backward from how .grad behaves, and to type it as a plain number; the "
                "cell after the check runs that backward for you.",
                "think about what AccumulateGrad does with a gradient when .grad already "
                "holds one.",
            ],
            gave=f"a cell that {uses}",
        )
    if isinstance(x_grad, (list, tuple)) or np.ndim(x_grad) > 0 and not is_tensor(x_grad):
        return not_yet(
            ex,
            [
                "give one number: x is a single number, so x.grad holds one number after "
                "each backward; "
                + (
                    "your answer holds several."
                    if np.size(x_grad) != 1
                    else "type it alone, not inside a list, tuple or array."
                ),
                "think about what AccumulateGrad does with a gradient when .grad already "
                "holds one.",
            ],
            gave=show(x_grad),
        )
    if _typed_number(x_grad):
        x_grad = float(x_grad.detach())
    if is_tensor(x_grad):
        return not_yet(
            ex,
            [
                "you gave a tensor, not a number: an expression computed from tensors "
                "(one built from x.grad, say) or x.grad read after running backward "
                "again. The exercise asks you to PREDICT the value from how .grad "
                "behaves and type it as a plain number; the cell after the check runs "
                "the second backward for you.",
                "think about what AccumulateGrad does with a gradient when .grad already "
                "holds one.",
            ],
            gave="a tensor",
        )
    ran = _backward_ran_in_cell(x_grad)
    if ran is not None:
        return ran
    if _exact(x_grad, 12.0):
        return correct(ex, "each backward adds 2x = 6 into x.grad: 6 + 6 = 12.")
    if close(x_grad, 12.0):
        return not_yet(
            ex,
            [
                "your number is near the value, but not equal to it: x.grad here holds "
                "a whole number, and the checker compares exactly. Type the value you "
                "predict exactly, not a rounded or nudged one.",
                "AccumulateGrad ADDS each new gradient to what .grad already holds.",
            ],
            gave=show(x_grad),
        )
    first = hint_for(
        x_grad,
        [
            ((6.0,), "that is x.grad after ONE backward; what does the second one do to .grad?"),
            ((0.0,), "nothing zeroes .grad between the two calls."),
            ((9.0,), "the gradient of x**2 is 2x, not x**2."),
            (
                (18.0,),
                "each backward adds a gradient, and the gradient of x**2 is 2x, not x**2: "
                "what does one backward add at x = 3?",
            ),
            ((36.0,), "the two passes do not multiply: how does AccumulateGrad combine them?"),
            (
                (-12.0, -6.0),
                "check the sign: at x = 3 the gradient of x**2 is positive, and "
                "backward adds it into .grad; nothing subtracts.",
            ),
        ],
        "the cell above printed x.grad after one backward; predict what a second adds.",
    )
    return not_yet(
        ex,
        [first, "AccumulateGrad ADDS each new gradient to what .grad already holds."],
        gave=show(x_grad),
    )


def _typed_number(value) -> bool:
    """A number typed into a tensor (ng.tensor(12.0)): 0-d, no history, no grad, and
    not some tensor's .grad; judged as the number it holds."""
    return (
        is_tensor(value)
        and value.ndim == 0
        and value.grad_fn is None
        and not value.requires_grad
        and not _read_off_a_gradient(value)
    )


def _exact(got, want, shape_free: bool = True) -> bool:
    """``got`` equals ``want`` to float32 rounding at most: a value worked out exactly,
    or read from a float32 tensor, passes; one nudged in its 5th digit does not."""
    return close(got, want, atol=1e-12, rtol=1e-6, shape_free=shape_free)


def _backward_ran_in_cell(x_grad) -> Result | None:
    """The hint for an answer that equals x.grad after a backward run beyond the
    lesson's one (in the exercise's cell or an earlier cell of the learner's): the
    lesson's x (3.0) then holds more than the one backward of the cell above gave it,
    and the cell after the check, which runs the second backward, fails."""
    x = learner_namespace().get("x")
    if not (isinstance(x, ng.Tensor) and x.requires_grad and x.ndim == 0):
        return None
    if float(x.detach()) != 3.0 or x.grad is None:
        return None
    held = float(x.grad.detach())
    if held == 6.0 or not close(x_grad, held):
        return None
    return not_yet(
        "03-2",
        [
            "x.grad already holds more than the one backward of the cell above gave it: "
            "a backward ran again on y (in a cell of yours, this one or an earlier one), "
            "and your number is what x.grad holds now. The exercise asks you to PREDICT "
            "the value, and the cell after the check runs the second backward (x.grad now "
            "holds one pass too many, and a graph used up by an extra backward makes that "
            "cell fail). Re-run the cells above, from the one that makes x and y, to "
            "restore them; then type your prediction as a number, with no backward run "
            "before the check.",
            "think about what AccumulateGrad does with a gradient when .grad already holds one.",
        ],
        gave="the value x.grad holds after a backward more than the lesson ran",
    )


VECTOR_ANSWER = """x_grad = [2, 0.4, 0.06].
y = x * x is elementwise, so J is diagonal with dy_i/dx_i = 2 x_i = [2, 4, 6];
backward(v) computes v^T J = v * 2x = [1 * 2, 0.1 * 4, 0.01 * 6]."""


@checker("03-3", answer=VECTOR_ANSWER, predicts=True)
def check_vector_backward(x_grad) -> Result:
    """x = [1, 2, 3]; y = x * x; y.backward(gradient=[1, 0.1, 0.01]): x.grad?"""
    ex = "03-3"
    if x_grad is None:  # no `...` is left: None is an answer given, not a blank
        return not_yet(
            ex,
            [
                "None is not an answer: x.grad after backward(gradient) holds three "
                "numbers, one per element of x. Type them as a list.",
                "for each element: the matching entry of `gradient` times the derivative "
                "of y = x * x at that element.",
            ],
            gave="None",
        )
    if is_blank(x_grad):
        return not_done(ex)
    if typed_as_text([x_grad]):
        return not_yet(
            ex, "type the numbers, not text: no quotes around them.", gave="text (in quotes)"
        )
    computed = cell_computes(reads=("grad",))
    if computed:
        return not_yet(
            ex,
            [
                "your cell computes x.grad instead of working it out: it uses "
                f"{computed}. The exercise asks for the vector-Jacobian product by hand: "
                "type the three numbers as a list.",
                "for each element: the matching entry of `gradient` times the derivative "
                "of y = x * x at that element.",
            ],
            gave=f"a cell that uses {computed}",
        )
    tensors = [x_grad] if is_tensor(x_grad) else []
    if isinstance(x_grad, (list, tuple)):
        tensors = [v for v in x_grad if is_tensor(v)]
    if any(_read_off_a_gradient(t) for t in tensors):
        return not_yet(
            ex,
            [
                "you gave a tensor, x.grad after running backward(gradient) yourself: the "
                "exercise asks for the vector-Jacobian product worked out by hand. Type "
                "the three numbers as a list.",
                "for each element: the matching entry of `gradient` times the derivative "
                "of y = x * x at that element.",
            ],
            gave="a tensor",
        )
    if isinstance(x_grad, (set, frozenset)):
        return not_yet(
            ex,
            [
                "a set ({...}) has no order, so it cannot say which number belongs to "
                "which element of x (and it keeps equal numbers once). "
                "x.grad[i] belongs to x[i]: give a list, [...], in the order of x.",
                "x.grad[i] = gradient[i] * dy[i]/dx[i], for i over the three elements of x.",
            ],
            gave="a set",
        )
    if _exact(x_grad, [2.0, 0.4, 0.06], shape_free=False):
        return correct(ex, "backward(v) computes v^T J = v * 2x = [2, 0.4, 0.06].")
    if close(x_grad, [2.0, 0.4, 0.06], shape_free=False):
        return not_yet(
            ex,
            [
                "your numbers are near the products, but not all equal to them: the "
                "checker compares exactly (float32 rounding at most). Work each "
                "product out exactly and type it as it is, not rounded or nudged.",
                "x.grad[i] = gradient[i] * dy[i]/dx[i], each product worked out exactly.",
            ],
            gave=_all_digits(x_grad),
        )
    if _exact(x_grad, [0.06, 0.4, 2.0], shape_free=False):
        return not_yet(
            ex,
            [
                "your three numbers are the right ones, in reverse order: x.grad[i] "
                "belongs to x[i], so the first element of x gives the first number.",
                "keep the order of x and of `gradient`: element i with element i.",
            ],
            gave="the right numbers in reverse order",
        )
    slip = _one_element_off(x_grad, [2.0, 0.4, 0.06])
    if slip is not None:
        return not_yet(
            ex,
            [
                f"two of your numbers are right; element {slip} (x = {slip + 1:g}) is "
                "not: redo that one product, gradient[i] * dy[i]/dx[i].",
                "the other two are right: only that element's product needs another look.",
            ],
            gave=show(x_grad),
        )
    if _same_values_other_shape(x_grad, [2.0, 0.4, 0.06]):
        return not_yet(
            ex,
            [
                "x.grad has the shape of x, a flat list of three numbers; your numbers "
                "are nested in another shape.",
                "write the three numbers in one list, one per element of x.",
            ],
            gave=f"an answer of shape {np.shape(as_array(x_grad))}",
        )
    try:
        size = np.size(as_array(x_grad))
    except Exception:  # not numbers: the hints below judge it
        size = None
    if size is not None and size not in (0, 1, 3):  # one number: the hints below
        return not_yet(
            ex,
            [
                f"you gave {size} numbers, but x has three elements: x.grad has the "
                "shape of x, one number per element of x.",
                "x.grad[i] = gradient[i] * dy[i]/dx[i], for i over the three elements of x.",
            ],
            gave=f"{size} numbers",
        )
    first = hint_for(
        x_grad,
        [
            (
                ([2.0, 4.0, 6.0],),
                "that is 2x, the gradient for gradient = ones; each element is weighted "
                "by the matching entry of `gradient`.",
            ),
            (([1.0, 0.2, 0.03],), "d(x*x)/dx is 2x, not x."),
            (([1.0, 0.4, 0.09],), "that is v * y; the derivative of y = x * x is 2x, not x * x."),
            ((2.46,), "x.grad has the shape of x (three numbers), not one number."),
            (
                ([4.0, 4.4, 6.06],),
                "that adds onto what x.grad already held from the cell above (its "
                "backward(ones) wrote into it): assume a fresh x, whose .grad starts empty.",
            ),
        ],
        "x.grad[i] = gradient[i] * dy[i]/dx[i], for a fresh x whose .grad starts empty.",
    )
    return not_yet(
        ex,
        [
            first,
            "y = x * x acts element by element, so its Jacobian is diagonal: each element "
            "of x.grad is the matching entry of `gradient` times that element's own "
            "derivative; assume a fresh x (nothing accumulated in its .grad yet).",
        ],
        gave=show(x_grad),
    )


def _all_digits(value) -> str:
    """Numbers shown with every digit they hold (0.0600001, not 0.06)."""
    try:
        flat = np.asarray(as_array(value), dtype=np.float64).ravel()
    except Exception:  # not numbers: shown as they are
        return show(value)
    return "[" + ", ".join(repr(float(v)) for v in flat) + "]"


def _one_element_off(got, want: list[float]) -> int | None:
    """The index of the one element of three that is wrong, the others exact; or None."""
    try:
        g = np.asarray(as_array(got), dtype=np.float64)
    except Exception:  # not numbers
        return None
    if g.shape != (len(want),):
        return None
    wrong = [i for i, (a, b) in enumerate(zip(g, want)) if not _exact(a, b)]
    return wrong[0] if len(wrong) == 1 else None


def _read_off_a_gradient(t) -> bool:
    """Whether ``t`` is some tensor's .grad in the learner's namespace, or has a
    history: the result of a backward run, not numbers typed into a tensor (which
    are judged as numbers)."""
    if getattr(t, "grad_fn", None) is not None:
        return True
    grads = []
    frame = learner_frame()
    while frame is not None:  # the cell, and any code of the learner's that called it
        if not _is_library(frame.f_code.co_filename):
            for value in [*frame.f_globals.values(), *frame.f_locals.values()]:
                if not isinstance(value, ng.Tensor):
                    continue
                # a non-leaf's .grad warns when read: only leaves and retain_grad keep one
                if (value.is_leaf or value.retains_grad) and value.grad is not None:
                    grads.append(value.grad)
        frame = frame.f_back
    # an element of x.grad (list(x.grad), x.grad[0]) is a view of its memory
    return any(g is t or np.shares_memory(g._data, t._data) for g in grads)


def _same_values_other_shape(got, want) -> bool:
    """The right numbers, in the right order, nested in a shape of their own."""
    try:
        g = as_array(got)
    except (TypeError, ValueError):
        return False
    return g.shape != np.shape(want) and g.size == np.size(want) and close(g.ravel(), want)


MANUAL_ANSWER = """def gradf(x):
    return 2 * x * ng.exp(x) + x ** 2 * ng.exp(x)

Product rule with u = x^2, v = e^x: (u v)' = u' v + u v' = 2x e^x + x^2 e^x."""


# Points where gradf is compared with the formula, a 4x4 grid (as the lesson says):
# small ones, and large |x|, where a finite difference's error shows even in relative
# terms.
MANUAL_POINTS = np.array(
    [
        [-1.5, -0.3, 0.0, 0.4],
        [1.0, 1.7, -2.2, 0.9],
        [2.5, -0.8, 0.1, 1.3],
        [12.0, -15.0, 25.0, -30.0],
    ]
)


def _manual_formula(xs: np.ndarray) -> np.ndarray:
    return 2 * xs * np.exp(xs) + xs**2 * np.exp(xs)


@checker("03-4", answer=MANUAL_ANSWER)
@keeps_learner_state
def check_manual_gradient(gradf) -> Result:
    """``gradf(x)``: the derivative of x**2 * exp(x), written by hand."""
    ex = "03-4"
    bad = not_callable(ex, gradf)
    if bad is not None:
        return bad
    xs = MANUAL_POINTS
    want = _manual_formula(xs)
    x = ng.tensor(xs, dtype=ng.float64)
    outside = _torch_or_static_calls(static=True)
    with AutogradCalls() as calls, DualLevels() as levels, outside as outside_calls:
        with _Conversions() as conversions:
            try:
                got, raised = gradf(x), None
            except Exception as exc:  # reported below, after the autograd question
                got, raised = None, exc
    torch_called = _called(outside_calls, torch=True)
    if torch_called:
        return not_yet(
            ex,
            [
                "your gradf uses torch (its tensors or its autograd): this exercise "
                "checks naivegraph's autograd AGAINST a gradient you derive by hand, so "
                "write the derivative's formula with naivegraph's ops on x.",
                "differentiate x^2 e^x on paper with the product rule, then type the "
                "result as a tensor expression in x, with ng.exp.",
            ],
            gave=f"a gradf that calls torch ({torch_called})",
        )
    static_called = _called(outside_calls, torch=False)
    if static_called:
        return not_yet(
            ex,
            [
                f"your gradf runs a static graph (naivegraph.static: {static_called}): its "
                "autodiff, or its compiled functions, compute the result outside the "
                "tensor ops on x. This "
                "exercise checks autograd AGAINST a gradient you derive by hand, written "
                "with naivegraph's dynamic ops on x.",
                "differentiate x^2 e^x on paper with the product rule, then type the "
                "result as a tensor expression in x, with ng.exp.",
            ],
            gave="a gradf that uses the static graph",
        )
    if _reads_internals(gradf):
        return not_yet(
            ex,
            [
                "your gradf reads `_data`, the array naivegraph keeps inside a tensor: "
                "a name with a leading underscore is the lab's internals, not its API, "
                "and a result computed on that array with numpy is computed outside "
                "naivegraph's ops.",
                "write the formula with ng.exp and tensor operators on x itself.",
            ],
            gave="a gradf that reads the tensor's _data",
        )
    if calls.flags:  # even when it then crashed: the mistake is asking autograd
        return not_yet(
            ex,
            [
                "your gradf asks autograd for the gradient (backward or autograd.grad): "
                "this exercise checks autograd AGAINST a gradient you derive by hand, so "
                "write the derivative's formula with ng.exp.",
                "differentiate x^2 e^x on paper with the product rule, then type the "
                "result as a tensor expression in x.",
            ],
            gave="a gradf that runs a backward pass",
        )
    if levels.entered:
        return not_yet(
            ex,
            [
                "your gradf lets forward-mode autodiff (a dual level, make_dual, "
                "unpack_dual) compute the derivative: that is autograd too, and this "
                "exercise checks autograd AGAINST a gradient you derive by hand. Write "
                "the derivative's formula with ng.exp.",
                "differentiate x^2 e^x on paper with the product rule, then type the "
                "result as a tensor expression in x.",
            ],
            gave="a gradf that uses forward-mode autodiff",
        )
    if x.requires_grad:
        if raised is None and x.grad_fn is None:
            x.requires_grad_(False)
        return not_yet(
            ex,
            [
                "your gradf changed x's requires_grad (requires_grad_() or "
                "x.requires_grad = True): x is the caller's tensor, and after the call it "
                "records every op on it, which it did not before. A formula written by "
                "hand needs nothing from autograd.",
                "compute the result from x as it is given, and leave its flags alone.",
            ],
            gave="a gradf that switches on requires_grad of x",
        )
    if x._version != 0 or not np.array_equal(x.detach().numpy(), xs):
        return not_yet(
            ex,
            [
                "your gradf changed its input in place (an op with a trailing underscore, "
                "or an augmented assignment such as *=, on x): the caller's x, a leaf of "
                "the lesson, would hold other values after the call.",
                "compute the result as a new tensor from x and leave x as it was: "
                "out-of-place ops (x * y, x + y) never write into their inputs.",
            ],
            gave="a gradf that writes into x",
        )
    if raised is not None:
        return failed(ex, crash_message(raised))
    blank = returned_blank(ex, got)
    if blank is not None:
        return blank
    if not isinstance(got, ng.Tensor):
        return not_yet(
            ex,
            [
                f"gradf must return a tensor (ng.Tensor), as x is, not a "
                f"{_type_name(got)}: the cell after "
                "the check calls .numpy() on it and compares it with x.grad.",
                "write the formula with tensor ops on x itself (ng.exp(x), x ** 2, ...), "
                "without converting x to numpy or to numbers.",
            ],
            gave=f"a {_type_name(got)}",
        )
    if conversions.count:
        return not_yet(
            ex,
            [
                "your gradf turns x (or a tensor made from it) into numpy values or "
                "Python numbers (.numpy(), np.asarray, .tolist(), .item()) and computes "
                "the result outside naivegraph's ops: write the formula with ng.exp and "
                "tensor operators on x itself, not numpy, whatever is added to it "
                "afterwards.",
                "a result made of tensor operations on x is one autograd can trace back "
                "to x: the cell after the check compares it with what autograd computes.",
            ],
            gave=f"a gradf that converts tensors ({', '.join(conversions.names)})",
        )
    if not _traced_to_x(gradf, xs):
        return not_yet(
            ex,
            [
                "your gradf computes its result outside naivegraph's ops (with numpy, or "
                "on a copy cut from x) and wraps it in a tensor: use ng.exp and tensor "
                "operators on x itself, not numpy.",
                "a result made of tensor operations on x is one autograd can trace back "
                "to x: the cell after the check compares it with what autograd computes.",
            ],
            gave="a result not computed from x with tensor operations",
        )
    if got.dtype != x.dtype and close(got, want, atol=1e-4, rtol=1e-4, shape_free=False):
        return not_yet(
            ex,
            [
                f"your gradf returns {_dtype_name(got.dtype)} for an x of "
                f"{_dtype_name(x.dtype)} (a cast such as x.float(), or a tensor made in "
                "another dtype): float32 keeps about 7 digits, so the result is off in "
                "the 8th. Keep x's dtype: no cast, and no tensor of another dtype in "
                "the formula.",
                "write the formula with ng ops on x as it is given.",
            ],
            gave=f"a {_dtype_name(got.dtype)} gradient for a {_dtype_name(x.dtype)} x",
        )
    if _missing_exp(got, want, xs):
        return not_yet(
            ex,
            [
                "your gradf is far off, by a factor that grows with x: at every point it "
                "is the derivative divided by e to the power x. A factor is missing from "
                "your formula: f(x) = x^2 e^x, and the product rule keeps e^x in the "
                "derivative.",
                "differentiate u * v with u = x^2 and v = e^x: u' v + u v'.",
            ],
            gave=f"a gradient off by {_relative_error(got, want):.0e} (relative)",
        )
    # e typed as a number is rounded or truncated (2.718281828, or e in a float32
    # tensor): gradf then is the derivative times (b / e) ** x for some base b near e.
    if not close(got, want, atol=1e-12, rtol=1e-12, shape_free=False) and _typed_e(got, want, xs):
        return not_yet(
            ex,
            [
                "your gradf is off in its last digits as e to the power x is when e is "
                "typed as a number (truncated after some digits, or rounded to a "
                "float32 tensor), and a constant written out is never exactly e: use "
                "ng.exp for the exponential function.",
                "ng.exp(x) is e to the power x, computed to the last digit.",
            ],
            gave=f"a gradient off by {_relative_error(got, want):.0e} (relative)",
        )
    offset = _constant_offset(got, want, xs)
    if offset is not None:
        return not_yet(
            ex,
            [
                "your gradf is off by the same amount at every x: a constant is added to "
                "(or taken from) the derivative, and the difference does not change with "
                "x. The derivative of x^2 e^x has no constant term: leave it out.",
                "differentiate x^2 e^x on paper with the product rule and write exactly "
                "that formula, with nothing added.",
            ],
            gave=f"a gradient off by {offset:.2g} at every x",
        )
    if close(got, want, shape_free=False):
        if not close(got, want, atol=1e-12, rtol=1e-12, shape_free=False) and _float32_inside(
            got, x
        ):
            return not_yet(
                ex,
                [
                    f"your gradf is off in the 8th digit, and every value it returns for "
                    f"this {_dtype_name(x.dtype)} x is a float32 number: it computes in "
                    "float32 inside (x.float(), say) and casts the result back, and "
                    "float32 keeps about 7 digits. Compute in x's own dtype throughout.",
                    "write the formula with ng ops on x as it is given, with no cast.",
                ],
                gave="a gradient computed in float32 and cast back",
            )
        if not close(got, want, atol=1e-12, rtol=1e-12, shape_free=False) and _casts_inside(
            gradf, xs
        ):
            return not_yet(
                ex,
                [
                    "your gradf is off in the 8th digit because it casts: a part of the "
                    "formula is computed in float32 (x.float(), .to(...)) for this "
                    f"{_dtype_name(x.dtype)} x, and float32 keeps about 7 digits, so the "
                    "cast lost precision. Compute in x's own dtype throughout.",
                    "write the formula with ng ops on x as it is given, with no cast.",
                ],
                gave="a gradient with a cast inside (precision lost in float32)",
            )
        if not close(got, want, atol=1e-12, rtol=1e-12, shape_free=False):
            return not_yet(
                ex,
                [
                    "your gradf is close but not exact: off in the last digits, as an "
                    "estimate such as a finite difference (f(x+h) - f(x-h)) / 2h is. The "
                    "checker compares it with the exact derivative, on large x too.",
                    "differentiate x^2 e^x on paper with the product rule and write that "
                    "formula: no step h, no f in it.",
                ],
                gave=f"a gradient off by {_relative_error(got, want):.0e} (relative)",
            )
        further = _further_cases(ex, gradf)
        if further is not None:
            return further
        return correct(ex, "2x e^x + x^2 e^x matches what autograd computes.")
    beyond = -1.0  # where the point shown is looked for: |x| above it
    if np.isnan(as_array(got)).any():
        first = _nan_hint(gradf, got, xs)
    elif close(got, -want):
        first = (
            "your gradf has the opposite sign of the derivative everywhere: check the "
            "sign of each term. Nothing in x^2 e^x brings a minus into its derivative."
        )
    elif close(got, xs**2 * np.exp(xs) - 2 * xs * np.exp(xs)) or close(
        got, 2 * xs * np.exp(xs) - xs**2 * np.exp(xs)
    ):
        first = (
            "one of your two terms has the wrong sign: the product rule combines its "
            "terms without a minus, and neither factor's derivative carries one."
        )
    elif close(got, 2 * xs * np.exp(xs)):
        first = "the product rule has two terms, and you have only one: which one is missing?"
    elif close(got, xs**2 * np.exp(xs)):
        first = "that is f(x) itself; differentiate it with the product rule."
    elif close(got, 2 * xs * np.exp(xs) * xs**2 * np.exp(xs)):
        first = "the product rule ADDS two terms: u' v + u v'."
    elif close(got, 2 * xs):
        first = "that is the derivative of x^2 alone; f also has the factor e^x."
    elif _right_near_zero_only(got, want, xs):
        beyond = _NEAR_ZERO
        first = (
            "your gradf is near the derivative for small x but far off for large ones: "
            "the e^x in it holds only for some x (a series cut after some terms, a "
            "clamp, a formula that changes past some size). Use ng.exp, which is "
            "right for every x."
        )
    elif close(got, want, atol=5e-2, rtol=5e-2):
        first = (
            "your gradf is near the derivative but not equal to it: an estimate such as a "
            "finite difference is; the checker wants the exact formula."
        )
    else:
        first = (
            "f is the product of two factors: differentiate it with the product rule, "
            "then compare your formula with it term by term."
        )
    return not_yet(
        ex,
        [
            first,
            "name the two factors of f, differentiate each one alone, then combine them "
            "with the product rule: two terms, each a derivative times the other factor.",
        ],
        gave=_wrong_at(got, want, xs, beyond),
    )


# Far from 0, where e^x is near the end of float64's range (or of float32's, below):
# a formula that clamps x, or switches to another one past some size, shows there.
FAR_POINTS = np.array([60.0, -60.0, 200.0, -200.0, 400.0, -400.0])


def _reads_internals(gradf) -> bool:
    """Whether gradf's code names ``_data`` (as an attribute, or as a string handed to
    getattr or vars): the array inside a tensor, which the lab keeps to itself."""
    fn = getattr(gradf, "__func__", gradf)
    code = getattr(fn, "__code__", None)
    if code is None:
        return False

    def strings(code) -> set[str]:
        found = {c for c in code.co_consts if isinstance(c, str)}
        for const in code.co_consts:
            if hasattr(const, "co_consts"):
                found |= strings(const)
        return found

    return "_data" in _names_used(code) or "_data" in strings(code)


def _further_cases(ex: str, gradf) -> Result | None:
    """gradf on x far from 0 (float64) and on a float32 x: None when the derivative
    holds there too and the result keeps x's dtype, else the hint."""
    far = ng.tensor(FAR_POINTS, dtype=ng.float64)
    small = ng.tensor(MANUAL_POINTS[:3], dtype=ng.float32)
    with AutogradCalls(), _torch_or_static_calls(static=True):
        ok_far, got_far = call_answer(ex, gradf, far)
        if not ok_far:
            return got_far
        ok_small, got_small = call_answer(ex, gradf, small)
        if not ok_small:
            return got_small
    want_far = _manual_formula(FAR_POINTS)
    if not isinstance(got_far, ng.Tensor) or not close(
        got_far, want_far, atol=0.0, rtol=1e-12, shape_free=False
    ):
        values = as_array(got_far) if isinstance(got_far, ng.Tensor) else None
        wrong = [
            i
            for i in range(len(FAR_POINTS))
            if values is None
            or values.shape != want_far.shape
            or not close(values[i], want_far[i], atol=0.0, rtol=1e-12)
        ]
        at = FAR_POINTS[wrong[0]]
        shown = show(values[wrong[0]]) if values is not None and values.shape else show(got_far)
        return not_yet(
            ex,
            [
                f"your gradf is right near 0, but not at x = {at:g}: the derivative must "
                "hold for every x, as large as float64 allows, so no limit on x and no "
                "other formula past some size.",
                "write the product rule's two terms for every x, with ng.exp.",
            ],
            gave=f"gradf({at:g}) = {shown}",
        )
    if not isinstance(got_small, ng.Tensor):
        return not_yet(
            ex,
            "gradf must return a tensor for a float32 x too.",
            gave=f"a {_type_name(got_small)} for a float32 x",
        )
    if got_small.dtype != small.dtype:
        return not_yet(
            ex,
            [
                f"given a float32 x, your gradf returns {_dtype_name(got_small.dtype)}: "
                "a cast (such as x.double()) or a tensor of another dtype in the "
                "formula. The result's dtype must follow x's, whatever x is given.",
                "write the formula with ng ops on x as it is given, with no cast.",
            ],
            gave=f"a {_dtype_name(got_small.dtype)} gradient for a float32 x",
        )
    if not close(got_small, _manual_formula(MANUAL_POINTS[:3]), rtol=1e-5, shape_free=False):
        return not_yet(
            ex,
            "your gradf is right for a float64 x, not for a float32 one: the formula "
            "must not depend on x's dtype.",
            gave=_wrong_at(got_small, _manual_formula(MANUAL_POINTS[:3]), MANUAL_POINTS[:3]),
        )
    return None


def _constant_offset(got, want: np.ndarray, xs: np.ndarray) -> float | None:
    """The constant ``got`` differs from ``want`` by at every point, when it does (a
    number added to the formula, ``... + 1e-7``); None when the difference changes
    with x, or is none.  Where the derivative is large its rounding hides a small
    constant, so those points only must not contradict it."""
    try:
        g = as_array(got)
    except Exception:  # not numbers: judged elsewhere
        return None
    if g.shape != want.shape or not np.isfinite(g).all():
        return None
    diff = g - want
    moderate = np.abs(want) < 1e3
    if moderate.sum() < 4:
        return None
    c = float(np.median(diff[moderate]))
    # each term of the product rule rounds on its own: the rounding follows their size,
    # and a difference no larger than it is rounding, not a constant
    size = np.abs(2 * xs * np.exp(xs)) + np.abs(xs**2 * np.exp(xs)) + np.abs(want)
    if abs(c) <= 1e-12 * (1.0 + size[moderate]).max():
        return None
    tolerance = 1e-6 * abs(c) + 1e-13 * (1.0 + size)
    if not (np.abs(diff - c) <= tolerance).all():
        return None
    return c


def _casts_inside(gradf, xs: np.ndarray) -> bool:
    """Whether gradf, given a float64 x that requires grad, records a cast to another
    dtype on the way (x.float(), x.to(ng.float32), a cast of the result): the only
    node a cast leaves is a ToCopyBackward0."""
    x = ng.tensor(xs, dtype=ng.float64, requires_grad=True)
    try:
        with AutogradCalls(), _torch_or_static_calls(static=True):
            got = gradf(x)
    except Exception:  # the first call's result is the one reported
        return False
    return any(node.name() == "ToCopyBackward0" for node in _backward_nodes(got))


def _backward_nodes(t):
    """Every node of the backward graph of ``t``, each once (none for a plain value)."""
    stack, seen = [getattr(t, "grad_fn", None)], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        stack.extend(fn for fn, _ in node.next_functions)


# The points of MANUAL_POINTS near 0, where a cut series or a clamp still holds.
_NEAR_ZERO = 3.0


def _right_near_zero_only(got, want: np.ndarray, xs: np.ndarray) -> bool:
    """Whether ``got`` is the derivative (to 1e-3) at every point with |x| of 3 or
    less but not at some larger x: an e^x that holds only near 0 (a series cut after
    some terms, a clamp)."""
    try:
        g = as_array(got)
    except Exception:  # not numbers: judged elsewhere
        return False
    if g.shape != want.shape:
        return False
    small = np.abs(xs) <= _NEAR_ZERO
    return close(g[small], want[small], rtol=1e-3, shape_free=False) and not close(
        g[~small], want[~small], rtol=1e-3, shape_free=False
    )


def _typed_e(got, want: np.ndarray, xs: np.ndarray) -> bool:
    """Whether ``got`` is ``want`` times ``c ** x`` for one constant ``c`` near 1 but not
    1, at every point: e to the power x computed with a base typed in place of e."""
    log_c = _base_ratio(got, want, xs)
    return log_c is not None and 0 < abs(log_c) < 1e-2


def _missing_exp(got, want: np.ndarray, xs: np.ndarray) -> bool:
    """Whether ``got`` is ``want`` divided by e to the power x: the factor left out."""
    log_c = _base_ratio(got, want, xs)
    return log_c is not None and abs(log_c + 1) < 1e-6


def _base_ratio(got, want: np.ndarray, xs: np.ndarray) -> float | None:
    """log c when ``got`` is ``want`` times ``c ** x`` for one constant c at every point,
    else None."""
    g = as_array(got)
    if g.shape != want.shape or np.isnan(g).any():  # a nan is no constant factor off
        return None
    where = (np.abs(want) > 1e-300) & (xs != 0) & (g * want > 0)
    if where.sum() < 4 or not np.allclose(g[~where & (xs == 0)], want[~where & (xs == 0)]):
        return None
    with np.errstate(all="ignore"):
        log_c = np.log(g[where] / want[where]) / xs[where]
    middle = float(np.median(log_c))
    spread = np.max(np.abs(log_c - middle))
    return middle if spread <= 1e-3 * abs(middle) + 1e-15 else None


def _nan_hint(gradf, got, xs: np.ndarray) -> str:
    """The hint for a gradf that gives nan: where, and why when the ops it recorded
    show it (a division by zero, the log or a root of a number that has none)."""
    values = as_array(got)
    nan_at = []
    if values.shape == xs.shape:
        nearest_zero_first = np.argsort(np.abs(xs), axis=None, kind="stable")
        spots = [np.unravel_index(flat, xs.shape) for flat in nearest_zero_first]
        nan_at = [xs[spot] for spot in spots if np.isnan(values[spot])]
    at = f"{nan_at[0]:g}" if nan_at else "some points"
    cause = _nan_cause(gradf, xs)
    if cause == "divide" and nan_at and nan_at[0] == 0:
        return (
            "your gradf gives nan at x = 0: you divide by zero there (0 / 0: a division "
            "by x, or by something that is 0 at x = 0); the derivative of x^2 e^x needs "
            "no division: write the formula without one."
        )
    if cause == "divide":
        return (
            f"your gradf gives nan at x = {at}: it divides by zero there; the derivative "
            "of x^2 e^x needs no division: write the formula without one."
        )
    if cause == "log":
        return (
            f"your gradf gives nan at x = {at}, where the derivative is a finite "
            "number: it takes the log of 0 or of a negative number there. The "
            "derivative of x^2 e^x needs no log."
        )
    if cause == "root":
        return (
            f"your gradf gives nan at x = {at}: it takes a root (or a fractional power) "
            "of a negative number there; the derivative of x^2 e^x needs none."
        )
    return (
        f"your formula gave nan at x = {at}: some step of it has no value there "
        "(0 / 0, inf - inf, 0 * inf, ...). Work out each step of your formula at that "
        "point to find which one."
    )


def _saved(node, name: str):
    """A value the node saved for backward, as an array, or None."""
    try:
        value = getattr(node, name)
    except Exception:  # not saved by this node, or freed
        return None
    try:
        return as_array(value)
    except Exception:  # a number or something else: not an array of values
        return None


def _nan_cause(gradf, xs: np.ndarray) -> str | None:
    """``"divide"``, ``"log"`` or ``"root"`` when gradf, given an x that requires grad,
    records an op that has no value at some point; None when nothing shows it (the
    formula ran outside autograd, or the nan comes from elsewhere)."""
    x = ng.tensor(xs, dtype=ng.float64, requires_grad=True)
    try:
        with AutogradCalls():
            got = gradf(x)
    except Exception:  # the first call's result is the one reported
        return None
    for node in _backward_nodes(got):
        name = node.name()
        if name == "DivBackward0":
            other = _saved(node, "_saved_other")
            if other is not None and (other == 0).any():
                return "divide"
        if name == "ReciprocalBackward0":
            result = _saved(node, "_saved_result")
            if result is not None and np.isinf(result).any():
                return "divide"
        if name in ("LogBackward0", "Log2Backward0", "Log10Backward0"):
            inside = _saved(node, "_saved_self")
            if inside is not None and (inside <= 0).any():
                return "log"
        if name in ("SqrtBackward0", "PowBackward0", "PowBackward1"):
            result = _saved(node, "_saved_result")
            base = _saved(node, "_saved_self")
            if (result is not None and np.isnan(result).any()) or (
                name == "PowBackward0"
                and base is not None
                and (base < 0).any()
                and not float(getattr(node, "_saved_exponent", 2)).is_integer()
            ):
                return "root"
    return None


def _relative_error(got, want: np.ndarray) -> float:
    """The largest relative error, where the derivative is not (nearly) zero."""
    g, where = as_array(got), np.abs(want) > 1e-6
    return float(np.max(np.abs(g[where] - want[where]) / np.abs(want[where])))


def _type_name(value) -> str:
    """``numpy.ndarray``, ``float``: the type as the learner would write it."""
    kind = type(value)
    module = kind.__module__.split(".")[0]
    return kind.__name__ if module == "builtins" else f"{module}.{kind.__name__}"


def _wrong_at(got, want: np.ndarray, xs: np.ndarray, beyond: float = -1.0) -> str:
    """gradf at a point where it differs from the derivative, nearest to 0 first (and
    with |x| above ``beyond``): at some points a wrong formula happens to agree with
    the right one."""
    values = as_array(got)
    if values.shape != xs.shape:
        return f"a result of shape {values.shape} for an x of shape {xs.shape}"
    order = np.argsort(np.abs(xs), axis=None, kind="stable")
    for flat in order:
        at = np.unravel_index(flat, xs.shape)
        if abs(xs[at]) > beyond and not close(values[at], want[at]):
            return f"gradf({xs[at]:g}) = {show(values[at])}"
    return "a gradf that differs from the derivative"


def _traced_to_x(gradf, xs: np.ndarray) -> bool:
    """Whether gradf, given an x that requires grad, returns a result autograd
    recorded from x: what tensor operations on x give, and numpy never does."""
    x = ng.tensor(xs, dtype=ng.float64, requires_grad=True)
    try:
        # a backward was refused already
        with AutogradCalls(), _GradModeReads() as reads, _Conversions() as conversions:
            got = gradf(x)
    except RuntimeError as exc:
        return "numpy" not in str(exc)  # x.numpy() refuses a tensor that requires grad
    except Exception:  # the first call, without grad, is the one reported
        return True
    # Tensor ops under no_grad record nothing, yet are the formula written with ng ops:
    # the exercise forbids asking autograd for the gradient, not switching recording off.
    # So are tensor ops on x.detach(): what tells numpy apart is a tensor turned into
    # an array or numbers on the way.
    return (
        not isinstance(got, ng.Tensor)
        or got.grad_fn is not None
        or reads.off
        or not conversions.count
    )


class _Conversions:
    """Counts the tensors turned into numpy arrays or Python numbers while the block
    runs (``.numpy()``, ``np.asarray``, ``.item()``, ``.tolist()``): a result computed
    outside naivegraph's ops went through one of them."""

    NAMES = ("numpy", "__array__", "item", "tolist", "__float__", "__int__")
    SHOWN = {
        "numpy": ".numpy()",
        "__array__": "np.asarray",
        "item": ".item()",
        "tolist": ".tolist()",
        "__float__": "float()",
        "__int__": "int()",
    }

    def __init__(self) -> None:
        self.count = 0
        self.names: list[str] = []

    def __enter__(self) -> _Conversions:
        self._real = {name: vars(ng.Tensor)[name] for name in self.NAMES}
        for name, real in self._real.items():
            setattr(ng.Tensor, name, self._counted(real, name))
        return self

    def _counted(self, real, name: str):
        shown = self.SHOWN[name]

        def counted(*args, **kwargs):
            self.count += 1
            if shown not in self.names:
                self.names.append(shown)
            return real(*args, **kwargs)

        return counted

    def __exit__(self, *exc_info: object) -> None:
        for name, real in self._real.items():
            setattr(ng.Tensor, name, real)


def _torch_or_static_calls(static: bool = False) -> LibraryCalls:
    """Watches the calls an answer makes into torch (its tensors, its autograd) and,
    with ``static=True``, into naivegraph.static (its graphs, autodiff and compiled
    functions): an answer to be written with naivegraph's dynamic ops has none."""
    packages = {"torch": package_directory("torch")}
    named = _torch_named()  # named in the hint; any other call into torch counts too
    if not static:
        return LibraryCalls(named, packages)
    packages["naivegraph.static"] = os.path.dirname(static_package.__file__)
    named |= {
        "ns.gradients": static_package.gradients,
        "compile": static_package.Graph.compile,
        "run": static_package.Graph.run,
        "a compiled function": static_package.CompiledFunction.__call__,
    }
    return LibraryCalls(named, packages)


def _torch_named() -> dict:
    """torch's autograd and tensor makers, by the names a hint shows (none before torch
    is imported: a torch imported inside the answer is seen as "torch")."""
    torch = sys.modules.get("torch")
    if torch is None or not hasattr(torch, "autograd"):
        return {}
    return {
        "torch.autograd.grad": torch.autograd.grad,
        "torch.autograd.backward": torch.autograd.backward,
        "backward": torch.Tensor.backward,
        "torch.tensor": torch.tensor,
        "torch.from_numpy": torch.from_numpy,
        "torch.as_tensor": torch.as_tensor,
    }


def _called(calls: LibraryCalls, torch: bool) -> str:
    """torch's (or the static graph's) functions an answer called, by the names the
    hint knows where it knows them, else by the package's name; "" when none."""
    package = "torch" if torch else "naivegraph.static"
    names = [n for n in dict.fromkeys(calls.called) if _is_torch(n) == torch]
    return ", ".join([n for n in names if n != package] or names)


def _is_torch(name: str) -> bool:
    return name in ("torch", "backward") or name.startswith("torch.")


class _GradModeReads:
    """Tells whether some op on a tensor that requires grad ran with recording off
    (inside no_grad): the tensor module's view of grad mode, watched for a while."""

    def __init__(self) -> None:
        self.off = False

    @property
    def enabled(self) -> bool:
        enabled = self._real.enabled
        self.off = self.off or not enabled
        return enabled

    def __getattr__(self, name: str):
        return getattr(self._real, name)

    def __enter__(self) -> _GradModeReads:
        self._real = tensor_module._state
        tensor_module._state = self
        return self

    def __exit__(self, *exc_info: object) -> None:
        tensor_module._state = self._real


SECOND_ANSWER = """def derivatives(f, x):
    (first,) = ng.autograd.grad(f(x), [x], create_graph=True)
    (second,) = ng.autograd.grad(first, [x])
    return first, second

create_graph=True records the backward pass itself, so `first` has a grad_fn and can
be differentiated again.  Without it `first` is a plain number to autograd and the
second grad raises "element 0 of tensors does not require grad ..."."""

# The last x arrives with a gradient in its .grad already, as a caller's x may: a
# derivative read from x.grad after backward() then holds that gradient too.
SECOND_CASES = (
    ("x ** 3", lambda x: x**3, -1.5, (6.75, -9.0), None),
    (
        "x ** 2 * exp(x)",
        lambda x: x**2 * ng.exp(x),
        0.5,
        (1.25 * np.exp(0.5), 4.25 * np.exp(0.5)),
        None,
    ),
    ("x ** 3", lambda x: x**3, 0.5, (0.75, 3.0), 100.0),
)


@checker("03-5", answer=SECOND_ANSWER)
@keeps_learner_state
def check_second_derivative(derivatives) -> Result:
    """``derivatives(f, x)`` returns f'(x) and f''(x), computed with autograd.grad twice."""
    ex = "03-5"
    bad = not_callable(ex, derivatives)
    if bad is not None:
        return bad
    recorded = False  # whether some first derivative was built with create_graph=True
    for text, f, at, (want1, want2), held in SECOND_CASES:
        x = ng.tensor(at, dtype=ng.float64, requires_grad=True)
        if held is not None:
            x.grad = ng.tensor(held, dtype=ng.float64)
        x_grad_before = x.grad
        calls_of_f: list = []
        unrecorded: list = []  # calls of f made with grad mode off (inside ng.no_grad())

        def given(v, f=f):  # f, counting its calls: a formula of one's own never calls it
            calls_of_f.append(v)
            if not ng.is_grad_enabled():
                unrecorded.append(v)
            return f(v)

        x_before = tensor_state(x, with_grad=False)
        grad_mode_before = ng.is_grad_enabled()
        with AutogradCalls() as calls, _torch_or_static_calls() as outside_calls:
            try:
                got = derivatives(given, x)
                raised = None
            except Exception as exc:  # recognised below, or reported at the learner's line
                raised = exc
        recorded = recorded or any(calls.flags)
        torch_called = _called(outside_calls, torch=True)
        if torch_called:
            return not_yet(
                ex,
                [
                    "your function uses torch (its tensors or its autograd): the exercise "
                    "asks for naivegraph's autograd, on the naivegraph tensor x and the "
                    "naivegraph function f it is given.",
                    "the second derivative is the derivative of the first: naivegraph's "
                    "autograd can differentiate a result of its own, when it recorded "
                    "how it computed it.",
                ],
                gave=f"a function that calls torch ({torch_called})",
            )
        if ng.is_grad_enabled() != grad_mode_before:
            ng.set_grad_enabled(grad_mode_before)
            return not_yet(
                ex,
                [
                    "your function left grad mode "
                    f"{'off' if grad_mode_before else 'on'} (ng.set_grad_enabled): for "
                    "every cell after it too, and for the next call of your function, "
                    "whose f(x) then records nothing to differentiate.",
                    "switch recording off for a block only, with `with ng.no_grad():`, "
                    "or leave grad mode alone: ng.autograd.grad needs none of it.",
                ],
                gave=f"a function that leaves grad mode {'off' if grad_mode_before else 'on'}",
            )
        x_changes = tensor_changes(x_before, tensor_state(x, with_grad=False))
        if x_changes:
            return not_yet(
                ex,
                [
                    f"your function changed the caller's x ({x_changes}): x belongs to "
                    "the caller, who may still train with it, so it must be left as it "
                    "came, with no flag switched and no hook left on it.",
                    "ng.autograd.grad needs nothing done to x: take both derivatives "
                    "with it and leave x as it is.",
                ],
                gave=f"a function that changes x ({x_changes}), for f(x) = {text}",
            )
        if raised is not None:
            return _second_raised(ex, raised, calls.flags, bool(unrecorded))
        if got is None or got is Ellipsis:
            return not_done(
                ex, "(your function returned None: it must return both derivatives, as a pair.)"
            )
        try:
            first, second = got
            first_v, second_v = float(as_array(first)), float(as_array(second))
        except (TypeError, ValueError):
            return _not_two_values(ex, got)
        if close(first_v, want2) and close(second_v, want1):
            return not_yet(ex, "your two values are swapped: return (first, second).")
        if close(second_v, want1 + want2):
            return not_yet(
                ex,
                [
                    "that is what x.grad holds after two backward calls: .grad "
                    "accumulates (and x.grad is one tensor, changed in place). Take each "
                    "derivative from ng.autograd.grad instead of reading x.grad.",
                    "ng.autograd.grad returns the derivative without touching x.grad.",
                ],
                gave=f"f'({at}) = {show(first_v)}, f''({at}) = {show(second_v)} for f(x) = {text}",
            )
        cleared = x.grad is None or (
            x.grad is x_grad_before and bool(held) and not np.any(as_array(x.grad))
        )
        if cleared and x_grad_before is not None and first is not x.grad:
            return not_yet(
                ex,
                [
                    "your function cleared x.grad (set it to None, or zeroed it): x.grad "
                    "belongs to the caller, who "
                    "may still need the gradient it held. ng.autograd.grad neither reads "
                    "nor writes x.grad, so there is nothing to clear first.",
                    "leave x.grad alone: take both derivatives from ng.autograd.grad.",
                ],
                gave=f"x.grad cleared by your function, for f(x) = {text}",
            )
        if first is not x.grad and _grad_changed(x, x_grad_before, held):
            return not_yet(
                ex,
                [
                    "your function changed x.grad, which belongs to the caller: backward() "
                    "writes into x.grad (it adds to what is there), so a gradient x.grad "
                    "already held ends up in your result. Use ng.autograd.grad twice.",
                    "ng.autograd.grad returns each derivative and leaves x.grad alone.",
                ],
                gave=f"x.grad changed by your function, for f(x) = {text}",
            )
        if not close(first_v, want1):
            return not_yet(
                ex,
                _first_hints(
                    text,
                    at,
                    first is x.grad,
                    bool(calls_of_f),
                    ignores_x=bool(calls_of_f) and not any(_holds(v, at) for v in calls_of_f),
                ),
                gave=f"f'({at}) = {show(first_v)} for f(x) = {text}",
            )
        if not close(second_v, want2):
            return not_yet(
                ex,
                _second_hints(
                    first_v, second_v, want2, cut=getattr(first, "grad_fn", None) is None
                ),
                gave=f"f''({at}) = {show(second_v)} for f(x) = {text}",
            )
        in_float32 = [v for v in (*calls_of_f, first, second) if _is_float32(v)]
        if in_float32 and not (
            close(first_v, want1, atol=0.0, rtol=1e-11)
            and close(second_v, want2, atol=0.0, rtol=1e-11)
        ):
            return not_yet(
                ex,
                [
                    "your derivatives are computed in float32 (a cast such as .float() or "
                    "dtype=ng.float32): float32 keeps about 7 digits, so they are off "
                    "in the 8th. x comes in float64: keep its dtype, with no cast, for "
                    "f(x) and for what you return.",
                    "call f on x as it is given and return the tensors ng.autograd.grad "
                    "gives, unconverted.",
                ],
                gave=f"float32 derivatives for f(x) = {text}",
            )
        # Autograd is exact to rounding; a finite difference is off in the 8th digit.
        for which, value, want in (("first", first_v, want1), ("second", second_v, want2)):
            if not close(value, want, atol=0.0, rtol=1e-11):
                return not_yet(
                    ex,
                    [
                        f"your {which} derivative is close but not exact: it looks like a "
                        "finite difference, an estimate. Autograd differentiates the "
                        "recorded ops exactly: take both derivatives from "
                        "ng.autograd.grad.",
                        "the second derivative is autograd.grad of the first derivative, "
                        "which must itself be a tensor autograd recorded.",
                    ],
                    gave=f"a {which} derivative off by {abs(value / want - 1):.0e} "
                    f"(relative) for f(x) = {text}",
                )
    if recorded:
        return correct(
            ex,
            "create_graph=True recorded the first backward pass, and differentiating it gave f''.",
        )
    return correct(ex, "both derivatives are autograd's, exact on every function tried.")


def _is_float32(value) -> bool:
    """A float32 tensor or number: a cast the learner made on the float64 x."""
    return getattr(value, "dtype", None) in (ng.float32, np.float32)


def _not_two_values(ex: str, got) -> Result:
    """The hint for a ``derivatives`` whose result is not two numbers."""
    if isinstance(got, dict):
        return not_yet(
            ex,
            "return the two derivatives as two values, first then second, not a dict.",
            gave="a dict",
        )
    if isinstance(got, (tuple, list)) and any(isinstance(g, (tuple, list)) for g in got):
        return not_yet(
            ex,
            "ng.autograd.grad returns a tuple, one gradient per input: unpack it, "
            "(g,) = ..., and return the tensors themselves, not the tuples.",
            gave="tuples where derivatives were expected",
        )
    return failed(
        ex,
        f"your function returned {type(got).__name__}; hint: return two "
        "values, the first and the second derivative.",
    )


def _grad_changed(x, before, held: float | None) -> bool:
    """Whether x.grad is another tensor, or other values, than the caller gave."""
    if x.grad is not before:
        return True
    return held is not None and not np.array_equal(as_array(x.grad), held)


def _second_raised(ex: str, exc: Exception, flags: list, grad_off: bool = False) -> Result:
    """The hint for a ``derivatives`` that raised, told by what autograd ran before
    (and, with ``grad_off``, f having been called with grad mode off)."""
    text = str(exc)
    if isinstance(exc, RuntimeError) and "does not require grad" in text and grad_off:
        return not_yet(
            ex,
            [
                "grad mode was off (inside `with ng.no_grad():`, say) while f computed "
                "f(x): nothing recorded how f(x) depends on x, so autograd.grad has no "
                "graph to differentiate.",
                "compute f(x) with grad mode on: keep `with ng.no_grad():` away from "
                "what you differentiate; ng.autograd.grad needs no block around it.",
            ],
            gave="a function that computes f(x) with grad mode off",
        )
    if isinstance(exc, RuntimeError) and "does not require grad" in text and len(flags) >= 2:
        if any(flags[:-1]):  # an earlier pass was recorded: its result was then cut off
            return not_yet(
                ex,
                [
                    "the first derivative was recorded, but then cut from the graph before "
                    "the second autograd.grad: .data, .detach(), .item() or float() give "
                    "a value autograd cannot differentiate.",
                    "hand the first derivative itself, as autograd.grad returned it, to "
                    "the second autograd.grad.",
                ],
                gave="a first derivative cut from its graph",
            )
        return not_yet(
            ex,
            [
                "the second autograd.grad raised: the first derivative has no "
                "grad_fn, because the first backward pass was not recorded.",
                "the first ng.autograd.grad must record its own computation: "
                "look at its create_graph argument.",
            ],
            gave="a function whose second grad raises",
        )
    if isinstance(exc, RuntimeError) and "does not require grad" in text:
        return not_yet(
            ex,
            [
                "the first autograd.grad raised: f(x) was not computed from the x you "
                "were given (a copy cut from the graph, such as x.data or x.detach(), "
                "has no history).",
                "call f on x itself, then differentiate the result with respect to x.",
            ],
            gave="a function whose first grad raises",
        )
    if isinstance(exc, RuntimeError) and "second time" in text:
        return not_yet(
            ex,
            "the first pass freed the graph of f(x) before the second used it: "
            "build the first derivative with create_graph=True, then differentiate it.",
            gave="a function that backs through a freed graph",
        )
    return failed(ex, crash_message(exc))


def _holds(value, at: float) -> bool:
    """Whether ``value``, which f was called on, holds the x the checker gave (``at``):
    x itself, or a copy or view of it (what ng.func.grad hands f)."""
    try:
        return bool(np.all(as_array(value) == at))
    except (TypeError, ValueError):
        return False


def _first_hints(
    text: str, at: float, is_x_grad: bool, called_f: bool, ignores_x: bool = False
) -> list[str]:
    """Hints for a wrong first derivative, told by where it came from."""
    if is_x_grad:
        return [
            "the first derivative you return is x.grad itself, one tensor that the "
            "backward pass after it changed in place (zeroed, or accumulated into): by "
            "the time you return it, it no longer holds f'(x).",
            "take each derivative from ng.autograd.grad, which returns a new tensor and "
            "leaves x.grad alone.",
        ]
    wrong = f"the first derivative is wrong for f(x) = {text} at x = {at}"
    if not called_f:
        return [
            f"{wrong}: your function never calls f, so it differentiates a formula of "
            "its own, not the f it is given.",
            "call f(x) and differentiate its result with ng.autograd.grad.",
        ]
    if ignores_x:
        return [
            f"{wrong}: your function calls f on a tensor of its own, never on the x it "
            "is given, so its result does not depend on that x: the checker tries "
            "several x and gets the derivative at your tensor's value each time.",
            "call f on the x your function receives, and differentiate with respect to "
            "that same x.",
        ]
    return [
        f"{wrong}: it is the gradient of f(x) with respect to x, taken once.",
        "hand f(x) and x to ng.autograd.grad and return the derivative it gives as it "
        "is, without scaling or combining it with anything.",
    ]


def _second_hints(first: float, second: float, want: float, cut: bool = False) -> list[str]:
    if close(second, first) and cut:
        why = (
            "your second derivative equals the first, and the first derivative you "
            "return has no history: it was cut from the graph (detach(), or taken "
            "without create_graph=True), so whatever is built from it treats it as a "
            "constant and its own derivative is lost. Differentiate `first` itself, as "
            "autograd built it, without detaching it."
        )
    elif close(second, first):
        why = "your second derivative equals the first: differentiate `first`, not f(x) again."
    else:
        why = "differentiate the first derivative once more, with respect to x."
    return [
        why,
        "the second derivative is the derivative of the first one, and only a first "
        "derivative built with create_graph=True can be differentiated.",
    ]
