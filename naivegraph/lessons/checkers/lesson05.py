"""Checkers of lesson 05: excluding subgraphs."""

from __future__ import annotations

import dis
import inspect
import re
import types

import numpy as np

import naivegraph as ng
from naivegraph.dynamic import tensor as tensor_module

from ..checking import (
    PRINTED_FORM,
    cell_computes,
    forgot_return,
    keeps_learner_state,
    Result,
    as_array,
    as_bools,
    call_answer,
    checker,
    close,
    correct,
    crash_message,
    failed,
    is_blank,
    not_callable,
    not_done,
    not_yet,
    returned_blank,
    show,
    tensor_changes,
    tensor_state,
)
from ..library_calls import LibraryCalls
from .lesson02 import flags_problem

FLOW_ANSWER = """a_rg = False, b_rg = True, c_rg = False.
a = x + y: neither input requires grad.  b = a + z: one input (z) requires grad, and
one is enough.  c = b * 2 is computed under no_grad: nothing is recorded there, so c
does not require grad whatever its inputs."""

FLOW_HINTS = (
    "a = x + y: does either of its inputs require grad?",
    "b = a + z: an output requires grad as soon as ONE input does.",
    "c is made inside `with ng.no_grad():`, where nothing is recorded.",
)


@checker("05-1", answer=FLOW_ANSWER, predicts=True)
def check_requires_grad_flow(a_requires_grad, b_requires_grad, c_requires_grad) -> Result:
    """x, y plain; z requires grad: a = x + y; b = a + z; c = (b * 2) under no_grad."""
    ex = "05-1"
    answers = (a_requires_grad, b_requires_grad, c_requires_grad)
    if is_blank(answers):
        return not_done(ex)
    problem = flags_problem(answers, 3, "a, b, c")
    if problem is not None:
        return failed(ex, f"hint: {problem}")
    read = cell_computes(reads=("requires_grad", "is_leaf", "grad_fn"), calls=PRINTED_FORM)
    if read:
        return not_yet(
            ex,
            [
                f"your cell reads the flags off the tensors instead of predicting them: it "
                f"uses {read}. The exercise asks you to PREDICT each requires_grad from "
                "how a, b and c were made, and to type them as True / False.",
                "requires_grad spreads forward from inputs to outputs, except inside no_grad.",
            ],
            gave=f"a cell that uses {read}",
        )
    got = as_bools(answers)
    want = (False, True, False)
    if got == want:
        return correct(
            ex,
            "a: no input requires grad -> False. b: z does -> True. c: made under "
            "no_grad -> False, whatever its inputs.",
        )
    first = next(i for i in range(3) if got[i] != want[i])
    name = "abc"[first]
    return not_yet(
        ex,
        [
            FLOW_HINTS[first],
            "requires_grad spreads forward from inputs to outputs, except inside no_grad.",
        ],
        gave=f"{name}_rg = {got[first]}",
    )


class _Net(ng.nn.Module):
    """The lesson's "pretrained" net; ``modes`` records the grad mode of each forward,
    ``trainable`` whether any parameter required grad during it."""

    def __init__(self) -> None:
        super().__init__()
        self.body = ng.nn.Sequential(
            ng.nn.Linear(2, 8), ng.nn.Tanh(), ng.nn.Linear(8, 8), ng.nn.Tanh()
        )
        self.fc = ng.nn.Linear(8, 2)
        self.modes: list[bool] = []
        self.trainable: list[bool] = []

    def forward(self, x):
        self.modes.append(ng.is_grad_enabled())
        self.trainable.append(any(p.requires_grad for p in self.parameters()))
        return self.fc(self.body(x))


def _tiny_net(seed: int = 0) -> _Net:
    ng.manual_seed(seed)
    return _Net()


FINETUNE_ANSWER = """def finetune_setup(model, n_classes):
    for p in model.parameters():
        p.requires_grad = False
    model.fc = ng.nn.Linear(8, n_classes)
    return ng.optim.SGD(model.fc.parameters(), lr=0.1, momentum=0.9)

Freeze first (a new layer requires grad by default, so it stays trainable), size the
head by the n_classes argument, and give the optimizer only the head's parameters."""


@checker("05-2", answer=FINETUNE_ANSWER)
@keeps_learner_state
def check_finetune_setup(setup) -> Result:
    """``setup(model, n_classes)`` freezes the model, gives it a new ``fc`` and returns an optimizer."""
    ex = "05-2"
    bad = not_callable(ex, setup)
    if bad is not None:
        return bad
    for n_classes in (3, 5):  # two sizes: the head must follow the argument
        result = _check_one_setup(ex, setup, n_classes)
        if result is not None:
            return result
    return correct(
        ex, "the body is frozen, the new fc trains, and a step leaves the body as it was."
    )


#: The optimizer settings the lesson uses, and the exercise asks for.
LESSON_SGD = {"lr": 0.1, "momentum": 0.9, "dampening": 0, "weight_decay": 0, "nesterov": False}
_SETTING_NAMES = {
    "lr": "the learning rate",
    "momentum": "the momentum",
    "dampening": "the dampening",
    "weight_decay": "the weight decay",
    "nesterov": "the Nesterov flag",
}


def _check_one_setup(ex: str, setup, n_classes: int) -> Result | None:
    model = _tiny_net()
    old_fc = model.fc
    body_modules = list(model.body.modules())
    dtypes = {p.dtype for p in model.parameters()}
    body_before = [p.detach().numpy().copy() for p in model.body.parameters()]
    notebook = _NotebookModules(setup, model)
    recording = ng.is_grad_enabled()
    with LibraryCalls({"ng.manual_seed": ng.manual_seed}) as seeds:
        ok, opt = call_answer(ex, setup, model, n_classes)
    changed_notebook = notebook.put_back()
    if not ok:
        return opt
    if changed_notebook:
        return _works_on_the_notebooks(ex, setup, changed_notebook)
    if recording and not ng.is_grad_enabled() and any(
        p.requires_grad for p in model.body.parameters()
    ):
        ng.set_grad_enabled(True)  # put back, as the lab does for any answer
        return not_yet(
            ex,
            [
                "your function switched grad mode off for the whole program "
                "(ng.set_grad_enabled(False)), and that freezes nothing: the body's "
                "parameters still require grad, as they did before. Grad mode is one "
                "global switch for recording, which the training loop after your setup "
                "needs on (with it off, no backward can run at all). Freezing is a flag "
                "of each parameter, which stays with the parameter whatever the grad "
                "mode. (The checker switched grad mode back on.)",
                "freeze by switching requires_grad off on every parameter of the body, "
                "and leave grad mode alone.",
            ],
            gave="a function that switched grad mode off instead of freezing",
        )
    if seeds.called:
        return not_yet(
            ex,
            [
                "your function reseeds the global random generator (ng.manual_seed): "
                "every random draw the caller makes after it (the next layer's weights, "
                "the shuffled batches, dropout) starts over from that seed, and every "
                "call of your function makes the same head. Seeding is the caller's "
                "choice, made once at the top of a script or notebook, not a library "
                "function's.",
                "a new layer draws its first weights from the generator as the caller "
                "left it: no seed is needed to create it.",
            ],
            gave="a function that calls ng.manual_seed",
        )
    blank = forgot_return(ex, setup, opt)
    if blank is not None:
        return blank
    if not hasattr(opt, "step") or not hasattr(opt, "param_groups"):
        return failed(
            ex,
            f"your function returned {type(opt).__name__}; hint: return the optimizer "
            "you made (an ng.optim optimizer).",
        )
    body_now = list(model.body.modules())
    if len(body_now) != len(body_modules) or any(
        a is not b for a, b in zip(body_now, body_modules)
    ):
        return not_yet(
            ex,
            [
                "your function replaced the model's body (or a layer of it) by other "
                "modules, a copy say: the body is the caller's pretrained network, "
                "which fine-tuning keeps and freezes where it is; the caller's own "
                "layers must stay in the model.",
                "replace only the last layer; freeze the body's parameters in place.",
            ],
            gave="a model whose body is not the caller's",
        )
    if any(
        not np.array_equal(b, p.detach().numpy())
        for b, p in zip(body_before, model.body.parameters())
    ):
        return not_yet(
            ex,
            [
                "your function changed the values of the body's parameters: they are "
                "the pretrained weights, what the body has learned, and fine-tuning "
                "keeps them as they are. Freezing switches off their requires_grad and "
                "leaves their values alone.",
                "the setup freezes the body and replaces the last layer, nothing else: "
                "no write into the body's parameters.",
            ],
            gave="a function that changes the body's weights",
        )
    own = {id(p) for p in model.parameters()}
    elsewhere = [
        p for group in getattr(opt, "param_groups", ()) for p in group.get("params", ())
        if id(p) not in own
    ]
    if model.fc is old_fc and elsewhere:
        return not_yet(
            ex,
            [
                "your function changed a copy of the model (copy.deepcopy, say), not the "
                "model it was given: the optimizer holds the copy's parameters, while the "
                "caller's model keeps its old last layer and a body that still trains. "
                "Fine-tuning changes the model the caller hands over, in place.",
                "work on the model argument itself: no copy.",
            ],
            gave="a setup that changed a copy of the model",
        )
    if model.fc is old_fc:
        return not_yet(
            ex,
            [
                "model.fc is still the old layer: give the model a new last layer.",
                "assigning a new module to model.fc replaces the old one.",
            ],
            gave="the old model.fc",
        )
    if isinstance(model.fc, ng.nn.Module) and any(m is old_fc for m in model.fc.modules()):
        return not_yet(
            ex,
            [
                "your new fc reuses the old last layer inside it (its outputs feed the "
                "new one): the old head's frozen weights still stand between the body "
                "and the new classes. The exercise REPLACES the old layer by a new one "
                "that takes the body's 8 features itself.",
                "build the new fc from a fresh layer alone, without the old model.fc in it.",
            ],
            gave="a new fc built around the old one",
        )
    changed = sorted(
        {_dtype_name(p.dtype) for p in model.parameters()} - {_dtype_name(d) for d in dtypes}
    )
    if changed:
        return not_yet(
            ex,
            [
                f"your function changed the dtype of the model's parameters to "
                f"{', '.join(changed)} (.double() or .to(...)): the body, its inputs and "
                "the lesson's data are float32, and a layer of another dtype refuses "
                "them. Leave the model's dtype as it was.",
                "a new layer is made in the default dtype, the one the body has: no cast "
                "is needed.",
            ],
            gave=f"a model with {', '.join(changed)} parameters",
        )
    swapped = _swapped_sizes(ex, model.fc)
    if swapped is not None:
        return swapped
    out = _head_outputs(model.fc)
    if isinstance(out, Exception):
        return failed(
            ex,
            f"your new fc failed on the body's output: {type(out).__name__}: "
            f"{str(out).rstrip('.')}; hint: the new fc takes the body's 8 features as input.",
        )
    if out != n_classes:
        return _head_of_the_wrong_size(ex, setup, n_classes, out)
    shape_of_head = _head_shape(ex, model.fc)
    if shape_of_head is not None:
        return shape_of_head
    trainable = [p for p in model.body.parameters() if p.requires_grad]
    if trainable:
        return not_yet(
            ex,
            [
                "the body is not frozen: its parameters still require grad, so backward "
                "computes their gradients for nothing.",
                "freeze by switching requires_grad off on every parameter of the model.",
            ],
            gave=f"{len(trainable)} body parameters that still require grad",
        )
    head_flags = dict(model.fc.named_parameters())
    frozen = [name for name, p in head_flags.items() if not p.requires_grad]
    if frozen and len(frozen) < len(head_flags):
        return not_yet(
            ex,
            [
                f"part of the new fc is frozen ({', '.join(frozen)} does not require "
                "grad): it would never train, and the head cannot learn without it. "
                "Every parameter of the new layer must train.",
                "freeze the body only; a new layer's parameters require grad as they are.",
            ],
            gave=f"a new fc with {', '.join(frozen)} frozen",
        )
    if not all(p.requires_grad for p in model.fc.parameters()):
        return not_yet(
            ex,
            [
                "the new fc is frozen too: you froze after creating it.",
                "freeze first, then create the new layer (new layers require grad).",
            ],
            gave="a new fc whose parameters do not require grad",
        )
    if type(opt).__name__ != "SGD":
        return not_yet(
            ex,
            [
                f"the exercise asks for an SGD optimizer, and yours is {type(opt).__name__}: "
                "the same parameters, but another update rule than the lesson's.",
                "ng.optim has SGD too: give it the new layer's parameters.",
            ],
            gave=f"an ng.optim.{type(opt).__name__}",
        )
    opt_params = {id(p) for group in opt.param_groups for p in group["params"]}
    head = dict(model.fc.named_parameters())
    if opt_params and opt_params < {id(p) for p in head.values()}:
        missing = [name for name, p in head.items() if id(p) not in opt_params]
        return not_yet(
            ex,
            [
                f"a parameter of the new layer is missing from the optimizer "
                f"({', '.join(missing)}): a step would leave it as it was.",
                "give the optimizer all of the new layer's parameters: the layer lists "
                "them for you.",
            ],
            gave=f"an optimizer over {_tensors(len(opt_params))} of the new layer's {len(head)}",
        )
    old_head = {id(p) for p in old_fc.parameters()}
    if opt_params and opt_params <= old_head:
        return not_yet(
            ex,
            [
                "your optimizer holds the OLD fc's parameters: it was built before the "
                "head was replaced (model.fc.parameters() read the layer that was there "
                "then). The old layer is no longer in the model, so a step updates "
                "nothing the model uses.",
                "make the optimizer after the new layer is in place.",
            ],
            gave=f"an optimizer over the old fc's {_tensors(len(opt_params))}",
        )
    foreign = [
        p for group in opt.param_groups for p in group["params"] if id(p) not in own
    ]
    if foreign:
        return _optimizer_of_another_model(ex, setup, opt, len(foreign), len(opt_params))
    if opt_params != {id(p) for p in model.fc.parameters()}:
        return not_yet(
            ex,
            [
                "the optimizer must hold only the new layer's parameters.",
                "a frozen parameter in the optimizer is skipped at best; the head's "
                "parameters are what it should update.",
            ],
            gave=f"an optimizer over {_tensors(len(opt_params))}",
        )
    if not model.training:
        return not_yet(
            ex,
            [
                "your setup left the model in eval mode: training needs train mode "
                "(dropout and batch norm act differently in eval), and the training "
                "loop that follows the setup does not switch it back.",
                "leave the model's mode as it was: the setup freezes and replaces, nothing else.",
            ],
            gave="a model left in eval mode",
        )
    stepped = any(bool(entry) for entry in getattr(opt, "state", {}).values())
    graded = any(p.grad is not None for p in model.fc.parameters())
    if stepped or graded:
        did = (
            "already took an optimizer step (the optimizer holds a momentum buffer)"
            if stepped
            else "already ran a backward (the new layer holds gradients)"
        )
        return not_yet(
            ex,
            [
                f"your setup {did}: a warm-up step inside the setup moves the new head "
                "and fills the momentum before the training loop starts, so the first "
                "step of the loop is not the first step of training. The settings of "
                "the optimizer are not the problem; the step is.",
                "the setup freezes the body, replaces the last layer and makes the "
                "optimizer: training, with its forward, backward and step, is the "
                "loop's work.",
            ],
            gave="a setup that trains",
        )
    return _step_keeps_body(ex, model, opt, body_before, n_classes)


def _optimizer_of_another_model(ex: str, setup, opt, foreign: int, held: int) -> Result:
    """The hint for an optimizer holding parameters that are not the given model's: the
    notebook's own optimizer (named when the function reads it), or one over another
    model's layer."""
    named = next(
        (name for name, value in _globals_read(setup).items() if value is opt), ""
    )
    if named:
        which = f"the notebook's `{named}`, made for the notebook's own model"
    elif foreign == held:
        which = "an optimizer over another model's parameters"
    else:
        which = "an optimizer that also holds another model's parameters"
    if foreign == held:
        share = "every tensor it holds is a parameter"
    else:
        share = f"{foreign} of the {held} tensors it holds " + (
            "is a parameter" if foreign == 1 else "are parameters"
        )
    return not_yet(
        ex,
        [
            f"your function returned {which}: {share} of another model, "
            "not of the model your function was given (the new layer your function put "
            "in it holds parameters of its own). A step of that optimizer moves the other "
            "model's parameters and leaves the new layer as it was. The checker calls your "
            "function with models of its own, as a training script calls it with the "
            "model it has just loaded.",
            "make the optimizer inside the function, over the new layer of the model "
            "it is given.",
        ],
        gave=f"an optimizer over parameters of another model ({_tensors(foreign)})",
    )


_SOFTMAXES = ("Softmax", "LogSoftmax", "Softmin")


def _head_shape(ex: str, head) -> Result | None:
    """The hint for a head that is not one linear layer with its bias: the logits
    cross_entropy expects are ``features @ W.T + b``, nothing after it."""
    modules = [m for m in head.modules() if m is not head or not list(head.children())]
    kinds = [type(m).__name__ for m in modules]
    softmax = [k for k in kinds if k in _SOFTMAXES]
    if softmax:
        return not_yet(
            ex,
            [
                f"your new fc ends with a {softmax[0]}: cross_entropy takes the raw "
                "scores (logits) and applies log-softmax itself, so a softmax in the "
                "head is applied twice (a double softmax): the loss flattens and the "
                "head learns slowly, or not at all.",
                "the head gives the logits: one linear layer, and nothing after it.",
            ],
            gave=f"a new fc with a {softmax[0]}",
        )
    linears = [m for m in modules if isinstance(m, ng.nn.Linear)]
    if len(linears) == 1 and linears[0].bias is None:
        return not_yet(
            ex,
            [
                "your new fc has no bias (bias=False): the old last layer had one, and "
                "without it every class score is forced through 0 for zero features.",
                "make the new layer as the lesson's layers are made, with the defaults.",
            ],
            gave="a new fc without a bias",
        )
    if len(linears) != 1:
        return not_yet(
            ex,
            [
                f"your new fc is made of {len(linears)} linear layers where the exercise "
                "replaces the last layer by ONE new layer: from the body's features "
                "straight to the classes.",
                "the head is one linear layer, with its bias, and nothing after it.",
            ],
            gave=f"a new fc of {len(linears)} linear layers",
        )
    features = ng.randn(5, 8)
    with ng.no_grad():
        got = head(features)
        want = features @ linears[0].weight.T + linears[0].bias
    if close(got, want, shape_free=False):
        return None
    others = list(dict.fromkeys(k for m, k in zip(modules, kinds) if m is not linears[0]))
    added = ", ".join(others) if others else "something"
    return not_yet(
        ex,
        [
            f"your new fc adds {added} to the linear layer: the last layer gives the "
            "logits, raw scores of any sign, and cross_entropy makes probabilities of "
            "them itself; an activation after it clips or squashes the scores.",
            "the head is one linear layer from the body's features to the classes, and "
            "nothing after it.",
        ],
        gave=f"a new fc with {added} after the linear layer",
    )


def _swapped_sizes(ex: str, head) -> Result | None:
    """The hint for a head that is one linear layer taking other than the body's 8
    features (``Linear(n_classes, 8)``, its sizes swapped, say)."""
    linears = [m for m in head.modules() if isinstance(m, ng.nn.Linear)]
    if len(linears) == 1 and linears[0].in_features != 8:
        layer = linears[0]
        swapped = layer.out_features == 8
        return not_yet(
            ex,
            [
                f"your new fc takes {layer.in_features} inputs, but the body gives it 8 "
                "features"
                + (": the two sizes are swapped" if swapped else "")
                + ". A layer is made as Linear(in_features, out_features): the size of "
                "its input first, then the number of outputs.",
                "the head maps the body's features to one score per class.",
            ],
            gave=f"a new fc with in_features={layer.in_features}",
        )
    return None


def _dtype_name(dtype) -> str:
    return str(dtype).rsplit(".", 1)[-1]


def _tensors(count: int) -> str:
    return f"{count} tensor" if count == 1 else f"{count} tensors"


def _head_of_the_wrong_size(ex: str, setup, n_classes: int, out) -> Result:
    """The hint for a new fc with ``out`` outputs where ``n_classes`` are asked: a head
    that follows the argument but is off by a few outputs (``n_classes + 1``) is told
    so, found by calling the setup once more with another number of classes."""
    gave = f"fc with {out} outputs for n_classes={n_classes}"
    other = n_classes + 4
    there = _outputs_for(setup, other)
    if isinstance(out, int) and isinstance(there, int) and there != out:
        extra = out - n_classes
        if there - other == extra:
            count = {1: "one", 2: "two", -1: "one", -2: "two"}.get(extra, str(abs(extra)))
            more = "more" if extra > 0 else "fewer"
            outputs = "output" if abs(extra) == 1 else "outputs"
            return not_yet(
                ex,
                [
                    f"called with n_classes={n_classes}, your new fc has {out} outputs, "
                    f"and {there} for n_classes={other}: it follows the n_classes "
                    f"argument, but has {count} {outputs} {more} than there are "
                    "classes. A classifier's last layer gives one score per class, "
                    "and cross_entropy reads them as the classes themselves.",
                ],
                gave=gave,
            )
    return not_yet(
        ex,
        [
            f"called with n_classes={n_classes}, your new fc has {out} outputs: size "
            "it by the n_classes argument, not a fixed number.",
        ],
        gave=gave,
    )


def _outputs_for(setup, n_classes: int) -> int | str | Exception | None:
    """How many outputs the new fc of ``setup`` has when called with ``n_classes``, on
    a model of the checker's own (None if the call fails or makes no new fc)."""
    model = _tiny_net()
    old_fc = model.fc
    notebook = _NotebookModules(setup, model)
    ok, _ = call_answer("05-2", setup, model, n_classes)
    notebook.put_back()
    if not ok or model.fc is old_fc:
        return None
    return _head_outputs(model.fc)


def _head_outputs(head) -> int | str | Exception:
    """How many outputs ``head`` gives for a batch of the body's 8 features, found by
    running it: a head of several layers has no ``out_features`` of its own."""
    try:
        with ng.no_grad():
            out = head(ng.randn(5, 8))
    except Exception as exc:  # a head of the wrong input size: reported as such
        return exc
    shape = tuple(getattr(out, "shape", ()))
    return shape[-1] if len(shape) == 2 and shape[0] == 5 else f"outputs of shape {shape}"


def _train_step(model, opt, x, target) -> list[np.ndarray]:
    """One training step of ``opt``: the head's gradients it was given."""
    opt.zero_grad()
    ng.nn.functional.cross_entropy(model(x), target).backward()
    grads = [_grad_of(p) for p in model.fc.parameters()]
    opt.step()
    return grads


def _step_keeps_body(ex: str, model, opt, body_before, n_classes: int) -> Result | None:
    x = ng.randn(5, 2)
    target = ng.tensor([i % n_classes for i in range(5)])
    head_before = [p.detach().numpy().copy() for p in model.fc.parameters()]
    # The lesson's optimizer on copies of the head, given the same gradients.
    copies = [ng.tensor(b.copy(), requires_grad=True) for b in head_before]
    lessons = ng.optim.SGD(copies, **LESSON_SGD)
    try:
        grads = _train_step(model, opt, x, target)
    except Exception as exc:  # a head of the wrong input size, for instance
        return failed(
            ex,
            f"a training step failed: {type(exc).__name__}: {exc}; hint: the new fc takes "
            "the body's 8 features as input.",
        )
    if any(
        not np.array_equal(b, p.detach().numpy())
        for b, p in zip(body_before, model.body.parameters())
    ):
        return not_yet(ex, "a training step changed the frozen body.")
    if all(
        np.array_equal(b, p.detach().numpy()) for b, p in zip(head_before, model.fc.parameters())
    ):
        return not_yet(
            ex,
            [
                "a training step left the new fc exactly as it was: the optimizer holds "
                "the right parameters but does not move them.",
                "look at the optimizer's learning rate: the step is the gradient times it.",
            ],
            gave="an optimizer whose step changes nothing",
        )
    climb = sum(
        float(np.sum(g * (p.detach().numpy() - b)))
        for g, b, p in zip(grads, head_before, model.fc.parameters())
    )
    groups = getattr(opt, "param_groups", [])
    maximize = any(group.get("maximize") for group in groups)
    decay = any(group.get("weight_decay") for group in groups)
    if maximize or (climb > 0 and not decay):
        return not_yet(
            ex,
            [
                "a training step moved the new fc UP the gradient: the loss grows with "
                "each step instead of falling.",
                "look at the optimizer's arguments: a training step must descend the "
                "loss (minimize it), with a positive learning rate.",
            ],
            gave="an optimizer whose step climbs the loss",
        )
    stepped = _step_like_the_lessons(ex, model, opt, lessons, copies, grads, x, target)
    if stepped is not None:
        return stepped
    return _settings_like_the_lessons(ex, opt)


def _settings_like_the_lessons(ex: str, opt) -> Result | None:
    """None when every group of the optimizer has the lesson's settings; else the hint
    naming those that differ (never their values), however small the difference: a
    weight decay of 1e-9 changes no bit of two steps, and every step after them."""
    differ: list[str] = []
    for group in getattr(opt, "param_groups", []):
        for key, name in _SETTING_NAMES.items():
            if key in group and group[key] != LESSON_SGD[key] and name not in differ:
                differ.append(name)
    if not differ:
        return None
    return not_yet(
        ex,
        [
            f"your optimizer's settings are not the lesson's: look at {' and '.join(differ)} "
            "you gave SGD. The difference is too small to change the first steps, yet "
            "it is there, and it adds up over training.",
            "the exercise asks for the settings of the lesson's own optimizer, and "
            "SGD's defaults for the rest.",
        ],
        gave=f"an SGD with {' and '.join(differ)} other than the lesson's",
    )


def _step_like_the_lessons(ex: str, model, opt, lessons, copies, grads, x, target):
    """None when two training steps move the head as the lesson's settings do, else
    the hint naming the settings that differ (never their values).  Two steps: the
    first shows the learning rate and the weight decay, the second the momentum."""
    for step in (1, 2):
        if step == 2:
            try:
                grads = _train_step(model, opt, x, target)
            except Exception as exc:  # the first step ran: reported as it is
                return failed(ex, crash_message(exc))
        for copy, g in zip(copies, grads):
            copy.grad = ng.tensor(g, dtype=copy.dtype)
        lessons.step()
        mine = [p.detach().numpy() for p in model.fc.parameters()]
        theirs = [c.detach().numpy() for c in copies]
        # The same arithmetic as the lesson's settings gives the same bits: a setting
        # slightly off (a small weight decay) shows, however small.
        if not all(np.array_equal(m, t) for m, t in zip(mine, theirs)):
            return _step_size_hint(ex, opt, step)
    return None


def _step_size_hint(ex: str, opt, step: int) -> Result:
    differ: list[str] = []
    for group in getattr(opt, "param_groups", []):
        for key, name in _SETTING_NAMES.items():
            if key in group and group[key] != LESSON_SGD[key] and name not in differ:
                differ.append(name)
    # The first step of momentum is the gradient itself: it cannot explain step 1.
    first_step = [n for n in differ if n not in ("the momentum", "the dampening")]
    if step == 1 and first_step:
        differ = first_step
    which = (
        " and ".join(differ) if differ else "the learning rate, the momentum and the weight decay"
    )
    return not_yet(
        ex,
        [
            f"the size of the step is not the one the lesson's settings give (step "
            f"{step} of training): look at {which} you gave SGD. The exercise asks for "
            "the settings of the lesson's own optimizer.",
            "the step SGD takes is the gradient (plus weight decay, through momentum) "
            "times the learning rate: each setting changes its size.",
        ],
        gave=f"an optimizer whose step {step} differs in size from the lesson's",
    )


def _grad_of(p) -> np.ndarray:
    """``p.grad`` as an array, zeros where backward left none."""
    return np.zeros(tuple(p.shape)) if p.grad is None else p.grad.detach().numpy().copy()


def _globals_read(fn) -> dict[str, object]:
    """The globals ``fn`` (and the functions defined in it) looks up by name, with the
    objects they hold now: a notebook's ``model`` or ``X`` read where an argument was
    meant."""
    names: set[str] = set()
    todo = [getattr(fn, "__code__", None)]
    while todo:
        code = todo.pop()
        if not isinstance(code, types.CodeType):
            continue
        names |= {
            str(ins.argval) for ins in dis.get_instructions(code) if ins.opname == "LOAD_GLOBAL"
        }
        todo += [c for c in code.co_consts if isinstance(c, types.CodeType)]
    space = getattr(fn, "__globals__", None) or {}
    return {name: space[name] for name in sorted(names) if name in space}


def _first_argument(fn) -> str:
    """The name of ``fn``'s first parameter ("" when it has none that can be read)."""
    try:
        params = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return ""
    return params[0] if params else ""


class _NotebookModules:
    """The modules of the notebook (globals of the learner's function) that the function
    reads by name, other than the model it is given: what the call changed of them
    (their parameters' requires_grad, their layers), put back afterwards."""

    def __init__(self, fn, given) -> None:
        self._kept = {
            name: (
                module,
                [(p, p.requires_grad) for p in module.parameters()],
                dict(module.named_children()),
            )
            for name, module in _globals_read(fn).items()
            if isinstance(module, ng.nn.Module) and module is not given
        }

    def put_back(self) -> dict[str, list[str]]:
        """Put every module back as it was; what changed, by the module's name."""
        changed: dict[str, list[str]] = {}
        for name, (module, flags, children) in self._kept.items():
            said = []
            if any(p.requires_grad != flag for p, flag in flags):
                said.append("froze its parameters")
                for p, flag in flags:
                    p.requires_grad = flag
            now = dict(module.named_children())
            if any(now.get(key) is not child for key, child in children.items()):
                said.append("replaced its layers")
                for key, child in children.items():
                    setattr(module, key, child)
            if said:
                changed[name] = said
        return changed


def _works_on_the_notebooks(ex: str, setup, changed: dict[str, list[str]]) -> Result:
    name, said = next(iter(changed.items()))
    argument = _first_argument(setup)
    called = f" (`{argument}` in your function)" if argument and argument != name else ""
    return not_yet(
        ex,
        [
            f"your function works on the notebook's `{name}`, not on the model it is "
            f"given as its argument{called}: it {' and '.join(said)} of the notebook's "
            f"`{name}`, and left the model it was handed as it came. The checker calls "
            "it with models of its own, as a training script calls it with the model it "
            f"has just loaded. (The checker put the notebook's `{name}` back as it was.)",
            "inside the function, reach the model through its parameter only.",
        ],
        gave=f"a function that changes the notebook's `{name}`",
    )


INFERENCE_ANSWER = """def predict(model, x):
    with ng.no_grad():
        return model(x)

Under no_grad nothing is recorded, so no graph is built and nothing is saved for
backward.  model(x).detach() gives the same values but only after the whole graph was
built; switching requires_grad off on the model's parameters leaves it frozen for
training afterwards; ng.set_grad_enabled(False) without switching back leaves grad
mode off for everything that follows."""


@checker("05-3", answer=INFERENCE_ANSWER)
@keeps_learner_state
def check_inference(predict) -> Result:
    """``predict(model, x)`` returns the model's output without building any graph, and
    leaves the model and the grad mode as they were."""
    ex = "05-3"
    bad = not_callable(ex, predict)
    if bad is not None:
        return bad
    for seed, case in enumerate(_INFERENCE_CASES, start=1):
        result = _check_one_prediction(ex, predict, case, seed)
        if result is not None:
            return result
    return correct(ex, "same output, no grad_fn, nothing saved for backward.")


# How predict is called, one call each: the plain case first, then a caller whose model
# has a frozen parameter, is in eval mode, has grad mode off, or passes an x that
# requires grad.  Each must find everything as it was after the call.
_INFERENCE_CASES = (
    "plain",
    "one frozen parameter",
    "eval mode",
    "grad mode off",
    "x requires grad",
)


def _check_one_prediction(ex: str, predict, case: str, seed: int) -> Result | None:
    # Weights and x of their own in each case: an output kept from an earlier call
    # (a cache keyed by shape) is not this model's output for this x.
    model = _tiny_net(seed)
    x = ng.randn(4, 2)
    with ng.no_grad():
        want = model(x).numpy()
    model.modes.clear()
    model.trainable.clear()
    if case == "one frozen parameter":
        model.body[0].weight.requires_grad = False
    if case == "eval mode":
        model.eval()
    if case == "x requires grad":
        x.requires_grad_(True)
        x.grad = ng.full_like(x, 0.25)  # a gradient the caller accumulated
    for p in model.parameters():
        if p.requires_grad:  # gradients the caller accumulated, to be left as they are
            p.grad = ng.full_like(p, 0.5)
    params_before = _params_state(model)
    grad_before = case != "grad mode off"
    training_before = [m.training for m in model.modules()]
    flags_before = [p.requires_grad for p in model.parameters()]
    # a forward hook of the caller's, run by model(x) alone: the grad mode of each run
    hook_runs: list[bool] = []
    model.register_forward_hook(
        lambda module, inputs, output: hook_runs.append(ng.is_grad_enabled())
    )
    hooks_before = _module_hooks(model)
    x_before = tensor_state(x)
    raised = None
    # the grad mode each of the model's layers ran in (body, fc), by the layer's name
    layer_modes: dict[str, list[bool]] = {}
    layer_hooks = [
        child.register_forward_hook(
            lambda module, inputs, output, name=name: layer_modes.setdefault(
                name, []
            ).append(ng.is_grad_enabled())
        )
        for name, child in model.named_children()
    ]
    try:
        ng.set_grad_enabled(grad_before)
        try:
            with _Recorded() as records:
                out = predict(model, x)
        except Exception as exc:  # reported below, with grad mode put back first
            raised = exc
        grad_after = ng.is_grad_enabled()
    finally:
        ng.set_grad_enabled(True)  # the learner's mistake must not leak into what follows
        for handle in layer_hooks:
            handle.remove()
    if raised is not None:
        return _prediction_raised(ex, predict, raised)
    blank = returned_blank(ex, out)
    if blank is not None:
        return blank
    changed = _changed_state(ex, model, grad_before, grad_after, training_before, flags_before)
    if changed is not None:
        return changed
    if _module_hooks(model) != hooks_before:
        return not_yet(
            ex,
            [
                "your function registers a hook on the model (register_forward_hook or "
                "another): the hook stays after the call, so each call adds one more, "
                "and every later forward pass runs them all.",
                "leave the model as it came: no hook, nothing registered; switch only "
                "recording off, for the call.",
            ],
            gave="a function that leaves a hook on the model",
        )
    params_changed = _params_changes(params_before, _params_state(model))
    if params_changed:
        return not_yet(
            ex,
            [
                f"your function changed the model's parameters ({params_changed}): they "
                "belong to the caller, who may be in the middle of a training step (its "
                "gradients accumulated, a graph waiting for backward, which refuses "
                "parameters changed in place since).",
                "leave the parameters and their gradients alone: switching recording off "
                "(grad mode) for the call is all inference needs.",
            ],
            gave=f"a function that changes the model's parameters ({params_changed})",
        )
    x_changes = tensor_changes(x_before, tensor_state(x))
    if x_changes:
        return not_yet(
            ex,
            [
                f"your function changed the caller's x ({x_changes}): x belongs to the "
                "caller, who may still need it as it was (an x that requires grad, for "
                "a gradient with respect to the input).",
                "leave x alone: switching recording off (grad mode) for the call is "
                "enough, whatever x requires.",
            ],
            gave=f"a function that changes x ({x_changes})",
        )
    if getattr(out, "grad_fn", None) is not None and close(out, want, shape_free=False):
        if hook_runs and not any(hook_runs):
            return not_yet(
                ex,
                [
                    "the model itself ran with recording off, but your function goes on "
                    "computing with the output after the no_grad block ended: an op "
                    "there reads a tensor that requires grad and records history again, "
                    f"so the output you return has a grad_fn ({out.grad_fn.name()}).",
                    "return the model's output as the block made it: no op on it after "
                    "the block.",
                ],
                gave=f"an output with a grad_fn ({out.grad_fn.name()})",
            )
        not_in_force = _no_grad_not_in_force(ex, predict, out)
        if not_in_force is not None:
            return not_in_force
    judged = _judge_output(ex, model, x, out, want, records.count, predict, layer_modes)
    if judged is not None:
        return judged
    if not hook_runs:
        return not_yet(
            ex,
            [
                "a forward hook the caller registered on the model did not run: your "
                "function calls model.forward(x) (or the model's layers) directly, which "
                "skips hooks. Call the model, "
                "model(x), not model.forward(x): hooks run only through __call__.",
                "switching recording off is done around the call, not by calling "
                "another method.",
            ],
            gave="a function that bypasses the model's forward hooks",
        )
    return None


def _recorded_in_part(layer_modes: dict[str, list[bool]]) -> tuple[str, str] | None:
    """(the layers that ran with recording on, those that ran with it off), each
    written as model.<name>, when some of the model's layers ran in each mode; else
    None."""
    on = [name for name, modes in layer_modes.items() if any(modes)]
    off = [name for name, modes in layer_modes.items() if not all(modes)]
    if not on or not off or set(on) & set(off):
        return None
    return (
        " and ".join(f"model.{name}" for name in on),
        " and ".join(f"model.{name}" for name in off),
    )


class _Recorded:
    """Counts the graph nodes recorded while the block runs (every op that records
    history goes through the tensor module's ``_record``): a graph built and then cut
    off by detach() leaves its count, however the model was called."""

    def __init__(self) -> None:
        self.count = 0

    def __enter__(self) -> _Recorded:
        self._real = tensor_module._record

        def counted(*args, **kwargs):
            self.count += 1
            return self._real(*args, **kwargs)

        tensor_module._record = counted
        return self

    def __exit__(self, *exc_info: object) -> None:
        tensor_module._record = self._real


def _params_state(model) -> list[tuple]:
    """Each parameter's identity, version and gradient (the tensor and its values)."""
    return [
        (
            id(p),
            p._version,
            p.grad,
            None if p.grad is None else p.grad.detach().numpy().tobytes(),
        )
        for p in model.parameters()
    ]


def _params_changes(before: list[tuple], after: list[tuple]) -> str:
    """What changed about the model's parameters, in words ("" when nothing did)."""
    said = []
    if [b[0] for b in before] != [a[0] for a in after]:
        said.append("parameters replaced by other tensors")
    elif any(b[1] != a[1] for b, a in zip(before, after)):
        said.append("their values written in place")
    if any(b[2] is not None and a[2] is None for b, a in zip(before, after)):
        said.append("their gradients cleared, as zero_grad() does")
    elif any(b[2] is not a[2] or b[3] != a[3] for b, a in zip(before, after)):
        said.append("their gradients changed")
    return ", ".join(said)


def as_array_or_none(value):
    """``value`` as an array, or None when it is not one (its shape is then ())."""
    try:
        return as_array(value)
    except Exception:  # not numbers: no shape to compare
        return None


def _module_hooks(model) -> list[tuple[int, int, int]]:
    """How many hooks of each kind every module of ``model`` has."""
    return [
        tuple(
            len(getattr(m, table, None) or ())
            for table in ("_forward_pre_hooks", "_forward_hooks", "_backward_hooks")
        )
        for m in model.modules()
    ]


def _prediction_raised(ex: str, predict, exc: Exception) -> Result:
    """The hint for a predict that raised: a class used as a context manager (no_grad
    without its parentheses) is told so, anything else is reported where it happened."""
    text = str(exc)
    if (
        isinstance(exc, (TypeError, AttributeError))
        and ("context manager" in text or "__enter__" in text)
        and re.search(r"\bno_grad\s*:", _source(predict))
    ):
        return not_yet(
            ex,
            [
                "your `with` statement is given the class no_grad itself, not an object "
                "made from it: a `with` block needs the object, so call the class (with "
                "its parentheses) to make one.",
                "a context manager is an object with __enter__ and __exit__; no_grad is "
                "the class that makes such objects.",
            ],
            gave="a `with` on the class no_grad",
        )
    return failed(ex, crash_message(exc))


def _source(fn) -> str:
    """The learner's function's source, or "" when it cannot be read."""
    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):
        return ""


def _no_grad_not_in_force(ex: str, predict, out) -> Result | None:
    """The hint for a predict that names no_grad, yet ran the model with naivegraph
    recording: torch's no_grad, or one made but not entered around the model's call."""
    source = _source(predict)
    if not re.search(r"\bno_grad\b", source):
        return None
    gave = f"an output with a grad_fn ({out.grad_fn.name()})"
    if re.search(r"\btorch\b", source):
        return not_yet(
            ex,
            [
                "that is torch's no_grad: it switches off torch's recording, and "
                "naivegraph records its own graph, which torch's switch does not reach. "
                "Use naivegraph's no_grad (ng.no_grad).",
                "naivegraph has its own grad mode, with the same names as torch's.",
            ],
            gave=gave,
        )
    return not_yet(
        ex,
        [
            "your function names no_grad, yet the model ran with recording on: no_grad "
            "switches recording off only inside its `with` block (or for a function it "
            "decorates). Making the object alone, or calling the model after the block "
            "ended, changes nothing.",
            "the model's call must be inside the block that no_grad opens.",
        ],
        gave=gave,
    )


def _changed_state(
    ex: str, model, grad_before: bool, grad_after: bool, training_before, flags_before
) -> Result | None:
    """The hint for a grad mode, parameter flag or layer mode that the call changed."""
    if grad_before and not grad_after:
        return not_yet(
            ex,
            [
                "grad mode is still off after your function: everything after it would "
                "silently stop recording (training too).",
                "use no_grad as a `with` block (or a decorator): it switches recording "
                "back on when the block ends.",
            ],
            gave="a function that leaves grad mode off",
        )
    if grad_after and not grad_before:
        return not_yet(
            ex,
            [
                "called with grad mode already off (inside `with ng.no_grad():`), your "
                "function leaves it ON: it switches recording on at the end whatever the "
                "caller had, so the caller's code after the call records again.",
                "restore the grad mode that was in force before the call, not always "
                "'on': a `with` block (or a decorator) does exactly that.",
            ],
            gave="a function that turns grad mode on for a caller that had it off",
        )
    flags_after = [p.requires_grad for p in model.parameters()]
    if any(b and not a for b, a in zip(flags_before, flags_after)):
        frozen = sum(b and not a for b, a in zip(flags_before, flags_after))
        return not_yet(
            ex,
            [
                "after your function the model's parameters no longer require grad: the "
                "model is frozen for any training that follows.",
                "leave the parameters as they are; switch recording off only for the "
                "duration of the call.",
            ],
            gave=f"a model with {frozen} parameters switched to requires_grad=False",
        )
    if any(a and not b for b, a in zip(flags_before, flags_after)):
        return not_yet(
            ex,
            [
                "called on a model with a frozen parameter (requires_grad=False, as in "
                "fine-tuning), your function leaves that parameter requiring grad: "
                "switching the parameters' requires_grad off and back on changes the "
                "model, and unfreezes what the caller had frozen.",
                "leave the parameters alone: switch off recording (grad mode) for the "
                "duration of the call instead.",
            ],
            gave="a function that unfreezes a frozen parameter",
        )
    training_after = [m.training for m in model.modules()]
    if training_after != training_before:
        if training_before[0]:
            return not_yet(
                ex,
                [
                    "after your function the model is in eval mode: eval() changes how "
                    "layers such as dropout and batch norm behave for every call that "
                    "follows, and it records nothing less.",
                    "recording and a layer's mode are separate switches: leave the model's "
                    "mode as it was and switch only recording off, for the call.",
                ],
                gave="a function that calls model.eval()",
            )
        return not_yet(
            ex,
            [
                "called on a model in eval mode, your function leaves it in training "
                "mode: switching to training mode at the end changes a model that was "
                "not training (dropout and batch norm then behave differently).",
                "leave the model's mode as the caller had it: if you change it for the "
                "call, put back the mode it had, not always training.",
            ],
            gave="a function that puts an eval-mode model in training mode",
        )
    return None


def _other_input(ex: str, predict, model, x) -> Result | None:
    """The hint for a predict that runs the notebook's model, or reads the notebook's
    data, instead of the model and the x it is given; or None."""
    read = _globals_read(predict)
    models = [n for n, v in read.items() if isinstance(v, ng.nn.Module) and v is not model]
    inputs = [
        n for n, v in read.items() if isinstance(v, (ng.Tensor, np.ndarray)) and v is not x
    ]
    if not models and not inputs:
        return None
    name = (models or inputs)[0]
    what = "model" if models else "x"
    params = []
    try:
        params = list(inspect.signature(predict).parameters)
    except (TypeError, ValueError):
        pass
    argument = params[0 if models else 1] if len(params) >= 2 else ""
    called = f" (`{argument}` in your function)" if argument and argument != name else ""
    return not_yet(
        ex,
        [
            f"your function reads the notebook's `{name}`, not the {what} it is given "
            f"as its argument{called}: each call brings its own model and x, and the "
            "answer is what THAT model gives for THAT x. A function works on what it is "
            "given, whatever the notebook holds.",
            "inside the function, reach the model and the input through its parameters only.",
        ],
        gave=f"an output computed from the notebook's `{name}`",
    )


def _softmax_of(want: np.ndarray, out) -> str:
    """Which function of the model's output ``out`` is (softmax, log_softmax), or ""."""
    got = as_array_or_none(out)
    if got is None or got.shape != want.shape or want.ndim != 2:
        return ""
    shifted = want - want.max(axis=1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    for name, values in (("a softmax", np.exp(log_p)), ("a log-softmax", log_p)):
        if np.allclose(got, values, rtol=1e-4, atol=1e-6):
            return name
    return ""


def _judge_output(
    ex: str, model, x, out, want, records: int = 0, predict=None, layer_modes=None
) -> Result | None:
    """None when ``out`` is the model's output and no graph was recorded for it;
    ``layer_modes`` holds the grad mode each of the model's layers ran in, by name."""
    if not close(out, want, shape_free=False):
        elsewhere = _other_input(ex, predict, model, x) if predict is not None else None
        if elsewhere is not None:
            return elsewhere
        softmax = _softmax_of(want, out)
        if softmax:
            return not_yet(
                ex,
                [
                    f"your function returns {softmax} of the model's output: "
                    "probabilities made from the scores, not the output itself. The "
                    "exercise asks for what the model gives, the raw scores (logits); a "
                    "caller that wants probabilities applies softmax to them itself, and "
                    "a loss such as cross_entropy expects the scores.",
                    "return the model's output itself, unchanged.",
                ],
                gave=f"{softmax} of the output",
            )
        if np.shape(as_array_or_none(out)) == want.shape:
            return not_yet(
                ex,
                [
                    "your output is not what this model gives for this x: each call "
                    "brings its own model and x (weights and inputs change between "
                    "calls), so an output kept from an earlier call, or computed from "
                    "another model or input, is not the answer.",
                    "return the model's output itself, unchanged, computed on each call.",
                ],
                gave=show(out),
            )
        shape = tuple(getattr(out, "shape", np.shape(as_array_or_none(out))))
        kind = "a tensor" if hasattr(out, "grad_fn") else "an array"
        return not_yet(
            ex,
            [
                f"your output has shape {shape}, and the model gives {want.shape} for "
                "this x (one row of scores per row of x): return the model's output "
                "itself, unchanged, for the x the function is given.",
            ],
            gave=f"{kind} of shape {shape}" if shape else show(out),
        )
    if not hasattr(out, "grad_fn"):
        return not_yet(
            ex,
            "return the model's output as the model gives it, a tensor: the caller may "
            "still compare or combine it with other tensors.",
            gave=f"a {type(out).__name__}",
        )
    dtype = _dtype_name(getattr(out, "dtype", ""))
    if dtype != _dtype_name(want.dtype):
        return not_yet(
            ex,
            [
                f"your output is {dtype}, and the model gives {_dtype_name(want.dtype)}: "
                "a cast (.double(), .float(), .to(...)) makes another tensor than the "
                "model's output. Return the output itself, in the dtype the model gives.",
                "no conversion after the model: its output is the answer as it is.",
            ],
            gave=f"a {dtype} output",
        )
    if not np.array_equal(out.detach().numpy(), want) and len(model.modes) > 1:
        return not_yet(
            ex,
            [
                f"your function runs the model {len(model.modes)} times for one x (a "
                "part of the batch each time, row by row say) and joins the outputs: "
                "float32 products over a smaller batch round differently, so the joined "
                "output differs from the model's output for the whole x in its last bits "
                "(the checker compares every bit). The exercise asks for what the model "
                "gives for x.",
                "call the model once, on the whole x it is given.",
            ],
            gave=f"an output joined from {len(model.modes)} runs of the model",
        )
    if not np.array_equal(out.detach().numpy(), want):
        return not_yet(
            ex,
            [
                "your output is near the model's but not equal to it: something was "
                "added to it or changed in it after the model ran (the checker compares "
                "every bit). Return the model's output itself, unchanged.",
                "no arithmetic after the model: its output is the answer as it is.",
            ],
            gave=f"an output off by up to {np.max(np.abs(out.detach().numpy() - want)):.0e}",
        )
    recorded = records > 0 or any(
        mode and (trainable or x.requires_grad)
        for mode, trainable in zip(model.modes, model.trainable)
    )
    if getattr(out, "grad_fn", None) is not None:
        if model.modes and not any(model.trainable):
            return not_yet(
                ex,
                [
                    "with an input x that requires grad your output records history "
                    "(grad_fn="
                    f"{out.grad_fn.name()}): switching the parameters' requires_grad off "
                    "stops the recording for them only, and changes the model meanwhile.",
                    "switch off recording itself (grad mode) for the duration of the call: "
                    "then nothing is recorded, whatever requires grad.",
                ],
                gave="an output with a grad_fn",
            )
        return not_yet(
            ex,
            [
                f"your output records history (grad_fn={out.grad_fn.name()}): backward "
                "could run through it, and the graph keeps memory alive.",
                "switch recording off while the model runs.",
            ],
            gave="an output with a grad_fn",
        )
    if getattr(out, "requires_grad", False):
        return not_yet(
            ex,
            [
                "your output requires grad: it was switched on after the model ran, so "
                "it has no history, yet every op on it records a graph again.",
                "return the output as the model gives it with recording off: no history "
                "and not requiring grad.",
            ],
            gave="an output that requires grad",
        )
    part = _recorded_in_part(layer_modes or {})
    if recorded and part is not None:
        on, off = part
        return not_yet(
            ex,
            [
                f"your function ran {off} with recording off (inside no_grad, say), but "
                f"{on} before it with recording on: the graph of {on} was built, and "
                "its saved tensors kept, all the same. Switching recording off for the "
                "last part only stops the history there; your output has none, yet "
                "the work of building a graph was done for the rest of the model.",
                "the whole forward pass, every layer of it, belongs inside the block "
                "that switches recording off.",
            ],
            gave=f"{off} run with recording off, {on} with recording on",
        )
    if recorded:
        return not_yet(
            ex,
            [
                "your output has no history, but the model ran with recording on: "
                "the whole graph was built (and its saved tensors kept) first.",
                "detach() cuts the history after the fact; for inference, make sure "
                "no graph is built in the first place.",
            ],
            gave="an output detached after the forward pass",
        )
    return None
