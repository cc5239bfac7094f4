# Mirrors: PyTorch tutorial "A Gentle Introduction to torch.autograd" (60 minute blitz):
# Q = 3a^3 - b^2 with an external gradient, exclusion from the DAG, freezing a model.
# precision: float64
import torch
from torch import nn, optim

torch.set_default_dtype(torch.float64)
a = torch.tensor([2.0, 3.0], requires_grad=True)
b = torch.tensor([6.0, 4.0], requires_grad=True)
Q = 3 * a**3 - b**2

external_grad = torch.tensor([1.0, 1.0])
Q.backward(gradient=external_grad)
print(9 * a**2 == a.grad)
print(-2 * b == b.grad)
print(a.grad.tolist(), b.grad.tolist())

x = torch.rand(5, 5)
y = torch.rand(5, 5)
z = torch.rand((5, 5), requires_grad=True)
a = x + y
print(f"Does `a` require gradients?: {a.requires_grad}")
b = x + z
print(f"Does `b` require gradients?: {b.requires_grad}")


# The tutorial freezes a pretrained resnet18; a small stand-in with an `fc` head here.
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(6, 4)
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(torch.relu(self.body(x)))


model = Net()
for param in model.parameters():
    param.requires_grad = False
model.fc = nn.Linear(4, 2)
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (i + 1))
print([(n, p.requires_grad) for n, p in model.named_parameters()])

optimizer = optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
data = torch.linspace(-1, 1, 12).reshape(2, 6)
loss = model(data).sum()
loss.backward()
optimizer.step()
print(loss.item(), model.body.weight.grad, model.fc.weight.grad.tolist())
print(model.fc.weight.tolist(), model.fc.bias.tolist())
