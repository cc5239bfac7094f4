"""Checkers of lesson 09: capstone."""

from __future__ import annotations

import numpy as np

import naivegraph as ng

from ..checking import (
    Result,
    answer,
    as_array,
    call_answer,
    checker,
    close,
    correct,
    failed,
    not_callable,
    show,
    wrong,
)


@checker("09-1")
def check_accuracy_fn(accuracy) -> Result:
    """``accuracy(logits, labels)``: fraction of rows whose argmax equals the label."""
    ex = "09-1"
    bad = not_callable(ex, accuracy)
    if bad is not None:
        return bad
    logits = np.array([[2.0, 1.0], [0.1, 0.3], [5.0, -1.0], [0.0, 0.2], [1.0, 3.0]])
    labels = np.array([0, 1, 1, 0, 1])
    stop, got = answer(ex, accuracy, logits, labels)
    if stop is not None:
        return stop
    if close(got, 0.6):
        ok, got2 = call_answer(ex, accuracy, ng.tensor(logits), ng.tensor(labels))
        if ok and close(got2, 0.6):
            return correct(ex, "accuracy = mean(argmax(logits, axis=1) == labels) = 3/5.")
        if not ok:
            return got2
        return wrong(ex, "0.6 for tensors too", show(got2), "convert with np.asarray first.")
    if close(got, 3):
        hint = "divide the count of correct rows by the number of rows."
    elif close(got, 0.4):
        hint = "argmax over the class axis (axis=1), one prediction per row."
    else:
        hint = "predictions = logits.argmax(axis=1); compare them with the labels; average."
    return wrong(ex, "0.6", show(got), hint)


@checker("09-2")
def check_train_step(train_step) -> Result:
    """``train_step(model, optimizer, X, y)`` does one step and returns the loss as a float."""
    ex = "09-2"
    bad = not_callable(ex, train_step)
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
        stop, loss = answer(ex, train_step, model, opt, ng.tensor(X), ng.tensor(y))
        if stop is not None:
            return stop
        try:
            losses.append(float(as_array(loss)))
        except Exception:  # any error: reported to the learner
            return failed(
                ex,
                f"expected the loss as a number, got {type(loss).__name__}; "
                "hint: return loss.item().",
            )
    if not all(np.isfinite(losses)):
        return wrong(ex, "finite losses", show(losses), "check the loss function.")
    if losses[-1] >= losses[0] * 0.9:
        hint = (
            "the loss did not go down: call optimizer.zero_grad() before backward (else "
            "gradients pile up), then loss.backward(), then optimizer.step()."
        )
        return wrong(
            ex, "a loss that goes down over 15 steps", f"{losses[0]:.3f} -> {losses[-1]:.3f}", hint
        )
    grads = [p.grad for p in model.parameters()]
    ok, _ = call_answer(ex, train_step, model, opt, ng.tensor(X), ng.tensor(y))
    first = next(p for p in model.parameters())
    g = first.grad
    if g is not None and grads[0] is not None and as_array(g).shape == as_array(grads[0]).shape:
        # with zero_grad the new grad is one step's gradient; without, it is a running sum
        single = ng.nn.functional.cross_entropy(model(ng.tensor(X)), ng.tensor(y))
        model_grads = ng.autograd.grad(single, [first])[0]
        if (
            not close(g, model_grads, atol=1e-4, rtol=1e-2)
            and np.abs(as_array(g)).max() > 3 * np.abs(as_array(model_grads)).max() + 1e-8
        ):
            return wrong(
                ex,
                "one step's gradient in p.grad",
                "a sum over steps",
                "call optimizer.zero_grad() at the start of each step.",
            )
    return correct(ex, f"the loss goes down: {losses[0]:.3f} -> {losses[-1]:.3f} in 15 steps.")
