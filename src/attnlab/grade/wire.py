"""The narrow channel between the trusted grader and a sandboxed submission.

Frames are length-prefixed and size-capped; their payload is a small tagged encoding of plain data
(None, bool, int, float, complex, str, bytes, lists, tuples, dicts, and numpy arrays or scalars of a
numeric or bool dtype). Nothing is ever unpickled. Decoded arrays are fresh base-class ndarrays, so
whatever class the sender's object had (say, an ndarray subclass whose comparisons are always true)
is gone on the receiving side. Two more tags carry references: to a function that lives on the
student's side, and to a callback that lives on the trusted side.

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
MAX_DEPTH = 64
MAX_ITEMS = 1_000_000
MAX_INT_DIGITS = 4000
DTYPES = frozenset(
    np.dtype(t).str
    for t in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
              "float16", "float32", "float64", "complex64", "complex128")
)

_U32 = struct.Struct(">I")
_U64 = struct.Struct(">Q")
_F64 = struct.Struct("<d")


class WireError(Exception):
    """A frame or value broke the protocol."""


class ChannelClosed(WireError):
    """The other side went away."""


class ChannelTimeout(Exception):
    """No reply before the deadline."""


class Ref:
    """A function on the student's side, by name."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name


class Probe:
    """A function of the tests' shipped probe module, by name, with the arguments bound to it
    (a ``functools.partial``): the student's side rebuilds and runs it, with no round trips."""

    __slots__ = ("name", "args", "kwargs")

    def __init__(self, name: str, args: tuple, kwargs: dict):
        self.name, self.args, self.kwargs = name, args, kwargs


class Handle:
    """A callback on the trusted side, by number."""

    __slots__ = ("id",)

    def __init__(self, id: int):
        self.id = id


# ---- values --------------------------------------------------------------------------------

def encode(value: Any, *, ref: Callable[[Any], Any] | None = None) -> bytes:
    """Encode plain data; ``ref(obj)`` may turn other objects into a Ref, Probe or Handle (or None)."""
    out: list[bytes] = []
    _enc(value, out, 0, ref)
    return b"".join(out)


def _enc_str(s: str, out: list[bytes]) -> None:
    b = s.encode("utf-8", "surrogatepass")
    out.append(_U32.pack(len(b)))
    out.append(b)


def _enc(v: Any, out: list[bytes], depth: int, ref) -> None:
    if depth > MAX_DEPTH:
        raise WireError("value nested too deeply")
    if v is None:
        out.append(b"N")
    elif v is True or v is False:
        out.append(b"T" if v else b"F")
    elif isinstance(v, Ref):
        out.append(b"R")
        _enc_str(v.name, out)
    elif isinstance(v, Handle):
        out.append(b"K" + _U32.pack(v.id))
    elif isinstance(v, Probe):
        out.append(b"P")
        _enc_str(v.name, out)
        _enc(tuple(v.args), out, depth + 1, ref)
        _enc(dict(v.kwargs), out, depth + 1, ref)
    elif isinstance(v, np.ndarray):
        arr = np.ascontiguousarray(np.asarray(v).view(np.ndarray))
        if arr.dtype.str not in DTYPES:
            native = arr.dtype.newbyteorder("=")
            if native.str not in DTYPES:
                raise WireError(f"arrays of dtype {arr.dtype} cannot be sent")
            arr = arr.astype(native)
        data = arr.tobytes()
        out.append(b"a")
        _enc_str(arr.dtype.str, out)
        out.append(bytes([arr.ndim]))
        out.extend(_U64.pack(int(n)) for n in arr.shape)
        out.append(_U64.pack(len(data)))
        out.append(data)
    elif isinstance(v, np.generic):
        arr = np.asarray(v).reshape(())
        if arr.dtype.str not in DTYPES:
            raise WireError(f"numpy scalars of type {type(v).__name__} cannot be sent")
        out.append(b"g")
        _enc_str(arr.dtype.str, out)
        data = arr.tobytes()
        out.append(_U32.pack(len(data)))
        out.append(data)
    elif isinstance(v, bool):
        out.append(b"T" if bool.__bool__(v) else b"F")
    elif isinstance(v, int):
        digits = int.__repr__(v)
        if len(digits) > MAX_INT_DIGITS:
            raise WireError("integer too large")
        out.append(b"i")
        _enc_str(digits, out)
    elif isinstance(v, float):
        out.append(b"f" + _F64.pack(float.__float__(v)))
    elif isinstance(v, complex):
        c = complex(v)  # complex.__complex__ is 3.11+
        out.append(b"c" + _F64.pack(c.real) + _F64.pack(c.imag))
    elif isinstance(v, str):
        out.append(b"s")
        _enc_str(str.__str__(v), out)
    elif isinstance(v, (bytes, bytearray)):
        b = bytes(v)
        out.append(b"y" + _U32.pack(len(b)))
        out.append(b)
    elif isinstance(v, (list, tuple)):
        items = list.__iter__(v) if isinstance(v, list) else tuple.__iter__(v)
        items = list(items)
        out.append((b"l" if isinstance(v, list) else b"t") + _U32.pack(len(items)))
        for item in items:
            _enc(item, out, depth + 1, ref)
    elif isinstance(v, dict):
        pairs = list(dict.items(v))
        out.append(b"d" + _U32.pack(len(pairs)))
        for k, item in pairs:
            _enc(k, out, depth + 1, ref)
            _enc(item, out, depth + 1, ref)
    else:
        replaced = ref(v) if ref is not None else None
        if replaced is None:
            raise WireError(f"an object of type {type(v).__name__} cannot be sent")
        _enc(replaced, out, depth, ref)


def decode(data: bytes) -> Any:
    """Decode and validate; raises WireError on anything malformed."""
    dec = _Decoder(memoryview(data))
    value = dec.value(0)
    if dec.pos != len(data):
        raise WireError("trailing bytes after the value")
    return value


class _Decoder:
    def __init__(self, buf: memoryview):
        self.buf = buf
        self.pos = 0
        self.items = 0

    def take(self, n: int) -> memoryview:
        if n < 0 or self.pos + n > len(self.buf):
            raise WireError("truncated value")
        chunk = self.buf[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def u32(self) -> int:
        return _U32.unpack(self.take(4))[0]

    def u64(self) -> int:
        return _U64.unpack(self.take(8))[0]

    def text(self) -> str:
        try:
            return str(self.take(self.u32()), "utf-8", "surrogatepass")
        except UnicodeDecodeError as e:
            raise WireError("invalid text") from e

    def count(self) -> int:
        n = self.u32()
        self.items += n
        if self.items > MAX_ITEMS:
            raise WireError("too many items")
        return n

    def value(self, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise WireError("value nested too deeply")
        tag = bytes(self.take(1))
        if tag == b"N":
            return None
        if tag == b"T":
            return True
        if tag == b"F":
            return False
        if tag == b"i":
            digits = self.text()
            if len(digits) > MAX_INT_DIGITS or not digits.lstrip("-").isdigit() or not digits.isascii():
                raise WireError("invalid integer")
            return int(digits)
        if tag == b"f":
            return _F64.unpack(self.take(8))[0]
        if tag == b"c":
            return complex(_F64.unpack(self.take(8))[0], _F64.unpack(self.take(8))[0])
        if tag == b"s":
            return self.text()
        if tag == b"y":
            return bytes(self.take(self.u32()))
        if tag in (b"l", b"t"):
            items = [self.value(depth + 1) for _ in range(self.count())]
            return items if tag == b"l" else tuple(items)
        if tag == b"d":
            out = {}
            for _ in range(self.count()):
                key = self.value(depth + 1)
                if not isinstance(key, (str, int, float, bool, type(None), tuple)):
                    raise WireError("invalid dict key")
                try:
                    out[key] = self.value(depth + 1)
                except TypeError as e:
                    raise WireError("invalid dict key") from e
            return out
        if tag == b"a":
            dtype = self.dtype()
            ndim = self.take(1)[0]
            if ndim > 32:
                raise WireError("too many dimensions")
            shape = tuple(self.u64() for _ in range(ndim))
            nbytes = self.u64()
            size = 1
            for n in shape:
                size *= n
            if size * dtype.itemsize != nbytes:
                raise WireError("array data does not match its shape")
            return np.frombuffer(self.take(nbytes), dtype=dtype).reshape(shape).copy()
        if tag == b"g":
            dtype = self.dtype()
            data = self.take(self.u32())
            if len(data) != dtype.itemsize:
                raise WireError("scalar data does not match its dtype")
            return np.frombuffer(data, dtype=dtype)[0]
        if tag == b"R":
            return Ref(self.text())
        if tag == b"K":
            return Handle(self.u32())
        if tag == b"P":
            name, args, kwargs = self.text(), self.value(depth + 1), self.value(depth + 1)
            if not (name.isidentifier() and isinstance(args, tuple) and isinstance(kwargs, dict)
                    and all(isinstance(k, str) for k in kwargs)):
                raise WireError("invalid probe")
            return Probe(name, args, kwargs)
        raise WireError(f"unknown tag {tag!r}")

    def dtype(self) -> np.dtype:
        name = self.text()
        if name not in DTYPES:
            raise WireError(f"dtype {name!r} is not allowed")
        return np.dtype(name)


# ---- frames --------------------------------------------------------------------------------

def send_frame(sock: socket.socket, payload: bytes) -> None:
    if len(payload) > MAX_FRAME:
        raise WireError(f"message of {len(payload)} bytes is over the {MAX_FRAME}-byte limit")
    sock.sendall(_U32.pack(len(payload)) + payload)


def recv_frame(sock: socket.socket, deadline: float | None = None, watch: int | None = None) -> bytes:
    """One frame; ``watch`` is a pidfd: its process exiting counts as the channel closing (even if
    a process it forked still holds the other end)."""
    head = _recv_exact(sock, 4, deadline, watch)
    n = _U32.unpack(head)[0]
    if n > MAX_FRAME:
        raise WireError(f"message of {n} bytes is over the {MAX_FRAME}-byte limit")
    return _recv_exact(sock, n, deadline, watch)


def _wait(sock: socket.socket, deadline: float | None, watch: int | None) -> None:
    """Until ``sock`` is readable: ChannelTimeout past the deadline, ChannelClosed when the watched
    process (a pidfd) exits first."""
    if deadline is None and watch is None:
        return
    left = None if deadline is None else deadline - time.monotonic()
    if left is not None and left <= 0:
        raise ChannelTimeout()
    ready = select.select([sock] + ([watch] if watch is not None else []), [], [], left)[0]
    if not ready:
        raise ChannelTimeout()
    if sock not in ready:
        raise ChannelClosed("the process exited")


def _recv_some(sock: socket.socket, deadline: float | None, watch: int | None) -> bytes:
    while True:
        _wait(sock, deadline, watch)
        try:
            chunk = sock.recv(1 << 16)   # under malloc's mmap threshold: no mmap per message
        except InterruptedError:
            continue
        except OSError as e:
            raise ChannelClosed(str(e)) from e
        if not chunk:
            raise ChannelClosed("the other side closed the channel")
        return chunk


def _recv_exact(sock: socket.socket, n: int, deadline: float | None, watch: int | None) -> bytes:
    chunks = bytearray()
    while len(chunks) < n:
        _wait(sock, deadline, watch)
        try:
            chunk = sock.recv(min(n - len(chunks), 1 << 20))
        except InterruptedError:
            continue
        except OSError as e:
            raise ChannelClosed(str(e)) from e
        if not chunk:
            raise ChannelClosed("the other side closed the channel")
        chunks += chunk
    return bytes(chunks)


# ---- symmetric requests ----------------------------------------------------------------------

class Endpoint:
    """Request/reply over a socket where each side serves the other's requests while it waits.

    Messages are tuples: ``("req", id, kind, body)``, ``("ok", id, body)``, ``("err", id, body)``.
    ``serve(kind, body)`` answers an incoming request: it returns the reply body or raises.
    ``encode_ref`` turns objects that are not plain data into a Ref or Handle.
    """

    def __init__(self, sock: socket.socket, serve: Callable[[str, Any], Any],
                 encode_ref: Callable[[Any], Any] | None = None,
                 describe_error: Callable[[BaseException], Any] | None = None):
        self.sock = sock
        self.serve_one = serve
        self.encode_ref = encode_ref
        self.describe_error = describe_error or (lambda e: (type(e).__name__, "", str(e)[:500]))
        self.next_id = 1
        self.depth = 0
        self.watch: int | None = None
        self.buf = bytearray()

    def send(self, msg: tuple) -> None:
        send_frame(self.sock, encode(msg, ref=self.encode_ref))

    def _frame(self, deadline: float | None) -> bytes:
        """The next frame, reading as much as is available at a time (one syscall per message)."""
        while True:
            if len(self.buf) >= 4:
                n = _U32.unpack_from(self.buf)[0]
                if n > MAX_FRAME:
                    raise WireError(f"message of {n} bytes is over the {MAX_FRAME}-byte limit")
                if len(self.buf) >= 4 + n:
                    frame = bytes(self.buf[4:4 + n])
                    del self.buf[:4 + n]
                    return frame
            self.buf += _recv_some(self.sock, deadline, self.watch)

    def recv(self, deadline: float | None) -> tuple:
        msg = decode(self._frame(deadline))
        if not (isinstance(msg, tuple) and len(msg) in (3, 4) and isinstance(msg[0], str)
                and isinstance(msg[1], int)):
            raise WireError("malformed message")
        return msg

    def request(self, kind: str, body: Any, deadline: float | None = None,
                paused: Callable[[str], bool] = lambda kind: False) -> Any:
        """Send a request and wait for its reply; returns ("ok", body) or ("err", body)."""
        rid = self.next_id
        self.next_id += 1
        self.send(("req", rid, kind, body))
        while True:
            msg = self.recv(deadline)
            if msg[0] == "req" and len(msg) == 4:
                started = time.monotonic()
                self.handle(msg)
                if deadline is not None and paused(msg[2]):
                    deadline += time.monotonic() - started
            elif msg[0] in ("ok", "err") and msg[1] == rid:
                return msg[0], msg[2]
            else:
                raise WireError("unexpected message")

    def handle(self, msg: tuple) -> None:
        _, rid, kind, body = msg
        if self.depth >= 32:
            self.send(("err", rid, ("RecursionError", "RecursionError", "calls nested too deeply")))
            return
        self.depth += 1
        try:
            reply = ("ok", rid, self.serve_one(kind, body))
        except (ChannelClosed, ChannelTimeout):
            raise
        except BaseException as e:  # noqa: BLE001 - every failure becomes a reply
            reply = ("err", rid, self.describe_error(e))
        finally:
            self.depth -= 1
        try:
            self.send(reply)
        except WireError as e:
            self.send(("err", rid, ("TypeError", "TypeError", str(e)[:500])))

    def serve_forever(self) -> None:
        while True:
            msg = self.recv(None)
            if msg[0] != "req" or len(msg) != 4:
                raise WireError("unexpected message")
            self.handle(msg)


def close_quietly(*objs: Any) -> None:
    for obj in objs:
        try:
            obj.close() if hasattr(obj, "close") else os.close(obj)
        except OSError:
            pass
