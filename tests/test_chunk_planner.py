"""How a local run cuts its deals into chunks: all of them once, in order, small at the
start (a slow policy shows progress at once), never a crumb at the end."""

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
    chunks = plan(0, 1_000_000, per_deal)
    assert [count for _, count in chunks[:3]] == [1, 2, 4]
    full = min(pool.MAX_CHUNK, int(pool.CHUNK_SECONDS / per_deal))
    assert all(count >= full // pool.TAIL_FRACTION for _, count in chunks[10:-1])
    assert len(chunks) < 60


def test_a_slow_policy_still_gets_chunks_of_one_deal_near_the_end():
    chunks = plan(0, 200, 1.0)  # a deal a second: a full chunk is a quarter of a deal
    assert [count for _, count in chunks[-3:]] == [1, 1, 1]
