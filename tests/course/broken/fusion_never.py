"""Broken on purpose: a policy that never fuses (correct, and a kernel per buffer)."""

from minitorch.compile.hooks import register_fusion_policy

register_fusion_policy("never", lambda kernel, buffer, fused, capabilities: False)
