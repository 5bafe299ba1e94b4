"""The narrow channel between the trusted grader and a sandboxed submission.

Frames are length-prefixed and size-capped; their payload is a small tagged encoding of plain data
(None, bool, int, float, complex, str, bytes, lists, tuples, dicts, and numpy arrays or scalars of a
numeric or bool dtype). Nothing is ever unpickled. Decoded arrays are fresh base-class ndarrays, so
whatever class the sender's object had (say, an ndarray subclass whose comparisons are always true)
is gone on the receiving side. Two more tags carry references: to a function that lives on the
student's side, and to a callback that lives on the trusted side.

A checker calls the function it is lent about a thousand times per submission, each a round trip:
encoders and decoders are picked by exact type and by tag, an array is one header and its bytes,
and such a call (one array, no keywords) has a short form of its own.

This module is loaded by file path inside the sandbox, so it imports nothing from attnlab.
"""

from __future__ import annotations

import os
import select
import socket
import struct
import time
from typing import Any, Callable

import numpy as np

MAX_FRAME = 64 * 1024 * 1024
# Standard exception types that keep their type across the channel; others travel as their nearest
# standard base class (numpy's LinAlgError arrives as a ValueError-like StudentError, etc.). The
# receiving side rebuilds only these: an error's names come from the other side, which may lie.
STANDARD_ERRORS = frozenset(
    {
        "ArithmeticError",
        "AssertionError",
        "AttributeError",
        "BufferError",
        "EOFError",
        "FloatingPointError",
        "ImportError",
        "IndexError",
        "KeyError",
        "LookupError",
        "MemoryError",
        "ModuleNotFoundError",
        "NameError",
        "NotImplementedError",
        "OSError",
        "OverflowError",
        "RecursionError",
        "RuntimeError",
        "StopIteration",
        "TypeError",
        "UnboundLocalError",
        "UnicodeError",
        "ValueError",
        "ZeroDivisionError",
    }
)


def standard_base(e: BaseException) -> str:
    """The nearest of ``STANDARD_ERRORS`` that ``e`` is an instance of, or "" for none."""
    return next(
        (c.__name__ for c in type(e).__mro__ if c.__module__ == "builtins" and c.__name__ in STANDARD_ERRORS), ""
    )


MAX_DEPTH = 64
MAX_ITEMS = 1_000_000
MAX_INT_DIGITS = 4000
MAX_ALIKE_KEYS = 8  # keys of one dict with the same hash (equal numbers, or chosen to collide)
DTYPES = frozenset(
    np.dtype(t).str
    for t in (
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float16",
        "float32",
        "float64",
        "complex64",
        "complex128",
    )
)


class WireError(Exception):
    """A frame or value broke the protocol."""


class ChannelClosed(WireError):
    """The other side went away."""


class ChannelTimeout(Exception):
    """No reply before the deadline; ``what`` says which limit ran out ("cpu" or "wall")."""

    def __init__(self, what: str = "wall"):
        super().__init__(what)
        self.what = what


_CORES = max(os.cpu_count() or 1, 1)


class Deadline:
    """How long to wait for the other side: wall-clock seconds and, when ``cpu_now`` can measure
    the other side's CPU time, CPU seconds of its own. Time spent serving the other side's requests
    (``paused``) counts against neither, up to ``spare`` seconds in all (the CPU limit, or the wall
    limit without one): what the other side asks of this one is bounded too, and past that it
    counts as the other side's own waiting time."""

    def __init__(self, wall: float, cpu: float | None = None, cpu_now: Callable[[], float] | None = None):
        self.start = time.monotonic()
        self.end = self.start + wall
        self.cpu: float | None
        self.cpu_now: Callable[[], float] | None
        self.cpu, self.cpu_now = (cpu, cpu_now) if cpu is not None and cpu_now is not None else (None, None)
        self.cpu_start = self.cpu_now() if self.cpu_now else 0.0
        self.cores = _CORES
        self.spare = wall if self.cpu is None else min(wall, self.cpu)

    def left(self) -> float:
        """Seconds to wait before asking again; ChannelTimeout once a limit has run out."""
        now = time.monotonic()
        wall = self.end - now
        if wall <= 0:
            raise ChannelTimeout("wall")
        if self.cpu_now is None or self.cpu is None:
            return wall
        # the other side cannot use CPU faster than all cores at once: until that bound reaches the
        # limit there is nothing to measure (most requests end long before)
        bound = (now - self.start) * self.cores
        if bound < self.cpu:
            return max(0.005, min(wall, (self.cpu - bound) / self.cores))
        used = self.cpu_now() - self.cpu_start
        if used >= self.cpu:
            raise ChannelTimeout("cpu")
        return max(0.005, min(wall, (self.cpu - used) / self.cores, 0.25))

    def paused(self) -> "_Pause":
        return _Pause(self)

    def shift(self, seconds: float) -> None:
        """Count ``seconds`` (spent serving the other side) against neither limit, while ``spare``
        lasts."""
        seconds = min(seconds, self.spare)
        self.spare -= seconds
        self.end += seconds
        self.start += seconds


class _Pause:
    def __init__(self, deadline: Deadline):
        self.d = deadline

    def __enter__(self) -> None:
        self.wall = time.monotonic()

    def __exit__(self, *exc: object) -> None:
        self.d.shift(time.monotonic() - self.wall)


class Ref:
    """A function on the student's side, by name."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name


class Handle:
    """A callback on the trusted side, by number: all that crosses of it, whatever the function."""

    __slots__ = ("id",)

    def __init__(self, id: int):
        self.id = id


# ---- values --------------------------------------------------------------------------------
# Each value is a one-byte tag and its data, little-endian. Encoders and decoders are looked up by
# the exact type and by the tag: a probe's call and its answer cost a few microseconds each way.

_DTYPE_CODES = tuple(sorted(DTYPES))  # an array's dtype travels as its index here
_NP_DTYPES = tuple(np.dtype(name) for name in _DTYPE_CODES)
_CODE_OF = {dtype: i for i, dtype in enumerate(_NP_DTYPES)}  # by dtype: a dtype's .str is slow
_TAG_U32 = struct.Struct("<cI")
_TAG_I64 = struct.Struct("<cq")
_TAG_F64 = struct.Struct("<cd")
_TAG_C128 = struct.Struct("<cdd")
_TAG_CODE = struct.Struct("<cB")
_ARRAY_HEAD = [struct.Struct(f"<cBB{n}Q") for n in range(33)]  # tag, dtype code, ndim, shape
_SHAPES = [struct.Struct(f"<{n}Q") for n in range(33)]
_I64 = struct.Struct("<q")
_F64 = struct.Struct("<d")
_C128 = struct.Struct("<dd")
_LEN = struct.Struct("<I")
_MAX_NDIM = 32
_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1


def encode(value: Any, *, ref: Callable[[Any], Any] | None = None) -> bytes:
    """Encode plain data; ``ref(obj)`` may turn other objects into a Ref or Handle (or None)."""
    out: list[bytes] = []
    _enc(value, out, 0, ref)
    return b"".join(out)


def _enc(v: Any, out: list[bytes], depth: int, ref) -> None:
    fast = _ENCODERS.get(type(v))
    if fast is not None:
        fast(v, out, depth, ref)
    else:
        _enc_other(v, out, depth, ref)


def _e_none(v, out, depth, ref) -> None:
    out.append(b"N")


def _e_bool(v, out, depth, ref) -> None:
    out.append(b"T" if v else b"F")


def _e_int(v: int, out, depth, ref) -> None:
    if _I64_MIN <= v <= _I64_MAX:
        out.append(_TAG_I64.pack(b"j", v))
        return
    digits = int.__repr__(v).encode()
    if len(digits) > MAX_INT_DIGITS:
        raise WireError("integer too large")
    out.append(_TAG_U32.pack(b"i", len(digits)))
    out.append(digits)


def _e_float(v: float, out, depth, ref) -> None:
    out.append(_TAG_F64.pack(b"f", v))


def _e_complex(v: complex, out, depth, ref) -> None:
    out.append(_TAG_C128.pack(b"c", v.real, v.imag))


def _e_str(v: str, out, depth, ref) -> None:
    b = v.encode("utf-8", "surrogatepass")
    out.append(_TAG_U32.pack(b"s", len(b)))
    out.append(b)


def _e_bytes(v: bytes, out, depth, ref) -> None:
    out.append(_TAG_U32.pack(b"y", len(v)))
    out.append(v)


def _e_seq(v: list | tuple, out, depth, ref) -> None:
    if depth >= MAX_DEPTH:
        raise WireError("value nested too deeply")
    out.append(_TAG_U32.pack(b"l" if type(v) is list else b"t", len(v)))
    depth += 1
    for item in v:
        fast = _ENCODERS.get(type(item))
        if fast is not None:
            fast(item, out, depth, ref)
        else:
            _enc_other(item, out, depth, ref)


def _e_dict(v: dict, out, depth, ref) -> None:
    if depth >= MAX_DEPTH:
        raise WireError("value nested too deeply")
    out.append(_TAG_U32.pack(b"d", len(v)))
    depth += 1
    for key, item in v.items():
        _enc(key, out, depth, ref)
        _enc(item, out, depth, ref)


def _e_array(v: np.ndarray, out, depth, ref) -> None:
    code = _CODE_OF.get(v.dtype)
    if code is None or v.ndim > _MAX_NDIM:
        _enc_other(v, out, depth, ref)
        return
    out.append(_ARRAY_HEAD[v.ndim].pack(b"a", code, v.ndim, *v.shape))
    out.append(v.tobytes())  # C order, whatever the layout


def _e_ref(v: Ref, out, depth, ref) -> None:
    _e_str(v.name, out, depth, ref)
    out[-2] = _TAG_U32.pack(b"R", len(out[-1]))


def _e_handle(v: Handle, out, depth, ref) -> None:
    out.append(_TAG_U32.pack(b"K", v.id))


def _enc_other(v: Any, out: list[bytes], depth: int, ref) -> None:
    """Subclasses of the plain types (as their base class: an overridden method never runs here),
    numpy scalars, arrays of another byte order, and what ``ref`` replaces."""
    if isinstance(v, np.ndarray):
        arr = np.asarray(v).view(np.ndarray)
        if arr.dtype not in _CODE_OF:
            native = arr.dtype.newbyteorder("=")
            if native not in _CODE_OF:
                raise WireError(f"arrays of dtype {arr.dtype} cannot be sent")
            arr = arr.astype(native)
        if arr.ndim > _MAX_NDIM:
            raise WireError("too many dimensions")
        _e_array(arr, out, depth, ref)
    elif isinstance(v, np.generic):
        arr = np.asarray(v).reshape(())
        code = _CODE_OF.get(arr.dtype)
        if code is None:
            raise WireError(f"numpy scalars of type {type(v).__name__} cannot be sent")
        out.append(_TAG_CODE.pack(b"g", code))
        out.append(arr.tobytes())
    elif isinstance(v, bool):
        out.append(b"T" if bool.__bool__(v) else b"F")
    elif isinstance(v, int):
        _e_int(int.__index__(v), out, depth, ref)
    elif isinstance(v, float):
        _e_float(float.__float__(v), out, depth, ref)
    elif isinstance(v, complex):
        _e_complex(complex(v), out, depth, ref)  # complex.__complex__ is 3.11+
    elif isinstance(v, str):
        _e_str(str.__str__(v), out, depth, ref)
    elif isinstance(v, (bytes, bytearray)):
        _e_bytes(bytes(v), out, depth, ref)
    elif isinstance(v, (list, tuple)):
        _e_seq(list(list.__iter__(v)) if isinstance(v, list) else tuple(tuple.__iter__(v)), out, depth, ref)
    elif isinstance(v, dict):
        _e_dict(dict(dict.items(v)), out, depth, ref)
    else:
        replaced = ref(v) if ref is not None else None
        if replaced is None:
            raise WireError(f"an object of type {type(v).__name__} cannot be sent")
        _enc(replaced, out, depth, ref)


_ENCODERS: dict[type, Callable[..., None]] = {
    type(None): _e_none,
    bool: _e_bool,
    int: _e_int,
    float: _e_float,
    complex: _e_complex,
    str: _e_str,
    bytes: _e_bytes,
    list: _e_seq,
    tuple: _e_seq,
    dict: _e_dict,
    np.ndarray: _e_array,
    Ref: _e_ref,
    Handle: _e_handle,
}


def decode(data: bytes) -> Any:
    """Decode and validate; raises WireError on anything malformed, whatever the bytes."""
    return _decode(bytes(data), 0)


def _decode(buf: bytes, start: int) -> Any:
    try:
        value, pos = _value(buf, start, 0, [0])
    except WireError:
        raise
    except Exception as e:  # noqa: BLE001 - no input may end the receiver in another way
        raise WireError(f"malformed value ({type(e).__name__})") from None
    if pos != len(buf):
        raise WireError("trailing bytes after the value")
    return value


# Each reader takes the buffer, the position after the tag, the depth and the count of items so
# far (a list of one) and returns the value and the position after it. A read past the end raises
# (struct.error, IndexError), which ``_decode`` turns into WireError like every other failure.


def _value(buf: bytes, pos: int, depth: int, items: list) -> tuple[Any, int]:
    read = _READERS.get(buf[pos])
    if read is None:
        raise WireError(f"unknown tag {bytes([buf[pos]])!r}")
    return read(buf, pos + 1, depth, items)


def _count(buf: bytes, pos: int, depth: int, items: list) -> int:
    if depth >= MAX_DEPTH:
        raise WireError("value nested too deeply")
    n = _LEN.unpack_from(buf, pos)[0]
    items[0] += n
    if items[0] > MAX_ITEMS:
        raise WireError("too many items")
    return n


def _take(buf: bytes, pos: int) -> tuple[bytes, int]:
    """A length and that many bytes."""
    end = pos + 4 + _LEN.unpack_from(buf, pos)[0]
    if end > len(buf):
        raise WireError("truncated value")
    return buf[pos + 4 : end], end


def _r_text(buf: bytes, pos: int, depth: int, items: list) -> tuple[str, int]:
    data, pos = _take(buf, pos)
    try:
        return str(data, "utf-8", "surrogatepass"), pos
    except UnicodeDecodeError as e:
        raise WireError("invalid text") from e


def _r_bytes(buf: bytes, pos: int, depth: int, items: list) -> tuple[bytes, int]:
    return _take(buf, pos)


def _r_int(buf: bytes, pos: int, depth: int, items: list) -> tuple[int, int]:
    digits, pos = _take(buf, pos)
    if len(digits) > MAX_INT_DIGITS or not digits.lstrip(b"-").isdigit():
        raise WireError("invalid integer")
    return int(digits), pos


def _r_i64(buf: bytes, pos: int, depth: int, items: list) -> tuple[int, int]:
    return _I64.unpack_from(buf, pos)[0], pos + 8


def _r_float(buf: bytes, pos: int, depth: int, items: list) -> tuple[float, int]:
    return _F64.unpack_from(buf, pos)[0], pos + 8


def _r_complex(buf: bytes, pos: int, depth: int, items: list) -> tuple[complex, int]:
    re, im = _C128.unpack_from(buf, pos)
    return complex(re, im), pos + 16


def _r_items(buf: bytes, pos: int, depth: int, items: list) -> tuple[list, int]:
    n = _count(buf, pos, depth, items)
    pos += 4
    depth += 1
    out = []
    for _ in range(n):
        read = _READERS.get(buf[pos])
        if read is None:
            raise WireError(f"unknown tag {bytes([buf[pos]])!r}")
        value, pos = read(buf, pos + 1, depth, items)
        out.append(value)
    return out, pos


def _r_tuple(buf: bytes, pos: int, depth: int, items: list) -> tuple[tuple, int]:
    out, pos = _r_items(buf, pos, depth, items)
    return tuple(out), pos


def _r_dict(buf: bytes, pos: int, depth: int, items: list) -> tuple[dict, int]:
    out = {}
    n = _count(buf, pos, depth, items)
    pos += 4
    # keys that hash alike make each insertion probe every one before it (quadratic, under no
    # deadline); a str's hash is keyed at random per process, but the hashes of numbers and tuples
    # are not, so the sender could choose them: past a few of one hash, the dict is refused
    alike: dict[int, int] = {}
    for _ in range(n):
        key, pos = _value(buf, pos, depth + 1, items)
        if type(key) is not str:
            if not isinstance(key, (int, float, bool, type(None), tuple)):
                raise WireError("invalid dict key")
            try:
                same = alike[hash(key)] = alike.get(hash(key), 0) + 1
            except TypeError as e:
                raise WireError("invalid dict key") from e
            if same > MAX_ALIKE_KEYS:
                raise WireError("dict keys that hash alike")
        value, pos = _value(buf, pos, depth + 1, items)
        try:
            out[key] = value
        except TypeError as e:
            raise WireError("invalid dict key") from e
    return out, pos


def _dtype_at(buf: bytes, pos: int) -> np.dtype:
    code = buf[pos]
    if code >= len(_NP_DTYPES):
        raise WireError("dtype not allowed")
    return _NP_DTYPES[code]


def _r_array(buf: bytes, pos: int, depth: int, items: list) -> tuple[np.ndarray, int]:
    dtype = _dtype_at(buf, pos)
    ndim = buf[pos + 1]
    if ndim > _MAX_NDIM:
        raise WireError("too many dimensions")
    shape = _SHAPES[ndim].unpack_from(buf, pos + 2)
    pos += 2 + 8 * ndim
    size = 1
    for n in shape:
        if n > MAX_FRAME:
            raise WireError("array data does not match its shape")
        size *= n
    end = pos + size * dtype.itemsize
    if end > len(buf):
        raise WireError("array data does not match its shape")
    return np.ndarray(shape, dtype, buf, pos).copy(), end  # a fresh, writeable array of its own


def _r_scalar(buf: bytes, pos: int, depth: int, items: list) -> tuple[np.generic, int]:
    dtype = _dtype_at(buf, pos)
    end = pos + 1 + dtype.itemsize
    if end > len(buf):
        raise WireError("truncated value")
    return np.frombuffer(buf[pos + 1 : end], dtype=dtype)[0], end


def _r_ref(buf: bytes, pos: int, depth: int, items: list) -> tuple[Ref, int]:
    name, pos = _r_text(buf, pos, depth, items)
    return Ref(name), pos


def _r_handle(buf: bytes, pos: int, depth: int, items: list) -> tuple[Handle, int]:
    return Handle(_LEN.unpack_from(buf, pos)[0]), pos + 4


_READERS: dict[int, Callable[[bytes, int, int, list], tuple[Any, int]]] = {
    ord("N"): lambda buf, pos, depth, items: (None, pos),
    ord("T"): lambda buf, pos, depth, items: (True, pos),
    ord("F"): lambda buf, pos, depth, items: (False, pos),
    ord("j"): _r_i64,
    ord("i"): _r_int,
    ord("f"): _r_float,
    ord("c"): _r_complex,
    ord("s"): _r_text,
    ord("y"): _r_bytes,
    ord("l"): _r_items,
    ord("t"): _r_tuple,
    ord("d"): _r_dict,
    ord("a"): _r_array,
    ord("g"): _r_scalar,
    ord("R"): _r_ref,
    ord("K"): _r_handle,
}


_ARRAY = ord("a")


def _array_at(buf: bytes, pos: int) -> np.ndarray:
    """The array whose header (after its tag) starts at ``pos`` and whose data ends ``buf``: what
    most messages carry, decoded without the general decoder's dispatch."""
    try:
        dtype, ndim = _NP_DTYPES[buf[pos]], buf[pos + 1]
        shape = _SHAPES[ndim].unpack_from(buf, pos + 2)
    except (IndexError, struct.error):
        raise WireError("malformed array") from None
    start = pos + 2 + 8 * ndim
    size = 1
    for n in shape:
        if n > MAX_FRAME:
            raise WireError("array data does not match its shape")
        size *= n
    if start + size * dtype.itemsize != len(buf):
        raise WireError("array data does not match its shape")
    try:
        return np.ndarray(shape, dtype, buf, start).copy()
    except (ValueError, MemoryError) as e:  # a shape with a 0 whose other sides overflow: "array is too big"
        raise WireError(f"malformed array ({type(e).__name__})") from None


# ---- frames and requests ----------------------------------------------------------------------


_HEAD = struct.Struct("<cI")  # a message's type and id
_KINDS = {"req": b"q", "ok": b"o", "err": b"e"}
_NAMES = {ord(tag): name for name, tag in _KINDS.items()} | {ord("c"): "cb"}
_SHORT = ord("c")
_OK = ord("o")
# a short "cb" (length, type, id, handle number) with its array's header; a table's reply's head
_SHORT_HEAD = [struct.Struct(f"<IcIIcBB{n}Q") for n in range(_MAX_NDIM + 1)]
_REPLY_HEAD = struct.Struct("<Ic4s")
_DONTWAIT = socket.MSG_DONTWAIT
# how long one blocking receive waits before the deadline and the watched process are looked at again
SLICE = 0.02
_CHECK_EVERY = 64  # frames received back to back between two looks at the deadline


class Endpoint:
    """Request/reply over a stream socket where each side serves the other's requests while it waits.

    Frames are a 4-byte length and a message: ``("req", id, kind, body)``, ``("ok", id, body)`` or
    ``("err", id, body)``, as a type byte, the id, for a request the kind (a length byte and ASCII),
    and the body, an encoded value. ``serve(kind, body)`` answers an incoming request: it returns
    the reply body or raises. ``encode_ref`` turns objects that are not plain data into a Ref or
    Handle. With a Deadline, every wait and every send is bounded; ``watch`` (a pidfd) makes the
    other process's exit count as the channel closing, even if a process it forked holds the socket.

    Waiting is one blocking receive (no ``select`` before each frame): with a Deadline or ``watch``,
    the socket's receive timeout is ``SLICE``, after which both are looked at again; the deadline
    is also looked at on a frame that arrives in parts and every ``_CHECK_EVERY`` frames that
    arrive back to back (the socket comes first while it has data, as it always did).
    """

    def __init__(
        self,
        sock: socket.socket,
        serve: Callable[[str, Any], Any],
        encode_ref: Callable[[Any], Any] | None = None,
        describe_error: Callable[[BaseException], Any] | None = None,
    ):
        self.sock = sock
        self.serve_one = serve
        self.encode_ref = encode_ref
        self.describe_error = describe_error or (lambda e: (type(e).__name__, "", str(e)[:500]))
        self.next_id = 1
        self.depth = 0
        self.watch: int | None = None
        self.buf = bytearray()  # what has arrived beyond the last whole frame
        # handle number -> a lent function's known answers, as a look-up from an array's encoding to
        # the encoding of the reply (None for an input it does not know; ``table_of`` gives None for
        # a number under which nothing is lent): a "cb" in the short form on one of those inputs is
        # answered without decoding it. ``tables`` caches the look-ups ``table_of`` gave; its owner
        # clears it when the handles it knows stop being valid.
        self.table_of: Callable[[int], Callable[[bytes], bytes | None] | None] | None = None
        self.tables: dict[int, Callable[[bytes], bytes | None]] = {}
        self.deadline: Deadline | None = None
        self.sliced = False  # whether the socket's receive timeout is SLICE

    def send(self, msg: tuple) -> None:
        """Send ("req", id, kind, body), ("ok", id, body) or ("err", id, body)."""
        body = msg[-1]
        # (the hot request, a checker calling its probe on one array, has a short form of its own:
        # ``caller`` builds it)
        out: list[bytes] = [b"", _HEAD.pack(_KINDS[msg[0]], msg[1])]
        if msg[0] == "req":
            kind = msg[2].encode()
            out.append(bytes([len(kind)]))
            out.append(kind)
        _enc(body, out, 0, self.encode_ref)
        size = sum(map(len, out))
        if size > MAX_FRAME:
            raise WireError(f"message of {size} bytes is over the {MAX_FRAME}-byte limit")
        out[0] = _LEN.pack(size)
        self._send_bytes(b"".join(out))

    def _send_bytes(self, data: bytes) -> None:
        if self.deadline is None:
            self.sock.sendall(data)
            return
        try:
            sent = self.sock.send(data, _DONTWAIT)  # a small message goes at once
        except (BlockingIOError, InterruptedError):
            sent = 0
        except OSError as e:
            raise ChannelClosed(str(e)) from e
        if sent == len(data):
            return
        view = memoryview(data)[sent:]
        while view:
            try:
                view = view[self.sock.send(view[: 1 << 20], _DONTWAIT) :]
                continue
            except (BlockingIOError, InterruptedError):
                pass
            except OSError as e:
                raise ChannelClosed(str(e)) from e
            select.select([], [self.sock], [], self.deadline.left())  # full: wait, within the deadline

    def _slice(self) -> None:
        """Give every receive a timeout of SLICE (once per socket): waits stay bounded."""
        if not self.sliced:
            self.sock.settimeout(None)  # the kernel's timeout, in one blocking call
            seconds = int(SLICE)
            self.sock.setsockopt(
                socket.SOL_SOCKET,
                socket.SO_RCVTIMEO,
                struct.pack("@ll", seconds, int((SLICE - seconds) * 1e6)),
            )
            self.sliced = True

    def _look(self) -> None:
        """ChannelTimeout past the deadline, ChannelClosed once the watched process has exited."""
        if self.deadline is not None:
            self.deadline.left()
        if self.watch is not None and select.select([self.watch], [], [], 0)[0]:
            raise ChannelClosed("the process exited")

    def _frame(self) -> bytes:
        """The next frame, from its 4-byte length on, reading as much as is available at a time
        (one syscall per message)."""
        if not self.sliced and (self.deadline is not None or self.watch is not None):
            self._slice()
        while True:
            buf = self.buf
            if len(buf) >= 4:
                n = _LEN.unpack_from(buf)[0]
                if n > MAX_FRAME:
                    raise WireError(f"message of {n} bytes is over the {MAX_FRAME}-byte limit")
                if len(buf) >= 4 + n:
                    frame = bytes(buf[: 4 + n])
                    del buf[: 4 + n]
                    return frame
            # 64 KiB: under malloc's mmap threshold, so no mmap per message
            try:
                chunk = self.sock.recv(1 << 16)
            except (BlockingIOError, InterruptedError, TimeoutError):
                self._look()  # SLICE passed with nothing
                continue
            except OSError as e:
                raise ChannelClosed(str(e)) from e
            if not chunk:
                raise ChannelClosed("the other side closed the channel")
            if not buf and len(chunk) >= 4 and len(chunk) == 4 + _LEN.unpack_from(chunk)[0]:
                return chunk  # the whole frame and nothing else: the usual case, no copy
            buf += chunk
            if self.deadline is not None:
                self.deadline.left()  # a frame in parts (or a trickle): still within the deadline

    def recv(self) -> tuple:
        return self._parse(self._frame())

    def _parse(self, frame: bytes) -> tuple:
        """The message in ``frame``; WireError for anything malformed, whatever the bytes: a reply the
        other side crafted is that side's failure, never the receiver's."""
        try:
            return self._message(frame)
        except WireError:
            raise
        except Exception as e:  # noqa: BLE001 - no frame may end the receiver in another way
            raise WireError(f"malformed message ({type(e).__name__})") from None

    def _message(self, frame: bytes) -> tuple:
        if len(frame) < 10 or frame[4] not in _NAMES:  # a length, a type, an id and at least a tag
            raise WireError("malformed message")
        tag, rid = _HEAD.unpack_from(frame, 4)
        name = _NAMES[frame[4]]
        if name in ("ok", "err"):
            return name, rid, _array_at(frame, 10) if frame[9] == _ARRAY else _decode(frame, 9)
        if name == "cb":
            if len(frame) < 14 or frame[13] != _ARRAY:
                raise WireError("malformed message")
            return "req", rid, "cb", (_LEN.unpack_from(frame, 9)[0], (_array_at(frame, 14),), {})
        end = 10 + frame[9]
        if end > len(frame):
            raise WireError("malformed message")
        try:
            kind = frame[10:end].decode("ascii")
        except UnicodeDecodeError:
            raise WireError("malformed message") from None
        return name, rid, kind, _decode(frame, end)

    def request(self, kind: str, body: Any, deadline: Deadline | None = None) -> tuple[str, Any]:
        """Send a request and wait for its reply, serving the other side's requests meanwhile (the
        time they take is paused); returns ("ok", body) or ("err", body)."""
        rid = self.next_id
        self.next_id += 1
        outer, self.deadline = self.deadline, deadline
        try:
            self.send(("req", rid, kind, body))
            return self._reply(rid, None)
        finally:
            self.deadline = outer

    def caller(self, hid: int) -> Callable[[np.ndarray], tuple[str, Any]]:
        """``request("cb", (hid, (x,), {}))`` for one array ``x``, the hot request of the student's
        side (a checker calling its probe), made once per lent function: the call goes in its short
        form and a reply of one array is read without the general decoder; anything else goes the
        general way. A checker calls its probe on arrays of one dtype and shape, and the probe
        answers in one dtype and shape: what those calls share (the frame's head but for its id,
        the reply's head) is packed or read once, and only checked on the calls that follow."""
        if not 0 <= hid < 2**32:
            return lambda x: self.request("cb", (hid, (x,), {}))
        sock, handle = self.sock, _LEN.pack(hid)
        # the last input's dtype and shape, and its frame's head: the part before the id, the part after
        in_dtype: np.dtype | None = None
        in_shape: tuple = ()
        in_size = in_tail = b""
        # the last reply's head after its id, its dtype, shape, where its data starts and the frame's length
        out_head = b"?"
        out_dtype: np.dtype | None = None
        out_shape: tuple = ()
        out_start = out_length = 0

        def call(x: np.ndarray) -> tuple[str, Any]:
            nonlocal in_dtype, in_shape, in_size, in_tail, out_head, out_dtype, out_shape, out_start, out_length
            if x.dtype is not in_dtype or x.shape != in_shape:
                code = _CODE_OF.get(x.dtype)
                ndim = x.ndim
                size = 12 + 8 * ndim + x.nbytes
                if code is None or ndim > _MAX_NDIM or size > MAX_FRAME:
                    return self.request("cb", (hid, (x,), {}))  # refused there, or sent the general way
                in_dtype, in_shape = x.dtype, x.shape
                in_size = _LEN.pack(size) + b"c"  # the length, then the type
                in_tail = handle + _ARRAY_HEAD[ndim].pack(b"a", code, ndim, *in_shape)
            if self.deadline is not None:
                return self.request("cb", (hid, (x,), {}))
            rid = self.next_id
            self.next_id = rid + 1
            ident = _LEN.pack(rid)
            sock.sendall(b"".join((in_size, ident, in_tail, x.tobytes())))  # C order, whatever the layout
            frame = self._frame()
            if (
                len(frame) == out_length
                and frame.startswith(out_head, 9)
                and frame[4] == _OK
                and frame.startswith(ident, 5)
            ):
                return "ok", np.ndarray(out_shape, out_dtype, frame, out_start).copy()  # a fresh array of its own
            if len(frame) >= 12 and frame[4] == _OK and frame[9] == _ARRAY and frame.startswith(ident, 5):
                body = _array_at(frame, 10)
                out_dtype, out_shape, out_length = body.dtype, body.shape, len(frame)
                out_start = out_length - body.nbytes
                out_head = frame[9:out_start]
                return "ok", body
            return self._reply(rid, frame)

        return call

    def _reply(self, rid: int, frame: bytes | None) -> tuple[str, Any]:
        """Frames until the reply to request ``rid`` (starting with ``frame``, if one is in hand),
        serving the other side's requests meanwhile; a short "cb" whose input is in a table is
        answered from it here, with the least work per frame."""
        deadline = self.deadline
        tables, send, clock = self.tables, self.sock.send, time.monotonic
        frames = 0
        while True:
            if frame is None:
                frame = self._frame()
            frames += 1
            if frames == _CHECK_EVERY:
                frames = 0
                if deadline is not None:
                    deadline.left()  # frames that keep coming must not outlast the deadline either
            if len(frame) >= 14 and frame[4] == _SHORT and self.table_of is not None:
                # a probe's call on one array: the reply straight from its input's bytes
                start = clock()
                hid = _LEN.unpack_from(frame, 9)[0]
                table = tables.get(hid)
                if table is None:
                    table = self.table_of(hid)
                    if table is not None:
                        tables[hid] = table
                answer = table(frame[13:]) if table is not None else None
                if answer is not None:
                    data = _REPLY_HEAD.pack(5 + len(answer), b"o", frame[5:9]) + answer
                    if deadline is None:
                        self.sock.sendall(data)
                    else:
                        try:
                            sent = send(data, _DONTWAIT)
                        except (BlockingIOError, InterruptedError):
                            sent = 0
                        except OSError as e:
                            raise ChannelClosed(str(e)) from e
                        if sent < len(data):
                            self._send_bytes(data[sent:])
                        deadline.shift(clock() - start)
                    frame = None
                    continue
            msg = self._parse(frame)
            frame = None
            if msg[0] == "req" and len(msg) == 4:
                if deadline is None:
                    reply = self.answer(msg)
                else:
                    with deadline.paused():
                        reply = self.answer(msg)
                    deadline.left()  # serving may have used up what the pause spares
                self.reply(reply)
            elif msg[0] in ("ok", "err") and msg[1] == rid and len(msg) == 3:
                return msg[0], msg[2]
            else:
                raise WireError("unexpected message")

    def answer(self, msg: tuple) -> tuple:
        """The reply to one incoming request."""
        _, rid, kind, body = msg
        if self.depth >= 32:
            return ("err", rid, ("RecursionError", "RecursionError", "calls nested too deeply"))
        self.depth += 1
        try:
            return ("ok", rid, self.serve_one(kind, body))
        except (ChannelClosed, ChannelTimeout):
            raise
        except BaseException as e:  # noqa: BLE001 - every failure becomes a reply
            return ("err", rid, self.describe_error(e))
        finally:
            self.depth -= 1

    def reply(self, reply: tuple) -> None:
        try:
            self.send(reply)
        except WireError as e:
            self.send(("err", reply[1], ("TypeError", "TypeError", str(e)[:500])))

    def serve_forever(self) -> None:
        while True:
            msg = self.recv()
            if msg[0] != "req" or len(msg) != 4:
                raise WireError("unexpected message")
            self.reply(self.answer(msg))
