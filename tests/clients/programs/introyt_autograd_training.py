# Mirrors: PyTorch tutorial "The Fundamentals of Autograd" (introyt), sections "Autograd
# in Training" (TinyModel, one SGD batch, gradients accumulating) and "Turning Autograd
# Off and On" (requires_grad flag, no_grad context and decorator, detach).
# precision: float64
import numpy as np
import torch

torch.set_default_dtype(torch.float64)
BATCH_SIZE = 16
DIM_IN = 100  # 1000 in the tutorial; smaller keeps the corpus fast
HIDDEN_SIZE = 20
DIM_OUT = 10


class TinyModel(torch.nn.Module):
    def __init__(self):
        super(TinyModel, self).__init__()
        self.layer1 = torch.nn.Linear(DIM_IN, HIDDEN_SIZE)
        self.relu = torch.nn.ReLU()
        self.layer2 = torch.nn.Linear(HIDDEN_SIZE, DIM_OUT)

    def forward(self, x):
        x = self.layer1(x)
        x = self.relu(x)
        x = self.layer2(x)
        return x


rng = np.random.default_rng(0)  # torch.randn in the tutorial: numpy gives both runs the same
some_input = torch.tensor(rng.standard_normal((BATCH_SIZE, DIM_IN)))
ideal_output = torch.tensor(rng.standard_normal((BATCH_SIZE, DIM_OUT)))
model = TinyModel()
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.tensor(rng.uniform(-0.1, 0.1, tuple(p.shape))))

print(model.layer2.weight[0][0:10].tolist())
print(model.layer2.weight.grad)

optimizer = torch.optim.SGD(model.parameters(), lr=0.001)
prediction = model(some_input)
loss = (ideal_output - prediction).pow(2).sum()
print(loss.item())
loss.backward()
print(model.layer2.weight.grad[0][0:10].tolist())
optimizer.step()
print(model.layer2.weight[0][0:10].tolist())

for _ in range(0, 5):
    prediction = model(some_input)
    loss = (ideal_output - prediction).pow(2).sum()
    loss.backward()
print(model.layer2.weight.grad[0][0:10].tolist())
optimizer.zero_grad()
print(model.layer2.weight.grad)

a = torch.ones(2, 3, requires_grad=True)
b1 = 2 * a
a.requires_grad = False
b2 = 2 * a
print(b1.requires_grad, type(b1.grad_fn).__name__, b2.requires_grad, b2.grad_fn)

a = torch.ones(2, 3, requires_grad=True) * 2
b = torch.ones(2, 3, requires_grad=True) * 3
c1 = a + b
with torch.no_grad():
    c2 = a + b
c3 = a * b
print(c1.requires_grad, c2.requires_grad, c3.requires_grad, c3.tolist())


def add_tensors1(x, y):
    return x + y


@torch.no_grad()
def add_tensors2(x, y):
    return x + y


print(add_tensors1(a, b).requires_grad, add_tensors2(a, b).requires_grad)

x = torch.tensor([0.1, 0.2, 0.3], requires_grad=True)
y = x.detach()
print(x.requires_grad, y.requires_grad, y.tolist())
