"""What the test VM runs of this process did that a summary must show: VM
runs repeated (and why) and runs whose guest kernel complained, each under
the pytest test that made it (PYTEST_CURRENT_TEST), or the command line
outside pytest. tests/conftest.py prints them at the end of the session."""
import os
import sys

# (test, reason) for each VM run that was run once more.
REPEATS = []
# (test, [complaint, ...]) for each VM run whose guest kernel complained.
COMPLAINTS = []


def current_test():
    """The running pytest test's id without its phase, else the command."""
    test = os.environ.get("PYTEST_CURRENT_TEST")
    if test:
        return test.rsplit(" (", 1)[0]
    return " ".join(os.path.basename(a) for a in sys.argv[:2])


def repeated(reason):
    REPEATS.append((current_test(), reason))


def repeats_in(test):
    return [reason for t, reason in REPEATS if t == test]


def complained(found):
    COMPLAINTS.append((current_test(), [what for what, _ in found]))


def complaints_in(test):
    return [c for t, found in COMPLAINTS if t == test for c in found]


def summary(repeats):
    """Lines for the end of a session: the count of repeated runs, then each
    with its test and reason (repeats: (test, reason) pairs)."""
    lines = [f"{len(repeats)} VM runs repeated"]
    lines += [f"  {test}: {reason}" for test, reason in repeats]
    return lines
