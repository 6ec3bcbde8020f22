"""Saved bytes: what a checkout writes for every component and model of the io tests, to compare two.

A change to how records are written (which class writes a field, where its schema lives) must
not change a single byte of a saved file. This script, run on the checkout at ``--root``, saves
every case of ``tests/io/io_cases.py`` (the summaries, sketches, densities and partitions, the
weight learners and the models, each from a fixed seed) and every saved-model fixture under
``tests/io/fixtures`` once loaded, and writes to a JSON file, for each, the SHA-256 of its
gzip file and of its plain JSON, and that of the plain JSON of the object loaded back from
the gzip file (a fixture the checkout refuses is recorded with its error). ``--compare A B``
lists the entries that differ.

Usage (from the repository root)::

    git archive OLD | tar -x -C /tmp/old
    python benchmarks/saved_bytes.py --root /tmp/old --output /tmp/old.json
    python benchmarks/saved_bytes.py --root . --output /tmp/new.json
    python benchmarks/saved_bytes.py --compare /tmp/old.json /tmp/new.json

The cases and fixtures are read from each checkout's own ``tests/io``, so compare checkouts whose
cases are the same (a case only one of them has is listed as missing from the other).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pathlib
import sys


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def run(root: pathlib.Path, output: str) -> None:
    root = root.resolve()
    sys.path[:0] = [str(root), str(root / "tests" / "io"), str(root / "tests")]
    import io_cases

    import wnb_stream
    from wnb_stream import io

    print(f"wnb_stream from {pathlib.Path(wnb_stream.__file__).parent}")
    found: dict[str, object] = {}
    for group in ("summary_cases", "other_cases", "learner_cases", "model_cases"):
        for name, make in getattr(io_cases, group)():
            obj = make()
            packed = io.dumps(obj)
            found[f"{group}/{name}"] = {
                "gzip": _sha(packed),
                "plain": _sha(io.dumps(obj, compress=False)),
                "reloaded": _sha(io.dumps(io.loads(packed), compress=False)),
            }
    for path in sorted((root / "tests" / "io" / "fixtures").rglob("*")):
        if not path.is_file():
            continue
        key = f"fixture/{path.relative_to(root / 'tests' / 'io' / 'fixtures')}"
        try:
            found[key] = {"reloaded": _sha(io.dumps(io.load(path), compress=False))}
        except io.ModelFileError as error:
            found[key] = {"refused": str(error)}
    pathlib.Path(output).write_text(json.dumps(found, indent=1, sort_keys=True))
    print(f"{len(found)} entries written to {output}")


def compare(a: str, b: str) -> int:
    first, second = json.loads(pathlib.Path(a).read_text()), json.loads(pathlib.Path(b).read_text())
    differ = [key for key in first if key in second and first[key] != second[key]]
    for key in differ:
        print(f"differs: {key}: {first[key]} != {second[key]}")
    for key in sorted(set(first) ^ set(second)):
        print(f"only in {a if key in first else b}: {key}")
    print(f"{len(first)} and {len(second)} entries, {len(differ)} differ")
    return 1 if differ else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=".", help="checkout to run")
    parser.add_argument("--output", help="the .json file to write")
    parser.add_argument("--compare", nargs=2, metavar=("A", "B"), help="compare two .json files")
    args = parser.parse_args()
    if args.compare:
        sys.exit(compare(*args.compare))
    if not args.output:
        parser.error("--output is required unless --compare is given")
    run(pathlib.Path(args.root), args.output)


if __name__ == "__main__":
    main()
