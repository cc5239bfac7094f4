"""The lab's running example, written once and built in either mode.

    l1 = input * w1;  l2 = l1 + w2;  l3 = l1 * w3;  l4 = l2 * l3;  loss = mean(l4)

with input = ones(2, 2), w1 = 2, w2 = 3, w3 = 4: loss 40, gradients 28 / 8 / 10.

>>> env = reference_dynamic()
>>> env["loss"]
tensor(40., grad_fn=<MeanBackward0>)
>>> graph, loss, nodes = reference_static()
>>> loss.value is None
True
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import static as ns
from .dynamic.factories import ones, tensor

Step = tuple[str, str, Callable[[dict], Any]]  # (name, formula shown, function of env)

#: The forward steps, as functions of the values built so far (tensors or nodes).
REFERENCE_STEPS: list[Step] = [
    ("l1", "l1 = input * w1", lambda e: e["input"] * e["w1"]),
    ("l2", "l2 = l1 + w2", lambda e: e["l1"] + e["w2"]),
    ("l3", "l3 = l1 * w3", lambda e: e["l1"] * e["w3"]),
    ("l4", "l4 = l2 * l3", lambda e: e["l2"] * e["l3"]),
    ("loss", "loss = l4.mean()", lambda e: e["l4"].mean()),
]

#: The weights of the example, as in the reference notes.
REFERENCE_WEIGHTS = {"w1": 2.0, "w2": 3.0, "w3": 4.0}


def run_steps(env: dict, steps: list[Step] = REFERENCE_STEPS) -> dict:
    """Apply ``steps`` in order, adding each result to ``env`` under its name."""
    for name, _, step in steps:
        env[name] = step(env)
    return env


def reference_leaves(input: np.ndarray | None = None) -> dict:
    """The dynamic-mode leaves: ``input`` (no gradient) and the weights w1..w3."""
    leaves = {"input": ones([2, 2]) if input is None else tensor(input)}
    leaves.update(
        {name: tensor(value, requires_grad=True) for name, value in REFERENCE_WEIGHTS.items()}
    )
    return leaves


def reference_dynamic(input: np.ndarray | None = None) -> dict:
    """Every tensor of the example in dynamic mode (computed as it is built)."""
    return run_steps(reference_leaves(input))


def reference_static(name: str = "static_reference") -> tuple[Any, Any, dict]:
    """The example built (not run) as a static graph: ``(graph, loss, nodes)``."""
    graph = ns.Graph(name=name)
    with graph:
        env = {"input": ns.placeholder("input", shape=(2, 2))}
        env.update({n: ns.Variable(v, name=n) for n, v in REFERENCE_WEIGHTS.items()})
        run_steps(env)
    return graph, env["loss"], env
