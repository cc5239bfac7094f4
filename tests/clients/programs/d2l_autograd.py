# Mirrors: Dive into Deep Learning, section 2.5 "Automatic Differentiation" (y = 2 x.x,
# resetting x.grad, non-scalar backward, detaching, and gradients through Python control
# flow in f(a)).
# precision: float64
import torch

torch.set_default_dtype(torch.float64)
x = torch.arange(4.0)
x.requires_grad_(True)
print(x.grad)
y = 2 * torch.dot(x, x)
print(y.item())
y.backward()
print(x.grad.tolist(), (x.grad == 4 * x).tolist())

x.grad.zero_()
y = x.sum()
y.backward()
print(x.grad.tolist())

x.grad.zero_()
y = x * x
y.backward(gradient=torch.ones(len(y)))
print(x.grad.tolist())

x.grad.zero_()
y = x * x
u = y.detach()
z = u * x
z.sum().backward()
print((x.grad == u).tolist())
x.grad.zero_()
y.sum().backward()
print((x.grad == 2 * x).tolist())


def f(a):
    b = a * 2
    while b.norm() < 1000:
        b = b * 2
    if b.sum() > 0:
        c = b
    else:
        c = 100 * b
    return c


a = torch.tensor(0.8123, requires_grad=True)  # torch.randn(size=()) in the book
d = f(a)
d.backward()
print(d.item(), a.grad.item(), (a.grad == d / a).item())
