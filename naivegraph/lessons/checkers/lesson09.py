"""Checkers of lesson 09: capstone."""

from __future__ import annotations

import numpy as np

import naivegraph as ng

from ..checking import (
    Result,
    answer,
    blank_function,
    checker,
    close,
    correct,
    not_yet,
    show,
)


def _is_number(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, bool
    )


@checker(
    "09-1",
    answer="return float(np.mean(np.asarray(logits).argmax(axis=1) == np.asarray(labels))): "
    "one prediction per row (argmax over the class axis), compared with the labels, "
    "averaged into a fraction, returned as a Python float.",
)
def check_accuracy_fn(accuracy) -> Result:
    """``accuracy(logits, labels)``: fraction of rows whose argmax equals the label."""
    ex = "09-1"
    bad = blank_function(ex, accuracy)
    if bad is not None:
        return bad
    logits = np.array([[2.0, 1.0], [0.1, 0.3], [5.0, -1.0], [0.0, 0.2], [1.0, 3.0]])
    labels = np.array([0, 1, 1, 0, 1])
    stop, got = answer(ex, accuracy, logits, labels)
    if stop is not None:
        return stop
    if not close(got, 0.6):
        mistakes = [
            ((3,), "that is a count of correct rows; accuracy is a fraction of all rows."),
            ((0.4,), "that is the fraction of wrong rows, or argmax over the wrong axis: "
                     "one prediction per row, over the class axis."),
        ]
        hint = next((h for values, h in mistakes if any(close(got, v) for v in values)),
                    "predict each row's class (its largest logit), compare with the "
                    "labels, and average.")
        return not_yet(ex, [hint], gave=show(got))
    if not _is_number(got):
        return not_yet(ex, ["the value is right, but give it as a Python float, not a "
                            f"{type(got).__name__}."], gave=f"a {type(got).__name__}")
    stop, got2 = answer(ex, accuracy, ng.tensor(logits), ng.tensor(labels))
    if stop is not None:
        return stop
    if not close(got2, 0.6):
        return not_yet(ex, ["it works on numpy arrays but not on tensors: convert the "
                            "inputs to numpy first."], gave=f"{show(got2)} for tensors")
    return correct(ex, "accuracy = mean(argmax(logits, axis=1) == labels) = 3/5.")


def _data():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(32, 2)).astype(np.float32)  # float32, as the layers
    y = (X[:, 0] + X[:, 1] > 0).astype(np.int64)
    return ng.tensor(X), ng.tensor(y)


def _model():
    ng.manual_seed(1)
    return ng.nn.Sequential(ng.nn.Linear(2, 8), ng.nn.Tanh(), ng.nn.Linear(8, 2))


@checker(
    "09-2",
    answer="optimizer.zero_grad(); loss = ng.nn.functional.cross_entropy(model(X), y); "
    "loss.backward(); optimizer.step(); return loss.item(). Zero first (grads "
    "accumulate), cross-entropy of the logits against the labels, then backward and "
    "step; .item() gives the float.",
)
def check_train_step(train_step) -> Result:
    """``train_step(model, optimizer, X, y)`` does one step and returns the loss as a float."""
    ex = "09-2"
    bad = blank_function(ex, train_step)
    if bad is not None:
        return bad
    X, y = _data()
    model = _model()
    opt = ng.optim.SGD(model.parameters(), lr=0.5)
    with ng.no_grad():
        first_loss = ng.nn.functional.cross_entropy(model(X), y).item()
    losses = []
    for _ in range(15):
        stop, loss = answer(ex, train_step, model, opt, X, y)
        if stop is not None:
            return stop
        if not _is_number(loss):
            return not_yet(ex, [f"train_step returned a {type(loss).__name__}; return the "
                                "loss as a Python float (a tensor keeps its whole graph "
                                "alive)."], gave=f"a {type(loss).__name__}")
        losses.append(float(loss))
    if not close(losses[0], first_loss, rtol=1e-6):
        return not_yet(ex, ["the loss you return is not the cross-entropy of model(X) "
                            "against y before the step: use cross-entropy on the raw "
                            "logits, with the labels as class indices."],
                       gave=f"a first loss of {losses[0]:.4g}")
    if not np.all(np.isfinite(losses)) or losses[-1] >= losses[0] * 0.9:
        stepped = any(not close(p, q) for p, q in zip(_model().parameters(),
                                                       model.parameters()))
        hint = ("the weights never changed: after backward, the optimizer must take its "
                "step." if not stepped else "the loss did not go down: the steps are "
                "not following one batch's gradient each.")
        return not_yet(ex, [hint], gave=f"{losses[0]:.3f} -> {losses[-1]:.3f}")
    # one more step: with zero_grad, p.grad then holds that step's gradient only
    params = list(model.parameters())
    want = ng.autograd.grad(ng.nn.functional.cross_entropy(model(X), y), params[:1])[0]
    stop, _ = answer(ex, train_step, model, opt, X, y)
    if stop is not None:
        return stop
    if params[0].grad is None or not close(params[0].grad, want, atol=1e-8):
        return not_yet(ex, ["p.grad after a step holds more than that step's gradient: "
                            "gradients add up over backward calls unless you clear them "
                            "at the start of each step."],
                       gave="gradients summed over steps")
    return correct(ex, f"the loss goes down: {losses[0]:.3f} -> {losses[-1]:.3f} in 15 steps.")

