"""Checkers of lesson 01: computational graphs.

Every rejection names the learner's wrong value and hints at the mistake that value
comes from (a sum where the mean was meant, one path of two, one element of four),
never the expected number: that one only ``ex.reveal(...)`` shows.
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from ..checking import _is_library  # the frames of the library, skipped
from ..checking import (
    cell_computes,
    cell_model_tensors,
    Result,
    learner_frame,
    learner_namespace,
    checker,
    close,
    correct,
    hint_for,
    is_blank,
    is_tensor,
    not_by_hand,
    not_done,
    TEXT_HINT,
    not_yet,
    show,
    typed_as_text,
)

_ON_PAPER = {
    "01-1": "follow the model cell line by line on paper, one element at a time (every "
    "element of input is 1).",
    "01-2": "go backward from the loss with the chain rule on paper, as the section "
    "'Gradients by hand' lays out.",
}
_ON_PAPER["01-3"] = _ON_PAPER["01-2"]
_SIGN = (
    "check the sign: the weights, the layers and the mean's 1/4 are all positive here, "
    "so no minus enters the chain rule."
)
_FORWARD_SIGN = (
    "check the sign: input and the weights are all positive, and the forward pass only "
    "adds and multiplies them, so no layer (nor the loss) is negative."
)


def _sign_mistake(values, hint: str = _SIGN) -> list:
    """The known mistake of a minus sign: the negative of any of ``values``."""
    return [(tuple(-v for v in values if v), hint)]


def _exact(got, want: float) -> bool:
    """``got`` is ``want`` itself: the whole numbers of this lesson come out exact by
    hand, and in float32 too, so only a last-bit rounding is let through (not 40.0003)."""
    return close(got, want, atol=0.0, rtol=2.0**-22)


def _near(got, want: float) -> bool:
    """``got`` within a thousandth of ``want``: a nudged or rounded value (40.001), told
    it is close but not exact rather than sent back to redo the line."""
    return close(got, want, atol=0.0, rtol=1e-3)


_NEAR_MISS = (
    "close, but not exact: worked out by hand from these weights, every value here comes "
    "out exact, with no rounding error or estimate in it. Type the exact value."
)


# Limit: a number read off the screen and typed, or computed where no notebook cell
# keeps it (eval, exec, a file), cannot be told from one worked out by hand.  The
# cell that calls the check is read (``cell_computes``), and the values it only names
# are followed back through the learner's earlier cells: a backward, autograd or torch
# there, under any name, a derivative of ng.func (jacrev, vjp, grad, ...), or a value
# read off a tensor (.grad, .item()), is refused; and so is an answer the cell computed
# from the model's tensors (``cell_model_tensors``: float(l1[0, 0]), np.asarray(loss),
# the forward pass again under no_grad).  Plain Python arithmetic in the cell is how a
# learner may well work the numbers out, so a finite difference written in it (exact
# for this quadratic model with a step of 0.5) is accepted: a limit too.  The lab keeps
# no count of autograd runs; a count since the setup or the last check would refuse a
# learner who ran the later cells (backward) first and came back.
def _autograd_ran(ex: str) -> Result | None:
    """The refusal when the lesson's shared tensors show a backward pass run before
    this check (the exercise is by hand), or None.  The notebook's ``w1``, ``w2``,
    ``w3`` hold a .grad, its ``loss`` has a freed graph, or a torch tensor holds one."""
    space = learner_namespace()
    torch_grads = [
        v
        for v in list(space.values())
        if type(v).__module__.startswith("torch")
        and is_tensor(v)
        and getattr(v, "is_leaf", False)
        and getattr(v, "grad", None) is not None
    ]
    weights = [space.get(n) for n in ("w1", "w2", "w3")]
    held = any(is_tensor(w) and w.grad is not None for w in weights)
    loss = space.get("loss")
    freed = is_tensor(loss) and loss.grad_fn is not None and bool(loss.grad_fn.freed)
    assigned = [] if freed or torch_grads else _grads_assigned(space)
    if assigned:
        shown = ", ".join(f"{w}.grad" for w in assigned)
        first = (
            f"{shown} holds a value a cell above assigned to it (`{assigned[0]}.grad = "
            "...`): no backward ran, but the model is changed all the same, and the later "
            "cells need it as it was, with no .grad on w1, w2 or w3 (the backward they run adds "
            "to what .grad holds). Set it back in a cell of its own with "
            f"`{assigned[0]}.grad = None`"
            + (" (and the same for the others)" if len(assigned) > 1 else "")
            + ", or re-run the model cell, then type the values you work out on paper."
        )
        return not_yet(ex, [first, _ON_PAPER[ex]], gave=f"your answers with {shown} set by assignment")
    if torch_grads:
        first = (
            "a torch tensor in your notebook holds a .grad: your answer came from torch's "
            "autograd. This exercise asks for the gradients worked out by hand, on paper."
        )
        gave = "gradients computed by torch"
    elif held or freed:
        first = (
            "a backward pass already ran on the lesson's model ("
            + ("w1, w2 or w3 holds a .grad" if held else "the graph of `loss` was freed")
            + "): this exercise asks for the gradients worked out by hand, not by "
            "backward() or autograd.grad, and the later cells need the model as it was. "
            "Re-run the notebook's cells from the top (the model cell makes fresh w1, w2, "
            "w3 and loss), then type the values you work out on paper."
        )
        gave = "gradients computed by autograd"
    else:
        return None
    return not_yet(ex, [first, _ON_PAPER[ex]], gave=gave)


def _not_by_hand(ex: str, answers) -> Result | None:
    """Text, a tensor (read off the model or its .grad) or a whole tensor's worth of
    numbers, where one number worked out by hand was asked."""
    if any(a is None for a in answers):
        if any(a is not None and _several(a) for a in answers):
            return not_yet(ex, [_PACKED_HINT, _ON_PAPER[ex]], gave="several numbers in one answer and None")
        return not_yet(ex, [_NONE_HINT[ex], _ON_PAPER[ex]], gave="None")
    if typed_as_text(answers):  # numpy would read "40" as the number 40
        return not_yet(ex, [TEXT_HINT, _ON_PAPER[ex]], gave="text (a string in quotes)")
    if any(isinstance(a, complex) or np.iscomplexobj(a) for a in answers if not is_tensor(a)):
        return not_yet(ex, [_REAL_NUMBER, _ON_PAPER[ex]], gave="a complex number")
    if not any(_read_off(a) for a in answers):
        # typed in, tensors or not: the only mistake of form left is several numbers
        typed = [a.detach().numpy() if is_tensor(a) else a for a in answers]
        several = not_by_hand(typed)
        if several is not None and several[0].startswith("one number inside"):
            return not_yet(ex, [several[1], _ON_PAPER[ex]], gave=several[0])
        if several is not None and any(is_tensor(a) for a in answers):
            if _a_tensor_read_off(answers):
                return not_yet(ex, [_ONE_NUMBER, _ON_PAPER[ex]], gave="a tensor of several numbers")
            return not_yet(ex, [_WHOLE_TENSOR, _ON_PAPER[ex]], gave="a tensor of several numbers")
        if several is not None:
            return not_yet(ex, [several[1], _ON_PAPER[ex]], gave=several[0])
    computed = _cell_computes()
    if computed:
        return not_yet(
            ex,
            [
                "your cell computes the value instead of working it out by hand: it uses "
                f"{computed}. Type the number you work out on paper, with no tensor, "
                "backward or autograd in the cell.",
                _ON_PAPER[ex],
            ],
            gave=f"a cell that uses {computed}",
        )
    model = _as_the_lesson_names(cell_model_tensors())
    if model:
        shown = ", ".join(model)
        return not_yet(
            ex,
            [
                "your cell reads the value off the model instead of working it out by hand: "
                f"your answer is computed from the model's tensors ({shown}), and float(), "
                "int(), numpy or indexing only turn what the model computed into a number. "
                "Type the number you work out on paper, with no tensor of the model in the "
                "cell.",
                _ON_PAPER[ex],
            ],
            gave=f"a value computed from the model's tensors ({shown})",
        )
    # one number typed as a tensor (ng.tensor(7.0)) is one number; [7.0] is a list
    computed = not_by_hand([_plain(a) for a in answers])
    if computed is None:
        return None
    gave, hint = computed
    return not_yet(ex, [hint, _ON_PAPER[ex]], gave=gave)


# The tensors lesson 1's model cell makes, by the names it gives them.
_LESSON_TENSORS = ("input", "w1", "w2", "w3", "l1", "l2", "l3", "l4", "loss")


def _as_the_lesson_names(found: list[str]) -> list[str]:
    """The model's tensors an answer is computed from, each under the model cell's own
    name: a name of the learner's that holds one of them as it is
    (``loss_value = names['loss']``) is shown as the tensor it holds (loss)."""
    space = learner_namespace()
    shown: list[str] = []
    for name in found:
        value = space.get(name)
        same = [n for n in _LESSON_TENSORS if is_tensor(value) and space.get(n) is value]
        name = name if name in same or not same else same[0]
        if name not in shown:
            shown.append(name)
    return shown


def _parsed(source: Any) -> ast.Module | None:
    try:
        return ast.parse(source) if isinstance(source, str) else None
    except (SyntaxError, ValueError):
        return None


def _grads_assigned(space: dict[str, Any]) -> list[str]:
    """The weights (w1, w2, w3) that hold a .grad and that a cell above assigned one
    to (``w1.grad = ng.tensor(28.0)``): no backward put it there.  ``w1.grad = None``,
    the reset the hints ask for, takes the weight off the list again."""
    history = space.get("In")
    if not isinstance(history, list):
        return []
    assigned: set[str] = set()
    for source in history[:-1]:
        tree = _parsed(source)
        nodes = [n for n in ast.walk(tree) if isinstance(n, (ast.Assign, ast.AugAssign,
                 ast.AnnAssign))] if tree is not None else []
        for node in sorted(nodes, key=lambda n: (n.lineno, n.col_offset)):  # in cell order
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {t.value.id for t in targets if isinstance(t, ast.Attribute)
                     and t.attr == "grad" and isinstance(t.value, ast.Name)}
            reset = isinstance(node.value, ast.Constant) and node.value.value is None
            assigned = assigned - names if reset else assigned | names
    return [w for w in ("w1", "w2", "w3") if w in assigned
            and is_tensor(space.get(w)) and space[w].grad is not None]


def _several(value) -> bool:
    """Several numbers in one answer: a tuple, a list or an array of more than one."""
    try:
        return np.size(value.detach().numpy() if is_tensor(value) else value) > 1
    except Exception:  # not array-like: not several numbers
        return False


_PACKED_HINT = (
    "one of your answers holds several numbers and another is None: each name takes ONE "
    "number of its own. Give each its own value, one per name, and pass them to the check "
    "in the order it asks for."
)

# None is what .grad holds before any backward has run (and what a non-leaf's .grad
# holds after one): an answer read off .grad too early.
_NONE_HINT = {
    "01-1": "None is not a number: type the value you work out by hand.",
    "01-2": ".grad is None until a backward pass has run, and no backward has run "
    "before this cell (loss.backward() comes after the exercises): reading .grad here "
    "gives None. This exercise asks for the value worked out by hand anyway: type it "
    "as a plain number.",
    "01-3": "l1 is not a leaf: autograd keeps no .grad for it (it is None, even after "
    "backward, unless retain_grad() was asked for). This exercise asks for the value "
    "worked out by hand: type it as a plain number.",
}


# What a cell that reads its answer off the model (or its .grad) uses: the attributes
# that give a tensor's value or gradient.  Read from the cell's compiled code.
_READ_OFF_ATTRIBUTES = ("grad", "item", "detach", "numpy", "tolist", "data", "retain_grad")


def _cell_computes() -> str:
    """What the cell that called the check uses to compute its answer: a backward,
    autograd, torch, or an attribute that reads a value off a tensor; "" for none."""
    return cell_computes(reads=_READ_OFF_ATTRIBUTES)


def _plain(value):
    """One number typed as a tensor with no history (ng.tensor(7.0)): the number;
    anything else as it was given."""
    if _typed_tensor(value):
        return float(np.asarray(value.detach().numpy(), dtype=np.float64).reshape(()))
    return value

_REAL_NUMBER = (
    "that is a complex number (it has a j part): every value of this model is a real "
    "number. Type a plain real number, without j."
)

# A tensor of several numbers with no history: typed in, or read off a .grad.
_ONE_NUMBER = (
    "ONE number is asked, the value you work out by hand, not one read off the model or "
    "its .grad: every element is the same, so type one element as a plain number, not "
    "a whole tensor of them."
)

# A tensor of several numbers the learner typed in (ng.ones([2, 2]) * 2): nothing was
# read off the model, but one element was asked and this is all four.
_WHOLE_TENSOR = (
    "ONE number is asked, one element of the layer, and yours is a whole tensor of "
    "them: every element is the same, so type that one element as a plain number, not "
    "a tensor."
)


def _a_tensor_read_off(answers) -> bool:
    """Whether a tensor among ``answers`` came off the model: the cell reads a value
    or a .grad off a tensor, computes from the model's tensors, or hands over the .grad
    of a tensor of the notebook (l1.grad after retain_grad)."""
    if _cell_computes() or cell_model_tensors():
        return True
    held = []
    frame = learner_frame()
    while frame is not None:  # the cell, and any code of the learner's that called it
        if not _is_library(frame.f_code.co_filename):
            for v in [*frame.f_globals.values(), *frame.f_locals.values()]:
                # a non-leaf's .grad warns when read: only leaves and retain_grad keep one
                if is_tensor(v) and (v.is_leaf or v.retains_grad) and v.grad is not None:
                    held.append(v.grad)
        frame = frame.f_back
    return any(is_tensor(a) and any(a is g for g in held) for a in answers)


def _read_off(value) -> bool:
    """A tensor that carries the model's history (read off the forward pass), or one of
    the model's own weights; a number typed as a tensor that requires grad is typed."""
    if not is_tensor(value):
        return False
    if value.grad_fn is not None:
        return True
    space = learner_namespace()
    return bool(value.requires_grad) and any(value is space.get(w) for w in _WEIGHTS)


# The leaves of the lesson's model: handing one over is reading the model.
_WEIGHTS = ("w1", "w2", "w3", "input")


def _typed_tensor(value) -> bool:
    """A tensor of one number without history: what ng.tensor(5.0) gives (not
    ng.tensor([5.0]), a number inside a list)."""
    return is_tensor(value) and not _read_off(value) and value.detach().numpy().shape == ()


def _digits(x) -> str:
    """A near miss shown with the digits that make it one (40.0003, not 40)."""
    try:
        return repr(float(np.asarray(x, dtype=np.float64)))
    except (TypeError, ValueError):
        return show(x)


FORWARD_ANSWER = """l1 = 2, l2 = 5, l3 = 8, l4 = 40, loss = 40 (one element each).
input is all ones, so l1 = 1 * w1 = 2; l2 = l1 + w2 = 2 + 3; l3 = l1 * w3 = 2 * 4;
l4 = l2 * l3 = 5 * 8; loss is the mean of four elements that are all 40."""


@checker("01-1", answer=FORWARD_ANSWER, predicts=True)
def check_forward_values(l1, l2, l3, l4, loss) -> Result:
    """The forward pass of the l1..l4 model, one element each, computed by hand."""
    ex = "01-1"
    answers = (l1, l2, l3, l4, loss)
    if is_blank(answers):
        return not_done(ex)
    stop = _not_by_hand(ex, answers)
    if stop is not None:
        return stop
    answers = tuple(_plain(a) for a in answers)
    expected = (2.0, 5.0, 8.0, 40.0, 40.0)
    names = ("l1", "l2", "l3", "l4", "loss")
    for name, got, want in zip(names, answers, expected):
        if _near(got, want) and not _exact(got, want):
            return not_yet(ex, [_NEAR_MISS, _ON_PAPER[ex]], gave=f"{name} = {_digits(got)}")
        if not _exact(got, want):
            return not_yet(ex, _forward_hints(name, got), gave=f"{name} = {show(got)}")
    return correct(ex, "l1 = 2, l2 = 5, l3 = 8, l4 = 40 and loss = 40 for every element.")


def _forward_hints(name: str, got) -> list[str]:
    """Hints for the first wrong layer: the mistake its value shows, then the recipe."""
    mistakes = {
        "l1": [((1.0,), "every element of input is 1, but l1 = input * w1: w1 is not 1.")],
        "l2": [
            ((3.0,), "l2 = l1 + w2: you have w2 alone; add l1 to it."),
            ((6.0,), "l2 = l1 + w2 is a sum, not a product."),
        ],
        "l3": [
            ((4.0,), "l3 = l1 * w3: you have w3 alone; multiply it by l1."),
            ((6.0,), "l3 = l1 * w3 is a product, not a sum."),
        ],
        "l4": [
            ((13.0,), "l4 = l2 * l3 is a product, not a sum."),
            ((160.0,), "one element of l4, not the total of its four elements."),
        ],
        "loss": [
            ((160.0,), "loss = l4.mean(), not l4.sum(): the mean divides the sum by 4."),
            ((10.0,), "the mean of four elements that are ALL equal to l4 is not l4 / 4."),
        ],
    }[name]
    recipe = {
        "l1": "multiply one element of input by w1 (see the cell that made w1).",
        "l2": "take your l1 and add w2 to it.",
        "l3": "take your l1 and multiply it by w3.",
        "l4": "multiply your l2 by your l3, element by element.",
        "loss": "add the four (equal) elements of l4 and divide by 4: that is l4.mean().",
    }[name]
    want = {"l1": 2.0, "l2": 5.0, "l3": 8.0, "l4": 40.0, "loss": 40.0}[name]
    first = hint_for(
        got,
        mistakes + _sign_mistake([want], _FORWARD_SIGN),
        f"{name} is computed in the model cell: redo that line by hand.",
    )
    return [first, recipe]


GRADS_ANSWER = """w1.grad = 28, w2.grad = 8, w3.grad = 10.
Per element: d loss / d l4 = 1/4; l1 reaches l4 along two paths, so
d l4 / d l1 = l3 + l2 * w3 = 8 + 20 = 28, and d loss / d w1 = 1/4 * 28 * input = 7;
d loss / d w2 = 1/4 * l3 = 2; d loss / d w3 = 1/4 * l2 * l1 = 2.5.  Each weight is a
scalar broadcast over the 4 elements, so its gradient is the sum: 4 * (7, 2, 2.5)."""

PER_ELEMENT = {"w1": 7.0, "w2": 2.0, "w3": 2.5}
GRADS = {"w1": 28.0, "w2": 8.0, "w3": 10.0}


@checker("01-2", answer=GRADS_ANSWER, predicts=True)
def check_leaf_grads(w1_grad, w2_grad, w3_grad) -> Result:
    """d loss / d w1, w2, w3 for the l1..l4 model, derived by hand."""
    ex = "01-2"
    if is_blank((w1_grad, w2_grad, w3_grad)):
        return not_done(ex)
    ran = _autograd_ran(ex)
    if ran is not None:
        return ran
    stop = _not_by_hand(ex, (w1_grad, w2_grad, w3_grad))
    if stop is not None:
        return stop
    w1_grad, w2_grad, w3_grad = (_plain(a) for a in (w1_grad, w2_grad, w3_grad))
    given = {"w1": w1_grad, "w2": w2_grad, "w3": w3_grad}
    for a, b in (("w2", "w3"), ("w1", "w3"), ("w1", "w2")):
        if close(given[a], GRADS[b]) and close(given[b], GRADS[a]):
            return not_yet(
                ex,
                [
                    f"two of your gradients are swapped, {a}.grad and {b}.grad: each is "
                    "the gradient of the other weight. Follow each weight's own path from the loss to see "
                    "which factor its gradient gets.",
                    _ON_PAPER[ex],
                ],
                gave=f"{a}.grad and {b}.grad in each other's place",
            )
    for name, got in zip(("w1", "w2", "w3"), (w1_grad, w2_grad, w3_grad)):
        if _near(got, GRADS[name]) and not _exact(got, GRADS[name]):
            return not_yet(ex, [_NEAR_MISS, _ON_PAPER[ex]], gave=f"{name}.grad = {_digits(got)}")
        if not _exact(got, GRADS[name]):
            return not_yet(ex, _grad_hints(name, got), gave=f"{name}.grad = {show(got)}")
    return correct(ex, "w1.grad = 28, w2.grad = 8, w3.grad = 10.")


def _grad_hints(name: str, got) -> list[str]:
    want, one = GRADS[name], PER_ELEMENT[name]
    common = [
        (
            (one,),
            f"that is the contribution of ONE element. {name} is a scalar broadcast over "
            "the 2x2 input: it touches all four elements, so add up their contributions.",
        ),
        ((want * 4,), "the mean's factor 1/4 is missing (loss = l4.mean())."),
        ((one / 4, want / 16), "the mean's factor 1/4 is counted twice: once is enough."),
    ]
    by_weight = {
        "w1": [
            (
                (160.0, 40.0),
                "w1 reaches the loss along two paths (through l2 and through l3): the "
                "chain rule ADDS the two paths' contributions; paths add, not multiply.",
            ),
            (
                (8.0, 20.0, 2.0, 5.0),
                "w1 reaches the loss along TWO paths (through l2 and through l3): "
                "the chain rule adds both.",
            )
        ],
        "w2": [((5.0, 1.25, 20.0), "l4 = l2 * l3: the derivative by l2 is the OTHER factor.")],
        "w3": [((5.0, 1.25, 20.0), "l3 = l1 * w3: do not forget the factor d l3 / d w3 = l1.")],
    }[name]
    recipe = {
        "w1": "per element: the mean's factor, times the sum of l1's two paths to l4 "
        "(each path: the local derivatives along it, multiplied), times d l1/d w1; then "
        "add up the four elements.",
        "w2": "per element: 1/4 * d l4/d l2 * d l2/d w2, with d l4/d l2 = l3; then the sum.",
        "w3": "per element: 1/4 * d l4/d l3 * d l3/d w3, with d l4/d l3 = l2; then the sum.",
    }[name]
    path = {"w1": "l4 -> l2 and l3 -> l1 -> w1", "w2": "l4 -> l2 -> w2", "w3": "l4 -> l3 -> w3"}
    sign = _sign_mistake([want, one, want * 4, *by_weight[-1][0]])
    first = hint_for(
        got, common + by_weight + sign, f"go backward one step at a time: loss -> {path[name]}."
    )
    return [first, recipe]


L1_ANSWER = """d loss / d l1 = 7 for each element of l1.
l1 feeds l2 = l1 + w2 and l3 = l1 * w3, so d l4 / d l1 = l3 * 1 + l2 * w3 = 8 + 20 = 28;
times the mean's 1/4 gives 7 (l1 is not broadcast: there is no sum over elements)."""


@checker("01-3", answer=L1_ANSWER, predicts=True)
def check_l1_grad(l1_grad) -> Result:
    """d loss / d l1 for one element of the l1..l4 model."""
    ex = "01-3"
    if l1_grad is Ellipsis:
        return not_done(ex)
    ran = _autograd_ran(ex)
    if ran is not None:
        return ran
    stop = _not_by_hand(ex, (l1_grad,))
    if stop is not None:
        return stop
    l1_grad = _plain(l1_grad)
    if _near(l1_grad, 7.0) and not _exact(l1_grad, 7.0):
        return not_yet(ex, [_NEAR_MISS, _ON_PAPER[ex]], gave=_digits(l1_grad))
    if _exact(l1_grad, 7.0):
        return correct(
            ex, "d loss / d l1 = 0.25 * (l3 + l2 * w3) = 0.25 * (8 + 20) = 7 per element."
        )
    first = hint_for(
        l1_grad,
        [
            (
                (28.0,),
                "that is 4 times too big: either the mean's 1/4 is missing or you summed "
                "over the four elements (l1 is a 2x2 tensor: one element, no sum).",
            ),
            (
                (8.0,),
                "8 is what the path through l2 alone brings before the mean's 1/4: l1 feeds "
                "two ops (l2 and l3), so add both paths' contributions, then take the 1/4. "
                "If you did exactly that, look for a term that does not belong.",
            ),
            (
                (2.0, 5.0, 20.0),
                "l1 feeds two ops (l2 and l3): its gradient adds the contributions of both paths.",
            ),
            ((1.75,), "the mean's factor 1/4 is counted twice: once is enough."),
            (
                (3.25, 13.0),
                "the path through l3 = l1 * w3 carries the local derivative d l3/d l1, "
                "which is w3, not 1: multiply that path's contribution by it.",
            ),
            (
                (40.0, 160.0, 10.0),
                "l1 reaches l4 along two paths (through l2 and through l3): the chain rule "
                "ADDS the two paths' contributions; paths add, not multiply.",
            ),
            *_sign_mistake([7.0, 28.0, 2.0, 5.0, 8.0, 20.0]),
        ],
        "l4 = (l1 + w2) * (l1 * w3): differentiate by l1 with the product rule, then the mean's 1/4.",
    )
    return not_yet(
        ex,
        [
            first,
            "take the two ops that read l1 one at a time: what reaches each op's output, "
            "times that op's local derivative with respect to l1; add the two paths, and "
            "do not forget the mean.",
        ],
        gave=show(l1_grad),
    )
