#!/usr/bin/env python3
"""Seed corpus for the `crd` fuzz target.

Writes into OUT_DIR, as compact JSON named by content hash:
- every CustomResourceDefinition in the repository's manifests and
  fixtures (Skein's federation.skein.io CRDs, the vendored Argo CD CRDs),
  whole;
- each of their versions' openAPIV3Schema alone (the target puts it into
  a template CRD);
- pairs [schema, object] with a small object of the schema's shape;
- hand-written schemas for the structural rules and x-kubernetes-*
  extensions the real CRDs do not use.

Usage: seeds/crd.py OUT_DIR   (needs PyYAML; see fuzz/README.md)
"""

import glob
import hashlib
import json
import os
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "../..")
SOURCES = [
    "apiserver/crds/**/*.yaml",
    "test/fixtures/argo-cd-crds/*.yaml",
]

HANDWRITTEN = [
    {"type": "object", "properties": {"spec": {"type": "object", "properties": {"foo": {}}}}},
    {"type": "object", "properties": {"port": {"x-kubernetes-int-or-string": True,
        "anyOf": [{"type": "integer"}, {"type": "string"}]}}},
    {"type": "object", "properties": {"raw": {"type": "object", "x-kubernetes-embedded-resource": True,
        "x-kubernetes-preserve-unknown-fields": True}}},
    {"type": "object", "properties": {"ports": {"type": "array", "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"], "items": {"type": "object", "required": ["name"],
        "properties": {"name": {"type": "string"}, "port": {"type": "integer", "default": 80}}}}}},
    {"type": "object", "properties": {"tags": {"type": "array", "x-kubernetes-list-type": "set",
        "items": {"type": "string", "pattern": "^[a-z]+$"}}}},
    {"type": "object", "properties": {"spec": {"type": "object", "default": {"min": 1, "max": 2},
        "properties": {"min": {"type": "integer"}, "max": {"type": "integer"}},
        "x-kubernetes-validations": [{"rule": "self.min <= self.max", "message": "min > max"},
                                     {"rule": "self.min == oldSelf.min", "fieldPath": ".min"}]}}},
    {"type": "object", "properties": {"metadata": {"type": "object", "properties": {
        "name": {"type": "string", "maxLength": 10}}}}, "oneOf": [{"required": ["spec"]}]},
    {"type": "object", "additionalProperties": {"type": "string"}, "nullable": True, "uniqueItems": True,
     "$ref": "#/x", "items": [{}], "x-kubernetes-map-type": "bogus"},
]


def write(out, value):
    data = json.dumps(value, separators=(",", ":"), sort_keys=True).encode()
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)


def example(schema, depth=0):
    """A small value of the schema's shape."""
    if depth > 6 or not isinstance(schema, dict):
        return None
    t = schema.get("type")
    if "default" in schema:
        return schema["default"]
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    if t == "object":
        props = schema.get("properties") or {}
        return {k: example(v, depth + 1) for k, v in list(props.items())[:8]}
    if t == "array":
        return [example(schema.get("items"), depth + 1)]
    return {"string": "x", "integer": 1, "number": 1.5, "boolean": True}.get(t, "x")


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for pattern in SOURCES:
        for path in glob.glob(os.path.join(ROOT, pattern), recursive=True):
            with open(path) as f:
                docs = list(yaml.safe_load_all(f))
            for doc in docs:
                if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
                    continue
                write(out, doc)
                for version in doc.get("spec", {}).get("versions", []):
                    schema = (version.get("schema") or {}).get("openAPIV3Schema")
                    if schema is not None:
                        write(out, schema)
                        write(out, [schema, example(schema)])
    for schema in HANDWRITTEN:
        write(out, schema)
        write(out, [schema, example(schema)])


if __name__ == "__main__":
    main()
