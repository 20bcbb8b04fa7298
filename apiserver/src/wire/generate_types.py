#!/usr/bin/env python3
"""Generate types.json, the table that drives the Go-faithful JSON encoder.

kube-apiserver prints objects with Go's encoding/json, so the bytes a client
sees follow the Go structs: fields in declaration order (embedded `inline`
structs spliced in where they are declared), zero values of non-pointer
fields printed unless `omitempty` (structs always), and a few types with
their own MarshalJSON (Time, Quantity, IntOrString, ...). This script reads
those facts from the upstream Go types of one release and writes them as a
compact table; `wire/types.rs` parses it once.

Sibling of codec/protobuf/generate_schema.py (same sources, same reading of
Go struct tags), but ordered by Go declaration, not by protobuf number, and
covering structs without protobuf tags (meta.k8s.io Table).

Usage (git directories of the upstream repositories, with their tags):

    python3 generate_types.py \\
        --repo api=/path/kubernetes/api.git \\
        --repo apimachinery=/path/kubernetes/apimachinery.git \\
        --repo apiextensions-apiserver=/path/kubernetes/apiextensions-apiserver.git \\
        --repo kube-aggregator=/path/kubernetes/kube-aggregator.git \\
        --release v0.33.13 > types.json

Output: {"release", "types": [[code, go_name, arg]], "structs": [[go_name,
[[json, type, omitempty]]]], "kinds": [[apiVersion, kind, struct]]}.
Type codes: s string, b bool, i32/i64/u64 integers, f float, B []byte
(base64), a interface{} (any JSON), T metav1.Time, M MicroTime, D Duration,
Q Quantity, I IntOrString, R raw JSON (FieldsV1, apiextensions JSON), X
RawExtension (an embedded object), P1/P2/P3 JSONSchemaPropsOr{Bool,Array,
StringArray} (arg: the JSONSchemaProps type), @ struct (arg: struct index),
* pointer, [ slice, { map with string keys (arg: element type).
"""

import argparse
import json
import re
import subprocess
import sys

# Packages outside k8s.io/api whose types reach served objects. (repo, dir)
EXTRA_PACKAGES = [
    ("apimachinery", "pkg/apis/meta/v1"),
    ("apimachinery", "pkg/runtime"),
    ("apimachinery", "pkg/types"),
    ("apimachinery", "pkg/util/intstr"),
    ("apimachinery", "pkg/api/resource"),
    ("apiextensions-apiserver", "pkg/apis/apiextensions/v1"),
    ("apiextensions-apiserver", "pkg/apis/apiextensions/v1beta1"),
    ("kube-aggregator", "pkg/apis/apiregistration/v1"),
    ("kube-aggregator", "pkg/apis/apiregistration/v1beta1"),
]

META = "k8s.io/apimachinery/pkg/apis/meta/v1"
APIEXT = ["k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1",
          "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"]

# Types with a hand-written MarshalJSON: (import path, name) -> code.
SPECIAL = {
    (META, "Time"): "T",
    (META, "MicroTime"): "M",
    (META, "Duration"): "D",
    (META, "FieldsV1"): "R",
    ("k8s.io/apimachinery/pkg/runtime", "RawExtension"): "X",
    ("k8s.io/apimachinery/pkg/util/intstr", "IntOrString"): "I",
    ("k8s.io/apimachinery/pkg/api/resource", "Quantity"): "Q",
}
for _p in APIEXT:
    SPECIAL[(_p, "JSON")] = "R"
    SPECIAL[(_p, "JSONSchemaPropsOrBool")] = "P1"
    SPECIAL[(_p, "JSONSchemaPropsOrArray")] = "P2"
    SPECIAL[(_p, "JSONSchemaPropsOrStringArray")] = "P3"

# MarshalJSON methods that never reach a served object's fields.
IGNORED_MARSHALERS = {(META, "GroupVersion"), ("k8s.io/apimachinery/pkg/runtime", "Unknown"),
                      ("k8s.io/apimachinery/pkg/runtime", "encodable")}

BASIC = {
    "string": "s", "bool": "b", "int": "i64", "int64": "i64", "int32": "i32",
    "int16": "i32", "int8": "i32", "uint": "u64", "uint64": "u64", "uint32": "u64",
    "uint16": "u64", "byte": "u64", "float64": "f", "float32": "f",
}

# Kinds that metav1.AddToGroupVersion registers as unversioned, in "v1".
UNVERSIONED_KINDS = ["Status", "APIVersions", "APIGroupList", "APIGroup", "APIResourceList"]


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


class Package:
    """The type declarations of one Go package."""

    def __init__(self, path):
        self.path = path
        self.name = path.rsplit("/", 1)[-1]
        self.structs = {}  # name -> [field dicts]
        self.named = {}  # name -> (type expression, imports)
        self.marshalers = set()
        self.group = None

    def add_file(self, text):
        clean = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
        gm = (re.search(r"\+groupName=([\w.\-]*)", text)
              or re.search(r"\bGroupName\s*=\s*\"([^\"]*)\"", text))
        if gm:
            self.group = gm.group(1)
        clean = re.sub(r"(?m)^\s*//.*$", "", clean)
        imports = parse_imports(clean)
        for m in re.finditer(r"(?m)^func\s*\(\s*\w+\s+\*?(\w+)\s*\)\s*MarshalJSON\(", clean):
            self.marshalers.add(m.group(1))
        for m in re.finditer(r"(?m)^type\s+(\w+)\s+struct\s*\{\s*\}", clean):
            self.structs[m.group(1)] = ([], imports)
        clean = re.sub(r"(?m)^type\s+(\w+)\s+struct\s*\{\s*\}", "", clean)
        for m in re.finditer(r"(?ms)^type\s+(\w+)\s+struct\s*\{(.*?)^\}", clean):
            self.structs[m.group(1)] = (self.parse_fields(m.group(1), m.group(2)), imports)
        for m in re.finditer(r"(?m)^type\s+(\w+)\s+(?:=\s*)?([^\s{][^\n{]*?)\s*$", clean):
            if m.group(2) not in ("struct", "interface"):
                self.named[m.group(1)] = (m.group(2), imports)

    @staticmethod
    def parse_fields(struct, body):
        fields = []
        for line in body.split("\n"):
            line = re.sub(r"\s//.*$", "", line).strip()
            if not line:
                continue
            tm = re.search(r"`([^`]*)`", line)
            tag = tm.group(1) if tm else ""
            decl = line[:tm.start()].strip() if tm else line
            if re.fullmatch(r"\*?[\w.]+", decl):
                gotype, embedded = decl, True
                name = gotype.lstrip("*").split(".")[-1]
            else:
                dm = re.fullmatch(r"(\w+(?:\s*,\s*\w+)*)\s+(.+)", decl)
                if not dm:
                    raise SystemExit(f"struct {struct}: cannot parse {line!r}")
                for name in re.split(r"\s*,\s*", dm.group(1)):
                    if name[0].isupper():
                        fields.append({"name": name, "type": dm.group(2).strip(),
                                       "embedded": False, "json": parse_tag(tag, "json")})
                continue
            if not name[0].isupper():
                continue  # unexported: never encoded
            fields.append({"name": name, "type": gotype, "embedded": embedded,
                           "json": parse_tag(tag, "json")})
        return fields


class Table:
    def __init__(self, packages):
        self.packages = packages  # import path -> Package
        self.types, self.type_index = [], {}
        self.structs, self.struct_index = [], {}

    def type_id(self, code, display, arg=None):
        key = (code, display, arg)
        if key not in self.type_index:
            self.type_index[key] = len(self.types)
            self.types.append([code, display] + ([] if arg is None else [arg]))
        return self.type_index[key]

    def split(self, expr):
        """Splits `map[K]V` into (K, V)."""
        depth, i = 0, 4
        while True:
            c = expr[i]
            if c == "[":
                depth += 1
            elif c == "]":
                if depth == 0:
                    return expr[4:i], expr[i + 1:]
                depth -= 1
            i += 1

    def display(self, expr, pkg, imports):
        """reflect.Type.String() of a type expression."""
        if expr.startswith("*"):
            return "*" + self.display(expr[1:], pkg, imports)
        if expr.startswith("[]"):
            return "[]" + self.display(expr[2:], pkg, imports)
        if expr.startswith("map["):
            k, v = self.split(expr)
            return f"map[{self.display(k, pkg, imports)}]{self.display(v, pkg, imports)}"
        if expr in BASIC or expr in ("interface{}", "any"):
            return "interface {}" if expr in ("interface{}", "any") else (
                "uint8" if expr == "byte" else expr)
        if "." in expr:
            alias, name = expr.split(".")
            return f"{imports[alias].rsplit('/', 1)[-1]}.{name}"
        return f"{pkg.name}.{expr}"

    def resolve(self, expr, pkg, imports, display=None):
        """The type index of a Go type expression in package `pkg`."""
        display = display or self.display(expr, pkg, imports)
        if expr.startswith("*"):
            return self.type_id("*", display, self.resolve(expr[1:], pkg, imports))
        if expr == "[]byte":
            return self.type_id("B", display)
        if expr.startswith("[]"):
            return self.type_id("[", display, self.resolve(expr[2:], pkg, imports))
        if expr.startswith("map["):
            k, v = self.split(expr)
            kt = self.types[self.resolve(k, pkg, imports)][0]
            if kt != "s":
                raise SystemExit(f"{display}: map key {k} is not a string")
            return self.type_id("{", display, self.resolve(v, pkg, imports))
        if expr in ("interface{}", "any"):
            return self.type_id("a", display)
        if expr in BASIC:
            return self.type_id(BASIC[expr], display)
        if "." in expr:
            alias, name = expr.split(".")
            target = self.packages.get(imports[alias])
            if target is None:
                raise SystemExit(f"{expr}: package {imports[alias]} is not read")
        else:
            target, name = pkg, expr
        special = SPECIAL.get((target.path, name))
        if special:
            arg = None
            if special.startswith("P"):
                arg = self.struct_type(target, "JSONSchemaProps")
            return self.type_id(special, display, arg)
        if name in target.marshalers and (target.path, name) not in IGNORED_MARSHALERS:
            raise SystemExit(f"{target.path}.{name} has a MarshalJSON the table does not know")
        if name in target.structs:
            return self.struct_type(target, name)
        if name in target.named:
            under, imps = target.named[name]
            return self.resolve(under, target, imps, display)
        raise SystemExit(f"{target.path}.{name}: unknown type")

    def struct_type(self, pkg, name):
        key = (pkg.path, name)
        if key not in self.struct_index:
            self.struct_index[key] = len(self.structs)
            entry = [name, []]
            self.structs.append(entry)
            entry[1] = self.struct_fields(pkg, name)
        return self.type_id("@", f"{pkg.name}.{name}", self.struct_index[key])

    def struct_fields(self, pkg, name):
        """Fields in Go's encoding order: declaration order, inline embeds
        spliced in; a name seen at a shallower depth wins (Go's rule)."""
        out = []
        self.walk(pkg, name, out, 0, [])
        fields, best = [], {}
        for depth, f in out:
            if f[0] not in best or depth < best[f[0]]:
                best[f[0]] = depth
        for depth, f in out:
            if best.get(f[0]) == depth:
                fields.append(f)
                best[f[0]] = -1
        return fields

    def walk(self, pkg, name, out, depth, stack):
        if (pkg.path, name) in stack:
            raise SystemExit(f"{name}: recursive inline embedding")
        gofields, imports = pkg.structs[name]
        for gf in gofields:
            tag = gf["json"]
            opts = tag.split(",")[1:] if tag is not None else []
            jname = tag.split(",")[0] if tag is not None else ""
            if jname == "-" and not opts:
                continue
            if gf["embedded"] and jname == "":
                expr = gf["type"].lstrip("*")
                if "." in expr:
                    alias, tname = expr.split(".")
                    tpkg = self.packages.get(imports[alias])
                else:
                    tpkg, tname = pkg, expr
                if tpkg is not None and tname in tpkg.structs and \
                        (tpkg.path, tname) not in SPECIAL:
                    self.walk(tpkg, tname, out, depth + 1, stack + [(pkg.path, name)])
                    continue
            key = jname or gf["name"]
            t = self.resolve(gf["type"], pkg, imports)
            out.append((depth, [key, t, 1 if "omitempty" in opts else 0]))


def collect(repos, release):
    minor = ".".join(release.split(".")[:2]) + "."
    packages, kind_dirs = {}, []
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
            dirs = sorted({f.rsplit("/", 1)[0] for f in files if f.endswith("/types.go")})
        else:
            dirs = [d for r, d in EXTRA_PACKAGES if r == repo]
        for d in dirs:
            path = f"k8s.io/{repo}/{d}"
            pkg = Package(path)
            for f in files:
                if (f.startswith(d + "/") and f.count("/") == d.count("/") + 1 and f.endswith(".go")
                        and not f.endswith("_test.go") and not f.rsplit("/", 1)[1].startswith("zz_")
                        and "generated" not in f.rsplit("/", 1)[1]):
                    pkg.add_file(git.show(tag, f))
            packages[path] = pkg
            if repo != "apimachinery" or d == "pkg/apis/meta/v1":
                kind_dirs.append(pkg)
    return packages, kind_dirs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", action="append", required=True)
    ap.add_argument("--release", required=True)
    args = ap.parse_args()
    repos = {}
    for r in args.repo:
        name, path = r.split("=", 1)
        repos[name] = Git(path)
    packages, kind_pkgs = collect(repos, args.release)
    table = Table(packages)
    kinds = {}
    for pkg in kind_pkgs:
        if pkg.group is None:
            continue
        version = pkg.path.rsplit("/", 1)[1]
        api_version = f"{pkg.group}/{version}" if pkg.group else version
        for name, (gfields, _) in sorted(pkg.structs.items()):
            if any(g["embedded"] and g["type"].split(".")[-1] == "TypeMeta"
                   and (g["json"] or "").startswith(",inline") for g in gfields):
                t = table.struct_type(pkg, name)
                kinds[(api_version, name)] = table.types[t][2]
        if pkg.path == META:
            for k in UNVERSIONED_KINDS:
                kinds[("v1", k)] = table.types[table.struct_type(pkg, k)][2]
    doc = {"release": args.release, "types": table.types, "structs": table.structs,
           "kinds": [[av, k, s] for (av, k), s in sorted(kinds.items())]}
    json.dump(doc, sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
