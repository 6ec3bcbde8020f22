"""Speed of the level-3 weight learners, and fixed versus adaptive rate for ``Graphical``.

Usage::

    python benchmarks/bench_weights.py [--history N] [--batch L] [--variables 10,100,1000]
                                       [--classes 2,10] [--repeat R] [--stream S] [--out PATH]

Speed (arrays only, no summaries): for every K in ``--variables`` and J in ``--classes``, on a
history window of N rows (default 10^4 = 10·L: HBL17 gives no stream default for the depth, its
experiments judge on the whole training set and retain L = 1000 ≪ N) and a batch of L = 1000
rows, the best of R runs of

- one criterion evaluation ``CR(w)`` on the window (``criterion.criterion``), and its score
  contraction alone, ``criterion.scores`` (a broadcast matmul) next to the same contraction
  written ``np.einsum("nkj,k->nj")`` (the ratio backs the choice of matmul), and the log-sum-exp
  over classes a column at a time (``criterion._log_normaliser``) next to NumPy axis reductions;
- one PGDMB step (``PGDMB.learn``: batch gradient + two points judged on the window) and one VNS
  step;
- ``Graphical`` per-example SGD, fixed rate and Adam, in examples per second.

Quality: a synthetic stream of ``--stream`` rows (default 20,000; 5 informative variables with
under-confident ℓ, 3 of them duplicated, 10 noise variables, 3 classes) learned prequentially
(predict, then learn) by ``Graphical`` with the fixed SLH15 rate 1e-4, a fixed 1e-3, Adam 1e-3
and Adam 1e-4, next to plain NB (``Uniform``) and PGDMB (L = 1000, N = 10^4) on the same rows:
prequential log loss, and log loss on 10,000 held-out rows at the end.

Results go to ``benchmarks/results/weights.csv`` with the date, git commit and machine.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from common import RESULTS, ResultFile, fmt, markdown, provenance  # noqa: E402

from wnb_stream.weights import PGDMB, VNS, Batch, Context, Graphical, Uniform  # noqa: E402
from wnb_stream.weights.criterion import _log_normaliser, criterion, log_softmax, scores  # noqa: E402
from wnb_stream.weights.regularizers import Regularizer  # noqa: E402


def best_time(function, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def random_rows(rng: np.random.Generator, n: int, k: int, j: int) -> Batch:
    """Timing data: ℓ = −Exp(1) (log-probabilities), random labels; (n, K, J)."""
    log_lik = -rng.standard_exponential((n, k, j))
    return Batch(log_lik, rng.integers(0, j, n), np.ones(n), np.full(j, -np.log(j)))


def einsum_scores(log_lik, log_prior, weights) -> np.ndarray:
    """The reference for ``criterion.scores``: the same contraction with einsum; (n, J)."""
    return log_prior + np.einsum("nkj,k->nj", log_lik, weights)


def axis_log_normaliser(values: np.ndarray) -> np.ndarray:
    """The reference for ``criterion._log_normaliser``: the max-shifted LSE by axis reductions."""
    top = values.max(axis=-1, keepdims=True)
    return (top + np.log(np.exp(values - top).sum(axis=-1, keepdims=True)))[..., 0]


def speed(args, out: ResultFile) -> list[list]:
    table = []
    rng = np.random.default_rng(42)
    for k in args.variables:
        for j in args.classes:
            history = random_rows(rng, args.history, k, j)  # (N, K, J)
            batch = Batch(history.log_lik[-args.batch :], history.y[-args.batch :], history.sample_weight[-args.batch :], history.log_prior)
            context = Context(np.full(k, np.log(k) + 1.0), np.ones(k, bool))
            regularizer = Regularizer("r2")
            w = rng.uniform(0, 1, k)
            t_criterion = best_time(lambda: criterion(w, history, context.prior_costs, regularizer), args.repeat)
            t_matmul = best_time(lambda: scores(history.log_lik, history.log_prior, w), args.repeat)
            t_einsum = best_time(lambda: einsum_scores(history.log_lik, history.log_prior, w), args.repeat)
            assert np.allclose(scores(history.log_lik, history.log_prior, w), einsum_scores(history.log_lik, history.log_prior, w))
            timings = {"criterion": t_criterion, "scores_matmul": t_matmul, "scores_einsum": t_einsum}
            s = scores(history.log_lik, history.log_prior, w)  # (N, J)
            timings["lse_columns"] = best_time(lambda: _log_normaliser(s), args.repeat)
            timings["lse_axis"] = best_time(lambda: axis_log_normaliser(s), args.repeat)
            assert np.allclose(_log_normaliser(s), axis_log_normaliser(s))
            for name, cls in (("pgdmb_step", PGDMB), ("vns_step", VNS)):
                model = cls(batch_size=args.batch)
                model.reset(k, j, seed=0)
                model.learn(batch, history, context)  # warm-up (first step)
                timings[name] = best_time(lambda: model.learn(batch, history, context), args.repeat)
            graphical_rows = max(200, min(5000, 2_000_000 // (k * j)))
            sgd = Batch(history.log_lik[:graphical_rows], history.y[:graphical_rows], history.sample_weight[:graphical_rows], history.log_prior)
            for name, params in (("graphical_sgd", {}), ("graphical_adam", {"adaptive": True})):
                model = Graphical(**params)
                model.reset(k, j)
                seconds = best_time(lambda: model.learn(sgd), args.repeat)
                timings[name] = graphical_rows / seconds  # examples per second
            for name, value in timings.items():
                unit = "examples/s" if name.startswith("graphical") else "ms"
                shown = value if unit == "examples/s" else value * 1e3
                ratio = None
                if name == "scores_matmul":
                    ratio = t_einsum / t_matmul
                elif name == "lse_columns":
                    ratio = timings["lse_axis"] / timings["lse_columns"]
                out.add({"section": "speed", "name": name, "K": k, "J": j, "L": args.batch, "N": args.history, "value": shown, "unit": unit, "reference_over_ours": ratio})
            table.append(
                [
                    f"K={k}, J={j}",
                    fmt(t_criterion * 1e3, 2),
                    fmt(t_matmul * 1e3, 2),
                    fmt(t_einsum * 1e3, 2),
                    fmt(t_einsum / t_matmul, 2),
                    fmt(timings["lse_axis"] / timings["lse_columns"], 2),
                    fmt(timings["pgdmb_step"] * 1e3, 2),
                    fmt(timings["vns_step"] * 1e3, 2),
                    fmt(timings["graphical_sgd"], 0),
                    fmt(timings["graphical_adam"], 0),
                ]
            )
            print(table[-1], flush=True)
    return table


def quality_stream(rng: np.random.Generator, n: int, n_classes: int = 3) -> Batch:
    """5 informative variables (true class with prob. 0.8, ℓ says 0.6: under-confident), the first
    3 duplicated, 10 noise variables (ℓ = log Dirichlet(1)); (n, 18, J)."""
    j = n_classes
    y = rng.integers(0, j, n)
    hit = rng.random((n, 5)) < 0.8
    pointed = np.where(hit, y[:, None], (y[:, None] + rng.integers(1, j, (n, 5))) % j)
    informative = np.where(pointed[:, :, None] == np.arange(j), np.log(0.6), np.log(0.4 / (j - 1)))
    noise = np.log(rng.dirichlet(np.ones(j), size=(n, 10)))
    log_lik = np.concatenate([informative, informative[:, :3], noise], axis=1)
    return Batch(log_lik, y, np.ones(n), np.full(j, -np.log(j)))


def mean_log_loss(scores: np.ndarray, y: np.ndarray) -> float:
    log_p = log_softmax(scores)
    return float(-np.mean(np.maximum(log_p[np.arange(len(y)), y], np.log(1e-15))))


def quality(args, out: ResultFile) -> list[list]:
    rng = np.random.default_rng(7)
    stream = quality_stream(rng, args.stream)
    test = quality_stream(rng, 10_000)
    k, j = stream.log_lik.shape[1:]
    context = Context(np.full(k, np.log(k) + 1.0), np.ones(k, bool))
    models = {
        "uniform (plain NB)": Uniform(),
        "graphical fixed 1e-4 (SLH15)": Graphical(),
        "graphical fixed 1e-3": Graphical(learning_rate=1e-3),
        "graphical adam 1e-3 (adaptive default)": Graphical(adaptive=True),
        "graphical adam 1e-4": Graphical(adaptive=True, learning_rate=1e-4),
        "pgdmb L=1000 N=10^4": PGDMB(),
    }
    table = []
    for name, model in models.items():
        model.reset(k, j, seed=0)
        losses = np.empty(args.stream)
        start = time.perf_counter()
        if isinstance(model, PGDMB):  # mini-batches of L, judged on the last N rows
            size = model.batch_size
            for lo in range(0, args.stream, size):
                rows = slice(lo, lo + size)
                log_p = log_softmax(model.scores(stream.log_lik[rows], stream.log_prior))
                losses[rows] = -np.maximum(log_p[np.arange(len(log_p)), stream.y[rows]], np.log(1e-15))
                window = slice(max(0, lo + size - args.history), lo + size)
                model.learn(
                    Batch(stream.log_lik[rows], stream.y[rows], stream.sample_weight[rows], stream.log_prior),
                    Batch(stream.log_lik[window], stream.y[window], stream.sample_weight[window], stream.log_prior),
                    context,
                )
        else:  # per example: predict, then learn
            for i in range(args.stream):
                row = Batch(stream.log_lik[i : i + 1], stream.y[i : i + 1], stream.sample_weight[i : i + 1], stream.log_prior)
                losses[i] = mean_log_loss(model.scores(row.log_lik, row.log_prior), row.y)
                model.learn(row, None, context)
        seconds = time.perf_counter() - start
        prequential = float(losses.mean())
        held_out = mean_log_loss(model.scores(test.log_lik, test.log_prior), test.y)
        last = float(losses[-2000:].mean())
        out.add({"section": "quality", "name": name, "K": k, "J": j, "N": args.stream, "value": prequential, "unit": "prequential log loss"})
        out.add({"section": "quality", "name": name, "K": k, "J": j, "N": args.stream, "value": last, "unit": "prequential log loss, last 2000"})
        out.add({"section": "quality", "name": name, "K": k, "J": j, "N": args.stream, "value": held_out, "unit": "held-out log loss"})
        table.append([name, fmt(prequential, 4), fmt(last, 4), fmt(held_out, 4), fmt(seconds, 1)])
        print(table[-1], flush=True)
    return table


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--history", type=int, default=10_000, help="history depth N (rows)")
    parser.add_argument("--batch", type=int, default=1000, help="batch size L")
    parser.add_argument("--variables", default="10,100,1000", help="values of K")
    parser.add_argument("--classes", default="2,10", help="values of J")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--stream", type=int, default=20_000, help="rows of the quality stream")
    parser.add_argument("--out", default=str(RESULTS / "weights.csv"))
    args = parser.parse_args(argv)
    args.variables = [int(v) for v in args.variables.split(",")]
    args.classes = [int(v) for v in args.classes.split(",")]
    meta = provenance()
    print(f"commit {meta['commit']}, {meta['date']}, {meta['machine']}")
    out = ResultFile(args.out, meta)
    speed_table = speed(args, out)
    print()
    print(f"Speed, L = {args.batch}, N = {args.history} (times: best of {args.repeat})")
    print(
        markdown(
            speed_table,
            ["shape", "criterion ms", "scores (matmul) ms", "scores (einsum) ms", "einsum/matmul", "LSE axis/columns", "PGDMB step ms", "VNS step ms", "Graphical SGD ex/s", "Graphical Adam ex/s"],
        )
    )
    quality_table = quality(args, out)
    print()
    print(f"Graphical: fixed vs adaptive rate, synthetic stream of {args.stream} rows (K = 18, J = 3)")
    print(markdown(quality_table, ["model", "prequential log loss", "last 2000", "held-out log loss", "seconds"]))
    print(f"\nwrote {out.path}")


if __name__ == "__main__":
    main()
