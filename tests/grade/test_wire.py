import socket
import struct

import numpy as np
import pytest
from hypothesis import given, settings
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


def test_does_a_lent_functions_call_on_one_array_arrive_as_sent():
    """The short form of the hot request: (handle, (array,), {}) in, the same out; other bodies of
    the same request take the general form."""
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
