# Mirrors: the torch.autograd.forward_ad documentation and the "Forward-mode Automatic
# Differentiation" tutorial (dual_level, make_dual, unpack_dual, tangents through ops).
# precision: float64
import torch
import torch.autograd.forward_ad as fwAD

torch.set_default_dtype(torch.float64)
primal = torch.tensor([0.5, 1.0, 1.5])
tangent = torch.tensor([1.0, 0.0, -2.0])


def fn(x, y):
    return x**2 + y**2


with fwAD.dual_level():
    dual_input = fwAD.make_dual(primal, tangent)
    dual_output = fn(dual_input, dual_input.sin())
    jvp = fwAD.unpack_dual(dual_output).tangent
    value = fwAD.unpack_dual(dual_output).primal
print(value.tolist(), jvp.tolist())

with fwAD.dual_level():
    x = fwAD.make_dual(torch.tensor(0.3), torch.tensor(1.0))
    y = (x.exp() * x.cos()).tanh()
    p, t = fwAD.unpack_dual(y)
print(p.item(), t.item())
