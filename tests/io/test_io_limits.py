"""Loading is bounded by the file: forged gzip streams and damaged payloads are refused quickly and
without inflating or parsing them whole (``wnb_stream.io.files``: MAX_SIZE, MAX_RATIO, the
checksum of the stored payload bytes checked before the parse).

Each hostile file is built here, cheaply (a deflate block repeated: the same compressed bytes for
each repetition of the same input), and loaded in a child process that reports the seconds of the
load and the growth of its peak RSS over its resident set before the load (Linux's VmHWM, reset
before the load through /proc/self/clear_refs: ``resource.getrusage``'s ru_maxrss cannot be reset
and a child inherits its parent's across fork and exec). The
bounds are generous (the aim is under a second and under 100 MB; the tests allow 5 s and 200 MB
so that a loaded machine does not make them flaky); before these limits, the same files took
tens of seconds and gigabytes.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import struct
import subprocess
import sys
import zlib

import numpy as np
import pytest

from wnb_stream import io
from wnb_stream.summaries import GKClass

REPO = pathlib.Path(__file__).resolve().parents[2]
HEAD = b'{"format":"wnb_stream.model","version":5,"checksum":"sha256:'
MIB = 1 << 20

CHILD = r"""
import json, sys, time
from wnb_stream import io

def status(field):  # KiB, from /proc (Linux)
    with open("/proc/self/status") as lines:
        return next(int(line.split()[1]) for line in lines if line.startswith(field + ":"))

with open("/proc/self/clear_refs", "w") as refs:
    refs.write("5")  # resets the peak (VmHWM) to the resident set now: the imports' peak is not the load's
before = status("VmRSS")
began = time.perf_counter()
try:
    io.load(sys.argv[1], max_size=int(sys.argv[2]) if len(sys.argv) > 2 else None)
    outcome = "loaded"
except io.ModelFileError as error:
    outcome = str(error)
seconds = time.perf_counter() - began
print(json.dumps({"outcome": outcome, "seconds": seconds, "grown": (status("VmHWM") - before) * 1024}))
"""


@pytest.fixture(autouse=True)
def linux_only():
    if not os.path.exists("/proc/self/clear_refs"):
        pytest.skip("the child reads its peak resident set from /proc (Linux)")


def load_in_a_child(path, max_size: int | None = None) -> dict:
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    argv = [sys.executable, "-c", CHILD, str(path)] + ([] if max_size is None else [str(max_size)])
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def repeated_gzip(head: bytes, block: bytes, repeats: int) -> bytes:
    """A valid gzip file of ``head`` then ``block`` ``repeats`` times: each block is deflated once
    and its compressed bytes repeated (a full flush makes each repetition start afresh)."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = deflate.compress(head) + deflate.flush(zlib.Z_FULL_FLUSH)
    piece = deflate.compress(block) + deflate.flush(zlib.Z_FULL_FLUSH)
    assert deflate.compress(block) + deflate.flush(zlib.Z_FULL_FLUSH) == piece
    last = deflate.flush(zlib.Z_FINISH)
    crc = zlib.crc32(head)
    for _ in range(repeats):
        crc = zlib.crc32(block, crc)
    size = len(head) + len(block) * repeats
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
    return header + first + piece * repeats + last + struct.pack("<II", crc, size & 0xFFFFFFFF)


def envelope(payload: bytes, checksum: str | None = None) -> bytes:
    checksum = checksum or hashlib.sha256(payload).hexdigest()
    return HEAD + checksum.encode() + b'","payload":' + payload + b"}"


def test_a_gzip_bomb_is_refused_by_its_ratio_in_bounded_time_and_memory(tmp_path):
    # 1 GiB of blanks after a valid head, about 1 MB compressed (ratio ~1,000: deflate's limit)
    data = repeated_gzip(HEAD + b"0" * 64 + b'","payload":', b" " * MIB, 1024)
    path = tmp_path / "bomb.json.gz"
    path.write_bytes(data)
    found = load_in_a_child(path)
    assert "MAX_RATIO" in found["outcome"] and "forged gzip stream" in found["outcome"]
    assert found["seconds"] < 5 and found["grown"] < 200 * MIB, found


def test_a_gzip_stream_under_the_ratio_is_refused_at_max_size(tmp_path):
    # about 57 times compressible (under MAX_RATIO), inflating to 128 MiB: refused when it passes
    # the max_size given (64 MiB here; MAX_SIZE by default, which bounds such a file the same way)
    rng = np.random.default_rng(0)
    block = b"".join(rng.bytes(12).hex().encode() + b" " * 1000 for _ in range(1024))  # ~1 MiB
    data = repeated_gzip(HEAD + b"0" * 64 + b'","payload":', block, 128)
    assert 10 < len(block) * 128 / len(data) < io.files.MAX_RATIO
    path = tmp_path / "wide.json.gz"
    path.write_bytes(data)
    found = load_in_a_child(path, max_size=64 * MIB)
    assert f"beyond max_size = {64 * MIB} bytes" in found["outcome"]
    assert found["seconds"] < 5 and found["grown"] < 200 * MIB, found


def test_a_damaged_payload_is_refused_before_it_is_parsed(tmp_path):
    # 40 MB of empty lists (a parse would build 13 million of them): the stored bytes' checksum fails first
    payload = b"[" + b"[]," * (40 * MIB // 3) + b"[]]"
    path = tmp_path / "damaged.json"
    path.write_bytes(envelope(payload, checksum="0" * 64))
    found = load_in_a_child(path)
    assert "checksum mismatch" in found["outcome"]
    assert found["seconds"] < 5 and found["grown"] < 200 * MIB, found


def test_max_size_is_configurable_and_checked():
    gk = GKClass()
    for i in range(2000):
        gk.update(float(i), i % 2)
    data = io.dumps(gk)
    inflated = len(zlib.decompress(data, wbits=31))
    assert io.loads(data, max_size=inflated).table().counts.sum() == 2000
    with pytest.raises(io.ModelFileError, match=f"inflates beyond max_size = {inflated - 1} bytes"):
        io.loads(data, max_size=inflated - 1)
    plain = io.dumps(gk, compress=False)
    with pytest.raises(io.ModelFileError, match=f"document is {len(plain)} bytes, beyond max_size = 100 bytes"):
        io.loads(plain, max_size=100)
    for bad in (0, -1, 1.5, True, "1"):
        with pytest.raises(ValueError, match="max_size must be None or an integer >= 1"):
            io.loads(data, max_size=bad)


def test_a_file_larger_than_max_size_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "big.json"
    with open(path, "wb") as handle:
        handle.truncate(3 * MIB)  # sparse: no disk used
    with pytest.raises(io.ModelFileError, match=f"the file is {3 * MIB} bytes, beyond max_size = {MIB} bytes"):
        io.load(path, max_size=MIB)


def test_a_payload_changed_in_place_fails_before_the_parse_and_the_model_files_still_load():
    gk = GKClass()
    for i in range(100):
        gk.update(float(i), i % 3)
    text = io.dumps(gk, compress=False)
    assert io.files._stored_checksum_matches(text)  # pack writes the payload as the checksum covers it
    changed = text.replace(b'"type":"GKClass"', b'"type":"GKClasz"')
    with pytest.raises(io.ModelFileError, match="checksum mismatch"):
        io.files._stored_checksum_matches(changed)
    # another layout (spaces): checked after the parse, on the canonical text, as before
    document = json.loads(text)
    spaced = json.dumps(document, indent=1).encode()
    assert not io.files._stored_checksum_matches(spaced)
    assert io.loads(spaced).table().counts.sum() == 100
