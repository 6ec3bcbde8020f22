"""Level 1: per-variable stream summaries with class counts."""

from .base import Bins, Categories, ClassIndex, Moments, Summary

__all__ = ["Bins", "Categories", "ClassIndex", "Moments", "Summary"]
