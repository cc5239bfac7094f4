"""The fast layer changes speed, never results: on and off agree bit for bit.

The whole dynamic suite and the differential fuzzers also run with the layer off
(``NAIVEGRAPH_FAST=0``, a step of ``make test``); these tests run chosen programs both
ways in one process and compare every array exactly.
"""

import gc

import numpy as np
import pytest
from fast_switch import fast_layer_on

import naivegraph as ng
from naivegraph import fast
from naivegraph.ops.core import promote, quiet

pytestmark = pytest.mark.usefixtures(fast_layer_on.__name__)  # they compare on with off


def _reference_example():
    x = ng.ones([2, 2])
    w1 = ng.tensor(2.0, requires_grad=True)
    w2 = ng.tensor(3.0, requires_grad=True)
    l3 = x * w1 + w2
    loss = (l3 * (x * w1 * 4)).mean()
    loss.backward()
    return [loss, w1.grad, w2.grad]


def _mlp_steps():
    ng.manual_seed(0)
    model = ng.nn.Sequential(ng.nn.Linear(4, 8), ng.nn.ReLU(), ng.nn.Linear(8, 3))
    opt = ng.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = ng.randn(16, 4)
    y = ng.randint(0, 3, (16,))
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = ng.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return losses + [p.detach() for p in model.parameters()]


def _hooks_retain_and_double_backward():
    x = ng.tensor([1.0, -2.0, 3.0], requires_grad=True)
    seen = []
    x.register_hook(lambda g: g * 2)
    a = x.exp()
    a.retain_grad()
    a.register_hook(lambda g: seen.append(g.clone()))
    y = (a * x).sum()
    (gx,) = ng.autograd.grad(y, x, create_graph=True)
    gx.sum().backward(retain_graph=True)
    y.backward()
    return [gx, x.grad, a.grad] + seen


def _views_and_in_place():
    x = ng.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    a = x.t() * 1
    a.t().view(-1).mul_(ng.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
    a[0].exp_()
    (a * a).sum().backward()
    return [a.detach(), x.grad]


def _long_chain():
    x = ng.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(2000):
        y = y * 0.999 + 0.001
    y.backward()
    return [y, x.grad]


PROGRAMS = [
    _reference_example,
    _mlp_steps,
    _hooks_retain_and_double_backward,
    _views_and_in_place,
    _long_chain,
]


def _arrays(results):
    return [np.array(r._data if isinstance(r, ng.Tensor) else r) for r in results]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__.strip("_") for p in PROGRAMS])
def test_results_are_bit_for_bit_the_same_with_the_fast_layer_off(program):
    on = _arrays(program())
    with fast.disabled():
        off = _arrays(program())
    assert len(on) == len(off)
    for got, want in zip(off, on):
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got.tobytes() == want.tobytes()


def test_reference_numbers_hold_with_the_fast_layer_off():
    with fast.disabled():
        loss, g1, g2 = _reference_example()
    assert loss.item() == 40.0 and g1.item() == 28.0 and g2.item() == 8.0


def test_disabled_switches_off_and_restores():
    before = fast.enabled
    with fast.disabled():
        assert fast.enabled is False
    assert fast.enabled is before


def test_disabled_restores_the_switch_after_an_error():
    before = fast.enabled
    with pytest.raises(ZeroDivisionError):
        with fast.disabled():
            1 / 0
    assert fast.enabled is before


def test_the_garbage_collector_is_paused_only_by_the_fast_layer():
    states = []
    x = ng.tensor(1.0, requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: states.append(gc.isenabled()))
    assert gc.isenabled()
    y.backward(retain_graph=True)
    with fast.disabled():
        y.backward()
    assert states == [False, True]
    assert gc.isenabled()


def test_is_unshared_sees_only_the_callers_own_reference():
    value = np.zeros(3)
    assert fast.is_unshared(value)  # a .grad may then keep it without a copy
    alias = [value]
    assert not fast.is_unshared(value)
    alias.clear()
    with fast.disabled():
        assert not fast.is_unshared(value)  # off: always copied


def test_the_core_shares_one_meta_per_shape_and_dtype_either_way():
    from naivegraph.dynamic.node import meta_of

    a = np.zeros((2, 3))
    assert meta_of(a) is meta_of(np.ones((2, 3)))
    assert meta_of(a) is not meta_of(np.ones((2, 3), np.float32))
    with fast.disabled():
        assert meta_of(a) is meta_of(np.ones((2, 3)))
        assert meta_of(a).shape == (2, 3)
    x = ng.tensor([1.0], requires_grad=True)
    with fast.disabled():
        name = type((x * 2).grad_fn).__name__
    assert name == type((x * 2).grad_fn).__name__ == "MulBackward0"


def _error_state_seen_by_an_op():
    """numpy's error state as an op's forward sees it (every forward is ``quiet``)."""
    seen = []
    quiet(lambda a: seen.append(np.geterr()) or a)(np.ones(1))
    return seen[0]


def test_ops_run_with_every_floating_point_error_ignored_either_way():
    quiet_state = {"divide": "ignore", "over": "ignore", "under": "ignore", "invalid": "ignore"}
    assert _error_state_seen_by_an_op() == quiet_state
    with fast.disabled():
        assert _error_state_seen_by_an_op() == quiet_state


def test_the_callers_error_state_is_restored_after_ops_and_backward():
    with np.errstate(all="raise"):
        x = ng.tensor([0.0, 1.0], requires_grad=True)
        y = (ng.tensor([1.0, 1.0]) / x).sum()  # 1 / 0 raises nothing: torch gives inf
        y.backward()
        assert np.geterr()["divide"] == "raise"
        with pytest.raises(FloatingPointError):
            np.array(1.0) / np.array(0.0)
    assert x.grad.tolist()[1] == -1.0 and np.isinf(x.grad.tolist()[0])


def test_a_bufsize_the_caller_set_is_kept_while_errors_are_ignored():
    with np.errstate(all="raise"):
        previous = np.setbufsize(4096)
        try:
            sizes = []
            quiet(lambda: sizes.append((np.getbufsize(), np.geterr()["over"])))()
        finally:
            np.setbufsize(previous)
    assert sizes == [(4096, "ignore")]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32, np.bool_])
@pytest.mark.parametrize("number", [2, 2.5, True, 1j])
def test_number_operands_skip_promotion_only_where_it_changes_nothing(dtype, number):
    for array in (np.ones(3, dtype), np.array(1, dtype)):
        for x, y in ((array, number), (number, array)):
            if fast.promotes_to_itself(x, y):
                px, py = promote(x, y)
                assert px is x and py is y
    with fast.disabled():
        assert not fast.promotes_to_itself(np.ones(3), 2.0)


def test_a_float32_tensor_times_a_python_float_stays_float32_either_way():
    x = ng.tensor([1.5, 2.5], dtype=ng.float32, requires_grad=True)
    on = x * 0.1
    with fast.disabled():
        off = x * 0.1
    assert on.dtype == off.dtype == ng.float32
    assert on._data.tobytes() == off._data.tobytes()


@pytest.fixture(params=["float16", "float32", "float64"])
def default_float(request):
    """Each floating default dtype for one test, then the one before."""
    before = ng.get_default_dtype()
    ng.set_default_dtype(getattr(ng, request.param))
    yield np.dtype(request.param)
    ng.set_default_dtype(before)


def test_a_python_float_becomes_the_default_dtypes_bits_on_and_off(default_float):
    # the layer rounds it to float32 with one C cast (fast.float_scalar): numpy's cast's
    # bits, overflow to inf and NaN left to numpy's own cast
    values = [2.0, 0.1, 1 / 3, -0.0, 1e-50, 1e-45, 7e-46, 3.4028235e38, 3.4028236e38]
    values += [1e308, -1e300, float("inf"), float("-inf"), float("nan"), 65504.0, 65520.0]
    for value in values:
        for requires_grad in (False, True):
            on = ng.tensor(value, requires_grad=requires_grad)
            with fast.disabled():
                off = ng.tensor(value, requires_grad=requires_grad)
            assert on.dtype == off.dtype == default_float
            assert on._data.shape == off._data.shape == ()
            assert on._data.tobytes() == off._data.tobytes(), value
            assert on.requires_grad is off.requires_grad is requires_grad and on.is_leaf


def test_the_float_scalar_trick_steps_aside_for_what_numpys_cast_decides():
    f32 = np.dtype(np.float32)
    assert fast.float_scalar(0.1, f32).tobytes() == np.float32(0.1).tobytes()
    assert fast.float_scalar(1e300, f32) is None  # an overflow: numpy's cast gives inf
    assert fast.float_scalar(float("nan"), f32) is None
    assert fast.float_scalar(0.1, np.dtype(np.float16)) is None
    with fast.disabled():
        assert fast.float_scalar(0.1, f32) is None


def _slot(seam):
    """What ``seam.owner.name`` holds now (None: a class slot it inherits)."""
    if isinstance(seam.owner, type):
        return vars(seam.owner).get(seam.name)
    return getattr(seam.owner, seam.name)


def test_every_seam_holds_the_readable_function_off_and_the_fast_one_on_again_and_again():
    assert len(fast.SEAMS) == 35
    for _ in range(3):
        with fast.disabled():
            assert [_slot(s) for s in fast.SEAMS] == [s.readable for s in fast.SEAMS]
        assert [_slot(s) for s in fast.SEAMS] == [s.fast for s in fast.SEAMS]


def test_no_seam_holds_the_same_function_both_ways():
    assert all(seam.fast is not seam.readable for seam in fast.SEAMS)
    assert len({(seam.owner, seam.name) for seam in fast.SEAMS}) == len(fast.SEAMS)


@pytest.mark.parametrize(
    "make",
    [
        lambda: ng.ones([2, 2]),
        lambda: ng.ones(3, requires_grad=True),
        lambda: ng.zeros(2, 3, dtype=ng.float64, requires_grad=True),
        lambda: ng.empty(size=(2,), dtype=ng.int32),
        lambda: ng.ones(2, dtype=ng.bool_),
        lambda: ng.full((2,), 0.1, dtype=ng.float16),
        lambda: ng.tensor(2.0, requires_grad=True),
        lambda: ng.tensor([1.0, 2.0], dtype=ng.float64, requires_grad=True),
    ],
)
def test_new_leaves_are_the_same_tensors_with_the_layer_on_and_off(make):
    on = make()
    with fast.disabled():
        off = make()
    assert on.dtype == off.dtype and on.shape == off.shape
    assert on._data.tobytes() == off._data.tobytes()
    assert on.requires_grad is off.requires_grad and on.is_leaf and on.grad_fn is None


@pytest.mark.parametrize(
    ("make", "error", "phrase"),
    [
        (lambda: ng.ones(2, dtype=ng.int64, requires_grad=True), RuntimeError, "floating point"),
        (lambda: ng.tensor(2, requires_grad=True), RuntimeError, "floating point"),
        (lambda: ng.ones(-1), RuntimeError, "negative dimension -1"),
    ],
)
def test_new_leaves_raise_the_same_errors_with_the_layer_on_and_off(make, error, phrase):
    with pytest.raises(error, match=phrase) as on:
        make()
    with fast.disabled(), pytest.raises(error, match=phrase) as off:
        make()
    assert str(on.value) == str(off.value)
