#!/usr/bin/env python3
"""Generate schema.json, the table that drives the protobuf decoder.

The decoder turns a Kubernetes protobuf body into the JSON that Go's
encoding/json would print for the same Go struct. The .proto files alone do
not say how that JSON looks, so this script reads two upstream sources per
API package and joins them by protobuf field number:

* generated.proto: message names, field numbers, wire types, repeated and
  map fields;
* the Go types (types.go and friends): the JSON name of each field, whether
  it is a pointer, `omitempty`, `json:",inline"` embedding, and which Go
  types are named slices (`type Verbs []string`, wrapped as `items` on the
  wire).

Structure is the union of several Kubernetes releases, so fields that a
newer client sends are still named. Field attributes come from the last
release listed that has the field, so the newest Go tags win where they
changed (printed as notes on stderr; e.g. v1.34 made a zero
`metadata.creationTimestamp` disappear instead of printing `null`). Field
numbers are never reused upstream; a type clash between releases is an
error.

Usage (git directories of the upstream repositories, with their tags):

    python3 generate_schema.py \
        --repo api=/path/kubernetes/api.git \
        --repo apimachinery=/path/kubernetes/apimachinery.git \
        --repo apiextensions-apiserver=/path/kubernetes/apiextensions-apiserver.git \
        --repo kube-aggregator=/path/kubernetes/kube-aggregator.git \
        --release v0.33.13 --release v0.35.7 --release v0.36.3 \
        > schema.json

A repository without a tag of that release falls back to the newest tag of
the same minor (kube-aggregator is sometimes a patch behind).
"""

import argparse
import json
import re
import subprocess
import sys
from collections import OrderedDict

# Packages outside k8s.io/api that hold wire types. (repo, dir)
EXTRA_PACKAGES = [
    ("apimachinery", "pkg/apis/meta/v1"),
    ("apimachinery", "pkg/apis/meta/v1beta1"),
    ("apimachinery", "pkg/runtime"),
    ("apimachinery", "pkg/runtime/schema"),
    ("apimachinery", "pkg/util/intstr"),
    ("apimachinery", "pkg/api/resource"),
    ("apiextensions-apiserver", "pkg/apis/apiextensions/v1"),
    ("apiextensions-apiserver", "pkg/apis/apiextensions/v1beta1"),
    ("kube-aggregator", "pkg/apis/apiregistration/v1"),
    ("kube-aggregator", "pkg/apis/apiregistration/v1beta1"),
]

META = "k8s.io.apimachinery.pkg.apis.meta.v1."
APIEXT = ("k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.",
          "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.")

# Messages whose JSON comes from a hand-written MarshalJSON in Go.
SPECIAL = {
    META + "Time": "time",
    META + "MicroTime": "micro_time",
    META + "Duration": "duration",
    META + "FieldsV1": "raw_json",
    "k8s.io.apimachinery.pkg.runtime.RawExtension": "raw_extension",
    "k8s.io.apimachinery.pkg.runtime.Unknown": "unknown",
    "k8s.io.apimachinery.pkg.util.intstr.IntOrString": "int_or_string",
    "k8s.io.apimachinery.pkg.api.resource.Quantity": "quantity",
    "k8s.io.apimachinery.pkg.api.resource.QuantityValue": "quantity",
}
for p in APIEXT:
    SPECIAL[p + "JSON"] = "raw_json"
    SPECIAL[p + "JSONSchemaPropsOrBool"] = "props_or_bool"
    SPECIAL[p + "JSONSchemaPropsOrArray"] = "props_or_array"
    SPECIAL[p + "JSONSchemaPropsOrStringArray"] = "props_or_string_array"

# Messages that exist on the wire but never appear in a field of a served
# object; they get no Go-side attributes.
NO_GO_TYPE = {
    META + "Timestamp",  # the wire form of Time, described by hand
    META + "Fields",  # deprecated, referenced by nothing
    "k8s.io.apimachinery.pkg.runtime.TypeMeta",  # only in the envelope
}

# Kinds that metav1.AddToGroupVersion registers in every group version.
OPTION_KINDS = ["WatchEvent", "ListOptions", "GetOptions", "DeleteOptions",
                "CreateOptions", "UpdateOptions", "PatchOptions"]

# Kinds that metav1.AddToGroupVersion registers as unversioned, in "v1".
UNVERSIONED_KINDS = ["Status", "APIVersions", "APIGroupList", "APIGroup", "APIResourceList"]

SCALARS = {"string", "bytes", "bool", "int32", "int64", "double"}


class Git:
    def __init__(self, gitdir):
        self.gitdir = gitdir

    def run(self, *args):
        return subprocess.run(["git", "--git-dir", self.gitdir, *args], check=True,
                              capture_output=True, text=True).stdout

    def tags(self):
        return self.run("tag").split()

    def ls(self, tag):
        return self.run("ls-tree", "-r", "--name-only", tag).split("\n")

    def show(self, tag, path):
        return self.run("show", f"{tag}:{path}")


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def parse_proto(text):
    """Returns (package, {message: [field dicts]})."""
    clean = strip_comments(text)
    pkg = re.search(r"^package\s+([\w.]+);", clean, re.M).group(1)
    messages = OrderedDict()
    for m in re.finditer(r"^message\s+(\w+)\s*\{(.*?)^\}", clean, re.M | re.S):
        name, body = m.group(1), m.group(2)
        if re.search(r"(?m)^\s*(message|oneof|enum)\s+\w+\s*\{", body):
            raise SystemExit(f"{pkg}.{name}: nested declarations are not supported")
        fields = []
        for line in body.split(";"):
            line = line.strip()
            if not line:
                continue
            fm = re.fullmatch(r"map<\s*(\w+)\s*,\s*([\w.]+)\s*>\s+(\w+)\s*=\s*(\d+)", line)
            if fm:
                fields.append({"label": "map", "key": fm.group(1), "type": fm.group(2),
                               "name": fm.group(3), "number": int(fm.group(4))})
                continue
            fm = re.fullmatch(r"(optional|repeated|required)\s+([\w.]+)\s+(\w+)\s*=\s*(\d+)", line)
            if not fm:
                raise SystemExit(f"{pkg}.{name}: cannot parse field {line!r}")
            label = "repeated" if fm.group(1) == "repeated" else "single"
            fields.append({"label": label, "type": fm.group(2), "name": fm.group(3),
                           "number": int(fm.group(4))})
        messages[name] = fields
    return pkg, messages


def resolve(pkg, typ):
    if typ in SCALARS:
        return typ
    if typ.startswith("."):
        return typ[1:]
    return f"{pkg}.{typ}"


def parse_tag(tag, key):
    m = re.search(key + r':"([^"]*)"', tag or "")
    return m.group(1) if m else None


def parse_imports(clean):
    imports = {}
    block = re.search(r"(?ms)^import\s*\((.*?)^\)", clean)
    lines = block.group(1).split("\n") if block else []
    lines += [m.group(1) for m in re.finditer(r"(?m)^import\s+([^(\n]+)$", clean)]
    for line in lines:
        im = re.fullmatch(r"\s*(\w+\s+)?\"([^\"]+)\"\s*", line)
        if im:
            alias = (im.group(1) or "").strip() or im.group(2).rsplit("/", 1)[-1]
            imports[alias] = im.group(2)
    return imports


def parse_go(files):
    """Returns ({struct: [field dicts]}, {named slice types}, {defined type: (import path or None, name)})."""
    structs, slices, defined = {}, set(), {}
    for text in files:
        clean = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
        clean = re.sub(r"(?m)^\s*//.*$", "", clean)
        imports = parse_imports(clean)
        for m in re.finditer(r"(?m)^type\s+(\w+)\s+\[\]", clean):
            slices.add(m.group(1))
        for m in re.finditer(r"(?m)^type\s+(\w+)\s+(?:(\w+)\.)?([A-Z]\w*)\s*$", clean):
            defined[m.group(1)] = (imports[m.group(2)] if m.group(2) else None, m.group(3))
        for m in re.finditer(r"(?m)^type\s+(\w+)\s+struct\s*\{\s*\}", clean):
            structs[m.group(1)] = []
        clean = re.sub(r"(?m)^type\s+(\w+)\s+struct\s*\{\s*\}", "", clean)
        for m in re.finditer(r"(?ms)^type\s+(\w+)\s+struct\s*\{(.*?)^\}", clean):
            fields = []
            for line in m.group(2).split("\n"):
                line = re.sub(r"\s//.*$", "", line).strip()
                if not line:
                    continue
                tm = re.search(r"`([^`]*)`", line)
                tag = tm.group(1) if tm else ""
                decl = line[:tm.start()].strip() if tm else line
                parts = decl.split()
                if len(parts) == 1:
                    name, gotype, embedded = None, parts[0], True
                elif len(parts) == 2:
                    name, gotype, embedded = parts[0], parts[1], False
                elif "protobuf:" in tag:
                    raise SystemExit(f"struct {m.group(1)}: cannot parse {line!r}")
                else:
                    continue  # not a wire field (func types, multi-name lines)
                if embedded:
                    name = gotype.lstrip("*").split(".")[-1]
                fields.append({"name": name, "type": gotype, "embedded": embedded,
                               "json": parse_tag(tag, "json"),
                               "protobuf": parse_tag(tag, "protobuf")})
            structs[m.group(1)] = fields
    return structs, slices, defined


def go_attrs(full, field, gostruct):
    """Go-side attributes of a proto field, from the Go struct field with its number."""
    for gf in gostruct:
        pb = gf["protobuf"]
        if not pb:
            continue
        parts = pb.split(",")
        if int(parts[1]) != field["number"]:
            continue
        json_tag = gf["json"]
        if json_tag is None:
            # encoding/json: an untagged embedded struct is inlined, any
            # other untagged field is keyed by its Go name.
            opts, name = [], (None if gf["embedded"] else gf["name"])
            inline = gf["embedded"]
        else:
            name, *opts = json_tag.split(",")
            inline = "inline" in opts or (name == "" and gf["embedded"])
            if name == "-":
                name = None
            elif name == "":
                name = None if inline else gf["name"]
        return {"json": name, "omitzero": "omitzero" in opts, "inline": inline, "ptr": gf["type"].startswith("*"),
                "omitempty": "omitempty" in opts, "skip": json_tag is not None and json_tag.split(",")[0] == "-"}
    raise SystemExit(f"{full}: no Go field with protobuf number {field['number']}")


def collect(repos, release):
    """Messages and kinds of one release."""
    minor = ".".join(release.split(".")[:2]) + "."
    messages, kinds = OrderedDict(), []
    jobs = []
    for repo, git in repos.items():
        tags = git.tags()
        tag = release if release in tags else None
        if tag is None:
            same = sorted((t for t in tags if t.startswith(minor) and re.fullmatch(r"v[\d.]+", t)),
                          key=lambda t: [int(x) for x in t[1:].split(".")])
            if not same:
                raise SystemExit(f"{repo}: no tag for {release}")
            tag = same[-1]
        files = git.ls(tag)
        if repo == "api":
            dirs = sorted({f.rsplit("/", 1)[0] for f in files if f.endswith("/generated.proto")})
        else:
            dirs = [d for r, d in EXTRA_PACKAGES if r == repo and f"{d}/generated.proto" in files]
        for d in dirs:
            jobs.append((git, tag, files, d, f"k8s.io/{repo}/{d}"))
    parsed, gopkgs = [], {}
    for git, tag, files, d, path in jobs:
        gofiles = [git.show(tag, f) for f in files
                   if f.startswith(d + "/") and f.count("/") == d.count("/") + 1 and f.endswith(".go")
                   and not f.endswith("_test.go") and "generated" not in f.rsplit("/", 1)[1]]
        gopkgs[path] = parse_go(gofiles)
        parsed.append((git.show(tag, f"{d}/generated.proto"), gofiles, d, path))
    for proto, gofiles, d, path in parsed:
        pkg, protos = parse_proto(proto)
        structs, slices, defined = gopkgs[path]
        for name, (target_path, target) in defined.items():
            if name not in structs:
                src = gopkgs.get(target_path or path)
                if src and target in src[0]:
                    structs[name] = src[0][target]
        group = None
        for text in gofiles:
            gm = (re.search(r"\+groupName=([\w.\-]*)", text)
                  or re.search(r"\bGroupName\s*=\s*\"([^\"]*)\"", text))
            if gm:
                group = gm.group(1)
        version = d.rsplit("/", 1)[1]
        for name, fields in protos.items():
            full = f"{pkg}.{name}"
            special = SPECIAL.get(full)
            out = {"name": full, "fields": []}
            if special:
                out["special"] = special
            elif name in slices and name not in structs:
                if len(fields) != 1 or fields[0]["name"] != "items" or fields[0]["label"] != "repeated":
                    raise SystemExit(f"{full}: named slice type without an items field")
                out["special"] = "list"
            elif full in NO_GO_TYPE:
                pass
            elif name not in structs:
                raise SystemExit(f"{full}: no Go struct")
            for f in fields:
                ff = {"n": f["number"], "proto": f["name"], "label": f["label"],
                      "type": resolve(pkg, f["type"])}
                if f["label"] == "map":
                    if f["key"] != "string":
                        raise SystemExit(f"{full}.{f['name']}: map key {f['key']}")
                if not special and out.get("special") != "list" and full not in NO_GO_TYPE:
                    ff.update(go_attrs(full, f, structs[name]))
                else:
                    ff.update({"json": f["name"], "inline": False, "ptr": False, "omitzero": False,
                               "omitempty": False, "skip": False})
                out["fields"].append(ff)
            messages[full] = out
        if group is None:
            continue
        api_version = f"{group}/{version}" if group else version
        for name, gfields in structs.items():
            if name not in protos:
                continue
            if any(g["embedded"] and g["type"].split(".")[-1] == "TypeMeta" and
                   (g["json"] or "").startswith(",inline") for g in gfields):
                kinds.append((api_version, name, f"{pkg}.{name}"))
        if pkg != META.rstrip(".") and group != "meta.k8s.io":
            for k in OPTION_KINDS:
                kinds.append((api_version, k, META + k))
        if api_version == "v1":
            for k in UNVERSIONED_KINDS:
                kinds.append((api_version, k, META + k))
    return messages, kinds


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", action="append", required=True)
    ap.add_argument("--release", action="append", required=True)
    args = ap.parse_args()
    repos = OrderedDict()
    for r in args.repo:
        name, path = r.split("=", 1)
        repos[name] = Git(path)

    merged, kinds = OrderedDict(), OrderedDict()
    for release in args.release:
        messages, rkinds = collect(repos, release)
        for full, msg in messages.items():
            have = merged.get(full)
            if have is None:
                merged[full] = msg
                continue
            if have.get("special") != msg.get("special"):
                raise SystemExit(f"{full}: special kind differs between releases")
            numbers = {f["n"]: i for i, f in enumerate(have["fields"])}
            for f in msg["fields"]:
                i = numbers.get(f["n"])
                if i is None:
                    have["fields"].append(f)
                    continue
                old = have["fields"][i]
                if (old["label"], old["type"]) != (f["label"], f["type"]):
                    raise SystemExit(f"{full} field {f['n']}: {old} vs {f}")
                attrs = ("json", "inline", "ptr", "omitempty", "omitzero", "skip")
                if any(old[a] != f[a] for a in attrs):
                    print(f"note: {full}.{f['proto']}: Go tags changed in {release}: "
                          + ", ".join(f"{a} {old[a]}->{f[a]}" for a in attrs if old[a] != f[a]),
                          file=sys.stderr)
                    have["fields"][i] = f
        for k in rkinds:
            kinds.setdefault((k[0], k[1]), k[2])

    names = list(merged)
    index = {n: i for i, n in enumerate(names)}
    out_messages = []
    for n in names:
        msg = merged[n]
        fields = []
        for f in sorted(msg["fields"], key=lambda f: f["n"]):
            t = f["type"]
            if t not in SCALARS:
                if t not in index:
                    raise SystemExit(f"{n}.{f['proto']}: unknown type {t}")
                t = {"message": index[t]}
            if f["omitzero"] and merged.get(f["type"], {}).get("special") not in ("time", "micro_time"):
                raise SystemExit(f"{n}.{f['proto']}: omitzero is supported on Time and MicroTime only")
            field = {"n": f["n"], "json": None if f["skip"] else f["json"], "type": t}
            if f["label"] != "single":
                field["label"] = f["label"]
            for flag in ("inline", "ptr", "omitempty", "omitzero"):
                if f[flag]:
                    field[flag] = True
            fields.append(field)
        m = {"name": n, "fields": fields}
        if "special" in msg:
            m["special"] = msg["special"]
        out_messages.append(m)
    out_kinds = [[av, k, index[m]] for (av, k), m in sorted(kinds.items())]
    doc = {"releases": args.release, "messages": out_messages, "kinds": out_kinds}
    json.dump(doc, sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
