#!/usr/bin/env python3
"""Checks that every relative link in README.md and docs/**/*.md resolves.

A link is an inline link or image, `[text](target)` or `![alt](target)`, or a
reference definition, `[name]: target`, outside fenced code blocks and code
spans. A target with a scheme (`https:`, `mailto:`) is not checked. Any other
target must name a file or folder that exists, relative to the linking file;
`file.md#anchor` and `#anchor` must also match a heading of that Markdown file
by GitHub's slug rules (lowercase, punctuation dropped, spaces as hyphens, a
repeated heading's slug suffixed -1, -2, ...) or an HTML `id`/`name` in it.

Prints each broken link as `file:line: target: why` and exits 1 when there is
one, 0 otherwise.

    scripts/check-links.py <source dir>
"""
import os
import re
import sys
from urllib.parse import unquote

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
CODE_SPAN = re.compile(r"(`+)(?:.+?)\1")
# [text](target "title") and ![alt](target); text may hold one level of
# brackets (an image inside a link).
INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)(?:\s+[\"'(].*?)?\s*\)")
REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
HTML_ANCHOR = re.compile(r"<[^>]+\b(?:id|name)\s*=\s*[\"']([^\"']+)[\"']")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def markdown_files(source):
    files = [os.path.join(source, "README.md")]
    for folder, _, names in os.walk(os.path.join(source, "docs")):
        files += [os.path.join(folder, n) for n in sorted(names) if n.endswith(".md")]
    return sorted(f for f in files if os.path.isfile(f))


def prose_lines(text):
    """(line number, line) of the lines outside fenced code blocks."""
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)
        elif fence is not None and m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
            fence = None
        elif fence is None:
            yield number, line


def slug(heading):
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links and images: their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.replace("`", "")
    text = re.sub(r"(\*+|_{2,})(.+?)\1", r"\2", text)  # emphasis
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text):
    """Every anchor a Markdown text defines."""
    found = set()
    seen = {}
    previous = None
    for _, line in prose_lines(text):
        title = None
        m = HEADING.match(line)
        if m:
            title = m.group(2)
        elif previous and previous.strip() and SETEXT.match(line) and not HEADING.match(previous):
            title = previous.strip()
        if title is not None:
            base = slug(title)
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else "%s-%d" % (base, count))
        found.update(HTML_ANCHOR.findall(line))
        previous = line
    return found


def links(text):
    """(line number, target) of every link outside code."""
    for number, line in prose_lines(text):
        prose = CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)
        m = REFERENCE.match(prose)
        if m:
            yield number, m.group(1)
        for m in INLINE.finditer(prose):
            yield number, m.group(1)


def main():
    if len(sys.argv) != 2:
        print("usage: check-links.py <source dir>")
        return 2
    source = os.path.abspath(sys.argv[1])
    cache = {}

    def anchors_of(path):
        if path not in cache:
            with open(path, encoding="utf-8") as f:
                cache[path] = anchors(f.read())
        return cache[path]

    files = markdown_files(source)
    if not files:
        print("%s: no README.md and no docs/*.md" % source)
        return 1
    broken = 0
    checked = 0
    for md in files:
        with open(md, encoding="utf-8") as f:
            text = f.read()
        shown = os.path.relpath(md, source)
        for number, raw in links(text):
            target = raw[1:-1] if raw.startswith("<") else raw
            if not target or SCHEME.match(target):
                continue
            checked += 1
            path, _, anchor = target.partition("#")
            resolved = os.path.normpath(os.path.join(os.path.dirname(md), unquote(path))) if path else md
            why = None
            if not os.path.exists(resolved):
                why = "no such file"
            elif anchor and resolved.endswith(".md") and os.path.isfile(resolved):
                if unquote(anchor) not in anchors_of(resolved):
                    why = "no heading with anchor #%s in %s" % (anchor, os.path.relpath(resolved, source))
            if why:
                print("%s:%d: %s: %s" % (shown, number, target, why))
                broken += 1
    if broken:
        print("%d broken of %d relative links in %d files" % (broken, checked, len(files)))
        return 1
    print("%d relative links in %d files resolve" % (checked, len(files)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
