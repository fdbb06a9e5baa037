"""The backend conformance suite: `pytest tests/conformance --backend NAME` (see README.md)."""
