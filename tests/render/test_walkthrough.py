"""ng.walkthrough and ns.walkthrough: the steps' text and numbers, and that building one
changes nothing the user owns.  The page itself is tested in tests/browser/."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from drawings import payload
from drawings import reference_float64 as reference

import naivegraph as ng
import naivegraph.static as ns


def params(env: dict) -> dict:
    return {k: v for k, v in env.items() if k != "loss"} | {"loss": env["loss"]}


def step_with(walkthrough, *phrases: str):
    found = [s for s in walkthrough.steps if all(p in s.text for p in phrases)]
    assert len(found) == 1, [s.title for s in found]
    return found[0]


def state(env: dict) -> list:
    """What a walkthrough must not change: values, grads, versions, freed nodes."""
    out = []
    for name, t in env.items():
        grad = None if t._grad is None else t._grad._data.tolist()
        freed = None if t.grad_fn is None else t.grad_fn.freed
        out.append((name, t._data.tolist(), grad, t._version, t.grad_fn, freed))
    return out


# ----------------------------------------------------------------------------- dynamic
def test_the_reference_example_steps_forward_then_backward_then_freeing():
    env = reference(backward=False)
    walk = ng.walkthrough(env["loss"], params=params(env))
    titles = [s.title for s in walk.steps]
    assert titles[:5] == [
        "forward 1/5: l1 = mul(input, w1)",
        "forward 2/5: l2 = add(l1, w2)",
        "forward 3/5: l3 = mul(l1, w3)",
        "forward 4/5: l4 = mul(l2, l3)",
        "forward 5/5: loss = mean(l4)",
    ]
    assert titles[5] == "backward 1/8: MeanBackward0 runs (the backward of loss = mean(l4))"
    assert titles[-1] == "after backward(): what it frees"
    assert len(walk) == 14


def test_the_gradient_of_l1_is_the_sum_over_its_two_consumers_written_out():
    env = reference(backward=False)
    walk = ng.walkthrough(env["loss"], params=params(env))
    step = step_with(walk, "MulBackward0 runs (the backward of l1 = mul(input, w1))")
    assert step.lines[:4] == [
        "∂loss/∂l1: l1 is used 2 times, so its consumers' gradients add up:",
        "   [[5, 5], [5, 5]]   from MulBackward0 (l3)",
        " + [[2, 2], [2, 2]]   from AddBackward0 (l2)",
        " = [[7, 7], [7, 7]]",
    ]
    assert "uses its saved input 0 (input) = [[1, 1], [1, 1]]" in step.lines
    assert "  → input: no gradient (it does not require grad)" in step.lines
    assert "  → w1: ∂loss/∂w1 += 28   (summed over the broadcast: (2, 2) → ())" in step.lines


def test_28_accumulates_into_w1_grad():
    env = reference(backward=False)
    walk = ng.walkthrough(env["loss"], params=params(env))
    step = step_with(walk, "AccumulateGrad adds into w1.grad")
    assert step.lines[:2] == ["∂loss/∂w1 = 28", "w1.grad = 28"]
    assert "w3.grad = 10, w2.grad = 8, w1.grad = 28" in walk.steps[-1].text
    assert "retain_graph=True" in walk.steps[-1].text


def test_a_grad_already_there_is_shown_accumulating():
    env = reference(backward=False)
    env["w1"].grad = ng.tensor(1.0, dtype=ng.float64)
    walk = ng.walkthrough(env["loss"], params=params(env))
    step = step_with(walk, "AccumulateGrad adds into w1.grad")
    assert step.lines[1].startswith("w1.grad = 1 + 28 = 29   (backward() adds to what .grad")


def test_building_a_walkthrough_changes_none_of_the_users_objects():
    env = reference(backward=False)
    calls = []
    env["l1"].register_hook(lambda g: calls.append("l1"))
    env["w2"].register_hook(lambda g: calls.append("w2"))
    env["loss"].grad_fn.register_prehook(lambda g: calls.append("prehook"))
    env["l2"].retain_grad()
    before = state(env)
    walk = ng.walkthrough(env["loss"], params=params(env))
    assert state(env) == before and calls == []
    assert env["l2"]._grad is None and env["w1"].grad is None
    hooked = step_with(walk, "l1 = mul(input, w1))", "backward")
    assert "a hook registered with l1.register_hook(...) would run now on ∂loss/∂l1" in hooked.text
    assert "(the walkthrough runs no hook: it changes nothing)" in hooked.lines
    assert "w2.register_hook(...) would run now" in step_with(walk, "into w2.grad").text
    assert "l2.retain_grad(): backward() would keep" in step_with(walk, "of l2 = add").text
    assert "MeanBackward0 itself would run now" in walk.steps[5].text
    env["loss"].backward()  # the graph still works, with its hooks
    assert env["w1"].grad.item() == 28.0 and sorted(calls) == ["l1", "prehook", "w2"]


def test_made_after_backward_it_shows_what_is_left_and_how_to_keep_it():
    env = reference()
    walk = ng.walkthrough(env["loss"], params=params(env))
    assert len(walk) == 6  # the forward build, then one step
    last = walk.steps[-1]
    assert last.title == "backward() already ran on this graph and freed it"
    assert "w2.grad = 8, w3.grad = 10, w1.grad = 28" in last.text
    assert "call loss.backward(retain_graph=True)" in last.text
    assert last.freed  # the saved values are drawn freed
    assert not walk.reveal_labels


def test_forward_steps_follow_creation_order_not_the_graph_order():
    a = ng.tensor(1.0, requires_grad=True, dtype=ng.float64)
    late = a * 3.0  # created first, used last
    early = a.exp()
    out = early + late
    walk = ng.walkthrough(out, params={"a": a, "late": late, "early": early, "out": out})
    assert [s.title for s in walk.steps[:3]] == [
        "forward 1/3: late = mul(a, 3)",
        "forward 2/3: early = exp(a)",
        "forward 3/3: out = add(early, late)",
    ]
    assert late.grad_fn._seq < early.grad_fn._seq < out.grad_fn._seq


def test_forward_steps_show_what_exists_so_far():
    env = reference(backward=False)
    walk = ng.walkthrough(env["loss"], params=params(env))
    shown = [len(s.show) for s in walk.steps[:5]]
    assert shown == sorted(shown) and shown[0] < shown[-1]
    assert all(s.show is None for s in walk.steps[5:])
    assert walk.steps[-1].freed and set(walk.steps[-1].grads) == set(walk.steps[-2].grads)


def test_a_non_scalar_output_needs_the_gradient_to_start_from():
    x = ng.tensor([1.0, 2.0], requires_grad=True, dtype=ng.float64)
    y = x * x
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        ng.walkthrough(y)
    walk = ng.walkthrough(y, gradient=ng.tensor([1.0, 0.5], dtype=ng.float64))
    assert "x.grad = [2, 2]" in walk.steps[-2].text  # 2 * x * [1, 0.5]
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        ng.walkthrough(y, gradient=ng.ones(3))


def test_bad_outputs_are_refused_with_what_to_do():
    with pytest.raises(TypeError, match="one Tensor"):
        ng.walkthrough([ng.ones(2)])
    with pytest.raises(ValueError, match="no grad_fn"):
        ng.walkthrough(ng.ones(2))
    x = ng.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(201):
        y = y * 1.0
    with pytest.raises(ValueError, match="up to 200 ops"):
        ng.walkthrough(y)


def test_the_walkthrough_page_holds_every_step():
    env = reference(backward=False)
    walk = ng.walkthrough(env["loss"], params=params(env))
    bundle = walk._repr_mimebundle_()
    assert set(bundle) == {"text/html", "image/svg+xml", "text/plain"}
    data = payload(bundle["text/html"])
    assert len(data["steps"]) == 14 and data["revealLabels"] is True
    assert "step 1 of 14" in bundle["text/html"]
    for label in ("previous step", "next step", "zoom in", "zoom out", "reset"):
        assert f'aria-label="{label}"' in bundle["text/html"]
    names = set(data["nodes"])
    for step in data["steps"]:
        for key in ("active", "done", "freed", "grads"):
            assert set(step[key]) <= names
    assert walk.to_html().startswith("<!DOCTYPE html>")
    assert json.loads(json.dumps(walk.steps[0].as_data())) == data["steps"][0]
    assert str(walk).startswith("step 1 of 14: forward 1/5: l1 = mul(input, w1)")


# ----------------------------------------------------------------------------- static
def static_reference():
    with ns.Graph() as g:
        x = ns.placeholder("input", shape=(2, 2))
        w1 = ns.Variable(2.0, name="w1")
        w2 = ns.Variable(3.0, name="w2")
        w3 = ns.Variable(4.0, name="w3")
        l1 = x * w1
        loss = ns.mean((l1 + w2) * (l1 * w3))
    return g, x, (w1, w2, w3), l1, loss


def test_static_walkthrough_builds_runs_and_sweeps_the_reference_graph():
    g, x, (w1, w2, w3), l1, loss = static_reference()
    walk = ns.walkthrough(loss, {x: np.ones((2, 2))})
    titles = [s.title for s in walk.steps]
    assert titles[0] == "build 1/9: input = placeholder, shape (2, 2)"
    assert titles[4] == f"build 5/9: l1 = mul(input, w1)   (node {l1.name!r})"
    assert titles[9] == "run: the values flow through the graph built before"
    run = step_with(walk, "run step 1/5")
    assert run.lines[:2] == [
        "l1 = [[2, 2], [2, 2]]",
        "intermediate values alive after this step: l1",
    ]
    last_run = step_with(walk, "run step 5/5")
    assert last_run.lines[0] == "loss = 40"
    assert last_run.lines[-1].startswith("freed now (this was their last use): mul_")
    sweep = step_with(walk, "backward: the VJP of l1")
    assert sweep.lines[0] == "∂loss/∂l1: l1 is used 2 times, so its consumers' gradients add up:"
    assert sweep.lines[3] == " = [[7, 7], [7, 7]]"
    assert "  → w1: ∂loss/∂w1 += 28" in sweep.lines
    collect = step_with(walk, "w1 collects its gradient")
    assert "g.backward(loss) stores it: w1.grad = 28" in collect.text
    assert "w1 is still 2, w2 is still 3, w3 is still 4" in walk.steps[-1].text


def test_static_walkthrough_changes_nothing_in_the_graph():
    g, x, variables, l1, loss = static_reference()
    g.forward({x: np.full((2, 2), 5.0)})
    before = [(n.name, None if n.value is None else np.array(n.value)) for n in g.nodes]
    step = ns.optim.SGD(list(variables), lr=0.1).minimize(loss)
    count, version = len(g.nodes), g.version
    ns.walkthrough(loss, {x: np.ones((2, 2))})
    assert (len(g.nodes), g.version) == (count, version)
    assert [v.value.item() for v in variables] == [2.0, 3.0, 4.0]
    assert all(v.grad is None for v in variables)
    for name, value in before:
        now = g[name].value
        assert (now is None) == (value is None) and (value is None or np.array_equal(now, value))
    assert step.value is None


def test_static_walkthrough_refuses_bad_input_clearly():
    g, x, variables, l1, loss = static_reference()
    with pytest.raises(ValueError, match="placeholder 'input' needs a value"):
        ns.walkthrough(loss, {})
    with pytest.raises(ValueError, match="scalar loss"):
        ns.walkthrough(l1, {x: np.ones((2, 2))})
    with pytest.raises(TypeError, match="ng.walkthrough"):
        ns.walkthrough(ng.ones(2), {})


def test_static_walkthrough_reveals_values_and_gradients_on_the_nodes():
    g, x, variables, l1, loss = static_reference()
    walk = ns.walkthrough(loss, {x: np.ones((2, 2))})
    source = walk.drawing.source
    assert re.search(r'color="#0d47a1">= \[\[2, 2\], \[2, 2\]\]<', source)  # l1's value
    assert "∂loss/∂w1 = 28<" in source
    assert "∂loss/∂l1 = [[7, 7], [7, 7]]<" in source  # named as the steps name it
    assert walk.reveal_labels
    build = walk.steps[0]
    assert build.values == [] and build.grads == []


def test_nodes_without_a_creation_stamp_are_stepped_in_an_order_that_could_have_run():
    env = reference(backward=False)
    for name in ("l1", "l2", "l3", "l4", "loss"):
        del env[name].grad_fn._seq  # as a node built outside the recorders would be
    walk = ng.walkthrough(env["loss"], params=params(env))
    titles = [s.title.split(": ", 1)[1] for s in walk.steps[:5]]
    assert sorted(titles) == sorted(
        ["l1 = mul(input, w1)", "l2 = add(l1, w2)", "l3 = mul(l1, w3)", "l4 = mul(l2, l3)"]
        + ["loss = mean(l4)"]
    )
    position = {t.split(" =")[0]: i for i, t in enumerate(titles)}
    assert position["l1"] < position["l2"] < position["l4"] < position["loss"]
    assert position["l1"] < position["l3"] < position["l4"]
