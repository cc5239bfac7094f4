# Mirrors: PyTorch tutorial "Learning PyTorch with Examples", section "PyTorch: optim"
# (the same polynomial fit trained with torch.optim.RMSprop).
# precision: float64
import math

import torch

torch.set_default_dtype(torch.float64)
x = torch.linspace(-math.pi, math.pi, 2000)
y = torch.sin(x)
xx = x.unsqueeze(-1).pow(torch.tensor([1, 2, 3]))

model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1))
with torch.no_grad():
    model[0].weight.copy_(torch.tensor([[0.2, 0.1, -0.1]]))
    model[0].bias.zero_()
loss_fn = torch.nn.MSELoss(reduction="sum")

learning_rate = 1e-3
optimizer = torch.optim.RMSprop(model.parameters(), lr=learning_rate)
for t in range(300):
    y_pred = model(xx)
    loss = loss_fn(y_pred, y)
    if t % 50 == 49:
        print(t, loss.item())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

linear_layer = model[0]
print(linear_layer.bias.item(), linear_layer.weight.tolist())
