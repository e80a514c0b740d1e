"""Protocol buffers' wire format, read by hand: what ``tfio`` (``tf.train.Example``) and
``tfcheckpoint`` (a checkpoint's ``BundleEntryProto``) parse without a generated class."""

from __future__ import annotations


def varint(data: bytes, at: int) -> tuple[int, int]:
    """The base-128 varint at ``data[at]``: (its value, where the next field starts)."""
    result = shift = 0
    while True:
        byte = data[at]
        at += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, at
        shift += 7


def fields(data: bytes):
    """(field number, wire type, value) of each field of a message: bytes for length-delimited
    and fixed-width fields, an int for varints."""
    at, end = 0, len(data)
    while at < end:
        key, at = varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = varint(data, at)
        elif wire == 1:
            value, at = data[at:at + 8], at + 8
        elif wire == 2:
            size, at = varint(data, at)
            value, at = data[at:at + size], at + size
        elif wire == 5:
            value, at = data[at:at + 4], at + 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        yield number, wire, value


def signed(value: int) -> int:
    """A varint read as int64 (negative numbers take ten bytes, two's complement)."""
    return value - (1 << 64) if value >= 1 << 63 else value
