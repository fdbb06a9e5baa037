"""Samples for every op of the op table, one module per family (see common.py)."""
