"""Tests of the course graders: each reference gets full marks, each broken variant fails."""
