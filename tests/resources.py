"""Linux's CPUs and memory as one line, printed by a VM script before and
after enclaves come and go, and the check that nothing was lost."""
import re

# Defines `resources` in a VM script: one RESOURCES line per call.
RESOURCES = r'''
resources() {
    echo "RESOURCES cpus=$(cat /sys/devices/system/cpu/online) $(grep MemTotal /proc/meminfo | tr -s ' ' | tr ' ' '=')"
}
'''


def assert_nothing_lost(output):
    """Every RESOURCES line is the same, and Linux has all four CPUs."""
    lines = re.findall(r"^RESOURCES (.*)$", output, re.M)
    assert len(lines) >= 2, output
    assert all(line == lines[0] for line in lines), \
        "Linux's CPUs or memory changed:\n" + "\n".join(lines)
    assert "cpus=0-3" in lines[0]
