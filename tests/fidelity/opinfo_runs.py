"""One OpInfo sample run three ways: torch (the reference), naivegraph's dynamic mode and
its static mode, each giving the same :class:`Results` (as numpy arrays) so that
``test_opinfo.py`` compares them part by part.

The parts: ``values`` (every output), ``vjp`` (gradients of the float inputs for a random
cotangent of the float outputs), ``vjp2`` (the gradient of ``sum(vjp * w)`` for random
weights ``w``, with respect to the inputs and then the cotangents) and ``jvp`` (the
tangents of the float outputs for random tangents of the float inputs).  A gradient that
is ``None`` (no dependence) reads as zeros.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from opinfo_cases import (
    Randoms,
    Spec,
    batched,
    call,
    convert,
    float_leaves,
    numpy_of,
    opinfo_of,
    outputs_of,
    torch_module,
)

import naivegraph as ng
import naivegraph.static as ns


@dataclass
class Results:
    values: list = field(default_factory=list)
    vjp: list = field(default_factory=list)
    vjp2: list = field(default_factory=list)
    jvp: list = field(default_factory=list)


@dataclass
class Draws:
    """The random cotangents (one per float output), weights and tangents (one per float
    input) shared by torch and naivegraph."""

    cotangents: list
    weights: list
    tangents: list


def _zeros_for(grads: list, shapes: list) -> list:
    return [np.zeros(shape) if g is None else g for g, shape in zip(grads, shapes)]


# -- torch -------------------------------------------------------------------------------


def reference(spec: Spec, sample, parts: set[str], seed: int) -> tuple[Results, Draws]:
    torch = torch_module()
    info = opinfo_of(spec)
    leaves = float_leaves(sample)
    outs = outputs_of(info(sample.input, *sample.args, **sample.kwargs))
    diff = [o for o in outs if isinstance(o, torch.Tensor) and o.requires_grad]
    randoms = Randoms(seed)
    draws = Draws(
        [randoms.like(tuple(o.shape)).astype(numpy_of(o).dtype) for o in diff],
        [randoms.like(tuple(t.shape)) for t in leaves],
        [randoms.like(tuple(t.shape)) for t in leaves],
    )
    results = Results(values=[numpy_of(o) for o in outs])
    leaf_shapes = [tuple(t.shape) for t in leaves]
    if ({"vjp", "vjp2"} & parts) and diff and leaves:
        cots = [torch.tensor(c, requires_grad=True) for c in draws.cotangents]
        grads = torch.autograd.grad(diff, leaves, cots, allow_unused=True, create_graph=True)
        results.vjp = _zeros_for([None if g is None else numpy_of(g) for g in grads], leaf_shapes)
        if "vjp2" in parts:
            total = sum(
                (g * torch.tensor(w)).sum() for g, w in zip(grads, draws.weights) if g is not None
            )
            second = [None] * (len(leaves) + len(cots))  # no dependence: all zeros
            if isinstance(total, torch.Tensor) and total.requires_grad:
                second = torch.autograd.grad(total, [*leaves, *cots], allow_unused=True)
            shapes = leaf_shapes + [tuple(c.shape) for c in cots]
            results.vjp2 = _zeros_for([None if g is None else numpy_of(g) for g in second], shapes)
    if "jvp" in parts and leaves:
        import torch.autograd.forward_ad as fwad

        tangents = {id(t): torch.tensor(d) for t, d in zip(leaves, draws.tangents)}
        with fwad.dual_level():

            def dual(t):
                if id(t) in tangents:
                    return fwad.make_dual(t.detach(), tangents[id(t)])
                return t.detach()

            args = convert([sample.input, list(sample.args), sample.kwargs], dual, torch_side=True)
            outs = outputs_of(info(args[0], *args[1], **args[2]))
            for o in outs:
                if isinstance(o, torch.Tensor) and o.is_floating_point():
                    tangent = fwad.unpack_dual(o).tangent
                    results.jvp.append(
                        np.zeros(tuple(o.shape)) if tangent is None else numpy_of(tangent)
                    )
    return results, draws


# -- naivegraph, dynamic mode ---------------------------------------------------------------


def dynamic(spec: Spec, sample, parts: set[str], draws: Draws) -> Results:
    leaves = float_leaves(sample)
    results = Results()
    if {"values", "vjp", "vjp2"} & parts:
        made: dict[int, ng.Tensor] = {}

        def leaf(t):
            float_leaf = t.requires_grad and t.is_floating_point()
            made[id(t)] = ng.tensor(numpy_of(t), requires_grad=float_leaf)
            return made[id(t)]

        args = convert([sample.input, list(sample.args), sample.kwargs], leaf)
        outs = outputs_of(call(spec, ng, spec.dynamic, args))
        results.values = [o.detach().numpy() for o in outs]
        diff = [o for o in outs if o.requires_grad]
        ng_leaves = [made[id(t)] for t in leaves]
        leaf_shapes = [tuple(t.shape) for t in leaves]
        if ({"vjp", "vjp2"} & parts) and diff and ng_leaves:
            cots = [ng.tensor(c, requires_grad=True) for c in draws.cotangents]
            grads = ng.autograd.grad(diff, ng_leaves, cots, allow_unused=True, create_graph=True)
            results.vjp = _zeros_for(
                [None if g is None else g.detach().numpy() for g in grads], leaf_shapes
            )
            if "vjp2" in parts:
                total = sum(
                    (g * ng.tensor(w)).sum() for g, w in zip(grads, draws.weights) if g is not None
                )
                second = [None] * (len(ng_leaves) + len(cots))  # no dependence: all zeros
                if isinstance(total, ng.Tensor) and total.requires_grad:
                    second = ng.autograd.grad(total, [*ng_leaves, *cots], allow_unused=True)
                shapes = leaf_shapes + [tuple(c.shape) for c in cots]
                results.vjp2 = _zeros_for(
                    [None if g is None else g.detach().numpy() for g in second], shapes
                )
    if "jvp" in parts and leaves:
        import naivegraph.autograd.forward_ad as fwad

        tangents = {id(t): ng.tensor(d) for t, d in zip(leaves, draws.tangents)}
        with fwad.dual_level():

            def dual(t):
                primal = ng.tensor(numpy_of(t))
                return fwad.make_dual(primal, tangents[id(t)]) if id(t) in tangents else primal

            args = convert([sample.input, list(sample.args), sample.kwargs], dual)
            outs = outputs_of(call(spec, ng, spec.dynamic, args))
            for o in outs:
                if o.dtype.kind == "f":
                    tangent = fwad.unpack_dual(o).tangent
                    results.jvp.append(
                        np.zeros(tuple(o.shape)) if tangent is None else tangent.numpy().copy()
                    )
    return results


# -- naivegraph, static mode ------------------------------------------------------------------


def static(
    spec: Spec, sample, parts: set[str], draws: Draws, expected: Results, batch: bool = False
) -> Results:
    """The op built once from placeholders (the sample's input with an unknown first
    dimension if ``batch``), its gradients by ``ns.gradients`` and ``ns.jvp``, all run by
    one compiled function."""
    assert spec.static is not None
    leaves = float_leaves(sample)
    feeds: dict = {}
    made: dict[int, ns.Node] = {}

    def placeholder(t, shape):
        node = ns.placeholder(f"in{len(feeds)}", shape=shape, dtype=numpy_of(t).dtype)
        feeds[node] = numpy_of(t)
        made[id(t)] = node
        return node

    def leaf(t):
        if id(t) in made:
            return made[id(t)]
        if spec.known_indices and not t.is_floating_point():
            return numpy_of(t)
        shape = tuple(t.shape)
        if batch and any(t is u for u in unknown_first):
            shape = (None, *shape[1:])
        return placeholder(t, shape)

    unknown_first = batched(sample) if batch else []
    fetched: list = []  # (part, position, node or None, shape of a None's zeros)
    with ns.Graph() as graph:
        args = convert([sample.input, list(sample.args), sample.kwargs], leaf)
        outs = outputs_of(call(spec, ns, spec.static, args))
        fetched += [("values", i, o, None) for i, o in enumerate(outs)]
        diff = [o for o, v in zip(outs, expected.values) if v.dtype.kind == "f"]
        xs = [made[id(t)] for t in leaves]
        shapes = [tuple(t.shape) for t in leaves]
        if expected.vjp and ({"vjp", "vjp2"} & parts):
            diff = diff[: len(draws.cotangents)]
            cots = [
                _fed(feeds, f"cot{i}", c, o.shape if batch else c.shape)
                for i, (o, c) in enumerate(zip(diff, draws.cotangents))
            ]
            grads = ns.gradients(diff, xs, grad_ys=cots)
            fetched += [("vjp", i, g, s) for i, (g, s) in enumerate(zip(grads, shapes))]
            if "vjp2" in parts and expected.vjp2:
                weights = [_fed(feeds, f"w{i}", w, w.shape) for i, w in enumerate(draws.weights)]
                terms = [ns.sum(g * w) for g, w in zip(grads, weights) if g is not None]
                second = [None] * (len(xs) + len(cots))  # no dependence: all zeros
                if terms:
                    total = terms[0]
                    for term in terms[1:]:
                        total = total + term
                    second = ns.gradients(total, [*xs, *cots])
                shapes2 = shapes + [c.shape for c in draws.cotangents]
                fetched += [("vjp2", i, g, s) for i, (g, s) in enumerate(zip(second, shapes2))]
        if "jvp" in parts and expected.jvp and xs:
            tangents = [_fed(feeds, f"t{i}", t, t.shape) for i, t in enumerate(draws.tangents)]
            float_outs = [o for o, v in zip(outs, expected.values) if v.dtype.kind == "f"]
            jvps = ns.jvp(float_outs, xs, tangents)
            fetched += [("jvp", i, j, None) for i, j in enumerate(jvps)]
    nodes = [node for _, _, node, _ in fetched if node is not None]
    run = graph.compile(list(feeds), nodes)
    values = iter(run(*feeds.values()))
    results = Results()
    for part, _, node, shape in fetched:
        getattr(results, part).append(np.zeros(shape) if node is None else next(values))
    return results


def _fed(feeds: dict, name: str, value: np.ndarray, shape) -> ns.Node:
    node = ns.placeholder(name, shape=None if shape is None else tuple(shape), dtype=np.float64)
    feeds[node] = value
    return node
