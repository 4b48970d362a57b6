"""Putting generated text between a document's markers,
<!-- report:NAME begin --> and <!-- report:NAME end -->: on lines of their
own for a block, or within one line (a status table cell) for a few words."""
import re

MARKER = re.compile(r"<!-- report:(?P<name>[\w-]+) begin -->(?P<body>.*?)<!-- report:(?P=name) end -->", re.S)


class MarkerError(Exception):
    pass


def names(text):
    return [m.group("name") for m in MARKER.finditer(text)]


def splice(text, rendered):
    """The text with each marked part replaced by rendered[name]; a marker
    without a rendering, or used twice, is an error."""
    found = names(text)
    unknown = sorted(set(found) - set(rendered))
    twice = sorted({n for n in found if found.count(n) > 1})
    if unknown or twice:
        raise MarkerError(f"markers without a table: {unknown}; markers used twice: {twice}")

    def fill(m):
        name, body = m.group("name"), m.group("body")
        inline = "\n" not in body
        if inline and "\n" in rendered[name]:
            raise MarkerError(f"report:{name} is within a line, but its text has several")
        # A block has blank lines around it, so that markdown sees its tables.
        content = rendered[name] if inline else f"\n\n{rendered[name]}\n\n"
        return f"<!-- report:{name} begin -->{content}<!-- report:{name} end -->"
    return MARKER.sub(fill, text)
