"""``wnb-stream`` run as a user runs it: ``python -m wnb_stream`` in a subprocess (issue 17).

Each test is one thing a new user hits: CSV columns whose kind flips on a stray token, a bad
value late in a file, other River models with parameters, examples/s that depend on the order of
the models, rolling curves, drifting streams, and what ``datasets`` says ``evaluate`` reads.
"""

from __future__ import annotations

import csv
import json
import os
import pathlib
import random
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow  # the command line run in subprocesses, as a user runs it: CI runs them (--run-slow)

ROOT = pathlib.Path(__file__).resolve().parents[1]


def wnb(*argv, cwd=None, timeout=300):
    """Run ``python -m wnb_stream ARGV`` as a user would; returns (status, stdout, stderr)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200")
    done = subprocess.run(
        [sys.executable, "-m", "wnb_stream", *argv], capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout
    )  # fmt: skip
    return done.returncode, done.stdout, done.stderr


def table(stdout: str) -> dict[str, list[str]]:
    """The rows of the printed table by model name (cells split on whitespace)."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("model "))
    rows = {}
    for line in lines[start + 2 :]:
        if not line.strip() or line.startswith("("):
            break
        cells = line.split()
        rows[cells[0]] = cells
    return rows


def write_noisy_csv(path: pathlib.Path, n: int = 3000, stray: dict | None = None) -> None:
    """A CSV whose class depends on numeric column ``a``; ``stray`` puts tokens at some rows of it."""
    rng = random.Random(1)
    stray = stray or {}
    lines = ["a,b,c,y"]
    for i in range(n):
        y = rng.random() < 0.5
        a = f"{rng.gauss(1.5 if y else 0.0, 1.0):.3f}"
        lines.append(f"{stray.get(i, a)},{rng.gauss(0, 1):.3f},{rng.choice('xyz')},{'yes' if y else 'no'}")
    path.write_text("\n".join(lines) + "\n")


# --- CSV: missing-value tokens, stray tokens, bad values -----------------------------------------


def test_a_stray_token_warns_and_na_values_keeps_the_column_numeric(tmp_path):
    path = tmp_path / "data.csv"
    write_noisy_csv(path, stray={10: "unknown", 400: "unknown", 700: "n/a"})
    status, out, err = wnb("evaluate", "--data", str(path), "--models", "nb", "--quiet", "--output", str(tmp_path / "a.json"))
    assert status == 0, err
    # n/a is missing by default now; 'unknown' flips the column, with a warning naming it
    assert "1 numeric, 2 categorical" in out
    assert "warning: " in err and "column 'a' is read as categorical" in err and "'unknown' ×2" in err
    assert "--na-values unknown" in err and "--numeric a" in err
    flipped = json.loads((tmp_path / "a.json").read_text())["results"][0]["accuracy"]

    status, out, err = wnb("evaluate", "--data", str(path), "--models", "nb", "--quiet", "--na-values", "unknown",
                           "--output", str(tmp_path / "b.json"))  # fmt: skip
    assert status == 0, err
    assert "2 numeric, 1 categorical" in out and "warning" not in err
    fixed = json.loads((tmp_path / "b.json").read_text())["results"][0]["accuracy"]
    assert fixed > flipped + 0.1  # the numeric column carries the class


def test_a_bad_value_at_line_1502_stops_with_the_results_so_far(tmp_path):
    path = tmp_path / "data.csv"
    write_noisy_csv(path, stray={1500: "high"})  # line 1502: header + 1,500 rows before it
    status, out, err = wnb("evaluate", "--data", str(path), "--models", "nb,river-gnb", "--quiet")
    assert status == 2
    assert "line 1502: column 'a' was read as numeric but holds 'high'" in err and "--on-bad-value missing" in err
    assert "STOPPED after 1,500 examples" in out
    rows = table(out)
    assert set(rows) == {"nb", "river-gnb"} and 0.5 < float(rows["nb"][1]) <= 1


@pytest.mark.parametrize("policy, n, note", [("missing", "3,000", "1 value(s) that are not numbers read as missing"),
                                             ("skip", "2,999", "1 bad row(s) skipped")])  # fmt: skip
def test_on_bad_value_missing_or_skip_goes_on(tmp_path, policy, n, note):
    path = tmp_path / "data.csv"
    write_noisy_csv(path, stray={1500: "high"})
    status, out, err = wnb("evaluate", "--data", str(path), "--models", "nb", "--quiet", "--on-bad-value", policy)
    assert status == 0, err
    assert f"{n} examples" in out and note in out and "first at line 1502, column 'a': 'high'" in out


# --- models: any River classifier, parameters --------------------------------------------------


def test_any_river_classifier_with_json_parameters_beside_the_named_ones(tmp_path):
    target = tmp_path / "table.json"
    status, out, err = wnb(
        "evaluate", "--data", "phishing", "--quiet", "--no-auc", "--output", str(target),
        "--models", 'nb{"history_size": 500},ht50=river.tree:HoeffdingTreeClassifier{"grace_period": 50}',
        "--model", 'bag=river.ensemble:BaggingClassifier{"model": {"river.linear_model:LogisticRegression": {}}, "n_models": 2}',
    )  # fmt: skip
    assert status == 0, err
    rows = {row["model"]: row for row in json.loads(target.read_text())["results"]}
    assert list(rows) == ["nb", "ht50", "bag"]
    assert all(row["n"] == 1250 and row["accuracy"] > 0.7 for row in rows.values())


def test_a_model_that_raises_stops_the_run_naming_it_with_the_results_so_far():
    # GaussianNB cannot read a string: STAGGER's values are categories
    status, out, err = wnb("evaluate", "--data", "stagger", "--n", "300", "--quiet",
                           "--models", "nb,gnb=river.naive_bayes:GaussianNB")  # fmt: skip
    assert status == 2
    assert err.startswith("wnb-stream: error: model 'gnb' raised") and "at example 1:" in err
    assert len(err.strip().splitlines()) == 1


# --- timing: every model warmed up before its clock starts -------------------------------------


def test_every_model_is_warmed_up_before_any_model_s_clock_starts(monkeypatch):
    """Without the warm-up the first model paid the kernels' load: nb,vns gave nb ~4x slower than
    vns,nb did. What makes the order not matter is checked here without a clock (a timing on a
    shared machine is noise): ``prequential`` warms up every model, on clones, before the first
    row that any of them is timed on."""
    from wnb_stream import WeightedNaiveBayes, weights
    from wnb_stream.apps import evaluation

    events = []
    warm_up = evaluation.warm_up

    def spy(models, n=evaluation.WARM_UP_ROWS):
        events.append(("warm", sorted(models)))
        warm_up(models, n)

    monkeypatch.setattr(evaluation, "warm_up", spy)
    models = {"vns": WeightedNaiveBayes(seed=1), "nb": WeightedNaiveBayes(optimizer=weights.Uniform(), seed=1)}
    for name, model in models.items():
        learn_one = model.learn_one
        monkeypatch.setattr(model, "learn_one", lambda x, y, name=name, learn_one=learn_one: events.append(("learn", name)) or learn_one(x, y))
    stream = [({"u": float(i % 7), "c": "abc"[i % 3]}, i % 2) for i in range(40)]
    evaluation.prequential(stream, models, auc=False)
    assert events[0] == ("warm", ["nb", "vns"])
    assert [e for e in events[1:] if e[0] == "warm"] == []
    assert {e[1] for e in events[1:]} == {"nb", "vns"} and len(events) == 1 + 2 * len(stream)


# --- curves, plot, drifting streams, datasets ---------------------------------------------------


def test_rolling_and_cumulative_curves_and_plot(tmp_path):
    pytest.importorskip("matplotlib")
    curves, plot = tmp_path / "curves.csv", tmp_path / "curves.png"
    status, _, err = wnb("evaluate", "--data", "sea-drift", "--models", "nb,river-gnb", "--quiet", "--window", "500",
                         "--curves", str(curves), "--plot", str(plot))  # fmt: skip
    assert status == 0, err
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = list(csv.DictReader(open(curves)))
    assert {row["model"] for row in rows} == {"nb", "river-gnb"} and {row["window"] for row in rows} == {"500"}
    nb = [row for row in rows if row["model"] == "nb"]
    assert int(nb[-1]["n"]) == 10_000 and len(nb) == 100
    for key in ("accuracy", "log_loss", "rolling_accuracy", "rolling_log_loss"):
        assert all(0 <= float(row[key]) for row in nb)
    # the rolling curve sees the drift at 2,500 that the cumulative one smooths out
    at = {int(row["n"]): row for row in nb}
    assert float(at[2600]["rolling_accuracy"]) < float(at[2500]["rolling_accuracy"])


def test_datasets_lists_what_evaluate_reads(tmp_path):
    status, out, err = wnb("datasets")
    assert status == 0, err
    listed = {line.split()[0]: line.split()[1] for line in out.splitlines() if line.startswith("  ") and len(line.split()) > 2}
    assert listed["phishing"] == "1,250" and listed["waveform"] == "10,000" and listed["rbf500"] == "10,000"
    for name in ("sea-drift", "agrawal-drift", "stagger-drift", "hyperplane-drift", "rbf-drift", "led-drift"):
        assert name in listed
    for name in ("sea", "agrawal-drift"):
        target = tmp_path / f"{name}.json"
        status, _, err = wnb("evaluate", "--data", name, "--models", "noop", "--quiet", "--no-auc", "--output", str(target))
        assert status == 0, err
        assert f"{json.loads(target.read_text())['results'][0]['n']:,}" == listed[name]


# --- issue 32: the CSV command line as a new user writes it -----------------------------------


def write_semicolon_csv(path: pathlib.Path, n: int = 1200, late: str | None = None) -> None:
    """A ';' CSV with an id and a timestamp column, the class depending on 'a'; ``late`` is a
    cell of 'a' after the inference window (row n)."""
    rng = random.Random(2)
    lines = ["id;ts;a;b;y"]
    for i in range(n):
        y = rng.random() < 0.5
        lines.append(f"{i};2024-01-{i % 28 + 1:02d}T10:00;{rng.gauss(2.0 if y else 0.0, 1.0):.3f};{rng.random():.3f};{'yes' if y else 'no'}")
    if late is not None:
        lines.append(f'{n};2024-02-01T10:00;"{late}";0.5;yes')
    path.write_text("\n".join(lines) + "\n")


def test_delimiter_and_drop_leave_the_id_and_timestamp_out(tmp_path):
    path, target = tmp_path / "data.csv", tmp_path / "table.json"
    write_semicolon_csv(path)
    status, out, err = wnb("evaluate", "--data", str(path), "--delimiter", ";", "--drop", "id", "--drop", "ts",
                           "--models", "nb", "--quiet", "--output", str(target))  # fmt: skip
    assert status == 0, err
    assert "2 numeric, 0 categorical, 2 dropped" in out and "2 variables" in out
    assert json.loads(target.read_text())["results"][0]["n_features"] == 2
    status, out, err = wnb("evaluate", "--data", str(path), "--delimiter", ";", "--drop", "id,ts", "--models", "nb", "--quiet")
    assert status == 0 and "2 dropped" in out, err
    # without --delimiter the whole line is one column: the error names the columns it saw
    status, _, err = wnb("evaluate", "--data", str(path), "--drop", "id", "--models", "nb", "--quiet")
    assert status == 2 and "unknown column(s) id to drop (columns: id;ts;a;b;y)" in err
    status, _, err = wnb("evaluate", "--data", str(path), "--delimiter", ";", "--drop", "y", "--models", "nb", "--quiet")
    assert status == 2 and "the target 'y' cannot be dropped" in err
    status, _, err = wnb("evaluate", "--data", "phishing", "--drop", "id", "--models", "nb", "--quiet")
    assert status == 2 and "--drop applies to a CSV source only" in err
    status, _, err = wnb("evaluate", "--data", str(path), "--delimiter", ";;", "--models", "nb", "--quiet")
    assert status == 2 and "--delimiter: must be one character" in err


def test_a_tab_delimiter_is_written_tab(tmp_path):
    path = tmp_path / "data.tsv"
    write_semicolon_csv(path, n=300)
    path.write_text(path.read_text().replace(";", "\t"))
    for spelling in ("tab", "\\t", "\t"):
        status, out, err = wnb("evaluate", "--data", str(path), "--delimiter", spelling, "--drop", "id,ts", "--models", "nb", "--quiet")
        assert status == 0 and "2 numeric" in out, (spelling, err)


def test_the_suggested_option_for_a_bad_cell_with_a_comma_works(tmp_path):
    """issue 32: a cell '12,5' got the advice --na-values 12,5, which declares '12' and '5'."""
    import shlex

    path = tmp_path / "data.csv"
    write_semicolon_csv(path, late="12,5")
    argv = ["evaluate", "--data", str(path), "--delimiter", ";", "--drop", "id,ts", "--models", "nb", "--quiet"]
    status, out, err = wnb(*argv)
    assert status == 2 and "holds '12,5' (a decimal comma? numbers are read with a decimal point)" in err
    advice = err.rsplit("(or ", 1)[1].rstrip().removesuffix(")")
    assert advice == "--na-value 12,5"
    status, out, err = wnb(*argv, *shlex.split(advice))  # the advice, as written
    assert status == 0, err
    assert "1,201 examples" in out


def test_repeated_na_values_add_up(tmp_path):
    path = tmp_path / "data.csv"
    write_noisy_csv(path, stray={10: "unknown", 400: "unknown", 700: "missing", 900: "-"})
    argv = ["evaluate", "--data", str(path), "--models", "nb", "--quiet"]
    status, out, err = wnb(*argv, "--na-values", "unknown", "--na-values", "missing", "--na-value", "-")
    assert status == 0, err
    assert "2 numeric, 1 categorical" in out and "warning" not in err
    status, out, err = wnb(*argv, "--na-values", "unknown", "--na-values", "missing")  # '-' not declared
    assert "1 numeric, 2 categorical" in out and "'-' ×1" in err and "--na-values -" in err


def test_a_river_pipeline_in_models(tmp_path):
    target = tmp_path / "table.json"
    status, out, err = wnb(
        "evaluate", "--data", "phishing", "--quiet", "--no-auc", "--output", str(target),
        "--models", 'nb,StandardScaler|SoftmaxRegression,lr=StandardScaler|LogisticRegression{"l2": 0.001}',
        "--model", "scaled-ht=river.preprocessing:StandardScaler|HoeffdingTreeClassifier",
    )  # fmt: skip
    assert status == 0, err
    rows = {row["model"]: row for row in json.loads(target.read_text())["results"]}
    assert list(rows) == ["nb", "StandardScaler|SoftmaxRegression", "lr", "scaled-ht"]
    assert all(row["n"] == 1250 and row["accuracy"] > 0.7 for row in rows.values())
    status, _, err = wnb("evaluate", "--data", "phishing", "--quiet", "--models", "LogisticRegression|StandardScaler")
    assert status == 2 and "river.linear_model:LogisticRegression is not a River transformer" in err
    status, _, err = wnb("evaluate", "--data", "phishing", "--quiet", "--models", "StandardScaler|Nonesuch")
    assert status == 2 and "unknown model 'Nonesuch' (no River module holds it)" in err


def test_outputs_end_their_last_line_and_each_file_written_is_named(tmp_path):
    pytest.importorskip("matplotlib")
    table_csv, curves, plot = tmp_path / "table.csv", tmp_path / "curves.csv", tmp_path / "plot.png"
    argv = ["evaluate", "--data", "phishing", "--models", "nb,vns", "--output", str(table_csv), "--curves", str(curves),
            "--plot", str(plot)]  # fmt: skip
    status, _, err = wnb(*argv, "--quiet")
    assert status == 0 and "wrote" not in err, err
    status, _, err = wnb(*argv)
    assert status == 0, err
    for path in (table_csv, curves):
        text = path.read_bytes()
        assert text.endswith(b"\n") and b"\r" not in text
    assert f"wnb-stream: wrote the table to {table_csv}" in err
    assert f"wnb-stream: wrote the curves to {curves}" in err
    assert f"wnb-stream: wrote the plot to {plot}\n" in err and plot.read_bytes()[:4] == b"\x89PNG"


def test_the_plot_names_drift_marks_and_coinciding_curves(tmp_path, monkeypatch):
    """The legend holds an entry for the drift marks, and two models with the same curves share
    one entry ('nb = same'); the command says so when it writes the plot."""
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    from wnb_stream.apps import cli, evaluation
    from wnb_stream.apps.models import make_model

    stream = [({"a": float(i % 7), "b": float(i % 3)}, i % 7 > 3) for i in range(600)]
    run = evaluation.prequential(iter(stream), {"nb": make_model("nb"), "same": make_model("nb"), "vns": make_model("vns")},
                                 n=600, window=100)  # fmt: skip
    kept = []
    monkeypatch.setattr(plt, "close", kept.append)
    note = cli._write_plot(str(tmp_path / "p.png"), run, "t", drifts=(300,))
    labels = [text.get_text() for text in kept[0].legends[0].get_texts()]
    assert labels == ["nb = same", "vns", "concept drift"]
    assert note == " (the curves of nb and same coincide: one line, 'nb = same')"
    kept.clear()
    assert cli._write_plot(str(tmp_path / "q.png"), run, "t") == " (the curves of nb and same coincide: one line, 'nb = same')"
    assert [t.get_text() for t in kept[0].legends[0].get_texts()] == ["nb = same", "vns"]


# --- issue 32: the kernels' first compile is announced ------------------------------------------

_PROBE = """
import sys, types
import numba
from wnb_stream.apps import cli

status = cli.main(sys.argv[1:])
# a kernel of the package that no run has compiled: numba compiles it now (a module named
# wnb_stream.*, not cached), as it compiles the real kernels on a machine's first run
probe = types.ModuleType("wnb_stream._probe")
exec("def twice(x):\\n    return 2 * x\\n", probe.__dict__)
assert numba.njit(probe.twice)(21) == 42
print("status", status)
"""


@pytest.mark.parametrize("quiet", [False, True], ids=["shown", "quiet"])
def test_the_first_compile_of_a_kernel_is_announced_once_on_stderr(tmp_path, quiet):
    """One line on stderr at the first compile in the process (the real kernels' on a fresh
    machine, or the probe's), none with --quiet; a warm cache compiles nothing and says nothing."""
    path = tmp_path / "data.csv"
    write_noisy_csv(path, n=200)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    argv = ["evaluate", "--data", str(path), "--models", "nb", *(["--quiet"] if quiet else [])]
    done = subprocess.run([sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True, env=env, timeout=600)
    assert "status 0" in done.stdout, done.stderr
    notices = [line for line in done.stderr.splitlines() if line.startswith("wnb-stream: compiling the numba kernels, once")]
    assert len(notices) == (0 if quiet else 1), done.stderr
