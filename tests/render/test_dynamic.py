"""DOT structure of dynamic-mode drawings: styles, names, AccumulateGrad, freed parts."""

from __future__ import annotations

import re

import pytest
from drawings import parse_dot, reference_example

import naivegraph as ng
from naivegraph.render import render

LEAVES = {"w1", "w2", "w3"}


@pytest.mark.parametrize("kind", ["forward", "backward", "both"])
def test_every_leaf_and_only_leaves_carry_the_leaf_style(reference, kind):
    dot = parse_dot(render(reference["loss"], kind=kind, params=reference).source)
    leaf_titles = {n.title for n in dot.with_class("leaf")}
    assert leaf_titles == LEAVES
    # every tensor node titled like a leaf is styled as one (both clusters in "both")
    for name in LEAVES:
        assert all("leaf" in n.classes for n in dot.by_title(name))
    for n in dot.nodes.values():
        if n.title in {"input", "l1", "l2", "l3", "l4", "loss"}:
            assert "leaf" not in n.classes


def test_tensors_that_do_not_require_grad_are_grey_and_the_output_is_marked(reference):
    dot = parse_dot(render(reference["loss"], params=reference).source)
    assert [n.title for n in dot.with_class("nograd")] == ["input"]
    assert [n.title for n in dot.with_class("output")] == ["loss"]
    assert [n.title for n in dot.with_class("op")].count("mul") == 3


def test_forward_view_has_data_and_op_nodes_in_data_direction(reference):
    dot = parse_dot(render(reference["loss"], params=reference).source)
    (l1,) = dot.by_title("l1")
    ops_after_l1 = {dot.nodes[s].title for s in dot.successors(l1.id)}
    assert ops_after_l1 == {"add", "mul"}  # l1 feeds l2 = l1 + w2 and l3 = l1 * w3
    (mean,) = dot.by_title("mean")
    assert [dot.nodes[s].title for s in dot.successors(mean.id)] == ["loss"]


def test_accumulate_grad_nodes_point_at_their_leaves(reference):
    dot = parse_dot(render(reference["loss"], kind="backward", params=reference).source)
    accumulators = dot.with_class("accumulate")
    assert len(accumulators) == 3
    targets = set()
    for acc in accumulators:
        assert acc.title == "AccumulateGrad"
        (target,) = dot.successors(acc.id)
        assert "leaf" in dot.nodes[target].classes
        assert f"into {dot.nodes[target].title}.grad" in acc.text
        targets.add(dot.nodes[target].title)
    assert targets == LEAVES


def test_backward_view_uses_pytorch_names_and_gradient_direction(reference):
    dot = parse_dot(render(reference["loss"], kind="backward", params=reference).source)
    names = sorted(n.title for n in dot.with_class("grad_fn"))
    assert names == [
        "AddBackward0",
        "MeanBackward0",
        "MulBackward0",
        "MulBackward0",
        "MulBackward0",
    ]
    (loss,) = dot.by_title("loss")
    (first,) = dot.successors(loss.id)
    assert dot.nodes[first].title == "MeanBackward0"
    assert all(
        attrs["color"] == "#c62828"
        for a, b, attrs in dot.edges
        if "saved" not in dot.nodes[a].classes
    )


def test_saved_tensors_are_dashed_and_named(reference):
    dot = parse_dot(render(reference["loss"], kind="backward", params=reference).source)
    saved = dot.with_class("saved")
    # three MulBackward0; as torch, each keeps only what a needed gradient reads:
    # input * w1 keeps input (for d/dw1) but not w1 (input needs no gradient)
    assert len(saved) == 5
    assert all("dashed" in n.attrs["style"] for n in saved)
    texts = "\n".join(n.text for n in saved)
    for name in ("l2", "l3", "l1", "w3", "input"):
        assert f"= {name}" in texts
    assert "= w1" not in texts
    saved_edges = [attrs for a, b, attrs in dot.edges if "saved" in dot.nodes[a].classes]
    assert saved_edges and all(e["style"] == "dashed" for e in saved_edges)


def test_names_from_params_appear_and_override_variable_names(reference):
    params = {"weight_one": reference["w1"], "hidden": reference["l1"]}
    dot = parse_dot(render(reference["loss"], params=params).source)
    titles = {n.title for n in dot.nodes.values()}
    assert {"weight_one", "hidden"} <= titles
    assert "w1" not in titles and "l4" not in titles  # explicit params replace the guess


def test_names_default_to_the_callers_local_variables():
    a = ng.tensor(2.0, requires_grad=True)
    b = a.exp()
    dot = parse_dot(render(b).source)
    assert {n.title for n in dot.nodes.values()} == {"a", "b", "exp"}


def test_values_and_gradients_are_shown_small_and_hidden_on_request(reference):
    loss = reference["loss"]
    loss.backward()
    source = render(loss, params=reference).source
    assert "= 40" in source and "grad 28" in source and "grad 8" in source
    assert "= [[2, 2], [2, 2]]" in source  # l1: a tiny array is printed
    quiet = render(loss, params=reference, show_values=False).source
    assert "= 40" not in quiet and "grad 28" not in quiet


def test_after_backward_only_the_saved_values_are_drawn_freed(reference):
    # backward frees what the nodes saved; the grad_fn nodes and their links remain
    loss = reference["loss"]
    before = parse_dot(render(loss, kind="backward", params=reference).source)
    assert not before.with_class("freed")
    loss.backward()
    after = parse_dot(render(loss, kind="backward", params=reference).source)
    freed = after.with_class("freed")
    assert len(freed) == 5 and {n.title for n in freed} == {"saved input 0", "saved input 1"}
    assert all("saved" in n.classes and "dotted" in n.attrs["style"] for n in freed)
    texts = "\n".join(n.text for n in freed)
    for name in ("l2", "l3", "l1", "w3", "input"):  # still named, shape only, no value
        assert f"= {name}" in texts
    assert "value" not in texts and texts.count("freed by backward()") == 5
    grad_fns = after.with_class("grad_fn")
    assert len(grad_fns) == 5 and not any("freed" in n.classes for n in grad_fns)
    says_freed = sorted(n.title for n in grad_fns if "saved values freed" in n.text)
    assert says_freed == ["MulBackward0"] * 3  # AddBackward0 and MeanBackward0 saved nothing
    assert len(after.edges) == len(before.edges)  # every link is still there
    forward = parse_dot(render(loss, params=reference).source)
    assert not forward.with_class("freed")  # the forward graph lost nothing
    assert "saved value freed by backward()" in render(loss, kind="backward").source  # legend


def test_a_freed_custom_function_node_says_its_saved_values_are_gone():
    class Square(ng.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    x = ng.tensor(3.0, requires_grad=True)
    y = Square.apply(x)
    y.backward()
    dot = parse_dot(render(y, kind="backward", params={"x": x, "y": y}).source)
    (node,) = dot.by_title("SquareBackward")
    assert "saved values freed" in node.text and "freed" not in node.classes


def test_retain_graph_keeps_the_graph_unfreed(reference):
    reference["loss"].backward(retain_graph=True)
    dot = parse_dot(render(reference["loss"], kind="backward", params=reference).source)
    assert not dot.with_class("freed")
    assert len(dot.with_class("saved")) == 5  # input * w1 keeps input only, as torch


def test_ids_are_stable_in_traversal_order_and_not_object_ids():
    first = render(reference_example()["loss"], kind="both", params={}).source
    second = render(reference_example()["loss"], kind="both", params={}).source
    assert first == second  # different objects, same drawing
    ids = re.findall(r"^\s*(n\d+) \[", first, flags=re.M)
    assert ids == [f"n{i}" for i in range(len(ids))]
    assert "n0 [label=<<b>loss" not in first  # no names given: params={} means none
    assert parse_dot(first).nodes["n0"].attrs["class"] == "output"


def test_both_kinds_in_two_clusters_with_a_legend(reference):
    source = render(reference["loss"], kind="both", params=reference).source
    for cluster in ("cluster_forward", "cluster_backward", "cluster_legend"):
        assert f"subgraph {cluster}" in source
    assert "legend" not in render(reference["loss"], legend=False).source


def test_several_outputs_share_one_drawing(reference):
    dot = parse_dot(render([reference["l2"], reference["l3"]], params=reference).source)
    assert {n.title for n in dot.with_class("output")} == {"l2", "l3"}
    assert len(dot.by_title("l1")) == 1  # shared input drawn once


def test_constants_and_dead_intermediates_are_drawn():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = ((x * 3.0) + 1.0).sum()  # x * 3.0 is never bound to a name: it is no longer alive
    dot = parse_dot(render(y, params={"x": x, "y": y}).source)
    constants = [n for n in dot.nodes.values() if "constant" in n.text]
    assert sorted(n.title for n in constants) == ["1", "3"]
    assert all("nograd" in n.classes for n in constants)
    assert any("(2,)" in n.text for n in dot.with_class("tensor"))


def test_custom_function_and_leaf_output():
    class Square(ng.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    x = ng.tensor(3.0, requires_grad=True)
    y = Square.apply(x)
    dot = parse_dot(render(y, kind="both", params={"x": x, "y": y}).source)
    assert {n.title for n in dot.with_class("leaf")} == {"x"}
    assert any("Square" in n.title for n in dot.nodes.values())
    leaf_only = parse_dot(render(x, kind="forward").source)
    assert [n.attrs["class"] for n in leaf_only.nodes.values()] == ["leaf"]


def test_bad_kind_is_a_clear_error(reference):
    with pytest.raises(ValueError, match="kind must be"):
        render(reference["loss"], kind="sideways")
    with pytest.raises(TypeError, match="item 1 of the list is int 3"):
        render([reference["loss"], 3])


def test_ng_render_is_the_same_function_before_and_after_importing_the_package(reference):
    import naivegraph.render  # noqa: F401  (binds the package to ng.render)

    assert "MeanBackward0" in ng.render(reference["loss"], kind="backward").source


def _operands_into(dot, title: str) -> dict[str, str]:
    """For the node titled ``title``: input title -> operand label of its edge."""
    (node,) = dot.by_title(title)
    return {dot.nodes[a].title: attrs.get("label") for a, b, attrs in dot.edges if b == node.id}


def test_edges_into_an_op_whose_operand_order_matters_are_labelled_by_position():
    a = ng.tensor([1.0, 2.0], requires_grad=True)
    b = ng.tensor([3.0, 4.0], requires_grad=True)
    diff = a - b
    total = a + b
    forward = render(diff, kind="forward", params={"a": a, "b": b})
    assert _operands_into(parse_dot(forward.source), "sub") == {"a": "0", "b": "1"}
    assert "operand position" in forward.source  # and the legend says what the labels mean
    plain = render(total, kind="forward", params={"a": a, "b": b})
    assert _operands_into(parse_dot(plain.source), "add") == {"a": None, "b": None}
    assert "operand position" not in plain.source


def test_backward_edges_name_the_input_each_gradient_is_for():
    a = ng.tensor(2.0, requires_grad=True)
    b = ng.tensor(3.0, requires_grad=True)
    dot = parse_dot(render(a / b, kind="backward", params={"a": a, "b": b}).source)
    (div,) = dot.by_title("DivBackward0")
    labels = sorted(attrs.get("label") for s, t, attrs in dot.edges if s == div.id)
    assert labels == ["0", "1"]


def test_the_same_tensor_on_both_sides_of_a_subtraction_draws_two_edges():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    dot = parse_dot(render(x - x, kind="forward", params={"x": x}).source)
    (sub,) = dot.by_title("sub")
    assert sorted(attrs.get("label") for _, b, attrs in dot.edges if b == sub.id) == ["0", "1"]
