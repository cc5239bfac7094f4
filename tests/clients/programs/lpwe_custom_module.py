# Mirrors: PyTorch tutorial "Learning PyTorch with Examples", section "PyTorch: Custom nn
# Modules" (Polynomial3 with four nn.Parameter scalars, a string() method, optim.SGD).
# precision: float64
import math

import torch

torch.set_default_dtype(torch.float64)


class Polynomial3(torch.nn.Module):
    def __init__(self):
        super().__init__()
        # torch.randn(()) in the tutorial; fixed scalars keep both runs identical
        self.a = torch.nn.Parameter(torch.tensor(0.1))
        self.b = torch.nn.Parameter(torch.tensor(0.2))
        self.c = torch.nn.Parameter(torch.tensor(-0.1))
        self.d = torch.nn.Parameter(torch.tensor(0.05))

    def forward(self, x):
        return self.a + self.b * x + self.c * x**2 + self.d * x**3

    def string(self):
        return (
            f"y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + {self.d.item()} x^3"
        )


x = torch.linspace(-math.pi, math.pi, 2000)
y = torch.sin(x)

model = Polynomial3()
criterion = torch.nn.MSELoss(reduction="sum")
optimizer = torch.optim.SGD(model.parameters(), lr=1e-6)
for t in range(300):
    y_pred = model(x)
    loss = criterion(y_pred, y)
    if t % 100 == 99:
        print(t, loss.item())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f"Result: {model.string()}")
print([name for name, _ in model.named_parameters()])
