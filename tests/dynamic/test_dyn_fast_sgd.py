"""The fast layer's plain SGD step (``naivegraph.optim.fastsgd``) leaves what the readable
``SGD.step`` leaves: the same parameter bits, version counters, optimiser state and
errors; anything but plain SGD runs the readable step.  torch is the oracle for values.
"""

from __future__ import annotations

import numpy as np
import pytest
from fast_switch import fast_layer_on

import naivegraph as ng
from naivegraph import fast
from naivegraph.optim import Optimizer

pytestmark = pytest.mark.usefixtures(fast_layer_on.__name__)  # they compare on with off

SHAPES = [(7, 5), (5,), (5, 3), (3,)]
SPECIAL = [1.5, -2.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, 3.0, -7.25, 1e38, -1e38]


def _params(dtype: str, grad_dtype: str, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    params = []
    for i, shape in enumerate(SHAPES):
        p = ng.from_numpy(rng.standard_normal(shape).astype(dtype)).requires_grad_()
        if i != 2:  # one parameter without a gradient: skipped, no state, no version bump
            g = rng.standard_normal(shape) * 10.0 ** rng.integers(-30, 30, shape)
            g.flat[: len(SPECIAL)] = SPECIAL[: g.size]
            with np.errstate(over="ignore"):  # 1e38 is inf in float16
                p.grad = ng.from_numpy(g.astype(grad_dtype))
        params.append(p)
    return params


def _after_steps(make_optimizer, dtype: str, grad_dtype: str, steps: int = 3) -> tuple:
    params = _params(dtype, grad_dtype)
    opt = make_optimizer(params)
    with np.errstate(all="ignore"):  # inf - inf: NaN, as in torch
        for _ in range(steps):
            opt.step()
    state = {i: sorted(opt.state[id(p)]) for i, p in enumerate(params) if id(p) in opt.state}
    return (
        [(p._data.dtype.str, p._data.shape, p._data.tobytes(), p._version) for p in params],
        state,
    )


def _same_on_and_off(make_optimizer, dtype: str, grad_dtype: str) -> tuple:
    on = _after_steps(make_optimizer, dtype, grad_dtype)
    with fast.disabled():
        off = _after_steps(make_optimizer, dtype, grad_dtype)
    assert on == off
    return on


OPTIMIZERS = {
    "lr float": lambda ps: ng.optim.SGD(ps, lr=0.01),
    "lr int": lambda ps: ng.optim.SGD(ps, lr=1),
    "lr 0": lambda ps: ng.optim.SGD(ps, lr=0.0),
    "two groups": lambda ps: ng.optim.SGD([{"params": ps[:2]}, {"params": ps[2:], "lr": 0.3}]),
    "momentum": lambda ps: ng.optim.SGD(ps, lr=0.01, momentum=0.9),
    "weight decay": lambda ps: ng.optim.SGD(ps, lr=0.01, weight_decay=0.1),
    "maximize": lambda ps: ng.optim.SGD(ps, lr=0.01, maximize=True),
    "one group with momentum": lambda ps: ng.optim.SGD(
        [{"params": ps[:2]}, {"params": ps[2:], "momentum": 0.5}], lr=0.1
    ),
    "numpy lr": lambda ps: ng.optim.SGD(ps, lr=np.float64(0.01)),
}


@pytest.mark.parametrize("name", OPTIMIZERS)
@pytest.mark.parametrize(
    "dtype, grad_dtype",
    [("float32", "float32"), ("float64", "float64"), ("float16", "float16")],
)
def test_sgd_steps_leave_the_readable_steps_bits_versions_and_state(name, dtype, grad_dtype):
    params, state = _same_on_and_off(OPTIMIZERS[name], dtype, grad_dtype)
    assert [version for *_, version in params] == [3, 3, 0, 3]
    assert sorted(state) == [0, 1, 3]


def test_plain_sgd_runs_the_fast_loop_and_everything_else_the_readable_step():
    seen = []

    class Spy(ng.optim.SGD):
        def _updates(self):  # a subclass redefining the walk: its own is used
            seen.append("updates")
            return super()._updates()

    params = _params("float32", "float32")
    Spy(params, lr=0.1).step()
    assert seen == ["updates"]

    class Writer(ng.optim.SGD):
        @staticmethod
        def _write(p, delta):
            seen.append("write")
            Optimizer._write(p, delta)

    Writer(params, lr=0.1).step()
    assert seen == ["updates"] + ["write"] * 3


def test_a_read_only_parameter_raises_numpys_error_after_the_same_updates():
    def run() -> tuple:
        params = _params("float32", "float32")
        params[1]._data.flags.writeable = False
        opt = ng.optim.SGD(params, lr=0.1)
        with pytest.raises(ValueError, match="read-only") as raised:
            opt.step()
        return (
            str(raised.value),
            [(p._data.tobytes(), p._version) for p in params],
            sorted(i for i, p in enumerate(params) if id(p) in opt.state),
        )

    on = run()
    with fast.disabled():
        off = run()
    assert on == off
    assert [version for _, version in on[1]] == [1, 0, 0, 0]


def test_torch_agrees_on_plain_sgds_values_and_versions():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    w0, g0 = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    seen = []
    for lib in (ng, torch):
        w = lib.tensor(w0.astype(np.float32), requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.25)
        for _ in range(2):
            w.grad = lib.tensor(g0.astype(np.float32))
            opt.step()
        seen.append((np.asarray(w.detach().numpy()), w._version, str(w.dtype).split(".")[-1]))
    np.testing.assert_allclose(seen[0][0], seen[1][0], rtol=1e-6)
    assert seen[0][1:] == seen[1][1:] == (2, "float32")
