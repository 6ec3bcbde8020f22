"""One list of problems per partition: what the tests assert empty is what a load refuses.

``Intervals`` and ``Groups`` state their invariants once, in ``problems()`` (``"field: what is
wrong"``); ``_check()`` asserts the list empty and ``io.from_record`` raises its first entry as
the ``ModelFileError`` of a file whose rebuilt partition breaks one. A partition is a frozen
value: here one is damaged by hand (as a bug would), saved and loaded, and the load refuses it
with exactly the first problem the damaged partition lists.
"""

from __future__ import annotations

import pytest
from testkit import assert_listed_and_refused

from wnb_stream import io, modl
from wnb_stream.summaries import Bins, Categories


def _intervals():
    table = Bins(upper_bounds=[1.0, 2.0, 3.0, 4.0], counts=[[10, 0], [8, 2], [1, 9], [0, 10]], classes=("a", "b"), missing=[3, 1])
    return modl.discretize(table)


def _groups():
    table = Categories(values=("A", "B", "C", "D", "E"), counts=[[10, 0], [9, 1], [1, 9], [0, 10], [5, 5]],
                       classes=(0, 1), missing=[2, 0], star=[0, 0])  # fmt: skip
    return modl.group(table)


MAKERS = {"Intervals": _intervals, "Groups": _groups}


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_a_sound_partition_lists_no_problem_before_and_after_a_round_trip(name):
    partition = MAKERS[name]()
    assert partition.n_parts > 1 and partition.problems() == []
    assert io.loads(io.dumps(partition)).problems() == []


def _dearer_than_null(partition):
    object.__setattr__(partition, "cost", partition.null_cost + 1.0)


def _star_moved(groups):
    object.__setattr__(groups, "star_part", (groups.star_part + 1) % groups.n_parts)


def _value_twice(groups):
    first = next(v for v in groups.groups[0] if v is not modl.STAR and v is not modl.MISSING)
    object.__setattr__(groups, "groups", (groups.groups[0], (*groups.groups[1], first), *groups.groups[2:]))


DAMAGES = {
    "Intervals: dearer than the null model": ("Intervals", _dearer_than_null, "cost: must be <= null_cost"),
    "Groups: dearer than the null model": ("Groups", _dearer_than_null, "cost: must be <= null_cost"),
    "Groups: the star in another group": ("Groups", _star_moved, "star_part: the star marker must be in group"),
    "Groups: a value in two groups": ("Groups", _value_twice, "groups[1]["),
}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_a_broken_invariant_is_listed_and_refused_on_load_with_the_same_words(damage):
    name, change, expected = DAMAGES[damage]
    partition = MAKERS[name]()
    change(partition)
    assert_listed_and_refused(partition, expected)
