# Mirrors: PyTorch tutorial "Introduction to PyTorch Tensors" (introyt
# tensors_deeper_tutorial): empty/zeros/ones/rand, manual_seed repeatability, *_like,
# torch.tensor from lists, dtype= arguments, the default dtype, math with scalars,
# broadcasting, clamp, in-place ops with out=, clone and detach, devices, and reshaping
# with unsqueeze/squeeze/reshape -- plus the factory keywords device= and size=.
# precision: float32
import math

import torch

x = torch.empty(3, 4)
print(type(x).__name__, tuple(x.shape))
zeros = torch.zeros(2, 3)
ones = torch.ones(2, 3)
print(zeros.tolist(), ones.tolist())

torch.manual_seed(1729)
random1 = torch.rand(2, 3)
torch.manual_seed(1729)
random2 = torch.rand(2, 3)
print(random1.equal(random2))
print((random1 == random2).all().item())

x = torch.empty(2, 2, 3)
print(tuple(torch.empty_like(x).shape), torch.zeros_like(x).sum().item())
print(tuple(torch.rand_like(x).shape), torch.ones_like(x).sum().item())

some_constants = torch.tensor([[3.1415926, 2.71828], [1.61803, 0.0072897]])
print(some_constants.tolist())
some_integers = torch.tensor((2, 3, 5, 7, 11, 13, 17, 19))
print(some_integers.tolist(), some_integers.dtype == torch.int64)

a = torch.ones((2, 3), dtype=torch.int16)
print(a.tolist(), a.dtype == torch.int16)
b = torch.tensor([[1.7, 2.2], [3.9, 0.4]], dtype=torch.float64) * 20.0
c = b.to(torch.int32)
print(c.tolist())
print(torch.float is torch.float32, torch.double is torch.float64)
torch.set_default_dtype(torch.float32)
print(torch.get_default_dtype() == torch.float32, torch.tensor([1.5]).dtype == torch.float32)

ones = torch.zeros(2, 2) + 1
twos = torch.ones(2, 2) * 2
threes = (torch.ones(2, 2) * 7 - 1) / 2
fours = twos**2
sqrt2s = twos**0.5
print(ones.tolist(), twos.tolist(), threes.tolist(), fours.tolist(), sqrt2s.tolist())

rand = torch.tensor([[0.1, 0.9, 0.4, 0.6], [0.3, 0.2, 0.8, 0.7]])
doubled = rand * (torch.ones(1, 4) * 2)
print(doubled.tolist())
print(torch.clamp(rand * 2 - 1, -0.5, 0.5).tolist())
print(torch.abs(rand - 0.5).tolist())
angles = torch.tensor([0, math.pi / 4, math.pi / 2, 3 * math.pi / 4])
sines = torch.sin(angles)
print(sines.tolist())

a = torch.tensor([0.2, 0.5, 0.7])
b = a.clone()
b[0] = 561
print(a.tolist(), b.tolist())
a = torch.tensor([0.2, 0.5, 0.7], requires_grad=True)
b = a.clone()
c = a.detach().clone()
print(b.requires_grad, c.requires_grad)

device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
print(device)
x = torch.rand(2, 2, device=device)
print(x.device == torch.device("cpu"), str(x.device))
y = torch.zeros(3, device="cpu") + torch.ones(3, device=torch.device("cpu"))
print(y.tolist())
try:
    torch.ones(2, device="cuda")
except (RuntimeError, AssertionError):  # which one depends on how torch was built
    print("no cuda")

a = torch.rand(3, 226, 226)
b = a.unsqueeze(0)
print(tuple(a.shape), tuple(b.shape))
c = torch.rand(1, 1, 1, 1, 1)
print(tuple(c.shape), tuple(c.squeeze().shape))
output3d = torch.rand(6, 20, 20)
input1d = output3d.reshape(6 * 20 * 20)
print(tuple(input1d.shape), tuple(torch.reshape(output3d, (6 * 20 * 20,)).shape))

print(tuple(torch.randn(size=(2, 5)).shape), tuple(torch.rand(size=(3,)).shape))
print(tuple(torch.normal(2.0, 3.0, size=(4, 2)).shape))
print(tuple(torch.normal(torch.zeros(5), torch.ones(5)).shape))
print(torch.FloatTensor([1, 2]).tolist(), torch.LongTensor([3, 4]).tolist())
print(torch.FloatTensor([1, 2]).dtype == torch.float32, torch.LongTensor([3]).dtype == torch.int64)
