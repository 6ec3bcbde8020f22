"""The saved form of a NumPy random generator: a field kind and its two conversions.

A learner that draws at random keeps a ``np.random.Generator`` on PCG64 (the only bit generator
``np.random.default_rng`` makes). Its record holds the generator's exact state as plain integers
(``GENERATOR``), and the loaded generator draws exactly what the saved one would.
"""

from __future__ import annotations

import numpy as np

from .errors import where
from .schema import Int, Str, Struct

__all__ = ["GENERATOR", "generator_state", "generator_from_state"]

#: The exact state of a ``np.random.Generator`` on PCG64 (``bit_generator.state`` flattened).
GENERATOR = Struct(
    {
        "bit_generator": Str(choices=("PCG64",), doc="the bit generator"),
        "state": Int(low=0, below=1 << 128, doc="PCG64 state (128-bit)"),
        "inc": Int(low=0, below=1 << 128, doc="PCG64 increment (128-bit)"),
        "has_uint32": Int(low=0, high=1, doc="a buffered 32-bit half is pending"),
        "uinteger": Int(low=0, below=1 << 32, doc="that buffered half"),
    },
    doc="NumPy generator state",
)


def generator_state(rng: np.random.Generator, path: str = "") -> dict:
    """The live value of a ``GENERATOR`` field: the exact state of ``rng`` (a PCG64 generator)."""
    if type(rng) is not np.random.Generator or type(rng.bit_generator) is not np.random.PCG64:
        raise TypeError(f"{where(path)}: only a np.random.Generator on PCG64 can be saved, got {rng!r}")
    state = rng.bit_generator.state
    return {
        "bit_generator": "PCG64",
        "state": state["state"]["state"],
        "inc": state["state"]["inc"],
        "has_uint32": state["has_uint32"],
        "uinteger": state["uinteger"],
    }


def generator_from_state(state: dict) -> np.random.Generator:
    """A generator in the state a loaded ``GENERATOR`` field describes (it draws what the saved one would).

    >>> rng = np.random.default_rng(42); _ = rng.random(3)
    >>> twin = generator_from_state(generator_state(rng))
    >>> twin.random() == rng.random()
    True
    """
    bit_generator = np.random.PCG64()
    bit_generator.state = {
        "bit_generator": "PCG64",
        "state": {"state": state["state"], "inc": state["inc"]},
        "has_uint32": state["has_uint32"],
        "uinteger": state["uinteger"],
    }
    return np.random.Generator(bit_generator)
