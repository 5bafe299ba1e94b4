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

_U32 = struct.Struct(">I")
_U64 = struct.Struct(">Q")
_F64 = struct.Struct("<d")


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
    (``paused``) counts against neither."""

    def __init__(self, wall: float, cpu: float | None = None, cpu_now: Callable[[], float] | None = None):
        self.start = time.monotonic()
        self.end = self.start + wall
        self.cpu: float | None
        self.cpu_now: Callable[[], float] | None
        self.cpu, self.cpu_now = (cpu, cpu_now) if cpu is not None and cpu_now is not None else (None, None)
        self.cpu_start = self.cpu_now() if self.cpu_now else 0.0
        self.cores = _CORES

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


class _Pause:
    def __init__(self, deadline: Deadline):
        self.d = deadline

    def __enter__(self) -> None:
        self.wall = time.monotonic()

    def __exit__(self, *exc: object) -> None:
        spent = time.monotonic() - self.wall
        self.d.end += spent
        self.d.start += spent


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


def encode(value: Any, *, ref: Callable[[Any], Any] | None = None) -> bytes:
    """Encode plain data; ``ref(obj)`` may turn other objects into a Ref or Handle (or None)."""
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
        items = list(list.__iter__(v) if isinstance(v, list) else tuple.__iter__(v))
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
    """Decode and validate; raises WireError on anything malformed, whatever the bytes."""
    dec = _Decoder(memoryview(data))
    try:
        value = dec.value(0)
    except WireError:
        raise
    except Exception as e:  # noqa: BLE001 - no input may end the receiver in another way
        raise WireError(f"malformed value ({type(e).__name__})") from None
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
        chunk = self.buf[self.pos : self.pos + n]
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
            if any(n > MAX_FRAME for n in shape) or size * dtype.itemsize != nbytes:
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
        raise WireError(f"unknown tag {tag!r}")

    def dtype(self) -> np.dtype:
        name = self.text()
        if name not in DTYPES:
            raise WireError(f"dtype {name!r} is not allowed")
        return np.dtype(name)


# ---- frames and requests ----------------------------------------------------------------------


class Endpoint:
    """Request/reply over a stream socket where each side serves the other's requests while it waits.

    Frames are a 4-byte length and an encoded message: ``("req", id, kind, body)``, ``("ok", id,
    body)`` or ``("err", id, body)``. ``serve(kind, body)`` answers an incoming request: it returns
    the reply body or raises. ``encode_ref`` turns objects that are not plain data into a Ref or
    Handle. With a Deadline, every wait and every send is bounded; ``watch`` (a pidfd) makes the
    other process's exit count as the channel closing, even if a process it forked holds the socket.
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
        self.buf = bytearray()
        self.deadline: Deadline | None = None

    def send(self, msg: tuple) -> None:
        payload = encode(msg, ref=self.encode_ref)
        if len(payload) > MAX_FRAME:
            raise WireError(f"message of {len(payload)} bytes is over the {MAX_FRAME}-byte limit")
        data = _U32.pack(len(payload)) + payload
        if self.deadline is None:
            self.sock.sendall(data)
            return
        view = memoryview(data)
        while view:
            try:
                view = view[self.sock.send(view[: 1 << 20], socket.MSG_DONTWAIT) :]
                continue
            except (BlockingIOError, InterruptedError):
                pass
            except OSError as e:
                raise ChannelClosed(str(e)) from e
            select.select([], [self.sock], [], self.deadline.left())  # full: wait, within the deadline

    def _wait(self) -> None:
        """Until the socket is readable (ChannelTimeout past the deadline, ChannelClosed when the
        watched process exits first)."""
        while True:
            # no deadline: block until there is something (never spin; the other side may be busy)
            left = None if self.deadline is None else self.deadline.left()
            ready = select.select([self.sock] + ([self.watch] if self.watch is not None else []), [], [], left)[0]
            if self.sock in ready:
                return
            if ready:
                raise ChannelClosed("the process exited")

    def _frame(self) -> bytes:
        """The next frame, reading as much as is available at a time (one syscall per message)."""
        while True:
            if len(self.buf) >= 4:
                n = _U32.unpack_from(self.buf)[0]
                if n > MAX_FRAME:
                    raise WireError(f"message of {n} bytes is over the {MAX_FRAME}-byte limit")
                if len(self.buf) >= 4 + n:
                    frame = bytes(self.buf[4 : 4 + n])
                    del self.buf[: 4 + n]
                    return frame
            try:
                # try first, wait only when nothing is there yet (the reply often is, by now);
                # 64 KiB: under malloc's mmap threshold, so no mmap per message
                chunk = self.sock.recv(1 << 16, socket.MSG_DONTWAIT)
            except (BlockingIOError, InterruptedError):
                self._wait()
                continue
            except OSError as e:
                raise ChannelClosed(str(e)) from e
            if not chunk:
                raise ChannelClosed("the other side closed the channel")
            self.buf += chunk

    def recv(self) -> tuple:
        msg = decode(self._frame())
        if not (isinstance(msg, tuple) and len(msg) in (3, 4) and isinstance(msg[0], str) and type(msg[1]) is int):
            raise WireError("malformed message")
        return msg

    def request(self, kind: str, body: Any, deadline: Deadline | None = None) -> tuple[str, Any]:
        """Send a request and wait for its reply, serving the other side's requests meanwhile (the
        time they take is paused); returns ("ok", body) or ("err", body)."""
        rid = self.next_id
        self.next_id += 1
        outer, self.deadline = self.deadline, deadline
        try:
            self.send(("req", rid, kind, body))
            while True:
                msg = self.recv()
                if msg[0] == "req" and len(msg) == 4:
                    if deadline is None:
                        reply = self.answer(msg)
                    else:
                        with deadline.paused():
                            reply = self.answer(msg)
                    self.reply(reply)
                elif msg[0] in ("ok", "err") and msg[1] == rid and len(msg) == 3:
                    return msg[0], msg[2]
                else:
                    raise WireError("unexpected message")
        finally:
            self.deadline = outer

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
