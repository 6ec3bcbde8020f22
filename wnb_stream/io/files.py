"""Saved model files: the envelope, its checks, compression and atomic writes.

A file is the JSON document

    {"format": "wnb_stream.model", "version": 2, "checksum": "sha256:<hex>", "payload": <record>}

compressed with gzip (``save(..., compress=False)`` writes the JSON text itself; ``load`` reads
either, told apart by gzip's magic bytes). The payload is the record of the saved object
(``registry.to_record``); the checksum is the SHA-256 of the payload's canonical JSON text
(sorted keys, no spaces, ASCII), so a payload changed after it was written is caught even when
the file is still valid JSON.

Reading checks, in this order, and raises ``ModelFileError`` at the first failure: the size and
gzip integrity (inflated in steps, refused past ``max_size`` bytes, ``MAX_SIZE`` by default, or
past ``MAX_RATIO`` times the compressed bytes read; its CRC catches flipped bytes, its end
marker a truncated file), the checksum of the payload's bytes as stored (``pack`` writes the
payload in the canonical form the checksum covers, so a damaged payload is refused before any
parse), UTF-8, JSON (no ``NaN``/``Infinity`` literals, no key twice in an object), the
envelope's keys and format, the version (newer than ``VERSION``: refused, saying which version
this library reads; older: migrated, see below), then the payload against the schemas of its
records. (A file laid out otherwise, with spaces say, has its checksum taken on the parsed
payload's canonical text.) ``docs/saved-model.md#limits`` gives the bounds.

Versions. Version 1 is the object-graph format of wnb_stream 0.1's ``persistence`` module (format
name ``"wnb_stream"``, removed since): it is refused with ``LegacyFormatError`` (a
``ModelFileError``) saying so, because its content is the private attributes of the classes of
the time and cannot be read without them. Version 2 is the first
version of this format. A later version ``v`` that changes a record must add ``MIGRATIONS[v - 1]``:
a function from the JSON payload of version ``v − 1`` to that of version ``v``; ``load`` applies
the migrations in order, so every file ever written keeps loading. The files of each version are
kept under ``tests/io/fixtures/`` and tests load them.

Writing is atomic (``atomic_write``): a temporary file in the same directory, flushed, fsync-ed
and renamed over the target, then the directory fsync-ed; a crash leaves the old file or the new
one, whole.

Examples
--------
>>> from wnb_stream import io
>>> from wnb_stream.summaries import GKClass
>>> gk = GKClass()
>>> for i in range(10):
...     gk.update(float(i), i % 2)
>>> data = io.dumps(gk)
>>> data[:2] == b"\\x1f\\x8b"   # gzip
True
>>> io.loads(data).table().counts.sum(axis=0).tolist()
[5.0, 5.0]
>>> io.loads(data[:-8])
Traceback (most recent call last):
...
wnb_stream.io.errors.ModelFileError: <file>: truncated or corrupt gzip data (...)
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
import re
import tempfile
import zlib
from typing import Any, Callable

import numpy as np

from .._checks import integer
from .._gc import collector_paused
from .column_records import records_to_table
from .errors import LegacyFormatError, ModelFileError
from .registry import from_record, to_record
from .values import decode_array, encode_array

__all__ = [
    "FORMAT",
    "VERSION",
    "MIGRATIONS",
    "MAX_SIZE",
    "pack",
    "unpack",
    "dumps",
    "loads",
    "save",
    "load",
    "atomic_write",
]

#: Name written in the envelope of every saved model.
FORMAT = "wnb_stream.model"
#: The format version this library writes, and the newest it reads.
VERSION = 13

#: Fields added in version 3, by record type: ``(part, field, value)``, ``part`` a dotted path
#: inside the record, the value the one that keeps a version-2 record's meaning. ``absent``
#: (``WeightedNaiveBayes``, ``Predictor``; null: an absent feature is missing), the model's
#: ``memory_budget`` (null: none); FNB's ``refine``
#: (null: none) and its search state's ``refiner`` (null: no refine learner).
_ADDED_IN_3 = {
    "WeightedNaiveBayes": [("params", "absent", None), ("params", "memory_budget", None)],
    "Predictor": [("params", "absent", None)],
    "FNB": [("params", "refine", None), ("state.run", "refiner", None)],
}


def _added_fields(added: dict) -> Callable[[Any], Any]:
    """A migration giving every record of the types in ``added`` its new fields' values (records
    nest: a model holds its learner, a checkpoint its model; a part that is null, as the search
    state before ``reset``, gets nothing). Iterative: a payload nested deeper than Python's
    recursion limit is refused by the schema, not here."""

    def migrate(payload: Any) -> Any:
        stack = [payload]  # the payload was just parsed: it is changed in place
        while stack:
            node = stack.pop()
            if isinstance(node, list):
                stack.extend(node)
            elif isinstance(node, dict):
                for part, name, value in added.get(node.get("type"), ()) if isinstance(node.get("type"), str) else ():
                    target = node
                    for key in part.split("."):
                        target = target.get(key) if isinstance(target, dict) else None
                    if isinstance(target, dict):
                        target.setdefault(name, value)
                stack.extend(node.values())
        return payload

    return migrate


def _records(payload: Any, kind: str):
    """Every record of type ``kind`` in a payload, at any depth (iteratively)."""
    stack = [payload]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            if node.get("type") == kind:
                yield node
            stack.extend(node.values())


def _slots_for_every_variable(payload: Any) -> Any:
    """Version 3 → 4: ``WeightedNaiveBayes`` gained ``state.slots``, the variables in level 3 in
    the learner's order. A version-3 learner's axis is every variable, in order: slots 0 … K−1.
    (A record whose registry is malformed gets nothing here; the schema then names what is wrong.)"""
    for node in list(_records(payload, "WeightedNaiveBayes")):
        state = node.get("state")
        registry = state.get("registry") if isinstance(state, dict) else None
        variables = registry.get("state", {}).get("variables") if isinstance(registry, dict) else None
        if isinstance(variables, list) and "slots" not in state:
            state["slots"] = {
                "type": "Slots",
                "params": {},
                "state": {
                    "variable": encode_array(np.arange(len(variables), dtype=np.int64)),
                    "passed": encode_array(np.zeros(len(variables), dtype=bool)),
                },
            }
    return payload


def _history_as_entries(payload: Any) -> Any:
    """Version 4 → 5: ``History`` holds each row's entries instead of a column per variable
    (``numeric``, ``numeric_missing`` and ``present`` become ``n_variables``, ``n_numeric``,
    ``entries``, ``variable``, ``column``, ``value`` and ``missing``). A variable's raw column is
    its rank among the variables of its kind, read from the model's registry; a row's entries are
    the variables it holds, in index order. (A record that is malformed here is left as it is; the
    schema then names what is wrong.)"""
    for node in list(_records(payload, "WeightedNaiveBayes")):
        try:
            state = node["state"]
            kinds = [variable["state"]["kind"] for variable in state["registry"]["state"]["variables"]]
            history = state["history"]["state"]
            numeric_block = decode_array(history["numeric"])
            missing_block = decode_array(history["numeric_missing"])
            present = decode_array(history["present"])
        except (KeyError, TypeError, ValueError, ModelFileError):
            continue
        if present.ndim != 2 or present.shape[1] != len(kinds) or numeric_block.ndim != 2 or missing_block.shape != numeric_block.shape:
            continue
        numeric = np.array([kind == "numeric" for kind in kinds], dtype=bool)
        column = np.zeros(len(kinds), dtype=np.int64)
        column[numeric] = np.arange(int(numeric.sum()))
        column[~numeric] = -1
        if int(numeric.sum()) != numeric_block.shape[1]:
            continue
        r, k = np.nonzero(present)  # row by row, variables increasing
        at = column[k]
        held = at >= 0
        value, missing = np.zeros(len(k)), np.zeros(len(k), dtype=bool)
        value[held] = numeric_block[r[held], at[held]]
        missing[held] = missing_block[r[held], at[held]]
        value[missing] = 0.0
        for name in ("numeric", "numeric_missing", "present"):
            del history[name]
        history.update({
            "n_variables": len(kinds),
            "n_numeric": int(numeric.sum()),
            "entries": encode_array(present.sum(axis=1).astype(np.int64)),
            "variable": encode_array(k.astype(np.int64)),
            "column": encode_array(at.astype(np.int64)),
            "value": encode_array(value),
            "missing": encode_array(missing),
        })  # fmt: skip
    return payload


def _gaussian_without_pooled(payload: Any) -> Any:
    """Version 5 → 6: ``Gaussian`` no longer holds ``pooled``, the moments over all classes, which
    are derived from the per-class ones (a platform's BLAS could round the stored copy differently,
    so the same model saved two different files)."""
    for node in list(_records(payload, "Gaussian")):
        state = node.get("state")
        if isinstance(state, dict) and "pooled" in state:
            _check_pooled(state)
            del state["pooled"]
    return payload


def _check_pooled(state: dict) -> None:
    """A version-5 ``pooled`` must be what its classes give (the check that version made on load),
    so that dropping it changes nothing a file meant; a malformed record is left to the schema."""
    try:
        weights, means, pooled = (decode_array(state[name]) for name in ("weights", "means", "pooled"))
    except (KeyError, TypeError, ValueError, ModelFileError):
        return
    if pooled.shape != (3,) or weights.shape != means.shape or weights.ndim != 1:
        return
    total = math.fsum(weights.tolist())
    if not math.isclose(float(pooled[0]), total, rel_tol=1e-9, abs_tol=1e-12):
        raise ModelFileError(f"Gaussian.pooled: its weight must be Σ weights = {total!r}, got {float(pooled[0])!r}")
    if total > 0 and np.all(np.isfinite(means)):
        with np.errstate(over="ignore", invalid="ignore"):
            expected = math.fsum((weights / total * means).tolist())
        scale = float(np.max(np.abs(means), initial=0.0))
        if math.isfinite(expected) and not math.isclose(float(pooled[1]), expected, rel_tol=1e-6, abs_tol=1e-9 + 1e-9 * scale):
            raise ModelFileError(f"Gaussian.pooled: its mean must be the weighted mean of the classes {expected!r}, got {float(pooled[1])!r}")
        _check_pooled_m2(state, weights, means, float(pooled[1]), float(pooled[2]), total, scale)


def _check_pooled_m2(state: dict, weights: np.ndarray, means: np.ndarray, mean: float, found: float, total: float, scale: float) -> None:
    """The third entry of a version-5 ``pooled``, the pooled M2 (saturated at the float range),
    must be Σ M2_j + Σ W_j (μ_j − μ)² (Chan's rule), up to rounding: else two files that differ
    there would load as one model, silently (issue 33). Relative tolerance 1e-6; absolute
    1e-9 · W · max|μ_j|², the size of the rounding of the squared deviations."""
    try:
        m2 = decode_array(state["m2"])
    except (KeyError, TypeError, ValueError, ModelFileError):
        return
    if m2.shape != weights.shape or not np.all(np.isfinite(m2)) or not math.isfinite(found):
        return
    with np.errstate(over="ignore", invalid="ignore"):
        held = weights > 0
        expected = math.fsum(m2[held].tolist()) + math.fsum((weights[held] * (means[held] - mean) ** 2).tolist())
    if not math.isfinite(expected) or expected > 1e300:  # saturated, as the writer saturated it
        return
    if not math.isclose(found, expected, rel_tol=1e-6, abs_tol=1e-9 * total * scale * scale + 1e-12):
        raise ModelFileError(f"Gaussian.pooled: its M2 must be Σ M2 + Σ W (μ − pooled μ)² = {expected!r}, got {found!r}")


def _slots_without_passed(payload: Any) -> Any:
    """Version 6 → 7: ``Slots`` drops ``passed`` (the variables the learner had stepped past
    without a slot, which entered level 3 pinned at 0 until the next step) and records
    ``n_variables``, which was the length of ``passed``. A variable now enters level 3 as a new
    variable does (docs/saved-model.md, versions and migrations). (A malformed record is left as it
    is; the schema then names what is wrong.)"""
    for node in list(_records(payload, "Slots")):
        state = node.get("state")
        passed = state.get("passed") if isinstance(state, dict) else None
        if isinstance(passed, dict) and "n_variables" not in state:
            shape = passed.get("shape")
            if isinstance(shape, list) and len(shape) == 1 and isinstance(shape[0], int):
                del state["passed"]
                state["n_variables"] = shape[0]
    return payload


#: Version 7 → 8: PGDMB and VNS gained ``spread`` (μ of the spread term, docs/algorithms/weights.md#spread).
#: An older learner had none: 0 keeps its criterion, so a loaded model goes on learning as it did.
_ADDED_IN_8 = {
    "PGDMB": [("params", "spread", 0.0)],
    "VNS": [("params", "spread", 0.0)],
}


#: Fields added in version 10, with the value that reproduces the old behaviour.
_ADDED_IN_10 = {
    "CoordinatorCheckpoint": [("state", "detector", None)],  # (restored coordinators started it afresh)
}


#: Fields added in version 11, with the value that reproduces the old behaviour.
_ADDED_IN_11 = {
    "PGDMB": [("params", "wake", False)],  # (a woken variable kept 0 in w* until a step took it)
    "VNS": [("params", "wake", False)],
}


#: Fields added in version 12, with the value that reproduces the old behaviour.
_ADDED_IN_12 = {
    "WeightedNaiveBayes": [("params", "catch_up", False)],  # (predictions never changed the model)
    "Schedule": [("state", "caught_up", 0), ("state", "served", -1)],
}


#: Fields added in version 13, with the value that reproduces the old behaviour.
_ADDED_IN_13 = {
    "PGDMB": [("params", "spread_rows", None)],  # (the spread term weighed μ on windows of any size)
    "VNS": [("params", "spread_rows", None)],
}


def _variables_as_columns(payload: Any) -> Any:
    """Version 8 → 9: a ``Registry`` holds its variables as a table of columns (``io.columns``),
    not as a list of ``Variable`` records. Each record of the list is decoded and the list
    written as the table the registry writes now (the same values, bit for bit). (A malformed
    list is left as it is; the schema then refuses it as a table.)"""
    for node in list(_records(payload, "Registry")):
        state = node.get("state")
        variables = state.get("variables") if isinstance(state, dict) else None
        if isinstance(variables, list):
            try:
                state["variables"] = records_to_table(variables)
            except (ValueError, TypeError, RecursionError):
                pass
    return payload


#: ``MIGRATIONS[v]`` turns the JSON payload of version ``v`` into that of version ``v + 1``.
MIGRATIONS: dict[int, Callable[[Any], Any]] = {
    2: _added_fields(_ADDED_IN_3),
    3: _slots_for_every_variable,
    4: _history_as_entries,
    5: _gaussian_without_pooled,
    6: _slots_without_passed,
    7: _added_fields(_ADDED_IN_8),
    8: _variables_as_columns,
    9: _added_fields(_ADDED_IN_10),
    10: _added_fields(_ADDED_IN_11),
    11: _added_fields(_ADDED_IN_12),
    12: _added_fields(_ADDED_IN_13),
}
#: gzip level of a saved file (``pack``); any level reads back.
COMPRESS_LEVEL = 2
#: Largest JSON document read by default (bytes; ``load(..., max_size=…)`` sets another). The
#: largest model the benchmarks make (``benchmarks/sparse.py --K 100000 --n 6000``: 66,110
#: variables and a full window of 5,000 rows) is a document of 39 MB (3.2 MB compressed; 85 MB
#: in version 8): this leaves room for several times that, and bounds what any file can make a
#: load inflate and parse.
MAX_SIZE = 256 << 20
#: Largest ratio of inflated to compressed bytes read, past the first ``_RATIO_FLOOR`` bytes: a
#: file of F bytes inflates to at most max(4 MiB, 64·F). Our files inflate 3 to 12 times (the
#: fixtures) and 12 times (that benchmark model; 23 in version 8); deflate's own bound, which gzip bombs reach, is
#: about 1,032.
MAX_RATIO = 64
_RATIO_FLOOR = 4 << 20
_CHUNK = 64 << 10

_LEGACY_FORMAT = "wnb_stream"
_ENVELOPE = ("format", "version", "checksum", "payload")
_GZIP_MAGIC = b"\x1f\x8b"
_FILE = "<file>"


def _canonical(payload: Any) -> bytes:
    """The canonical JSON text of a payload (what the checksum covers)."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode("ascii")


def _checksum(text: bytes) -> str:
    return "sha256:" + hashlib.sha256(text).hexdigest()


def pack(record: Any, *, compress: bool = True) -> bytes:
    """The bytes of a file holding ``record`` (a JSON-safe record, as ``to_record`` returns).

    Nothing is checked: ``loads(pack(record))`` checks the record. Cost O(size).
    """
    payload = _canonical(record)
    head = json.dumps({"format": FORMAT, "version": VERSION, "checksum": _checksum(payload)}, separators=(",", ":"))
    text = head[:-1].encode("ascii") + b',"payload":' + payload + b"}"
    # mtime 0: the same model gives the same bytes. Level 2 (zlib's fast matcher): a quarter of
    # level 6's time for 3 % (dense window) to 24 % (66,110 sparse variables) larger files, and a
    # save is on a round's critical path when it is a checkpoint (benchmarks/README.md, issue 30).
    return gzip.compress(text, compresslevel=COMPRESS_LEVEL, mtime=0) if compress else text


def unpack(data: bytes, *, max_size: int | None = None) -> Any:
    """The JSON payload of a file's bytes, checked up to the checksum and migrated to ``VERSION``.

    ``max_size``: the largest JSON document read, in bytes (None: ``MAX_SIZE``). Raises
    ``ModelFileError`` (see the module docstring for the checks and ``Limits`` for the bounds).
    """
    if not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(f"expected the bytes of a file, got {type(data).__name__}")
    limit = _check_max_size(max_size)
    data = bytes(data)
    if data[:2] == _GZIP_MAGIC:
        data = _gunzip(data, limit)
    elif len(data) > limit:
        raise ModelFileError(f"{_FILE}: the document is {len(data)} bytes, beyond max_size = {limit} bytes")
    verified = _stored_checksum_matches(data)  # (before parsing: a damaged payload costs no parse)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ModelFileError(f"{_FILE}: not a wnb_stream model file: not UTF-8 text ({error.reason} at byte {error.start})") from None
    del data
    try:
        document = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_unique_keys)
    except RecursionError:
        raise ModelFileError(f"{_FILE}: JSON nested too deeply") from None
    except json.JSONDecodeError as error:
        raise ModelFileError(f"{_FILE}: truncated or not JSON ({error})") from None
    except ValueError as error:  # a bare NaN, a key twice, an integer too long to read
        raise ModelFileError(f"{_FILE}: malformed JSON ({error})") from None
    version = _check_envelope(document)
    payload = document["payload"]
    if not verified:  # a file whose envelope is not laid out as pack writes it: the payload re-written
        try:
            found = _checksum(_canonical(payload))
        except RecursionError:
            raise ModelFileError(f"{_FILE}: the payload is nested too deeply") from None
        except ValueError:  # a number beyond the float range: 1e999 reads as inf, which JSON cannot write
            raise ModelFileError(f"{_FILE}: the payload holds a number beyond the float range (1e999, say), which no saved file holds") from None
        expected = document["checksum"]
        if expected != found:
            raise ModelFileError(
                f"{_FILE}: checksum mismatch: the payload changed after it was written (file says {expected}, payload is {found})"
            )
    while version < VERSION:
        payload = MIGRATIONS[version](payload)
        version += 1
    return payload


#: The start of a document as ``pack`` writes it: the envelope's keys in order, the payload last.
_HEAD = rb'\{"format":"wnb_stream\.model","version":[1-9][0-9]{0,8},"checksum":"(sha256:[0-9a-f]{64})","payload":'


def _stored_checksum_matches(text: bytes) -> bool:
    """True when ``text`` is laid out as ``pack`` writes it and its payload's bytes, as stored, have
    the checksum it states; False for another layout (``unpack`` then checks the parsed payload);
    ``ModelFileError`` for a checksum mismatch, found without parsing. O(size), no copy."""
    head = re.match(_HEAD, text)  # (re caches the compiled pattern)
    if head is None or not text.endswith(b"}"):
        return False
    found = "sha256:" + hashlib.sha256(memoryview(text)[head.end() : len(text) - 1]).hexdigest()
    expected = head.group(1).decode("ascii")
    if found != expected and "sha256:" + hashlib.sha256(memoryview(text)[head.end() :]).hexdigest() == expected:
        raise ModelFileError(f"{_FILE}: truncated or not JSON (the document ends before the envelope's closing brace)")
    if found != expected:
        raise ModelFileError(
            f"{_FILE}: checksum mismatch: the payload changed after it was written (file says {expected}, payload is {found})"
        )
    return True


def _check_max_size(max_size: int | None) -> int:
    if max_size is None:
        return MAX_SIZE
    return int(integer(max_size, "max_size", low=1, optional=True, unit=" (bytes)"))


def _gunzip(data: bytes, limit: int) -> bytearray:
    """The inflated bytes of a gzip file, inflated in steps of ``_CHUNK`` bytes of input: refused as
    soon as the output passes ``limit`` bytes or ``MAX_RATIO`` times the input read (past the
    first ``_RATIO_FLOOR`` bytes), so a forged stream costs at most that much time and memory."""
    inflater = zlib.decompressobj(wbits=31)  # gzip container, CRC-32 and length checked
    out_bytes, read = bytearray(), 0
    try:
        while read < len(data) and not inflater.eof:
            chunk = data[read : read + _CHUNK]
            read += len(chunk)
            while chunk:
                out_bytes += inflater.decompress(chunk, _CHUNK * 16)
                chunk = inflater.unconsumed_tail
                size = len(out_bytes)
                if size > limit:
                    raise ModelFileError(f"{_FILE}: the document inflates beyond max_size = {limit} bytes")
                if size > _RATIO_FLOOR and size > MAX_RATIO * (read - len(chunk)):
                    raise ModelFileError(
                        f"{_FILE}: the document inflates more than MAX_RATIO = {MAX_RATIO} times the compressed bytes "
                        f"read ({size} bytes from {read - len(chunk)}): a forged gzip stream"
                    )
                if inflater.eof:
                    break
    except zlib.error as error:
        raise ModelFileError(f"{_FILE}: truncated or corrupt gzip data ({error})") from None
    if not inflater.eof:
        raise ModelFileError(f"{_FILE}: truncated or corrupt gzip data (the stream ends before its end marker)")
    if inflater.unused_data or read < len(data):
        extra = len(inflater.unused_data) + len(data) - read
        raise ModelFileError(f"{_FILE}: corrupt gzip data ({extra} bytes after the end of the stream)")
    return out_bytes


def _reject_constant(name: str):
    raise ValueError(f"bare {name} (non-finite floats are written as float nodes)")


def _unique_keys(pairs: list) -> dict:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"key {key!r} twice in one object")
            seen.add(key)
    return out


def _check_envelope(document: Any) -> int:
    """The version of a parsed document whose envelope is valid; ``ModelFileError`` otherwise."""
    if not isinstance(document, dict):
        raise ModelFileError(f"{_FILE}: not a wnb_stream model file (the document is not a JSON object)")
    found = document.get("format")
    if found == _LEGACY_FORMAT:
        raise LegacyFormatError(
            f"{_FILE}: a version-{document.get('version')!r} file of the object-graph format (format 'wnb_stream', "
            f"written by wnb_stream 0.1's persistence module, now removed): it cannot be migrated to {FORMAT!r} "
            f"version {VERSION}; train and save the model again (docs/saved-model.md, versions and migrations)"
        )
    if found != FORMAT:
        raise ModelFileError(f"{_FILE}: not a wnb_stream model file (format {found!r}, expected {FORMAT!r})")
    version = document.get("version")
    if type(version) is not int or version < 1:
        raise ModelFileError(f"{_FILE}: malformed version {version!r}")
    if version > VERSION:
        raise ModelFileError(
            f"{_FILE}: format version {version} is newer than this library reads (version {VERSION} and older): upgrade wnb_stream"
        )
    if version < VERSION and any(v not in MIGRATIONS for v in range(version, VERSION)):
        raise ModelFileError(f"{_FILE}: format version {version} has no migration to version {VERSION}")
    for key in _ENVELOPE:
        if key not in document:
            raise ModelFileError(f"{_FILE}: the envelope has no {key!r}")
    extra = sorted(set(document) - set(_ENVELOPE))
    if extra:
        raise ModelFileError(f"{_FILE}: unexpected envelope keys {extra}")
    checksum = document["checksum"]
    if not isinstance(checksum, str) or not checksum.startswith("sha256:") or len(checksum) != 7 + 64:
        raise ModelFileError(f"{_FILE}: malformed checksum {checksum!r}")
    return version


def dumps(obj: Any, *, compress: bool = True) -> bytes:
    """The bytes of a file holding ``obj``'s record (``TypeError`` if ``obj`` cannot be saved)."""
    with collector_paused():
        return pack(to_record(obj), compress=compress)


def loads(data: bytes, *, max_size: int | None = None) -> Any:
    """The object held by a file's bytes; ``ModelFileError`` for anything but a valid saved model
    (``max_size``: the largest JSON document read, in bytes; None: ``MAX_SIZE``)."""
    with collector_paused():
        payload = unpack(data, max_size=max_size)
        try:
            return from_record(payload)
        except RecursionError:
            raise ModelFileError(f"{_FILE}: the payload is nested too deeply") from None


def save(obj: Any, path: str | os.PathLike, *, compress: bool = True) -> None:
    """Write ``obj`` to ``path`` atomically (see ``atomic_write``).

    The record is built before the file is touched: an object that cannot be saved raises
    ``TypeError`` and leaves any previous file as it was.
    """
    atomic_write(path, dumps(obj, compress=compress))


def load(path: str | os.PathLike, *, max_size: int | None = None) -> Any:
    """Read the object saved at ``path``; ``ModelFileError`` if the file is not a valid saved model
    (``max_size``: the largest JSON document read, in bytes; None: ``MAX_SIZE``; a file larger
    than that is refused before it is read)."""
    limit = _check_max_size(max_size)
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        room = limit + (limit >> 8) + 1024  # (gzip makes a document incompressible data at most 0.4 % larger)
        if size > room:
            raise ModelFileError(f"{_FILE}: the file is {size} bytes, beyond max_size = {limit} bytes")
        return loads(handle.read(room + 1), max_size=limit)


def atomic_write(path: str | os.PathLike, data: bytes) -> None:
    """Replace the file at ``path`` by ``data`` so that a crash leaves the old or the new file, whole.

    The bytes go to a temporary file in the same directory (``.<name>.<random>.tmp``), which is
    flushed, ``fsync``-ed and renamed over ``path`` with ``os.replace`` (atomic on POSIX and
    Windows); the directory is then ``fsync``-ed so the rename itself survives a power loss. On
    any error the temporary file is removed and the error re-raised; ``path`` is then untouched.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "model.json"
    >>> atomic_write(target, b"{}")
    >>> target.read_bytes()
    b'{}'
    """
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, temporary = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise
    _fsync_directory(directory)


def _fsync_directory(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms that cannot open directories (Windows)
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - file systems that refuse fsync on directories
        pass
    finally:
        os.close(fd)
