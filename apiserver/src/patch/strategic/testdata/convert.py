#!/usr/bin/env python3
"""Regenerates the golden strategic-merge-patch cases in this directory from
upstream's k8s.io/apimachinery/pkg/util/strategicpatch/patch_test.go
(Copyright The Kubernetes Authors, Apache-2.0).

Usage: convert.py <path to upstream patch_test.go> <output dir>

Every case becomes {"description", "original", "patch", "result"} or
{"description", "original", "patch", "error"} (a substring of the expected
error, as upstream's tests check it). Only what upstream asserts about
*applying* a patch is kept:

- custom.json: customStrategicMergePatchTestCaseData (original + twoWay ->
  modified) and customStrategicMergePatchRawTestCases, as
  TestCustomStrategicMergePatch applies them;
- create.json: createStrategicMergePatchTestCaseData, two-way (original +
  twoWay -> twoWayResult or modified) and three-way (current + threeWay ->
  result), as TestStrategicMergePatch applies them;
- raw.json: strategicMergePatchRawTestCases and
  replaceRawExtensionPatchTestCases, two- and three-way;
- unknown.json: TestUnknownField's patches and results.

Upstream sorts the structured (non-raw) cases' inputs and expected results
with sortMergeListsByName before applying; that is reproduced here
(sort_merge_lists) so the stored inputs are exactly what upstream applies.
"""
import json
import re
import sys

import yaml

SOURCE = ("k8s.io/apimachinery/pkg/util/strategicpatch/patch_test.go "
          "(Copyright The Kubernetes Authors, Apache-2.0)")

# MergeItem / RetainKeysMergeItem from patch_test.go: field -> (kind,
# strategy, merge key, element or field type).
MERGE_ITEM = {}
RETAIN_ITEM = {}
MERGE_ITEM.update({
    "mergingList": ("list", "merge", "name", MERGE_ITEM),
    "nonMergingList": ("list", "", "", MERGE_ITEM),
    "mergingIntList": ("list", "merge", "", None),
    "nonMergingIntList": ("list", "", "", None),
    "mergeItemPtr": ("struct", "merge", "name", MERGE_ITEM),
    "simpleMap": ("map", "", "", None),
    "replacingItem": ("struct", "replace", "", None),
    "jsonItem": ("struct", "", "", None),
    "retainKeysMap": ("struct", "retainKeys", "", RETAIN_ITEM),
    "retainKeysMergingList": ("list", "merge", "name", MERGE_ITEM),
})
RETAIN_ITEM.update({
    "simpleMap": ("map", "", "", None),
    "mergingIntList": ("list", "merge", "", None),
    "mergingList": ("list", "merge", "name", MERGE_ITEM),
    "nonMergingList": ("list", "", "", MERGE_ITEM),
})


def go_v(v):
    """fmt %v of a decoded value, enough for sort keys."""
    if v is None:
        return "<nil>"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def dedup_scalars(s):
    """deduplicateScalars, Go's in-place algorithm."""
    s = list(s)
    length = len(s) - 1
    i = 0
    while i < length:
        j = i + 1
        while j <= length:
            if s[i] == s[j] and type(s[i]) is type(s[j]):
                s[j] = s[length]
                s = s[:length]
                length -= 1
                j -= 1
            j += 1
        i += 1
    return s


def sort_map(m, schema):
    out = {}
    for k, v in m.items():
        if k == "$retainKeys" or k.startswith("$deleteFromPrimitiveList"):
            v = sorted(v, key=go_v)
        elif k.startswith("$setElementOrder") or k == "$patch":
            pass
        else:
            field = (schema or {}).get(k)
            if isinstance(v, dict):
                sub = field[3] if field and field[0] == "struct" else None
                v = sort_map(v, sub)
            elif isinstance(v, list) and field and field[1] == "merge":
                v = sort_list(v, field[3], field[2])
        out[k] = v
    return out


def sort_list(s, schema, merge_key):
    if not s:
        return s
    if not isinstance(s[0], dict):
        return sorted(dedup_scalars(s), key=go_v)
    s = [sort_map(e, schema) for e in s]
    return sorted(s, key=lambda e: go_v(e.get(merge_key)))


def sort_doc(d):
    return None if d is None else sort_map(d, MERGE_ITEM)


def obj(d):
    """A missing document is applied as {} upstream (handleUnmarshal)."""
    return {} if d is None else d


def structured(cases, two_way_only):
    out = []
    for c in cases:
        desc = c["description"]
        out.append({
            "description": desc + " (two-way)",
            "original": obj(sort_doc(c.get("original"))),
            "patch": obj(sort_doc(c.get("twoWay"))),
            "result": obj(sort_doc(c.get("twoWayResult") or c.get("modified"))),
        })
        if two_way_only or not c.get("result"):
            continue
        out.append({
            "description": desc + " (three-way)",
            "original": obj(sort_doc(c.get("current"))),
            "patch": obj(sort_doc(c.get("threeWay"))),
            "result": sort_doc(c["result"]),
        })
    return out


def go_string(s):
    return json.loads('"' + s + '"')


def raw_cases(text, var):
    start = text.index("var %s = []StrategicMergePatchRawTestCase{" % var)
    end = text.index("\n}\n", start)
    body = text[start:end]
    chunks = re.split(r"\n\t\{\n\t\tDescription:", body)[1:]
    cases = []
    for chunk in chunks:
        chunk = "Description:" + chunk
        desc = go_string(re.search(r'Description:\s*"((?:[^"\\]|\\.)*)"', chunk).group(1))
        fields = {m.group(1): yaml.safe_load(m.group(2))
                  for m in re.finditer(r"(\w+):\s*\[\]byte\(`(.*?)`\)", chunk, re.S)}
        err = re.search(r'ExpectedError:\s*"((?:[^"\\]|\\.)*)"', chunk)
        cases.append((desc, fields, go_string(err.group(1)) if err else None))
    return cases


def raw(cases, two_way_only):
    out = []
    for desc, f, err in cases:
        runs = [("two-way", f.get("Original"), f.get("TwoWay"),
                 f.get("TwoWayResult") or f.get("Modified"))]
        if not two_way_only and f.get("Result"):
            runs.append(("three-way", f.get("Current"), f.get("ThreeWay"), f.get("Result")))
        for kind, original, patch, result in runs:
            case = {"description": "%s (%s)" % (desc, kind),
                    "original": obj(original), "patch": obj(patch)}
            if err:
                case["error"] = err
            else:
                case["result"] = obj(result)
            out.append(case)
    return out


def unknown_field(text):
    start = text.index("func TestUnknownField(")
    end = text.index("mergeItemOpenapiSchema :=", start)
    out = []
    for m in re.finditer(r'\n\t\t"([^"]+)": \{(.*?)\n\t\t\},', text[start:end], re.S):
        f = {k: json.loads(v) for k, v in re.findall(r"(\w+):\s*`([^`]*)`", m.group(2))
             if not k.endswith("Err")}
        for kind, original, patch, result in [
            ("two-way", "Original", "ExpectedTwoWay", "ExpectedTwoWayResult"),
            ("three-way", "Current", "ExpectedThreeWay", "ExpectedThreeWayResult"),
        ]:
            if patch in f and result in f:
                out.append({"description": "%s (%s)" % (m.group(1), kind),
                            "original": f[original], "patch": f[patch],
                            "result": f[result]})
    return out


def yaml_var(text, var):
    m = re.search(r"var %s = \[\]byte\(`(.*?)`\)" % var, text, re.S)
    return yaml.safe_load(m.group(1))["testCases"]


def main():
    src, out_dir = sys.argv[1], sys.argv[2]
    text = open(src).read()
    files = {
        "custom.json": structured(yaml_var(text, "customStrategicMergePatchTestCaseData"), True)
        + raw(raw_cases(text, "customStrategicMergePatchRawTestCases"), True),
        "create.json": structured(yaml_var(text, "createStrategicMergePatchTestCaseData"), False),
        "raw.json": raw(raw_cases(text, "strategicMergePatchRawTestCases"), False)
        + raw(raw_cases(text, "replaceRawExtensionPatchTestCases"), False),
        "unknown.json": unknown_field(text),
    }
    for name, cases in files.items():
        with open("%s/%s" % (out_dir, name), "w") as f:
            json.dump({"source": SOURCE, "cases": cases}, f, indent=1, sort_keys=True)
            f.write("\n")
        print(name, len(cases))


if __name__ == "__main__":
    main()
