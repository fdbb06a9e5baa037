"""Broken on purpose: saves the inputs alone, so the backward draws dropout's mask again."""

from minitorch.compile.hooks import register_partitioner

register_partitioner("primals_only", lambda joint: list(joint.primals))
