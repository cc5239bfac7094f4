# Mirrors: the PyTorch "Autograd mechanics" notes: requires_grad propagation and setting
# it for fine-tuning, grad modes (no_grad, enable_grad, set_grad_enabled, inference_mode,
# model.eval() being unrelated), in-place correctness checks via version counters, and
# ".grad" staying None for non-leaf tensors.
# precision: float64
import torch
from torch import nn

torch.set_default_dtype(torch.float64)
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = torch.tensor([0.5, 0.5, 0.5])
print((x * y).requires_grad, (y * y).requires_grad)

with torch.no_grad():
    a = x * 2
    with torch.enable_grad():
        b = x * 2
print(a.requires_grad, b.requires_grad)
with torch.set_grad_enabled(False):
    c = x * 2
print(c.requires_grad, torch.is_grad_enabled())
torch.set_grad_enabled(False)
print((x * 2).requires_grad)
torch.set_grad_enabled(True)
with torch.inference_mode():
    d = x * 2
print(d.requires_grad)

model = nn.Linear(3, 1)
model.eval()
print(model(x.unsqueeze(0)).requires_grad, model.training)
model.train()
print(model.training)
model.requires_grad_(False)
print([p.requires_grad for p in model.parameters()])

s = x.sin()
t = s * s  # mul saves s for backward
s.add_(1)  # an in-place change bumps s._version
print(s._version)
try:
    t.sum().backward()
except RuntimeError as e:
    print("RuntimeError", "modified by an inplace operation" in str(e))

u = x * 2
loss = (u**2).sum()
loss.backward()
print(x.grad.tolist(), u.grad is None, u.is_leaf, x.is_leaf)

leaf = torch.tensor([1.0], requires_grad=True)
try:
    leaf.mul_(2)
except RuntimeError as e:
    print("RuntimeError", "a leaf Variable that requires grad" in str(e))
with torch.no_grad():
    leaf.mul_(2)
print(leaf.tolist(), leaf.requires_grad)
