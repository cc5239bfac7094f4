"""Right answers to exercises of lessons 1 to 5, written as a learner writes them, for
the checker tests that need the accepted form next to the refused ones."""

from __future__ import annotations

import naivegraph as ng


def find_leaves(t):
    """02: the leaves of t's graph, walked with a stack from its grad_fn."""
    leaves, seen, stack = [], set(), [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if node.name() == "AccumulateGrad":
            leaves.append(node.variable)
        stack.extend(fn for fn, _ in node.next_functions)
    return leaves


def derivatives(f, x):
    """The first and second derivatives of f at x."""
    (first,) = ng.autograd.grad(f(x), [x], create_graph=True)
    (second,) = ng.autograd.grad(first, [x])
    return first, second


def reset_no_grad(a):
    with ng.no_grad():
        a.fill_(10.0)
    return a


def reset_detach(a):
    a.detach().fill_(10.0)
    return a


def reset_data(a):
    a.data[...] = 10.0  # [:] fails on a 0-d leaf
    return a


def reset_ellipsis(a):
    with ng.no_grad():
        a[...] = 10.0
    return a


def predict_ok(model, x):
    with ng.no_grad():
        return model(x)


def predict_inference_mode(model, x):
    with ng.inference_mode():
        return model(x)


def finetune_with(**settings):
    """A fine-tuning setup: the model frozen, a new head, SGD on the head with settings."""

    def setup(model, n_classes):
        for p in model.parameters():
            p.requires_grad = False
        model.fc = ng.nn.Linear(8, n_classes)
        return ng.optim.SGD(model.fc.parameters(), **settings)

    return setup


# Lesson 1's model as notebook cells build it, and its checking calls.
MODEL = (
    "input = ng.ones(2, 2)\n"
    "w1 = ng.tensor(2.0, requires_grad=True)\n"
    "w2 = ng.tensor(3.0, requires_grad=True)\n"
    "w3 = ng.tensor(4.0, requires_grad=True)\n"
    "l1 = input * w1\nl2 = l1 + w2\nl3 = l1 * w3\nl4 = l2 * l3\nloss = l4.mean()\n"
)
CHECK_01_1 = "ex.check_forward_values(l1_value, l2_value, l3_value, l4_value, loss_value)"
CHECK_01_2 = "ex.check_leaf_grads(w1_grad, w2_grad, w3_grad)"
