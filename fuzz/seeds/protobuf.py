#!/usr/bin/env python3
"""Seed corpus for the `protobuf` fuzz target, generated from schema.json.

For every (apiVersion, kind) the decoder knows, writes two bodies into the
output directory: the bare envelope (`k8s\\0` + runtime.Unknown with an
empty `raw`) and one whose `raw` sets every field of the kind's message,
nested messages included down to a fixed depth, with values each special
message accepts (quantities, times, IntOrString, embedded JSON). A fuzzer
that starts from these does not have to guess apiVersion/kind strings or
field numbers.

Usage: seeds/protobuf.py OUT_DIR   (see fuzz/README.md)
"""

import hashlib
import json
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = os.path.join(HERE, "../../apiserver/src/codec/protobuf/schema.json")

PREFIX = b"k8s\x00"
MAX_DEPTH = 8
# libFuzzer raises -max_len to the largest seed; keep that moderate.
MAX_BODY = 16000


def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(number, wire):
    return varint(number << 3 | wire)


def length_delimited(number, payload):
    return key(number, 2) + varint(len(payload)) + payload


SCALARS = {
    # type: (wire type, encoded value)
    "string": (2, lambda: varint(1) + b"1"),
    "bytes": (2, lambda: varint(2) + b"{}"),
    "bool": (0, lambda: varint(1)),
    "int32": (0, lambda: varint(1)),
    "int64": (0, lambda: varint(1)),
    "double": (1, lambda: struct.pack("<d", 1.5)),
}


def special_payload(special):
    """A valid body for a message with a hand-written JSON form."""
    if special in ("time", "micro_time"):
        return key(1, 0) + varint(1_700_000_000) + key(2, 0) + varint(123_456_789)
    if special == "duration":
        return key(1, 0) + varint(90_500_000_000)
    if special == "int_or_string":
        return key(1, 0) + varint(1) + length_delimited(3, b"25%")
    if special == "quantity":
        return length_delimited(1, b"100m")
    if special == "raw_json":
        return length_delimited(1, b'{"f:metadata":{"f:name":{}}}')
    if special == "raw_extension":
        return length_delimited(1, b'{"apiVersion":"v1","kind":"ConfigMap"}')
    return None  # decoded from its fields like any message


def message(schema, index, depth):
    msg = schema["messages"][index]
    special = msg.get("special")
    payload = special_payload(special)
    if payload is not None:
        return payload
    if special == "unknown":
        meta = length_delimited(1, b"v1") + length_delimited(2, b"ConfigMap")
        return length_delimited(1, meta) + length_delimited(2, b"")
    out = bytearray()
    for field in msg["fields"]:
        out += field_bytes(schema, field, depth)
    return bytes(out)


def value_bytes(schema, number, ty, depth):
    if isinstance(ty, dict):
        if depth >= MAX_DEPTH:
            return b""
        return length_delimited(number, message(schema, ty["message"], depth + 1))
    wire, encode = SCALARS[ty]
    return key(number, wire) + encode()


def field_bytes(schema, field, depth):
    ty = field["type"]
    label = field.get("label", "single")
    if label == "map":
        entry = length_delimited(1, b"k")
        if isinstance(ty, dict):
            if depth >= MAX_DEPTH:
                return b""
            entry += length_delimited(2, message(schema, ty["message"], depth + 1))
        else:
            entry += value_bytes(schema, 2, ty, depth)
        return length_delimited(field["n"], entry)
    if label == "repeated" and ty in ("int32", "int64", "bool"):
        # Packed, as gogo-protobuf writes repeated scalars.
        return length_delimited(field["n"], varint(1) + varint(2))
    if label == "repeated":
        # Repeated strings twice (a list), messages once (size).
        one = value_bytes(schema, field["n"], ty, depth)
        return one + one if ty == "string" else one
    return value_bytes(schema, field["n"], ty, depth)


def body(api_version, kind, raw):
    meta = length_delimited(1, api_version.encode()) + length_delimited(2, kind.encode())
    envelope = length_delimited(1, meta) + length_delimited(2, raw)
    return PREFIX + envelope


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    with open(SCHEMA) as f:
        schema = json.load(f)
    written = 0
    for api_version, kind, index in schema["kinds"]:
        bodies = [body(api_version, kind, b"")]
        for depth in range(MAX_DEPTH - 1):  # shallower when too big
            full = body(api_version, kind, message(schema, index, depth))
            if len(full) <= MAX_BODY:
                bodies.append(full)
                break
        else:
            # Top-level fields only: everything nested is left empty.
            full = body(api_version, kind, message(schema, index, MAX_DEPTH - 1))
            bodies.append(full[:MAX_BODY])
        for data in bodies:
            name = hashlib.sha1(data).hexdigest()
            with open(os.path.join(out_dir, name), "wb") as f:
                f.write(data)
            written += 1
    print(f"{written} seeds for {len(schema['kinds'])} kinds in {out_dir}")


if __name__ == "__main__":
    main()
