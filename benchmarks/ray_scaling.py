"""Training on partitions: 1 against 2 learners with either driver, and what a round costs as K and the window grow.

Part 1 (``--part ray``): ``train`` of ``--driver`` (``local``: ``wnb_stream.distributed.local``, one
process per learner; ``ray``: ``wnb_stream.distributed.ray``, on a local Ray cluster of this
machine; ``both``, the default) on one stream split round-robin into L partitions (``--learners``,
default 1 and 2), a round every ``--round`` stream rows (each learner hands over ``round / L``
rows; with ``--round-per-learner`` each learner hands over ``round`` rows, so that a round's
rows grow with L as with ``train``'s own ``round_examples``), the runs of every setting interleaved ``--repeats`` times. The stream is RandomRBF with 5
classes (seeded), in the configurations of ``CONFIGURATIONS`` named by ``--configurations``
(default 0,1): K = 20 learned one example at a time (the consumer loop, whose per-example cost
is dominated by learning and predicting, both in the learners), and K = 100 in mini-batches of
256 (2: K = 1,000, for ``--part pieces``). Reported:
examples/s from the learners' first run to the last round (medians), the ratio to the first
learner count, the coordinator's time per round (absorb and checkpoint: on the critical path of a
round), the time the driver waited for a round's reports, the coordinator's share of the wall
time, the bytes shipped per round (the reports' pickles), and the prequential accuracy of the
published predictors.

``--part pieces``: one round's pieces (a learner's run, the absorb of 4 deltas split into the
summaries' merges, level 2's rebuild and the weights, the checkpoint) for learners reading each
of ``--sizes`` rows. ``--part checkpoint``: the coordinator's time on a round's critical path
with the checkpoint written before the round returns or in the background.

Part 2 (``--part rounds``): in one process, for K numeric features and deltas of n rows (a
learner of P partitions ships at most ⌈5,000 / P⌉: 50 rows at P = 100), into a model that has
seen 5,000 rows: the bytes of one delta, and the time of one round absorbing 1 or 4 such deltas
(median of 3), from which ``docs/guides/scaling-out.md`` projects the cost of a round at 100
partitions.

Usage (from the repository root; ``pip install -e ".[ray]"`` for the Ray driver)::

    python benchmarks/ray_scaling.py                       # both parts, both drivers
    python benchmarks/ray_scaling.py --part ray --driver local --rows 200000 --round 40000 --repeats 3
    python benchmarks/ray_scaling.py --part ray --driver local --learners 1,2,4,8,16 --round 10000 --round-per-learner
    python benchmarks/ray_scaling.py --part ray --weights both   # the weights stepped in the round or in the background
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time

import common  # noqa: F401  (puts the checkout on sys.path)
import numpy as np
from river.datasets import synth

from wnb_stream import WeightedNaiveBayes
from wnb_stream.distributed import IterableSource


def rbf(n: int, features: int, seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    stream = synth.RandomRBF(seed_model=seed, seed_sample=seed, n_classes=5, n_features=features).take(n)
    X, y = [], []
    for x, label in stream:
        X.append(list(x.values()))
        y.append(int(label))
    return np.array(X), np.array(y)


def rows_of(X: np.ndarray, y: np.ndarray):
    names = [f"x{i}" for i in range(X.shape[1])]
    for row, label in zip(X.tolist(), y.tolist()):
        yield {"x": dict(zip(names, row)), "y": label}


def sources(X: np.ndarray, y: np.ndarray, learners: int) -> dict:
    return {p: functools.partial(IterableSource, functools.partial(rows_of, X[p::learners], y[p::learners])) for p in range(learners)}


#: (name, features, learner batch size): one example at a time (the consumer loop: per-example
#: cost dominated by learning and predicting), and mini-batches of 256 (cheaper per example, so the
#: coordinator's fixed cost per round weighs more).
CONFIGURATIONS = (("one example at a time", 20, 1), ("mini-batches of 256", 100, 256), ("mini-batches of 256", 1000, 256))


def train_with(driver: str):
    """The ``train`` of ``driver``: ``"ray"`` (a local Ray cluster, started once) or ``"local"``
    (one process per learner, ``wnb_stream.distributed.local``)."""
    if driver == "local":
        from wnb_stream.distributed import local

        return local.train
    import ray

    from wnb_stream.distributed import ray as wnb_ray

    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    return wnb_ray.train


def per_learner(args, learners: int) -> int:
    """Rows each learner reads per round: ``--round`` itself with ``--round-per-learner`` (a
    round's rows grow with the learners, as with ``train``'s own ``round_examples``), else its
    share of ``--round`` stream rows."""
    return args.round if args.round_per_learner else args.round // learners


def part_ray(args) -> None:
    drivers = ("local", "ray") if args.driver == "both" else (args.driver,)
    if args.weights != "round":  # (each driver run both ways when "both": "local" and "local+bg")
        drivers = tuple(d + "+bg" for d in drivers) if args.weights == "background" else tuple(x for d in drivers for x in (d, d + "+bg"))
    counts = [int(n) for n in args.learners.split(",")]
    trains = {driver: train_with(driver.removesuffix("+bg")) for driver in drivers}
    rows = []
    for name, features, batch in [CONFIGURATIONS[int(i)] for i in args.configurations.split(",")]:
        X, y = rbf(args.rows, features)
        runs: dict = {(d, L): [] for d in drivers for L in counts}
        for _ in range(args.repeats):
            for driver in drivers:
                for learners in counts:
                    tree = {}  # the reports merged in a tree before the round: helper processes (local) or Ray tasks
                    if args.merge_workers:
                        tree = {"merge_tree": True} if driver.startswith("ray") else {"merge_workers": args.merge_workers}
                    model, progress = trains[driver](WeightedNaiveBayes(seed=1), sources(X, y, learners), batch_size=batch,
                                                     round_examples=per_learner(args, learners), measure_bytes=True,
                                                     background_weights=driver.endswith("+bg"), **tree)  # fmt: skip
                    assert progress.examples == args.rows
                    runs[driver, learners].append(progress)
                    trees = f", tree {statistics.median(progress.tree_seconds):.2f} s/round" if getattr(progress, "tree_seconds", None) else ""
                    print(f"  {name}, K = {features}, {driver}, L = {learners}: {progress.examples_per_second:,.0f} ex/s, "
                          f"{progress.rounds} rounds, {progress.seconds:.1f} s{trees}", flush=True)  # fmt: skip
        for driver in drivers:
            speed = {L: statistics.median(p.examples_per_second for p in runs[driver, L]) for L in counts}
            for L in counts:
                done = runs[driver, L]
                rounds = [s for p in done for s in p.round_seconds[:-1]]  # (the last round absorbs empty reports)
                waits = [s for p in done for s in p.wait_seconds[1:-1]]  # (the first waits for the first run)
                shipped = [b for p in done for b in p.shipped_bytes[:-1]]
                share = statistics.median(sum(p.round_seconds) / p.seconds for p in done)
                busy = statistics.median(p.learner_seconds / (L * p.seconds) for p in done)  # (1: a learner never waits)
                accuracy = statistics.median(p.accuracy for p in done)
                rows.append(f"| {name}, K = {features} | {driver} | {L} | {speed[L]:,.0f} | {speed[L] / speed[counts[0]]:.2f}x | "
                            f"{speed[L] / speed[counts[0]] * counts[0] / L:.2f} | "
                            f"{statistics.median(rounds):.2f} | {statistics.median(waits) if waits else 0:.2f} | {share:.0%} | {busy:.0%} | "
                            f"{statistics.median(shipped) / 1e6:.2f} | {accuracy:.4f} |")  # fmt: skip
    import os

    tree = f"; reports merged in a tree first (--merge-workers {args.merge_workers}: not in the coordinator's s/round)" if args.merge_workers else ""
    print(f"\n{os.cpu_count()} logical CPUs; learners in processes beside the coordinator's{tree}")
    every = f"every {args.round:,} rows of each learner" if args.round_per_learner else f"every {args.round:,} rows"
    print(f"\nRandomRBF (5 classes, seeded), {args.rows:,} rows, a round {every}, median of {args.repeats}:\n")
    print(f"| stream | driver | learners | examples/s | vs {counts[0]} learner(s) | efficiency | coordinator s/round | wait s/round | coordinator share | learners busy | MB shipped/round | prequential accuracy |")  # fmt: skip
    print("|:---|:---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    print("\n".join(rows))


def part_rounds(args) -> None:
    print("| K | rows per delta | MB per delta | round, 1 delta (s) | round, 4 deltas (s) | per extra delta (s) |")
    print("|---:|---:|---:|---:|---:|---:|")
    for features in (10, 100, 1000):
        for n in (50, 1000, 5000):
            X, y = rbf(5000 + 4 * n, features)
            base = WeightedNaiveBayes(seed=1)
            first = base.delta()
            first.learn_many(X[:5000], y[:5000])
            base.absorb([first])  # a model that has seen one round of 5,000 rows
            deltas = []
            for p in range(4):
                d = base.delta()
                d.learn_many(X[5000 + p * n : 5000 + (p + 1) * n], y[5000 + p * n : 5000 + (p + 1) * n])
                d.flush()
                deltas.append(d)
            times = {}
            for count in (1, 4):
                samples = []
                for _ in range(3):
                    model = WeightedNaiveBayes.from_dict(base.to_dict())
                    start = time.perf_counter()
                    model.absorb(deltas[:count])
                    samples.append(time.perf_counter() - start)
                times[count] = statistics.median(samples)
            print(f"| {features:,} | {n:,} | {deltas[0].nbytes() / 1e6:.2f} | {times[1]:.2f} | {times[4]:.2f} | "
                  f"{(times[4] - times[1]) / 3:.3f} |", flush=True)  # fmt: skip


def part_pieces(args) -> None:
    """One round's pieces against the rows per delta: does anything grow with the rows of a round?"""
    import tempfile

    from wnb_stream.distributed.partitioned import Coordinator, Learner
    from wnb_stream.engine.core import Engine

    spent: dict = {}

    def timed(name):  # (wraps an Engine step to add up its time: the pieces of one absorb)
        step = getattr(Engine, name)

        def wrapper(self, *a, **kw):
            start = time.perf_counter()
            try:
                return step(self, *a, **kw)
            finally:
                spent[name] = spent.get(name, 0.0) + time.perf_counter() - start

        setattr(Engine, name, wrapper)

    for name in ("restart", "_rebuild_due", "step_if_due"):
        timed(name)
    print("| stream | rows read per learner | rows shipped per delta | learner run (s) | absorb 4 deltas (s) | of which merge | "
          "level-2 rebuild | weights | checkpoint (s) | MB per delta |")  # fmt: skip
    print("|:---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    sizes = tuple(int(n) for n in args.sizes.split(","))
    for name, features, batch in [CONFIGURATIONS[int(i)] for i in args.configurations.split(",")]:
        X, y = rbf(5000 + 4 * max(sizes), features)
        for keep in (1250, None) if max(sizes) > 1250 else (1250,):  # a learner of 4 partitions ships its share of the window, or every row it holds
            for warm_up, n in ((True, sizes[0]), *((False, n) for n in sizes)):  # (a first run warms the kernels up)
                base = WeightedNaiveBayes(seed=1)
                first = base.delta()
                first.learn_many(X[:5000], y[:5000])
                base.absorb([first])
                predictor, reports = base.predictor(), []
                start = time.perf_counter()
                for p in range(4):
                    rows = slice(5000 + p * n, 5000 + (p + 1) * n)
                    learner = Learner(p, IterableSource(functools.partial(rows_of, X[rows], y[rows])), batch_size=batch, keep_rows=keep)
                    learner.reset(None, base.delta(), predictor)
                    reports.append(learner.run(max_messages=n))
                learning = (time.perf_counter() - start) / 4
                samples = []
                for _ in range(3):
                    model = WeightedNaiveBayes.from_dict(base.to_dict())
                    spent.clear()
                    start = time.perf_counter()
                    model.absorb([r.delta for r in reports])
                    absorb = time.perf_counter() - start
                    with tempfile.TemporaryDirectory() as folder:
                        coordinator = Coordinator(model, f"{folder}/checkpoint.json.gz")
                        start = time.perf_counter()
                        coordinator.checkpoint()
                        saving = time.perf_counter() - start
                    samples.append((absorb, absorb - spent["restart"], spent["_rebuild_due"], spent["step_if_due"], saving))
                if warm_up:
                    continue
                m = [statistics.median(s[i] for s in samples) for i in range(5)]
                print(f"| {name}, K = {features} | {n:,} | {reports[0].delta.n_rows:,} | {learning:.2f} | {m[0]:.3f} | {m[1]:.3f} | "
                      f"{m[2]:.3f} | {m[3]:.3f} | {m[4]:.3f} | {reports[0].delta.nbytes() / 1e6:.2f} |", flush=True)  # fmt: skip


def part_checkpoint(args) -> None:
    """The coordinator's time on a round's critical path, its checkpoint written before ``round``
    returns or in the background while the learners read (a pause of ``--pause`` seconds stands
    for their run): the round's own time, and the wait for the previous checkpoint."""
    import tempfile

    from wnb_stream.distributed.partitioned import Coordinator, Learner

    print("| stream | checkpoint | round (s) | wait for the previous checkpoint (s) | on the critical path (s) |")
    print("|:---|:---|---:|---:|---:|")
    for name, features, batch in [CONFIGURATIONS[int(i)] for i in args.configurations.split(",")]:
        n = args.round // 4
        X, y = rbf(7 * 4 * n, features)
        runs: dict = {False: [], True: []}
        for _ in range(args.repeats):
            for background in (False, True):
                with tempfile.TemporaryDirectory() as folder:
                    coordinator = Coordinator(WeightedNaiveBayes(seed=1), f"{folder}/checkpoint.json.gz", background=background)
                    learners = [Learner(p, IterableSource(functools.partial(rows_of, X[p::4], y[p::4])), batch_size=batch, keep_rows=1250) for p in range(4)]
                    for learner in learners:
                        learner.reset(None, coordinator.model.delta())
                    for r in range(7):
                        reports = [learner.run(max_messages=n) for learner in learners]
                        time.sleep(args.pause)  # (the learners' run, during which a background checkpoint is written)
                        start = time.perf_counter()
                        coordinator.settle()
                        waited = time.perf_counter() - start
                        start = time.perf_counter()
                        predictor = coordinator.round(reports)
                        spent = time.perf_counter() - start
                        for learner in learners:
                            learner.publish(predictor)
                        if r:  # (the first round absorbs into an empty model)
                            runs[background].append((spent, waited))
                    coordinator.settle()
        for background in (False, True):
            spent, waited = (statistics.median(x[i] for x in runs[background]) for i in (0, 1))
            print(f"| {name}, K = {features} | {'in the background' if background else 'before round returns'} | "
                  f"{spent:.3f} | {waited:.3f} | {spent + waited:.3f} |", flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=("ray", "rounds", "pieces", "checkpoint", "both"), default="both")
    parser.add_argument("--sizes", default="3000,10000,20000", help="rows each learner reads (--part pieces)")
    parser.add_argument("--pause", type=float, default=2.0, help="seconds standing for the learners' run (--part checkpoint)")
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--round", type=int, default=40_000, help="stream rows per round")
    parser.add_argument("--round-per-learner", action="store_true", help="--round counts each learner's rows, not the stream's (part 1)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--driver", choices=("local", "ray", "both"), default="both", help="which train runs the learners (part 1)")
    parser.add_argument("--learners", default="1,2", help="learner counts to compare, comma-separated (part 1)")
    parser.add_argument("--configurations", default="0,1", help="indices of CONFIGURATIONS to run (part 1)")
    parser.add_argument("--merge-workers", type=int, default=0,
                        help="merge each round's reports in a tree first: local.train's merge_workers, Ray's merge_tree (part 1; 0: none)")  # fmt: skip
    parser.add_argument("--weights", choices=("round", "background", "both"), default="round",
                        help="the weights stepped in the round, or in the coordinator's thread (background_weights), or both, interleaved (part 1)")  # fmt: skip
    args = parser.parse_args()
    if args.part in ("ray", "both"):
        part_ray(args)
    if args.part in ("rounds", "both"):
        part_rounds(args)
    if args.part == "pieces":
        part_pieces(args)
    if args.part == "checkpoint":
        part_checkpoint(args)


if __name__ == "__main__":
    main()
