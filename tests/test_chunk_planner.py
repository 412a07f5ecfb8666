"""How a local run cuts its deals into chunks: all of them once, in order, small at the
start (a slow policy shows progress at once), never a crumb at the end; and how their
rows come back from the workers."""

import pyarrow.parquet as pq
from conftest import sim

from sim.engine.run import pool


def plan(first, end, seconds_per_deal, workers=2):
    """Every chunk of a run whose deals each take seconds_per_deal, recorded as a pool
    records them: a chunk's time comes back once the workers' queues are full."""
    planner = pool.ChunkPlanner(first, end, workers)
    chunks, in_flight = [], []
    while (chunk := planner.next()) is not None:
        chunks.append(chunk)
        in_flight.append(chunk)
        if len(in_flight) > pool.IN_FLIGHT * workers:
            _, count = in_flight.pop(0)
            planner.record(count, count * seconds_per_deal)
    return chunks


def test_chunks_cover_every_deal_once_in_order():
    for first, end, per_deal in ((0, 1_000_000, 2e-6), (7, 12_345, 1e-3), (5, 6, 1.0)):
        chunks = plan(first, end, per_deal)
        starts = [start for start, _ in chunks]
        assert starts[0] == first
        ends = [start + count for start, count in chunks]
        assert ends[:-1] == starts[1:]
        assert ends[-1] == end
        assert all(count >= 1 for _, count in chunks)


def test_the_first_chunks_are_tiny_and_the_last_are_no_crumbs():
    per_deal = 2e-6
    chunks = plan(0, 1_000_000, per_deal)  # two workers: a deal each, then doubling
    assert [count for _, count in chunks[:4]] == [1, 1, 2, 4]
    full = min(pool.MAX_CHUNK, int(pool.CHUNK_SECONDS / per_deal))
    assert all(count >= full // pool.TAIL_FRACTION for _, count in chunks[10:-1])
    assert len(chunks) < 60


def test_a_slow_policy_still_gets_chunks_of_one_deal_near_the_end():
    chunks = plan(0, 200, 1.0)  # a deal a second: a full chunk is a quarter of a deal
    assert [count for _, count in chunks[-3:]] == [1, 1, 1]


def test_rows_come_back_through_shared_memory_and_by_pipe_alike(monkeypatch):
    # Chunks up to MAX_CHUNK deals leave their rows in the worker's slab; a bigger one
    # (never planned, but a retried or hand-made chunk could be) comes by pipe.
    import numpy as np

    from sim.engine.games import get_game
    from sim.engine.run.job import job_spec, play_chunk
    from sim.engine.run.request import RunRequest
    from sim.policies.registry import resolve

    calc = get_game("calc")
    greedy = resolve("calc", "greedy")
    request = RunRequest(
        game=calc, policy=greedy, policy_spec="greedy", params={}, rules=calc.default_rules(),
        seed=3, start=0, n=700, workers=2, out=None,
    )  # fmt: skip
    spec = job_spec(request)
    monkeypatch.setattr(pool, "MAX_CHUNK", 64)

    class Fixed:  # a planner of fixed chunks, some bigger than MAX_CHUNK
        next_start, end = 0, 700

        def __init__(self):
            self.chunks = [(0, 10), (10, 64), (74, 200), (274, 1), (275, 425)]

        def next(self):
            return self.chunks.pop(0) if self.chunks else None

        def record(self, deals, seconds):
            pass

    results = list(pool.play(spec, Fixed(), 2, lambda: False, 60.0))
    rows = np.concatenate([result.rows for result in results])
    assert [result.start for result in results] == [0, 10, 74, 274, 275]
    assert np.array_equal(rows, play_chunk(spec, (0, 700)).rows)


def test_no_chunk_holds_more_deals_than_the_planner_allows():
    planner = pool.ChunkPlanner(0, 100_000, 2, most=16)
    chunks = []
    while (chunk := planner.next()) is not None:
        chunks.append(chunk)
        planner.record(chunk[1], chunk[1] * 1e-6)  # fast deals: only `most` holds them back
    assert max(count for _, count in chunks) == 16
    assert sum(count for _, count in chunks) == 100_000


def test_a_huge_move_cap_makes_small_chunks_not_huge_log_buffers():
    from sim.engine.run.job import LOG_CHUNK_BYTES, most_logged_deals

    assert most_logged_deals(0) is None  # no move log: no limit
    assert most_logged_deals(5_002) * 2 * 5_002 <= LOG_CHUNK_BYTES
    assert most_logged_deals(1_000_002) == 16
    assert most_logged_deals(10**12) == 1  # a chunk still plays one deal


def test_a_chunk_sends_on_its_logs_without_the_room_no_deal_reached():
    import numpy as np

    from sim.engine.run.job import LOG_END, logged_actions, trimmed_logs

    logs = np.full((3, 10), LOG_END, np.int16)
    logs[0, :2] = [5, 6]
    logs[1, :4] = [7, 8, 9, 0]  # an action 0 is a move like any other
    trimmed = trimmed_logs(logs)
    assert trimmed.shape == (3, 4)
    assert [logged_actions(row) for row in trimmed] == [[5, 6], [7, 8, 9, 0], []]
    logs[2, :] = 1  # a deal that used all its room keeps every column
    assert trimmed_logs(logs).shape == (3, 10)
    assert trimmed_logs(logs[:0]).shape == (0, 0)


def test_a_deal_of_a_chunk_already_sent_back_is_never_taken_for_a_stalled_one():
    # Between two chunks a worker's status still names the last deal it finished: that
    # deal was played, and the next chunk's first deal has not started. Timing it would
    # stop the run at a deal outside every chunk in play, and the deals after it would
    # be reported lost between the workers.
    import collections
    import types

    import numpy as np

    from sim.engine import kernel

    status = np.zeros((1, kernel.STATUS_SIZE), np.int64)
    worker = types.SimpleNamespace(slot=0, tasks=collections.deque([(10, 5)]), seen_deal=None)
    status[0, kernel.IN_PLAY] = 9  # the last deal of the chunk before
    for _ in range(3):
        assert pool._stuck_deal(worker, status, 0.0) is None
    status[0, kernel.IN_PLAY] = 12  # a deal of the chunk in play, seen twice: stalled
    assert pool._stuck_deal(worker, status, 0.0) is None
    assert pool._stuck_deal(worker, status, 0.0) == 12


def test_only_a_move_log_makes_chunks_smaller_than_their_executors_own_cap():
    # A Dask task may hold up to a million deals, a local chunk 100,000: a run without
    # a move log keeps either cap; one with a log of a huge move cap gets small chunks.
    import types

    from sim.engine.games import get_game
    from sim.engine.run import cluster, executors

    montana = get_game("montana")
    rules = montana.default_rules() | {"max_moves": 1_000_000}
    plain = types.SimpleNamespace(game=montana, rules=rules, log_moves=None)
    logged = types.SimpleNamespace(game=montana, rules=rules, log_moves="m.jsonl")
    assert executors._most_deals(plain, cluster.MAX_CHUNK) == cluster.MAX_CHUNK
    assert executors._most_deals(plain, pool.MAX_CHUNK) == pool.MAX_CHUNK
    assert executors._most_deals(logged, cluster.MAX_CHUNK) == 16


class _HeldChunks:
    """A worker as the pool feeds it: only the chunks it was handed."""

    def __init__(self):
        self.tasks = []

    def send(self, chunk):
        self.tasks.append(chunk)


def test_a_run_of_a_few_slow_deals_gives_every_worker_a_chunk_before_any_gets_two():
    # Two deals on two workers: one each, not both queued on the first worker while
    # the second idles (solver deals can take a minute each).
    for deals, workers in ((2, 2), (3, 2), (4, 4)):
        feeder = pool._Pool.__new__(pool._Pool)
        feeder.planner = pool.ChunkPlanner(0, deals, workers)
        feeder.workers = [_HeldChunks() for _ in range(workers)]
        feeder.retry, feeder.fault_at = pool.collections.deque(), None
        feeder.feed_all()
        assert all(worker.tasks for worker in feeder.workers), (deals, workers)
        handed = sorted(chunk for worker in feeder.workers for chunk in worker.tasks)
        assert sum(count for _, count in handed) == deals


def test_a_run_of_fewer_deals_than_workers_forks_a_worker_a_deal(tmp_path, monkeypatch):
    # `--workers 100 -n 3` starts three workers, not a hundred that would have nothing
    # to play; the rows are those of any number of workers.
    forked = []
    play = pool.play

    def counted(spec, planner, workers, *args):
        forked.append(workers)
        return play(spec, planner, workers, *args)

    monkeypatch.setattr(pool, "play", counted)
    out = tmp_path / "r.parquet"
    assert sim("calc", "-n", 3, "--workers", 100, "--out", out, "-q").exit_code == 0
    assert forked == [3]
    alone = tmp_path / "alone.parquet"
    assert sim("calc", "-n", 3, "--workers", 1, "--out", alone, "-q").exit_code == 0
    assert pq.read_table(out).equals(pq.read_table(alone))
