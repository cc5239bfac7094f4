# Mirrors: PyTorch tutorial "Saving and Loading Models" (save/load a state_dict,
# load_state_dict(torch.load(PATH, weights_only=True)), model.eval(), and a general
# checkpoint dict with epoch, model and optimizer state dicts and the loss).
# precision: float64
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.set_default_dtype(torch.float64)


class TheModelClass(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 5)
        self.fc2 = nn.Linear(5, 3)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def fixed(model):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(torch.linspace(-1, 1, p.numel()).reshape(p.shape) * (0.3 + 0.1 * i))
    return model


model = fixed(TheModelClass())
optimizer = optim.SGD(model.parameters(), lr=0.001, momentum=0.9)
x = torch.linspace(-1, 1, 12).reshape(2, 6)
loss = model(x).pow(2).sum()
loss.backward()
optimizer.step()

print("Model's state_dict:")
for param_tensor in model.state_dict():
    print(param_tensor, "\t", list(model.state_dict()[param_tensor].size()))
print("Optimizer's state_dict:")
shown = ("lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize", "params")
for var_name in optimizer.state_dict():
    value = optimizer.state_dict()[var_name]
    if var_name == "param_groups":
        value = [{k: group[k] for k in shown} for group in value]
    else:
        value = {i: {k: v.tolist() for k, v in entry.items()} for i, entry in value.items()}
    print(var_name, "\t", value)

with tempfile.TemporaryDirectory() as folder:
    PATH = os.path.join(folder, "model.pt")
    torch.save(model.state_dict(), PATH)
    model2 = TheModelClass()
    print(model2.load_state_dict(torch.load(PATH, weights_only=True)))
    model2.eval()
    print(model2(x).tolist() == model(x).tolist())

    CKPT = os.path.join(folder, "checkpoint.tar")
    torch.save(
        {
            "epoch": 5,
            "model_state_dict": model.state_dict(),
            "optimizer_state_dict": optimizer.state_dict(),
            "loss": loss,
        },
        CKPT,
    )
    model3 = TheModelClass()
    optimizer3 = optim.SGD(model3.parameters(), lr=0.5, momentum=0.1)
    checkpoint = torch.load(CKPT, weights_only=True)
    model3.load_state_dict(checkpoint["model_state_dict"])
    optimizer3.load_state_dict(checkpoint["optimizer_state_dict"])
    epoch = checkpoint["epoch"]
    loss3 = checkpoint["loss"]
    print(epoch, loss3.item(), optimizer3.param_groups[0]["lr"])
    model3.train()
    out = model3(x).pow(2).sum()
    out.backward()
    optimizer3.step()
    print(out.item(), model3.fc2.bias.tolist())

    TENSOR = os.path.join(folder, "tensor.pt")
    torch.save(torch.arange(6.0).reshape(2, 3), TENSOR)
    print(torch.load(TENSOR).tolist())
