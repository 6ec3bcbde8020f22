"""The parameter checks (``wnb_stream._checks``): one vocabulary, one message form, used by every
constructor and setter of the package; a bool is never a number, a refused value raises a
``ValueError`` naming the parameter."""

from __future__ import annotations

import fractions
import pathlib
import re

import numpy as np
import pytest

from wnb_stream import WeightedNaiveBayes, summaries, weights
from wnb_stream._checks import bound_terms, integer, is_integer, is_real, real
from wnb_stream.distributed.partitioned import Learner
from wnb_stream.io.schema import Float
from wnb_stream.stream.dead_letters import DeadLetters
from wnb_stream.stream.pending import PendingTable

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "wnb_stream"


def test_what_is_a_number():
    for value in (0, -3, np.int64(2), np.uint8(7), 2**80):
        assert is_integer(value) and is_real(value)
    for value in (1.5, np.float32(0.5), fractions.Fraction(1, 3), float("nan"), float("inf")):
        assert is_real(value) and not is_integer(value)
    for value in (True, False, np.bool_(True), "1", None, 1j, b"1", [1]):
        assert not is_integer(value) and not is_real(value)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: integer(0, "batch_size", low=1), "batch_size must be an integer >= 1, got 0"),
        (lambda: integer(True, "batch_size", low=1), "batch_size must be an integer >= 1, got True"),
        (lambda: integer(2.0, "depth", low=1), "depth must be an integer >= 1, got 2.0"),
        (lambda: integer(-1, "keep_rows", low=0, optional=True), "keep_rows must be None or an integer >= 0, got -1"),
        (lambda: integer(1 << 64, "seed", low=0, below=1 << 64, bounds="in [0, 2**64)"), "seed must be an integer in [0, 2**64), got"),
        (lambda: integer(0, "max_size", low=1, optional=True, unit=" (bytes)"), "max_size must be None or an integer >= 1 (bytes), got 0"),
        (lambda: integer("3", "position", optional=True), "position must be None or an integer, got '3'"),
        (lambda: integer(-2, "position", low=0, what="a byte offset"), "position must be a byte offset >= 0, got -2"),
        (lambda: real(0.5, "epsilon", above=0, below=0.5), "epsilon must be in (0, 0.5), got 0.5"),
        (lambda: real(float("nan"), "phi", low=0, high=1), "phi must be in [0, 1], got nan"),
        (lambda: real(1, "min_width", low=0, below=1), "min_width must be in [0, 1), got 1"),
        (lambda: real(np.bool_(True), "alpha", above=0, below=1, optional=True), "alpha must be None or in (0, 1), got "),
        (lambda: real(0, "ttl", above=0, finite=True, optional=True, what="a finite number of seconds"), "ttl must be None or a finite number of seconds > 0"),
        (lambda: real(float("inf"), "ttl", above=0, finite=True, what="a finite number of seconds"), "ttl must be a finite number of seconds > 0, got inf"),
        (lambda: real(10**400, "absent", finite=True, optional="None (missing)", what="a finite number"), "absent must be None (missing) or a finite number"),
        (lambda: real(2, "decay factor", above=0, high=1, what="a real number"), "decay factor must be a real number in (0, 1], got 2"),
    ],
)
def test_a_refused_value_raises_a_value_error_naming_the_parameter(call, message):
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        call()


def test_an_accepted_value_comes_back_as_given():
    assert integer(np.int64(5), "batch_size", low=1) == 5 and type(integer(np.int64(5), "b")) is np.int64
    assert integer(None, "keep_rows", low=0, optional=True) is None
    assert real(0.25, "epsilon", above=0, below=0.5) == 0.25 and real(None, "alpha", optional=True) is None
    assert real(10**400, "x") == 10**400  # (not finite-checked: a big int is a real number)


@pytest.mark.parametrize(
    "make, name",
    [
        (lambda v: summaries.GKClass(buffer_size=v), "buffer_size"),
        (lambda v: summaries.CPiD(warm_up=v), "warm_up"),
        (lambda v: summaries.Categorical(top_k=v), "top_k"),
        (lambda v: weights.Uniform(batch_size=v), "batch_size"),
        (lambda v: weights.VNS(opti_level=v), "opti_level"),
        (lambda v: WeightedNaiveBayes(history_size=v), "history_size"),
        (lambda v: WeightedNaiveBayes(rebuild_every=v), "rebuild_every"),
        (lambda v: WeightedNaiveBayes(seed=v), "seed"),
        (lambda v: Learner("p", [], batch_size=v), "batch_size"),
        (lambda v: PendingTable(capacity=v), "capacity"),
        (lambda v: DeadLetters(capacity=v), "dead_letter_capacity"),
    ],
)
def test_a_bool_is_no_count_for_any_parameter(make, name):
    """``True`` is an ``int`` to Python: every parameter check refuses it all the same (the
    classifier's ``history_size``, ``rebuild_every`` and ``seed`` and the partition learner's
    ``batch_size`` took it for 1 before they used the shared checks)."""
    with pytest.raises(ValueError, match=f"{name} must be"):
        make(True)
    make(3)  # an integer is fine


def test_no_module_writes_its_own_bool_and_number_check():
    """The pattern the shared checks replace (``isinstance(x, bool) or not isinstance(x, …)``)
    is written nowhere else in the package."""
    pattern = re.compile(r"isinstance\((\w[\w.]*), bool[^)]*\) or not isinstance\(\1,")
    found = [
        f"{path.relative_to(PACKAGE)}:{number}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name != "_checks.py"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert not found, found


@pytest.mark.parametrize("bounds", [dict(low=1), dict(above=0), dict(high=5), dict(below=2), dict(low=0, below="n_variables")])
def test_a_bound_reads_the_same_in_a_message_and_in_a_saved_field(bounds):
    """A parameter's message and a record field's description spell each bound alike."""
    terms = bound_terms(**(dict(low=None, high=None, above=None, below=None) | bounds))
    assert Float(**bounds).text().endswith(f"({', '.join(terms)})")
    if len(bounds) == 1:  # one-sided: the parameter's message says the same words
        with pytest.raises(ValueError, match=re.escape(f"must be {terms[0]}, got")):
            real(-10 if "low" in bounds or "above" in bounds else 10, "count", **bounds)
