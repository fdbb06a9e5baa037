"""REINFORCE (Williams, 1992) with a Categorical policy on a small corridor world.

The common tutorial shape: a two-layer policy network with dropout gives action
probabilities; `Categorical(probs).sample()` picks an action and its `log_prob` is kept; at the
end of an episode the discounted returns are computed by a Python loop over the rewards
reversed, normalized with mean and `.std()`, and the loss is `-sum(log_prob * return)`.

The environment, written here in Python: a corridor of `length` cells, the agent starts in the
middle and moves left or right; reaching the right end pays +1, the left end -1, each step
costs 0.01; an episode ends at either end or after `max_steps`.
"""

import minitorch as torch
import minitorch.nn as nn
import minitorch.nn.functional as F
import minitorch.optim as optim
from minitorch.distributions import Categorical

gamma = 0.99
eps = 1e-6


class Corridor:
    def __init__(self, length=5, max_steps=12):
        self.length = length
        self.max_steps = max_steps

    def reset(self):
        self.pos = self.length // 2
        self.t = 0
        return self._observe()

    def _observe(self):
        state = [0.0] * self.length
        state[self.pos] = 1.0
        return state

    def step(self, action):
        self.pos += 1 if action == 1 else -1
        self.t += 1
        if self.pos == self.length - 1:
            return self._observe(), 1.0, True
        if self.pos == 0:
            return self._observe(), -1.0, True
        return self._observe(), -0.01, self.t >= self.max_steps


class Policy(nn.Module):
    def __init__(self, n_states=5, n_actions=2):
        super().__init__()
        self.affine1 = nn.Linear(n_states, 16)
        self.dropout = nn.Dropout(p=0.2)
        self.affine2 = nn.Linear(16, n_actions)

    def forward(self, x):
        x = self.affine1(x)
        x = self.dropout(x)
        x = F.relu(x)
        action_scores = self.affine2(x)
        return F.softmax(action_scores, dim=1)


def select_action(policy, state):
    """Sample an action from the policy's distribution; returns (action, log_prob)."""
    probs = policy(state.unsqueeze(0))
    m = Categorical(probs)
    action = m.sample()
    return action, m.log_prob(action)


def discounted_returns(rewards):
    R = 0
    returns = []
    for r in rewards[::-1]:
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    return (returns - returns.mean()) / (returns.std() + eps)


def policy_loss(log_probs, returns):
    return (-torch.cat(log_probs) * returns).sum()


def example():
    torch.manual_seed(0)
    state = torch.tensor(Corridor().reset())
    return select_action, (Policy(), state)


def main(episodes=4):
    torch.manual_seed(543)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    env = Corridor()
    policy = Policy().to(device)
    optimizer = optim.Adam(policy.parameters(), lr=1e-2)
    act = torch.compile(select_action)
    running_reward = 0.0
    losses = []
    for i_episode in range(episodes):
        state, ep_reward = env.reset(), 0.0
        log_probs, rewards = [], []
        done = False
        while not done:
            action, log_prob = act(policy, torch.tensor(state, device=device))
            state, reward, done = env.step(action.item())
            log_probs.append(log_prob)
            rewards.append(reward)
            ep_reward += reward
        running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward
        optimizer.zero_grad(set_to_none=True)
        loss = policy_loss(log_probs, discounted_returns(rewards).to(device))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        print(
            f"Episode {i_episode}\tLast reward: {ep_reward:.2f}\t"
            f"Average reward: {running_reward:.2f}\tloss {loss.item():.4f}"
        )
    return losses
