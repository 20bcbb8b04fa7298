#!/usr/bin/env python3
"""Checks the relative links and images of README.md and docs/*.md.

Run from anywhere: `python3 hack/check-links.py`. It looks at markdown
links and images (`[text](path)`, `![alt](path)`, reference definitions
`[label]: path`) and HTML `<img src="...">` outside code blocks and code
spans. Links to http(s)://, mailto: and other schemes, and pure `#anchor`
links, are not checked. A relative link must name an existing file or
directory (relative to the file that links it); when it has a `#anchor`
and names a markdown file, the anchor must match a heading of that file
by GitHub's rules (lowercase; punctuation other than `-` and `_` removed;
spaces to `-`; repeated headings get `-1`, `-2`, ...) or an HTML
`id`/`name` in it.

Prints each broken link as `file:line: target` and exits 1 if there is
one; exits 0 otherwise.
"""

import os
import re
import sys
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# [text](target "title") and ![alt](target); the text may span lines and
# hold one level of nested brackets (an image inside a link).
INLINE = re.compile(
    r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)"
)
REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)", re.MULTILINE)
IMG = re.compile(r"<img\b[^>]*?\bsrc\s*=\s*(?:\"([^\"]*)\"|'([^']*)')", re.IGNORECASE)
HTML_ID = re.compile(r"<[a-zA-Z][^>]*?\b(?:id|name)\s*=\s*(?:\"([^\"]*)\"|'([^']*)')")
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def blank_code(text):
    """The text with fenced code blocks and code spans replaced by spaces
    (newlines kept), so offsets and line numbers stay the same."""
    out = []
    fence = None
    for line in text.splitlines(keepends=True):
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)[0] * len(m.group(1))
            out.append(re.sub(r"[^\n]", " ", line))
            continue
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            out.append(re.sub(r"[^\n]", " ", line))
            continue
        out.append(line)
    text = "".join(out)

    def spaces(m):
        return re.sub(r"[^\n]", " ", m.group(0))

    # Code spans: a run of backticks up to the same run.
    return re.sub(r"(`+)(?:(?!\1).)+?\1", spaces, text, flags=re.DOTALL)


def slug(heading):
    """GitHub's anchor for a heading's text."""
    text = heading
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links, images
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.replace("`", "")
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path, cache={}):
    """Every anchor of the markdown file `path`."""
    if path in cache:
        return cache[path]
    with open(path, encoding="utf-8") as f:
        raw = f.read()
    found = set()
    counts = {}
    lines = blank_fences_only(raw).splitlines()
    for i, line in enumerate(lines):
        text = None
        m = HEADING.match(line)
        if m:
            text = m.group(2)
        elif i > 0 and SETEXT.match(line) and lines[i - 1].strip() and not HEADING.match(lines[i - 1]):
            # A setext underline; `---` after a paragraph line is one too.
            text = lines[i - 1].strip()
        if text is None:
            continue
        base = slug(text)
        n = counts.get(base, 0)
        counts[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    for m in HTML_ID.finditer(raw):
        found.add(m.group(1) if m.group(1) is not None else m.group(2))
    cache[path] = found
    return found


def blank_fences_only(text):
    """The text with fenced code blocks blanked (for headings: `#` lines in
    code are not headings)."""
    out = []
    fence = None
    for line in text.splitlines(keepends=True):
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)
            out.append("\n")
            continue
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            out.append("\n")
            continue
        out.append(line)
    return "".join(out)


def targets(text):
    """(offset, target) of every link and image in `text` (code blanked)."""
    for m in INLINE.finditer(text):
        yield m.start(1), m.group(1)
    for m in REFERENCE.finditer(text):
        yield m.start(1), m.group(1)
    for m in IMG.finditer(text):
        g = 1 if m.group(1) is not None else 2
        yield m.start(g), m.group(g)


def broken(path, target):
    """Why `target`, linked from `path`, is broken, or None."""
    target = target.strip()
    if target.startswith("<") and target.endswith(">"):
        target = target[1:-1]
    if not target or target.startswith("#") or SCHEME.match(target) or target.startswith("//"):
        return None
    file_part, _, anchor = target.partition("#")
    file_part = urllib.parse.unquote(file_part.split("?", 1)[0])
    if file_part.startswith("/"):
        resolved = os.path.join(ROOT, file_part.lstrip("/"))
    else:
        resolved = os.path.join(os.path.dirname(path), file_part)
    resolved = os.path.normpath(resolved)
    if not os.path.exists(resolved):
        return "no such file"
    if anchor and resolved.endswith(".md") and os.path.isfile(resolved):
        if urllib.parse.unquote(anchor) not in anchors(resolved):
            return "no such heading"
    return None


def files():
    out = [os.path.join(ROOT, "README.md")]
    docs = os.path.join(ROOT, "docs")
    if os.path.isdir(docs):
        out += sorted(
            os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md")
        )
    return [f for f in out if os.path.isfile(f)]


def main():
    bad = []
    for path in files():
        with open(path, encoding="utf-8") as f:
            text = blank_code(f.read())
        for offset, target in targets(text):
            why = broken(path, target)
            if why:
                line = text.count("\n", 0, offset) + 1
                bad.append((os.path.relpath(path, ROOT), line, target, why))
    for rel, line, target, why in sorted(bad):
        print(f"{rel}:{line}: {target}")
    if bad:
        reasons = ", ".join(sorted({why for *_, why in bad}))
        print(f"{len(bad)} broken link(s) ({reasons})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
