"""``render(..., gradients=True)``: every backward node labelled with the gradient
arriving at it, computed without touching any ``.grad`` or freeing the graph."""

from __future__ import annotations

import re

import numpy as np
import pytest
from drawings import parse_dot, reference_example

import naivegraph as ng
from naivegraph.examples import reference_static
from naivegraph.render import render
from naivegraph.render.dynamic import arriving_gradients

GRADIENT = re.compile(r"∂[^<]*")


def gradient_labels(source: str) -> dict[str, list[str]]:
    """Node title -> the gradient lines of the nodes with that title, in drawing order."""
    labels: dict[str, list[str]] = {}
    for node in parse_dot(source).nodes.values():
        for line in node.text.split("\n")[1:]:
            if line.startswith("∂"):
                labels.setdefault(node.title, []).append(line)
    return labels


def test_reference_example_nodes_carry_the_gradients_of_the_notes(reference):
    labels = gradient_labels(render(reference["loss"], gradients=True, params=reference).source)
    assert labels["MeanBackward0"] == ["∂loss/∂loss = 1"]
    assert labels["AddBackward0"] == ["∂loss/∂l2 = [[2, 2], [2, 2]]"]
    assert sorted(labels["MulBackward0"]) == [
        "∂loss/∂l1 = [[7, 7], [7, 7]]",
        "∂loss/∂l3 = [[1.25, 1.25], [1.25, 1.25]]",
        "∂loss/∂l4 = [[0.25, 0.25], [0.25, 0.25]]",
    ]
    assert sorted(labels["AccumulateGrad"]) == ["∂loss/∂w1 = 28", "∂loss/∂w2 = 8", "∂loss/∂w3 = 10"]


def test_each_accumulate_grad_label_names_the_leaf_it_feeds(reference):
    dot = parse_dot(render(reference["loss"], gradients=True, params=reference).source)
    for acc in dot.with_class("accumulate"):
        (leaf,) = dot.successors(acc.id)
        name = dot.nodes[leaf].title
        assert f"into {name}.grad" in acc.text and f"∂loss/∂{name} = " in acc.text


def test_labels_match_torch_pre_hooks_on_the_same_graph(reference):
    # Mirrors torch.autograd.graph.Node.register_prehook on the reference example.
    torch = pytest.importorskip("torch")
    w = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in
         {"w1": 2.0, "w2": 3.0, "w3": 4.0}.items()}  # fmt: skip
    l1 = torch.ones(2, 2, dtype=torch.float64) * w["w1"]
    l2, l3 = l1 + w["w2"], l1 * w["w3"]
    l4 = l2 * l3
    loss = l4.mean()
    seen = {}

    def keep(name):
        def hook(grads):
            seen[name] = grads[0].clone()

        return hook

    for name, t in {"loss": loss, "l1": l1, "l2": l2, "l3": l3, "l4": l4}.items():
        t.grad_fn.register_prehook(keep(name))
    loss.backward()
    found = arriving_gradients([reference["loss"]])
    for name in ("loss", "l1", "l2", "l3", "l4"):
        (ours,) = found[id(reference[name].grad_fn)]
        np.testing.assert_array_equal(ours, seen[name].numpy())
    for name, leaf in w.items():
        (ours,) = found[id(reference[name]._accumulator())]
        np.testing.assert_array_equal(ours, leaf.grad.numpy())


def test_drawing_the_gradients_changes_no_grad_and_keeps_the_graph(reference):
    loss = reference["loss"]
    reference["l1"].retain_grad()
    render(loss, gradients=True, params=reference)
    for name in ("w1", "w2", "w3"):
        assert reference[name].grad is None
    assert reference["l1"].grad is None  # retain_grad tensors are not written either
    nodes = [loss.grad_fn] + [fn for fn, _ in loss.grad_fn.next_functions]
    assert all(not fn.freed for fn in nodes)
    loss.backward()  # the graph is intact: one backward works and gives the notes' values
    assert [reference[n].grad.item() for n in ("w1", "w2", "w3")] == [28.0, 8.0, 10.0]
    np.testing.assert_array_equal(reference["l1"].grad.numpy(), np.full((2, 2), 7.0))


def test_drawing_after_a_retained_backward_does_not_add_to_grad(reference):
    loss = reference["loss"]
    loss.backward(retain_graph=True)
    labels = gradient_labels(render(loss, gradients=True, params=reference).source)
    assert "∂loss/∂w1 = 28" in labels["AccumulateGrad"]
    assert reference["w1"].grad.item() == 28.0  # not 56
    loss.backward()
    assert reference["w1"].grad.item() == 56.0


def test_the_temporary_hooks_are_gone_afterwards(reference):
    loss = reference["loss"]
    fired = []
    handle = reference["l4"].grad_fn.register_prehook(lambda g: fired.append(1))
    render(loss, gradients=True, params=reference)
    assert fired == [1]  # a hook the graph already had runs, as in any backward pass
    handle.remove()
    render(loss, gradients=True, params=reference)
    assert fired == [1]
    assert loss.grad_fn._hooks is None  # nodes without hooks before have none after
    assert reference["l4"].grad_fn._hooks.pre == {}  # the learner's (removed) slot kept


def test_a_hook_that_changes_a_gradient_shows_in_the_labels(reference):
    reference["l1"].register_hook(lambda g: g * 2)
    labels = gradient_labels(render(reference["loss"], gradients=True, params=reference).source)
    assert "∂loss/∂l1 = [[14, 14], [14, 14]]" in labels["MulBackward0"]
    assert "∂loss/∂w1 = 56" in labels["AccumulateGrad"]  # what backward would accumulate


def test_gradients_implies_the_backward_view_and_labels_only_it_in_both(reference):
    source = render(reference["loss"], gradients=True, params=reference).source
    assert "cluster_forward" not in source and "MeanBackward0" in source
    both = render(reference["loss"], kind="both", gradients=True, params=reference).source
    forward_part = both.split("subgraph cluster_backward")[0]
    assert not GRADIENT.search(forward_part)
    assert len(GRADIENT.findall(both)) == 8 + 1  # 5 grad_fn, 3 AccumulateGrad, the legend


def test_the_legend_explains_the_gradient_lines(reference):
    source = render(reference["loss"], gradients=True, params=reference).source
    assert "gradient of loss arriving at the node" in source
    assert "arriving" not in render(reference["loss"], kind="backward").source


def test_without_gradients_the_drawing_is_unchanged(reference):
    plain = render(reference["loss"], kind="backward", params=reference).source
    assert not GRADIENT.search(plain)
    assert plain == render(reference["loss"], kind="backward", params=reference).source


def test_large_gradients_print_their_shape_and_a_summary():
    x = ng.ones(3, 4, requires_grad=True)
    y = (x * 2.0).sum()
    labels = gradient_labels(render(y, gradients=True, params={"x": x, "y": y}).source)
    assert labels["MulBackward0"] == ["∂y/∂out: (3, 4) all 1"]  # x * 2.0 has no name
    assert labels["AccumulateGrad"] == ["∂y/∂x: (3, 4) all 2"]
    z = ng.arange(6.0).reshape(2, 3).requires_grad_()
    s = (z * z).sum()
    labels = gradient_labels(render(s, gradients=True, params={"z": z, "s": s}).source)
    assert labels["AccumulateGrad"] == ["∂s/∂z: (2, 3) in [0, 10]"]


def test_an_unnamed_output_is_called_root():
    a = ng.tensor(3.0, requires_grad=True)
    labels = gradient_labels(render(a * a, gradients=True, params={"a": a}).source)
    assert labels == {"MulBackward0": ["∂root/∂root = 1"], "AccumulateGrad": ["∂root/∂a = 6"]}


def test_a_non_scalar_output_needs_the_gradient_to_start_from(reference):
    l4 = reference["l4"]
    with pytest.raises(RuntimeError, match="implicitly created only for scalar outputs.*l4"):
        render(l4, gradients=True)
    start = ng.full((2, 2), 0.25)
    labels = gradient_labels(render(l4, gradients=start, params=reference).source)
    assert "∂l4/∂l1 = [[7, 7], [7, 7]]" in labels["MulBackward0"]
    assert "∂l4/∂w1 = 28" in labels["AccumulateGrad"]
    as_list = gradient_labels(render([l4], gradients=[start], params=reference).source)
    assert as_list == labels
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        render(l4, gradients=ng.ones(3))
    assert reference["w1"].grad is None


def test_several_outputs_share_one_pass(reference):
    outputs = [reference["l2"], reference["l3"]]
    seeds = [ng.ones(2, 2), ng.ones(2, 2)]
    labels = gradient_labels(render(outputs, gradients=seeds, params=reference).source)
    assert "∂Σ outputs/∂l1 = [[5, 5], [5, 5]]" in labels["MulBackward0"]  # 1 + w3
    with pytest.raises(ValueError, match="2 gradients for 1 outputs"):
        render(reference["l2"], gradients=seeds)


def test_a_freed_graph_is_a_clear_error_and_changes_nothing(reference):
    loss = reference["loss"]
    loss.backward()
    with pytest.raises(RuntimeError, match="already freed by backward.*retain_graph=True"):
        render(loss, gradients=True, params=reference)
    assert reference["w1"].grad.item() == 28.0
    assert loss.grad_fn._hooks is None


def test_a_freed_graph_that_saved_nothing_can_still_be_labelled():
    # as torch: add and sum keep no values, so a second pass through them works
    a = ng.tensor([1.0, 2.0], requires_grad=True)
    y = (a + 1.0).sum()
    y.backward()
    labels = gradient_labels(render(y, gradients=True, params={"a": a, "y": y}).source)
    assert labels["AccumulateGrad"] == ["∂y/∂a = [1, 1]"]
    assert a.grad.tolist() == [1.0, 1.0]


def test_bad_gradients_options_are_clear_errors(reference):
    loss = reference["loss"]
    with pytest.raises(ValueError, match="kind='backward' or kind='both'"):
        render(loss, kind="forward", gradients=True)
    with pytest.raises(TypeError, match="gradients must be True, False, or the gradient"):
        render(loss, gradients="yes")
    with pytest.raises(TypeError, match="gradients must be True, False, or the gradient"):
        render(loss, gradients=1)
    with pytest.raises(ValueError, match="nothing given has one"):
        render(reference["input"], gradients=True)
    with pytest.raises(ValueError, match="needs outputs that require grad, but output 1"):
        render([loss, reference["input"]], kind="both", gradients=True)
    graph, _, _ = reference_static()
    with pytest.raises(ValueError, match="ns.gradients"):
        render(graph, gradients=True)
    assert all(reference[n].grad is None for n in ("w1", "w2", "w3"))


def test_the_reference_drawings_are_the_same_from_one_example_to_the_next():
    first = render(reference_example()["loss"], gradients=True, params={}).source
    second = render(reference_example()["loss"], gradients=True, params={}).source
    assert first == second
