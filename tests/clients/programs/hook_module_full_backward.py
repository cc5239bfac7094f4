# Mirrors: torch.nn.Module.register_full_backward_hook as the PyTorch docs describe it and
# as gradient-inspection posts use it: print grad_input and grad_output of layers, scale a
# layer's input gradient by returning a new grad_input, and see the
# BackwardHookFunctionBackward nodes the hooks add -- on a small batch-norm MLP and random
# data made here.
# precision: float64
import numpy as np
import torch
import torch.nn as nn

torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(13)
model = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.ReLU(), nn.Linear(6, 1))
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.from_numpy(rng.normal(0, 0.7, tuple(p.shape))))


def report(module, grad_input, grad_output):
    print(
        type(module).__name__,
        [None if g is None else round(g.norm().item(), 10) for g in grad_input],
        [round(g.norm().item(), 10) for g in grad_output],
    )


handles = [layer.register_full_backward_hook(report) for layer in model]
x = torch.from_numpy(rng.normal(size=(8, 4)))
x.requires_grad_(True)
y = torch.from_numpy(rng.normal(size=(8, 1)))
out = model(x)
print(out.grad_fn.name(), out.grad_fn.next_functions[0][0].name())
loss = ((out - y) ** 2).mean()
loss.backward()
print(x.grad.norm().item(), model[0].weight.grad.norm().item())


def scale_grad(module, grad_input, grad_output):
    return (grad_input[0] * 0.5,)


for h in handles:
    h.remove()
x.grad = None
model.zero_grad()
model[2].register_full_backward_hook(scale_grad)
((model(x) - y) ** 2).mean().backward()
print(x.grad.norm().item(), model[0].weight.grad.norm().item())
print(model[1].running_mean.tolist())
