"""Round 6 of the speed work probed where it could part from the readable path and torch:
a Python float's leaf made in one call (``factories.float_leaf``), ``ones`` / ``zeros``
of plain int sizes, torch's ``_saved_*`` names as properties of the node classes (no
``__getattr__`` on ``OpNode``), and the small backward as one function
(``fastsmall.run``) with the commonest leaf's ``.grad`` written inline.

Every program runs with the layer on and off (the same bits, or the same error, either
way) and, where torch defines the answer, in torch: exactly where IEEE makes the numbers
exact (+ - * / and copies), error messages by their key phrase.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from bit_outcomes import (
    IN_PLACE,
    SECOND_TIME,
    bits,
    outcome,
    same_bits_as_torch,
    same_either_way,
    three_ways,
)
from fast_switch import fast_layer_on

import naivegraph as ng
from naivegraph.fast import fastsmall

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.usefixtures(fast_layer_on.__name__)  # they compare on with off


def dtype_name(t) -> str:
    """``float32`` for ng's dtype and torch's alike."""
    return str(t.dtype).removeprefix("torch.")


# -- a Python float's leaf -------------------------------------------------------------
FLOATS = [2.0, -0.0, 0.1, 1e-45, -1.5e-39, 3.4028234663852886e38, 3.5e38, -1e39]
FLOATS += [math.inf, -math.inf, 1e308, 5e-324]


def a_float_leaf(value, requires_grad):
    def program(m):
        t = m.tensor(value, requires_grad=requires_grad)
        return t, t.requires_grad, t.is_leaf, t.grad_fn is None, dtype_name(t)

    return program


@pytest.mark.parametrize("value", FLOATS)
@pytest.mark.parametrize("requires_grad", [True, False])
def test_a_float_leaf_is_torchs_float32_bits_either_way(value, requires_grad):
    assert same_bits_as_torch(a_float_leaf(value, requires_grad))[0] == "ok"


@pytest.mark.parametrize("value", FLOATS + [math.nan])
def test_a_float_leaf_under_a_float64_default_is_torchs_bits_either_way(value):
    def program(m):
        previous = m.get_default_dtype()
        m.set_default_dtype(m.float64)
        try:
            return a_float_leaf(value, True)(m)
        finally:
            m.set_default_dtype(previous)

    assert same_bits_as_torch(program)[0] == "ok"


def test_a_nan_leaf_is_nan_in_float32_either_way():
    def program(m):
        t = m.tensor(math.nan, requires_grad=True)
        return bool(np.isnan(t.detach().numpy())), dtype_name(t), t.requires_grad

    assert same_either_way(program) == ("ok", [True, "float32", True])
    assert outcome(program, torch) == ("ok", [True, "float32", True])


@pytest.mark.parametrize("flag", [1, 0, None, np.True_])
def test_a_float_leaf_with_a_flag_other_than_a_bool_is_the_readable_leaf(flag):
    def program(m):
        t = m.tensor(1.25, requires_grad=flag)
        return t, t.requires_grad

    assert same_either_way(program) == ("ok", [bits(np.float32(1.25)), bool(flag)])


def test_a_float_leaf_made_in_inference_mode_is_an_inference_tensor_either_way():
    def program(m):
        with m.inference_mode():
            t = m.tensor(0.5, requires_grad=False)
        return t, t.is_inference()

    assert same_bits_as_torch(program) == ("ok", [bits(np.float32(0.5)), True])


def test_a_float_leaf_with_a_device_is_checked_before_it_is_made_either_way():
    def program(m):
        return (m.tensor(2.0, device="nowhere"),)

    kind, message = same_either_way(program)
    assert kind == "RuntimeError"
    assert "nowhere" in message


def test_a_float_leaf_is_a_leaf_that_gets_torchs_gradient():
    def program(m):
        w = m.tensor(0.1, requires_grad=True)
        (w * 3.0 + w).backward()
        return w.grad, w.is_leaf

    assert same_bits_as_torch(program)[0] == "ok"


# -- ones and zeros --------------------------------------------------------------------
SHAPES = [([2, 2],), ((2, 3),), (2, 3), ([],), ((),), ([0, 3],), (1,), ((4,),)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", ["ones", "zeros"])
@pytest.mark.parametrize("requires_grad", [False, True])
def test_ones_and_zeros_of_plain_int_sizes_are_torchs_either_way(shape, name, requires_grad):
    def program(m):
        t = getattr(m, name)(*shape, requires_grad=requires_grad)
        return t, tuple(t.shape), t.requires_grad, t.is_leaf, dtype_name(t)

    assert same_bits_as_torch(program)[0] == "ok"


@pytest.mark.parametrize("dtype", ["float64", "int64", "int32", "bool", "float16"])
def test_ones_of_a_given_dtype_are_torchs_either_way(dtype):
    def program(m):
        return (m.ones([2, 3], dtype=getattr(m, dtype)),)

    assert same_bits_as_torch(program)[0] == "ok"


@pytest.mark.parametrize(
    "shape", [(np.int64(2), 3), ([np.int32(2), 2],), ((2, True),), (ng.Size([2, 1]),)]
)
def test_ones_of_sizes_that_are_not_plain_ints_are_the_readable_ones(shape):
    def program(m):
        t = m.ones(*shape)
        return t, tuple(t.shape)

    assert same_either_way(program)[0] == "ok"


@pytest.mark.parametrize("shape", [(-1, 2), ([2, -3],), ([None],)])
def test_ones_of_a_bad_size_raise_the_same_error_either_way(shape):
    kind, _ = same_bits_as_torch(lambda m: (m.ones(*shape),))
    assert kind in ("TypeError", "RuntimeError")


#: sizes torch refuses, as (args, kwargs) of a factory: a bool where the size or its
#: first element goes, a negative size, a size beyond int64
REFUSED_SIZES = {
    "True": ((True,), {}),
    "False": ((False,), {}),
    "np.bool_(True)": ((np.bool_(True),), {}),
    "[True, 2]": (([True, 2],), {}),
    "(np.bool_(True),)": (((np.bool_(True),),), {}),
    "True, 2": ((True, 2), {}),
    "2, np.bool_(True)": ((2, np.bool_(True)), {}),
    "size=True": ((), {"size": True}),
    "size=(True,)": ((), {"size": (True,)}),
    "size=2": ((), {"size": 2}),
    "-1": ((-1,), {}),
    "2, -3": ((2, -3), {}),
    "(2, -1)": (((2, -1),), {}),
    "[-1, -2]": (([-1, -2],), {}),
    "size=(0, -1)": ((), {"size": (0, -1)}),
    "np.int64(-1)": ((np.int64(-1),), {}),
    "(np.int32(-2), 3)": (((np.int32(-2), 3),), {}),
    "2**63": ((2**63,), {}),
    "(2, -(2**63) - 1)": (((2, -(2**63) - 1),), {}),
    "[2, 2.0]": (([2, 2.0],), {}),
    "[2.0, 2]": (([2.0, 2],), {}),
    "2, None": ((2, None), {}),
}


def same_error_as_torch(program) -> tuple[str, str]:
    """The error with the layer on, asserted the same off, and of torch's type and words
    (the first line of torch's: it may go on with its C++ frames, or with the overloads
    of a function its parser could not match, which naivegraph does not list)."""
    on, off, want = three_ways(program)
    assert on == off
    assert on[0] == want[0] and on[0] in ("TypeError", "RuntimeError"), (on, want)
    if "received an invalid combination of arguments" not in want[1]:
        assert on[1] == want[1].split("\n")[0].rstrip('"') + ('"' if '"' in want[1] else "")
    return on


@pytest.mark.parametrize("factory", ["ones", "zeros", "empty", "rand", "randn"])
@pytest.mark.parametrize("name", list(REFUSED_SIZES))
def test_a_size_torch_refuses_is_refused_with_torchs_error_either_way(factory, name):
    args, kwargs = REFUSED_SIZES[name]
    same_error_as_torch(lambda m: (getattr(m, factory)(*args, **kwargs),))


def test_a_negative_size_is_a_runtime_error_in_torchs_words():
    assert same_bits_as_torch(lambda m: (m.ones(2, -3),)) == (
        "RuntimeError",
        "Trying to create tensor with negative dimension -3: [2, -3]",
    )
    assert same_bits_as_torch(lambda m: (m.zeros([2, -1], requires_grad=True),)) == (
        "RuntimeError",
        "zeros: Dimension size must be non-negative.",
    )


def test_a_bool_size_is_a_type_error_in_torchs_words():
    assert same_bits_as_torch(lambda m: (m.ones(True),)) == (
        "TypeError",
        "ones(): argument 'size' (position 1) must be tuple of ints, not bool",
    )
    assert same_bits_as_torch(lambda m: (m.empty([np.bool_(True), 2]),)) == (
        "TypeError",
        "empty(): argument 'size' (position 1) must be tuple of ints, but found element of "
        "type numpy.bool at pos 0",
    )


#: sizes torch takes that look odd: a bool after the first place counts as an int
ODD_SIZES = {
    "2, True": ((2, True), {}),
    "(2, True)": (((2, True),), {}),
    "size=(2, True)": ((), {"size": (2, True)}),
    "0": ((0,), {}),
    "()": (((),), {}),
    "[]": (([],), {}),
    "size=()": ((), {"size": ()}),
    "(np.int32(2), 3)": (((np.int32(2), 3),), {}),
}


@pytest.mark.parametrize("factory", ["ones", "zeros"])
@pytest.mark.parametrize("name", list(ODD_SIZES))
def test_a_size_torch_takes_is_taken_either_way(factory, name):
    args, kwargs = ODD_SIZES[name]
    assert same_bits_as_torch(lambda m: (getattr(m, factory)(*args, **kwargs),))[0] == "ok"


@pytest.mark.parametrize(
    "size", [3, True, (True,), [True, 2], (-1,), (2, -1), [2, 2.0], 2.0, None, (2**63,)]
)
@pytest.mark.parametrize("fill", [1, 0, 1.5, True])
def test_full_refuses_what_torch_refuses_through_the_fast_fill_too(size, fill):
    same_error_as_torch(lambda m: (m.full(size, fill),))


@pytest.mark.parametrize("size", [(2, True), (), [0, 3], (np.int64(2),)])
@pytest.mark.parametrize("fill", [1, 0, 2.5])
def test_full_of_a_size_torch_takes_is_torchs_either_way(size, fill):
    assert same_bits_as_torch(lambda m: (m.full(size, fill),))[0] == "ok"


def test_randint_and_normal_refuse_a_negative_size_in_torchs_words():
    negative = ("RuntimeError", "Trying to create tensor with negative dimension -1: [2, -1]")
    assert same_bits_as_torch(lambda m: (m.randint(0, 5, (2, -1)),)) == negative
    assert same_bits_as_torch(lambda m: (m.normal(0.0, 1.0, size=(2, -1)),)) == negative


def test_ones_of_a_size_refused_make_nothing_and_the_next_call_works():
    def program(m):
        try:
            m.ones(2, -1, requires_grad=True)
        except RuntimeError:
            pass
        return (m.ones(2, 1, requires_grad=True),)

    assert same_bits_as_torch(program)[0] == "ok"


@pytest.mark.parametrize("shape", [(), ("2",), (2.0,), ([2, "3"],), ([2, 2.0],)])
def test_ones_without_a_size_or_with_a_str_size_is_refused_as_in_torch(shape):
    on = same_either_way(lambda m: (m.ones(*shape),))
    assert on[0] == outcome(lambda m: (m.ones(*shape),), torch)[0] == "TypeError"


def test_ones_with_size_and_a_float64_default_are_torchs_either_way():
    def program(m):
        previous = m.get_default_dtype()
        m.set_default_dtype(m.float64)
        try:
            return m.ones(size=(2, 1)), m.zeros(3)
        finally:
            m.set_default_dtype(previous)

    assert same_bits_as_torch(program)[0] == "ok"


def test_a_ones_tensor_written_in_place_does_not_change_the_next_one():
    def program(m):
        a = m.ones([2, 2])
        a.add_(1.0)
        return a, m.ones([2, 2])

    assert same_bits_as_torch(program)[0] == "ok"


# -- torch's saved names as properties --------------------------------------------------
def test_saved_names_of_a_mul_are_the_operands_as_in_torch():
    def program(m):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        b = m.tensor([3.0, 4.0], requires_grad=True)
        node = (a * b).grad_fn
        return node._saved_self is a, node._saved_other is b, hasattr(node, "_raw_saved_self")

    assert same_bits_as_torch(program) == ("ok", [True, True, True])


def test_a_name_a_node_does_not_save_raises_torchs_attribute_error():
    def program(m):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        mul, add = (a * a).grad_fn, (a + a).grad_fn
        found = []
        for node, name in ((mul, "_saved_foo"), (add, "_raw_saved_alpha"), (mul, "bogus")):
            try:
                getattr(node, name)
            except AttributeError as error:
                found.append(str(error))
        return tuple(found), add._saved_alpha

    on = same_either_way(program)
    assert on == outcome(program, torch)
    assert on[1][0] == (
        "'MulBackward0' object has no attribute '_saved_foo'",
        "'AddBackward0' object has no attribute '_raw_saved_alpha'",
        "'MulBackward0' object has no attribute 'bogus'",
    )


def test_a_saved_name_read_after_backward_raises_torchs_second_time_error():
    def program(m):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        y = a * a
        y.sum().backward()
        return (y.grad_fn._saved_self,)

    on = same_either_way(program)
    assert on[0] == "RuntimeError" and SECOND_TIME in on[1]
    assert outcome(program, torch)[0] == "RuntimeError"


def test_saved_names_under_saved_tensors_hooks_go_through_the_unpack_hook():
    def program(m):
        unpacked = []
        a = m.tensor([1.0, 2.0], requires_grad=True)
        with m.autograd.graph.saved_tensors_hooks(
            lambda t: t * 2, lambda t: unpacked.append(1) or t
        ):
            y = a * 3.0
        return y.grad_fn._saved_self, len(unpacked)

    assert same_bits_as_torch(program)[0] == "ok"


def test_the_sizes_a_mean_keeps_are_torchs_either_way():
    def program(m):
        x = m.ones([2, 3], requires_grad=True)
        return (tuple(x.mean().grad_fn._saved_self_sym_sizes),)

    assert same_bits_as_torch(program) == ("ok", [(2, 3)])


# -- the small backward as one function -------------------------------------------------
def test_a_leaf_seeded_straight_from_the_root_gets_a_gradient_of_its_own():
    # loss = w + 0.0: add's rule hands the root's seed itself to w; the seed is a copy of
    # a kept 0-d one, so writing into w.grad must not reach the next backward's seed
    def program(m):
        w = m.tensor(2.0, requires_grad=True)
        (w + 0.0).backward()
        w.grad.add_(5.0)
        v = m.tensor(3.0, requires_grad=True)
        (v + 0.0).backward()
        (w + 0.0).backward()
        return w.grad, v.grad

    assert same_bits_as_torch(program) == (
        "ok",
        [bits(np.float32(7.0)), bits(np.float32(1.0))],
    )


def test_a_leaf_whose_gradient_is_a_broadcast_view_gets_a_writable_copy():
    # sum's rule gives a read-only broadcast of the 0-d seed: .grad must be its own array
    def program(m):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        x.sum().backward()
        y.mean().backward()
        x.grad.add_(1.0)
        y.grad.mul_(2.0)
        return x.grad, y.grad

    assert same_bits_as_torch(program)[0] == "ok"


def test_two_leaves_handed_one_gradient_get_two_arrays():
    def program(m):
        a = m.tensor(1.5, requires_grad=True)
        b = m.tensor(2.5, requires_grad=True)
        (a + b).backward()
        a.grad.mul_(10.0)
        return a.grad, b.grad

    assert same_bits_as_torch(program)[0] == "ok"


def test_a_leaf_used_twice_in_one_op_and_again_later_sums_in_torchs_order():
    def program(m):
        w = m.tensor(0.3, requires_grad=True)
        x = m.tensor([[0.1, 0.7], [1.3, -2.9]])
        ((w * w) * x + x * w - w).mean().backward()
        return (w.grad,)

    assert same_bits_as_torch(program)[0] == "ok"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gradients_summed_to_0d_from_broadcast_and_odd_shapes_are_torchs(dtype):
    def program(m):
        t = getattr(m, dtype)
        w = m.tensor(0.7, dtype=t, requires_grad=True)
        row = m.tensor([[0.1, 0.2, 0.3]], dtype=t, requires_grad=True)
        col = m.tensor([[1.1], [-2.3], [3.7]], dtype=t)
        odd = m.tensor([[0.3, 1.7, -0.9], [2.2, 0.4, 1.1], [7.0, -3.0, 0.5]], dtype=t)
        loss = ((row * col) * w + odd.t() * w - w * odd[:, ::2].sum()).sum()
        loss.backward()
        return w.grad, row.grad

    assert same_bits_as_torch(program)[0] == "ok"


def test_int_inputs_beside_float_leaves_give_torchs_gradients():
    def program(m):
        i = m.tensor([[1, 2], [3, 4]])
        w = m.tensor(1.5, requires_grad=True)
        ((i * w) * w + i).mean().backward()
        return (w.grad,)

    assert same_bits_as_torch(program)[0] == "ok"


def test_an_operand_changed_in_place_after_use_raises_torchs_error_and_writes_no_grad():
    def program(m):
        w = m.tensor(2.0, requires_grad=True)
        x = m.ones([2, 2], requires_grad=True)
        y = x * w
        loss = (y * y).mean()
        y.add_(1.0)
        try:
            loss.backward()
        except RuntimeError as error:
            return IN_PLACE in str(error), w.grad is None, x.grad is None
        return (False,)

    assert same_bits_as_torch(program) == ("ok", [True, True, True])


def test_a_leafs_data_replaced_after_the_forward_is_read_afresh_as_in_torch():
    def program(m):
        w = m.tensor(2.0, requires_grad=True)
        x = m.tensor([1.0, 3.0], requires_grad=True)
        loss = (x * w).sum()
        x.data = m.tensor([10.0, 30.0])
        loss.backward()
        return w.grad, x.grad

    assert same_bits_as_torch(program)[0] == "ok"


def test_a_second_backward_raises_and_leaves_the_first_gradients():
    def program(m):
        w = m.tensor(2.0, requires_grad=True)
        loss = (m.ones([2, 2]) * w * w).mean()
        loss.backward()
        try:
            loss.backward()
        except RuntimeError as error:
            return SECOND_TIME in str(error), w.grad
        return (False,)

    assert same_bits_as_torch(program)[0] == "ok"


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_hooks_retain_grad_and_a_gradient_argument_give_torchs_values():
    def program(m):
        seen = []
        w = m.tensor(2.0, requires_grad=True)
        w.register_hook(lambda g: seen.append(g.item()) or g * 2)
        l1 = m.ones([2, 2]) * w
        l1.retain_grad()
        loss = (l1 * l1).mean()
        loss.backward(m.tensor(3.0), retain_graph=True)
        loss.backward(create_graph=True)
        return w.grad, l1.grad, tuple(seen), w.grad.requires_grad

    assert same_bits_as_torch(program)[0] == "ok"


def test_a_loss_made_under_no_grad_refuses_backward_either_way():
    def program(m):
        w = m.tensor(2.0, requires_grad=True)
        with m.no_grad():
            loss = (w * w).mean()
        loss.backward()
        return (w.grad,)

    on = same_either_way(program)
    assert on[0] == "RuntimeError" and "does not require grad" in on[1]
    assert outcome(program, torch)[0] == "RuntimeError"


def test_a_leaf_whose_data_changed_shape_refuses_the_gradient_and_writes_no_grad():
    def program(m):
        w = m.tensor(2.0, requires_grad=True)
        v = m.tensor(1.0, requires_grad=True)
        loss = w * 3.0 + v
        w.data = m.tensor([1.0, 2.0])
        try:
            loss.backward()
        except RuntimeError as error:
            return "shape" in str(error), w.grad is None, v.grad is None
        return (False,)

    assert same_either_way(program) == ("ok", [True, True, True])


def test_the_reference_example_goes_through_the_small_pass_once(monkeypatch):
    taken = []
    real = fastsmall.run
    monkeypatch.setattr(fastsmall, "run", lambda *args: taken.append(real(*args)) or taken[-1])
    x = ng.ones([2, 2])
    w1, w2, w3 = (ng.tensor(v, requires_grad=True) for v in (2.0, 3.0, 4.0))
    l1 = x * w1
    ((l1 + w2) * (l1 * w3)).mean().backward()
    assert taken == [True]
    assert (w1.grad.item(), w2.grad.item(), w3.grad.item()) == (28.0, 8.0, 10.0)


# -- a leaf's AccumulateGrad made by fastpath --------------------------------------------
def test_a_leafs_accumulate_grad_is_one_node_shared_by_its_ops_as_in_torch():
    def program(m):
        w = m.tensor(2.0, requires_grad=True)
        x = m.ones([2, 2])
        a, b, c = x * w, w + x, w.mean()
        nodes = [a.grad_fn.next_functions[1][0], b.grad_fn.next_functions[0][0]]
        nodes.append(c.grad_fn.next_functions[0][0])
        first = nodes[0]
        return (
            all(node is first for node in nodes),
            first.variable is w,
            type(first).__name__,
            first.next_functions == (),
        )

    assert same_bits_as_torch(program) == ("ok", [True, True, "AccumulateGrad", True])


def test_hooks_on_a_leafs_accumulate_grad_run_as_in_torch():
    def program(m):
        seen = []
        w = m.tensor(2.0, requires_grad=True)
        y = m.ones([2, 2]) * w
        node = y.grad_fn.next_functions[1][0]
        node.register_prehook(lambda grads: seen.append(("pre", grads[0].item())))
        node.register_hook(lambda grads, outs: seen.append(("post", outs[0].item())))
        y.sum().backward()
        return w.grad, tuple(seen)

    assert same_bits_as_torch(program) == (
        "ok",
        [bits(np.float32(4.0)), (("pre", 4.0), ("post", 4.0))],
    )


def hooked_leaf(m, shape=()):
    """A leaf ``w`` of value 2, ``y = ones(2, 2) * w`` and ``w``'s AccumulateGrad."""
    w = m.full(shape, 2.0, requires_grad=True)
    y = m.ones([2, 2]) * w
    return w, y, y.grad_fn.next_functions[1][0]


def test_the_hooks_of_a_leafs_node_run_in_torchs_order_and_see_its_grad_as_torch():
    def program(m):
        seen = []
        w, y, node = hooked_leaf(m)
        w.register_hook(lambda g: seen.append(("tensor hook", g.item())))
        node.register_prehook(lambda grads: seen.append(("pre", grads[0].item(), w.grad)))
        w.register_post_accumulate_grad_hook(lambda p: seen.append(("after", p.grad.item())))
        node.register_hook(lambda gi, go: seen.append(("post", gi, go[0].item(), w.grad.item())))
        y.sum().backward()
        return (tuple(seen),)

    assert same_bits_as_torch(program) == (
        "ok",
        [
            (
                ("tensor hook", 4.0),
                ("pre", 4.0, None),
                ("after", 4.0),
                ("post", (), 4.0, 4.0),
            )
        ],
    )


def test_a_pre_hook_on_a_leafs_node_replaces_the_gradient_the_later_hooks_and_grad_see():
    def program(m):
        seen = []
        w, y, node = hooked_leaf(m, [2])
        w.register_hook(lambda g: g * 3)  # the leaf's own hooks run first
        node.register_prehook(lambda grads: (grads[0] + 0.5,))
        node.register_prehook(lambda grads: seen.append(grads[0].tolist()))
        node.register_hook(lambda gi, go: seen.append(go[0].tolist()))
        y.sum().backward()
        return w.grad, tuple(seen)

    assert same_bits_as_torch(program) == (
        "ok",
        [bits(np.array([6.5, 6.5], np.float32)), ([6.5, 6.5], [6.5, 6.5])],
    )


def test_the_hooks_of_a_leafs_node_run_in_every_backward_until_removed():
    def program(m):
        seen = []
        w, y, node = hooked_leaf(m)
        pre = node.register_prehook(lambda grads: seen.append("pre"))
        post = node.register_hook(lambda gi, go: seen.append("post"))
        y.sum().backward(retain_graph=True)
        y.sum().backward(retain_graph=True)
        pre.remove()
        y.sum().backward(retain_graph=True)
        post.remove()
        y.sum().backward()
        return w.grad, tuple(seen)

    assert same_bits_as_torch(program) == (
        "ok",
        [bits(np.float32(16.0)), ("pre", "post", "pre", "post", "post")],
    )


def test_a_leafs_node_kept_alive_carries_its_hooks_into_a_new_graph():
    def program(m):
        seen = []
        w, y, node = hooked_leaf(m)
        node.register_prehook(lambda grads: (grads[0] * 10,))
        y.sum().backward()
        z = w * 3.0
        same = z.grad_fn.next_functions[0][0] is node
        node.register_hook(lambda gi, go: seen.append(go[0].item()))
        z.backward()
        return w.grad, same, tuple(seen)

    assert same_bits_as_torch(program) == ("ok", [bits(np.float32(70.0)), True, (30.0,)])


def hook_outcome(pre=None, post=None, shape=()):
    """A program whose leaf node has these hooks: its outcome, w.grad after it either way."""

    def program(m):
        w, y, node = hooked_leaf(m, shape)
        if pre is not None:
            node.register_prehook(pre(m))
        if post is not None:
            node.register_hook(post(m))
        try:
            y.sum().backward()
        except Exception as error:
            return type(error).__name__, str(error).split(":")[0], w.grad
        return ("ok", w.grad)

    return program


def raises(*args):
    raise ValueError("a hook that fails")


def test_a_pre_hook_on_a_leafs_node_that_raises_stops_the_pass_before_grad_is_written():
    assert same_bits_as_torch(hook_outcome(pre=lambda m: raises)) == (
        "ok",
        ["ValueError", "a hook that fails", None],
    )


def test_a_post_hook_on_a_leafs_node_that_raises_does_so_after_grad_is_written():
    assert same_bits_as_torch(hook_outcome(post=lambda m: raises)) == (
        "ok",
        ["ValueError", "a hook that fails", bits(np.float32(4.0))],
    )


def test_a_post_hook_on_a_leafs_node_that_returns_gradients_is_refused_in_torchs_words():
    found = same_bits_as_torch(hook_outcome(post=lambda m: lambda gi, go: go))
    assert found[1][:2] == [
        "RuntimeError",
        "hook '<lambda>' has returned an incorrect number of values (got 1, but expected 0)",
    ]


def test_a_post_hook_on_a_leafs_node_may_return_an_empty_tuple():
    found = same_bits_as_torch(hook_outcome(post=lambda m: lambda gi, go: ()))
    assert found == ("ok", ["ok", bits(np.float32(4.0))])


def test_a_pre_hook_on_a_leafs_node_that_changes_the_shape_is_refused_in_torchs_words():
    found = same_bits_as_torch(hook_outcome(pre=lambda m: lambda g: (m.ones(3),), shape=[2]))
    assert found[1][:2] == ["RuntimeError", "hook '<lambda>' has changed the size of value"]


def test_a_pre_hook_on_a_leafs_node_that_changes_the_dtype_is_refused():
    found = same_either_way(hook_outcome(pre=lambda m: lambda g: (g[0].double(),)))
    want = outcome(hook_outcome(pre=lambda m: lambda g: (g[0].double(),)), torch)
    assert found[0] == want[0] == "ok"
    assert found[1][0] == want[1][0] == "RuntimeError"
    assert found[1][1].startswith("hook '<lambda>' has changed the type of value (was ")
    assert found[1][2] is None


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_the_hooks_of_a_leafs_node_see_gradients_with_history_under_create_graph():
    def program(m):
        seen = []
        w, y, node = hooked_leaf(m)
        v = m.tensor(3.0, requires_grad=True)
        node.register_prehook(lambda grads: seen.append(grads[0].requires_grad))
        node.register_hook(lambda gi, go: seen.append((gi, go[0].requires_grad)))
        (y * v).sum().backward(create_graph=True)
        return w.grad, w.grad.requires_grad, tuple(seen)

    assert same_bits_as_torch(program) == ("ok", [bits(np.float32(12.0)), True, (True, ((), True))])


def test_autograd_grad_runs_no_hook_of_a_leafs_node_and_backward_inputs_runs_them():
    def program(m):
        seen = []
        w, y, node = hooked_leaf(m)
        v = m.tensor(3.0, requires_grad=True)
        z = (y * v).sum()
        node.register_prehook(lambda grads: seen.append("pre"))
        node.register_hook(lambda gi, go: seen.append("post"))
        (gw,) = m.autograd.grad(z, w, retain_graph=True)
        seen.append("grad")
        z.backward(inputs=[v], retain_graph=True)
        seen.append("inputs v")
        z.backward(inputs=[w])
        return gw, w.grad, v.grad, tuple(seen)

    assert same_bits_as_torch(program) == (
        "ok",
        [
            bits(np.float32(12.0)),
            bits(np.float32(12.0)),
            bits(np.float32(8.0)),
            ("grad", "inputs v", "pre", "post"),
        ],
    )


def test_the_hooks_of_a_leafs_node_run_under_no_grad_and_record_nothing():
    def program(m):
        seen = []
        w, y, node = hooked_leaf(m)
        node.register_prehook(lambda grads: seen.append((grads[0] * w).requires_grad))
        loss = y.sum()
        with m.no_grad():
            loss.backward()
        return w.grad, tuple(seen)

    assert same_bits_as_torch(program) == ("ok", [bits(np.float32(4.0)), (False,)])


def test_a_small_graph_whose_leaf_node_has_hooks_goes_the_general_way(monkeypatch):
    taken = []
    real = fastsmall.run
    monkeypatch.setattr(fastsmall, "run", lambda *args: taken.append(real(*args)) or taken[-1])
    w, y, node = hooked_leaf(ng)
    node.register_prehook(lambda grads: (grads[0] * 2,))
    y.sum().backward()
    assert taken == [False]
    assert w.grad.item() == 8.0


def test_the_hooks_of_a_leafs_node_in_a_graph_too_large_for_the_small_pass():
    def program(m):
        seen = []
        w = m.tensor([2.0, -1.0], requires_grad=True)
        y = w * 1.5
        for _ in range(80):
            y = y * 0.5 + w
        node = y.grad_fn.next_functions[1][0]
        node.register_prehook(lambda grads: (grads[0] * 2,))
        node.register_hook(lambda gi, go: seen.append(go[0]))
        y.sum().backward()
        return (w.grad, *seen)

    on = same_bits_as_torch(program)
    assert on[1][0] == on[1][1]


def test_a_leaf_used_twice_has_its_nodes_pre_hook_called_once_with_the_sum():
    def program(m):
        seen = []
        w = m.tensor([1.5, -2.0], requires_grad=True)
        y = w * w + w * 3.0
        node = y.grad_fn.next_functions[1][0].next_functions[0][0]
        node.register_prehook(lambda grads: seen.append(grads[0].tolist()))
        y.sum().backward()
        return w.grad, tuple(map(tuple, seen))

    assert same_bits_as_torch(program) == (
        "ok",
        [bits(np.array([6.0, -1.0], np.float32)), ((6.0, -1.0),)],
    )


def test_a_pre_hook_that_removes_itself_and_adds_a_post_hook_mid_pass_acts_as_in_torch():
    def program(m):
        seen, handles = [], []
        w, y, node = hooked_leaf(m)

        def pre(grads):
            seen.append("pre")
            handles[0].remove()
            node.register_hook(lambda gi, go: seen.append("post"))

        handles.append(node.register_prehook(pre))
        y.sum().backward(retain_graph=True)
        y.sum().backward()
        return w.grad, tuple(seen)

    assert same_bits_as_torch(program) == ("ok", [bits(np.float32(8.0)), ("pre", "post", "post")])


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_a_raising_pre_hook_on_a_leafs_node_under_detect_anomaly_leaves_no_grad():
    def program(m):
        w, y, node = hooked_leaf(m)
        node.register_prehook(raises)
        try:
            with m.autograd.detect_anomaly():
                y.sum().backward()
        except ValueError as error:
            return str(error), w.grad
        return ("no error",)

    assert same_bits_as_torch(program) == ("ok", ["a hook that fails", None])


def test_the_post_hooks_of_two_leaves_nodes_each_see_their_own_gradient_and_grad():
    def program(m):
        seen = []
        a = m.tensor([1.0, 2.0], requires_grad=True)
        b = m.tensor([3.0, 4.0], requires_grad=True)
        y = a * b
        na, nb = (edge[0] for edge in y.grad_fn.next_functions)
        na.register_hook(lambda gi, go: seen.append(("a", go[0].tolist(), a.grad.tolist())))
        nb.register_hook(lambda gi, go: seen.append(("b", go[0].tolist(), b.grad.tolist())))
        nb.register_prehook(lambda grads: (grads[0] * 0.5,))
        y.sum().backward()
        return a.grad, b.grad, tuple(sorted(seen))

    assert same_bits_as_torch(program)[1][2] == (
        ("a", [3.0, 4.0], [3.0, 4.0]),
        ("b", [0.5, 1.0], [0.5, 1.0]),
    )


def test_a_pre_hook_on_a_leafs_node_adds_to_a_grad_already_there():
    def program(m):
        seen = []
        w = m.tensor([1.0, 2.0], requires_grad=True)
        w.grad = m.tensor([10.0, 10.0])
        y = w * 2.0
        node = y.grad_fn.next_functions[0][0]
        node.register_prehook(lambda grads: seen.append((grads[0].tolist(), w.grad.tolist())))
        node.register_prehook(lambda grads: (grads[0] + 1.0,))
        y.sum().backward()
        return w.grad, tuple(seen)

    assert same_bits_as_torch(program) == (
        "ok",
        [bits(np.array([13.0, 13.0], np.float32)), (([2.0, 2.0], [10.0, 10.0]),)],
    )


@pytest.mark.parametrize(
    "returned, kind",
    [(lambda g: [g[0] * 2], "list"), (lambda g: g[0] * 2, "Tensor")],
    ids=["a list", "a bare tensor"],
)
def test_a_node_hook_returning_anything_but_a_tuple_is_refused_in_torchs_words(returned, kind):
    found = same_bits_as_torch(hook_outcome(pre=lambda m: returned))
    assert found == ("ok", ["TypeError", f"expected tuple, but hook returned '{kind}'", None])


def test_an_op_nodes_post_hook_returning_a_list_is_refused_in_torchs_words():
    def program(m):
        x = m.tensor([1.0], requires_grad=True)
        y = x * 2.0
        y.grad_fn.register_hook(lambda gi, go: list(gi))
        y.sum().backward()
        return (x.grad,)

    assert same_bits_as_torch(program) == ("TypeError", "expected tuple, but hook returned 'list'")
