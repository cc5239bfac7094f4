# Mirrors: the torch API reference examples for torch.dot, torch.norm / Tensor.norm,
# torch.sort, torch.var, torch.std, torch.prod and Tensor.index_add_, with the gradients
# a learner checks by hand (d/dx of prod, var, std and norm).
# precision: float64
import torch

torch.set_default_dtype(torch.float64)
print(torch.dot(torch.tensor([2.0, 3.0]), torch.tensor([2.0, 1.0])).item())
a = torch.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.5]], requires_grad=True)
print(torch.norm(a).item(), a.norm(dim=1).tolist(), a.norm(p=1).item())
values, indices = torch.sort(torch.tensor([3.0, -1.0, 2.0, 0.5]), descending=True)
print(values.tolist(), indices.tolist())
print(torch.var(a).item(), torch.std(a, dim=0).tolist(), a.var(dim=1, unbiased=False).tolist())
print(torch.prod(a).item(), a.prod(dim=1).tolist())

loss = a.prod() + a.var() + a.std() + a.norm() + torch.dot(a[0], a[1])
loss.backward()
print(a.grad.tolist())

x = torch.ones(5, 3)
t = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]])
index = torch.tensor([0, 4, 2])
x.index_add_(0, index, t)
print(x.tolist())
