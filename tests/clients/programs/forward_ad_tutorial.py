# Mirrors: PyTorch intermediate tutorial "Forward-mode Automatic Differentiation (Beta)"
# (forward_ad_usage): dual tensors under fwAD.dual_level with make_dual/unpack_dual and the
# tangent gone after the level; an nn.Linear whose parameters are swapped for dual tensors
# with delattr/setattr; the same through torch.func.functional_call with a dict of dual
# parameters; a custom autograd.Function with a jvp staticmethod checked by
# gradcheck(check_forward_ad=True, check_backward_ad=False, ...); and torch.func.jvp on a
# function and, with functional_call, on a module. Primals and tangents come from numpy
# rather than torch.randn/rand_like.
# precision: float64
import numpy as np
import torch
import torch.autograd.forward_ad as fwAD
import torch.nn as nn
from torch.func import functional_call, jvp

torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(7)


def randn(*shape):
    return torch.from_numpy(rng.standard_normal(shape))


# -- Basic usage ------------------------------------------------------------------
primal = randn(10, 10)
tangent = randn(10, 10)


def fn(x, y):
    return x**2 + y**2


with fwAD.dual_level():
    # a dual tensor: the primal with a tangent of the same size
    dual_input = fwAD.make_dual(primal, tangent)
    assert fwAD.unpack_dual(dual_input).tangent is tangent

    # a tensor that is not dual has a tangent of None
    plain_tensor = torch.tensor(1.0)
    dual_output = fn(dual_input, plain_tensor)

    # unpack_dual gives a namedtuple with primal and tangent as attributes
    jvp_out = fwAD.unpack_dual(dual_output).tangent
    print(fwAD.unpack_dual(plain_tensor).tangent is None)

print(fwAD.unpack_dual(dual_output).tangent is None)  # the level is gone
print(jvp_out[0, :4].tolist())
print(torch.allclose(jvp_out, 2 * primal * tangent))

# -- Usage with Modules: parameters replaced by dual tensors ------------------------
model = nn.Linear(5, 5)
with torch.no_grad():
    model.weight.copy_(randn(5, 5) * 0.4)
    model.bias.copy_(randn(5) * 0.1)
input = randn(16, 5)

params = {name: p for name, p in model.named_parameters()}
tangents = {name: torch.from_numpy(rng.random(tuple(p.shape))) for name, p in params.items()}

with fwAD.dual_level():
    for name, p in params.items():
        delattr(model, name)
        setattr(model, name, fwAD.make_dual(p, tangents[name]))

    out = model(input)
    jvp_module = fwAD.unpack_dual(out).tangent
print(tuple(jvp_module.shape), jvp_module[0].tolist())

# -- Using the functional Module API ------------------------------------------------
model = nn.Linear(5, 5)
with torch.no_grad():
    model.weight.copy_(params["weight"])
    model.bias.copy_(params["bias"])
params = {name: p for name, p in model.named_parameters()}

with fwAD.dual_level():
    dual_params = {}
    for name, p in params.items():
        # using the same tangents as above
        dual_params[name] = fwAD.make_dual(p, tangents[name])
    out = functional_call(model, dual_params, input)
    jvp_functional = fwAD.unpack_dual(out).tangent
print(torch.allclose(jvp_functional, jvp_module), jvp_functional[3].tolist())


# -- Custom autograd Function -------------------------------------------------------
class Fn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, foo):
        result = torch.exp(foo)
        # tensors kept on ctx are there for the forward-mode gradient
        ctx.result = result
        return result

    @staticmethod
    def jvp(ctx, gI):
        gO = gI * ctx.result
        # a tensor the backward pass will not need can be freed here
        del ctx.result
        return gO


fn_apply = Fn.apply

primal = randn(10, 10).double().requires_grad_(True)
tangent = randn(10, 10)

with fwAD.dual_level():
    dual_input = fwAD.make_dual(primal, tangent)
    dual_output = fn_apply(dual_input)
    jvp_custom = fwAD.unpack_dual(dual_output).tangent
print(jvp_custom[0, :3].tolist())
print(torch.allclose(jvp_custom, tangent * primal.detach().exp()))

# gradcheck checks forward-mode gradients when asked, and can skip the backward ones
print(
    torch.autograd.gradcheck(
        Fn.apply,
        (primal,),
        check_forward_ad=True,
        check_backward_ad=False,
        check_undefined_grad=False,
        check_batched_grad=False,
    )
)

# -- Functional API (torch.func.jvp) --------------------------------------------------
primal0 = randn(10, 10)
tangent0 = randn(10, 10)
primal1 = randn(10, 10)
tangent1 = randn(10, 10)


def fn2(x, y):
    return x**2 + y**2


# the primals and tangents are given as tuples, one entry per argument
primal_out, tangent_out = jvp(fn2, (primal0, primal1), (tangent0, tangent1))
print(primal_out[0, :3].tolist(), tangent_out[0, :3].tolist())

# -- Functional API with Modules -------------------------------------------------------
model = nn.Linear(5, 5)
with torch.no_grad():
    model.weight.copy_(params["weight"])
    model.bias.copy_(params["bias"])


def func(params, input):
    return functional_call(model, params, input)


params = dict(model.named_parameters())
_, jvp_out2 = jvp(lambda params: func(params, input), (params,), (tangents,))
print(torch.allclose(jvp_out2, jvp_module), jvp_out2[15].tolist())
