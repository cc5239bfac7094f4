# Mirrors: yunjey/pytorch-tutorial, tutorials/01-basics/pytorch_basics/main.py (basic
# autograd on three scalars with requires_grad=True; an nn.Linear(3, 2) with its weight and
# bias printed, nn.MSELoss, torch.optim.SGD(lr=0.01), the gradients dL/dw and dL/db and one
# optimizer.step(); numpy arrays through torch.from_numpy and .numpy(); a custom
# torch.utils.data.Dataset with __getitem__/__len__ behind a DataLoader; and saving and
# loading parameters with state_dict/load_state_dict). The random x and y and the layer's
# start come from numpy, the CIFAR-10 and ResNet parts need downloads and are left out, and
# so is torch.save of the whole model (naivegraph stores tensors, not pickled modules).
# precision: float32
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn

torch.set_default_dtype(torch.float32)
rng = np.random.default_rng(101)

# ================================================================== #
#                     1. Basic autograd example 1                    #
# ================================================================== #

# Create tensors.
x = torch.tensor(1.0, requires_grad=True)
w = torch.tensor(2.0, requires_grad=True)
b = torch.tensor(3.0, requires_grad=True)

# Build a computational graph.
y = w * x + b  # y = 2 * x + 3

# Compute gradients.
y.backward()

# Print out the gradients.
print(x.grad)  # x.grad = 2
print(w.grad)  # w.grad = 1
print(b.grad)  # b.grad = 1

# ================================================================== #
#                    2. Basic autograd example 2                     #
# ================================================================== #

# Create tensors of shape (10, 3) and (10, 2).
x = torch.from_numpy(rng.standard_normal((10, 3)).astype(np.float32))
y = torch.from_numpy(rng.standard_normal((10, 2)).astype(np.float32))

# Build a fully connected layer.
linear = nn.Linear(3, 2)
with torch.no_grad():
    linear.weight.copy_(torch.tensor([[0.25, -0.5, 0.125], [-0.375, 0.0625, 0.5]]))
    linear.bias.copy_(torch.tensor([0.1, -0.2]))
print("w: ", linear.weight)
print("b: ", linear.bias)

# Build loss function and optimizer.
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(linear.parameters(), lr=0.01)

# Forward pass.
pred = linear(x)

# Compute loss.
loss = criterion(pred, y)
print("loss: ", loss.item())

# Backward pass.
loss.backward()

# Print out the gradient.
print("dL/dw: ", linear.weight.grad)
print("dL/db: ", linear.bias.grad)

# 1-step gradient descent.
optimizer.step()

# You can also perform gradient descent at the low level.
# linear.weight.data.sub_(0.01 * linear.weight.grad.data)
# linear.bias.data.sub_(0.01 * linear.bias.grad.data)

# Print out the loss after 1-step gradient descent.
pred = linear(x)
loss = criterion(pred, y)
print("loss after 1 step optimization: ", loss.item())

# ================================================================== #
#                     3. Loading data from numpy                     #
# ================================================================== #

# Create a numpy array.
x = np.array([[1, 2], [3, 4]])

# Convert the numpy array to a torch tensor.
y = torch.from_numpy(x)

# Convert the torch tensor to a numpy array.
z = y.numpy()
print(y, z.tolist(), y.dtype == torch.int64)


# ================================================================== #
#                5. Input pipeline for custom dataset                #
# ================================================================== #


# You should build your custom dataset as below.
class CustomDataset(torch.utils.data.Dataset):
    def __init__(self):
        # 1. Initialize file paths or a list of file names.
        self.data = np.arange(24, dtype=np.float32).reshape(12, 2)

    def __getitem__(self, index):
        # 1. Read one data from file; 2. Preprocess; 3. Return a data pair.
        return torch.from_numpy(self.data[index]), int(index % 3)

    def __len__(self):
        # Change 0 to the total size of your dataset.
        return len(self.data)


# You can then use the prebuilt data loader.
custom_dataset = CustomDataset()
train_loader = torch.utils.data.DataLoader(dataset=custom_dataset, batch_size=5, shuffle=False)
for images, labels in train_loader:
    print(images.sum(0).tolist(), labels.tolist(), labels.dtype == torch.int64)

# ================================================================== #
#                      7. Save and load the model                    #
# ================================================================== #

folder = tempfile.mkdtemp()
path = os.path.join(folder, "params.ckpt")
# Save and load only the model parameters (recommended).
torch.save(linear.state_dict(), path)
restored = nn.Linear(3, 2)
restored.load_state_dict(torch.load(path))
print(restored.weight, torch.equal(restored.bias, linear.bias))
os.remove(path)
os.rmdir(folder)
