"""Broken: marked lowering="extern", so its numpy kernel runs between two kernels."""

from tests.course.broken._softplus import register

register(lowering="extern")
