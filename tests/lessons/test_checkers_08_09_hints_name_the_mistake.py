"""Lessons 8-9: a step on a scaled gradient is refused even where the loss still falls,
and each hint names the mistake actually made (never the expected value or code), while
the right answers in their usual forms are still accepted and no checker raises."""

from __future__ import annotations

import numpy as np
import pytest
from checker_results import never_states, outcome, rejected_on_first_try
from lesson_answers_08 import OPS, Node

import naivegraph as ng
from naivegraph.lessons import exercises as ex

F = ng.nn.functional


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
    result = rejected_on_first_try(capsys, ex.check_train_step, train_with(backward, zero_at_end),
                      says=f"the gradient the optimizer steps on is {scale} the gradient")
    assert "clear them at the start" not in result.message
    never_states(result, "zero_grad()", "loss.backward()", "loss.item()")


@pytest.mark.parametrize("zero_at_end", [False, True])
def test_09_2_backward_on_the_sum_behind_a_returned_mean_is_told_the_batch_size(
        capsys, zero_at_end):
    result = rejected_on_first_try(capsys, ex.check_train_step, train_with("summed", zero_at_end),
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
    result = rejected_on_first_try(capsys, ex.check_accuracy_fn, wrong, says=says)
    assert not_says not in result.message
    never_states(result, "axis=1", "argmax(1)", "3/5", "0.75", "0.333")


def test_09_1_the_argmax_over_the_class_axis_is_accepted(capsys):
    assert outcome(capsys, ex.check_accuracy_fn, accuracy)
    assert outcome(capsys, ex.check_accuracy_fn,
                   lambda l, y: float(np.mean(np.argmax(np.asarray(l), axis=-1) == np.asarray(y))))


# ------------------------------------------------------------------------- lesson 8
def backward_checking_freed(leaf_first: bool):
    """run_backward, right or with the test for a freed node made before the leaf test."""

    def run_backward(root):
        order, seen = [], set()

        def visit(node):
            if id(node) not in seen:
                seen.add(id(node))
                for inp in node.inputs:
                    if inp.requires_grad:
                        visit(inp)
                order.append(node)

        visit(root)
        grads = {id(root): 1.0}
        for node in reversed(order):
            g = grads.pop(id(node), 0.0)
            if not leaf_first and node.saved is None:
                raise RuntimeError("the graph was freed by an earlier backward")
            if node.is_leaf:
                node.grad += g
                continue
            if node.saved is None:
                raise RuntimeError("the graph was freed by an earlier backward")
            for k, inp in enumerate(node.inputs):
                if inp.requires_grad:
                    grads[id(inp)] = grads.get(id(inp), 0.0) + g * OPS[node.grad_fn][1](
                        *node.saved, k)
        return order

    return run_backward


def test_08_3_a_freed_test_that_catches_the_leaves_is_told_leaves_save_nothing(capsys):
    result = rejected_on_first_try(capsys, ex.check_run_backward, backward_checking_freed(leaf_first=False),
                      says="a leaf's saved is None too")
    assert "graph nothing had freed" in result.message
    assert "freed by an earlier backward" not in result.message  # not its own error echoed
    never_states(result, "node.is_leaf", "continue")
    assert outcome(capsys, ex.check_run_backward, backward_checking_freed(leaf_first=True))


@pytest.mark.parametrize("marker", [(), 0, False])
def test_08_4_a_freed_marker_other_than_none_is_told_what_run_backward_tests(capsys, marker):
    def free_graph(order):
        for node in order:
            if not node.is_leaf:
                node.saved = marker

    result = rejected_on_first_try(capsys, ex.check_free_graph, free_graph,
                      says="recognises a freed node by its saved being None")
    assert "still hold their saved values" not in result.message
    never_states(result, "node.saved = None", "is_leaf")


def test_08_4_freeing_with_none_is_accepted(capsys):
    def free_graph(order):
        for node in order:
            if not node.is_leaf:
                node.saved = None

    assert outcome(capsys, ex.check_free_graph, free_graph)


def descend(zero_to):
    def gradient_descent(f, x0, y0, lr=0.1, steps=200):
        x, y = Node(x0, requires_grad=True), Node(y0, requires_grad=True)
        for _ in range(steps):
            x.grad = y.grad = zero_to
            f(x, y).backward()
            x.value -= lr * x.grad
            y.value -= lr * y.grad
        return x.value, y.value

    return gradient_descent


def test_08_6_grads_zeroed_to_none_are_told_where_it_raised_and_why(capsys):
    result = rejected_on_first_try(capsys, ex.check_gradient_descent, descend(None),
                      says="raised TypeError in run_backward, at line")
    assert "zeroing the grads means setting them to zero, not to None" in result.message
    never_states(result, "x.grad = y.grad = 0.0", "-= lr")
    assert outcome(capsys, ex.check_gradient_descent, descend(0.0))
