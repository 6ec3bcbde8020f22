"""Train one model on two partitions of a stream with Ray, on a local cluster of this machine."""

import functools
import itertools

from river import datasets

from wnb_stream import WeightedNaiveBayes
from wnb_stream.distributed import IterableSource
from wnb_stream.distributed import ray as wnb_ray


def partition(p: int, n: int):
    """Every n-th example of River's bundled Phishing stream, from the p-th: {"x": ..., "y": ...}."""
    for x, y in itertools.islice(datasets.Phishing(), p, None, n):
        yield {"x": x, "y": y}


if __name__ == "__main__":
    sources = {p: functools.partial(IterableSource, functools.partial(partition, p, 2)) for p in range(2)}
    model, progress = wnb_ray.train(WeightedNaiveBayes(seed=1), sources, round_examples=200,
                                    checkpoint_path="phishing-rounds.json.gz")
    if progress.examples:
        print(f"{progress.examples} examples in {progress.rounds} rounds, "
              f"prequential accuracy {progress.accuracy:.3f}")
    else:  # run again: resumed from the checkpoint, every example was already learned
        print(f"nothing new to read: phishing-rounds.json.gz holds the model of all {model.n_seen} examples "
              f"(delete it to train again)")
    predictor = model.predictor()  # what serving needs: the model's probabilities, a fraction of its memory
    x, y = next(iter(datasets.Phishing()))
    print(predictor.predict_one(x) == model.predict_one(x))
