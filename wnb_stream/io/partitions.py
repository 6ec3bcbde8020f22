"""Records of level 2: the MODL partitions ``Intervals`` and ``Groups``.

A partition is a frozen value; its record holds the dataclass fields (classes, bounds or groups,
part × class counts, the part of missing and unseen values, the MODL costs and how it was built).
The lookups are caches rebuilt by the constructor: ``log_prob`` and the table with its zero row
(from the counts, by the Khiops estimator), the row views, the cut list and the offset of
``Intervals``, the value → part dict of ``Groups``. They come back bit for bit, since the
constructor computes them from the same counts as the search that built the partition.

In ``Groups.groups`` the pseudo-values ``STAR`` and ``MISSING`` are written ``{"marker": "star"}``
and ``{"marker": "missing"}``, in their place among the group's values.
"""

from __future__ import annotations

import numpy as np

from ..modl import discretization, grouping
from ..modl._common import METHODS
from ..modl.partition import COST_TOLERANCE, MISSING, STAR, Groups, Intervals
from ..summaries.base import CLASSES
from .errors import ModelFileError, join, where
from .registry import register
from .schema import Array, Fields, Float, Int, Kind, List, Schema, Str, _dump_key, _load_key

__all__ = ["Member"]

_MARKERS = {"star": STAR, "missing": MISSING}


class Member(Kind):
    """A member of a group: a category value (a key, as in ``Keys``) or the marker of the star or
    of the missing value."""

    doc = "a category value, or the marker {\"marker\": \"star\"} or {\"marker\": \"missing\"}"

    def dump(self, value, path):
        if value is STAR or value is MISSING:
            return {"marker": value.name.lower()}
        return _dump_key(value, path)

    def load(self, node, path, scope):
        if isinstance(node, dict) and "marker" in node:
            if set(node) != {"marker"} or not isinstance(node["marker"], str) or node["marker"] not in _MARKERS:
                raise ModelFileError(f"{where(path)}: malformed marker {node!r}")
            return _MARKERS[node["marker"]]
        return _load_key(node, path)

    def text(self):
        return "category value or marker"


def _costs() -> dict:
    return {
        "cost": Float(doc="MODL cost c(M*) of the partition (nats)"),
        "null_cost": Float(doc="cost c(M0) of the one-part model"),
        "level": Float(low=0.0, below=1.0, doc="1 − c(M*)/c(M0), or 0"),
        "prior_cost": Float(doc="B(X): selection plus preparation cost"),
    }


_FIELDS = ("cost", "null_cost", "level", "prior_cost", "criterion", "method")


def _costs_check(fields: Fields) -> None:
    """The invariants of ``_check_lookup`` on the saved fields: the MODL model costs no more than
    the null model, and a Level above 0 needs two parts or more."""
    state = fields.state
    if not state["cost"] <= state["null_cost"] + COST_TOLERANCE:
        fields.fail("cost", f"must be <= null_cost = {state['null_cost']!r} (the null model is a candidate), got {state['cost']!r}")
    if state["level"] != 0.0 and fields.scope["n_parts"] < 2:
        fields.fail("level", "must be 0 for a partition of one part")
    if not np.isfinite(state["counts"].sum()):
        fields.fail("counts", "must add up to a finite total")


def _lookup_checked(partition, fields: Fields):
    """The rebuilt partition, once its lookup table is seen to be what ``_check_lookup`` asserts:
    finite log-probabilities, each class column a distribution over the parts."""
    log_prob = partition.log_prob
    if not np.all(np.isfinite(log_prob)) or not np.allclose(np.exp(log_prob).sum(axis=0), 1.0):
        fields.fail("counts", "do not give finite log-probabilities (Khiops estimator)")
    return partition


# ------------------------------------------------------------------------------------------------
# Intervals


def _intervals_check(fields: Fields) -> None:
    n_parts, n_intervals = fields.scope["n_parts"], fields.scope["n_intervals"]
    if n_intervals < 1:
        fields.fail("upper_bounds", "a discretization has at least one interval")
    if n_parts not in (n_intervals, n_intervals + 1):
        fields.fail("counts", f"expected n_intervals = {n_intervals} or one more parts, got {n_parts}")
    if n_parts == n_intervals + 1 and fields.state["missing_part"] != 0:
        fields.fail("missing_part", "must be 0 when missing values have a part of their own")
    _costs_check(fields)


register(
    "Intervals",
    Intervals,
    Schema(
        state={
            "classes": CLASSES,
            "upper_bounds": Array(
                "float64", ("n_intervals",), finite=False, increasing=True, doc="right bounds of the intervals (the last may be +inf)"
            ),
            "counts": Array("float64", ("n_parts", "n_classes"), low=0.0, doc="part × class counts, missing values included"),
            "missing_part": Int(low=-1, below="n_parts", doc="part of missing values, or −1"),
            **_costs(),
            "criterion": Str(choices=discretization.CRITERIA, doc="the MODL criterion used"),
            "method": Str(choices=METHODS, doc="the search that built the partition"),
        },
        checks=(_intervals_check,),
        doc="MODL discretization of a numeric variable",
    ),
    state=lambda p: {
        "classes": list(p.classes),
        "upper_bounds": p.upper_bounds,
        "counts": p.counts,
        "missing_part": p.missing_part,
        **{name: getattr(p, name) for name in _FIELDS},
    },
    build=lambda fields: _lookup_checked(
        Intervals(
            classes=tuple(fields.state["classes"]),
            upper_bounds=fields.state["upper_bounds"],
            counts=fields.state["counts"],
            missing_part=fields.state["missing_part"],
            **{name: fields.state[name] for name in _FIELDS},
        ),
        fields,
    ),
)


# ------------------------------------------------------------------------------------------------
# Groups


def _groups_check(fields: Fields) -> None:
    state = fields.state
    seen: dict = {}
    stars, missings = [], []
    for part, members in enumerate(state["groups"]):
        for i, value in enumerate(members):
            path = join(join("groups", part), i)
            if value is STAR:
                stars.append(part)
            elif value is MISSING:
                missings.append(part)
            elif value in seen:
                fields.fail(path, f"{value!r} is in two places (also {seen[value]})")
            else:
                seen[value] = path
    # (the star may be listed twice in its group: once as the table's star value, once as unseen values)
    if not stars or set(stars) != {state["star_part"]}:
        fields.fail("star_part", f"the star marker must be in group star_part = {state['star_part']} only, found in {stars}")
    expected = set() if state["missing_part"] < 0 else {state["missing_part"]}
    if set(missings) != expected:
        fields.fail("missing_part", f"the missing marker must be in group missing_part = {state['missing_part']} only, found in {missings}")
    _costs_check(fields)


register(
    "Groups",
    Groups,
    Schema(
        state={
            "classes": CLASSES,
            "groups": List(List(Member()), length="n_parts", doc="the values of each group, with the star and missing markers"),
            "counts": Array("float64", ("n_parts", "n_classes"), low=0.0, doc="group × class counts"),
            "star_part": Int(low=0, below="n_parts", doc="group of unseen values (holds the star)"),
            "missing_part": Int(low=-1, below="n_parts", doc="group of missing values, or −1"),
            "garbage_part": Int(low=-1, below="n_parts", doc="the garbage group, or −1"),
            **_costs(),
            "criterion": Str(choices=grouping.CRITERIA, doc="the MODL criterion used"),
            "method": Str(choices=METHODS, doc="the search that built the partition"),
        },
        checks=(_groups_check,),
        doc="MODL value grouping of a categorical variable",
    ),
    state=lambda p: {
        "classes": list(p.classes),
        "groups": [list(members) for members in p.groups],
        "counts": p.counts,
        "star_part": p.star_part,
        "missing_part": p.missing_part,
        "garbage_part": p.garbage_part,
        **{name: getattr(p, name) for name in _FIELDS},
    },
    build=lambda fields: _lookup_checked(
        Groups(
            classes=tuple(fields.state["classes"]),
            groups=tuple(tuple(members) for members in fields.state["groups"]),
            counts=fields.state["counts"],
            star_part=fields.state["star_part"],
            missing_part=fields.state["missing_part"],
            garbage_part=fields.state["garbage_part"],
            **{name: fields.state[name] for name in _FIELDS},
        ),
        fields,
    ),
)
