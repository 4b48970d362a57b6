"""A results file's figures, read so that a figure it lacks shows as "not
measured" instead of failing: Doc(data)["a"]["b"] is the figure, or ABSENT
when any step is missing (or null), and arithmetic on ABSENT stays ABSENT."""

NOT_MEASURED = "not measured"


class Absent:
    """A figure the results file does not have."""

    def __getitem__(self, key):
        return self

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0

    def keys(self):
        return ()

    def _same(self, *_):
        return self

    __add__ = __radd__ = __sub__ = __rsub__ = _same
    __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _same
    __neg__ = _same

    def __repr__(self):
        return "ABSENT"


ABSENT = Absent()


class Doc:
    """A JSON dict or list whose missing keys read as ABSENT."""

    def __init__(self, data):
        self.data = data

    def __getitem__(self, key):
        try:
            value = self.data[key]
        except (KeyError, IndexError, TypeError):
            return ABSENT
        if value is None:  # a figure the driver could not take
            return ABSENT
        return Doc(value) if isinstance(value, (dict, list)) else value

    def __iter__(self):
        return (ABSENT if v is None else Doc(v) if isinstance(v, (dict, list)) else v for v in self.data)

    def __len__(self):
        return len(self.data)

    def keys(self):
        return self.data.keys() if isinstance(self.data, dict) else range(len(self.data))


def absent(*values):
    """True if any of the values (or any item of a list of them) is missing."""
    for v in values:
        if v is ABSENT or (isinstance(v, (list, tuple)) and (not v or absent(*v))):
            return True
    return False


def ratio(a, b):
    """a / b; 0 / 0 is 0 (nothing against nothing), x / 0 infinite."""
    if absent(a, b):
        return ABSENT
    if b == 0:
        return 0.0 if a == 0 else float("inf")
    return a / b


def listed(values):
    """A list of figures, or ABSENT if it is missing or holds a missing one."""
    out = list(values)
    return ABSENT if absent(out) else out


def fmt(value, spec="{:.2f}"):
    """The figure in `spec`, or "not measured"."""
    return NOT_MEASURED if absent(value) else spec.format(value)


def text(value):
    """The figure as it is (a count, a name), or "not measured"."""
    return fmt(value, "{}")


def size_text(n):
    """A message or segment size in bytes as people write it: 8 B, 4 KiB, 1 MiB."""
    if absent(n):
        return NOT_MEASURED
    n = int(n)
    for unit, shift in [("GiB", 30), ("MiB", 20), ("KiB", 10)]:
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"
