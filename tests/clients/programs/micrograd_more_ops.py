# Mirrors: micrograd's test/test_engine.py, test_more_ops -- the PyTorch half, with its
# in-place updates of non-leaf tensors (c += c + 1, d += d * 2 + (b + a).relu()).
# precision: float64
import torch

a = torch.Tensor([-4.0]).double()
b = torch.Tensor([2.0]).double()
a.requires_grad = True
b.requires_grad = True
c = a + b
d = a * b + b**3
c = c + c + 1
c = c + 1 + c + (-a)
d = d + d * 2 + (b + a).relu()
d = d + 3 * d + (b - a).relu()
e = c - d
f = e**2
g = f / 2.0
g = g + 10.0 / f
g.backward()
print(g.data.item(), a.grad.item(), b.grad.item())

# the same expression with Python's in-place operators on the non-leaf tensors
a2 = torch.Tensor([-4.0]).double().requires_grad_()
b2 = torch.Tensor([2.0]).double().requires_grad_()
c = a2 + b2
d = a2 * b2 + b2**3
c += c + 1
c += 1 + c + (-a2)
d += d * 2 + (b2 + a2).relu()
d += 3 * d + (b2 - a2).relu()
e = c - d
f = e**2
g = f / 2.0
g += 10.0 / f
g.backward()
print(g.item(), a2.grad.item(), b2.grad.item())
print(type(g.grad_fn).__name__, c._version, d._version)
