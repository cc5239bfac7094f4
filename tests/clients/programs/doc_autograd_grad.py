# Mirrors: the docstring and documented behaviour of torch.autograd.grad (grad_outputs,
# create_graph for higher order, allow_unused, retain_graph) in the PyTorch API reference.
# precision: float64
import torch

torch.set_default_dtype(torch.float64)
x = torch.tensor([0.5, 1.5, -2.0], requires_grad=True)
y = (x**3).sum()
(g,) = torch.autograd.grad(y, x, create_graph=True)
print(g.tolist(), g.requires_grad)
(h,) = torch.autograd.grad(g.sum(), x)
print(h.tolist())

a = torch.tensor(2.0, requires_grad=True)
b = torch.tensor(3.0, requires_grad=True)
unused = torch.tensor(4.0, requires_grad=True)
z = a * b + a.exp()
ga, gb, gu = torch.autograd.grad(z, (a, b, unused), allow_unused=True, retain_graph=True)
print(ga.item(), gb.item(), gu)
try:
    torch.autograd.grad(z, (a, unused))
except RuntimeError as e:
    print("RuntimeError", "allow_unused=True" in str(e))

v = torch.tensor([1.0, 0.5, -1.0])
w = x.sin() * 2
(vjp,) = torch.autograd.grad(w, x, grad_outputs=v)
print(vjp.tolist())

u = torch.tensor(1.2, requires_grad=True)
f = u.tanh()
d1 = torch.autograd.grad(f, u, create_graph=True)[0]
d2 = torch.autograd.grad(d1, u, create_graph=True)[0]
d3 = torch.autograd.grad(d2, u)[0]
print(d1.item(), d2.item(), d3.item())
