"""Lessons 8-9: a step on a scaled gradient is refused even where the loss still falls,
and each hint names the mistake actually made (never the expected value or code), while
the right answers in their usual forms are still accepted and no checker raises."""

from __future__ import annotations

import numpy as np
import pytest

import naivegraph as ng
from naivegraph.lessons import checking
from naivegraph.lessons import exercises as ex

F = ng.nn.functional


@pytest.fixture(autouse=True)
def fresh_tries():
    checking.TRIES.clear()
    yield
    checking.TRIES.clear()
    ng.set_grad_enabled(True)


def outcome(capsys, checker, *args):
    result = checker(*args)
    printed = capsys.readouterr().out
    assert printed.strip() == result.message
    return result


def rejected(capsys, checker, *args, says: str):
    checking.TRIES.clear()  # each case is a first try: its first hint
    result = outcome(capsys, checker, *args)
    assert result.status == "fail", result.message
    assert says in result.message, result.message
    return result


def never_states(result, *values: str):
    for value in values:
        assert value not in result.message, (value, result.message)


# ------------------------------------------------------------------------- 09-2
def train_with(backward: str, zero_at_end: bool):
    """A train_step whose backward is right or scaled, zeroing at the start or the end."""

    def train_step(model, opt, X, y):
        if not zero_at_end:
            opt.zero_grad()
        logits = model(X)
        loss = F.cross_entropy(logits, y)
        if backward == "doubled loss":
            (loss * 2).backward()
        elif backward == "twice":
            loss.backward(retain_graph=True)
            loss.backward()
        elif backward == "summed":
            F.cross_entropy(logits, y, reduction="sum").backward()
        else:
            loss.backward()
        if backward == "grad times 3":
            for p in model.parameters():
                p.grad *= 3
        opt.step()
        if zero_at_end:
            opt.zero_grad()
        return loss.item()

    return train_step


@pytest.mark.parametrize("zero_at_end", [False, True])
@pytest.mark.parametrize("backward, scale", [("doubled loss", "2 times"), ("twice", "2 times"),
                                             ("grad times 3", "3 times")])
def test_09_2_a_step_on_a_scaled_gradient_is_told_its_scale(capsys, backward, scale,
                                                            zero_at_end):
    result = rejected(capsys, ex.check_train_step, train_with(backward, zero_at_end),
                      says=f"the gradient the optimizer steps on is {scale} the gradient")
    assert "clear them at the start" not in result.message
    never_states(result, "zero_grad()", "loss.backward()", "loss.item()")


@pytest.mark.parametrize("zero_at_end", [False, True])
def test_09_2_backward_on_the_sum_behind_a_returned_mean_is_told_the_batch_size(
        capsys, zero_at_end):
    result = rejected(capsys, ex.check_train_step, train_with("summed", zero_at_end),
                      says="32 times too large, the batch size")
    assert "SUM of the per-example losses" in result.message
    assert "clear them at the start" not in result.message
    never_states(result, "zero_grad()", "loss.backward()", "reduction='mean'",
                 'reduction="mean"')


@pytest.mark.parametrize("zero_at_end", [False, True])
def test_09_2_one_backward_of_the_loss_is_accepted_zeroing_at_either_end(capsys, zero_at_end):
    assert outcome(capsys, ex.check_train_step, train_with("once", zero_at_end))


# ------------------------------------------------------------------------- 09-1
def accuracy(logits, labels):
    return float(np.mean(np.asarray(logits).argmax(axis=1) == np.asarray(labels)))


def argmax_without_axis(logits, labels):
    return float(np.mean(np.argmax(np.asarray(logits)) == np.asarray(labels)))


def label_logit_is_positive(logits, labels):
    logits, labels = np.asarray(logits), np.asarray(labels)
    return float((logits[range(len(labels)), labels] > 0).mean())


@pytest.mark.parametrize("wrong, says, not_says", [
    (argmax_without_axis, "argmax without an axis gives one index", "same number for every"),
    (label_logit_is_positive, "whether the logit at the label is positive",
     "right for two classes"),
])
def test_09_1_an_accuracy_blind_to_rows_or_to_the_other_logits_is_told_why(
        capsys, wrong, says, not_says):
    result = rejected(capsys, ex.check_accuracy_fn, wrong, says=says)
    assert not_says not in result.message
    never_states(result, "axis=1", "argmax(1)", "3/5", "0.75", "0.333")


def test_09_1_the_argmax_over_the_class_axis_is_accepted(capsys):
    assert outcome(capsys, ex.check_accuracy_fn, accuracy)
    assert outcome(capsys, ex.check_accuracy_fn,
                   lambda l, y: float(np.mean(np.argmax(np.asarray(l), axis=-1) == np.asarray(y))))
