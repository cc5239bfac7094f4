# Mirrors: the docstrings of torch.Tensor.backward and torch.autograd.backward (gradient
# for non-scalar outputs, several roots with grad_tensors, the inputs= argument,
# retain_graph and gradient accumulation into .grad).
# precision: float64
import torch

torch.set_default_dtype(torch.float64)
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = torch.tensor([-1.0, 0.5, 2.0], requires_grad=True)
out1 = x * y
out2 = (x + y).exp()
torch.autograd.backward([out1, out2], grad_tensors=[torch.ones(3), torch.full((3,), 0.1)])
print(x.grad.tolist(), y.grad.tolist())

x.grad = None
y.grad = None
loss = (x * x * y).sum()
loss.backward(inputs=[x])
print(x.grad.tolist(), y.grad)

s = (x**2).sum()
s.backward(retain_graph=True)
s.backward()
print(x.grad.tolist())
try:
    s.backward()
except RuntimeError as e:
    print("RuntimeError", "Trying to backward through the graph a second time" in str(e))

m = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
n = m.mm(m)
n.backward(torch.tensor([[1.0, 0.0], [0.0, 1.0]]))
print(m.grad.tolist())
try:
    n = m.mm(m)
    n.backward()
except RuntimeError as e:
    print("RuntimeError", "grad can be implicitly created only for scalar outputs" in str(e))
