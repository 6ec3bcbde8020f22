"""The saved model: a documented, versioned schema per component (``docs/saved-model.md``).

A saved object is a *record*, ``{"type": <name>, "params": {...}, "state": {...}}``: the
constructor's parameters and what the object needs to predict and keep learning, no caches. A
parent's record holds its children's records. Each record type has a ``Schema`` that states the
kind, dtype, shape and range of every field; loading checks a record against it before the
object is built, then asks the object for its broken invariants (``problems()``, else its
``_check()``). Files wrap the record in a versioned, checksummed envelope (``files``).

Modules: ``values`` (plain values ↔ JSON), ``schema`` (field kinds, ``Schema``, ``Fields``),
``registry`` (``register``, ``to_record``, ``from_record``, the ``Record`` kind), ``files``
(envelope, versions, migrations, atomic write), ``columns`` (many records of a few types as
columns: the ``Columns`` kind, which holds a model's variables; ``column_records``: a table
and its list of records, each way), ``generators`` (the saved form of a NumPy
generator). These helpers import no component, so the
components (the summaries, the weight learners) hold their own records: each class states its
schema, builds itself from a record and lists its broken invariants (``problems()``) next to
its code, as do the level-2 partitions and the engine's parts. The checks across a saved model's
parts are in ``engine``, imported by the classifier (every record kind is registered once
``wnb_stream`` is imported).

Every failure to load raises ``ModelFileError`` (a ``ValueError``) naming the field at fault.
Loading never imports a module or calls a function named by the file: record type names select
registered entries, and values are plain JSON types and NumPy arrays.

Examples
--------
>>> import numpy as np
>>> from wnb_stream import io
>>> from wnb_stream.summaries import Categorical
>>> summary = Categorical()
>>> summary.update_many(np.array(["red", "blue", "red"]), np.array([1, 0, 1]))
>>> twin = io.loads(io.dumps(summary))
>>> twin.table().values, twin.table().counts.tolist()
(('red', 'blue'), [[2.0, 0.0], [0.0, 1.0]])
"""

from .columns import Columns
from .errors import LegacyFormatError, ModelFileError
from .files import FORMAT, MIGRATIONS, VERSION, atomic_write, dumps, load, loads, pack, save, unpack
from .generators import GENERATOR, generator_from_state, generator_state
from .registry import Entry, Record, entry, from_record, register, registered, to_record
from .schema import (
    Array,
    Bool,
    Fields,
    Float,
    Int,
    Key,
    Keys,
    Kind,
    List,
    Optional,
    Schema,
    Str,
    Struct,
    Value,
    key_problem,
)

__all__ = [
    "Columns",
    "ModelFileError",
    "LegacyFormatError",
    "FORMAT",
    "VERSION",
    "MIGRATIONS",
    "dumps",
    "loads",
    "save",
    "load",
    "pack",
    "unpack",
    "atomic_write",
    "register",
    "entry",
    "registered",
    "to_record",
    "from_record",
    "Entry",
    "Schema",
    "Fields",
    "Kind",
    "Bool",
    "Int",
    "Float",
    "Str",
    "Key",
    "Keys",
    "Value",
    "Array",
    "List",
    "Struct",
    "Optional",
    "Record",
    "key_problem",
    "GENERATOR",
    "generator_state",
    "generator_from_state",
]
