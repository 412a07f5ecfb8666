"""Bad input of every kind: one `Error: ...` line and a non-zero exit, never a traceback:
2 for what was typed, 1 for a file that cannot be used."""

import json
import os

import pyarrow.parquet as pq
import pytest
from conftest import sim

from sim.policies.registry import Param, PolicyError

# --param: only finite numbers reach a policy and the run's JSON description.


@pytest.mark.parametrize("text", ["nan", "NaN", "inf", "-inf", "Infinity", "1e999"])
@pytest.mark.parametrize(
    "policy, name", [("planner", "depth_weight"), ("slow_greedy:py_greedy", "delay_ms")]
)
def test_non_finite_parameters_are_refused(tmp_path, policy, name, text):
    result = sim("calc", "-p", policy, "--param", f"{name}={text}", "--out", tmp_path / "r.parquet")
    assert result.exit_code == 2
    assert result.output.strip() == (
        f"Error: parameter {name} must be a finite number, not {text!r}"
    )
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("text", ["nan", "inf", "-inf"])
def test_non_finite_integer_parameters_are_refused(tmp_path, text):
    result = sim("calc", "-p", "planner", "--param", f"king_pile={text}", "--out", tmp_path / "r")
    assert result.output.strip() == f"Error: parameter king_pile must be an integer, not {text!r}"


def test_an_integer_parameter_is_kept_as_typed_and_refused_where_a_policy_would_round_it(
    tmp_path,
):
    # Parameters reach a kernel as 64-bit floats: an integer beyond 2**53 would be
    # played as a neighbour of the number recorded, so it is refused; below, the
    # params column holds the very number typed, in any of its spellings.
    wide = Param("size", int, 0, "", -(10**30), 10**30)
    assert wide.parse(str(2**53)) == 2**53 and wide.parse("9_007_199_254_740_991") == 2**53 - 1
    assert wide.parse("1e15") == 10**15
    for text in (str(2**53 + 1), "123456789012345678901234567890", "-1e20"):
        with pytest.raises(PolicyError, match=r"within -2\*\*53..2\*\*53 \(a policy gets it"):
            wide.parse(text)
    out = tmp_path / "j.parquet"
    result = sim("jokers", "-p", "greedy", "--param", "patience=1e30", "-n", 5, "--out", out)
    assert result.output.strip() == "Error: parameter patience must be in 1..1000000000"
    result = sim("jokers", "-p", "greedy", "--param", "patience=999_999_999", "-n", 5,
                 "--workers", 1, "--out", out, "-q")  # fmt: skip
    assert result.exit_code == 0
    assert pq.read_table(out).column("params")[0].as_py() == "patience=999999999"


def test_the_run_description_is_strict_json(tmp_path):
    out = tmp_path / "r.parquet"
    result = sim("calc", "-p", "planner", "--param", "depth_weight=1e-300", "-n", 5,
                 "--workers", 1, "--out", out, "-q")  # fmt: skip
    assert result.exit_code == 0, result.output

    def refuse(constant):
        raise ValueError(f"not JSON: {constant}")

    text = pq.read_metadata(out).metadata[b"sim"]
    assert json.loads(text, parse_constant=refuse)["params"]["depth_weight"] == 1e-300


# sim replay: any bytes, any JSON.


def test_replay_reports_garbage_lines_of_a_log_by_number(tmp_path):
    log = tmp_path / "garbage.jsonl"
    log.write_bytes(b"{}\n" + b"\x89PNG\xff\xfe\n" + b"garbage\n")
    result = sim("replay", log)
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        'line 1: no "game": not a move-log line',
        "line 2: not UTF-8 text",
        "line 3: not valid JSON (Expecting value)",
        f"checked 1 deal in {log}: 0 valid, 1 invalid, 2 malformed lines",
    ]


BINARY = "holds binary data, not a move log (JSON Lines text)"


@pytest.mark.parametrize(
    "content, why",
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" * 100, BINARY),
        (b"\xff\xfegarbage\n{}\n", BINARY),
        (b"won,score,moves\n1,52,60\n", "is not a move log: its first line is not a JSON object"),
    ],
    ids=["binary", "latin-1", "csv"],
)  # fmt: skip
def test_replay_refuses_a_file_that_is_no_move_log_in_one_line(tmp_path, content, why):
    log = tmp_path / "not-a-log.jsonl"
    log.write_bytes(content)
    result = sim("replay", log)
    assert result.exit_code == 2
    assert result.output.splitlines() == [f"Error: Invalid value for 'LOG': {log} {why}"]


def test_replay_refuses_a_result_file_in_one_line(tmp_path):
    out = tmp_path / "r.parquet"
    assert sim("calc", "-n", 2000, "--out", out, "-q").exit_code == 0
    result = sim("replay", out)
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        f"Error: Invalid value for 'LOG': {out} is a Parquet file (a result file?), not a "
        "move log: give the JSON Lines log"
    ]


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("layout", "AC 2D", '"layout" must be an object, not "AC 2D"'),
        ("bases", 5, '"layout.bases" must be a list of cards, each text such as "QH", not 5'),
        ("stock", ["AC", 7], '"layout.stock" must be a list of cards, each text such as "QH", '
                             'not ["AC", 7]'),
        ("moves", "s>w1 s>w2", '"moves" must be a list of moves, each text in the rule book\'s '
                               'notation, not "s>w1 s>w2"'),
        ("moves", ["s>w1", 3], '"moves" must be a list of moves, each text in the rule book\'s '
                               'notation, not ["s>w1", 3]'),
        ("outcome", ["won"], '"outcome" must be text, not ["won"]'),
    ],
)  # fmt: skip
def test_replay_names_the_key_of_a_value_of_the_wrong_kind(tmp_path, key, value, message):
    out, log = tmp_path / "r.parquet", tmp_path / "moves.jsonl"
    assert sim("calc", "-n", 1, "--out", out, "--log-moves", log, "-q").exit_code == 0
    line = json.loads(log.read_text())
    (line["layout"] if key in ("bases", "stock") else line)[key] = value
    log.write_text(json.dumps(line) + "\n")
    result = sim("replay", log)
    assert result.exit_code == 1
    assert (
        result.output.splitlines()[0] == f"line 1 (calc seed 0 deal 0): malformed line: {message}"
    )


@pytest.mark.parametrize("option", ["--out", "--log-moves"])
def test_an_output_named_dash_is_refused_in_one_line(tmp_path, option):
    other = ["--out", tmp_path / "r.parquet"] if option == "--log-moves" else []
    result = sim("calc", "-n", 10, option, "-", *other)
    assert result.exit_code == 2
    what = "rows (Parquet)" if option == "--out" else "move log"
    assert result.output.splitlines() == [
        f"Error: Invalid value for '{option}': '-' would be the standard output, and a run "
        f"writes its {what} to a file only: give a file name"
    ]
    assert not any(tmp_path.iterdir()) and not os.path.exists("-")


def test_replay_names_a_deal_by_what_its_line_says(tmp_path):
    log = tmp_path / "log.jsonl"
    bases = ["AC", "2D", "3D", "4H"]
    stock = [rank + suit for rank in "A23456789TJQK" for suit in "CDHS"]
    layout = {"bases": bases, "stock": [card for card in stock if card not in bases]}
    lines = [
        {"game": "calc", "layout": layout},  # a bare layout, and no moves
        {"game": "calc", "seed": None, "deal": 4, "layout": {}, "moves": []},
    ]
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = sim("replay", log)
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        'line 1 (calc): malformed line: no "moves"',
        "line 2 (calc seed null deal 4): the line has seed=null, not a valid value "
        "(an integer in -2**63..2**63-1)",
        f"checked 2 deals in {log}: 0 valid, 2 invalid",
    ]


@pytest.mark.parametrize("game", [["calc"], {"calc": 1}, 7, None])
def test_replay_of_a_line_whose_game_is_not_a_name(tmp_path, game):
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"game": game, "seed": 0, "deal": 0, "moves": []}) + "\n")
    result = sim("replay", log)
    assert result.exit_code == 1
    assert result.output.splitlines()[0] == f"line 1: unknown game {json.dumps(game)}"


# sim show --layout: values of the wrong type.


@pytest.mark.parametrize(
    "layout, message",
    [
        ({"bases": 5, "stock": []}, "not a Calculation layout: 'int' object is not iterable"),
        ({"bases": [1.5, "2D", "3D", "4H"], "stock": []},
         "not a Calculation layout: object of type 'float' has no len()"),
        ({"bases": ["AC", "2D", "3D", "4H"], "stock": None},
         "not a Calculation layout: 'NoneType' object is not iterable"),
        ([1, 2, 3], "not a Calculation layout: list indices must be integers or slices, not str"),
        ({"stock": []}, "the layout has no 'bases'"),
    ],
)  # fmt: skip
def test_show_refuses_a_layout_of_wrong_types_in_one_line(tmp_path, layout, message):
    path = tmp_path / "layout.json"
    path.write_text(json.dumps(layout))
    result = sim("show", "calc", "--layout", path)
    assert result.exit_code == 1
    assert result.output.strip() == f"Error: {message}"


def test_show_refuses_a_binary_layout_file(tmp_path):
    path = tmp_path / "layout.json"
    path.write_bytes(b"\xff\xfe\x00garbage")
    result = sim("show", "calc", "--layout", path)
    assert result.output.strip() == f"Error: {path}: not UTF-8 text"


# Files that never end or would block: refused before they are opened.


@pytest.mark.parametrize(
    "command", [("show", "calc", "--layout"), ("replay",)], ids=["show-layout", "replay"]
)
def test_a_fifo_or_a_device_is_refused_at_once(tmp_path, command):
    fifo = tmp_path / "layout.fifo"
    os.mkfifo(fifo)  # no writer: opening it would wait for ever
    for path in (fifo, "/dev/zero"):
        result = sim(*command, path)
        assert result.exit_code == 1  # a file that cannot be read, as compare says it
        assert result.output.splitlines()[-1] == f"Error: {path}: not a regular file"


def test_analysis_commands_name_a_path_that_is_neither_file_nor_folder(tmp_path):
    fifo = tmp_path / "rows.fifo"
    os.mkfifo(fifo)
    commands = (["compare"], ["report"], ["export", "--to", "csv", "--out", tmp_path / "r.csv"])
    for command in commands:
        result = sim(command[0], fifo, *command[1:])
        assert result.exit_code == 1
        assert result.output.strip() == f"Error: {fifo}: not a regular file or folder"


def test_show_refuses_a_layout_file_too_large_to_be_one(tmp_path):
    path = tmp_path / "layout.json"
    with path.open("wb") as file:
        file.truncate(2**24 + 1)  # sparse: costs no disk
    result = sim("show", "calc", "--layout", path)
    assert result.exit_code == 1
    assert result.output.strip() == f"Error: {path}: larger than 16 MiB, not a layout"


def test_replay_skips_an_endless_line_in_pieces(tmp_path):
    log = tmp_path / "moves.jsonl"
    with log.open("wb") as file:
        file.write(b" " * 2**24 + b"\n")  # 16 MiB: the longest line still read
        file.truncate(2**25 + 5)  # then a line of zero bytes, longer than any deal's
        file.seek(0, os.SEEK_END)
        file.write(b"\n{}\n")
    result = sim("replay", log)
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        "line 2: longer than 16 MiB: not a deal",
        'line 3: no "game": not a move-log line',
        f"checked 1 deal in {log}: 0 valid, 1 invalid, 1 malformed line",
    ]


# compare / report / export: a run description of the wrong shape.


def with_description(path, text):
    """The result file at path, its run description replaced by text."""
    table = pq.read_table(path)
    pq.write_table(table.replace_schema_metadata({b"sim": text}), path)
    return path


WRONG_SHAPES = [
    ({"rules": ["wastes", 4]}, 'rules = ["wastes", 4], not an object'),
    ({"params": "none"}, 'params = "none", not an object'),
    ({"game": 3}, "game = 3, not a string"),
    ({"policy": None}, "policy = null, not a string"),
    ({"start": "zero"}, 'start = "zero", not a whole number'),
    ({"n_done": [1, 2]}, "n_done = [1, 2], not a whole number"),
    ({"completed": "yes"}, 'completed = "yes", not true or false'),
]


@pytest.mark.parametrize(
    "command, change, found",
    [("compare", *shape) for shape in WRONG_SHAPES]
    + [("report", *WRONG_SHAPES[0]), ("export", *WRONG_SHAPES[4])],
)
def test_a_description_of_the_wrong_shape_is_one_error_line(tmp_path, command, change, found):
    from test_compare import write_result

    path = write_result(tmp_path / "a.parquet", "a", [True, False])
    description = json.loads(pq.read_metadata(path).metadata[b"sim"]) | change
    with_description(path, json.dumps(description))
    out = tmp_path / ("out.html" if command == "report" else "out.csv")
    args = ["--to", "csv"] if command == "export" else []
    result = sim(command, path, *args, "--out", out)
    assert result.exit_code == 1
    assert result.output.strip() == f"Error: {path}: its sim metadata has {found}"
    assert not out.exists()


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '"a string"', "[" * 100_000])
def test_a_description_that_is_not_a_json_object_is_one_error_line(tmp_path, text):
    from test_compare import write_result

    path = with_description(write_result(tmp_path / "a.parquet", "a", [True]), text)
    result = sim("compare", path)
    assert result.exit_code == 1
    assert result.output.strip() in (
        f"Error: {path}: its sim metadata is not valid JSON",
        f"Error: {path}: its sim metadata lacks game, policy, rules or params",
    )


# sim bench --command: a command that fails.


def test_bench_of_a_failing_command_names_its_exit_code():
    args = ["-p", "greedy", "-n", 10, "--repeat", 1]
    result = sim("bench", "calc", *args, "--command", "calc -n 0")
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == (
        "Error: `sim calc -n 0` failed with exit code 2: "
        "Invalid value for '-n' / '--deals': '0' is below 1"
    )


def test_bench_of_a_command_that_logs_its_moves_never_touches_the_users_log(tmp_path, monkeypatch):
    # The timed command runs with --overwrite into a scratch folder; its move log goes
    # there too, whichever way the option is spelt, so a user's file of that name stays.
    monkeypatch.chdir(tmp_path)
    for name in ("keep.jsonl", "keep.jsonl.gz"):
        (tmp_path / name).write_text("precious\n")
    command = "calc -n 100 --log-moves keep.jsonl --log-moves=keep.jsonl.gz"
    result = sim("bench", "calc", "-p", "greedy", "-n", 10, "--repeat", 1, "--command", command)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.jsonl", "keep.jsonl.gz"]
    assert {p.read_text() for p in tmp_path.iterdir()} == {"precious\n"}


def test_bench_of_a_command_with_unbalanced_quotes():
    result = sim("bench", "calc", "-p", "greedy", "--command", "calc --out 'x")
    assert result.output.splitlines()[-1] == (
        'Error: --command "calc --out \'x": No closing quotation'
    )
    assert result.exit_code == 2
    assert "median" not in result.output  # refused before anything is timed


# sim bench: what it cannot time is refused, as a run refuses it.


@pytest.mark.parametrize(
    "games, policy, message",
    [
        (["calc"], "nosuch",
         "unknown policy 'nosuch' for calc (known: random, greedy, kings-bottom, planner, mc, "
         "rollout, oracle)"),
        (["calc", "montana"], "nosuch",
         "unknown policy 'nosuch' for calc or montana (known: random, greedy, kings-bottom, "
         "planner, mc, rollout, oracle, first, search, solver)"),
        (["calc"], "some_plugin.py:name",
         "bench times built-in policies, not 'some_plugin.py:name': time a run of it with "
         "--command"),
    ],
)  # fmt: skip
def test_bench_refuses_a_policy_it_does_not_time(games, policy, message):
    result = sim("bench", *games, "-p", policy, "-n", 1000, "--repeat", 1)
    assert result.exit_code == 2
    assert result.output == f"Error: {message}\n"


def test_bench_times_each_policy_in_each_game_given_that_has_it():
    args = ["calc", "montana", "-p", "greedy", "-p", "first", "-n", 100, "--repeat", 1]
    result = sim("bench", *args)
    assert result.exit_code == 0, result.output
    assert [line.split()[:2] for line in result.stdout.splitlines()[1:]] == [
        ["calc", "greedy"],
        ["montana", "first"],
        ["montana", "greedy"],
    ]


def test_bench_reference_needs_a_command():
    result = sim("bench", "calc", "-p", "greedy", "-n", 100, "--repeat", 1, "--reference", "true")
    assert result.exit_code == 2
    assert result.output == "Error: --reference needs --command: the two are timed in turn\n"


# sim show: one policy, each parameter once, and the header says what played.


def test_show_refuses_a_parameter_given_twice_as_a_run_does(tmp_path):
    twice = ["-p", "planner", "--param", "depth_weight=1", "--param", "depth_weight=5"]
    shown = sim("show", "calc", *twice)
    ran = sim("calc", *twice, "--out", tmp_path / "r.parquet")
    assert shown.exit_code == ran.exit_code == 2
    assert (
        shown.output == "Error: --param depth_weight is given twice; sim show plays one setting\n"
    )
    assert ran.output == (
        "Error: --param depth_weight is given twice; list its values as depth_weight=A,B\n"
    )


def test_show_refuses_two_policies():
    result = sim("show", "calc", "-p", "greedy", "-p", "planner")
    assert result.exit_code == 2
    assert result.output == (
        "Error: --policy is given twice (greedy, planner); sim show calc plays one policy\n"
    )


def test_show_names_the_parameters_it_plays_with():
    result = sim("show", "calc", "-p", "planner", "--param", "depth_weight=5", "--final")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == (
        "calc · seed 0 · deal 0 · policy planner depth_weight=5.0 king_pile=1"
    )


@pytest.mark.parametrize(
    "text, message",
    [("null", "null, not a layout"),
     ('{"game": "calc", "layout": null}', "the line's layout is null, not a layout")],
)  # fmt: skip
def test_show_refuses_a_null_layout(tmp_path, text, message):
    path = tmp_path / "null.json"
    path.write_text(text)
    result = sim("show", "calc", "--layout", path)
    assert result.exit_code == 1
    assert result.output == f"Error: {path}: {message}\n"


# --deal-timeout: a number of seconds above 0; nan compares false with every bound.


@pytest.mark.parametrize("text", ["nan", "NaN", "-nan"])
def test_a_deal_timeout_of_nan_is_refused(tmp_path, text):
    result = sim("calc", "-n", 10, "--deal-timeout", text, "--out", tmp_path / "r.parquet")
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == (
        "Error: Invalid value for '--deal-timeout': nan is not in the range x>0."
    )
    assert list(tmp_path.iterdir()) == []


def test_a_deal_timeout_of_inf_is_no_limit(tmp_path):
    out = tmp_path / "r.parquet"
    result = sim("calc", "-n", 10, "--workers", 1, "--deal-timeout", "inf", "--out", out, "-q")
    assert result.exit_code == 0, result.output
    assert pq.read_metadata(out).num_rows == 10
