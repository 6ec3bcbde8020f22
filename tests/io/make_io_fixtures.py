"""Write the saved-model fixtures of the current format version (run from the repository root).

    PYTHONPATH=$PWD python tests/io/make_io_fixtures.py

Each case of ``io_cases`` is saved to ``tests/io/fixtures/v<VERSION>/<case>.json.gz`` and its
observable facts (``facts``) go to ``facts.json`` next to them. The files of a version are
written once, when that version is released, and never rewritten: ``test_io_fixtures.py``
checks that every later version still loads them to the same facts.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import sys

import numpy as np

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE))

from io_cases import PROBES, learner_cases, model_cases, other_cases, summary_cases  # noqa: E402

from wnb_stream import io  # noqa: E402


def facts(obj) -> dict:
    """What a loaded object must still answer, whatever version wrote it (rounded to 9 digits)."""
    out = {"type": type(obj).__name__}
    if hasattr(obj, "predict_proba_one"):  # a whole model
        out["classes"] = [repr(c) for c in obj.classes]
        out["weights"] = {repr(k): round(w, 9) for k, w in obj.weights.items()}
        out["probabilities"] = [{repr(c): round(p, 9) for c, p in obj.predict_proba_one(x).items()} for x in PROBES]
    elif hasattr(obj, "table") and hasattr(obj, "update"):  # a summary
        table = obj.table()
        out["n"] = round(float(obj.n), 9)
        out["classes"] = [repr(c) for c in obj.classes]
        out["values"] = [repr(v) for v in getattr(table, "values", ())]
        out["table"] = {
            field.name: np.round(np.asarray(getattr(table, field.name), dtype=float), 9).tolist()
            for field in dataclasses.fields(table)
            if field.name not in ("classes", "values")
        }
    elif hasattr(obj, "part_index"):
        out["n_parts"] = int(obj.n_parts)
        out["log_prob"] = np.round(obj.log_prob, 9).tolist()
    elif hasattr(obj, "log_likelihood_one"):
        out["log_likelihood"] = np.round(obj.log_likelihood([-1.0, 0.0, 2.5, None]), 9).tolist()
    elif hasattr(obj, "coefficients"):
        coefficients, offsets = obj.coefficients(6, 2)
        out["coefficients"] = np.round(coefficients, 9).tolist()
        out["offsets"] = np.round(offsets, 9).tolist()
    elif hasattr(obj, "labels"):
        out["labels"] = [repr(c) for c in obj.labels]
    elif hasattr(obj, "estimate"):
        out["table"] = np.round(obj.counts.sum(axis=1), 9).tolist()
    else:
        out["items"] = [[repr(v), round(s.count, 9), round(s.error, 9)] for v, s in obj.items()]
    return out


def main() -> None:
    directory = HERE / "fixtures" / f"v{io.VERSION}"
    directory.mkdir(parents=True, exist_ok=True)
    manifest = {}
    for name, make in summary_cases() + other_cases() + learner_cases() + model_cases():
        obj = make()
        (directory / f"{name}.json.gz").write_bytes(io.dumps(obj))
        manifest[name] = facts(io.loads(io.dumps(obj)))
    (directory / "facts.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(manifest)} fixtures to {directory}")


if __name__ == "__main__":
    main()
