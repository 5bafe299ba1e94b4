import numpy as np
import pytest

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
