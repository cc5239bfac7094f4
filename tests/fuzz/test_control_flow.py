"""Differential fuzzing of control flow: random programs with branches and loops, run
three ways, must agree in values and gradients.

* static mode: ``ns.cond`` / ``ns.while_loop``, gradients from ``ns.gradients``,
  compiled once and run on every input;
* dynamic mode: the same program with Python's ``if`` and ``for``;
* torch (the oracle, where installed): the same Python program.

A program is a chain of steps drawn from a small set of smooth element-wise ops, each
reading the running value ``a`` and a weight ``w`` of the same shape.  It is wrapped in
a branch (predicate: the sign of a sum) or in a loop (the trip count is fed, 0..4, so
one static graph serves every count).  Only method calls and operators are used, so
one definition of each step runs on static nodes, naivegraph tensors and torch tensors.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from random_programs import FUZZ, assert_close, float64_default

import naivegraph as ng
import naivegraph.static as ns

STEPS = {
    "tanh": lambda a, w: a.tanh(),
    "mul_w": lambda a, w: a * w,
    "add_w": lambda a, w: a + w * 0.5,
    "sin_sq": lambda a, w: (a * a).sin(),
    "sigmoid_w": lambda a, w: a.sigmoid() * w,
    "scale": lambda a, w: a * 0.9 - 0.1,
}
step_names = st.lists(st.sampled_from(sorted(STEPS)), min_size=1, max_size=3)


def chain(names, a, w):
    for name in names:
        a = STEPS[name](a, w)
    return a


@st.composite
def branch_programs(draw):
    shape = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    return {
        "kind": "branch",
        "shape": shape,
        "before": draw(step_names),
        "true": draw(step_names),
        "false": draw(step_names),
        "threshold": draw(st.floats(-1.0, 1.0)),
        "seed": draw(st.integers(0, 2**16)),
    }


@st.composite
def loop_programs(draw):
    shape = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    return {
        "kind": "loop",
        "shape": shape,
        "before": draw(step_names),
        "body": draw(step_names),
        "trips": draw(st.integers(0, 4)),
        "seed": draw(st.integers(0, 2**16)),
    }


def data(program):
    rng = np.random.default_rng(program["seed"])
    shape = program["shape"]
    return rng.uniform(-1.5, 1.5, shape), rng.uniform(-1.5, 1.5, shape)


def eager(program, x, w, lib):
    """The program with Python control flow, on tensors of ``lib`` (ng or torch)."""
    a = chain(program["before"], x, w)
    if program["kind"] == "branch":
        if a.sum().item() > program["threshold"]:
            a = chain(program["true"], a, w)
        else:
            a = chain(program["false"], a, w)
    else:
        for _ in range(program["trips"]):
            a = chain(program["body"], a, w)
    return (a * a).sum()


def run_eager(program, lib):
    x_value, w_value = data(program)
    x = lib.tensor(x_value, requires_grad=True, dtype=lib.float64)
    w = lib.tensor(w_value, requires_grad=True, dtype=lib.float64)
    loss = eager(program, x, w, lib)
    loss.backward()
    grads = [
        np.zeros_like(v) if t.grad is None else t.grad.numpy()
        for t, v in ((x, x_value), (w, w_value))
    ]
    return float(loss.item()), grads


@float64_default()  # compared at float64 precision: placeholders in float64 too
def run_static(program):
    x_value, w_value = data(program)
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=tuple(None for _ in program["shape"]))
        w = ns.placeholder("w", shape=program["shape"])
        trips = ns.placeholder("trips", shape=(), dtype=np.int64)
        a = chain(program["before"], x, w)
        if program["kind"] == "branch":
            a = ns.cond(
                a.sum() > program["threshold"],
                lambda: chain(program["true"], a, w),
                lambda: chain(program["false"], a, w),
            )
        else:
            _, a = ns.while_loop(
                lambda i, v: i < trips, lambda i, v: (i + 1, chain(program["body"], v, w)), [0, a]
            )
        loss = ns.sum(a * a)
        grads = ns.gradients(loss, [x, w])
    inputs = [x, w] + ([trips] if program["kind"] == "loop" else [])
    f = g.compile(inputs, [loss, *(d for d in grads if d is not None)], optimize=False)
    feeds = [x_value, w_value] + ([np.array(program["trips"])] if program["kind"] == "loop" else [])
    loss_value, *found = f(*feeds)
    # ns.gradients gives None for an input the loss does not depend on (as TF1): zeros here
    grad_values = [np.zeros_like(v) if d is None else found.pop(0) for d, v in zip(grads, feeds)]
    return float(loss_value), grad_values


def assert_agree(got, want, label):
    assert_close(np.asarray(got[0]), np.asarray(want[0]), f"{label}: loss")
    for name, a, b in zip(("x", "w"), got[1], want[1]):
        assert_close(np.asarray(a), np.asarray(b), f"{label}: grad {name}")


@FUZZ
@given(program=st.one_of(branch_programs(), loop_programs()))
def test_fuzz_static_control_flow_matches_python_control_flow_in_dynamic_mode(program):
    assert_agree(run_static(program), run_eager(program, ng), "static vs dynamic")


@FUZZ
@given(program=st.one_of(branch_programs(), loop_programs()))
def test_fuzz_control_flow_matches_torch(program):
    torch = pytest.importorskip("torch")
    want = run_eager(program, torch)
    assert_agree(run_eager(program, ng), want, "dynamic vs torch")
    assert_agree(run_static(program), want, "static vs torch")
