"""Checkers of lesson 05: excluding subgraphs."""

from __future__ import annotations

import numpy as np

import naivegraph as ng

from ..checking import (
    Result,
    answer,
    as_bools,
    checker,
    close,
    correct,
    failed,
    is_blank,
    not_callable,
    not_done,
    show,
    wrong,
)


@checker("05-1")
def check_requires_grad_flow(a_requires_grad, b_requires_grad, c_requires_grad) -> Result:
    """x, y plain; z requires grad: a = x + y; b = a + z; c = (b * 2) under no_grad."""
    ex = "05-1"
    answers = (a_requires_grad, b_requires_grad, c_requires_grad)
    if is_blank(answers):
        return not_done(ex)
    got = as_bools(answers)
    if got is None:
        return failed(ex, "expected booleans (True / False).")
    want = (False, True, False)
    if got == want:
        return correct(
            ex,
            "a: no input requires grad -> False. b: z does -> True. c: made under "
            "no_grad -> False, whatever its inputs.",
        )
    hints = [
        "a = x + y: neither x nor y requires grad.",
        "b = a + z: one input that requires grad is enough.",
        "inside no_grad nothing is recorded, so outputs do not require grad.",
    ]
    first = next(i for i in range(3) if got[i] != want[i])
    return wrong(ex, str(want), str(got), hints[first])


def _tiny_net():

    class Net(ng.nn.Module):
        def __init__(self):
            super().__init__()
            self.body = ng.nn.Sequential(
                ng.nn.Linear(2, 8), ng.nn.Tanh(), ng.nn.Linear(8, 8), ng.nn.Tanh()
            )
            self.fc = ng.nn.Linear(8, 2)

        def forward(self, x):
            return self.fc(self.body(x))

    ng.manual_seed(0)
    return Net()


@checker("05-2")
def check_finetune_setup(setup) -> Result:
    """``setup(model, n_classes)`` freezes the model, gives it a new ``fc`` and returns an optimizer."""
    ex = "05-2"
    bad = not_callable(ex, setup)
    if bad is not None:
        return bad
    model = _tiny_net()
    old_fc = model.fc
    body_before = [p.detach().numpy().copy() for p in model.body.parameters()]
    stop, opt = answer(ex, setup, model, 3)
    if stop is not None:
        return stop
    if not hasattr(opt, "step") or not hasattr(opt, "param_groups") and not hasattr(opt, "params"):
        return failed(
            ex,
            f"expected an optimizer, got {type(opt).__name__}; hint: return "
            "ng.optim.SGD(model.fc.parameters(), lr=...).",
        )
    if model.fc is old_fc:
        return wrong(
            ex,
            "a new last layer model.fc",
            "the old one",
            "assign model.fc = ng.nn.Linear(8, n_classes); new layers require grad.",
        )
    if getattr(model.fc, "out_features", None) != 3:
        return wrong(
            ex,
            "model.fc with 3 outputs",
            str(getattr(model.fc, "out_features", "?")),
            "use the n_classes argument.",
        )
    trainable = [p for p in model.body.parameters() if p.requires_grad]
    if trainable:
        return wrong(
            ex,
            "every parameter of the body frozen (requires_grad=False)",
            f"{len(trainable)} still trainable",
            "loop over model.parameters() BEFORE replacing fc and set p.requires_grad = False.",
        )
    if not all(p.requires_grad for p in model.fc.parameters()):
        return wrong(
            ex,
            "the new fc trainable",
            "some fc parameters frozen",
            "freeze first, then create the new layer.",
        )
    opt_params = {id(p) for group in getattr(opt, "param_groups", []) for p in group["params"]}
    if opt_params != {id(p) for p in model.fc.parameters()}:
        return wrong(
            ex,
            "an optimizer over model.fc.parameters() only",
            f"an optimizer over {len(opt_params)} tensors",
            "give the optimizer only the new layer's parameters.",
        )
    x = ng.randn(5, 2)
    target = ng.tensor([0, 1, 2, 0, 1])
    opt.zero_grad()
    loss = ng.nn.functional.cross_entropy(model(x), target)
    loss.backward()
    opt.step()
    if any(
        not np.array_equal(b, p.detach().numpy())
        for b, p in zip(body_before, model.body.parameters())
    ):
        return failed(
            ex,
            "a training step changed the frozen body; hint: frozen parameters "
            "must not be in the optimizer and must not require grad.",
        )
    return correct(
        ex, "the body is frozen, the new fc trains, and a step leaves the body as it was."
    )


@checker("05-3")
def check_inference(predict) -> Result:
    """``predict(model, x)`` returns the model's output without recording any history."""
    ex = "05-3"
    bad = not_callable(ex, predict)
    if bad is not None:
        return bad
    model = _tiny_net()
    x = ng.randn(4, 2)
    stop, out = answer(ex, predict, model, x)
    if stop is not None:
        return stop
    with ng.no_grad():
        want = model(x).numpy()
    if not close(out, want, shape_free=False):
        return wrong(ex, "the model's output", show(out), "return model(x).")
    if getattr(out, "requires_grad", False) or getattr(out, "grad_fn", None) is not None:
        return wrong(
            ex,
            "an output that records no history",
            f"grad_fn={out.grad_fn.name()}",
            "run the model inside `with ng.no_grad():` (detach() afterwards works too, "
            "but only after the whole graph was built and kept in memory).",
        )
    if not ng.is_grad_enabled():
        return failed(
            ex,
            "grad mode is still off after your function; hint: use no_grad as a "
            "`with` block (or decorator) so it switches back on.",
        )
    return correct(ex, "same output, no grad_fn, nothing saved for backward.")
