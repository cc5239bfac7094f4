"""Checkers of lesson 04: in-place operations."""

from __future__ import annotations

import contextlib
import inspect

import numpy as np

import naivegraph as ng

from ..checking import (
    cell_computes,
    forgot_return,
    keeps_learner_state,
    LearnerState,
    Result,
    as_bools,
    call_answer,
    checker,
    close,
    correct,
    failed,
    is_blank,
    is_tensor,
    not_callable,
    not_done,
    not_yet,
    returned_blank,
    show,
)
from .lesson02 import as_flags, flags_problem

VERSIONS_ANSWER = """versions = [0, 1, 2, 2, 3].
A new tensor starts at version 0 (b = a + 2).  Each in-place op adds 1: b[0] = 1000
(indexing assignment), b.mul_(2) (trailing underscore), b += 1 (augmented assignment
on a tensor writes into it).  c = b * 3 makes a NEW tensor and leaves b alone."""

LINES = ("b = a + 2", "b[0] = 1000", "b.mul_(2)", "c = b * 3", "b += 1")


@checker("04-1", answer=VERSIONS_ANSWER, predicts=True)
def check_versions(versions) -> Result:
    """b = a + 2; b[0] = 1000; b.mul_(2); c = b * 3; b += 1: b._version after each line."""
    ex = "04-1"
    if is_blank(versions):
        return not_done(ex)
    if isinstance(versions, (str, bytes)) or not _is_sequence(versions):
        return failed(ex, "give a list of numbers, five integers; hint: one _version per line.")
    if is_tensor(versions) and versions.grad_fn is None and versions.dim() == 1:
        versions = versions.tolist()  # the numbers typed into a tensor: no history
    items = list(versions)
    if is_tensor(versions) or any(is_tensor(v) for v in items):
        return not_yet(
            ex,
            [
                "that is a tensor: _version is a plain Python int, so give a list of "
                "plain ints, one per line, without ng.tensor(...) around them.",
                "for each line ask: is b's memory written (version + 1) or not (unchanged)?",
            ],
            gave="a tensor",
        )
    if any(isinstance(v, (str, bytes, np.str_, bool, np.bool_)) for v in items):
        return failed(
            ex,
            "give a list of numbers, not text or True / False: write each version as a "
            "number, without quotes.",
        )
    if len(items) != 5:
        return failed(ex, f"give five integers, one per line; you gave {len(items)}.")
    if not all(_whole_number(v) for v in items):
        return not_yet(
            ex,
            [
                "a version is a whole number: a counter that starts at 0 and goes up "
                "by 1 with each in-place op, so it never holds a fraction.",
                "for each line ask: is b's memory written (version + 1) or not (unchanged)?",
            ],
            gave=str(items),
        )
    read = cell_computes(reads=("_version",))
    if read:
        return not_yet(
            ex,
            [
                f"your cell reads the versions off the tensors instead of predicting them: "
                f"it uses {read}. The exercise asks you to PREDICT b._version after each "
                "line, and to type the five numbers.",
                "for each line ask: is b's memory written (version + 1) or not (unchanged)?",
            ],
            gave=f"a cell that uses {read}",
        )
    got = [int(v) for v in items]
    want = [0, 1, 2, 2, 3]
    if got == want:
        return correct(
            ex,
            "each in-place op adds 1; out-of-place ops (like c = b * 3) leave b "
            "alone: [0, 1, 2, 2, 3].",
        )
    if not any(got):
        first = (
            "nothing was counted: every version you gave is 0. Is it b's _version you "
            "read, after each line (not a's)? Each line that writes into b adds 1."
        )
    elif got[0] != 0:
        first = "b = a + 2 makes a brand-new tensor: a fresh tensor starts at version 0."
    else:
        # the first line where the learner's step (change from the line before) is wrong
        steps = [g - p for g, p in zip(got[1:], got)]
        wrong_line = next(i for i, (s, w) in enumerate(zip(steps, (1, 1, 0, 1))) if s != w) + 1
        first = {
            1: "b[0] = 1000 writes into b's memory: it is an in-place op.",
            2: "mul_ (with the trailing underscore) changes b in place.",
            3: "c = b * 3 makes a NEW tensor c: is b itself changed?",
            4: "b += 1 on a tensor writes into it (unlike on a Python int, which is rebound).",
        }[wrong_line]
        if any(s > 1 for s in steps):
            first = "each in-place op adds exactly 1 to _version. " + first
    return not_yet(
        ex,
        [first, "for each line ask: is b's memory written (version + 1) or not (unchanged)?"],
        gave=str(got),
    )


def _is_sequence(x) -> bool:
    try:
        iter(x)
    except TypeError:
        return False
    return not isinstance(x, dict)


def _whole_number(v) -> bool:
    """An int, or a float that is integral (2.0): not a bool, not text, not 1.9."""
    if isinstance(v, (bool, np.bool_)):
        return False
    if isinstance(v, (int, np.integer)):
        return True
    return isinstance(v, (float, np.floating)) and float(v).is_integer()


PREDICTIONS_ANSWER = """raises = (True, False, True).
(1) b * b saves b (its gradient is 2b); b[0] = 1000 changes b afterwards: error.
(2) b + 1 saves nothing (its derivative is 1 whatever b is): fine.
(3) exp saves its OUTPUT b (d e^a / da = e^a); b.add_(1) changes it: error."""

SNIPPET_HINTS = (
    "(1): which tensor does b * b keep for its backward, and is that tensor written in "
    "place after the op kept it? Follow b's version counter from the op to backward.",
    "(2): does the backward of b + 1 need any tensor's values at all? An in-place op "
    "only matters to a backward that kept the tensor it wrote into.",
    "(3): what does exp keep for its backward, its input or its output? Follow that "
    "tensor's version counter: is it written in place before backward?",
)


@checker("04-2", answer=PREDICTIONS_ANSWER, predicts=True)
def check_inplace_predictions(predictions) -> Result:
    """Which of three snippets raises at backward?  (True = raises)"""
    ex = "04-2"
    predictions = as_flags(predictions)
    if is_blank(predictions):
        return not_done(ex)
    problem = flags_problem(predictions, 3, "(1), (2), (3)", each="snippet")
    if problem is not None:
        return failed(ex, f"hint: {problem}")
    ran = cell_computes(reads=("_version",), calls=("exec", "eval", "compile"))
    if ran:
        return not_yet(
            ex,
            [
                "your cell runs the snippets instead of predicting what they do: it uses "
                f"{ran}. The exercise asks you to PREDICT which snippets raise at backward "
                "from what each op saves, and to type True / False; the cell after the "
                "check runs them for you.",
                "backward raises only when a tensor an op SAVED for its backward was "
                "changed in place afterwards; which ops save which tensors?",
            ],
            gave=f"a cell that uses {ran}",
        )
    got = as_bools(predictions)
    want = (True, False, True)
    if got == want:
        return correct(
            ex,
            "(1) mul saved b, then b changed: error. (2) add saves nothing: fine. "
            "(3) exp saves its OUTPUT, which add_ changed: error.",
        )
    first = next(i for i in range(3) if got[i] != want[i])
    return not_yet(
        ex,
        [
            f"look again at snippet {SNIPPET_HINTS[first]}",
            "backward raises only when a tensor an op SAVED for its backward was changed "
            "in place afterwards; which ops save which tensors?",
        ],
        gave=str(got),
    )


RESET_ANSWER = """def reset(a):
    with ng.no_grad():
        a.fill_(10.0)
    return a

(a.data.fill_(10.0) or a.detach().fill_(10.0) work too.)  Outside no_grad, an in-place
op on a leaf that requires grad raises at once: recording it would make the leaf the
output of an op.  Under no_grad nothing is recorded, so `a` stays a leaf that requires
grad, with the new values, before any forward pass uses it."""


# Leaves reset() is tried on: no element is 10 already and some are above it, so a
# slice that skips an element, clamp_(min=...) or a fill with the largest value show;
# other lengths and shapes, so a slice sized for the first one does too.
RESET_CASES = (
    [3.0, 12.0, -1.0, 25.0],
    [7.5, 40.0, 0.0, -6.0, 11.0, 9.0],
    [[2.0, 14.0, -3.0], [30.0, 0.5, 8.0]],
    25.0,  # a 0-d leaf: one number, no dimension to slice
)
#: The leaf reset() is called on from inside the caller's ``with ng.no_grad():``: it
#: must leave recording off there, as the caller had it.
CALLER_NO_GRAD_CASE = [6.0, 13.0, -2.0]
#: Leaves of their own kind: float64 (a new tensor put in brings the default float32),
#: and values that are not finite (0 * inf and inf - inf are nan: a value computed from
#: `a` misses them).
OTHER_CASES = (
    ([4.0, 17.0, -5.0], ng.float64),
    ([float("nan"), float("inf"), -float("inf"), 2.0], ng.float32),
)


# A leaf that already holds a .grad from an earlier backward: reset leaves it as it is.
HELD_GRAD_CASE = [1.0, -2.0, 3.0]


_ANOTHER_TENSOR = [
    "your function returned a different tensor: every other reference to the leaf (an "
    "optimizer, a model) still sees the old values.",
    "change `a` itself, in place, and return it.",
]


def _reset_returning_another(reset) -> Result | None:
    """The refusal of a reset that returns another tensor than the leaf it was given
    (a new one it keeps in a global, say), asked before the state it writes is: that is
    the plainer mistake."""
    a = ng.tensor([3.0, 12.0, -1.0], requires_grad=True)
    try:
        got = reset(a)
    except Exception:  # the check itself reports the crash
        return None
    if not is_tensor(got) or got is a:
        return None
    return not_yet(
        "04-3",
        _ANOTHER_TENSOR,
        gave="a new tensor, not the leaf it was given",
    )


@checker("04-3", answer=RESET_ANSWER, first_look=_reset_returning_another)
@keeps_learner_state
def check_reset_leaf(reset) -> Result:
    """``reset(a)`` sets every element of a leaf that requires grad to 10, and returns a."""
    ex = "04-3"
    bad = not_callable(ex, reset)
    if bad is not None:
        return bad
    for values in RESET_CASES:
        result = _check_one_reset(ex, reset, values)
        if result is not None:
            return result
    for values, dtype in OTHER_CASES:
        result = _check_one_reset(ex, reset, values, dtype=dtype)
        if result is not None:
            return result
    result = _check_one_reset(ex, reset, CALLER_NO_GRAD_CASE, caller_no_grad=True)
    if result is not None:
        return result
    result = _check_one_reset(ex, reset, HELD_GRAD_CASE, held_grad=True)
    if result is not None:
        return result
    said = "a is still a leaf, holds 10s, and (a*a).mean() gives a.grad = 5s."
    if _uses_data(reset):
        said += (
            " .data works here because nothing has saved `a` yet; the lesson prefers "
            "no_grad or detach(), which keep autograd's version checks on."
        )
    return correct(ex, said)


def _check_one_reset(
    ex: str, reset, values, caller_no_grad: bool = False, dtype=None, held_grad: bool = False
) -> Result | None:
    a = ng.tensor(values, requires_grad=True, dtype=dtype)
    dtype = a.dtype
    held = None
    if held_grad:
        a.grad = ng.full_like(a, 0.5)
        held = (a.grad, a.grad.detach().numpy().copy(), a.grad._version)
    state = LearnerState()
    caller = ng.no_grad() if caller_no_grad else contextlib.nullcontext()
    try:
        with caller, state:
            got = reset(a)
    except RuntimeError as exc:
        if "leaf Variable that requires grad" in str(exc):
            return not_yet(
                ex,
                [
                    "your change raised: autograd records in-place ops on a leaf that "
                    "requires grad, and refuses them.",
                    "change the values where autograd does not record: the lesson's "
                    "'fixes' section shows three ways.",
                ],
                gave="a function that changes the leaf in place while recording",
            )
        return call_answer(ex, reset, ng.tensor(values, requires_grad=True, dtype=dtype))[1]
    except IndexError:
        if a.ndim == 0:
            return not_yet(
                ex,
                [
                    "your reset fails on a 0-d leaf (a single number, shape ()): it "
                    "indexes or slices `a`, and a 0-d tensor has no dimension to slice. "
                    "A parameter can be 0-d (a scale, a bias of one number).",
                    "change all of `a` in a way that works whatever its shape, 0-d "
                    "included: without a slice that needs a dimension.",
                ],
                gave="a reset that slices a 0-d leaf",
            )
        return call_answer(ex, reset, ng.tensor(values, requires_grad=True, dtype=dtype))[1]
    except Exception:  # reported at the learner's line
        return call_answer(ex, reset, ng.tensor(values, requires_grad=True, dtype=dtype))[1]
    if state.changed:
        return not_yet(ex, state.hint(), gave=f"a function that changed {state.changed[0]}")
    hooks = _hooks_on(a)
    if hooks:
        return not_yet(
            ex,
            [
                "your reset leaves a hook registered on `a` (leftover state, from a test "
                "in the function or an earlier try): every later backward runs it, "
                "whatever it returns, and a hook that changes the gradient changes a.grad.",
                "reset only changes the values of `a`: no register_hook on it.",
            ],
            gave=f"a with {hooks} hook{'s' if hooks > 1 else ''} registered by reset",
        )
    if held is not None:
        kept, values_held, version = held
        if (
            a.grad is not kept
            or kept._version != version
            or not np.array_equal(kept.detach().numpy(), values_held)
        ):
            return not_yet(
                ex,
                [
                    "your reset changes the .grad that `a` already held (from an earlier "
                    "backward): it set it to None, zeroed or replaced it. Clearing "
                    "gradients is the optimizer's zero_grad, a step of its own; reset "
                    "only sets the values. Leave its .grad alone.",
                    "reset only changes the values of `a`: touch nothing else on it.",
                ],
                gave="a reset that changed a .grad the caller's `a` already held",
            )
    elif a.grad is not None:
        return not_yet(
            ex,
            [
                "after your reset `a` already holds a .grad (leftover state, from a "
                "backward or an assignment in the function): the next backward adds to it "
                "instead of starting from nothing, and a .grad of zeros is one all the same.",
                "reset only changes the values of `a`: run no backward in it and leave its "
                ".grad alone.",
            ],
            gave=f"a.grad = {show(a.grad)} right after reset(a)",
        )
    blank = forgot_return(ex, reset, got)
    if blank is not None:
        return blank
    if got is not a:
        return not_yet(
            ex,
            _ANOTHER_TENSOR,
            gave=f"a new tensor {show(got)}",
        )
    if not a.requires_grad:
        return not_yet(
            ex,
            [
                "after your function `a` no longer requires grad: it would get no gradient.",
                "do not detach_() the leaf or switch its requires_grad off; change its "
                "values through something that does not record.",
            ],
            gave=f"a with requires_grad={a.requires_grad}",
        )
    if not a.is_leaf:
        return not_yet(
            ex,
            "`a` is no longer a leaf: an op was recorded on it, so its .grad would be dropped.",
            gave="a with a grad_fn",
        )
    result = _same_kind(ex, a, values, dtype)
    if result is not None:
        return result
    result = _all_tens(ex, a, values)
    if result is not None:
        return result
    grad_before = None if a.grad is None else a.grad.detach().numpy().copy()
    hooks = _hooks_on(a)
    loss = (a * a).mean()
    loss.backward()
    start = 0.5 if held is not None else 0.0
    if not close(a.grad, np.full(np.shape(values), start + 10.0 * 2 / np.size(values))):
        if hooks:
            return not_yet(
                ex,
                [
                    "your reset leaves a hook registered on `a` (leftover state, from an "
                    "earlier try or a test in the function): every later backward runs "
                    "it, and it changes the gradient that reaches a.grad.",
                    "reset only changes the values of `a`: no register_hook on it.",
                ],
                gave=f"a with {hooks} hook{'s' if hooks > 1 else ''} registered by reset",
            )
        if grad_before is not None and held is None:
            return not_yet(
                ex,
                [
                    "after your reset `a` already holds a .grad (leftover state, from a "
                    "backward or an assignment in the function): the next backward adds "
                    "to it instead of starting from nothing.",
                    "reset only changes the values of `a`: run no backward in it and "
                    "leave its .grad as it was.",
                ],
                gave=f"a.grad = {show(grad_before)} right after reset(a)",
            )
        return not_yet(
            ex,
            "the new values must be in place before the forward pass.",
            gave=f"a.grad = {show(a.grad)} after (a*a).mean().backward()",
        )
    return None


def _hooks_on(a) -> int:
    """How many hooks are registered on the leaf ``a`` (on its gradient, or after it
    is accumulated)."""
    found = 0
    for hooks in (a._hooks, a.__dict__.get("_post_accumulate_hooks")):
        found += len(hooks) if hooks else 0
    return found


def _same_kind(ex: str, a, values, dtype) -> Result | None:
    """None when ``a`` kept the shape of ``values`` and its ``dtype``, else the hint:
    a new tensor put in through .data brings its own."""
    shape, now = tuple(np.shape(values)), tuple(a.shape)
    if now != shape:
        return not_yet(
            ex,
            [
                f"your reset changed the shape of `a` from {shape} to {now}: change the "
                "values of `a` and keep its shape, so every use of it still fits.",
                "write into the elements `a` already has, instead of giving it a tensor "
                "of another shape.",
            ],
            gave=f"a of shape {now} for a leaf of shape {shape}",
        )
    if a.dtype != dtype:
        was, now_type = _dtype_name(dtype), _dtype_name(a.dtype)
        return not_yet(
            ex,
            [
                f"your reset changed the dtype of `a` from {was} to {now_type}: "
                "a new tensor put in its place brings its own dtype, and the model's other "
                "tensors no longer match it.",
                "write the new values into `a` itself, which keeps its dtype.",
            ],
            gave=f"a of dtype {now_type} for a {was} leaf",
        )
    return None


def _dtype_name(dtype) -> str:
    return str(dtype).rsplit(".", 1)[-1]


def _all_tens(ex: str, a, values) -> Result | None:
    """None when every element of ``a`` is 10, else the hint for the elements missed."""
    now, before = a.detach().numpy(), np.asarray(values, dtype=np.float64)
    if now.shape == before.shape and np.all(now == 10.0):
        return None
    gave = f"a = {show(a)} for a leaf that held {show(before)}"
    if now.shape == before.shape and np.allclose(now, 10.0):
        digits = np.array2string(now, separator=", ", floatmode="unique")
        return not_yet(
            ex,
            [
                "close, but not exact: some elements are off by a hair. Every element "
                "must become 10 itself, not a number near it.",
                "set the values to the number itself, typed exactly.",
            ],
            gave=f"a = {digits}",
        )
    if now.shape == before.shape and not np.isfinite(before).all():
        missed = _not_finite_missed(now, before)
        if missed is not None:
            return not_yet(
                ex,
                [
                    f"{missed} A leaf can hold any float, and every element must become 10.",
                    "set the values to the number itself, not one computed from `a`.",
                ],
                gave=gave,
            )
    if now.shape == before.shape:
        kept = (now == before) & (now != 10.0)
        if kept.any() and (now == 10.0).any():
            above = bool(np.all(before[kept] > 10.0))
            changed = now != before
            first = (
                "the elements that were above 10 kept their values: a lower bound "
                "(clamp) raises the small ones only. Set every element."
                if above
                else "only one element of `a` was set: an index picks a single element. "
                "Set every element."
                if int(changed.sum()) == 1 and now.size > 1
                else "some elements kept their old values: your change missed part of `a` "
                "(a slice that starts or stops too early?). Set every element."
            )
            return not_yet(
                ex, [first, "change all of `a`, whatever its shape and length."], gave=gave
            )
    return not_yet(
        ex,
        [
            "every element of `a` must become 10, whatever it held before.",
            "set the values to the number itself, not one computed from `a`.",
        ],
        gave=gave,
    )


def _held(value: float) -> str:
    """What an element that is not finite held: nan, inf or -inf."""
    return "nan" if np.isnan(value) else "inf" if value > 0 else "-inf"


def _kinds(values) -> str:
    """The kinds of non-finite values held, in the order nan, inf, -inf: "nan, inf and
    -inf", "inf and -inf", "nan"."""
    held = {_held(v) for v in values}
    kinds = [k for k in ("nan", "inf", "-inf") if k in held]
    return " and ".join(filter(None, [", ".join(kinds[:-1]), kinds[-1]])) if kinds else ""


def _not_finite_missed(now: np.ndarray, before: np.ndarray) -> str | None:
    """The first sentence of the hint for a reset that left elements not finite where
    the leaf held nan or inf, saying which of them (and which became 10); None when an
    element that held a number is not finite either, or every element is finite."""
    missed = ~np.isfinite(now)
    if not missed.any() or np.isfinite(before[missed]).any():
        return None
    kinds = _kinds(before[missed])
    one = int(missed.sum()) == 1
    fixed = ~np.isfinite(before) & (now == 10.0)
    became = _kinds(before[fixed])
    kept = np.array_equal(now[missed], before[missed], equal_nan=True)
    after = "nan" if np.isnan(now[missed]).all() else "not finite"
    if kept:
        sentence = (
            f"the element that held {kinds} still holds {kinds}, not 10"
            if one
            else f"the elements that held {kinds} still hold those values, not 10"
        )
    else:
        sentence = (
            f"the element that held {kinds} is {after} now, not 10"
            if one
            else f"the elements that held {kinds} are {after} now, not 10"
        )
    if became:
        which = "one" if int(fixed.sum()) == 1 else "ones"
        sentence += f" (the {which} that held {became} did become 10)"
    if kept and np.isnan(before[missed]).all():
        why = (
            "a value computed from `a` keeps a nan a nan (nan * 0, nan + 10, and "
            "clamp, max or min of a nan are all nan)."
        )
    elif kept:
        why = (
            "a value computed from `a` keeps nan and inf as they are (nan * 0 is nan, "
            "inf + 10 is inf)."
        )
    elif np.isnan(now[missed]).all():
        why = "a value computed from `a` (0 * inf, inf - inf) is nan there."
    else:
        why = "a value computed from `a` is not finite there."
    return f"{sentence}: {why}"


def _uses_data(fn) -> bool:
    """Whether the learner's function goes through ``.data`` (read from its source)."""
    try:
        return ".data" in inspect.getsource(fn)
    except (OSError, TypeError):  # no source to read: say nothing more
        return False
