"""``fast.where``: the masked zero of relu and the masked VJPs, by bits, is np.where's.

relu, its gradient and most masked VJPs are ``np.where(c, 0, x)``; the fast layer
computes those as a bitwise AND with a mask.  Every value must come out as numpy's where
gives it: +0.0 where masked, and inf, NaN (with its sign) and -0.0 unchanged where kept.
"""

import numpy as np
import pytest
from fast_switch import fast_layer_on

import naivegraph as ng
from naivegraph import fast

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.usefixtures(fast_layer_on.__name__)  # they compare on with off

BIG = fast.MASKED_ZERO_MIN_SIZE  # the trick's smallest size: tests sit on and above it


def _awkward_values(dtype, n: int, seed: int = 0) -> np.ndarray:
    """Normal values with -0.0, +-NaN and +-inf sprinkled in."""
    rng = np.random.default_rng(seed)
    values = rng.standard_normal(n).astype(dtype)
    spots = rng.permutation(n)[:250].reshape(5, 50)
    values[spots[0]] = -0.0
    values[spots[1]] = np.nan
    values[spots[2]] = -np.nan
    values[spots[3]] = np.inf
    values[spots[4]] = -np.inf
    return values


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("size", [BIG, BIG + 3, 4 * BIG + 1])
@pytest.mark.parametrize("zero_side", ["x", "y"])
@pytest.mark.parametrize("zero", [0, 0.0])
def test_masked_zero_gives_np_where_bits_for_every_special_value(dtype, size, zero_side, zero):
    values = _awkward_values(dtype, size)
    condition = np.random.default_rng(1).random(size) < 0.5
    args = (condition, zero, values) if zero_side == "x" else (condition, values, zero)

    found = fast.masked_zero(*args)
    expected = np.where(*args)

    assert found is not None
    assert found.dtype == expected.dtype == dtype
    assert found.tobytes() == expected.tobytes()
    assert found.flags.c_contiguous


@pytest.mark.parametrize(
    "case",
    [
        "minus zero",
        "False",
        "one",
        "small",
        "integer values",
        "complex values",
        "big-endian",
        "float condition",
        "broadcast",
        "transposed",
        "layer off",
    ],
)
def test_masked_zero_steps_aside_where_its_bits_could_differ(case):
    values = _awkward_values(np.float32, BIG).reshape(64, -1)
    condition = values > 0
    zero = {"minus zero": -0.0, "False": False, "one": 1}.get(case, 0)
    if case == "small":
        values, condition = values[:2], condition[:2]
    elif case == "integer values":
        values = np.arange(values.size).reshape(values.shape)
    elif case == "complex values":
        values = values.astype(np.complex64)
    elif case == "big-endian":
        values = values.astype(">f4")
    elif case == "float condition":
        condition = condition.astype(np.float32)
    elif case == "broadcast":
        condition = condition[:1]
    elif case == "transposed":
        values, condition = values.T, condition.T
    if case == "layer off":
        with fast.disabled():
            assert fast.masked_zero(condition, zero, values) is None
    else:
        assert fast.masked_zero(condition, zero, values) is None


def test_masked_zero_leaves_its_inputs_unchanged():
    values = _awkward_values(np.float64, BIG)
    condition = values > 0
    before = values.tobytes(), condition.tobytes()

    fast.masked_zero(condition, 0, values)

    assert (values.tobytes(), condition.tobytes()) == before


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_relu_and_its_gradient_match_torch_and_the_readable_path_bit_for_bit(dtype):
    data = _awkward_values(dtype, 2 * BIG, seed=3).reshape(2, -1)
    seed = _awkward_values(dtype, 2 * BIG, seed=4).reshape(2, -1)

    def run():
        x = ng.tensor(data, requires_grad=True)
        y = x.relu()
        y.backward(ng.tensor(seed))
        return y.detach().numpy(), x.grad.numpy()

    fast_out, fast_grad = run()
    with fast.disabled():
        plain_out, plain_grad = run()
    tx = torch.tensor(data, requires_grad=True)
    ty = tx.relu()
    ty.backward(torch.tensor(seed))

    assert fast_out.tobytes() == plain_out.tobytes() == ty.detach().numpy().tobytes()
    assert fast_grad.tobytes() == plain_grad.tobytes() == tx.grad.numpy().tobytes()


def test_where_and_clamp_gradients_keep_infinite_and_nan_gradients_out_of_masked_places():
    data = _awkward_values(np.float32, BIG, seed=5)
    seed = _awkward_values(np.float32, BIG, seed=6)

    def run(lib):
        x = lib.tensor(data, requires_grad=True)
        y = lib.where(x > 0, x, lib.zeros_like(x)) + x.clamp(min=-0.5, max=0.5)
        y.backward(lib.tensor(seed))
        return x.grad.numpy()

    fast_grad = run(ng)
    with fast.disabled():
        plain_grad = run(ng)

    assert fast_grad.tobytes() == plain_grad.tobytes() == run(torch).tobytes()
