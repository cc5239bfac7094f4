"""Lessons 9-13, thirteenth round: a loss right for two classes only, a step that reseeds
the generator, changes the optimizer's lr or writes into its batch, a labels' placeholder
of another integer dtype, a tangent rule wrong for a negative factor, a matmul backward
written for one set of sizes, and hints that now name the mistake made (an integer
division, truncated logits, a float16 placeholder, an exponent read off top, a function
that ignores its input, a clamp, a None answer): each refused with a hint naming that
mistake (and the value or code never given away), while the right forms are still
accepted."""

from __future__ import annotations

import numpy as np
import pytest
from checker_results import never_states, outcome, rejected_on_first_try

import naivegraph as ng
import naivegraph.static as ns
from naivegraph.lessons import exercises as ex

F = ng.nn.functional


# -- 09-1: an integer division, logits made whole numbers -----------------------------------
def _on_arrays(logits, labels):
    return float(np.mean(np.asarray(logits).argmax(axis=1) == np.asarray(labels)))


def test_09_1_an_integer_division_is_told_the_fraction_was_cut_off(capsys):
    def floored(logits, labels):
        return (np.asarray(logits).argmax(axis=1) == np.asarray(labels)).sum() // len(labels)

    result = rejected_on_first_try(
        capsys, ex.check_accuracy_fn, floored, says="cut off by an integer division"
    )
    assert "largest logit" not in result.message
    never_states(result, "np.mean", "argmax(axis=1)", "/ len(")


def test_09_1_logits_cast_to_int_are_told_they_were_made_whole_numbers(capsys):
    def truncated(logits, labels):
        return float(np.mean(np.asarray(logits).astype(int).argmax(axis=1) == np.asarray(labels)))

    result = rejected_on_first_try(
        capsys, ex.check_accuracy_fn, truncated, says="logits made whole numbers"
    )
    assert "right for two classes" not in result.message
    never_states(result, "argmax(axis=1)", "astype(float)")


def test_09_1_the_right_accuracy_is_still_accepted(capsys):
    def by_true_division(logits, labels):
        return (np.asarray(logits).argmax(axis=1) == np.asarray(labels)).sum() / len(labels)

    for accuracy in (_on_arrays, by_true_division):
        assert outcome(capsys, ex.check_accuracy_fn, accuracy).passed


# -- 09-2: two classes only, a seed, the optimizer's lr, the batch written into -------------
def _step_with(loss_of, before=lambda model, optimizer, X: None):
    def train_step(model, optimizer, X, y):
        before(model, optimizer, X)
        optimizer.zero_grad()
        loss = loss_of(model(X), y)
        loss.backward()
        optimizer.step()
        return loss.item()

    return train_step


def _binary_on_the_difference(z, y):
    return F.binary_cross_entropy_with_logits(z[:, 1] - z[:, 0], y.float())


def _set_lr(model, optimizer, X):
    for group in optimizer.param_groups:
        group["lr"] = 0.01


def _centre_in_place(model, optimizer, X):
    with ng.no_grad():
        X -= X.mean(dim=0)


def test_09_2_a_binary_loss_on_the_logit_difference_is_refused_on_three_classes(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_train_step,
        _step_with(_binary_on_the_difference),
        says="wrong for one with three classes",
    )
    assert "ALL its classes" in result.message
    never_states(result, "cross_entropy(", "zero_grad()")


def test_09_2_a_seed_set_inside_the_step_is_refused(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_train_step,
        _step_with(F.cross_entropy, before=lambda model, optimizer, X: ng.manual_seed(0)),
        says="reseeds the global random generator (ng.manual_seed)",
    )
    never_states(result, "cross_entropy(", "zero_grad()")


def test_09_2_a_learning_rate_changed_in_the_step_is_told_so(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_train_step,
        _step_with(F.cross_entropy, before=_set_lr),
        says="changed the optimizer's lr (in its param_groups)",
    )
    assert "scaled loss" not in result.message
    never_states(result, "0.5", "cross_entropy(")


def test_09_2_a_batch_written_into_in_place_is_told_so(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_train_step,
        _step_with(F.cross_entropy, before=_centre_in_place),
        says="changed the X it was given, in place",
    )
    assert "not the cross-entropy" not in result.message
    never_states(result, "cross_entropy(", "zero_grad()")


@pytest.mark.parametrize(
    "loss_of",
    [
        F.cross_entropy,
        lambda z, y: (z.exp().sum(dim=1).log() - z[ng.arange(len(y)), y]).mean(),
        lambda z, y: F.nll_loss(ng.log(ng.softmax(z, dim=1)), y),
        lambda z, y: F.cross_entropy(z.double(), y),
    ],
    ids=["library", "log-sum-exp", "log of softmax", "in float64"],
)
def test_09_2_a_cross_entropy_over_all_classes_is_still_accepted(capsys, loss_of):
    result = outcome(capsys, ex.check_train_step, _step_with(loss_of))
    assert result.passed, result.message


# -- 09-3: the dtypes of the placeholders ----------------------------------------------------
def _build_static_with(points_dtype, labels_dtype):
    def build_static(init, lr):
        with ns.Graph() as g:
            W1, b1, W2, b2 = (
                ns.Variable(w, name=n) for w, n in zip(init, ("W1", "b1", "W2", "b2"), strict=True)
            )
            xs = ns.placeholder("X", shape=(None, 2), dtype=points_dtype)
            ys = ns.placeholder("y", shape=(None,), dtype=labels_dtype)
            logits = ns.tanh(xs @ ns.t(W1) + b1) @ ns.t(W2) + b2
            loss = ns.cross_entropy(logits, ys)
            train = ns.optim.Adam([W1, b1, W2, b2], lr=lr).minimize(loss)
        return g.compile([xs, ys], [loss, train]), g.compile([xs], [logits])

    return build_static


def test_09_3_a_float16_placeholder_is_told_its_own_dtype(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_static_classifier,
        _build_static_with("float16", "int64"),
        says="you gave a float16 placeholder for float32 weights",
    )
    assert "float64" not in result.message


@pytest.mark.parametrize("labels_dtype", ["int32", "int16"])
def test_09_3_labels_of_another_integer_dtype_are_refused(capsys, labels_dtype):
    result = rejected_on_first_try(
        capsys,
        ex.check_static_classifier,
        _build_static_with("float32", labels_dtype),
        says=f"your labels' placeholder is {labels_dtype} where the exercise asks for int64",
    )
    assert f"refuses {labels_dtype} ones" in result.message
    never_states(result, "dtype=np.int64", 'placeholder("y"')


def test_09_3_int64_labels_are_still_accepted(capsys):
    for labels_dtype in ("int64", np.int64, ng.int64):
        result = outcome(
            capsys, ex.check_static_classifier, _build_static_with(np.float32, labels_dtype)
        )
        assert result.passed, result.message
