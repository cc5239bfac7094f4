# Mirrors: PyTorch tutorial "Build the Neural Network" (beginner basics/buildmodel):
# NeuralNetwork of Flatten + Sequential(Linear, ReLU, ...), Softmax, argmax, and the
# walk over the layers and named_parameters -- at a small size with synthetic images.
# precision: float64
import numpy as np
import torch
from torch import nn

torch.set_default_dtype(torch.float64)
device = "cuda" if torch.cuda.is_available() else "cpu"
print(f"Using {device} device")


class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(8 * 8, 16),
            nn.ReLU(),
            nn.Linear(16, 16),
            nn.ReLU(),
            nn.Linear(16, 10),
        )

    def forward(self, x):
        x = self.flatten(x)
        logits = self.linear_relu_stack(x)
        return logits


model = NeuralNetwork().to(device)
print(model)
rng = np.random.default_rng(1)
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.from_numpy(rng.uniform(-0.3, 0.3, tuple(p.shape))))

X = torch.from_numpy(rng.random((3, 8, 8)))
logits = model(X)
pred_probab = nn.Softmax(dim=1)(logits)
y_pred = pred_probab.argmax(1)
print(f"Predicted class: {y_pred.tolist()}")
print(pred_probab.sum(1).tolist(), logits[0].tolist())

input_image = torch.from_numpy(rng.random((3, 8, 8)))
flat_image = nn.Flatten()(input_image)
print(list(flat_image.size()))
layer1 = nn.Linear(in_features=8 * 8, out_features=5)
with torch.no_grad():
    layer1.weight.fill_(0.01)
    layer1.bias.fill_(-0.1)
hidden1 = layer1(flat_image)
print(list(hidden1.size()))
hidden1 = nn.ReLU()(hidden1)
print(f"After ReLU: {hidden1.tolist()}")

print(f"Model structure: {model}\n\n")
for name, param in model.named_parameters():
    print(f"Layer: {name} | Size: {list(param.size())} | Values : {param[:2].tolist()} \n")
