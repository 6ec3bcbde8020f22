"""Use our models where another stream-learning library expects its own: capymoa (MOA from Python).

``CapyMOAClassifier`` is a capymoa classifier (``capymoa.base.Classifier``) in front of any River
classifier, by default ``WeightedNaiveBayes``: capymoa's evaluation loops
(``capymoa.evaluation.prequential_evaluation`` and the rest), its streams and its plots take it
like one of MOA's learners, next to MOA's own.

``river_stream`` goes the other way: it reads a capymoa stream as River's ``(x, y)`` pairs, for
River's and our evaluation loops.

Instances are read through the stream's schema: a numeric attribute becomes a float, a nominal
one the string of its value (so our model groups its values by MODL), a missing value (NaN) is
left out of ``x``, and the class is the instance's class index. Predictions are a probability per
class index of the schema; ``None`` before the first label (capymoa counts it as no prediction).

Needs capymoa (``pip install "wnb-stream[moa]"``) and a Java runtime (Java 11 or later) for
MOA; importing this module without them works, building an adapter says what is missing.
An example: ``docs/guides/capymoa.md``.
"""

from __future__ import annotations

import math
from typing import Any, Iterator

import numpy as np

from wnb_stream import WeightedNaiveBayes

__all__ = ["CapyMOAClassifier", "river_stream", "capymoa_available"]

try:  # capymoa starts a Java virtual machine when imported: it needs Java as well as the package
    from capymoa.base import Classifier as _CapyMOAClassifierBase

    _IMPORT_ERROR: Exception | None = None
except Exception as error:  # noqa: BLE001 - ImportError, or capymoa's error for a missing Java
    _CapyMOAClassifierBase = object  # type: ignore[assignment,misc]
    _IMPORT_ERROR = error


def capymoa_available() -> bool:
    """True when capymoa and a Java runtime for it can be used here."""
    return _IMPORT_ERROR is None


def _require_capymoa() -> None:
    if _IMPORT_ERROR is not None:
        raise ImportError(
            f"the capymoa adapter needs capymoa and a Java runtime (Java 11 or later): "
            f'pip install "wnb-stream[moa]" and, e.g., apt-get install default-jre-headless '
            f"({type(_IMPORT_ERROR).__name__}: {_IMPORT_ERROR})"
        )


class _Reader:
    """Turns capymoa instances of one schema into River dicts: names, numbers and categories."""

    def __init__(self, schema):
        header = schema.get_moa_header()
        class_index = header.classIndex()
        self.columns: list[tuple[str, list[str] | None]] = []
        for i in range(header.numAttributes()):
            if i == class_index:
                continue
            attribute = header.attribute(i)
            values = [str(v) for v in attribute.getAttributeValues()] if attribute.isNominal() else None
            self.columns.append((str(attribute.name()), values))

    def x(self, instance) -> dict:
        row = {}
        for (name, values), value in zip(self.columns, np.asarray(instance.x, dtype=float).tolist()):
            if math.isnan(value):
                continue
            if values is None:
                row[name] = value
            else:
                index = int(value)
                row[name] = values[index] if 0 <= index < len(values) else str(index)
        return row


class CapyMOAClassifier(_CapyMOAClassifierBase):
    """A River classifier as a capymoa classifier (default: ``WeightedNaiveBayes``).

    Parameters
    ----------
    schema
        The capymoa schema of the stream (``stream.get_schema()``).
    model
        The River classifier to run; None builds ``WeightedNaiveBayes(seed=random_seed)``.
    random_seed
        capymoa's seed; the default model's seed.

    Attributes
    ----------
    model
        The River model (for its ``weights``, ``debug_one``, ``save``, …).

    Notes
    -----
    ``train`` is ``model.learn_one(x, class_index)``, ``predict_proba`` is
    ``model.predict_proba_one(x)`` spread over the schema's class indices (``None`` while the
    model has nothing to say). The class labels the River model sees are the class indices.
    """

    def __init__(self, schema, model=None, random_seed: int = 1):
        _require_capymoa()
        super().__init__(schema=schema, random_seed=random_seed)
        self.model = WeightedNaiveBayes(seed=random_seed) if model is None else model
        self._reader = _Reader(schema)
        self._n_classes = schema.get_num_classes()

    def __str__(self) -> str:
        return type(self.model).__name__

    def train(self, instance) -> None:
        """Learn one labelled capymoa instance (an instance without a class, index -1, is skipped)."""
        y = int(instance.y_index)
        if y < 0:
            return
        self.model.learn_one(self._reader.x(instance), y)

    def predict_proba(self, instance):
        """The probability of each class index of the schema, or None before any learning."""
        proba = self.model.predict_proba_one(self._reader.x(instance))
        if not proba:
            return None
        out = np.zeros(self._n_classes)
        for label, p in proba.items():
            if 0 <= int(label) < self._n_classes:
                out[int(label)] = p
        return out


def river_stream(stream, labels: bool = True) -> Iterator[tuple[dict, Any]]:
    """A capymoa stream read as River's ``(x, y)``: ``x`` as ``CapyMOAClassifier`` reads it, ``y``
    the class label (``labels``) or the class index. Reads from the stream's current position to
    its end; instances without a class are left out."""
    _require_capymoa()
    schema = stream.get_schema()
    reader = _Reader(schema)
    while stream.has_more_instances():
        instance = stream.next_instance()
        index = int(instance.y_index)
        if index < 0:
            continue
        yield reader.x(instance), (schema.get_value_for_index(index) if labels else index)
