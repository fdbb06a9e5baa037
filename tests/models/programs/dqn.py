"""The PyTorch DQN tutorial ("Reinforcement Learning (DQN)"): ReplayMemory, the DQN, and
optimize_model's loss (gather, `max(1).values` under no_grad, SmoothL1Loss), the soft update of
the target network through state dicts.

Changed: no gym environment (random states and rewards), 16 hidden units; the loss lines of
optimize_model are the function `loss`, compiled, and its criterion is built once outside.
"""

# ruff: noqa: E501, UP004, UP008 - the original's line lengths and classes

import random
from collections import deque, namedtuple

import minitorch as torch
import minitorch.nn as nn
import minitorch.nn.functional as F
import minitorch.optim as optim

Transition = namedtuple("Transition", ("state", "action", "next_state", "reward"))


class ReplayMemory(object):
    def __init__(self, capacity):
        self.memory = deque([], maxlen=capacity)

    def push(self, *args):
        self.memory.append(Transition(*args))

    def sample(self, batch_size):
        return random.sample(self.memory, batch_size)

    def __len__(self):
        return len(self.memory)


class DQN(nn.Module):
    def __init__(self, n_observations, n_actions):
        super(DQN, self).__init__()
        self.layer1 = nn.Linear(n_observations, 16)
        self.layer2 = nn.Linear(16, 16)
        self.layer3 = nn.Linear(16, n_actions)

    def forward(self, x):
        x = F.relu(self.layer1(x))
        x = F.relu(self.layer2(x))
        return self.layer3(x)


GAMMA, TAU = 0.99, 0.005
criterion = nn.SmoothL1Loss()


def loss(
    policy_net,
    target_net,
    state_batch,
    action_batch,
    non_final_mask,
    non_final_next_states,
    reward_batch,
):
    state_action_values = policy_net(state_batch).gather(1, action_batch)
    next_state_values = torch.zeros(state_batch.shape[0])
    with torch.no_grad():
        next_state_values[non_final_mask] = target_net(non_final_next_states).max(1).values
    expected_state_action_values = (next_state_values * GAMMA) + reward_batch
    return criterion(state_action_values, expected_state_action_values.unsqueeze(1))


def main():
    torch.manual_seed(0)
    random.seed(0)
    policy_net = DQN(4, 2)
    target_net = DQN(4, 2)
    target_net.load_state_dict(policy_net.state_dict())
    optimizer = optim.AdamW(policy_net.parameters(), lr=1e-4, amsgrad=True)
    memory = ReplayMemory(100)
    for i in range(12):
        state = torch.randn(1, 4)
        with torch.no_grad():
            action = policy_net(state).max(1).indices.view(1, 1)
        nxt = None if i % 5 == 4 else torch.randn(1, 4)
        memory.push(state, action, nxt, torch.tensor([1.0]))
    step = torch.compile(loss)
    losses = []
    for _ in range(3):
        transitions = memory.sample(8)
        batch = Transition(*zip(*transitions))
        non_final_mask = torch.tensor(
            tuple(map(lambda s: s is not None, batch.next_state)), dtype=torch.bool
        )
        non_final_next_states = torch.cat([s for s in batch.next_state if s is not None])
        state_batch = torch.cat(batch.state)
        action_batch = torch.cat(batch.action)
        reward_batch = torch.cat(batch.reward)
        args = (
            policy_net,
            target_net,
            state_batch,
            action_batch,
            non_final_mask,
            non_final_next_states,
            reward_batch,
        )
        value = step(*args)
        print(f"loss {value.item():.6f}")
        losses.append(value.item())
        optimizer.zero_grad()
        value.backward()
        torch.nn.utils.clip_grad_value_(policy_net.parameters(), 100)
        optimizer.step()
        target_net_state_dict = target_net.state_dict()
        policy_net_state_dict = policy_net.state_dict()
        for key in policy_net_state_dict:
            target_net_state_dict[key] = policy_net_state_dict[key] * TAU + target_net_state_dict[
                key
            ] * (1 - TAU)
        target_net.load_state_dict(target_net_state_dict)
    return losses
