"""Where the time of one model goes: classifier sections and the compiled work they must do.

Runs one model on one of ``throughput.py``'s streams (same generator, seed, warm-up and loops) and
times, with wrappers around the functions:

- the classifier's sections: the public calls, and the engine's parts (level-2 rebuilds, learner
  steps, feeding the numeric summaries, encoding and re-encoding the history, parsing, compiling
  and scoring with the lookups, ...); nested sections overlap (``Engine._rebuild`` contains
  ``Variable.rebuild_many`` and part of ``Registry.feed``);
- the *floor*: the compiled kernels and NumPy products the unchanged model must run whatever the
  Python around them costs (GK block absorb and the ``argsort`` before it, the MODL search, the
  criterion's products and log-normaliser on the learners' window and batches).

The process-wide lΓ table is grown before the clock to the size the stream needs (in
``throughput.py`` the first model to need it pays it, once). The wrappers add about a microsecond
per call, so the total is a little above ``throughput.py``'s figure for the same model.

Usage (from the repository root)::

    python benchmarks/cost_breakdown.py --stream k500 --n 40000
    python benchmarks/cost_breakdown.py --stream rbf20 --n 100000 --path one --model nb
"""

from __future__ import annotations

import argparse
import collections
import itertools
import time

import common  # noqa: F401  (puts the checkout on sys.path)
import throughput

#: (module path, attribute, label) of the compiled or NumPy work timed as the floor
FLOOR = (
    ("wnb_stream.summaries._gk_kernels", "absorb", "GK block absorb (compiled)"),
    ("numpy", "argsort", "np.argsort (all callers)"),
    ("wnb_stream.modl._kernels", "search", "MODL search (compiled)"),
    ("wnb_stream.modl.batch", "_discretize_together", "MODL searches of a group (compiled, with its NumPy passes)"),
    ("wnb_stream.weights.criterion", "scores", "criterion products (matmul)"),
    ("wnb_stream.weights.criterion", "_log_normaliser", "criterion log-normaliser"),
)
#: (module path, class, methods) timed as sections
SECTIONS = (
    ("wnb_stream.classifier", "WeightedNaiveBayes", ("learn_many", "predict_proba_many", "learn_one", "predict_proba_one")),
    ("wnb_stream.engine.core", "Engine", ("_rebuild", "_step", "_store", "_register", "_encode_newest", "_encode_chunk",
                                          "_reencode_numeric", "_compile", "refresh", "_check_point")),
    ("wnb_stream.engine.registry", "Registry", ("feed", "make_room")),
    ("wnb_stream.engine.rows", "RowParser", ("row", "frame")),
    ("wnb_stream.engine.lookup", "Lookup", ("scores_one", "scores_frame", "encode_block")),
    ("wnb_stream.engine.variable", "Variable", ("rebuild", "rebuild_many")),
)  # fmt: skip


def _wrap(owner, attribute: str, label: str, seconds: collections.Counter, calls: collections.Counter) -> None:
    static = isinstance(vars(owner).get(attribute), staticmethod) if isinstance(owner, type) else False
    function = getattr(owner, attribute)

    def timed(*args, **kwargs):
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            seconds[label] += time.perf_counter() - start
            calls[label] += 1

    setattr(owner, attribute, staticmethod(timed) if static else timed)


def main(argv=None) -> int:
    import importlib

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stream", default="k500", choices=list(throughput.STREAMS))
    parser.add_argument("--n", type=int, default=40_000, help="examples")
    parser.add_argument("--model", default="vns", choices=list(throughput.OURS))
    parser.add_argument("--path", default="many", choices=("one", "many"))
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args(argv)

    from wnb_stream.modl import costs

    rows = list(itertools.islice(throughput.generator(args.stream, args.seed), args.n))
    batches = throughput.frames(rows, args.batch)
    warm = list(itertools.islice(throughput.generator(args.stream, args.seed + 1), 2000))
    model = throughput.make(args.model, args.seed + 1)
    throughput.run_many(model, throughput.frames(warm, args.batch))
    throughput.run_one(throughput.make(args.model, args.seed + 1), warm)
    costs._grow_table(2 * args.n + 1024)  # the one-off lΓ table (see the docstring)

    seconds, calls = collections.Counter(), collections.Counter()
    for module, owner, methods in SECTIONS:
        cls = getattr(importlib.import_module(module), owner)
        for name in methods:
            _wrap(cls, name, f"{owner}.{name}", seconds, calls)
    for module, attribute, label in FLOOR:
        _wrap(importlib.import_module(module), attribute, label, seconds, calls)

    model = throughput.make(args.model, args.seed)
    if args.path == "many":
        total = throughput.run_many(model, batches)
    else:
        total = throughput.run_one(model, rows)
    print(f"# {args.model}, {args.path}, {args.stream}, {args.n:,} examples: {total:.3f} s, {args.n / total:,.0f} examples/s")
    print("\n| section | seconds | calls | µs / call |\n|:---|---:|---:|---:|")
    floor_labels = [label for _, _, label in FLOOR]
    for label, spent in sorted(seconds.items(), key=lambda item: -item[1]):
        if label not in floor_labels and calls[label]:
            print(f"| {label} | {spent:.3f} | {calls[label]:,} | {1e6 * spent / calls[label]:,.1f} |")
    print("\n| floor (compiled or NumPy work) | seconds | calls | µs / call |\n|:---|---:|---:|---:|")
    for label in floor_labels:
        if calls[label]:
            print(f"| {label} | {seconds[label]:.3f} | {calls[label]:,} | {1e6 * seconds[label] / calls[label]:,.1f} |")
    floor = sum(seconds[label] for label in floor_labels)
    print(f"\nfloor total: {floor:.3f} s ({args.n / floor:,.0f} examples/s if nothing else ran)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
