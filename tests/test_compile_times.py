"""A first compile's notice scales the declared seconds by how fast this machine has
compiled before: fed measured times here, never timed."""

import json

import pytest

from sim.engine import compile_times
from sim.engine.compile_times import calibrated, read_records, with_record
from sim.engine.games import get_game
from sim.engine.run.compile_notice import CompileNotice
from sim.policies.registry import resolve


def test_a_machine_with_no_record_is_told_the_declared_seconds():
    assert calibrated(35, []) == 35


@pytest.mark.parametrize("ratio", [0.5, 2.0, 3.0])
def test_the_declared_seconds_scale_by_the_measured_ratio(ratio):
    records = [(7, 7 * ratio), (35, 35 * ratio), (10, 10 * ratio)]
    assert calibrated(30, records) == pytest.approx(30 * ratio)


def test_long_compiles_weigh_more_than_short_ones():
    # A 7 s rules compile that took 21 s on a slow day, and two long ones at par.
    records = [(7, 21), (35, 35), (70, 70)]
    assert calibrated(100, records) == pytest.approx(100 * 126 / 112)


def test_a_compile_declared_too_short_to_measure_the_machine_neither_scales_nor_is_kept():
    # Numba's own start-up makes a 1 s compile take 3: that says little of the machine.
    assert calibrated(30, [(1, 3)]) == 30
    assert with_record([], 1, 3) == []
    assert with_record([], 7, 14) == [(7, 14)]


def test_only_the_last_records_are_kept():
    records = []
    for measured in range(1, 20):
        records = with_record(records, 10, float(measured))
    assert len(records) == compile_times.RECORDS_KEPT
    assert records[-1] == (10, 19.0)


def test_a_wild_ratio_is_held_within_bounds():
    assert calibrated(10, [(10, 10_000)]) == 10 * compile_times.SLOWEST
    assert calibrated(10, [(10, 0.001)]) == 10 * compile_times.FASTEST


def test_records_survive_the_trip_to_disk_and_damage_reads_as_none(tmp_path, monkeypatch):
    path = tmp_path / compile_times.RECORDS_NAME
    monkeypatch.setattr(compile_times, "records_path", lambda: path)
    compile_times.record(7, 14.0)
    compile_times.record(35, 70.0)
    assert read_records(path) == [(7.0, 14.0), (35.0, 70.0)]
    assert compile_times.machine_seconds(30) == pytest.approx(60)
    path.write_text("{not json")
    assert read_records(path) == []
    path.write_text(json.dumps([["a", 1]]))
    assert read_records(path) == []


def test_the_notice_of_a_first_compile_says_the_machine_seconds():
    calc, heard = get_game("calc"), []
    mc = resolve("calc", "mc")  # declared 28 s, and the rules 7 s: 35 s in all
    twice_as_slow = [(7, 14.0), (35, 70.0)]
    say = CompileNotice(calc, mc, heard.append, lambda s: calibrated(s, twice_as_slow))
    say(calc.module.start_nb.py_func)  # a function of the rules: they compile too
    assert heard == [
        "compiling the Calculation rules and policy mc for this machine: about 70 s, once "
        "(later runs load it from the cache)"
    ]
    assert say.declared == 35
