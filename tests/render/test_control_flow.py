"""Drawings of static control flow: a cond's branches and a loop's condition and body
are labelled clusters, each joined to the node that runs them."""

import re

import naivegraph as ng
import naivegraph.static as ns


def control_flow_graph():
    with ns.Graph():
        x = ns.placeholder("x", shape=())
        w = ns.Variable(2.0, name="w")
        y = ns.cond(x > 0, lambda: x * w, lambda: -x)
        _, t = ns.while_loop(lambda i, t: i < 3, lambda i, t: (i + 1, t * w), [0, x])
        return y + t


def test_branches_and_loop_body_are_labelled_clusters():
    source = ng.render(control_flow_graph(), kind="forward").source
    labels = re.findall(r'label="([a-z ]+ of (?:cond|while_loop)_1)"', source)
    assert labels == [
        "true branch of cond_1",
        "false branch of cond_1",
        "loop condition of while_loop_1",
        "loop body of while_loop_1",
    ]


def test_each_inner_result_is_joined_to_its_control_flow_node():
    source = ng.render(control_flow_graph(), kind="forward").source
    names = dict(re.findall(r"(n\d+) \[label=<<b>(\w+)</b>", source))  # inner graphs reuse names
    edges = {(names[a], names[b]) for a, b in re.findall(r"(n\d+) -> (n\d+)", source)}
    assert ("mul_1", "cond_1") in edges  # the true branch's result
    assert ("neg_1", "cond_1") in edges  # the false branch's result
    assert ("lt_1", "while_loop_1") in edges  # the loop's condition
    assert ("add_1", "while_loop_1") in edges and ("mul_1", "while_loop_1") in edges  # body
