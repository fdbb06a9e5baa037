"""Deliberately broken solutions, each a plugin its grader must fail (tests/course/)."""
