"""The fast layer's shortcut to the user's line (``site by operator`` in
``naivegraph.fast.fastbuild``): every node must record the ``built_at`` the readable
frame walk records, whatever path, depth or line built it, so each test builds the same
program with the layer on and off and compares the sites (and the error messages and
drawings that show them)."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from fast_switch import both_ways, fast_layer_on

import naivegraph.fast.fastbuild as fastbuild
import naivegraph.static as ns
from naivegraph import fast
from naivegraph.ops import OPS
from naivegraph.render import render

pytestmark = pytest.mark.usefixtures(fast_layer_on.__name__)  # they compare on with off


def sites(graph):
    return [(n.name, n.built_at) for n in graph.nodes]


def helper_negation(y):
    return -y


def helper_through_a_function(y):
    return ns.neg(y)


class Wrapped:
    """A user class whose operator builds through the public surface (its own line)."""

    def __init__(self, node):
        self.node = node

    def __neg__(self):
        return Wrapped(ns.neg(self.node))


def many_paths():
    with ns.Graph() as g:
        w = ns.Variable(2.0, name="w")
        c = ns.constant(np.float64(3.0), name="c")
        y = w
        for _ in range(3):
            y = -y
            y = y * c
            y = c**y
            y = y.exp()
            y = y + w
            y = -(-y)
            y = helper_negation(y)
            y = -helper_negation(y)
            y = helper_through_a_function(y)
            y = y[()]
            b = y < w
            y = ns.where(b, y, -y)
    return sites(g)


def test_every_path_to_a_node_records_the_same_line_either_way():
    on, off = both_ways(many_paths)
    assert on == off
    here = __file__
    assert all(site is not None and site[0] == here for _, site in on)
    # the helpers' operators are their own lines, not their callers'
    lines = {site[1] for _, site in on}
    assert helper_negation.__code__.co_firstlineno + 1 in lines
    assert helper_through_a_function.__code__.co_firstlineno + 1 in lines


def test_the_shortcut_is_taken_for_an_operator_and_agrees_with_the_walk():
    many_paths()  # taught once
    entry = fastbuild._OPERATOR_SITES.get(id(many_paths.__code__))
    assert entry is not None and entry[0] is many_paths.__code__
    on, off = both_ways(many_paths)
    assert on == off


def test_the_same_instruction_on_a_plain_node_and_a_user_class_records_each_line():
    def program():
        with ns.Graph() as g:
            w = ns.Variable(1.0, name="w")
            operands = [w, Wrapped(w), w, Wrapped(w), w]
            for operand in operands:
                -operand
        return sites(g)

    on, off = both_ways(program)
    assert on == off
    wrapped_line = Wrapped.__neg__.__code__.co_firstlineno + 1
    assert [site[1] == wrapped_line for _, site in on[1:]] == [False, True, False, True, False]


class Squared:
    """A user class whose negation builds a product (in its own line)."""

    def __init__(self, node):
        self.node = node

    def __neg__(self):
        return self.node * self.node


def test_an_operator_taught_by_one_op_is_not_trusted_for_another():
    # the product is built two frames below the user's line, as deep as a negation is
    # built below it: the line taught by the negation must not be reused for it
    def program():
        with ns.Graph() as g:
            w = ns.Variable(3.0, name="w")
            for operand in [w, Squared(w), w, Squared(w)]:
                if fast.enabled:
                    fastbuild._depths[OPS["mul"]] = 5  # as if a product was last built there
                -operand
        return sites(g)

    on, off = both_ways(program)
    assert on == off
    squared_line = Squared.__neg__.__code__.co_firstlineno + 1
    assert [site[1] == squared_line for _, site in on[1:]] == [False, True, False, True]


class Negated:
    """A user class whose negation negates its node (in its own line)."""

    def __init__(self, node):
        self.node = node

    def __neg__(self):
        return -self.node


def test_an_operator_taught_at_one_depth_is_not_trusted_at_another():
    # a Negated operand puts one more frame between the user's line and the node
    def program():
        with ns.Graph() as g:
            w = ns.Variable(3.0, name="w")
            for operand in [w, Negated(w), w, Negated(w)]:
                if fast.enabled:
                    fastbuild._depths[OPS["neg"]] = 6  # as if a negation was last built there
                -operand
        return sites(g)

    on, off = both_ways(program)
    assert on == off
    negated_line = Negated.__neg__.__code__.co_firstlineno + 1
    assert [site[1] == negated_line for _, site in on[1:]] == [False, True, False, True]


def user_negation(y):
    return y.neg()


def test_one_call_whose_callee_changes_records_the_user_function_line_when_it_calls():
    # ns.neg reaches the package at the depth user_negation's own frame is at: a call's
    # callee can be anything, so the call's line must not be reused for it
    def program():
        with ns.Graph() as g:
            y = ns.Variable(1.0, name="w")
            for negate in [ns.neg, user_negation, ns.neg, user_negation]:
                y = negate(y)
        return sites(g)

    on, off = both_ways(program)
    assert on == off
    user_line = user_negation.__code__.co_firstlineno + 1
    assert [site[1] == user_line for _, site in on[1:]] == [False, True, False, True]


def test_a_program_on_several_lines_of_one_function_records_each_line():
    def program():
        with ns.Graph() as g:
            y = ns.Variable(1.0, name="w")
            for _ in range(4):
                y = -y
                y = -y
                y = -y
        return sites(g)

    on, off = both_ways(program)
    assert on == off
    assert len({site[1] for _, site in on[1:]}) == 3


def test_a_tracer_sees_the_same_lines_either_way():
    def program():
        with ns.Graph() as g:
            y = ns.Variable(1.0, name="w")
            for _ in range(3):
                y = -y
        return sites(g)

    def tracer(frame, event, arg):
        return tracer

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        on, off = both_ways(program)
    finally:
        sys.settrace(previous)
    assert on == off


def test_a_check_numerics_error_and_a_drawing_show_the_same_line_either_way():
    def program():
        with ns.Graph(name="g") as g:
            w = ns.Variable(-1.0, name="w")
            y = -w
            z = ns.sqrt(-y)
        with pytest.raises(FloatingPointError) as error:
            g.forward(fetches=[z], check_numerics=True)
        return str(error.value), render(g).source, y.built_at

    on, off = both_ways(program)
    assert on == off
    assert f"{__file__}:" in on[0]


def test_switched_off_the_shortcut_gives_the_same_lines():
    fastbuild.site_by_operator = False
    try:
        without = many_paths()
    finally:
        fastbuild.site_by_operator = True
    assert without == many_paths()
