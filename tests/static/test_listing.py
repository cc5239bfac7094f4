"""A static graph prints as an SSA listing (``str(graph)``), and a compiled function
lists the plan it runs (``f.listing()``): one line per node, ``%name = op operands``,
inputs first, ``?`` for a size the graph does not know, inner graphs indented, and in
a plan each step numbered with the values freed after it.

Every dtype is pinned (float64, int64): the listings must not depend on the default."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import naivegraph.static as ns

F64 = np.float64


def listing(text: str) -> str:
    return textwrap.dedent(text).strip("\n")


def reference(gradients: bool = False):
    """README's reference model: loss = mean((x * w1 + w2) * (x * w1 * w3))."""
    g = ns.Graph("reference")
    with g:
        x = ns.placeholder("input", shape=(2, 2), dtype=F64)
        w1 = ns.Variable(F64(2.0), name="w1")
        w2 = ns.Variable(F64(3.0), name="w2")
        w3 = ns.Variable(F64(4.0), name="w3")
        l1 = x * w1
        loss = ns.mean((l1 + w2) * (l1 * w3))
        grads = ns.gradients(loss, [w1, w2, w3]) if gradients else []
    return g, x, loss, grads


def test_the_reference_graph_lists_inputs_first_then_one_line_per_op():
    g, _, _, _ = reference()
    assert str(g) == listing("""
        graph reference:
          %input = placeholder        : (2, 2) float64
          %w1 = variable              : () float64
          %w2 = variable              : () float64
          %w3 = variable              : () float64
          %mul_1 = mul %input %w1     : (2, 2) float64
          %add_1 = add %mul_1 %w2     : (2, 2) float64
          %mul_2 = mul %mul_1 %w3     : (2, 2) float64
          %mul_3 = mul %add_1 %mul_2  : (2, 2) float64
          %mean_1 = mean %mul_3       : () float64
          return %mean_1
        """)


def test_print_gives_the_listing_and_repr_stays_short(capsys):
    g, _, _, _ = reference()
    print(g)
    assert capsys.readouterr().out == str(g) + "\n"
    assert repr(g) == "<Graph reference: 9 nodes>"


def test_the_compiled_plan_numbers_each_step_and_says_what_it_frees():
    g, x, loss, grads = reference(gradients=True)
    f = g.compile([x], [loss, *grads], optimize=False)
    assert f.listing() == listing("""
        compiled (%input) -> (%mean_1, %sum_to_3, %sum_to_2, %sum_to_1), 17 steps on graph reference:
              %input = placeholder                        : (2, 2) float64
              %w1 = variable                              : () float64
              %w2 = variable                              : () float64
              %w3 = variable                              : () float64
            1 %mul_1 = mul %input %w1                     : (2, 2) float64
            2 %add_1 = add %mul_1 %w2                     : (2, 2) float64
            3 %mul_2 = mul %mul_1 %w3                     : (2, 2) float64
            4 %mul_3 = mul %add_1 %mul_2                  : (2, 2) float64
            5 %mean_1 = mean %mul_3                       : () float64  free %mul_3
              %ones_1 = constant 1.0                      : () float64
            6 %reshape_1 = reshape %ones_1 shape=(1, 1)   : (1, 1) float64
            7 %expand_1 = expand %reshape_1 shape=(2, 2)  : (2, 2) float64  free %reshape_1
              %const_1 = constant 4                       : () int64
            8 %div_1 = div %expand_1 %const_1             : (2, 2) float64  free %expand_1
            9 %mul_4 = mul %div_1 %mul_2                  : (2, 2) float64  free %mul_2
           10 %mul_5 = mul %div_1 %add_1                  : (2, 2) float64  free %add_1 %div_1
           11 %mul_6 = mul %mul_5 %w3                     : (2, 2) float64
           12 %mul_7 = mul %mul_5 %mul_1                  : (2, 2) float64  free %mul_1 %mul_5
           13 %sum_to_1 = sum_to %mul_7 shape=()          : () float64  free %mul_7
           14 %sum_to_2 = sum_to %mul_4 shape=()          : () float64
           15 %add_2 = add %mul_6 %mul_4                  : (2, 2) float64  free %mul_4 %mul_6
           16 %mul_8 = mul %add_2 %input                  : (2, 2) float64  free %add_2
           17 %sum_to_3 = sum_to %mul_8 shape=()          : () float64  free %mul_8
          return %mean_1, %sum_to_3, %sum_to_2, %sum_to_1
        """)  # noqa: E501
    assert [float(v) for v in f(np.ones((2, 2), dtype=F64))] == [40.0, 28.0, 8.0, 10.0]


def test_the_optimized_plan_shows_folded_constants_and_fused_chains():
    g, x, loss, grads = reference(gradients=True)
    f = g.compile([x], [loss, *grads], optimize=True)
    assert f.listing() == listing("""
        compiled (%input) -> (%mean_1, %sum_to_3, %sum_to_2, %sum_to_1), 12 steps on graph reference (ns.optimize: 23 -> 17 nodes):
              %input = placeholder                  : (2, 2) float64
              %w1 = variable                        : () float64
              %w2 = variable                        : () float64
              %w3 = variable                        : () float64
            1 %mul_1 = mul %input %w1               : (2, 2) float64
            2 %add_1 = add %mul_1 %w2               : (2, 2) float64
            3 %mul_2 = mul %mul_1 %w3               : (2, 2) float64
            4 %mul_3 = mul %add_1 %mul_2            : (2, 2) float64
            5 %mean_1 = mean %mul_3                 : () float64  free %mul_3
              %div_1 = constant [[0.25, 0.25], [0.25, 0.25]]  : (2, 2) float64
            6 %mul_4 = mul %div_1 %mul_2            : (2, 2) float64  free %mul_2
            7 %mul_5 = mul %div_1 %add_1            : (2, 2) float64  free %add_1
            8 %mul_7 = mul %mul_5 %mul_1            : (2, 2) float64  free %mul_1
            9 %sum_to_1 = sum_to %mul_7 shape=()    : () float64  free %mul_7
           10 %sum_to_2 = sum_to %mul_4 shape=()    : () float64
           11 %fused_1 = fused[mul>add>mul] %mul_5 %w3 %mul_4 %input  : (2, 2) float64  free %mul_4 %mul_5
           12 %sum_to_3 = sum_to %fused_1 shape=()  : () float64  free %fused_1
          return %mean_1, %sum_to_3, %sum_to_2, %sum_to_1
        """)  # noqa: E501
    assert [float(v) for v in f(np.ones((2, 2), dtype=F64))] == [40.0, 28.0, 8.0, 10.0]


def test_a_cond_lists_both_branches_indented_under_it():
    with ns.Graph("branches") as g:
        x = ns.placeholder("x", shape=(2,), dtype=F64)
        y = ns.cond(x.sum() > F64(0.0), lambda: x * F64(2.0), lambda: -x)
    assert str(g) == listing("""
        graph branches:
          %x = placeholder                      : (2,) float64
          %sum_1 = sum %x                       : () float64
          %const_1 = constant 0.0               : () float64
          %gt_1 = gt %sum_1 %const_1            : () bool
          %cond_1 = cond %gt_1 %x               : tuple((2,) float64)
            true branch:
              %outer_x_1 = placeholder          : (2,) float64
              %const_1 = constant 2.0           : () float64
              %mul_1 = mul %outer_x_1 %const_1  : (2,) float64
              return %mul_1
            false branch:
              %outer_x_1 = placeholder          : (2,) float64
              %neg_1 = neg %outer_x_1           : (2,) float64
              return %neg_1
          %result_1 = result %cond_1 index=0    : (2,) float64
          return %result_1
        """)
    assert g.compile([x], [y], optimize=False).listing() == listing("""
        compiled (%x) -> (%result_1), 4 steps on graph branches:
              %x = placeholder                      : (2,) float64
            1 %sum_1 = sum %x                       : () float64
              %const_1 = constant 0.0               : () float64
            2 %gt_1 = gt %sum_1 %const_1            : () bool  free %sum_1
            3 %cond_1 = cond %gt_1 %x               : tuple((2,) float64)  free %gt_1
                true branch:
                  %outer_x_1 = placeholder          : (2,) float64
                  %const_1 = constant 2.0           : () float64
                  %mul_1 = mul %outer_x_1 %const_1  : (2,) float64
                  return %mul_1
                false branch:
                  %outer_x_1 = placeholder          : (2,) float64
                  %neg_1 = neg %outer_x_1           : (2,) float64
                  return %neg_1
            4 %result_1 = result %cond_1 index=0    : (2,) float64  free %cond_1
          return %result_1
        """)


def test_a_while_loop_lists_its_condition_and_body_with_every_input():
    with ns.Graph("loop") as g:
        x = ns.placeholder("x", shape=(2,), dtype=F64)
        n = ns.placeholder("n", shape=(), dtype=np.int64)
        ns.while_loop(lambda i, v: i < n, lambda i, v: (i + 1, v * F64(2.0)), [np.int64(0), x])
    assert str(g) == listing("""
        graph loop:
          %x = placeholder                           : (2,) float64
          %n = placeholder                           : () int64
          %const_1 = constant 0                      : () int64
          %while_loop_1 = while_loop %const_1 %x %n  : tuple(() int64, (2,) float64)
            loop condition:
              %loop_cond_arg0 = placeholder          : () int64
              %loop_cond_arg1 = placeholder          : (2,) float64
              %outer_n_1 = placeholder               : () int64
              %lt_1 = lt %loop_cond_arg0 %outer_n_1  : () bool
              return %lt_1
            loop body:
              %loop_body_arg0 = placeholder          : () int64
              %loop_body_arg1 = placeholder          : (2,) float64
              %outer_n_1 = placeholder               : () int64
              %const_1 = constant 1                  : () int64
              %add_1 = add %loop_body_arg0 %const_1  : () int64
              %const_2 = constant 2.0                : () float64
              %mul_1 = mul %loop_body_arg1 %const_2  : (2,) float64
              return %add_1, %mul_1
          %result_1 = result %while_loop_1 index=0   : () int64
          %result_2 = result %while_loop_1 index=1   : (2,) float64
          return %result_1, %result_2
        """)


def test_an_unknown_batch_size_is_a_question_mark_in_the_graph_and_the_plan():
    with ns.Graph("batch") as g:
        x = ns.placeholder("x", shape=(None, 3), dtype=F64)
        w = ns.Variable(np.zeros((3, 2), dtype=F64), name="w")
        b = ns.Variable(np.zeros((2,), dtype=F64), name="b")
        out = ns.relu(x @ w + b)
    assert str(g) == listing("""
        graph batch:
          %x = placeholder           : (?, 3) float64
          %w = variable              : (3, 2) float64
          %b = variable              : (2,) float64
          %matmul_1 = matmul %x %w   : (?, 2) float64
          %add_1 = add %matmul_1 %b  : (?, 2) float64
          %relu_1 = relu %add_1      : (?, 2) float64
          return %relu_1
        """)
    assert g.compile([x], [out], optimize=False).listing() == listing("""
        compiled (%x) -> (%relu_1), 3 steps on graph batch:
              %x = placeholder           : (?, 3) float64
              %w = variable              : (3, 2) float64
              %b = variable              : (2,) float64
            1 %matmul_1 = matmul %x %w   : (?, 2) float64
            2 %add_1 = add %matmul_1 %b  : (?, 2) float64  free %matmul_1
            3 %relu_1 = relu %add_1      : (?, 2) float64  free %add_1
          return %relu_1
        """)


def test_a_plan_lists_only_what_its_outputs_need_and_names_its_updates():
    with ns.Graph("step") as g:
        x = ns.placeholder("x", shape=(None, 3), dtype=F64)
        w = ns.Variable(np.zeros((3,), dtype=F64), name="w")
        loss = (x @ w).sum()
        (dw,) = ns.gradients(loss, [w])
        ns.exp(w)  # not needed by the plan: not listed
    f = g.compile([x], [loss], updates=[(w, w - F64(0.5) * dw)], optimize=False)
    assert "%exp_1 = exp %w" in str(g)
    assert f.listing() == listing("""
        compiled (%x) -> (%sum_1), 10 steps on graph step:
              %x = placeholder                           : (?, 3) float64
              %w = variable                              : (3,) float64
            1 %matmul_1 = matmul %x %w                   : (?,) float64
            2 %sum_1 = sum %matmul_1                     : () float64
              %ones_1 = constant 1.0                     : () float64
            3 %expand_like_1 = expand_like %ones_1 %matmul_1  : (?,) float64  free %matmul_1
            4 %unsqueeze_1 = unsqueeze %expand_like_1 dim=-1  : (?, 1) float64  free %expand_like_1
            5 %transpose_1 = transpose %x dim0=-1 dim1=-2  : (3, ?) float64
            6 %matmul_2 = matmul %transpose_1 %unsqueeze_1  : (3, 1) float64  free %unsqueeze_1 %transpose_1
            7 %reshape_1 = reshape %matmul_2 shape=(3,)  : (3,) float64  free %matmul_2
              %const_1 = constant 0.5                    : () float64
            8 %mul_1 = mul %const_1 %reshape_1           : (3,) float64  free %reshape_1
            9 %sub_1 = sub %w %mul_1                     : (3,) float64  free %mul_1
           10 %assign_1 = assign %w %sub_1               : (3,) float64  free %sub_1
          return %sum_1; updates %assign_1
        """)  # noqa: E501


def test_leaves_show_small_constants_by_value_and_unknown_ranks_as_a_question_mark():
    with ns.Graph("leaves") as g:
        v = ns.placeholder("v", dtype=F64)
        big = ns.constant(np.arange(12, dtype=F64).reshape(3, 4))
        small = ns.constant(np.array([1.5, -2.0], dtype=F64))
        ns.constant(np.array(True))
        k = ns.Variable(np.ones(2, dtype=F64), name="k", trainable=False)
        (big.sum() + small * k) * v
    assert str(g) == listing("""
        graph leaves:
          %v = placeholder                 : ? float64
          %k = variable trainable=False    : (2,) float64
          %const_1 = constant <array>      : (3, 4) float64
          %const_2 = constant [1.5, -2.0]  : (2,) float64
          %const_3 = constant True         : () bool
          %sum_1 = sum %const_1            : () float64
          %mul_1 = mul %const_2 %k         : (2,) float64
          %add_1 = add %sum_1 %mul_1       : (2,) float64
          %mul_2 = mul %add_1 %v           : ? float64
          return %const_3, %mul_2
        """)


def test_attributes_left_at_their_default_are_not_listed():
    with ns.Graph("sums") as g:
        x = ns.placeholder("x", shape=(2, 3), dtype=F64)
        ns.sum(x)
        ns.sum(x, dim=0)
        x.mean(dim=1, keepdim=True)
    lines = str(g).splitlines()
    assert [line.split(":")[0].rstrip() for line in lines[2:5]] == [
        "  %sum_1 = sum %x",
        "  %sum_2 = sum %x dim=0",
        "  %mean_1 = mean %x dim=1 keepdim=True",
    ]


def test_an_index_is_listed_as_written():
    with ns.Graph("index") as g:
        x = ns.placeholder("x", shape=(2, 6), dtype=F64)
        x[0, 1:]
        x[..., ::2]
        x[:, 1:5:2]
    assert str(g) == listing("""
        graph index:
          %x = placeholder                          : (2, 6) float64
          %getitem_1 = getitem %x index=(0, 1:)     : (5,) float64
          %getitem_2 = getitem %x index=(..., ::2)  : (2, 3) float64
          %getitem_3 = getitem %x index=(:, 1:5:2)  : (2, 2) float64
          return %getitem_1, %getitem_2, %getitem_3
        """)


def test_a_traced_function_lists_the_graph_it_traced():
    def layer(a, b):
        return (a * b + a).tanh()

    traced = ns.trace(layer, np.ones(3, dtype=F64), np.ones((2, 3), dtype=F64))
    assert str(traced.graph) == listing("""
        graph trace_layer:
          %a = placeholder        : (3,) float64
          %b = placeholder        : (2, 3) float64
          %mul_1 = mul %a %b      : (2, 3) float64
          %add_1 = add %mul_1 %a  : (2, 3) float64
          %tanh_1 = tanh %add_1   : (2, 3) float64
          return %tanh_1
        """)


def test_a_loops_gradient_is_listed_as_a_tuple_valued_step():
    with ns.Graph("loopgrad") as g:
        x = ns.placeholder("x", shape=(), dtype=F64)
        _, t = ns.while_loop(lambda i, t: i < 3, lambda i, t: (i + 1, t * x), [np.int64(0), x])
        ns.gradients(t, [x])
    line = next(s for s in str(g).splitlines() if "while_loop_grad_1 =" in s)
    assert line.split()[:6] == [
        "%while_loop_grad_1",
        "=",
        "while_loop_grad",
        "%while_loop_1",
        "%x",
        "%ones_1",
    ]
    assert line.endswith(": tuple")


def test_an_empty_graph_lists_an_empty_return():
    assert str(ns.Graph("empty")) == "graph empty:\n  return"


@pytest.mark.parametrize("optimize", [False, True])
def test_every_step_of_a_plan_is_one_numbered_line(optimize):
    g, x, loss, grads = reference(gradients=True)
    f = g.compile([x], [loss, *grads], optimize=optimize)
    numbered = [line.split()[0] for line in f.listing().splitlines()[1:-1] if line[:6].strip()]
    assert numbered == [str(i) for i in range(1, len(f.plan.steps) + 1)]
