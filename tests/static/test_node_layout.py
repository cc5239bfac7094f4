"""How a static node is laid out: fields in slots, one shared empty ``attrs``, and
automatic names made on demand from a number; the names the graph gives, lists, saves
and finds stay the ones a stored string gave."""

from __future__ import annotations

import numpy as np
import pytest
from fast_switch import both_ways

import naivegraph.static as ns
from naivegraph.static.nodes import Constant, Operation, Placeholder, Variable


def test_nodes_of_every_kind_have_no_instance_dictionary():
    with ns.Graph():
        x = ns.placeholder("x", shape=())
        w = ns.Variable(1.0, name="w")
        y = x * w + 2.0
    constant = y.inputs[1]
    assert [type(n) for n in (x, w, constant, y)] == [Placeholder, Variable, Constant, Operation]
    for node in (x, w, constant, y):
        assert not hasattr(node, "__dict__")
        with pytest.raises(AttributeError):
            node.colour = "red"


def test_nodes_without_attributes_share_one_empty_attrs_and_others_own_theirs():
    with ns.Graph():
        x = ns.placeholder("x", shape=(2, 3))
        a, b = -x, x.exp()
        s = x.sum(dim=1)
    assert a.attrs == {} and a.attrs is b.attrs is x.attrs
    assert s.attrs == {"dim": 1, "keepdim": False}
    assert s.attrs is not a.attrs and a.attrs == {}


def named_chain():
    with ns.Graph("chain") as g:
        w = ns.Variable(2.0, name="w")
        y = -(-(w * 3.0))
    found = [g["neg_2"] is y, g["const_1"] is g.nodes[1], g["w"] is w]
    return [n.name for n in g.nodes], [n._name for n in g.nodes], found, str(g).splitlines()


def test_automatic_names_are_made_from_a_number_and_read_as_before_either_way():
    on, off = both_ways(named_chain)
    assert on == off
    names, stored, found, listing = on
    assert names == ["w", "const_1", "mul_1", "neg_1", "neg_2"]
    assert stored == ["w", 1, 1, 1, 2]  # the number only
    assert found == [True, True, True]
    assert listing[1:] == [
        "  %w = variable             : () float32",
        "  %const_1 = constant 3.0   : () float64",
        "  %mul_1 = mul %w %const_1  : () float32",
        "  %neg_1 = neg %mul_1       : () float32",
        "  %neg_2 = neg %neg_1       : () float32",
        "  return %neg_2",
    ]


@pytest.mark.parametrize("name", ["neg_3", "neg_0", "neg_01", "neg_\u0662", "neg", "mul_1"])
def test_a_name_no_node_has_is_not_found(name):
    with ns.Graph("g") as g:
        w = ns.Variable(2.0, name="w")
        -(-w)
    with pytest.raises(KeyError, match=f"g has no node named {name!r}"):
        g[name]


def test_a_name_given_that_an_automatic_name_holds_is_refused():
    with ns.Graph("g") as g:
        w = ns.Variable(2.0, name="w")
        -w
        with pytest.raises(ValueError, match="a node named 'neg_1' already exists in g"):
            ns.Variable(1.0, name="neg_1")
    assert len(g.nodes) == 2


def test_automatic_names_step_over_names_given_and_never_come_back():
    with ns.Graph() as g:
        w = ns.Variable(2.0, name="neg_2")
        a = -w
        b = -a
        g.rename(a, "first")
        c = -b
    assert [a.name, b.name, c.name] == ["first", "neg_3", "neg_4"]
    assert g["first"] is a and g["neg_3"] is b and g["neg_4"] is c
    with pytest.raises(KeyError):
        g["neg_1"]
    assert g["neg_2"] is w


def test_a_rolled_back_node_frees_its_automatic_name_for_lookups():
    with ns.Graph() as g:
        w = ns.Variable(2.0, name="w")
        a = -w
        size = len(g.nodes)
        -(-a)
        g._rollback(size)
        b = -a
    assert b.name == "neg_4"  # numbers only rise, as the counter did before
    with pytest.raises(KeyError):
        g["neg_2"]
    assert g["neg_1"] is a and g["neg_4"] is b


def test_renaming_an_automatically_named_node_gives_it_that_name_only():
    with ns.Graph("g") as g:
        w = ns.Variable(2.0, name="w")
        a = -w
        b = -a
    g.rename(b, "out")
    assert g["out"] is b and b.name == "out" and b._name == "out"
    with pytest.raises(KeyError):
        g["neg_2"]
    with pytest.raises(ValueError, match="a node named 'neg_1' already exists in g"):
        g.rename(b, "neg_1")


def test_saved_and_loaded_graphs_keep_every_automatic_name(tmp_path):
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(2,))
        w = ns.Variable(np.array([1.0, 2.0]), name="w")
        y = ((x * w) + 1.0).exp().sum()
    g.save(tmp_path / "g.ngraph")
    loaded = ns.load(tmp_path / "g.ngraph")
    assert [n.name for n in loaded.nodes] == [n.name for n in g.nodes]
    assert [n.name for n in g.nodes] == ["x", "w", "mul_1", "const_1", "add_1", "exp_1", "sum_1"]
    assert str(loaded) == str(g)
    assert loaded[y.name].op_name == "sum"
