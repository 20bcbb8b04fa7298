#!/usr/bin/env python3
"""Seed corpus and dictionary for the `json_body` fuzz target.

Writes into OUT_DIR:
- for ConfigMap, Deployment, Pod, Secret and Namespace, JSON objects that
  set every field of the type (from the protobuf codec's schema.json, which
  carries the Go JSON names), nested down to several depths, with values
  of the right shape (quantities, times, IntOrString, …), with and without
  apiVersion/kind, and compact and indented;
- the same objects with an unknown field and a duplicate key added;
- the real kubectl bodies of those kinds from apiserver/src/codec/testdata
  (JSON and protobuf: protobuf bodies take the target's second path).

and writes DICT, a libFuzzer dictionary of JSON tokens and every JSON field
name of those kinds.

Usage: seeds/json_body.py OUT_DIR DICT   (see fuzz/README.md)
"""

import glob
import hashlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CODEC = os.path.join(HERE, "../../apiserver/src/codec")
SCHEMA = os.path.join(CODEC, "protobuf/schema.json")

KINDS = [
    ("v1", "ConfigMap"),
    ("apps/v1", "Deployment"),
    ("v1", "Pod"),
    ("v1", "Secret"),
    ("v1", "Namespace"),
]
TESTDATA_NAMES = ("configmap", "deployment", "secret", "namespace", "pod")

SCALARS = {
    "string": "1",
    "bytes": "e30=",  # base64 of "{}"
    "bool": True,
    "int32": 1,
    "int64": 1,
    "double": 1.5,
}

SPECIAL = {
    "time": "2024-01-02T03:04:05Z",
    "micro_time": "2024-01-02T03:04:05.123456Z",
    "duration": "1m30s",
    "int_or_string": "25%",
    "quantity": "100m",
    "raw_json": {"f:metadata": {"f:name": {}}},
    "raw_extension": {"apiVersion": "v1", "kind": "ConfigMap"},
    "unknown": {"apiVersion": "v1", "kind": "ConfigMap"},
}


def message(schema, index, depth, names):
    msg = schema["messages"][index]
    special = msg.get("special")
    if special in SPECIAL:
        return SPECIAL[special]
    if special == "list":
        field = msg["fields"][0]
        return [value(schema, field["type"], depth, names)]
    out = {}
    for field in msg["fields"]:
        if field.get("inline") and isinstance(field["type"], dict):
            inner = message(schema, field["type"]["message"], depth, names)
            if isinstance(inner, dict):
                out.update(inner)
            continue
        name = field.get("json")
        if not name:
            continue
        names.add(name)
        v = field_value(schema, field, depth, names)
        if v is not None:
            out[name] = v
    return out


def value(schema, ty, depth, names):
    if isinstance(ty, dict):
        if depth <= 0:
            return None
        return message(schema, ty["message"], depth - 1, names)
    return SCALARS[ty]


def field_value(schema, field, depth, names):
    v = value(schema, field["type"], depth, names)
    if v is None:
        return None
    label = field.get("label", "single")
    if label == "map":
        return {"k": v}
    if label == "repeated":
        if field["type"] == "bytes":
            return v
        return [v]
    return v


def write(out_dir, data):
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(out_dir, name), "wb") as f:
        f.write(data)


def main():
    out_dir, dict_path = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    with open(SCHEMA) as f:
        schema = json.load(f)
    index = {(a, k): i for a, k, i in schema["kinds"]}
    names = set()
    count = 0
    for api_version, kind in KINDS:
        for depth in (1, 2, 4, 8):
            obj = message(schema, index[(api_version, kind)], depth, names)
            obj["apiVersion"], obj["kind"] = api_version, kind
            bare = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
            for o in (obj, bare):
                text = json.dumps(o, separators=(",", ":")).encode()
                if len(text) > 16000:
                    continue
                write(out_dir, text)
                # An unknown field and a duplicate key: warnings/strict errors.
                extra = text[:-1] + b',"bogus":1,"kind":"' + kind.encode() + b'"}'
                write(out_dir, extra)
                count += 2
            if len(json.dumps(obj)) < 4000:
                write(out_dir, json.dumps(obj, indent=1).encode())
                count += 1
    for path in sorted(glob.glob(os.path.join(CODEC, "testdata/*/*"))):
        base = os.path.basename(path)
        if base.startswith(TESTDATA_NAMES) and base.endswith((".json", ".pb")):
            with open(path, "rb") as f:
                write(out_dir, f.read())
            count += 1
    tokens = ['"{"', '"}"', '"["', '"]"', '":"', '","', '"null"', '"true"',
              '"false"', '"\\\\u0000"', '"\\\\ud800"', '"1e999"', '"-0"',
              '"9223372036854775808"', '"1.5"', '"apiVersion"', '"kind"',
              '"v1"', '"apps/v1"', '"k8s\\x00"']
    tokens += [f'"\\"{n}\\""' for n in sorted(names)]
    tokens += [f'"\\"{k}\\""' for _, k in KINDS]
    with open(dict_path, "w") as f:
        f.write("# Generated by seeds/json_body.py: JSON tokens and the JSON field\n")
        f.write("# names of ConfigMap, Deployment, Pod, Secret and Namespace.\n")
        for t in tokens:
            f.write(t + "\n")
    print(f"{count} seeds in {out_dir}, {len(tokens)} dictionary entries in {dict_path}")


if __name__ == "__main__":
    main()
