# Mirrors: yunjey/pytorch-tutorial, tutorials/01-basics/linear_regression/main.py
# (nn.Linear(1, 1) fit to fifteen float32 numpy points with nn.MSELoss and
# torch.optim.SGD(lr=0.001) for 60 epochs, inputs through torch.from_numpy, a loss line
# every 5 epochs, predictions from model(...).detach().numpy(), and the checkpoint
# torch.save(model.state_dict(), 'model.ckpt') -- written to a temporary folder here).
# The layer starts from fixed values instead of torch's draw; float32 as in the original.
# precision: float32
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn

torch.set_default_dtype(torch.float32)

# Hyper-parameters
input_size = 1
output_size = 1
num_epochs = 60
learning_rate = 0.001

# Toy dataset
x_train = np.array(
    [[3.3], [4.4], [5.5], [6.71], [6.93], [4.168], [9.779], [6.182], [7.59], [2.167],
     [7.042], [10.791], [5.313], [7.997], [3.1]], dtype=np.float32)  # fmt: skip
y_train = np.array(
    [[1.7], [2.76], [2.09], [3.19], [1.694], [1.573], [3.366], [2.596], [2.53], [1.221],
     [2.827], [3.465], [1.65], [2.904], [1.3]], dtype=np.float32)  # fmt: skip

# Linear regression model
model = nn.Linear(input_size, output_size)
with torch.no_grad():
    model.weight.fill_(-0.4)
    model.bias.fill_(0.3)

# Loss and optimizer
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)

# Train the model
for epoch in range(num_epochs):
    # Convert numpy arrays to torch tensors
    inputs = torch.from_numpy(x_train)
    targets = torch.from_numpy(y_train)

    # Forward pass
    outputs = model(inputs)
    loss = criterion(outputs, targets)

    # Backward and optimize
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

    if (epoch + 1) % 5 == 0:
        print("Epoch [{}/{}], Loss: {:.4f}".format(epoch + 1, num_epochs, loss.item()))

# Plot the graph (the original plots; here the predictions are printed)
predicted = model(torch.from_numpy(x_train)).detach().numpy()
print(predicted.dtype, predicted[:4, 0].tolist())

# Save the model checkpoint
folder = tempfile.mkdtemp()
torch.save(model.state_dict(), os.path.join(folder, "model.ckpt"))
state = torch.load(os.path.join(folder, "model.ckpt"))
print(sorted(state), state["weight"].item(), state["bias"].item())
os.remove(os.path.join(folder, "model.ckpt"))
os.rmdir(folder)
