"""Threads: grad mode and the default static graph are per thread; concurrent training
gives bitwise the same results as training one model after the other."""

import threading

import numpy as np

import naivegraph as ng
import naivegraph.static as ns


def _in_thread(fn):
    result, errors = {}, []

    def run():
        try:
            result["value"] = fn()
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert not errors, errors
    return result["value"]


def test_no_grad_in_one_thread_does_not_affect_another():
    entered, release = threading.Event(), threading.Event()
    seen = {}

    def holder():
        with ng.no_grad():
            entered.set()
            release.wait(5)
            seen["holder"] = ng.is_grad_enabled()

    t = threading.Thread(target=holder)
    t.start()
    assert entered.wait(5)
    try:
        assert ng.is_grad_enabled()
        w = ng.tensor(1.0, requires_grad=True)
        assert (w * 2).requires_grad
        seen["other"] = _in_thread(lambda: (ng.tensor(1.0, requires_grad=True) * 2).requires_grad)
    finally:
        release.set()
        t.join()
    assert seen == {"holder": False, "other": True}


def test_static_default_graph_is_per_thread():
    mine = ns.get_default_graph()
    theirs = _in_thread(ns.get_default_graph)
    assert theirs is not mine
    count = len(mine.nodes)
    _in_thread(lambda: ns.placeholder("only_in_that_thread", shape=(1,)))
    assert len(mine.nodes) == count


def _train(seed, steps=300):
    rng = np.random.default_rng(seed)
    # float32 data, as the layers' default dtype
    x = ng.tensor(rng.normal(size=(16, 3)).astype(np.float32))
    y = ng.tensor(rng.normal(size=(16, 1)).astype(np.float32))
    model = ng.nn.Sequential(ng.nn.Linear(3, 8), ng.nn.Tanh(), ng.nn.Linear(8, 1))
    with ng.no_grad():
        for p in model.parameters():
            p.copy_(ng.tensor(rng.normal(scale=0.5, size=p.shape)))
    opt = ng.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = ng.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.detach().numpy().copy() for p in model.parameters()]


def test_two_threads_training_at_once_match_one_at_a_time():
    sequential = [_train(1), _train(2)]
    results = {}
    threads = [
        threading.Thread(target=lambda s=s: results.__setitem__(s, _train(s))) for s in (1, 2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for seed, (losses, params) in zip((1, 2), sequential):
        got_losses, got_params = results[seed]
        assert got_losses == losses  # bitwise
        for a, b in zip(got_params, params):
            np.testing.assert_array_equal(a, b)


def test_two_threads_running_static_graphs_at_once():
    def work(seed):
        rng = np.random.default_rng(seed)
        with ns.Graph() as g:
            x = ns.placeholder("x", shape=(8, 3))
            w = ns.Variable(rng.normal(size=(3, 1)).astype(np.float32), name="w")
            loss = ((x @ w) ** 2).mean()
            (dw,) = ns.gradients(loss, [w])
        f = g.compile([x], [loss, dw])
        data = rng.normal(size=(8, 3)).astype(np.float32)  # the placeholder's default dtype
        out = []
        for _ in range(200):
            value, grad = f(data)
            w.assign(w.value - 0.1 * grad)
            out.append(float(value))
        return out

    sequential = [work(3), work(4)]
    results = {}
    threads = [threading.Thread(target=lambda s=s: results.__setitem__(s, work(s))) for s in (3, 4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [results[3], results[4]] == sequential
