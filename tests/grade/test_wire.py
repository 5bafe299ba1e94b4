import os
import socket
import struct
import threading
import time

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from attnlab.grade import wire


def test_does_plain_data_survive_a_round_trip():
    value = (
        None,
        True,
        False,
        3,
        -(2**80),
        1.5,
        float("inf"),
        2 - 1j,
        "é",
        b"\x00",
        [1, (2, 3)],
        {"a": 1, 2: [None]},
        np.arange(6.0).reshape(2, 3),
        np.zeros(0, bool),
        np.float32(1.5),
    )
    back = wire.decode(wire.encode(value))
    assert back[:12] == value[:12]
    assert np.array_equal(back[12], value[12]) and back[12].dtype == np.float64
    assert back[13].shape == (0,) and back[14] == np.float32(1.5) and type(back[14]) is np.float32


def test_does_an_array_subclass_arrive_as_a_plain_ndarray():
    class Liar(np.ndarray):
        def __eq__(self, other):
            return True

    back = wire.decode(wire.encode(np.zeros(3).view(Liar)))
    assert type(back) is np.ndarray and not np.array_equal(back, np.ones(3))


def test_are_decoded_arrays_fresh_and_writeable():
    back = wire.decode(wire.encode(np.arange(4)))
    back[0] = 7
    assert back.flags.writeable and back[0] == 7


@pytest.mark.parametrize("value", [object(), np.array([object()]), np.array(["text"]), lambda: 1])
def test_is_anything_but_plain_data_refused(value):
    with pytest.raises(wire.WireError):
        wire.encode(value)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"Q",
        b"s\x00\x00\x00\x09ab",
        wire.encode(np.zeros(5))[:-8],
        wire.encode([1]) + b"N",
        b"i\x03\x00\x00\x00abc",
        b"s\x03\x00\x00\x00\xff\xfe\xfd",
    ],
)
def test_is_malformed_input_rejected_cleanly(data):
    with pytest.raises(wire.WireError):
        wire.decode(data)


def test_is_a_disallowed_dtype_in_the_stream_rejected():
    data = bytearray(wire.encode(np.zeros(2)))
    data[1] = 255  # the dtype's number in the allowed list: there is no such dtype
    with pytest.raises(wire.WireError):
        wire.decode(bytes(data))


def test_is_deep_nesting_refused():
    value: list = []
    for _ in range(wire.MAX_DEPTH + 5):
        value = [value]
    with pytest.raises(wire.WireError):
        wire.encode(value)


def _dict_of(keys) -> bytes:
    """A dict's encoding with ``keys`` (each mapped to None), made by hand: building it would take
    as long as decoding it."""
    out = [wire._TAG_U32.pack(b"d", len(keys))]
    for key in keys:
        wire._enc(key, out, 1, None)
        out.append(b"N")
    return b"".join(out)


def test_is_a_dict_whose_keys_hash_alike_refused():
    """Integers, floats and tuples hash the same in every process, so a sandbox can choose keys that
    all collide: decoding 20,000 of them would probe 200 million slots. Refused; a dict of as many
    keys that do not collide, and of strings, reads as sent."""
    collide = [i * (2**61 - 1) for i in range(1, 20_001)]
    assert len({hash(k) for k in collide}) == 1
    with pytest.raises(wire.WireError):
        wire.decode(_dict_of(collide))
    with pytest.raises(wire.WireError):
        wire.decode(_dict_of([(k,) for k in collide]))
    plain = list(range(20_000)) + [0.5 * i for i in range(1, 100)] + [(1, 2), None, True, "a"]
    assert wire.decode(_dict_of(plain)) == dict.fromkeys(plain)
    words = [f"w{i}" for i in range(20_000)]
    assert wire.decode(wire.encode(dict.fromkeys(words))) == dict.fromkeys(words)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([b"q", b"o", b"e", b"c", b"x"]), st.binary(max_size=48))
def test_does_any_message_read_or_raise_wire_error(kind, rest):
    """Whatever frame the other side sends (a short form, a header cut short), reading it gives a
    message or WireError, never another exception."""
    mine, theirs = socket.socketpair()
    try:
        payload = kind + rest
        theirs.sendall(struct.pack("<I", len(payload)) + payload)
        try:
            wire.Endpoint(mine, lambda kind, body: None).recv()
        except wire.WireError:
            pass
    finally:
        mine.close()
        theirs.close()


# an array's sides as a crafted header may give them: small, zero, or past anything that fits in memory
_SIDES = st.one_of(st.integers(0, 3), st.sampled_from([2**26, wire.MAX_FRAME, 2**32 - 1, 2**62, 2**64 - 1]))
_TOO_BIG = struct.pack("<BB5Q", 0, 5, 0, 2**26, 2**26, 2**26, 2**26)  # "array is too big" in numpy


@settings(max_examples=500, deadline=None)
@given(
    st.sampled_from(["reply", "error", "short call", "value", "scalar"]),
    st.integers(0, 255),
    st.integers(0, 40),
    st.lists(_SIDES, max_size=34),
    st.binary(max_size=64),
)
@example("reply", 0, 5, [0, 2**26, 2**26, 2**26, 2**26], b"")
@example("short call", 0, 5, [0, 2**26, 2**26, 2**26, 2**26], b"")
def test_does_any_array_header_read_as_an_array_or_raise_wire_error(where, code, ndim, sides, data):
    """An array's header in any place a frame may carry one (a reply's fast path, a probe's short
    call, inside a value), with any dtype number, number of sides and sides (a zero beside sides
    whose product no machine holds): an array, or WireError, never numpy's own errors."""
    header = bytes([code, ndim]) + struct.pack(f"<{len(sides)}Q", *sides) + data
    if where in ("value", "scalar"):
        try:
            wire.decode((b"a" if where == "value" else b"g") + header)
        except wire.WireError:
            pass
        return
    head = {"reply": b"o" + struct.pack("<I", 1), "error": b"e" + struct.pack("<I", 1)}
    payload = head.get(where, b"c" + struct.pack("<II", 1, 5)) + b"a" + header
    mine, theirs = socket.socketpair()
    try:
        theirs.sendall(struct.pack("<I", len(payload)) + payload)
        try:
            wire.Endpoint(mine, lambda kind, body: None).recv()
        except wire.WireError:
            pass
    finally:
        mine.close()
        theirs.close()


def test_does_a_reply_of_an_array_too_big_for_numpy_raise_wire_error_in_a_probes_call():
    """The reply to a lent function's call on one array is read by the caller's own fast path."""
    mine, theirs = socket.socketpair()
    try:
        payload = b"o" + struct.pack("<I", 1) + b"a" + _TOO_BIG
        theirs.sendall(struct.pack("<I", len(payload)) + payload)
        with pytest.raises(wire.WireError):
            wire.Endpoint(mine, lambda kind, body: None).caller(5)(np.arange(3.0))
    finally:
        mine.close()
        theirs.close()


def test_does_a_lent_functions_call_on_one_array_arrive_as_sent():
    """A lent function's call sent the general way, on one array or more, with keywords or another
    dtype: the same body out as in (the short form is ``caller``'s, tested below)."""
    mine, theirs = socket.socketpair()
    try:
        sender, receiver = wire.Endpoint(mine, lambda k, b: None), wire.Endpoint(theirs, lambda k, b: None)
        x = np.arange(6.0).reshape(2, 3)
        for body in [(7, (x,), {}), (7, (x, x), {}), (7, (x,), {"axis": 0}), (7, (x.astype(np.float32),), {})]:
            sender.send(("req", 3, "cb", body))
            name, rid, kind, got = receiver.recv()
            assert (name, rid, kind) == ("req", 3, "cb") and got[0] == 7 and got[2] == body[2]
            assert all(np.array_equal(a, b) and a.dtype == b.dtype for a, b in zip(got[1], body[1]))
    finally:
        mine.close()
        theirs.close()


def _peer(sock: socket.socket, act) -> threading.Thread:
    """The other side, in a thread: ``act(sock)``, whatever happens to the socket meanwhile."""

    def run() -> None:
        try:
            act(sock)
        except OSError:
            pass

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("how", ["silent", "trickling", "calling without end"])
def test_does_a_peer_that_never_replies_stop_the_wait_at_the_deadline(how):
    """Whatever the other side does instead of replying (nothing; a frame one byte at a time; a
    lent function's table calls, back to back, for five seconds), the wait ends at its deadline."""
    x = np.arange(6.0)
    table = {wire.encode(x): wire.encode(2 * x)}
    call = struct.pack("<IcII", 9 + len(wire.encode(x)), b"c", 1, 5) + wire.encode(x)
    stop = time.monotonic() + 5

    def act(sock: socket.socket) -> None:
        sock.settimeout(10)
        if how == "trickling":
            for byte in struct.pack("<I", 1000) + b"o" * 1000:
                if time.monotonic() > stop:
                    return
                sock.sendall(bytes([byte]))
                time.sleep(0.01)
        elif how == "calling without end":
            while time.monotonic() < stop:
                sock.sendall(call)
                sock.recv(1 << 16)  # its answer, before the next call: one whole frame at a time
        else:
            time.sleep(5)

    mine, theirs = socket.socketpair()
    try:
        endpoint = wire.Endpoint(mine, lambda kind, body: None)
        endpoint.table_of = lambda hid: table.get if hid == 5 else None
        _peer(theirs, act)
        started = time.monotonic()
        with pytest.raises(wire.ChannelTimeout):
            endpoint.request("call", ("f", None, (), {}), wire.Deadline(0.3))
        assert time.monotonic() - started < 2
    finally:
        mine.close()
        theirs.close()


def test_does_a_wait_end_when_the_watched_process_exits_though_its_socket_stays_open():
    """A sandbox that dies while a process it started holds the channel open ends the wait."""
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    pidfd = os.pidfd_open(pid)
    mine, theirs = socket.socketpair()
    try:
        endpoint = wire.Endpoint(mine, lambda kind, body: None)
        endpoint.watch = pidfd
        started = time.monotonic()
        with pytest.raises(wire.ChannelClosed):
            endpoint.request("names", False, wire.Deadline(30))
        assert time.monotonic() - started < 5
    finally:
        os.waitpid(pid, 0)
        os.close(pidfd)
        mine.close()
        theirs.close()


def test_does_a_call_on_one_array_get_any_reply_the_general_way_too():
    """The student's side sends a lent function's call on one array in its short form and reads
    a reply of one array directly; a request in between, an error, another value and a reply to
    another request each take the general way, as any request's would."""
    x = np.arange(6.0).reshape(2, 3)

    def head(kind: bytes, rid: int, body: bytes, extra: bytes = b"") -> bytes:
        return struct.pack("<IcI", 5 + len(extra) + len(body), kind, rid) + extra + body

    replies = {
        "array": lambda rid: head(b"o", rid, wire.encode(2 * x)),
        "tuple": lambda rid: head(b"o", rid, wire.encode((x, 1))),
        "error": lambda rid: head(b"e", rid, wire.encode(("ValueError", "ValueError", "no"))),
        "request first": lambda rid: head(b"q", 77, wire.encode("q1"), b"\x05check") + head(b"o", rid, wire.encode(x)),
        "another id": lambda rid: head(b"o", rid + 1, wire.encode(x)),
    }
    for name, reply in replies.items():
        mine, theirs = socket.socketpair()
        served = []
        seen = []

        def act(sock: socket.socket, reply=reply, seen=seen, name=name) -> None:
            sock.settimeout(10)
            frame = sock.recv(1 << 16)
            seen.append(frame)
            sock.sendall(reply(struct.unpack_from("<I", frame, 5)[0]))
            if name == "request first":
                sock.recv(1 << 16)  # the reply to the request in between (no other case sends one to wait for)

        try:
            endpoint = wire.Endpoint(mine, lambda kind, body, served=served: served.append((kind, body)))
            thread = _peer(theirs, act)
            if name == "another id":
                with pytest.raises(wire.WireError):
                    endpoint.caller(3)(x)
                continue
            status, body = endpoint.caller(3)(x)
            thread.join(5)
            parsed = wire.Endpoint(theirs, lambda k, b: None)._parse(seen[0])
            assert parsed[:3] == ("req", parsed[1], "cb") and parsed[3][0] == 3 and not parsed[3][2]
            assert np.array_equal(parsed[3][1][0], x)
            if name == "error":
                assert (status, body) == ("err", ("ValueError", "ValueError", "no"))
                continue
            assert status == "ok"
            expected = {"array": 2 * x, "tuple": (x, 1), "request first": x}[name]
            if name == "tuple":
                assert np.array_equal(body[0], x) and body[1] == 1
            else:
                assert type(body) is np.ndarray and np.array_equal(body, expected)
                body[0, 0] = 42.0  # writeable, its own
            assert served == ([("check", "q1")] if name == "request first" else [])
        finally:
            mine.close()
            theirs.close()


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([b"q", b"o", b"e", b"c", b"x", b""]), st.binary(max_size=48), st.booleans())
def test_does_any_frame_end_a_wait_with_a_reply_or_wire_error(kind, rest, short):
    """Whatever frame arrives while a request waits (an empty one, a short call on a table's
    handle cut anywhere, a reply cut short), on either side: a reply or WireError, never another
    exception."""
    x = np.arange(3.0)
    payload = kind + rest
    if kind == b"c" and rest:
        payload = b"c" + struct.pack("<II", 1, 5) + (wire.encode(x) + rest)[: len(rest)]
    mine, theirs = socket.socketpair()
    try:
        endpoint = wire.Endpoint(mine, lambda k, b: None)
        endpoint.table_of = lambda hid: {wire.encode(x): wire.encode(2 * x)}.get if hid == 5 else None
        theirs.sendall(struct.pack("<I", len(payload)) + payload)
        theirs.shutdown(socket.SHUT_WR)  # then nothing more: a frame that is not the reply ends in ChannelClosed
        try:
            if short:
                endpoint.caller(5)(x)
            else:
                endpoint.request("names", False, wire.Deadline(5))
        except wire.WireError:
            pass
    finally:
        mine.close()
        theirs.close()


def test_does_a_callers_every_reply_arrive_as_sent_whatever_came_before():
    """A lent function's caller packs its frame's head once per dtype and shape and reads a reply
    like the one before it without parsing its head again: a reply of another shape, dtype or
    length of the same size, an error in between, or an input of another shape, each arrives as
    sent; a reply like the last but to another request is refused."""
    x = np.arange(6.0).reshape(2, 3)
    inputs = [x, x + 1, x.T, x.astype(np.float32), x[::-1], x, x]
    outputs = [
        2 * x,
        3 * x,
        (2 * x).reshape(3, 2),
        np.arange(6, dtype=np.int64).reshape(2, 3),
        ("ValueError", "ValueError", "no"),
        np.arange(3.0),
        2 * x,
    ]
    mine, theirs = socket.socketpair()
    received = []

    def act(sock: socket.socket) -> None:
        sock.settimeout(10)
        receiver = wire.Endpoint(sock, lambda k, b: None)
        for i, out in enumerate(outputs + [2 * x]):
            name, rid, kind, body = receiver.recv()
            received.append(body)
            if i == len(outputs):
                rid += 1  # like the last reply, to another request
            receiver.send(("err" if isinstance(out, tuple) else "ok", rid, out))

    try:
        endpoint = wire.Endpoint(mine, lambda k, b: None)
        call = endpoint.caller(4)
        _peer(theirs, act)
        for x_in, out in zip(inputs, outputs):
            status, body = call(x_in)
            if isinstance(out, tuple):
                assert (status, body) == ("err", out)
            else:
                assert status == "ok" and type(body) is np.ndarray and body.dtype == out.dtype
                assert body.shape == out.shape and np.array_equal(body, out)
                body[...] = 0  # writeable, its own
        for (hid, args, kwargs), x_in in zip(received, inputs):
            assert hid == 4 and not kwargs and args[0].dtype == x_in.dtype and np.array_equal(args[0], x_in)
        with pytest.raises(wire.WireError):
            call(x)
    finally:
        mine.close()
        theirs.close()
