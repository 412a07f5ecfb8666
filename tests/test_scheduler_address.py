"""A --scheduler that cannot be used: one error line naming why, within seconds."""

import contextlib
import socket
import threading
import time

import pytest
from conftest import sim

from sim.engine.run.cluster import ClusterError, check_address, connect

pytest.importorskip("distributed")

NOT_AN_ADDRESS = "is not a scheduler address: give tcp://HOST:PORT, or local"


@pytest.mark.parametrize(
    "address",
    ["not a url", "tcp://127.0.0.1", "tcp://host:99999", "tcp://host:port", "http://host:8786",
     "tcp://:8786", "tcp://host:8786/path", "127.0.0.1:8786", ""],
)  # fmt: skip
def test_malformed_addresses_are_refused_before_connecting(address):
    with pytest.raises(ClusterError) as refused:
        check_address(address)
    assert str(refused.value) == f"--scheduler {address!r} {NOT_AN_ADDRESS}"


@pytest.mark.parametrize("address", ["local", "tcp://scheduler-host:8786", "tcp://[::1]:8786"])
def test_well_formed_addresses_pass_the_check(address):
    check_address(address)


@pytest.mark.parametrize(
    "address, code, message",
    [
        ("not a url", 2, f"--scheduler 'not a url' {NOT_AN_ADDRESS}"),
        ("", 2, f"--scheduler '' {NOT_AN_ADDRESS}"),  # an unset $VARIABLE: not a local run
        ("tcp://127.0.0.1:1", 1, "cannot reach the Dask scheduler at tcp://127.0.0.1:1: "
                                 "connection refused"),
    ],
)  # fmt: skip
def test_an_unusable_scheduler_is_one_error_line_within_seconds(tmp_path, address, code, message):
    # A malformed address is a usage error; one nothing answers at, a failure.
    clock = time.monotonic()
    # More deals than the sizing chunks hold, so the cluster is used.
    result = sim("calc", "-n", 2000, "--scheduler", address, "--out", tmp_path / "r.parquet")
    assert time.monotonic() - clock < 10
    assert result.exit_code == code
    assert result.output.strip() == f"Error: {message}"
    assert not (tmp_path / "r.parquet").exists()


def test_an_unknown_host_is_named():
    with pytest.raises(ClusterError) as refused:
        connect("tcp://no-such-host.invalid:8786")
    assert str(refused.value) == (
        "cannot reach the Dask scheduler at tcp://no-such-host.invalid:8786: "
        "unknown host 'no-such-host.invalid'"
    )


def test_a_server_that_is_not_a_scheduler_is_named_as_such():
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    def answer_nonsense():
        for _ in range(2):  # the plain connection, then the question who it is
            connection, _ = server.accept()
            connection.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n" * 4)
            connection.close()

    threading.Thread(target=answer_nonsense, daemon=True).start()
    clock = time.monotonic()
    with pytest.raises(ClusterError) as refused:
        connect(f"tcp://127.0.0.1:{port}")
    server.close()
    assert time.monotonic() - clock < 10
    assert str(refused.value) == f"tcp://127.0.0.1:{port} answers, but is not a Dask scheduler"


@pytest.mark.parametrize("says", [b"", b"HTTP/1.1 400 Bad Request\r\n\r\n"])
def test_a_server_that_accepts_and_then_keeps_still_is_named_not_waited_on(says):
    # Dask's own handshake would wait for ever on a listener that accepts and then says
    # nothing (or something, but never closes): the question has one deadline.
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    held = []

    def keep_still():
        with contextlib.suppress(OSError):
            while True:
                connection, _ = server.accept()
                connection.sendall(says)
                held.append(connection)

    threading.Thread(target=keep_still, daemon=True).start()
    outcome = []

    def try_it():
        try:
            connect(f"tcp://127.0.0.1:{port}")
        except ClusterError as error:
            outcome.append(str(error))

    asking = threading.Thread(target=try_it, daemon=True)
    asking.start()
    asking.join(120)  # a guard against a hang, far beyond the deadline
    server.close()
    for connection in held:
        connection.close()
    assert outcome == [f"tcp://127.0.0.1:{port} answers, but is not a Dask scheduler"]


@pytest.mark.parametrize("deals", [10, 300])
def test_a_refused_scheduler_is_named_before_any_deal_is_played(tmp_path, deals):
    with socket.socket() as placeholder:  # a port that was free a moment ago
        placeholder.bind(("127.0.0.1", 0))
        port = placeholder.getsockname()[1]
    out = tmp_path / "r.parquet"
    result = sim("calc", "-n", deals, "--scheduler", f"tcp://127.0.0.1:{port}", "--out", out)
    assert result.exit_code == 1
    assert result.output.strip() == (
        f"Error: cannot reach the Dask scheduler at tcp://127.0.0.1:{port}: connection refused"
    )
    assert list(tmp_path.iterdir()) == []
