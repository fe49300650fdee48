"""Shared test settings: Numba compiles on first call, so Hypothesis gets no deadline."""
from hypothesis import settings

settings.register_profile("simcli", deadline=None, max_examples=100)
settings.load_profile("simcli")
