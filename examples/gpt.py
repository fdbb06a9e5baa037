"""Train a character-level GPT, in the shape of nanoGPT, compiled with `minitorch.compile`.

    python examples/gpt.py [--steps 300] [--block-size 32] [--layers 2] [--sample 200]

The text is made here: sentences from a small grammar ("the old cat sees a red ball."), so it
has structure a small model can learn in a few hundred steps, and the script needs no download.
The model is nanoGPT's: token and position embeddings (`nn.Embedding`), then blocks of causal
self-attention (one `nn.Linear` makes q, k and v; a `tril` mask fills the future with -inf
through `masked_fill`; softmax) and a GELU MLP, each behind a LayerNorm and added back to the
residual stream, then a final LayerNorm and a linear head over the characters. AdamW trains it
on the cross-entropy of next-character prediction; one line per step reports the loss, and a
sample drawn from the trained model ends the run.

`minitorch.compile(model)` captures the forward and loss as one graph; AOT autograd makes its
backward; the loop-level IR and the LLVM backend compile both. Everything below runs unchanged
with `import torch` in place of `import minitorch as torch`.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass

import numpy as np

import minitorch as torch
import minitorch.nn.functional as F
from minitorch import nn


def make_text(sentences: int, rng: np.random.Generator) -> str:
    """`sentences` random sentences of a small grammar: article, adjective, noun, verb, object."""
    articles = ["the", "a"]
    adjectives = ["old", "red", "small", "happy", "quiet"]
    nouns = ["cat", "dog", "bird", "fox", "child"]
    verbs = ["sees", "finds", "likes", "chases"]
    objects = ["ball", "tree", "house", "river", "hat"]

    def pick(words: list[str]) -> str:
        return words[rng.integers(len(words))]

    return " ".join(
        f"{pick(articles)} {pick(adjectives)} {pick(nouns)} {pick(verbs)} "
        f"{pick(articles)} {pick(adjectives)} {pick(objects)}."
        for _ in range(sentences)
    )


@dataclass
class GPTConfig:
    vocab_size: int
    block_size: int = 32  # the longest context the model reads
    n_layer: int = 2
    n_head: int = 4
    n_embd: int = 64
    dropout: float = 0.0


class CausalSelfAttention(nn.Module):
    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)  # q, k and v, side by side
        self.c_proj = nn.Linear(config.n_embd, config.n_embd)
        self.attn_dropout = nn.Dropout(config.dropout)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.n_head = config.n_head
        self.n_embd = config.n_embd
        # 1 where a position may attend (itself and the past), 0 for the future
        mask = torch.tril(torch.ones(config.block_size, config.block_size))
        self.register_buffer("bias", mask.view(1, 1, config.block_size, config.block_size))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.size()  # batch, time, channels
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))  # (B, nh, T, T)
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        att = self.attn_dropout(att)
        y = att @ v  # (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # the heads side by side again
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.n_embd)
        self.mlp = MLP(config)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


class GPT(nn.Module):
    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)
        self.wpe = nn.Embedding(config.block_size, config.n_embd)
        self.drop = nn.Dropout(config.dropout)
        self.h = nn.ModuleList([Block(config) for _ in range(config.n_layer)])
        self.ln_f = nn.LayerNorm(config.n_embd)
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None):
        b, t = idx.size()
        assert t <= self.config.block_size, f"a sequence of {t} is longer than the block size"
        pos = torch.arange(0, t, dtype=torch.long)  # (t,)
        x = self.drop(self.wte(idx) + self.wpe(pos))  # (b, t, n_embd)
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))  # (b, t, vocab_size)
        if targets is None:
            return logits, None
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss

    def configure_optimizers(self, weight_decay: float, learning_rate: float):
        """AdamW, decaying matrices (weights, embeddings) but not biases and LayerNorm gains."""
        params = [p for p in self.parameters() if p.requires_grad]
        groups = [
            {"params": [p for p in params if p.dim() >= 2], "weight_decay": weight_decay},
            {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
        ]
        return torch.optim.AdamW(groups, lr=learning_rate, betas=(0.9, 0.99))

    @torch.no_grad()
    def generate(self, idx: torch.Tensor, max_new_tokens: int, temperature: float = 1.0):
        """Extend `idx` (b, t) by `max_new_tokens` characters, each drawn from the model."""
        for _ in range(max_new_tokens):
            idx_cond = idx[:, -self.config.block_size :]
            logits, _ = self(idx_cond)
            probs = F.softmax(logits[:, -1, :] / temperature, dim=-1)
            idx_next = torch.multinomial(probs, num_samples=1)  # (b, 1)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx


def get_batch(data: torch.Tensor, block_size: int, batch_size: int):
    """`batch_size` random windows of the text, and the same windows one character later."""
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([data[i : i + block_size] for i in ix])
    y = torch.stack([data[i + 1 : i + 1 + block_size] for i in ix])
    return x, y


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--block-size", type=int, default=32)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--embd", type=int, default=64)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--sample", type=int, default=200, help="characters to generate")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    torch.manual_seed(args.seed)
    text = make_text(2000, np.random.default_rng(args.seed))
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
    print(f"{len(text):,} characters of text, {len(chars)} distinct")

    config = GPTConfig(
        vocab_size=len(chars), block_size=args.block_size, n_layer=args.layers, n_embd=args.embd
    )
    model = GPT(config)
    optimizer = model.configure_optimizers(weight_decay=0.1, learning_rate=args.lr)
    compiled = torch.compile(model)

    for step in range(1, args.steps + 1):
        x, y = get_batch(data, args.block_size, args.batch_size)
        _, loss = compiled(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        print(f"step {step:4d}  loss {loss.item():.4f}", flush=True)

    start = torch.tensor([[stoi["t"]]], dtype=torch.long)
    sample = model.generate(start, args.sample, temperature=0.8)[0].tolist()
    print("sample:", "".join(chars[i] for i in sample))
    return 0


if __name__ == "__main__":
    sys.exit(main())
