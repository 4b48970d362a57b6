#!/usr/bin/env python3
"""Finds import loops among the files of a Rust crate: files that import each
other, directly or around a circle (issue 40). A file imports another when it
names a path into that file's module (`use crate::a::b`, `super::x`, a child
module's items); declaring a child (`mod x;`) is not an import. Exits 1 and
lists each loop's files when there is one.

Usage: import_loops.py SRC_DIR...   (each the `src` directory of one crate)
"""

import re
import sys
from pathlib import Path

PATH_RE = re.compile(r"\b(crate|super|self|[a-z_][a-z0-9_]*)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
MOD_RE = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+([a-z_][a-z0-9_]*)\s*;", re.M)
INLINE_MOD_RE = re.compile(r"\bmod\s+([a-z_][a-z0-9_]*)\s*\{")
MACRO_RE = re.compile(r"#\[macro_export\]\s*macro_rules!\s*([a-z_][a-z0-9_]*)")
USE_RE = re.compile(r"\buse\s+([^;]+);")
LINE_COMMENT_RE = re.compile(r"//[^\n]*")
BLOCK_COMMENT_RE = re.compile(r"/\*.*?\*/", re.S)
STRING_RE = re.compile(r'"(?:\\.|[^"\\])*"')


def module_path(src: Path, file: Path) -> tuple:
    parts = list(file.relative_to(src).with_suffix("").parts)
    if parts in (["main"], ["lib"]):
        return ()
    if parts[-1] == "mod":
        parts.pop()
    return tuple(parts)


def expand_use(tree: str) -> list:
    """`a::{b, c::{d, e}}` -> ["a::b", "a::c::d", "a::c::e"] (renames dropped)."""
    tree = re.sub(r"\s+as\s+\w+", "", tree)  # renames: the path is what counts
    tree = re.sub(r"\s+", "", tree)
    out = []

    def walk(prefix, text):
        depth, start, items = 0, 0, []
        for i, ch in enumerate(text):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == "," and depth == 0:
                items.append(text[start:i])
                start = i + 1
        items.append(text[start:])
        for item in filter(None, items):
            brace = item.find("{")
            if brace >= 0:
                walk(prefix + item[:brace], item[brace + 1:item.rindex("}")])
            else:
                out.append(prefix + item)

    walk("", tree)
    return [p.rstrip(":") for p in out]


def clean(text: str) -> str:
    text = BLOCK_COMMENT_RE.sub("", text)
    text = STRING_RE.sub('""', text)
    return LINE_COMMENT_RE.sub("", text)


def inline_modules(text: str) -> list:
    """(name, start, end) of each `mod name { ... }` written inside the file."""
    out = []
    for m in INLINE_MOD_RE.finditer(text):
        depth = 0
        for i in range(m.end() - 1, len(text)):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                out.append((m.group(1), m.end(), i))
                break
    return out


def crate_graph(src: Path) -> dict:
    files = sorted(p for p in src.rglob("*.rs"))
    by_module = {module_path(src, f): f for f in files}
    graph = {f: set() for f in files}
    # `#[macro_export]` macros are named at the crate root: `crate::m` is
    # their own file.
    for f in files:
        for name in MACRO_RE.findall(f.read_text()):
            by_module[("!" + name,)] = f
    for f in files:
        text = clean(f.read_text())
        children = set(MOD_RE.findall(text))
        inline = inline_modules(text)
        found = []
        for m in USE_RE.finditer(text):
            found += [(m.start(), p) for p in expand_use(m.group(1))]
        body = USE_RE.sub(lambda m: " " * len(m.group(0)), text)
        found += [(m.start(), m.group(1) + m.group(2)) for m in PATH_RE.finditer(body)]
        for at, p in found:
            # Inside `mod tests { ... }`, `super` is this file's own module.
            here = module_path(src, f) + tuple(name for name, a, b in inline if a < at < b)
            target = resolve(here, children, p.split("::"), by_module)
            if target is not None and target != f:
                graph[f].add(target)
    return graph


def resolve(here, children, segs, by_module):
    """The file whose module the path names (its longest module prefix)."""
    first, rest = segs[0], segs[1:]
    if first == "crate":
        base = ()
    elif first == "self":
        base = here
    elif first == "super":
        base = here
        while first == "super":
            base = base[:-1]
            first, rest = (rest[0], rest[1:]) if rest else ("", [])
        rest = ([first] if first else []) + rest
    elif first in children:
        base, rest = here + (first,), rest
    else:
        return None  # another crate, std, or an item in scope
    path = base + tuple(s for s in rest if s not in ("*", "self"))
    if base == () and path and ("!" + path[0],) in by_module:
        return by_module[("!" + path[0],)]
    for n in range(len(path), len(base) - 1, -1):
        if path[:n] in by_module:
            return by_module[path[:n]]
    return None


def loops(graph: dict) -> list:
    """Strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def main(argv):
    found = 0
    for arg in argv[1:]:
        src = Path(arg)
        graph = crate_graph(src)
        for comp in loops(graph):
            found += 1
            print(f"import loop in {src}: {len(comp)} files")
            for f in comp:
                inside = sorted(str(g.relative_to(src)) for g in graph[f] if g in comp)
                print(f"  {f.relative_to(src)} -> {', '.join(inside)}")
    total = sum(len(list(Path(a).rglob('*.rs'))) for a in argv[1:])
    print(f"import_loops: {total} files in {len(argv) - 1} crates, {found} loops")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
