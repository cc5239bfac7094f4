# Mirrors: MorvanZhou/PyTorch-Tutorial, tutorial-contents/304_save_reload.py (train a
# Sequential net, torch.save the entire net and its state_dict, then restore_net with
# torch.load and restore_params with load_state_dict into a new Sequential; the three
# predictions agree). The files go to a temporary folder. naivegraph stores tensors and
# containers of them, not pickled modules, so of the two ways only the state_dict one is
# here: the entire-net torch.save(net1, 'net.pkl') / restore_net is left out.
# precision: float32
import os
import tempfile

import numpy as np
import torch

torch.set_default_dtype(torch.float32)
rng = np.random.default_rng(304)

# fake data
x = torch.unsqueeze(torch.linspace(-1, 1, 100), dim=1)  # x data (tensor), shape=(100, 1)
y = x.pow(2) + 0.2 * torch.from_numpy(rng.random(tuple(x.size())).astype(np.float32))
folder = tempfile.mkdtemp()


def save():
    # save net1
    net1 = torch.nn.Sequential(torch.nn.Linear(1, 10), torch.nn.ReLU(), torch.nn.Linear(10, 1))
    with torch.no_grad():
        for p in net1.parameters():
            p.copy_(torch.from_numpy(rng.uniform(-0.8, 0.8, tuple(p.shape)).astype(np.float32)))
    optimizer = torch.optim.SGD(net1.parameters(), lr=0.5)
    loss_func = torch.nn.MSELoss()

    for _t in range(100):
        prediction = net1(x)
        loss = loss_func(prediction, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    print("net1 loss", loss.item(), prediction[:3, 0].tolist())
    torch.save(net1.state_dict(), os.path.join(folder, "net_params.pkl"))  # parameters
    return net1(x)


def restore_params():
    # restore only the parameters in net1 to net3
    net3 = torch.nn.Sequential(torch.nn.Linear(1, 10), torch.nn.ReLU(), torch.nn.Linear(10, 1))

    # copy net1's parameters into net3
    net3.load_state_dict(torch.load(os.path.join(folder, "net_params.pkl")))
    prediction = net3(x)
    print("net3", list(net3.state_dict().keys()), prediction[:3, 0].tolist())
    return prediction


p1 = save()
p3 = restore_params()
print(torch.equal(p1, p3), torch.equal(p1, p3 + 1))
os.remove(os.path.join(folder, "net_params.pkl"))
os.rmdir(folder)
