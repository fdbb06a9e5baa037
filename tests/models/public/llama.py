"""A tiny Llama: pre-norm decoder blocks of RMSNorm, rotary attention and a SwiGLU MLP.

Written from the LLaMA paper's description (Touvron et al., 2023): RMSNorm before attention
and MLP, rotary position embeddings applied to queries and keys (here from real cos/sin tables
built with torch.outer, no complex numbers), grouped-query attention (fewer key/value heads,
each shared by a group of query heads), a SwiGLU feed-forward `w2(silu(w1 x) * w3 x)`, and the
output projection tied to the token embedding. Trained on random tokens for a few steps.
"""

import math
from dataclasses import dataclass

import minitorch as torch
import minitorch.nn as nn
import minitorch.nn.functional as F


@dataclass
class ModelArgs:
    dim: int = 32
    n_layers: int = 2
    n_heads: int = 4
    n_kv_heads: int = 2
    vocab_size: int = 37
    multiple_of: int = 16
    norm_eps: float = 1e-5
    max_seq_len: int = 16
    rope_theta: float = 10000.0
    use_sdpa: bool = True  # False: attention written out, with an additive causal mask


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        return self._norm(x.float()).type_as(x) * self.weight


def precompute_rope(head_dim, seq_len, theta=10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, head_dim, 2).float() / head_dim))
    t = torch.arange(seq_len).float()
    angles = torch.outer(t, freqs)  # (T, head_dim / 2)
    return angles.cos(), angles.sin()


def apply_rope(x, cos, sin):
    # x: (B, H, T, head_dim); rotate each pair (x[2i], x[2i+1]) by its angle
    T = x.shape[2]
    cos, sin = cos[:T], sin[:T]
    x1 = x[..., 0::2]
    x2 = x[..., 1::2]
    out1 = x1 * cos - x2 * sin
    out2 = x1 * sin + x2 * cos
    return torch.stack((out1, out2), dim=-1).flatten(-2)


class Attention(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.n_heads = args.n_heads
        self.n_kv_heads = args.n_kv_heads
        self.n_rep = args.n_heads // args.n_kv_heads
        self.head_dim = args.dim // args.n_heads
        self.wq = nn.Linear(args.dim, args.n_heads * self.head_dim, bias=False)
        self.wk = nn.Linear(args.dim, args.n_kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(args.dim, args.n_kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(args.n_heads * self.head_dim, args.dim, bias=False)
        self.use_sdpa = args.use_sdpa

    def forward(self, x, cos, sin, mask=None):
        B, T, _ = x.shape
        q = self.wq(x).view(B, T, self.n_heads, self.head_dim).transpose(1, 2)
        k = self.wk(x).view(B, T, self.n_kv_heads, self.head_dim).transpose(1, 2)
        v = self.wv(x).view(B, T, self.n_kv_heads, self.head_dim).transpose(1, 2)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        # each key/value head serves n_rep query heads
        k = k.repeat_interleave(self.n_rep, dim=1)
        v = v.repeat_interleave(self.n_rep, dim=1)
        if self.use_sdpa:
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim)  # (B, H, T, T)
            scores = scores + mask
            scores = F.softmax(scores.float(), dim=-1).type_as(q)
            out = torch.matmul(scores, v)  # (B, H, T, head_dim)
        out = out.transpose(1, 2).contiguous().view(B, T, -1)
        return self.wo(out)


class FeedForward(nn.Module):
    def __init__(self, dim, hidden_dim, multiple_of):
        super().__init__()
        hidden_dim = int(2 * hidden_dim / 3)
        hidden_dim = multiple_of * ((hidden_dim + multiple_of - 1) // multiple_of)
        self.w1 = nn.Linear(dim, hidden_dim, bias=False)
        self.w2 = nn.Linear(hidden_dim, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden_dim, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class TransformerBlock(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.attention = Attention(args)
        self.feed_forward = FeedForward(args.dim, 4 * args.dim, args.multiple_of)
        self.attention_norm = RMSNorm(args.dim, eps=args.norm_eps)
        self.ffn_norm = RMSNorm(args.dim, eps=args.norm_eps)

    def forward(self, x, cos, sin, mask=None):
        h = x + self.attention(self.attention_norm(x), cos, sin, mask)
        return h + self.feed_forward(self.ffn_norm(h))


class Llama(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.args = args
        self.tok_embeddings = nn.Embedding(args.vocab_size, args.dim)
        self.layers = nn.ModuleList([TransformerBlock(args) for _ in range(args.n_layers)])
        self.norm = RMSNorm(args.dim, eps=args.norm_eps)
        self.output = nn.Linear(args.dim, args.vocab_size, bias=False)
        self.output.weight = self.tok_embeddings.weight  # tied embeddings
        cos, sin = precompute_rope(args.dim // args.n_heads, args.max_seq_len, args.rope_theta)
        self.register_buffer("rope_cos", cos, persistent=False)
        self.register_buffer("rope_sin", sin, persistent=False)
        self.apply(self._init_weights)

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, tokens, targets=None):
        h = self.tok_embeddings(tokens)
        mask = None
        if not self.args.use_sdpa:  # -inf above the diagonal: no position sees a later one
            T = tokens.shape[1]
            mask = torch.full((T, T), float("-inf"), device=tokens.device)
            mask = torch.triu(mask, diagonal=1)
        for layer in self.layers:
            h = layer(h, self.rope_cos, self.rope_sin, mask)
        logits = self.output(self.norm(h))
        if targets is None:
            return logits, None
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss


def step(model, tokens, targets):
    _, loss = model(tokens, targets)
    return loss


def get_batch(data, batch_size, block_size):
    ix = torch.randint(len(data) - block_size - 1, (batch_size,))
    x = torch.stack([data[i : i + block_size] for i in ix.tolist()])
    y = torch.stack([data[i + 1 : i + 1 + block_size] for i in ix.tolist()])
    return x, y


def example():
    torch.manual_seed(0)
    args = ModelArgs()
    model = Llama(args)
    tokens = torch.randint(0, args.vocab_size, (2, 8))
    return step, (model, tokens, torch.roll(tokens, -1, 1))


def main(steps=4):
    torch.manual_seed(1337)
    torch.backends.cudnn.benchmark = True
    device = "cuda" if torch.cuda.is_available() else "cpu"
    args = ModelArgs()
    model = Llama(args).to(device)
    print(f"{sum(p.numel() for p in model.parameters())} parameters")
    data = torch.randint(0, args.vocab_size, (200,))
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, betas=(0.9, 0.95), weight_decay=0.1)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=steps)
    compiled_step = torch.compile(step)
    losses = []
    model.train()
    for it in range(steps):
        x, y = get_batch(data, 2, 8)
        x, y = x.to(device), y.to(device)
        loss = compiled_step(model, x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
        print(f"iter {it}: loss {loss.item():.4f}, lr {scheduler.get_last_lr()[0]:.2e}")
    model.eval()
    with torch.no_grad():
        x, y = get_batch(data, 2, 8)
        logits, val_loss = model(x.to(device), y.to(device))
        print(f"val loss {val_loss.item():.4f}, perplexity {math.exp(val_loss.item()):.2f}")
        losses.append(val_loss.item())
    return losses
