"""Mutated saved models, and a child process that loads them one by one (``test_io_mutations.py``).

``cases(n, seed)`` makes ``n`` seeded mutations of the saved model fixtures in ``BASES`` (a default
VNS on a messy stream, Graphical on Gaussian summaries, PGDMB on CPiD, a sketch-mode Categorical):

- **bytes**: truncations and byte flips of the gzip file and of the plain JSON file, and flips of
  the JSON text re-compressed (so gzip's CRC passes and the checksum must catch them);
- **structure**: changes of the decoded payload, then packed again with a *fresh* checksum, so
  the schema, not the checksum, must catch them: keys deleted, added or renamed, values of
  another type, numbers replaced by huge, negative, non-finite or string values, arrays reshaped
  (with or without data to match), given another dtype (converted, or the same bytes read as
  another dtype), elements set to out-of-range values or swapped, base64 damaged, lists shortened,
  lengthened or reordered, record type names changed, and two or three of these at once.

``run_child(path)`` is the child: it reads the cases written by ``write_cases``, prints
``start <i>`` before trying case ``i`` and ``end <i> <outcome> <detail>`` after, so a parent that
sees the child die or stall knows on which case. Outcomes:

- ``rejected``: ``io.ModelFileError`` (the one load error);
- ``same``: loaded; ``predict_proba_one`` on the probes equals the original's, and the model learns
  50 more rows and predicts a distribution;
- ``valid-other`` (structure only, and only when every field changed is *free*, ``FREE_FIELDS``):
  loaded, predictions differ from the original's, but the file describes another valid model: it
  saves back to the very payload loaded, passes ``_check()``, learns and predicts. A free value
  changed into another admissible one (a weight of 0.7 made 0.6 under a new checksum) cannot be
  told from a model that was saved that way; a change of any other field must be refused;
- failures: ``load-error`` (another exception type on load), ``use-error`` (an exception after a
  successful load), ``differs`` (other predictions, and not what the file says), ``crash`` (the
  child died: set by the parent), ``hang`` (no answer in time: set by the parent).
"""

from __future__ import annotations

import base64
import copy
import gzip
import json
import math
import os
import pathlib
import signal
import struct
import sys
import time

import numpy as np

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "v2"
#: The models mutated: fixture name → what it is.
BASES = {
    "model-vns": "default VNS on a messy stream (numeric, categorical, missing values, 3 classes)",
    "model-graphical-gaussian": "Graphical on Gaussian summaries",
    "model-pgdmb-cpid": "PGDMB on CPiD summaries",
    "model-sketch": "a sketch-mode Categorical",
}
FAILURES = ("load-error", "use-error", "differs", "crash", "hang")

# ------------------------------------------------------------------------------------------------
# Walking a JSON payload


def _paths(node, path=()):
    """Every (path, node) of a JSON tree, the root included."""
    yield path, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, path + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _paths(value, path + (i,))


def _field(path) -> str:
    """A path without its list indices: the schema field a node belongs to."""
    return "/".join(str(p) for p in path if not isinstance(p, int))


def _get(node, path):
    for p in path:
        node = node[p]
    return node


def _set(root, path, value):
    if not path:
        return value
    _get(root, path[:-1])[path[-1]] = value
    return root


def _pick(rng, items):
    return items[int(rng.integers(0, len(items)))]


def _pick_by_field(rng, candidates):
    """One of ``candidates`` ((path, node) pairs), each schema field equally likely."""
    fields: dict = {}
    for path, node in candidates:
        fields.setdefault(_field(path), []).append((path, node))
    return _pick(rng, _pick(rng, sorted(fields.items()))[1])


def _is_array(node) -> bool:
    """A well-formed array node (an earlier mutation may have broken one)."""
    if not (isinstance(node, dict) and node.get("$") == "ndarray" and isinstance(node.get("shape"), list)):
        return False
    if not all(type(d) is int and 0 <= d < 1 << 40 for d in node["shape"]):
        return False
    if node.get("dtype") == "object":
        return isinstance(node.get("items"), list) and len(node["items"]) == math.prod(node["shape"])
    try:
        return len(base64.b64decode(node["data"])) == np.dtype(node["dtype"]).itemsize * math.prod(node["shape"])
    except Exception:  # noqa: BLE001
        return False


def _decode(node) -> np.ndarray:
    dtype = np.dtype(node["dtype"])
    return np.frombuffer(base64.b64decode(node["data"]), dtype=dtype).reshape(node["shape"]).copy()


def _encode(array: np.ndarray, descr: str | None = None) -> dict:
    target = np.dtype(descr) if descr else array.dtype.newbyteorder("<") if array.dtype.byteorder not in "|<" else array.dtype
    data = np.ascontiguousarray(array, dtype=target).tobytes()
    return {"$": "ndarray", "dtype": target.str, "shape": [int(d) for d in array.shape], "data": base64.b64encode(data).decode()}


# ------------------------------------------------------------------------------------------------
# Structural mutations: each returns (label, new payload) or None when it does not apply

NAN = {"$": "float", "value": "nan"}
INF = {"$": "float", "value": "inf"}
NINF = {"$": "float", "value": "-inf"}
OTHER_VALUES = [None, True, False, 0, -1, 1.5, "x", "", [], {}, [1, 2], {"a": 1}, NAN, {"$": "tuple", "items": []}, {"$": "bogus"}]
NUMBERS = [
    10**400, -(10**400), 2**63, 2**64, -(2**63) - 1, 2**62, 10**9, -1, -2, 0, 1, -1e300, 1e300, 1e-300, -0.0, 0.5,
    NAN, INF, NINF, "12", True, None,
]


def _delete_key(rng, payload):
    dicts = [(p, n) for p, n in _paths(payload) if isinstance(n, dict) and n]
    path, node = _pick_by_field(rng, dicts)
    key = _pick(rng, sorted(node, key=str))
    del node[key]
    return f"delete {_field(path + (key,))}", payload, _field(path + (key,))


def _add_key(rng, payload):
    dicts = [(p, n) for p, n in _paths(payload) if isinstance(n, dict)]
    path, node = _pick_by_field(rng, dicts)
    name = _pick(rng, ["extra", "$", "type", "state", "params", "data", "items"])
    if name in node:
        name = name + "2"
    node[name] = copy.deepcopy(_pick(rng, list(node.values()))) if node else 0
    return f"add key {name!r} to {_field(path) or '<root>'}", payload, _field(path + (name,))


def _rename_key(rng, payload):
    dicts = [(p, n) for p, n in _paths(payload) if isinstance(n, dict) and n]
    path, node = _pick_by_field(rng, dicts)
    key = _pick(rng, sorted(node, key=str))
    others = [k for k in node if k != key]
    new = _pick(rng, others) + "_" if others and rng.random() < 0.5 else key.upper() if key != key.upper() else key + "x"
    node[new] = node.pop(key)
    return f"rename {_field(path + (key,))} to {new}", payload, _field(path + (key,))


def _swap_type(rng, payload):
    path, node = _pick_by_field(rng, [(p, n) for p, n in _paths(payload) if p])
    value = copy.deepcopy(_pick(rng, OTHER_VALUES))
    _set(payload, path, value)
    return f"{_field(path)} := {json.dumps(value)[:40]}", payload, _field(path)


def _number(rng, payload):
    numbers = [(p, n) for p, n in _paths(payload) if type(n) in (int, float) and p and p[-1] not in ("shape",) and "shape" not in p]
    numbers += [(p, n) for p, n in _paths(payload) if isinstance(n, dict) and n.get("$") == "float"]
    if not numbers:
        return None
    path, node = _pick_by_field(rng, numbers)
    choices = list(NUMBERS)
    if type(node) in (int, float):
        choices += [node + 1, node - 1, node * 1000, -node, node * 2]
    value = copy.deepcopy(_pick(rng, choices))
    _set(payload, path, value)
    return f"{_field(path)}: {str(node)[:20]} -> {json.dumps(value)[:30]}", payload, _field(path)


def _arrays(payload, numeric=True):
    return [(p, n) for p, n in _paths(payload) if _is_array(n) and (n["dtype"] != "object" or not numeric)]


def _shape(rng, payload):
    path, node = _pick_by_field(rng, _arrays(payload, numeric=False))
    shape = list(node["shape"])
    how = int(rng.integers(0, 8))
    i = int(rng.integers(0, len(shape))) if shape else 0
    if how == 0 and shape:
        shape[i] += 1
    elif how == 1 and shape:
        shape[i] = max(0, shape[i] - 1)
    elif how == 2 and shape:
        shape[i] = 10**9
    elif how == 3 and shape:
        shape[i] = -shape[i] - 1
    elif how == 4:
        shape = shape[::-1]
    elif how == 5:
        shape = shape + [1]
    elif how == 6 and len(shape) > 1:
        shape = [math.prod(shape)]
    else:
        shape = [0] * len(shape)
    node["shape"] = shape
    return f"{_field(path)}: shape -> {shape} (data kept)", payload, _field(path)


def _reshape(rng, payload):
    """Reshape with data to match: the file is a well-formed array of another shape."""
    candidates = _arrays(payload)
    if not candidates:
        return None
    path, node = _pick_by_field(rng, candidates)
    array = _decode(node)
    how = int(rng.integers(0, 6))
    if how == 0 and array.ndim >= 1 and array.shape[0]:
        new = array[:-1]
    elif how == 1 and array.ndim >= 1 and array.shape[0]:
        new = np.concatenate([array, array[-1:]])
    elif how == 2 and array.ndim == 2:
        new = array.T
    elif how == 3 and array.ndim == 2 and array.shape[1]:
        new = array[:, :-1]
    elif how == 4 and array.ndim == 2:
        new = np.concatenate([array, array[:, -1:] if array.shape[1] else np.zeros((array.shape[0], 1), array.dtype)], axis=1)
    else:
        new = array.reshape(-1) if array.ndim > 1 else array.reshape(-1, 1)
    _set(payload, path, _encode(new))
    return f"{_field(path)}: reshaped {array.shape} -> {new.shape}", payload, _field(path)


DTYPE_SWAPS = {
    "<f8": ["<f4", "<i8", "<u8", "|b1", "<i4"],
    "<i8": ["<i4", "<f8", "<u8", "|u1", "|b1"],
    "|b1": ["|u1", "<i8", "<f8"],
}


def _dtype(rng, payload):
    candidates = _arrays(payload)
    if not candidates:
        return None
    path, node = _pick_by_field(rng, candidates)
    target = _pick(rng, DTYPE_SWAPS.get(node["dtype"], ["<f8"]))
    array = _decode(node)
    if rng.random() < 0.5:  # converted: the values as another dtype
        with np.errstate(all="ignore"):
            new = _encode(array.astype(np.dtype(target)), target)
        _set(payload, path, new)
        return f"{_field(path)}: {node['dtype']} converted to {target}", payload, _field(path)
    node["dtype"] = target  # the same bytes read as another dtype
    return f"{_field(path)}: {array.dtype.str} bytes labelled {target}", payload, _field(path)


def _element(rng, payload):
    """One or a few elements of an array set to values out of any range, or reordered."""
    candidates = [(p, n) for p, n in _arrays(payload) if math.prod(n["shape"])]
    if not candidates:
        return None
    path, node = _pick_by_field(rng, candidates)
    array = _decode(node)
    flat = array.reshape(-1)
    i = int(rng.integers(0, flat.size))
    kind = array.dtype.kind
    if rng.random() < 0.2 and flat.size > 1:
        j = int(rng.integers(0, flat.size))
        flat[i], flat[j] = flat[j], flat[i]
        what = f"swap [{i}] and [{j}]"
    elif rng.random() < 0.1 and flat.size > 1:
        flat[i] = flat[i - 1]
        what = f"[{i}] := [{i - 1}]"
    elif kind == "f":
        value = _pick(rng, [np.nan, np.inf, -np.inf, -1.0, 1e300, -1e300, 1e9, 5e-324, 0.0, -0.0, flat[i] * 1.5 + 1.0, 2.0**63])
        flat[i] = value
        what = f"[{i}] := {value!r}"
    elif kind == "b":
        flat[i] = not flat[i]
        what = f"[{i}] flipped"
    else:
        info = np.iinfo(array.dtype)
        value = _pick(rng, [-1, -2, info.min, info.max, 10**9, flat.size, flat.size + 1, 0, int(flat[i]) + 1, 2**31])
        flat[i] = np.array(value).astype(array.dtype) if info.min <= value <= info.max else info.max
        what = f"[{i}] := {int(flat[i])}"
    _set(payload, path, _encode(array, node["dtype"]))
    return f"{_field(path)}: {what}", payload, _field(path)


def _base64(rng, payload):
    path, node = _pick_by_field(rng, [(p, n) for p, n in _arrays(payload) if "data" in n])
    data = node["data"]
    how = int(rng.integers(0, 4))
    if how == 0:
        node["data"] = data[: max(0, len(data) - 4)]
    elif how == 1:
        node["data"] = data + "AAAA"
    elif how == 2:
        node["data"] = data[:-1] + "!" if data else "!"
    else:
        node["data"] = 12345
    return f"{_field(path)}: base64 damaged ({how})", payload, _field(path)


def _object_items(rng, payload):
    candidates = [(p, n) for p, n in _arrays(payload, numeric=False) if n["dtype"] == "object" and n["items"]]
    if not candidates:
        return None
    path, node = _pick_by_field(rng, candidates)
    i = int(rng.integers(0, len(node["items"])))
    value = copy.deepcopy(_pick(rng, [[1], {"a": 1}, 10**400, NAN, {"$": "ndarray", "dtype": "<f8", "shape": [0], "data": ""}, {"$": "tuple", "items": [[1]]}]))
    node["items"][i] = value
    return f"{_field(path)}: item {i} := {json.dumps(value)[:30]}", payload, _field(path)


def _list(rng, payload):
    lists = [(p, n) for p, n in _paths(payload) if isinstance(n, list) and n and p and p[-1] not in ("shape",)]
    path, node = _pick_by_field(rng, lists)
    how = int(rng.integers(0, 6))
    if how == 0:
        node.pop()
    elif how == 1:
        node.pop(0)
    elif how == 2:
        node.append(copy.deepcopy(node[-1]))
    elif how == 3:
        node.insert(0, copy.deepcopy(node[int(rng.integers(0, len(node)))]))
    elif how == 4:
        node.reverse()
    else:
        i, j = (int(k) for k in rng.integers(0, len(node), 2))
        node[i], node[j] = node[j], node[i]
    return f"{_field(path)}: list change {how}", payload, _field(path) + ("#permuted" if how >= 4 else "")


def _type_name(rng, payload):
    from wnb_stream import io

    records = [(p, n) for p, n in _paths(payload) if isinstance(n, dict) and set(n) == {"type", "params", "state"}]
    path, node = _pick_by_field(rng, records)
    new = _pick(rng, list(io.registered()) + ["os.system", "GKclass", ""])
    old, node["type"] = node["type"], new
    return f"{_field(path) or '<root>'}: type {old} -> {new}", payload, _field(path + ("type",))


STRUCTURAL = {
    "delete-key": _delete_key,
    "add-key": _add_key,
    "rename-key": _rename_key,
    "swap-type": _swap_type,
    "number": _number,
    "shape": _shape,
    "reshape": _reshape,
    "dtype": _dtype,
    "element": _element,
    "base64": _base64,
    "object-item": _object_items,
    "list": _list,
    "type-name": _type_name,
}
#: Weights of the structural operators (the value and array operators are the subtle ones).
WEIGHTS = {"element": 4, "number": 3, "reshape": 2, "dtype": 2, "shape": 1, "list": 2, "swap-type": 1}


def _structural(rng, payload):
    """(label, payload, fields mutated): one mutation, or two or three at once."""
    names = sorted(STRUCTURAL)
    weights = np.array([WEIGHTS.get(name, 1) for name in names], dtype=float)
    labels, fields = [], []
    for _ in range(1 if rng.random() < 0.8 else int(rng.integers(2, 4))):
        for _attempt in range(10):
            name = names[int(rng.choice(len(names), p=weights / weights.sum()))]
            try:
                done = STRUCTURAL[name](rng, payload)
            except (IndexError, ValueError):  # nothing of that kind left to mutate
                done = None
            if done is not None:
                labels.append(f"{name}: {done[0]}")
                payload = done[1]
                fields.append(done[2])
                break
    return "; ".join(labels), payload, fields


#: Fields whose value is free: any value in the schema's range (and the record's checks) is a
#: model training could have made, so a file changing them under a fresh checksum describes
#: another valid model, which no schema can tell from the original. Every other field is tied to
#: others (a locator to its partition, a label order to the partitions' columns...): a change
#: there must be refused, or leave the predictions as they were.
FREE_FIELDS = (
    "state/learner/state/run/",  # the learned weights, biases and descent state
    "state/classes/state/counts",  # the prior's weighted counts
    "state/registry/state/variables/state/partition/state/counts",  # level 2's counts
    "state/registry/state/variables/state/density/state/means",
    "state/registry/state/variables/state/density/state/variances",
    "state/registry/state/variables/state/name",  # a feature's name
)
#: Lists whose order is free: the variables (two variables of one kind can trade places).
FREE_ORDERS = ("state/registry/state/variables#permuted",)
#: Fields that the predictions of the moment do not read (level 1, the history, the schedule,
#: the parameters of what is learned next): a change there that the checks let through must
#: leave the predictions as they were ("same"), and may go with a change of free fields.
INERT_FIELDS = (
    "params/",
    "state/registry/state/variables/state/summary/",
    "state/history/",
    "state/registry/state/count",
    "state/registry/state/next_rebuild",
    "state/registry/state/synced",
    "state/classes/state/seen",
    "state/classes/state/next_rebuild",
    "state/schedule/",
    "state/learner/params/",
)


def free(fields: list[str], label: str = "") -> bool:
    """True when the mutated fields are free (``FREE_FIELDS``, ``FREE_ORDERS``), or inert
    (``INERT_FIELDS``) beside one free field at least."""
    is_free = [field in FREE_ORDERS or field.startswith(FREE_FIELDS) for field in fields]
    return any(is_free) and all(ok or field.startswith(INERT_FIELDS) for ok, field in zip(is_free, fields))


# ------------------------------------------------------------------------------------------------
# Byte mutations


def _truncate(rng, data):
    k = int(rng.integers(0, len(data)))
    return f"truncated at {k} of {len(data)}", data[:k]


def _flip(rng, data):
    data = bytearray(data)
    where = []
    for _ in range(int(rng.integers(1, 4))):
        i = int(rng.integers(0, len(data)))
        data[i] ^= int(rng.integers(1, 256))
        where.append(i)
    return f"bytes {where} flipped", bytes(data)


def cases(n: int, seed: int = 0) -> list[dict]:
    """``n`` mutation cases: dicts with ``base``, ``family``, ``label`` and the file's ``data``."""
    from wnb_stream import io

    rng = np.random.default_rng(seed)
    bases = {name: (FIXTURES / f"{name}.json.gz").read_bytes() for name in BASES}
    plain = {name: gzip.decompress(data) for name, data in bases.items()}
    payloads = {name: json.loads(text)["payload"] for name, text in plain.items()}
    families = ["gzip-truncate", "gzip-flip", "plain-truncate", "plain-flip", "text-flip-regzip"] + ["structure"] * 15
    out = []
    for i in range(n):
        base = sorted(BASES)[i % len(BASES)]
        family = families[int(rng.integers(0, len(families)))]
        if family == "gzip-truncate":
            label, data = _truncate(rng, bases[base])
        elif family == "gzip-flip":
            label, data = _flip(rng, bases[base])
        elif family == "plain-truncate":
            label, data = _truncate(rng, plain[base])
        elif family == "plain-flip":
            label, data = _flip(rng, plain[base])
        elif family == "text-flip-regzip":
            label, text = _flip(rng, plain[base])
            data = gzip.compress(text, mtime=0)
        else:
            label, payload, fields = _structural(rng, copy.deepcopy(payloads[base]))
            try:
                data = io.pack(payload, compress=bool(rng.random() < 0.5))
            except (ValueError, TypeError, OverflowError) as error:  # a NaN float the JSON writer refuses, say
                label += f" (not packable: {type(error).__name__}; written as text)"
                data = plain[base]
        out.append({"base": base, "family": family, "label": label, "free": family == "structure" and free(fields), "data": data})
    return out


def write_cases(items: list[dict], path: pathlib.Path) -> None:
    """One file: a JSON index line, then the cases' bytes back to back."""
    index = [{k: v for k, v in item.items() if k != "data"} | {"size": len(item["data"])} for item in items]
    with open(path, "wb") as handle:
        head = json.dumps(index).encode()
        handle.write(struct.pack("<Q", len(head)) + head)
        for item in items:
            handle.write(item["data"])


def read_cases(path: pathlib.Path) -> list[dict]:
    blob = pathlib.Path(path).read_bytes()
    (size,) = struct.unpack("<Q", blob[:8])
    index = json.loads(blob[8 : 8 + size])
    at = 8 + size
    for item in index:
        item["data"] = blob[at : at + item["size"]]
        at += item["size"]
    return index


# ------------------------------------------------------------------------------------------------
# The child


def probes() -> list[dict]:
    """Rows the predictions are compared on: known and unseen values, missing and absent features."""
    sys.path.insert(0, str(pathlib.Path(__file__).parent))
    from io_cases import PROBES, model_rows

    extremes = [{"a": 1e9, "b": -1e9, "late": 0.0, "colour": "c0"}, {"a": float("nan")}, {"b": None, "late": float("nan"), "colour": None}]
    return PROBES + [x for x, _ in model_rows(12, seed=77)] + extremes


def predictions(model) -> tuple:
    """The model's answers on the probes: one by one (``predict_proba_one``) and as a batch
    (``predict_proba_many``, the compiled path)."""
    import pandas as pd

    many = model.predict_proba_many(pd.DataFrame(probes_cache))
    one = [model.predict_proba_one(dict(x)) for x in probes_cache]
    return one, list(many.columns), many.to_numpy().tolist()


def _canonical(payload) -> str:
    return json.dumps(payload, sort_keys=True, separators=(",", ":"))


def _finite_distribution(p: dict) -> bool:
    return all(math.isfinite(v) and 0.0 <= v <= 1.0 for v in p.values()) and (not p or abs(sum(p.values()) - 1.0) < 1e-9)


def try_case(data: bytes, family: str, expected: list, more_rows: list, is_free: bool = False) -> tuple[str, str]:
    """(outcome, detail) of loading one case (see the module docstring)."""
    from wnb_stream import io

    try:
        model = io.loads(data)
    except io.ModelFileError as error:
        return "rejected", str(error)[:160]
    except BaseException as error:  # noqa: BLE001 - every other error is a finding
        return "load-error", f"{type(error).__name__}: {str(error)[:160]}"
    try:
        found = predictions(model)
        same = found == expected
        faithful = None
        if not same:
            payload = json.loads(gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data)["payload"]
            faithful = is_free and _canonical(io.to_record(model)) == _canonical(payload)
            model._check()
        for x, y in more_rows:
            model.learn_one(x, y)
        after = predictions(model)
        batch = [dict(zip(answers[1], row)) for answers in (found, after) for row in answers[2]]
        if not all(_finite_distribution(p) for p in found[0] + after[0] + batch):
            return "use-error", "not a probability distribution"
        model._check()
    except BaseException as error:  # noqa: BLE001
        return "use-error", f"{type(error).__name__}: {str(error)[:160]}"
    if same:
        return "same", ""
    if faithful:
        return "valid-other", "another valid model: saves back to the payload it was loaded from"
    return "differs", "predictions differ from the original's" + ("" if is_free else " (the fields changed are not free)")


probes_cache: list = []


def run_child(path: str, start: int) -> None:
    import resource

    # A forged size must fail as MemoryError here, not take the machine's memory.
    limit = 6 << 30
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    sys.setrecursionlimit(10_000)
    from io_cases import model_rows

    from wnb_stream import io

    probes_cache.extend(probes())
    items = read_cases(pathlib.Path(path))
    originals = {}
    for name in BASES:
        model = io.loads((FIXTURES / f"{name}.json.gz").read_bytes())
        originals[name] = predictions(model)
    more_rows = model_rows(50, seed=123)
    print("ready", flush=True)
    # (tests of the parent's bookkeeping: "crash:2,hang:4" makes the child die or stall there)
    faults = dict(reversed(part.split(":")) for part in os.environ.get("WNB_MUTATIONS_FAULT", "").split(",") if part)
    for i in range(start, len(items)):
        item = items[i]
        print(f"start {i}", flush=True)
        if faults.get(str(i)) == "crash":
            os.kill(os.getpid(), signal.SIGSEGV)
        elif faults.get(str(i)) == "hang":
            time.sleep(3600)
        outcome, detail = try_case(item["data"], item["family"], originals[item["base"]], more_rows, item["free"])
        print(f"end {i} {outcome} {json.dumps(detail)}", flush=True)
    print("done", flush=True)


# ------------------------------------------------------------------------------------------------
# The parent


def run(items: list[dict], workdir: pathlib.Path, timeout: float = 60.0, optimize: bool = False) -> list[tuple[str, str]]:
    """(outcome, detail) of every case, loaded in child processes (one restarted after a crash).

    ``optimize`` runs the children under ``python -O``, which strips the ``assert`` statements of
    the ``_check()`` methods: the schema's checks must then stop every bad file on their own.
    """
    import queue
    import subprocess
    import threading

    workdir = pathlib.Path(workdir)
    path = workdir / "cases.bin"
    write_cases(items, path)
    root = pathlib.Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), str(pathlib.Path(__file__).parent)]))
    results: list = [None] * len(items)
    start = 0
    while start < len(items):
        child = subprocess.Popen(
            [sys.executable, *(["-O"] if optimize else []), __file__, str(path), str(start)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        lines: queue.Queue = queue.Queue()

        def pump(stream=child.stdout, lines=lines):
            for line in stream:
                lines.put(line)
            lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        current, ended = None, False
        while True:
            try:
                line = lines.get(timeout=timeout if current is not None else 5 * timeout)
            except queue.Empty:
                child.kill()
                child.wait()
                if current is None:
                    raise RuntimeError("the mutation child did not start in time")
                results[current] = ("hang", f"no answer in {timeout} s")
                break
            if line is None:
                child.wait()
                if current is None:
                    raise RuntimeError(f"the mutation child died before any case: {child.stderr.read()[-2000:]}")
                results[current] = ("crash", f"the child died (exit {child.returncode}): {child.stderr.read()[-300:]!r}")
                break
            word, _, rest = line.rstrip("\n").partition(" ")
            if word == "start":
                current = int(rest)
            elif word == "end":
                i, outcome, detail = rest.split(" ", 2)
                results[int(i)] = (outcome, json.loads(detail))
                current = None
            elif word == "done":
                child.wait()
                ended = True
                break
        if ended:
            break
        start = next((i for i, r in enumerate(results) if r is None), len(items))
    return results


def report(items: list[dict], results: list) -> str:
    """Counts by family and outcome, then every failure."""
    import collections

    table = collections.Counter((item["family"] if item["family"] == "structure" else "bytes", outcome) for item, (outcome, _) in zip(items, results))
    lines = [f"{len(items)} mutated files"]
    for family in ("bytes", "structure"):
        counts = {outcome: n for (f, outcome), n in sorted(table.items()) if f == family}
        lines.append(f"  {family}: " + ", ".join(f"{outcome} {n}" for outcome, n in counts.items()))
    for i, (item, (outcome, detail)) in enumerate(zip(items, results)):
        if outcome in FAILURES or (outcome == "valid-other" and item["family"] != "structure"):
            lines.append(f"  FAIL case {i} [{item['base']}] {item['family']}: {item['label']} -> {outcome}: {detail}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.path.insert(0, str(pathlib.Path(__file__).parent))
    run_child(sys.argv[1], int(sys.argv[2]))
