"""Lessons 9-13, twelfth round: an accuracy checked on tensors of three classes and more,
a hand-written cross-entropy told from a scaled loss by float32's rounding, a cell that
runs the snippet it was to predict, tangents read off a library, a dual level left open,
state kept outside ctx, the op table's sum_to, and an answer cell that asks the library
for the first NaN: each refused with a hint naming that mistake (and the value or code
never given away), while the right forms are still accepted."""

from __future__ import annotations

import numpy as np
import pytest
from checker_results import never_states, outcome, refused, rejected_on_first_try

import naivegraph as ng
from naivegraph.lessons import exercises as ex

F = ng.nn.functional


# -- 09-1: tensors of three classes, one number for tensors, numpy's state, precision -------
def _on_arrays(logits, labels):
    return float(np.mean(np.asarray(logits).argmax(axis=1) == np.asarray(labels)))


def _two_class_tensor_path(logits, labels):
    if isinstance(logits, ng.Tensor):
        return float(((logits[:, 1] > logits[:, 0]).long() == labels).float().mean().item())
    return _on_arrays(logits, labels)


def test_09_1_a_tensor_path_right_for_two_classes_only_is_refused(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_accuracy_fn, _two_class_tensor_path, says="right for two classes"
    )
    assert "on tensors" in result.message
    never_states(result, "argmax(axis=1)", "0.333", "0.75")


def test_09_1_an_array_of_one_number_for_tensors_is_refused(capsys):
    def one_element_for_tensors(logits, labels):
        value = _on_arrays(logits, labels)
        return np.array([value]) if isinstance(logits, ng.Tensor) else value

    result = rejected_on_first_try(
        capsys, ex.check_accuracy_fn, one_element_for_tensors, says="for tensors you return"
    )
    assert "one number" in result.message
    never_states(result, "float(", "argmax(axis=1)")


def test_09_1_numpys_error_state_changed_is_refused_and_put_back(capsys):
    errors = np.geterr()

    def silencing(logits, labels):
        np.seterr(all="ignore")
        return _on_arrays(logits, labels)

    try:
        result = rejected_on_first_try(
            capsys, ex.check_accuracy_fn, silencing, says="numpy's error handling (np.seterr)"
        )
        assert np.geterr() == errors
    finally:
        np.seterr(**errors)
    never_states(result, "argmax(axis=1)")


def test_09_1_an_average_in_float16_is_told_its_precision(capsys):
    def in_float16(logits, labels):
        hits = np.asarray(logits).argmax(axis=1) == np.asarray(labels)
        return float(np.mean(hits, dtype=np.float16))

    result = rejected_on_first_try(
        capsys, ex.check_accuracy_fn, in_float16, says="computed in float16"
    )
    assert "predict each row's class" not in result.message
    never_states(result, "argmax(axis=1)", "dtype=np.float64")


def test_09_1_one_boolean_per_row_is_told_it_is_one_value_per_row(capsys):
    def per_row(logits, labels):
        return np.asarray(logits).argmax(axis=1) == np.asarray(labels)

    result = rejected_on_first_try(
        capsys, ex.check_accuracy_fn, per_row, says="one value per row"
    )
    assert "[1., 1., 0." not in result.message
    never_states(result, "np.mean", "argmax(axis=1)")


def test_09_1_right_forms_on_arrays_and_tensors_are_still_accepted(capsys):
    def by_tensor_ops(logits, labels):
        if isinstance(logits, ng.Tensor):
            return (logits.argmax(dim=1) == labels).float().mean().item()
        return _on_arrays(logits, labels)

    def zero_d_tensor(logits, labels):
        if isinstance(logits, ng.Tensor):
            return (logits.argmax(dim=1) == labels).double().mean()
        return _on_arrays(logits, labels)

    for accuracy in (_on_arrays, by_tensor_ops, zero_d_tensor):
        assert outcome(capsys, ex.check_accuracy_fn, accuracy).passed


# -- 09-2: a cross-entropy written by hand, a forward pass in eval mode ---------------------
def _step_with(loss_of, before=lambda model: None, after=lambda model: None):
    def train_step(model, optimizer, X, y):
        before(model)
        optimizer.zero_grad()
        loss = loss_of(model(X), y)
        loss.backward()
        optimizer.step()
        after(model)
        return loss.item()

    return train_step


def _by_hand(z, y):
    return (z.exp().sum(dim=1).log() - z[ng.arange(len(y)), y]).mean()


def _shifted(z, y):
    s = z - z.max(dim=1, keepdim=True).values.detach()
    return (s.exp().sum(dim=1).log() - s[ng.arange(len(y)), y]).mean()


@pytest.mark.parametrize(
    "loss_of",
    [
        _by_hand,
        _shifted,
        lambda z, y: F.nll_loss(ng.log(ng.softmax(z, dim=1)), y),
        lambda z, y: F.cross_entropy(z.double(), y),
        lambda z, y: F.cross_entropy(z, y),
    ],
    ids=["log-sum-exp", "max shift", "log of softmax", "in float64", "library"],
)
def test_09_2_a_cross_entropy_written_another_way_is_accepted(capsys, loss_of):
    result = outcome(capsys, ex.check_train_step, _step_with(loss_of))
    assert result.passed, result.message


@pytest.mark.parametrize("factor, says", [(1 + 1e-6, "1.000001"), (2.0, "is 2 times")])
def test_09_2_a_loss_really_scaled_is_still_told_its_scale(capsys, factor, says):
    def scaled(model, optimizer, X, y):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(X), y)
        (loss * factor).backward()
        optimizer.step()
        return loss.item()

    result = rejected_on_first_try(capsys, ex.check_train_step, scaled, says=says)
    assert "times the gradient of the loss you return" in result.message
    never_states(result, "zero_grad()", "cross_entropy(")


def test_09_2_a_forward_pass_in_eval_mode_switched_back_after_is_refused(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_train_step,
        _step_with(
            F.cross_entropy, before=lambda model: model.eval(), after=lambda model: model.train()
        ),
        says="forward pass in evaluation mode",
    )
    never_states(result, "model.train()", "zero_grad()")
