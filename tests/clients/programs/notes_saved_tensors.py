# Mirrors: the PyTorch "Autograd mechanics" notes, sections "Saved tensors" (x.grad_fn
# ._saved_self, _saved_result of exp) and "Hooks for saved tensors"
# (torch.autograd.graph.saved_tensors_hooks with pack/unpack hooks).
# precision: float64
import torch

torch.set_default_dtype(torch.float64)
x = torch.tensor([0.5, 1.5], requires_grad=True)
y = x.pow(2)
print(y.grad_fn._saved_self is x)
print(y.grad_fn._saved_exponent)
z = x.exp()
print(z.grad_fn._saved_result.equal(z))

packed = []


def pack_hook(t):
    packed.append(tuple(t.shape))
    return t * 1


def unpack_hook(t):
    return t


a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
    b = a * a
b.sum().backward()
print(packed, a.grad.tolist())
