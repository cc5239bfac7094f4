# Mirrors: the PyTorch documentation of torch.nn.functional.cross_entropy and its
# neighbours: the doc examples (class-index targets and class-probability targets from
# .softmax(dim=1), loss.backward()), then cross_entropy's weight=, ignore_index=,
# label_smoothing= and reduction= arguments and (N, C, d) inputs, nll_loss with
# log_softmax and weight=, smooth_l1_loss(beta=) and huber_loss(delta=), and the module
# forms nn.CrossEntropyLoss / nn.SmoothL1Loss / nn.HuberLoss. The inputs come from numpy
# rather than torch.randn/randint.
# precision: float64
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(8)

# Example of target with class indices
input = torch.from_numpy(rng.standard_normal((3, 5))).requires_grad_(True)
target = torch.from_numpy(rng.integers(0, 5, (3,)))
loss = F.cross_entropy(input, target)
loss.backward()
print(loss.item(), input.grad[0].tolist())

# Example of target with class probabilities
input.grad = None
target_p = torch.from_numpy(rng.standard_normal((3, 5))).softmax(dim=1)
loss = F.cross_entropy(input, target_p)
loss.backward()
print(loss.item(), input.grad[1].tolist())

# weights per class, an ignored class, label smoothing, and the reductions
logits = torch.from_numpy(rng.standard_normal((6, 4))).requires_grad_(True)
labels = torch.tensor([0, 3, 1, 1, 2, 3])
weight = torch.tensor([1.0, 2.0, 0.5, 1.5])
print(F.cross_entropy(logits, labels, weight=weight).item())
print(F.cross_entropy(logits, labels, ignore_index=1).item())
print(F.cross_entropy(logits, labels, label_smoothing=0.1).item())
print(F.cross_entropy(logits, labels, weight=weight, ignore_index=3, label_smoothing=0.2).item())
print(F.cross_entropy(logits, labels, reduction="none").tolist())
print(F.cross_entropy(logits, labels, reduction="sum").item())
total = F.cross_entropy(logits, labels, weight=weight, ignore_index=1, label_smoothing=0.05)
total.backward()
print(logits.grad[1].tolist(), logits.grad[2].tolist())

# the (N, C, d) form: a class per position, as for sequences
scores = torch.from_numpy(rng.standard_normal((2, 3, 4)))
positions = torch.tensor([[0, 2, 1, 1], [2, 2, 0, 1]])
print(F.cross_entropy(scores, positions).item())
print(F.cross_entropy(scores, positions, reduction="none").tolist())

# nll_loss on log_softmax is cross_entropy
log_probs = F.log_softmax(logits, dim=1)
print(F.nll_loss(log_probs, labels).item(), F.nll_loss(log_probs, labels, weight=weight).item())
print(
    torch.allclose(
        F.nll_loss(log_probs, labels, weight=weight), F.cross_entropy(logits, labels, weight=weight)
    )
)

# smooth L1 and Huber: quadratic near zero, linear beyond beta / delta
pred = torch.tensor([0.2, -1.5, 3.0, 0.9, -0.05], requires_grad=True)
goal = torch.tensor([0.0, 0.0, 1.0, 1.0, 0.0])
print(F.smooth_l1_loss(pred, goal).item(), F.smooth_l1_loss(pred, goal, beta=0.5).item())
print(F.huber_loss(pred, goal).item(), F.huber_loss(pred, goal, delta=2.0).item())
print(F.smooth_l1_loss(pred, goal, reduction="none").tolist())
print(F.huber_loss(pred, goal, reduction="sum", delta=0.5).item())
F.huber_loss(pred, goal, delta=0.5).backward()
print(pred.grad.tolist())

# the module forms
criterion = nn.CrossEntropyLoss(weight=weight, label_smoothing=0.1)
print(criterion(logits, labels).item())
print(nn.SmoothL1Loss(beta=2.0)(pred, goal).item(), nn.HuberLoss(delta=0.3)(pred, goal).item())
