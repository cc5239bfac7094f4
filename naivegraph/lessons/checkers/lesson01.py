"""Checkers of lesson 01: computational graphs."""

from __future__ import annotations

from ..checking import Result, checker, close, correct, hint_for, is_blank, not_done, show, wrong


@checker("01-1")
def check_forward_values(l1, l2, l3, l4, loss) -> Result:
    """The forward pass of the l1..l4 model, one element each, computed by hand."""
    ex = "01-1"
    answers = (l1, l2, l3, l4, loss)
    if is_blank(answers):
        return not_done(ex)
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
        if not close(got, want):
            return wrong(ex, f"{name} = {want:g}", f"{name} = {show(got)}", hints[name])
    return correct(ex, "l1 = 2, l2 = 5, l3 = 8, l4 = 40 and loss = 40 for every element.")


@checker("01-2")
def check_leaf_grads(w1_grad, w2_grad, w3_grad) -> Result:
    """d loss / d w1, w2, w3 for the l1..l4 model, derived by hand."""
    ex = "01-2"
    if is_blank((w1_grad, w2_grad, w3_grad)):
        return not_done(ex)
    got = (w1_grad, w2_grad, w3_grad)
    per_element = (7.0, 2.0, 2.5)
    for name, g, want, one in zip(("w1", "w2", "w3"), got, (28.0, 8.0, 10.0), per_element):
        if close(g, want):
            continue
        if close(g, one):
            hint = (
                f"{show(g)} is the contribution of ONE element. {name} is a scalar broadcast "
                "over the 2x2 input, so its gradient is the sum over all four elements."
            )
        elif close(g, want / 4 / 4) or close(g, want * 4):
            hint = "count the factor 1/4 from the mean exactly once, then sum over 4 elements."
        else:
            hint = {
                "w1": "w1 reaches the loss through both l2 and l3: d l4/d l1 = l3 + l2 * w3, "
                "times d l1/d w1 = input.",
                "w2": "d l4 / d w2 = l3 (product rule), then the mean's 1/4 and the sum.",
                "w3": "d l4 / d w3 = l2 * l1, then the mean's 1/4 and the sum.",
            }[name]
        return wrong(ex, f"{name}.grad = {want:g}", show(g), hint)
    return correct(ex, "w1.grad = 28, w2.grad = 8, w3.grad = 10.")


@checker("01-3")
def check_l1_grad(l1_grad) -> Result:
    """d loss / d l1 for one element of the l1..l4 model."""
    ex = "01-3"
    if is_blank(l1_grad):
        return not_done(ex)
    if close(l1_grad, 7.0):
        return correct(
            ex, "d loss / d l1 = 0.25 * (l3 + l2 * w3) = 0.25 * (8 + 20) = 7 per element."
        )
    hint = hint_for(
        l1_grad,
        [
            (
                (28.0,),
                "that is d loss / d w1 summed over elements; for l1 keep one element (and "
                "its 1/4).",
            ),
            ((2.0, 5.0), "l1 feeds two paths (through l2 and through l3): add both contributions."),
        ],
        "l4 = (l1 + w2) * (l1 * w3): differentiate with the product rule, then times 1/4.",
    )
    return wrong(ex, "7", show(l1_grad), hint)
