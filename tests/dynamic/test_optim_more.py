"""RMSprop, Adagrad, learning-rate schedulers and optimiser state dicts, step for step
against torch."""

import io
import warnings

import numpy as np
import pytest

import naivegraph as ng


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [-1.0, 1.0, 1.0], [0.0, -2.0, 0.5]])
Y = np.array([[1.0], [-0.5], [0.25], [2.0]])
START = [
    np.array([[0.1, -0.2, 0.3], [0.4, 0.0, -0.1]]),
    np.array([0.05, -0.05]),
    np.array([[0.3, -0.6]]),
]


def make_params(lib):
    return [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in START]


def train_steps(lib, params, optimizer, steps, scheduler=None):
    """Fit a 3-2-1 tanh network to X, Y; the parameters (and lr) after every step."""
    history = []
    for _ in range(steps):
        w, b, v = params
        hidden = (lib.tensor(X) @ w.t() + b).tanh()
        loss = ((hidden @ v.t() - lib.tensor(Y)) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if scheduler is not None:
            scheduler.step()
        history.append(
            [p.detach().numpy().copy() for p in params] + [optimizer.param_groups[0]["lr"]]
        )
    return history


def run(lib, make_optimizer, steps=20, make_scheduler=None):
    params = make_params(lib)
    optimizer = make_optimizer(lib, params)
    scheduler = make_scheduler(lib, optimizer) if make_scheduler else None
    return train_steps(lib, params, optimizer, steps, scheduler)


def assert_same_history(ours, theirs, rtol=1e-10):
    """Equal to rounding: the network's tanh may differ from torch's by a few units in the
    last place (its kernel depends on the CPU: AVX2, AVX-512), and 20 steps carry that
    forward; centred RMSprop's sqrt(v - mean**2) cancels up to three digits of it.  A
    mistake in an update rule is off by far more (1e-3 after one step).  rtol=0: bitwise,
    for naivegraph against itself."""
    assert len(ours) == len(theirs)
    for step, (a, b) in enumerate(zip(ours, theirs)):
        for x, y in zip(a, b):
            np.testing.assert_allclose(
                x, y, rtol=rtol, atol=1e-12 if rtol else 0, err_msg=f"step {step + 1}"
            )


OPTIMIZERS = {
    "RMSprop defaults": lambda lib, ps: lib.optim.RMSprop(ps),
    "RMSprop lr alpha eps": lambda lib, ps: lib.optim.RMSprop(ps, lr=0.05, alpha=0.9, eps=1e-6),
    "RMSprop momentum": lambda lib, ps: lib.optim.RMSprop(ps, lr=0.01, momentum=0.9),
    "RMSprop centered": lambda lib, ps: lib.optim.RMSprop(ps, lr=0.01, centered=True),
    "RMSprop centered alpha<0.5": lambda lib, ps: lib.optim.RMSprop(ps, alpha=0.3, centered=True),
    "RMSprop weight decay + momentum + centered": lambda lib, ps: lib.optim.RMSprop(
        ps, lr=0.02, weight_decay=0.1, momentum=0.5, centered=True
    ),
    "Adagrad defaults": lambda lib, ps: lib.optim.Adagrad(ps),
    "Adagrad lr": lambda lib, ps: lib.optim.Adagrad(ps, lr=0.3),
    "Adagrad lr_decay": lambda lib, ps: lib.optim.Adagrad(ps, lr=0.3, lr_decay=0.05),
    "Adagrad weight decay + accumulator": lambda lib, ps: lib.optim.Adagrad(
        ps, lr=0.2, weight_decay=0.01, initial_accumulator_value=0.1, eps=1e-6
    ),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_matches_torch_step_for_step_for_20_steps(torch, name):
    assert_same_history(run(ng, OPTIMIZERS[name]), run(torch, OPTIMIZERS[name]))


@pytest.mark.parametrize("name", ["RMSprop", "Adagrad"])
def test_defaults_are_torchs(torch, name):
    ours = getattr(ng.optim, name)(make_params(ng)).defaults
    theirs = getattr(torch.optim, name)(make_params(torch)).defaults
    assert ours == {k: theirs[k] for k in ours}
    assert set(theirs) - set(ours) <= {
        "foreach",
        "maximize",
        "differentiable",
        "capturable",
        "fused",
    }


@pytest.mark.parametrize(
    "name,kwargs,message",
    [
        ("RMSprop", {"lr": -1}, "Invalid learning rate: -1"),
        ("RMSprop", {"alpha": -1}, "Invalid alpha value: -1"),
        ("RMSprop", {"eps": -1}, "Invalid epsilon value: -1"),
        ("RMSprop", {"momentum": -1}, "Invalid momentum value: -1"),
        ("RMSprop", {"weight_decay": -1}, "Invalid weight_decay value: -1"),
        ("Adagrad", {"lr": -1}, "Invalid learning rate: -1"),
        ("Adagrad", {"lr_decay": -1}, "Invalid lr_decay value: -1"),
        ("Adagrad", {"eps": -1}, "Invalid epsilon value: -1"),
        ("Adagrad", {"initial_accumulator_value": -1}, "Invalid initial_accumulator_value value"),
    ],
)
def test_bad_settings_are_refused_with_torchs_message(torch, name, kwargs, message):
    with pytest.raises(ValueError, match=message):
        getattr(torch.optim, name)(make_params(torch), **kwargs)
    with pytest.raises(ValueError, match=message):
        getattr(ng.optim, name)(make_params(ng), **kwargs)


# -- parameter groups -------------------------------------------------------------------------
def test_parameter_groups_take_their_own_settings_as_torch(torch):
    def make(lib, ps):
        return lib.optim.RMSprop(
            [{"params": ps[:2]}, {"params": ps[2], "lr": 0.05}], lr=0.01, momentum=0.5
        )

    assert_same_history(run(ng, make), run(torch, make))
    groups = make(ng, make_params(ng)).param_groups
    assert [g["lr"] for g in groups] == [0.01, 0.05] and groups[1]["momentum"] == 0.5


def test_a_parameter_in_two_groups_is_refused():
    w = ng.ones(1, requires_grad=True)
    with pytest.raises(ValueError, match="more than one parameter group"):
        ng.optim.SGD([{"params": [w]}, {"params": [w]}], lr=0.1)


# -- schedulers -------------------------------------------------------------------------------
SCHEDULERS = {
    "StepLR": lambda lib, opt: lib.optim.lr_scheduler.StepLR(opt, step_size=3),
    "StepLR gamma": lambda lib, opt: lib.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.7),
    "ExponentialLR": lambda lib, opt: lib.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9),
}


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_scheduler_changes_lr_and_parameters_as_torch_for_20_epochs(torch, name):
    def sgd(lib, ps):
        return lib.optim.SGD(ps, lr=0.5, momentum=0.9)

    ours = run(ng, sgd, make_scheduler=SCHEDULERS[name])
    theirs = run(torch, sgd, make_scheduler=SCHEDULERS[name])
    assert [h[-1] for h in ours] == [h[-1] for h in theirs]  # the lr, exactly
    assert_same_history(ours, theirs)


def test_step_lr_sequence_and_get_last_lr_match_torch(torch):
    def lrs(lib):
        opt = lib.optim.SGD(make_params(lib), lr=1.0)
        scheduler = lib.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
        seen = []
        for _ in range(7):
            seen.append(scheduler.get_last_lr())
            opt.step()
            scheduler.step()
        return seen, opt.param_groups[0]["initial_lr"], scheduler.last_epoch

    assert lrs(ng) == lrs(torch) == ([[1.0], [1.0], [0.5], [0.5], [0.25], [0.25], [0.125]], 1.0, 7)


def test_scheduler_refuses_what_is_not_an_optimizer(torch):
    with pytest.raises(TypeError, match="str is not an Optimizer"):
        torch.optim.lr_scheduler.StepLR("x", 2)
    with pytest.raises(TypeError, match="str is not an Optimizer"):
        ng.optim.lr_scheduler.StepLR("x", 2)
    with pytest.raises(ValueError, match="step_size must be a positive integer"):
        ng.optim.lr_scheduler.StepLR(ng.optim.SGD(make_params(ng), lr=0.1), 0)


def test_scheduler_state_dict_resumes_the_schedule(torch):
    opt = ng.optim.SGD(make_params(ng), lr=1.0)
    scheduler = ng.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    for _ in range(3):
        scheduler.step()
    state = scheduler.state_dict()
    assert "optimizer" not in state and state["last_epoch"] == 3
    other = ng.optim.lr_scheduler.StepLR(ng.optim.SGD(make_params(ng), lr=1.0), step_size=5)
    other.load_state_dict(state)
    assert (other.step_size, other.last_epoch, other.get_last_lr()) == (2, 3, [0.5])


# -- optimiser state dicts ----------------------------------------------------------------------
@pytest.mark.parametrize("name", ["RMSprop momentum", "Adagrad lr_decay"])
def test_state_dict_saved_and_loaded_resumes_training_exactly(name):
    make = OPTIMIZERS[name]
    straight = run(ng, make, steps=20)

    params = make_params(ng)
    optimizer = make(ng, params)
    history = train_steps(ng, params, optimizer, 10)
    buffer = io.BytesIO()
    ng.save({"optimizer": optimizer.state_dict(), "params": params}, buffer)
    buffer.seek(0)
    saved = ng.load(buffer)

    resumed_params = [
        ng.tensor(p.tolist(), dtype=ng.float64, requires_grad=True) for p in saved["params"]
    ]
    resumed = make(ng, resumed_params)
    resumed.load_state_dict(saved["optimizer"])
    history += train_steps(ng, resumed_params, resumed, 10)
    assert_same_history(history, straight, rtol=0)


def test_state_dict_layout_matches_torch(torch):
    def layout(lib):
        params = make_params(lib)
        optimizer = lib.optim.RMSprop(params, momentum=0.9)
        train_steps(lib, params, optimizer, 2)
        state = optimizer.state_dict()
        return (
            {i: sorted(entry) for i, entry in state["state"].items()},
            [g["params"] for g in state["param_groups"]],
        )

    assert (
        layout(ng)
        == layout(torch)
        == ({i: ["momentum_buffer", "square_avg", "step"] for i in range(3)}, [[0, 1, 2]])
    )


def test_adagrad_state_exists_before_the_first_step_as_torch(torch):
    def state(lib):
        optimizer = lib.optim.Adagrad(make_params(lib), initial_accumulator_value=0.5)
        return {
            i: {
                k: np.asarray(v.tolist() if hasattr(v, "tolist") else v).tolist()
                for k, v in entry.items()
            }
            for i, entry in optimizer.state_dict()["state"].items()
        }

    assert state(ng) == state(torch)
    assert state(ng)[1] == {"step": 0, "sum": [0.5, 0.5]}


def test_state_dict_values_match_torch(torch):
    def state(lib):
        params = make_params(lib)
        optimizer = lib.optim.SGD(params, lr=0.1, momentum=0.9)
        train_steps(lib, params, optimizer, 3)
        return optimizer.state_dict()

    ours, theirs = state(ng), state(torch)
    for i in range(3):
        np.testing.assert_allclose(
            ours["state"][i]["momentum_buffer"].tolist(),
            theirs["state"][i]["momentum_buffer"].tolist(),
            rtol=1e-13,
        )
    assert ours["param_groups"][0]["lr"] == theirs["param_groups"][0]["lr"] == 0.1


@pytest.mark.parametrize(
    "name, kwargs, message",
    [
        ("SGD", {"lr": -0.1}, "Invalid learning rate: -0.1"),
        ("SGD", {"lr": 0.1, "momentum": -0.5}, "Invalid momentum value: -0.5"),
        ("SGD", {"lr": 0.1, "weight_decay": -1}, "Invalid weight_decay value: -1"),
        ("Adam", {"lr": -1}, "Invalid learning rate: -1"),
        ("Adam", {"eps": -1}, "Invalid epsilon value: -1"),
        ("Adam", {"betas": (1.0, 0.9)}, "Invalid beta parameter at index 0: 1.0"),
        ("Adam", {"betas": (0.9, 1.0)}, "Invalid beta parameter at index 1: 1.0"),
        ("Adam", {"betas": (-0.1, 0.9)}, "Invalid beta parameter at index 0: -0.1"),
        ("Adam", {"weight_decay": -1}, "Invalid weight_decay value: -1"),
        ("RMSprop", {"alpha": -0.5}, "Invalid alpha value: -0.5"),
        ("Adagrad", {"lr_decay": -1}, "Invalid lr_decay value: -1"),
    ],
)
def test_hyperparameters_out_of_range_are_refused_with_torchs_message(torch, name, kwargs, message):
    for lib in (torch, ng):
        with pytest.raises(ValueError) as caught:
            getattr(lib.optim, name)(make_params(lib), **kwargs)
        assert str(caught.value) == message


@pytest.mark.parametrize(
    "name, key",
    [
        ("SGD", "momentum_buffer"),
        ("Adam", "exp_avg"),
        ("RMSprop", "square_avg"),
        ("Adagrad", "sum"),
    ],
)
def test_state_dict_holds_the_live_state_that_later_steps_change_as_torch(torch, name, key):
    seen = []
    for lib in (ng, torch):
        params = make_params(lib)
        kwargs = {"momentum": 0.9} if name == "SGD" else {}
        optimizer = getattr(lib.optim, name)(params, lr=0.1, **kwargs)
        train_steps(lib, params, optimizer, 1)
        snapshot = optimizer.state_dict()
        before = snapshot["state"][0][key].tolist()
        train_steps(lib, params, optimizer, 1)
        after = snapshot["state"][0][key].tolist()
        assert after != before  # the snapshot's tensor is the optimiser's own
        seen.append(after)
    np.testing.assert_allclose(seen[0], seen[1], rtol=1e-12)


def test_load_state_dict_copies_the_state_it_is_given():
    params = make_params(ng)
    source = ng.optim.SGD(params, lr=0.1, momentum=0.9)
    train_steps(ng, params, source, 1)
    target = ng.optim.SGD(make_params(ng), lr=0.1, momentum=0.9)
    saved = source.state_dict()
    target.load_state_dict(saved)
    before = target.state_dict()["state"][0]["momentum_buffer"].tolist()
    saved["state"][0]["momentum_buffer"].mul_(0.0)
    assert target.state_dict()["state"][0]["momentum_buffer"].tolist() == before


def test_load_state_dict_restores_group_settings(torch):
    source = ng.optim.SGD(make_params(ng), lr=0.25, momentum=0.5)
    target = ng.optim.SGD(make_params(ng), lr=0.1)
    target.load_state_dict(source.state_dict())
    assert target.param_groups[0]["lr"] == 0.25 and target.param_groups[0]["momentum"] == 0.5


def test_load_state_dict_refuses_a_mismatch_with_torchs_message_and_changes_nothing(torch):
    optimizer = ng.optim.SGD(make_params(ng), lr=0.1)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        optimizer.load_state_dict({"state": {}, "param_groups": []})
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        optimizer.load_state_dict({"state": {}, "param_groups": [{"params": [0, 1], "lr": 9}]})
    torch_optimizer = torch.optim.SGD(make_params(torch), lr=0.1)
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        torch_optimizer.load_state_dict({"state": {}, "param_groups": [{"params": [0, 1]}]})
    bad_shape = {
        "state": {0: {"momentum_buffer": ng.zeros(5)}},
        "param_groups": [{"params": [0, 1, 2], "lr": 9.0}],
    }
    with pytest.raises(
        ValueError,
        match=r"momentum_buffer of shape \(5,\) for parameter 0 "
        r"of shape \(2, 3\)",
    ):
        optimizer.load_state_dict(bad_shape)
    with pytest.raises(ValueError, match="must be a dict with the keys 'state' and 'param_groups'"):
        optimizer.load_state_dict({"lr": 1})
    assert optimizer.param_groups[0]["lr"] == 0.1 and optimizer.state == {}


def test_existing_imports_of_optim_keep_working():
    from naivegraph.optim import SGD, Adam, Optimizer  # noqa: F401
    from naivegraph.optim.lr_scheduler import ExponentialLR, StepLR  # noqa: F401

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert isinstance(ng.optim.Adam(make_params(ng)), Optimizer)


def test_a_group_added_later_is_optimised_as_torch(torch):
    def make(lib, ps):
        optimizer = lib.optim.Adagrad(ps[:2], lr=0.3)
        optimizer.add_param_group({"params": [ps[2]], "lr": 0.1})
        return optimizer

    assert_same_history(run(ng, make), run(torch, make))


@pytest.mark.parametrize("make", [ng.optim.SGD, ng.optim.Adam], ids=["SGD", "Adam"])
def test_a_numpy_float64_setting_steps_a_float32_parameter_as_the_python_number_does(make):
    # torch turns every setting into a scalar; a numpy float64 used as it is would
    # carry the float32 update to float64 and round it once more
    ends = []
    start = np.random.default_rng(0).standard_normal(200).astype(np.float32)
    for lr in (0.1, np.float64(0.1)):
        w = ng.tensor(start, requires_grad=True)
        opt = make([w], lr=lr, **({"momentum": 0.9} if make is ng.optim.SGD else {}))
        for _ in range(3):
            opt.zero_grad()
            (w * w * 1.3).sum().backward()
            opt.step()
        ends.append(w.detach().numpy().copy())
    assert ends[1].dtype == np.float32
    np.testing.assert_array_equal(ends[1], ends[0])
