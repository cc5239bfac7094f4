# Mirrors: the docstring of torch.Tensor.register_hook (v.register_hook(lambda grad:
# grad * 2) doubling the gradient, handle.remove()), torch.Tensor.retain_grad, and the
# "Autograd mechanics" notes on backward hooks (hooks on grad_fn nodes, prehooks).
# precision: float64
import torch

torch.set_default_dtype(torch.float64)
v = torch.tensor([0.0, 0.0, 0.0], requires_grad=True)
h = v.register_hook(lambda grad: grad * 2)
v.backward(torch.tensor([1.0, 2.0, 3.0]))
print(v.grad.tolist())
h.remove()
v.grad = None
v.backward(torch.tensor([1.0, 2.0, 3.0]))
print(v.grad.tolist())

x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * 3
y.retain_grad()
z = (y**2).sum()
z.backward()
print(y.grad.tolist(), x.grad.tolist(), y.retains_grad)

seen = []
a = torch.tensor([0.5, -0.5], requires_grad=True)
b = a.exp()
c = b.sum()
b.register_hook(lambda g: seen.append(("tensor hook", g.tolist())))
b.grad_fn.register_prehook(lambda grad_outputs: seen.append(("prehook", grad_outputs[0].tolist())))
b.grad_fn.register_hook(
    lambda grad_inputs, grad_outputs: seen.append(("hook", grad_inputs[0].tolist()))
)
c.backward()
for entry in seen:
    print(entry)
print(a.grad.tolist())


def clip(grad):
    return grad.clamp(-1.0, 1.0)


w = torch.tensor([3.0, -0.2, 0.7], requires_grad=True)
w.register_hook(clip)
(w**3).sum().backward()
print(w.grad.tolist())
