"""Advantage actor-critic (A2C) with a Normal policy for a continuous action.

The usual shape: one network with a shared body, an actor head giving the mean of a Normal
(its log standard deviation a free parameter) and a critic head giving the state's value. An
episode is rolled out with `dist.sample()`; the returns are computed by a Python loop over the
rewards reversed and normalized with `.std()`; the loss is the policy-gradient term with the
advantage `returns - value.detach()`, the critic's smooth-L1 error, and an entropy bonus.

The environment, written here in Python: a point on a line at x, the action is a push a, the
next x is x + 0.1 * clip(a, -1, 1), and the reward is -x**2 (stay near zero), for a fixed
number of steps.
"""

import minitorch as torch
import minitorch.nn as nn
import minitorch.nn.functional as F
import minitorch.optim as optim
from minitorch.distributions import Normal

gamma = 0.9
entropy_coef = 0.01
eps = 1e-8


class PointOnALine:
    def __init__(self, steps=8):
        self.steps = steps

    def reset(self, x=1.0):
        self.x, self.t = x, 0
        return [self.x, 0.0]

    def step(self, action):
        self.x += 0.1 * max(-1.0, min(1.0, action))
        self.t += 1
        return [self.x, self.t / self.steps], -(self.x**2), self.t >= self.steps


class ActorCritic(nn.Module):
    def __init__(self, n_obs=2, hidden=16):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(n_obs, hidden), nn.Tanh())
        self.mu = nn.Linear(hidden, 1)
        self.log_std = nn.Parameter(torch.zeros(1))
        self.value = nn.Linear(hidden, 1)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.orthogonal_(m.weight, gain=1.0)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        h = self.body(x)
        return self.mu(h), self.log_std.exp().expand(x.shape[0], 1), self.value(h)


def act(model, state):
    """One action for one state: (action, value) with the action drawn from the policy."""
    mu, std, value = model(state.unsqueeze(0))
    dist = Normal(mu, std)
    return dist.sample(), value


def a2c_loss(model, states, actions, returns):
    """Policy gradient with advantage, critic loss and entropy bonus, over one episode."""
    mu, std, values = model(states)
    dist = Normal(mu, std)
    log_probs = dist.log_prob(actions).sum(-1)
    advantage = returns - values.squeeze(-1).detach()
    actor_loss = -(log_probs * advantage).mean()
    critic_loss = F.smooth_l1_loss(values.squeeze(-1), returns)
    entropy = dist.entropy().mean()
    return actor_loss + 0.5 * critic_loss - entropy_coef * entropy


def compute_returns(rewards):
    returns, R = [], 0.0
    for r in reversed(rewards):
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    return (returns - returns.mean()) / (returns.std() + eps)


def example():
    torch.manual_seed(0)
    states = torch.randn(6, 2)
    return a2c_loss, (ActorCritic(), states, torch.randn(6, 1), torch.randn(6))


def main(episodes=4):
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    env = PointOnALine()
    model = ActorCritic().to(device)
    optimizer = optim.Adam(model.parameters(), lr=3e-3)
    compiled_act = torch.compile(act)
    compiled_loss = torch.compile(a2c_loss)
    losses = []
    for episode in range(episodes):
        state, done = env.reset(), False
        states, actions, rewards = [], [], []
        with torch.no_grad():
            while not done:
                s = torch.tensor(state, device=device)
                action, _ = compiled_act(model, s)
                state, reward, done = env.step(action.item())
                states.append(s)
                actions.append(action.view(1))
                rewards.append(reward)
        returns = compute_returns(rewards).to(device)
        optimizer.zero_grad(set_to_none=True)
        loss = compiled_loss(model, torch.stack(states), torch.stack(actions), returns)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()
        losses.append(loss.item())
        print(f"episode {episode}: return {sum(rewards):.3f}, loss {loss.item():.4f}")
    return losses
