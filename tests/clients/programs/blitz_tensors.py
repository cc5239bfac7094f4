# Mirrors: PyTorch tutorial "Tensors" (60 minute blitz / basics tensorqs): creating from
# data and numpy, *_like, shapes, attributes, moving to an accelerator when available,
# indexing and slicing, cat, matmul three ways, element-wise product three ways,
# single-element item(), in-place add_, and the NumPy bridge.
# precision: float32
import numpy as np
import torch

data = [[1, 2], [3, 4]]
x_data = torch.tensor(data)
np_array = np.array(data)
x_np = torch.from_numpy(np_array)
print(x_data.tolist(), x_np.tolist(), x_data.dtype == torch.int64)

x_ones = torch.ones_like(x_data)
print(f"Ones Tensor: \n {x_ones.tolist()} \n")
x_rand = torch.rand_like(x_data, dtype=torch.float)
print(tuple(x_rand.shape), x_rand.dtype == torch.float32)

shape = (2, 3)
rand_tensor = torch.rand(shape)
ones_tensor = torch.ones(shape)
zeros_tensor = torch.zeros(shape)
print(tuple(rand_tensor.shape), ones_tensor.tolist(), zeros_tensor.tolist())

tensor = torch.rand(3, 4)
print(f"Shape of tensor: {list(tensor.shape)}")
print(f"Device tensor is stored on: {tensor.device}")
if torch.cuda.is_available():
    tensor = tensor.to("cuda")

tensor = torch.ones(4, 4)
print(f"First row: {tensor[0].tolist()}")
print(f"First column: {tensor[:, 0].tolist()}")
print(f"Last column: {tensor[..., -1].tolist()}")
tensor[:, 1] = 0
print(tensor.tolist())

t1 = torch.cat([tensor, tensor, tensor], dim=1)
print(t1.tolist())

tensor = torch.arange(16, dtype=torch.float32).reshape(4, 4) / 10
y1 = tensor @ tensor.T
y2 = tensor.matmul(tensor.T)
y3 = torch.matmul(tensor, tensor.T)
print(y1.tolist(), (y1 == y2).all().item(), (y1 == y3).all().item())

z1 = tensor * tensor
z2 = tensor.mul(tensor)
z3 = torch.mul(tensor, tensor)
print(z1.tolist(), (z2 == z3).all().item())

agg = tensor.sum()
agg_item = agg.item()
print(agg_item, type(agg_item).__name__)

print(f"{tensor.tolist()} \n")
tensor.add_(5)
print(tensor.tolist())

t = torch.ones(5)
n = t.numpy()
t.add_(1)
print(f"t: {t.tolist()}", f"n: {n.tolist()}")
n = np.ones(5)
t = torch.from_numpy(n)
np.add(n, 1, out=n)
print(f"t: {t.tolist()}", f"n: {n.tolist()}")
