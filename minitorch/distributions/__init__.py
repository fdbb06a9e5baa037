"""`torch.distributions`: probability distributions to sample from and score samples by.

    dist = Categorical(logits=policy(state))
    action = dist.sample()
    loss = -(dist.log_prob(action) * advantage).mean()     # REINFORCE

One file per distribution; distribution.py holds the base class (shapes, validation),
utils.py the conversions between probabilities and logits. Every formula is written in
minitorch ops, so log_prob and entropy differentiate and compile; `rsample` (Normal's) draws
loc + scale * eps, a sample the gradient flows through (the reparameterisation trick).
"""

from minitorch.distributions.bernoulli import Bernoulli
from minitorch.distributions.categorical import Categorical
from minitorch.distributions.distribution import Distribution
from minitorch.distributions.normal import Normal

__all__ = ["Bernoulli", "Categorical", "Distribution", "Normal"]
