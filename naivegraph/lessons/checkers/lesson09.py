"""Checkers of lesson 09: capstone."""

from __future__ import annotations

import numbers
import re

import numpy as np

import naivegraph as ng
import naivegraph.static as ns

from .. import training
from ..checking import (
    Result,
    answer,
    blank_function,
    checker,
    close,
    correct,
    crash_message,
    failed,
    keeps_learner_state,
    not_yet,
    returned_blank,
    show,
)
from ..library_calls import LibraryCalls
from ..training import build_static_classifier, train_step
from ..training import train_step as train_step_reference
from .lesson08 import _own_work, lab_code_table


def _is_number(value) -> bool:
    # any real number says a fraction: a Fraction(3, 5) as well as 0.6
    return isinstance(value, (numbers.Real, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_)
    )


def _is_scalar(value) -> bool:
    """A number, or a 0-d array or tensor holding one: all say a fraction as well."""
    if isinstance(value, (np.ndarray, ng.Tensor)):
        return value.shape == () and value.dtype.kind in "fiu"
    return _is_number(value)


# (logits, labels, their accuracy): two and three classes, accuracies 3/5, 3/4, 1/3 and 1,
# chosen so a constant, the mean of the labels or of the predictions, or a comparison of
# two columns gives another number on some batch.
_ACCURACY_CASES = [
    (np.array([[2.0, 1.0], [0.1, 0.3], [5.0, -1.0], [0.0, 0.2], [1.0, 3.0]]),
     np.array([0, 1, 1, 0, 1]), 0.6),
    (np.array([[0.1, 2.0, 0.3], [3.0, 1.0, 0.0], [0.0, 0.0, 5.0], [1.0, 0.5, 2.0]]),
     np.array([1, 0, 2, 0]), 0.75),
    (np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 1.0], [2.0, 1.0, 0.0], [0.5, 0.0, 0.2],
               [0.0, 0.1, 0.0], [1.0, 4.0, 2.0]]),
     np.array([0, 1, 2, 2, 1, 0]), 1 / 3),
    (np.array([[0.0, 1.0, -1.0, 0.5], [3.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 2.0]]),
     np.array([1, 0, 3]), 1.0),
    # ties: a row's prediction is argmax's, the first of its largest logits
    (np.array([[1.0, 1.0, 0.0], [0.0, 2.0, 2.0], [3.0, 0.0, 3.0], [0.5, 0.2, 0.1]]),
     np.array([1, 1, 2, 0]), 0.5),
    # close logits: a cast to float16 (about 3 digits) makes the first row's two equal
    (np.array([[1.0001, 1.0002], [2.0, 1.0], [0.25, 0.5]]), np.array([1, 0, 1]), 1.0),
    # ties on two classes: argmax predicts class 0 there too, so a two-class comparison
    # such as l[:, 1] >= l[:, 0] (a tie goes to class 1) gives 1/4, not 3/4
    (np.array([[1.0, 1.0], [0.5, 0.5], [2.0, -1.0], [0.0, 3.0]]), np.array([0, 0, 1, 1]), 0.75),
]


@checker(
    "09-1",
    answer="return float(np.mean(np.asarray(logits).argmax(axis=1) == np.asarray(labels))): "
    "one prediction per row (argmax over the class axis), compared with the labels, "
    "averaged into a fraction, returned as a Python float.",
)
@keeps_learner_state
@_own_work("09-1", lambda: _lab_codes())
def check_accuracy_fn(accuracy) -> Result:
    """``accuracy(logits, labels)``: fraction of rows whose argmax equals the label."""
    ex = "09-1"
    bad = blank_function(ex, accuracy)
    if bad is not None:
        return bad
    gots = []
    for case_logits, case_labels, _ in _ACCURACY_CASES:
        given = (case_logits.copy(), case_labels.copy())  # the cases stay as they are
        errors = np.geterr()
        try:
            got = accuracy(*given)
        except Exception as exc:  # reported to the learner, named when it is a known one
            return _accuracy_crash(ex, exc, case_logits)
        finally:
            changed_errors = np.geterr() != errors
            np.seterr(**errors)  # numpy's error handling is the caller's, as it was
        if changed_errors:
            return not_yet(ex, ["your accuracy changed numpy's error handling (np.seterr) "
                                "for every cell after it: that setting is the caller's. "
                                "Leave it as it is; a comparison and an average raise no "
                                "floating-point warning to silence."],
                           gave="numpy's error handling changed by accuracy")
        stop = returned_blank(ex, got)
        if stop is not None:
            return stop
        if not (np.array_equal(given[0], case_logits) and np.array_equal(given[1], case_labels)):
            changed = "logits" if not np.array_equal(given[0], case_logits) else "labels"
            return not_yet(ex, [f"your accuracy changed the {changed} it was given, in place "
                                "(an augmented assignment such as -= writes into the "
                                "caller's array): the arrays belong to the caller, who may "
                                "still need them. Compute from them without writing into "
                                "them."],
                           gave=f"{changed} changed by accuracy")
        gots.append(got)
    wants = [want for _, _, want in _ACCURACY_CASES]
    for k, (got, want) in enumerate(zip(gots, wants)):
        if not _right_fraction(got, want):
            rows = len(_ACCURACY_CASES[k][1])
            if np.shape(got) == (rows,):
                return not_yet(ex, ["your accuracy returns one value per row (whether each "
                                    "row is right), not one number: the accuracy of a batch "
                                    "is the fraction of its rows that are right."],
                               gave=f"{rows} values for {_describe(k)}")
            return not_yet(ex, [_accuracy_hint(gots, wants, k)],
                           gave=f"{show(got)} for {_describe(k)}")
    got = gots[0]
    if not _is_scalar(got):
        return not_yet(ex, ["the value is right, but give it as one number (a Python "
                            f"float), not a {type(got).__name__}."],
                       gave=f"a {type(got).__name__}")
    stop = _on_tensors(ex, accuracy)
    if stop is not None:
        return stop
    return correct(ex, "accuracy = mean(argmax(logits, axis=1) == labels), right for two "
                       "classes and more.")


def _right_fraction(got, want: float) -> bool:
    """A fraction of rows, exact but for rounding (to float64, or float32 for a float32
    tensor): 1/3 to every digit."""
    try:
        return any(close(got, w, rtol=1e-12, atol=1e-15) for w in (want, float(np.float32(want))))
    except Exception:  # not a number at all: reported by the caller, never raised
        return False


def _on_tensors(ex: str, accuracy) -> Result | None:
    """The accuracy of every batch given as naivegraph tensors: the same fractions, each
    one number, as for numpy arrays (a tensor path of its own is checked on three and
    four classes too, not only on the two-class batch)."""
    for k, (case_logits, case_labels, want) in enumerate(_ACCURACY_CASES):
        try:  # every batch before this one was right on tensors too
            got = accuracy(ng.tensor(case_logits), ng.tensor(case_labels))
        except Exception as exc:  # works on arrays, not on tensors: say so
            return not_yet(ex, ["it works on numpy arrays but not on tensors: convert the "
                                "inputs to numpy first (np.asarray)."],
                           gave=f"{type(exc).__name__}: {exc}".splitlines()[0] + " for tensors")
        if not _right_fraction(got, want):
            if k > 0 and case_logits.shape[1] > 2:  # the two-class batch 0 was right
                hint = ("it works on numpy arrays, but on tensors it is right for two "
                        "classes and wrong for more: whatever the type of the inputs, a "
                        "row's prediction is the index of its largest logit among ALL the "
                        "classes. Give tensors the same path as arrays (np.asarray turns a "
                        "tensor into one).")
            else:
                hint = ("it works on numpy arrays but not on tensors: convert the inputs "
                        "to numpy first.")
            return not_yet(ex, [hint], gave=f"{show(got)} for tensors of {_describe(k)}")
        if not _is_scalar(got):
            return not_yet(ex, ["the value is right, but for tensors you return a "
                                f"{type(got).__name__} of shape {np.shape(got)}: give it as "
                                "one number (a Python float), for tensors as for arrays."],
                           gave=f"a {type(got).__name__} of shape {np.shape(got)} for tensors")
    return None


def _accuracy_crash(ex: str, exc: Exception, logits: np.ndarray) -> Result:
    """What the learner's accuracy raised, with the mistake named when it is a known one:
    torch's dim= given to numpy, or an argmax that runs down the rows (one index per class,
    which cannot be compared with one label per row)."""
    said = crash_message(exc).split(";")[0].rstrip()
    text = str(exc)
    if isinstance(exc, TypeError) and "'dim'" in text:
        return not_yet(ex, [f"{said}: dim= is torch's name for the direction of a reduction; "
                            "numpy's argmax calls it axis. The checker passes numpy arrays "
                            "(and np.asarray turns a tensor into one), so use numpy's name."],
                       gave="dim= for numpy's argmax")
    rows, classes = logits.shape
    if isinstance(exc, ValueError) and f"({classes},) ({rows},)" in text.replace(" ,", ","):
        return not_yet(ex, [f"{said}: your predictions hold {classes} entries, one per class, "
                            f"where the batch has {rows} labels, one per row. The argmax ran "
                            "down the columns (over the rows of each class); a row's "
                            "prediction is the largest logit within that row, over the "
                            "class axis."],
                       gave=f"{classes} predictions for {rows} rows")
    return failed(ex, crash_message(exc))


def _describe(k: int) -> str:
    logits = _ACCURACY_CASES[k][0]
    return f"a batch of {logits.shape[0]} rows and {logits.shape[1]} classes"


def _accuracy_hint(gots: list, wants: list, k: int) -> str:
    """What the first wrong accuracy (batch ``k``) says about the mistake."""

    def matches(values) -> bool:
        try:
            return all(close(g, v) for g, v in zip(gots, values))
        except Exception:  # not numbers: no pattern
            return False

    counts = [w * len(c[1]) for w, c in zip(wants, _ACCURACY_CASES)]
    if str(getattr(gots[k], "dtype", "")).endswith("float16") or matches(
        [float(np.float16(w)) for w in wants]
    ):
        return ("your predictions and their comparison are right, but the average is "
                "computed in float16, which keeps about 3 digits: a fraction such as a "
                "third comes out off in its 4th. Average in float64 (numpy's default) "
                "or float32.")
    if matches([np.mean(c[0].astype(np.float16).argmax(axis=1) == c[1])
                for c in _ACCURACY_CASES]):
        return ("your comparison and average are right, but the logits were cast to "
                "float16 before the argmax: float16 keeps about 3 digits, so two close "
                "logits such as 1.0001 and 1.0002 become equal and the row predicts the "
                "first of them. Take the argmax of the logits with all their digits "
                "(float64 as given, or float32).")
    if matches(counts):
        return "that is a count of correct rows; accuracy is a fraction of all rows."
    if matches([float(np.floor(w)) for w in wants]):
        return ("your accuracy is a whole number: 0 for every batch with a wrong row, 1 "
                "when all are right. The fraction was cut off by an integer division "
                "(// floors it, as does a cast to int): divide so that the fraction "
                "stays.")
    if any(matches([np.mean(cut(c[0]).argmax(axis=1) == c[1]) for c in _ACCURACY_CASES])
           for cut in (np.trunc, np.floor, np.round)):
        return ("your predictions come from logits made whole numbers (a cast to int, or "
                "a rounding) before the argmax: 0.1 and 0.3 both become 0, and a row then "
                "predicts the first of its tied classes. A row predicts the index of its "
                "largest logit as it is, with all its digits.")
    for digits in range(7):
        if matches([round(w, digits) for w in wants]):
            return ("your accuracy is rounded: return it with all its digits (a fraction such "
                    "as a third has no short decimal form); round only where you print it.")
    for first in range(2, len(_ACCURACY_CASES[k][1])):
        if matches([np.mean(c[0][:first].argmax(axis=1) == c[1][:first])
                    for c in _ACCURACY_CASES]):
            return (f"your accuracy looks at the first {first} rows of a batch only: right "
                    f"for a batch of {first} rows or fewer, wrong once a batch has more (the "
                    f"batch here has {len(_ACCURACY_CASES[k][1])}). Every row of the "
                    "batch counts, whatever its size.")
    try:
        fixed = float(counts[k]) / float(gots[k]) if float(gots[k]) else 0.0
    except Exception:  # not a number: no fixed divisor
        fixed = 0.0
    if fixed and matches([n / fixed for n in counts]):
        return (f"you divide the count of right rows by a fixed {fixed:g}, the size of one "
                "batch: the checker passes batches of other sizes, so divide by the number of "
                "rows of the batch you are given (or average the comparison).")
    if matches([100 * w for w in wants]):
        return ("that is a percentage; accuracy here is a fraction, a number in [0, 1] "
                "(1 when every row is right), as torchmetrics and sklearn give it.")
    if matches([1 - w for w in wants]):
        return "that is the fraction of wrong rows; accuracy counts the right ones."
    if matches([np.mean(np.argmax(c[0]) == c[1]) for c in _ACCURACY_CASES]):
        return ("argmax without an axis gives one index into the whole flattened array, "
                "not one prediction per row: take the argmax over the class axis, so each "
                "row gets its own predicted class.")
    if matches([np.mean(c[0][np.arange(len(c[1])), c[1]] >= c[0].max(axis=1))
                for c in _ACCURACY_CASES]):
        return ("a row whose largest logit appears twice counts as right for you whenever "
                "the label is one of the tied classes: a row predicts ONE class, the one "
                "argmax picks (the first of the tied largest logits), and is right when "
                "that class is the label.")
    if matches([np.mean(c[0][np.arange(len(c[1])), c[1]] > 0) for c in _ACCURACY_CASES]):
        return ("you test whether the logit at the label is positive; a row is right when "
                "the label's logit is the largest of its row, whatever its sign.")
    if all(close(g, gots[0]) for g in gots[1:]):
        return ("your accuracy gives the same number for every batch: it must be computed "
                "from the logits and labels it is given.")
    if matches([np.mean(c[0].shape[1] - 1 - c[0][:, ::-1].argmax(axis=1) == c[1])
                for c in _ACCURACY_CASES]):
        return ("where a row's largest logit appears twice, you predict the last of the tied "
                "classes: argmax's choice, and the one the exercise asks for, is the first "
                "of them.")
    if _ACCURACY_CASES[k][0].shape[1] == 2 and _ties_to_the_second(gots):
        return ("on two classes, where a row's two logits are equal you predict class 1, the "
                "second of the tied classes: argmax's choice, and the one the exercise asks "
                "for, is the first of them, for two classes as for more. A comparison of the "
                "two columns must send a tie the same way.")
    if k > 0 and _ACCURACY_CASES[k][0].shape[1] > 2:
        return ("right for two classes, wrong for more: the prediction of a row is the "
                "index of its largest logit among all the classes, compared with the label.")
    return ("predict each row's class as the index of its largest logit (over the class "
            "axis), compare the predictions with the labels, and average.")


def _ties_to_the_second(gots: list) -> bool:
    """Whether every two-class batch got the accuracy of predicting class 1 where a row's
    two logits are equal (l[:, 1] >= l[:, 0]), whatever the batches of more classes got."""
    try:
        return all(
            close(got, np.mean((logits[:, 1] >= logits[:, 0]) == labels))
            for got, (logits, labels, _) in zip(gots, _ACCURACY_CASES)
            if logits.shape[1] == 2
        )
    except Exception:  # not numbers: no pattern
        return False


def _notebooks_optimizer(train_step, opt) -> str:
    """The hint for a train_step that steps an optimizer of the notebook's (a global
    it reads) instead of the one it is given, or ""."""
    code = getattr(train_step, "__code__", None)
    if code is None:
        return ""
    space = dict(getattr(train_step, "__globals__", {}))
    for name, cell in zip(code.co_freevars, getattr(train_step, "__closure__", None) or ()):
        try:
            space[name] = cell.cell_contents
        except ValueError:  # an empty cell: nothing to read
            pass
    names = [n for n in (*code.co_names, *code.co_freevars)
             if isinstance(space.get(n), ng.optim.Optimizer) and space[n] is not opt]
    if not names:
        return ""
    params = code.co_varnames[: code.co_argcount]
    given = params[1] if len(params) > 1 else ""
    called = f" (`{given}` in your function)" if given and given != names[0] else ""
    return (f"the weights never changed: your train_step steps `{names[0]}`, the "
            "notebook's optimizer, not the one it is given as its second argument"
            f"{called}. The notebook's optimizer holds the notebook's model's parameters, "
            "so the model the checker passes never moves. A function works on what it is "
            "given: zero and step the optimizer passed in.")


def _data():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(32, 2)).astype(np.float32)  # float32, the layers' default dtype
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
@keeps_learner_state
@_own_work("09-2", lambda: _lab_codes())
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
    modes: list[bool] = []  # the model's mode at each forward pass of a step
    watch = model.register_forward_hook(
        lambda module, args, output: modes.append(module.training))
    data = (X.numpy().copy(), y.numpy().copy())
    settings = _settings(opt)
    try:
        for _ in range(15):
            modes.clear()
            with LibraryCalls({"ng.manual_seed": ng.manual_seed}) as seeds:
                stop, loss = answer(ex, train_step, model, opt, X, y)
            if stop is not None:
                return stop
            stop = _left_alone(ex, seeds, opt, settings, (X, y), data)
            if stop is not None:
                return stop
            if modes and not any(modes) and model.training:
                return not_yet(ex, ["your train_step runs the model's forward pass in "
                                    "evaluation mode (model.eval()), switched back only "
                                    "after it: training layers such as dropout and batch "
                                    "norm then compute the loss as at test time, and the "
                                    "step learns from that. The forward pass of a training "
                                    "step runs in training mode; switch to eval only around "
                                    "an evaluation."],
                               gave="a forward pass in eval mode")
            stop = _returned_loss_and_mode(ex, model, loss)
            if stop is not None:
                return stop
            losses.append(float(loss))
    finally:
        watch.remove()
    hooked = sum(len(p._hooks or ()) for p in model.parameters())
    if hooked:
        return not_yet(ex, [f"after 15 calls of your train_step the model's parameters "
                            f"carry {hooked} hooks: each call registers new ones, and they "
                            "pile up, every one of them run on every later backward. A "
                            "training step leaves no hook behind: register a hook once, "
                            "outside the step, or remove it (its handle's remove()) "
                            "before the step returns."],
                       gave=f"{hooked} hooks left on the parameters after 15 steps")
    # the model is float32: its loss, given with all its digits, is a float32 number
    if any(float(np.float32(v)) != v for v in losses) and all(
        any(v == round(v, digits) for digits in range(10)) for v in losses
    ):
        return not_yet(ex, ["the loss you return is rounded: return it with all its digits "
                            "(loss.item()); round only where you print it."],
                       gave=f"a first loss of {losses[0]!r}")
    if not close(losses[0], first_loss, rtol=1e-6):
        if any(losses[0] == round(first_loss, digits) for digits in range(7)):
            hint = ("the loss you return is rounded: return it with all its digits; "
                    "round only where you print it.")
        elif close(losses[0], _loss_after_one_step(X, y), rtol=1e-6):
            hint = ("the loss you return is computed after the step, from the weights the "
                    "step just changed: return the loss the step was computed from, the "
                    "one backward ran on (a second forward pass costs as much as the first "
                    "and reports a loss no gradient was taken of).")
        elif close(losses[0], first_loss * len(y), rtol=1e-6):
            hint = ("your loss is the SUM of the per-example losses, not their mean: it "
                    "grows with the batch size, and so does every step. Cross-entropy "
                    "averages over the batch unless told otherwise (its reduction).")
        else:
            hint = ("the loss you return is not the cross-entropy of model(X) against y "
                    "before the step: use cross-entropy on the raw logits, with the "
                    "labels as class indices.")
        return not_yet(ex, [hint], gave=f"a first loss of {losses[0]:.4g}")
    stop = _one_sgd_step_on_the_gradient_of_the_loss(ex, train_step)
    if stop is not None:
        return stop
    if not np.all(np.isfinite(losses)) or losses[-1] >= losses[0] * 0.9:
        stepped = any(not close(p, q) for p, q in zip(_model().parameters(),
                                                       model.parameters()))
        other = "" if stepped else _notebooks_optimizer(train_step, opt)
        if other:
            hint = other
        elif stepped:
            hint = ("the loss did not go down: the steps are not following one batch's "
                    "gradient each.")
        elif all(p.grad is None or close(p.grad, 0.0) for p in model.parameters()) and (
            not _backward_reaches_the_output(train_step)
        ):
            hint = ("the weights never changed: no gradient reached the model's output, so "
                    "none reached its parameters. The loss was computed from a copy of the "
                    "output cut off from the model's graph (detached): a backward from it "
                    "stops at the cut. Compute the loss from the model's output itself.")
        elif all(p.grad is None or close(p.grad, 0.0) for p in model.parameters()):
            hint = ("the weights never changed, and after your step the gradients are "
                    "gone: they were cleared after backward, before the optimizer's step "
                    "could use them. Clear them at the start of the step instead.")
        else:
            hint = "the weights never changed: after backward, the optimizer must take its step."
        return not_yet(ex, [hint], gave=f"{losses[0]:.3f} -> {losses[-1]:.3f}")
    # one more step: with zero_grad, p.grad then holds that step's gradient only
    params = list(model.parameters())
    want = ng.autograd.grad(ng.nn.functional.cross_entropy(model(X), y), params[:1])[0]
    stop, _ = answer(ex, train_step, model, opt, X, y)
    if stop is not None:
        return stop
    # zeroing at the end of the step (after optimizer.step()) is as right as at the start
    cleared = params[0].grad is None or close(params[0].grad, 0.0)
    if not cleared and not close(params[0].grad, want, atol=1e-8):
        got_grad, want_grad = _flat([params[0].grad]), _flat([want])
        scale = float(got_grad @ want_grad / (want_grad @ want_grad))
        if close(got_grad, scale * want_grad, rtol=1e-4, atol=1e-9):
            return not_yet(ex, [f"p.grad after a step is {_scale_text(scale)} times the "
                                "gradient of the loss you return: backward ran on a scaled "
                                "loss, or "
                                "the gradients were scaled by hand. Run backward on the "
                                "loss itself, the one you return."],
                           gave=f"a gradient scaled by {_scale_text(scale)}")
        return not_yet(ex, ["p.grad after a step holds more than that step's gradient: "
                            "gradients add up over backward calls unless you clear them "
                            "at the start of each step."],
                       gave="gradients summed over steps")
    stop = _one_step_as_the_optimizer_takes_it(ex, train_step)
    if stop is not None:
        return stop
    stop = _on_three_classes(ex, train_step)
    if stop is not None:
        return stop
    return correct(ex, f"the loss goes down: {losses[0]:.3f} -> {losses[-1]:.3f} in 15 steps.")


def _settings(optimizer) -> list[dict]:
    """Each parameter group's settings (lr, momentum, betas, ...), its parameters left out."""
    return [{key: value for key, value in group.items() if key != "params"}
            for group in optimizer.param_groups]


def _same_settings(before: list[dict], after: list[dict]) -> bool:
    try:
        return len(before) == len(after) and all(
            a.keys() == b.keys() and all(bool(np.all(a[k] == b[k])) for k in a)
            for a, b in zip(before, after)
        )
    except Exception:  # settings that do not compare: not a change the hint can name
        return True


def _left_alone(ex: str, seeds: LibraryCalls, optimizer, settings: list[dict], given,
                data) -> Result | None:
    """A step that reseeded the global generator, changed the optimizer's settings, or
    wrote into the batch it was given: each of those belongs to the caller."""
    if seeds.called:
        return not_yet(ex, ["your train_step reseeds the global random generator "
                            "(ng.manual_seed) on every call: each step then draws the "
                            "same random numbers (the same dropout masks, the same "
                            "shuffles), and every draw the caller makes after it starts "
                            "over. Seeding is the caller's choice, made once at the top of "
                            "a script or notebook; a training step needs no seed."],
                       gave="a train_step that calls ng.manual_seed")
    now = _settings(optimizer)
    if not _same_settings(settings, now):
        changed = sorted({k for a, b in zip(settings, now) for k in a
                          if k not in b or not _same_settings([{k: a[k]}], [{k: b[k]}])})
        named = " and ".join(changed) or "its settings"
        return not_yet(ex, [f"your train_step changed the optimizer's {named} (in its "
                            "param_groups): the optimizer comes from the caller with the "
                            "settings the caller chose, and a step uses them as they are. "
                            "Leave the optimizer's settings alone: a step size of your own "
                            "makes every step another than the caller asked for."],
                       gave=f"a train_step that changes the optimizer's {named}")
    for name, tensor, before in zip(("X", "y"), given, data):
        if tensor.requires_grad:  # X.requires_grad_(): the caller's batch now records
            return not_yet(ex, [f"your train_step switched requires_grad on for the {name} "
                                "it was given: the batch is the caller's data, not a "
                                "parameter; the step needs gradients of the model's weights "
                                "only, and the caller's batch should come back as it was "
                                "handed over."],
                           gave=f"{name} made to require grad by train_step")
        if not np.array_equal(tensor.detach().numpy(), before):
            return not_yet(ex, [f"your train_step changed the {name} it was given, in place "
                                "(an augmented assignment such as -= on a tensor writes into "
                                "the caller's data): the caller hands the same batch to every "
                                "step and still needs it as it was. Compute from it without "
                                "writing into it."],
                           gave=f"{name} changed by train_step")
    return None


_THREE_CLASSES = 3


def _on_three_classes(ex: str, train_step) -> Result | None:
    """One step on a model of three classes: the loss returned is its cross-entropy and
    the weights move as the lab's step moves them.  A loss that reads two columns of the
    logits (a binary cross-entropy on their difference) equals the cross-entropy for two
    classes only, which the checks above train."""
    X, _ = _data()
    angle = np.arctan2(X[:, 1].numpy(), X[:, 0].numpy())
    y = ng.tensor(((angle + np.pi) * _THREE_CLASSES / (2 * np.pi)).astype(np.int64)
                  % _THREE_CLASSES)

    def three_class_model():
        ng.manual_seed(1)
        return ng.nn.Sequential(ng.nn.Linear(2, 8), ng.nn.Tanh(),
                                ng.nn.Linear(8, _THREE_CLASSES))

    model, reference_model = three_class_model(), three_class_model()
    with ng.no_grad():
        want = ng.nn.functional.cross_entropy(model(X), y).item()
    stop, loss = answer(ex, train_step, model, ng.optim.SGD(model.parameters(), lr=0.5), X, y)
    if stop is not None:
        return stop
    train_step_reference(reference_model, ng.optim.SGD(reference_model.parameters(), lr=0.5),
                         X, y)
    same = all(close(p, q, rtol=1e-5, atol=1e-6) for p, q in
               zip(model.parameters(), reference_model.parameters()))
    if not (_is_number(loss) and close(float(loss), want, rtol=1e-6)) or not same:
        return not_yet(ex, ["your train_step is right for the two-class model and wrong "
                            "for one with three classes: the loss it returns (or steps on) "
                            "is not that model's cross-entropy. The cross-entropy of a row "
                            "takes the logits of ALL its classes; a loss built from two "
                            "columns of the logits, or written for two classes, agrees with "
                            "it for two classes alone."],
                       gave=f"a loss of {show(loss)} on a model of three classes")
    return None


def _returned_loss_and_mode(ex: str, model, loss) -> Result | None:
    """A loss returned as a tensor or an array, or a model left in eval mode."""
    if not _is_number(loss):
        why = " (a tensor keeps its whole graph alive)" if isinstance(loss, ng.Tensor) else ""
        return not_yet(ex, [f"train_step returned a {type(loss).__name__}; return the "
                            f"loss as a Python float{why}."],
                       gave=f"a {type(loss).__name__}")
    if not model.training:
        return not_yet(ex, ["your train_step left the model in evaluation mode "
                            "(model.eval()): training layers such as dropout and batch "
                            "norm then behave as at test time, in this step and every "
                            "later one. A training step leaves the model training; "
                            "switch to eval only around an evaluation, and back."],
                       gave="a model left in eval mode")
    return None


def _backward_reaches_the_output(train_step) -> bool:
    """Whether one call of ``train_step`` on a fresh model runs a backward through the
    model's output (True when the call crashes: the crash is told elsewhere)."""
    X, y = _data()
    model = _model()
    reached: list = []

    def watch(module, args, output):
        if isinstance(output, ng.Tensor) and output.requires_grad:
            output.register_hook(lambda grad: reached.append(True))

    handle = model.register_forward_hook(watch)
    try:
        train_step(model, ng.optim.SGD(model.parameters(), lr=0.5), X, y)
    except Exception:  # told by the checks that ran it before
        return True
    finally:
        handle.remove()
    return bool(reached)


def _step_beside_the_labs(ex: str, train_step, optimizer: type, lr: float,
                          large: bool = False):
    """One call of ``train_step`` on a fresh model with ``optimizer`` (its ``step``
    counted), and the lab's step on a twin model: (stop, calls, model, reference_model,
    the weights before), ``stop`` being the result to return if the answer failed.

    ``large``: points 1000 times as far out, first weights 1000 times smaller (the same
    hidden layer) and last weights 30 times larger: gradients in the thousands (a norm
    near 8000), which clipping at any usual threshold, by value or by norm, changes."""
    X, y = _data()
    model, reference_model = _model(), _model()
    if large:
        X = X * 1000.0
        with ng.no_grad():
            for m in (model, reference_model):
                m[0].weight.mul_(1e-3)
                m[2].weight.mul_(30.0)
    before = _flat(model.parameters())
    opt = optimizer(model.parameters(), lr=lr)
    step = opt.step
    calls: list[int] = []

    def counted(*args, **kwargs):
        calls.append(1)
        return step(*args, **kwargs)

    opt.step = counted  # type: ignore[method-assign]
    stop, _ = answer(ex, train_step, model, opt, X, y)
    if stop is None:
        train_step_reference(reference_model, optimizer(reference_model.parameters(), lr=lr),
                             X, y)
    return stop, calls, model, reference_model, before


def _one_step_as_the_optimizer_takes_it(ex: str, train_step) -> Result | None:
    """One step with Adam from a fresh model: the given optimizer steps once, and the
    weights end where the lab's step puts them."""
    stop, calls, model, reference_model, _ = _step_beside_the_labs(
        ex, train_step, ng.optim.Adam, 0.01
    )
    if stop is not None:
        return stop
    if not calls:
        return not_yet(ex, ["the optimizer passed to train_step never took its step: the "
                            "update must be the given optimizer's (the caller chooses SGD or "
                            "Adam and its settings), not one of your own."],
                       gave="a step that ignores the optimizer it is given")
    if len(calls) > 1:
        return not_yet(ex, [f"one call of train_step stepped the optimizer {len(calls)} "
                            "times: one training step is one update."],
                       gave=f"{len(calls)} optimizer steps in one train_step")
    same = all(close(p, q, rtol=1e-6, atol=1e-7) for p, q in
               zip(model.parameters(), reference_model.parameters()))
    if not same:
        return not_yet(ex, ["with Adam as the optimizer, your step moved the weights "
                            "elsewhere than one optimizer step on this batch's gradient "
                            "does: nothing else may change the weights."],
                       gave="weights that differ after one Adam step")
    return None


def _flat(params) -> np.ndarray:
    return np.concatenate([np.asarray(p.detach().numpy(), np.float64).ravel() for p in params])


def _one_sgd_step_on_the_gradient_of_the_loss(ex: str, train_step) -> Result | None:
    """One plain SGD step from a fresh model moves the weights by lr times the gradient:
    a gradient scaled before the step (a scaled loss, two backward calls, a summed loss
    behind a returned mean, p.grad changed by hand) shows here, even when the step clears
    the gradients at its end and Adam, whose first step ignores the scale, cannot see it.
    A step that never moves the weights or steps another optimizer is told later."""
    stop, calls, model, reference_model, before = _step_beside_the_labs(
        ex, train_step, ng.optim.SGD, 0.1, large=True
    )
    if stop is not None:
        return stop
    rows = len(_data()[1])  # the batch the step ran on
    moved = _flat(model.parameters()) - before
    want = _flat(reference_model.parameters()) - before
    if len(calls) != 1 or not np.all(np.isfinite(moved)) or not np.any(moved):
        return None
    # the same float32 steps as the lab's: equal but for the rounding of another way of
    # writing the loss
    if close(moved, want, rtol=2e-7, atol=1e-9):
        return None
    scale = float(moved @ want / (want @ want))
    if _float32_rounding(moved, want, scale):
        return None
    if not close(moved, scale * want, rtol=1e-3, atol=1e-6):
        return not_yet(ex, ["with SGD as the optimizer, your step moved the weights "
                            "elsewhere than one step on the gradient of the loss you "
                            "return does: backward must run on that loss, once, and "
                            "nothing else may change the gradients (no clipping) or the "
                            "weights."],
                       gave="weights that differ after one SGD step")
    if close(scale, rows, rtol=1e-3):
        return not_yet(ex, [f"the gradient is {rows} times too large, the batch size: "
                            "backward ran on the SUM of the per-example losses while you "
                            "return their mean. Take the gradient of the loss you "
                            "return, so every step's size does not grow with the batch."],
                       gave="a gradient as many times too large as the batch has rows")
    return not_yet(ex, [f"the gradient the optimizer steps on is {_scale_text(scale)} times the "
                        "gradient of the loss you return: backward ran on a scaled loss, "
                        "or ran more than once (the gradients add up), or the gradients "
                        "were changed before the step. Run backward once, on the loss "
                        "itself, and let the optimizer step on what it leaves."],
                   gave=f"a gradient scaled by {_scale_text(scale)}")


_EPS32 = float(np.finfo(np.float32).eps)


def _float32_rounding(moved: np.ndarray, want: np.ndarray, scale: float) -> bool:
    """Whether a step differs from the lab's only by float32 rounding: a cross-entropy
    written by hand (log of a sum of exps, a max shift, log of softmax, the loss taken in
    float64) rounds otherwise than the library's, which moves the fitted scale by a few
    parts in 10 ** 8 and every entry by a few float32 ulps of the largest step.  A real
    scale (2 times, the batch size, 1 + 1e-6 on the loss) lies beyond both."""
    largest = float(np.max(np.abs(want)))
    return abs(scale - 1.0) <= 2 * _EPS32 and bool(
        np.max(np.abs(moved - want)) <= 4 * _EPS32 * largest
    )


def _scale_text(scale: float) -> str:
    """A scale as the hint words it: six digits, more when they would show a plain 1."""
    text = f"{scale:.6g}"
    return f"{scale:.9g}" if text == "1" else text


def _loss_after_one_step(X, y) -> float:
    """The loss of the checker's model after one right step: what a train_step that
    computes its loss again after optimizer.step() returns first."""
    model = _model()
    train_step(model, ng.optim.SGD(model.parameters(), lr=0.5), X, y)
    with ng.no_grad():
        return ng.nn.functional.cross_entropy(model(X), y).item()


# ----------------------------------------------------------------------------- 09-3
_STEPS = 6
_LR = 0.03  # not the lesson's 0.05: a typed-in learning rate shows
# The losses of a right graph written another way equal the lab's to float32 rounding, a
# few parts in 10 ** 7; a constant of 1e-5 added to the loss is 15 of them.
_TIGHT = 2e-6
# float32 throughout, as the lesson: a graph written another way (W.T, ns.matmul) and the
# dynamic run give these losses to within float32 rounding, far inside the rtol=1e-4
# below, while the mistakes told apart (SGD, another lr, a summed loss) move them by 25%+.


def _static_losses(
    init, X, y, lr, optimizer="Adam", reduction="mean", minimized="loss"
) -> list[float]:
    """The checker's static training run, right or with one of the usual mistakes."""
    with ns.Graph() as g:
        W1, b1, W2, b2 = (ns.Variable(v.copy()) for v in init)
        xs = ns.placeholder("X", shape=(None, 2), dtype=np.float32)
        ys = ns.placeholder("y", shape=(None,), dtype=np.int64)
        logits = ns.tanh(xs @ ns.t(W1) + b1) @ ns.t(W2) + b2
        loss = ns.cross_entropy(logits, ys, reduction=reduction)
        target = logits if minimized == "logits" else loss
        update = getattr(ns.optim, optimizer)([W1, b1, W2, b2], lr=lr).minimize(target)
    step = g.compile([xs, ys], [loss, update])
    return [float(step(X, y)[0]) for _ in range(_STEPS)]


def _first(outputs):
    """The first fetched value of a compiled call (it returns a list of them)."""
    return outputs[0] if isinstance(outputs, (list, tuple)) else outputs


_SHAPES_HINT = (
    "nn.Linear keeps its weight as (out_features, in_features) and computes x @ W.T + b: "
    "with X of shape (batch, 2) and W1 of shape (hidden, 2), transpose W1 (ns.t) before "
    "the product."
)


# torch's names of the float dtypes, as a dtype mismatch error spells them
_TORCH_FLOATS = {"half": "float16", "bfloat16": "bfloat16", "float": "float32",
                 "double": "float64"}


def _other_float(text: str) -> str | None:
    """The dtype that is not float32 in a mismatch error ("got: half != float"), or None."""
    found = re.search(r"got:?\s*(\w+)\s*!=\s*(\w+)", text)
    if found is None:
        return None
    names = [_TORCH_FLOATS.get(word, word) for word in found.groups()]
    others = [name for name in names if name != "float32"]
    return others[0] if others else None


def _integer_labels(ex: str, step) -> Result | None:
    """A labels' placeholder of an integer dtype other than the int64 the lesson asks for
    (and the labels have): torch's cross-entropy refuses int32 or int16 class indices."""
    for node in getattr(step, "inputs", None) or ():
        dtype = getattr(node, "dtype", None)
        try:
            dtype = np.dtype(dtype)
        except TypeError:  # not a placeholder of a numpy dtype: nothing to say
            continue
        if dtype.kind in "iu" and dtype != np.int64:
            refuses = "" if dtype == np.uint8 else f" (it refuses {dtype} ones)"
            return not_yet(ex, [f"the numbers are right, but your labels' placeholder is "
                                f"{dtype} where the exercise asks for int64: the dtype of the "
                                "labels fed and of the dynamic labels, and the one torch's "
                                f"cross-entropy takes class indices in{refuses}. Declare "
                                "the placeholder with the labels' own dtype."],
                           gave=f"a labels' placeholder of dtype {dtype}")
    return None


def _crashed(ex: str, fn, *args):
    """Call the learner's function; a crash becomes a failure, with a word on shapes when
    the error is about them (a missing transpose fails deep inside the graph)."""
    try:
        return None, fn(*args)
    except Exception as exc:  # any error is reported to the learner
        said = crash_message(exc)
        text = str(exc).lower()
        if "class indices" in text:
            return not_yet(ex, ["the labels are class indices, which cross-entropy takes as "
                                "integers: declare the labels' placeholder with an integer "
                                "dtype (int64, like the dynamic labels)."],
                           gave="float labels"), None
        if "same dtype" in text:  # a float64 (or float16) placeholder meets the weights
            other = _other_float(text)
            return not_yet(ex, ["the points' placeholder and the weights have different "
                                "dtypes: the data and the layers are float32 (torch's "
                                "default), so declare the points as float32 too."],
                           gave=f"a {other} placeholder for float32 weights"
                           if other else "a placeholder of another dtype than the "
                           "float32 weights"), None
        if "declared with shape" in text:
            return not_yet(ex, ["your placeholder fixes the batch size: declare the batch "
                                "dimension as None, so the same graph takes the training "
                                "set and any batch of points."],
                           gave="a graph that refuses a batch of another size"), None
        if any(w in text for w in ("subscriptable", "matmul")):
            return failed(ex, f"{said} {_SHAPES_HINT}"), None
        return failed(ex, said), None


@checker(
    "09-3",
    answer='xs = ns.placeholder("X", shape=(None, 2), dtype=np.float32); ys = '
    'ns.placeholder("y", shape=(None,), dtype=np.int64); logits = ns.tanh(xs @ ns.t(W1) + '
    "b1) @ ns.t(W2) + b2; loss = ns.cross_entropy(logits, ys); train = "
    "ns.optim.Adam([W1, b1, W2, b2], lr=lr).minimize(loss); step = g.compile([xs, ys], "
    "[loss, train]); classify = g.compile([xs], [logits]). None leaves the batch open; "
    "fetching train runs the update; classify fetches the logits alone.",
)
@keeps_learner_state
@_own_work("09-3", lambda: _lab_codes())
def check_static_classifier(build_static) -> Result:
    """``build_static(init, lr) -> (step, classify)``: lesson 9's model as a static graph."""
    ex = "09-3"
    bad = blank_function(ex, build_static)
    if bad is not None:
        return bad
    init = [p.detach().numpy().copy() for p in _model().parameters()]
    Xt, yt = _data()
    X, y = Xt.numpy(), yt.numpy()
    stop, built = _crashed(ex, build_static, [w.copy() for w in init], _LR)
    if stop is not None:
        return stop
    if not (isinstance(built, (list, tuple)) and len(built) == 2 and all(map(callable, built))):
        return failed(ex, f"build_static should return the pair (step, classify) of "
                          f"compiled functions, got {show(built)}.")
    step, classify = built
    swapped = _labels_first(step)
    if swapped is not None:
        return not_yet(ex, [f"step was compiled with {swapped}, but the checker calls it as "
                            "step(X, y), as the notebook does: the points first, then the "
                            "labels. The inputs given to compile are step's arguments, in "
                            "their order, so the labels were fed to the points' placeholder "
                            "and the points to the labels'. Keep the placeholders as they "
                            "are and list them in the order of the call."],
                       gave="a step that takes the labels first")
    losses = []
    for _ in range(_STEPS):
        stop, out = _crashed(ex, step, X, y)
        if stop is not None:
            return stop
        try:
            losses.append(float(np.asarray(_first(out))))
        except (TypeError, ValueError):
            first = _first(out) if out is not None else None
            shape = np.shape(first) if first is not None else None
            what = (f"an array of shape {shape}, one row of two scores per point: the logits"
                    if shape == (len(X), 2) else
                    "None, what a training op gives (it only updates the Variables)"
                    if first is None else f"an array of shape {shape}")
            return not_yet(ex, [f"the first thing step(X, y) returns is {what}. A training "
                                "step must fetch the loss first, one number per step, and "
                                "with it the training op, whose run updates the Variables."],
                           gave="a first output that is not a number")
    want = _static_losses(init, X, y, _LR)
    if not close(losses[0], want[0], rtol=1e-4):
        if close(losses[0], want[0] * len(y), rtol=1e-4):
            hint = ["your loss is the SUM of the per-example losses, not their mean, as the "
                    "dynamic mode's cross-entropy is: the two modes would take different "
                    "steps. Keep the cross-entropy's default reduction."]
        else:
            hint = ["the first loss, before any step, is not that of the model: the same "
                    "network as in dynamic mode, Linear, Tanh, Linear, each Linear x @ W.T + b, "
                    "and cross-entropy on the raw logits.",
                    "build the logits layer by layer, as the dynamic model's Sequential "
                    "runs them, and check each piece's shape against nn.Linear's layout."]
        return not_yet(ex, hint, gave=f"a first loss of {losses[0]:.4g}")
    if close(losses, [losses[0]] * _STEPS, rtol=1e-12):
        return not_yet(ex, ["the loss never changes: the update node changes the Variables "
                            "only when a run fetches it. Fetch it in step's outputs, next "
                            "to the loss."], gave=f"the same loss {_STEPS} times")
    if not close(losses, want, rtol=1e-4):
        if close(losses, _static_losses(init, X, y, _LR, minimized="logits"), rtol=1e-4):
            hint = ["your training op minimizes the logits, not the loss: minimize makes the "
                    "node it is given small, and the logits are scores, not the mistake the "
                    "network makes. Hand it the cross-entropy."]
        elif close(losses, _static_losses(init, X, y, _LR, optimizer="SGD"), rtol=1e-4):
            hint = ["your graph takes SGD steps; the dynamic mode uses Adam, and the two "
                    "modes must take the same steps to be compared."]
        elif close(losses, _static_losses(init, X, y, 0.05), rtol=1e-4):
            hint = ["your steps use a learning rate of their own: use the lr that "
                    "build_static is given (the checker passes another one)."]
        else:
            hint = ["the first loss is right but the steps differ from dynamic mode's: the "
                    "optimizer must be Adam over all four Variables, with the lr given and "
                    "every other setting left at its default (as the dynamic optimizer's), "
                    "and one update per step."]
        return not_yet(ex, hint, gave="losses " + ", ".join(f"{v:.4g}" for v in losses[:3])
                       + ", ...")
    if not close(losses, want, rtol=_TIGHT, atol=0.0):
        off = np.asarray(losses) - np.asarray(want)
        same = np.allclose(off, off[0], rtol=1e-2, atol=0.0)
        if not same and close(losses[0], want[0], rtol=_TIGHT, atol=0.0):
            return not_yet(ex, ["your first loss is the model's, and the later ones drift a "
                                "little from it: the loss is right, the steps are not quite "
                                "the dynamic optimizer's. An optimizer setting of your own "
                                "(its eps, weight decay or betas) changes every step a "
                                "little: give Adam the lr it is given and leave every other "
                                "setting at its default, as the dynamic optimizer does."],
                           gave="losses " + ", ".join(f"{v:.7g}" for v in losses[:3])
                           + ", ...")
        return not_yet(ex, ["your losses are close to the model's but not equal: "
                            + ("each is off by the same amount, a constant added to the "
                               "loss, which changes no gradient but makes the loss report "
                               "another number. The loss node" if same else "the loss node")
                            + " is the cross-entropy of the logits against "
                            "the labels, nothing added or scaled."],
                       gave="losses " + ", ".join(f"{v:.7g}" for v in losses[:3]) + ", ...")
    stop = _integer_labels(ex, step)
    if stop is not None:
        return stop
    scaled = _minimized_other_than_fetched(step, init, X, y)
    if scaled is not None:
        return not_yet(ex, [f"your training op minimizes another node than the loss step "
                            f"fetches: after the steps, Adam's running average of the "
                            f"gradients is {scaled} the model's. Adam hides a scaled loss "
                            "in its steps, not in its gradients: the node minimize is "
                            "given must be the loss node that step fetches, as it is."],
                       gave="a training op whose gradients are not the fetched loss's")
    # the forward pass alone, on any batch size, without touching the weights
    logits = []
    for rows in (X[:5], X[:1], X[:5]):
        inputs = getattr(classify, "inputs", None)
        if isinstance(classify, ns.CompiledFunction) and inputs is not None and len(inputs) != 1:
            return not_yet(ex, [f"classify was compiled with {len(inputs)} inputs: it is called "
                                "with the points alone (a grid of new points has no labels), "
                                "so its only input is the points' placeholder; the logits "
                                "need nothing else."],
                           gave=f"a classify that takes {len(inputs)} inputs")
        stop, out = _crashed(ex, classify, rows)
        if stop is not None:
            return stop
        logits.append(np.asarray(_first(out)))
    if logits[0].shape != (5, 2) or logits[1].shape != (1, 2):
        return not_yet(ex, ["classify(points) should fetch the logits, one row of two "
                            "class scores per point."], gave=f"shape {logits[0].shape} for "
                                                         "5 points")
    if not close(logits[0], logits[2], rtol=1e-12):
        return not_yet(ex, ["classify changed the weights: it must fetch the logits alone, "
                            "not the update."], gave="logits that change between two calls")
    want_step, want_classify = build_static_classifier([w.copy() for w in init], _LR)
    for _ in range(_STEPS):
        want_step(X, y)
    want_logits = np.asarray(want_classify(X[:5])[0])
    if not close(logits[0], want_logits, rtol=1e-4):
        shifted = want_logits - want_logits.max(axis=1, keepdims=True)
        probabilities = np.exp(shifted) / np.exp(shifted).sum(axis=1, keepdims=True)
        log_probabilities = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        ratio = _one_ratio(logits[0], want_logits)
        gave = "a classify output that is not the logits"
        if close(logits[0], probabilities, rtol=1e-4, atol=1e-6):
            hint = ["classify returns probabilities, the logits after a softmax: the "
                    "exercise asks for the logits themselves, the raw scores the loss "
                    "was computed from."]
        elif close(logits[0], log_probabilities, rtol=1e-4, atol=1e-6):
            hint = ["classify returns log-probabilities, the logits after a log_softmax: "
                    "the exercise asks for the logits themselves, the raw scores the loss "
                    "was computed from (the cross-entropy takes its own log_softmax of "
                    "them). Your steps are right: only what classify fetches differs."]
        elif close(logits[0], np.exp(want_logits), rtol=1e-4, atol=1e-6):
            hint = ["classify returns the exponentials of the logits (exp of each score): "
                    "the exercise asks for the logits themselves, the raw scores the loss "
                    "was computed from. Your steps are right: only what classify fetches "
                    "differs."]
        elif ratio is not None:
            hint = [f"classify returns the logits times {ratio:g}: the exercise asks for the "
                    "logits themselves, the raw scores the loss was computed from, nothing "
                    "applied to them. Your steps are right: only what classify fetches "
                    "differs."]
        else:
            hint = ["after the same steps, classify's logits differ from those of the "
                    "dynamic model: either classify reads other weights than the ones step "
                    "trains (compile both from the one graph), or your steps differ a "
                    "little from the dynamic ones: the optimizer takes the lr given and "
                    "leaves every other setting at its default, as the dynamic one does."]
            gave = "logits that differ from the dynamic model's"
        return not_yet(ex, hint, gave=gave)
    uncompiled = [name for name, fn in (("step", step), ("classify", classify))
                  if not isinstance(fn, ns.CompiledFunction)]
    if uncompiled:
        return not_yet(
            ex,
            [f"the numbers are right, but {' and '.join(uncompiled)} "
             f"{_drive(len(uncompiled))} the graph run by run; the exercise asks the graph to "
             "compile itself into callables, planned once for every call.",
             "the graph has a method that takes the inputs and the outputs to fetch."],
            gave=f"{' and '.join(uncompiled)} not compiled",
        )
    return correct(ex, f"the same Adam steps as dynamic mode ({losses[0]:.3f} -> "
                       f"{losses[-1]:.3f} in {_STEPS} steps), and one graph classifies any "
                       "batch size.")


def _labels_first(step) -> str | None:
    """The words for a step compiled with the labels' placeholder before the points',
    or None: the labels' placeholder is the one of rank 1 (or, shapes left out, of an
    integer dtype)."""
    inputs = getattr(step, "inputs", None) if isinstance(step, ns.CompiledFunction) else None
    if inputs is None or len(inputs) != 2 or any(p is None for p in inputs):
        return None

    def role(placeholder) -> str | None:
        shape = getattr(placeholder, "shape", None)
        if shape is not None:
            return {1: "labels", 2: "points"}.get(len(shape))
        try:
            kind = np.dtype(getattr(placeholder, "dtype", None)).kind
        except TypeError:  # no numpy dtype: nothing to say
            return None
        return "labels" if kind in "iu" else None

    if role(inputs[0]) != "labels" or role(inputs[1]) == "labels":
        return None
    first, second = (getattr(p, "name", "?") for p in inputs)
    return (f"the labels' placeholder ({first!r}) first and the points' ({second!r}) "
            "second")


def _one_ratio(got: np.ndarray, want: np.ndarray) -> float | None:
    """The one factor (not 1) that makes ``want`` into ``got``, or None."""
    if got.shape != want.shape or not np.all(np.abs(want) > 1e-6):
        return None
    ratios = got / want
    ratio = float(np.median(ratios))
    if close(ratio, 1.0, rtol=1e-3) or not close(ratios, np.full_like(ratios, ratio), rtol=1e-4):
        return None
    return ratio


_EXP_AVG = re.compile(r"/exp_avg(_\d+)?$")


def _exp_avgs(graph) -> dict:
    """Adam's running averages of the gradients in ``graph``, by the shape of their
    Variable (each of the model's four has a shape of its own)."""
    found: dict = {}
    for node in getattr(graph, "nodes", ()):
        if isinstance(node, ns.Variable) and _EXP_AVG.search(str(node.name)):
            found.setdefault(np.shape(node.value), []).append(np.asarray(node.value))
    return found


def _minimized_other_than_fetched(step, init, X, y) -> str | None:
    """How the gradients of the learner's training op compare with the lab's after the
    same steps ("twice", "the batch size times", ...) when they are not the gradients of
    the loss step fetches, or None.  Adam's steps barely change when the loss is scaled
    (a summed loss, ``loss * 2``), so the losses alone cannot tell; its running average
    of the gradients (a slot Variable of the graph) can."""
    mine = _exp_avgs(getattr(step, "graph", None))
    lab_step, _ = build_static_classifier([w.copy() for w in init], _LR)
    for _ in range(_STEPS):
        lab_step(X, y)
    ratios = []
    for shape, (want, *_) in _exp_avgs(lab_step.graph).items():
        got = mine.get(shape)
        if got is None or len(got) != 1:
            return None  # not one Adam over these Variables: the losses told that
        if close(got[0], want, rtol=1e-3, atol=1e-9):
            continue
        big = np.abs(want) > 1e-3 * np.abs(want).max()
        if big.any():
            ratios.append(float(np.median(got[0][big] / want[big])))
    ratio = float(np.median(ratios)) if ratios else 1.0
    if close(ratio, 1.0, rtol=0.05) or not close(ratios, [ratio] * len(ratios), rtol=1e-2):
        return None  # not one scale for every gradient: another setting (eps, weight_decay)
    if close(ratio, len(y), rtol=1e-2):
        return f"{len(y)} times (the batch size)"
    if close(ratio, round(ratio), rtol=1e-2) and round(ratio) == 2:
        return "twice"
    return f"about {ratio:.3g} times"


def _drive(count: int) -> str:
    """The words for ``count`` functions driving the graph: one drives, two drive."""
    if count == 1:
        return "is a Python function that drives"
    return "are Python functions that drive"


# ------------------------------------------------------------------ reference pieces
def _accuracy(logits, labels) -> float:
    return float(np.mean(np.asarray(logits).argmax(axis=1) == np.asarray(labels)))


def _lab_codes() -> dict:
    """The code of each of the lab's lesson-9 functions, with its name: the checks refuse
    an answer that runs one (lesson 8's LabCalls).  Each is written as a learner writes
    the answer, so the lab's copy is known by its file as well."""
    named = [("accuracy", _accuracy), ("train_step", training.train_step),
             ("build_static", training.build_static_classifier)]
    return lab_code_table(named, plain=tuple(name for name, _ in named))


def reference(name: str):
    """The lab's version of lesson 9's function ``name`` (``accuracy``, ``train_step``,
    ``build_static``): the notebook runs it until the learner's own passes its check.

    >>> reference("train_step").__name__, reference("build_static").__name__
    ('train_step', 'build_static_classifier')
    """
    pieces = {"accuracy": _accuracy, "train_step": train_step,
              "build_static": build_static_classifier}
    if name not in pieces:
        raise KeyError(f"lesson 9 has no function {name!r}; it has {', '.join(pieces)}")
    return pieces[name]
