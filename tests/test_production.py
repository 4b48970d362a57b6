"""What users install carries no test code (issue 40): the production
atoll.ko has none of the message checks and benchmarks and answers their
ioctls with -ENOTTY, logging nothing; the release CLI has no kmsg-check,
kmsg-bench or kmsg-mcast; the production LWK image has no self-tests. Each
check has its counterpart in the test parts, so a broken check shows."""
import os
import re
import subprocess

import pytest

from conftest import ROOT

BUILD = os.path.join(ROOT, "build")
TEST_SYMBOLS = re.compile(r"kmsg_check|kmsg_bench|kmsg_mcast|atoll_test")
TEST_COMMANDS = ("kmsg-check", "kmsg-bench", "kmsg-mcast")


def built(name):
    path = os.path.join(BUILD, name)
    if not os.path.exists(path):
        pytest.fail(f"build/{name} is missing: run `make kernel module cli` first")
    return path


def symbols(path):
    res = subprocess.run(["nm", path], capture_output=True, text=True, check=True)
    return [line.split()[-1] for line in res.stdout.splitlines()]


def test_production_module_has_no_test_code():
    found = [s for s in symbols(built("atoll.ko")) if TEST_SYMBOLS.search(s)]
    assert found == [], found
    in_test_module = [s for s in symbols(built("atoll_test.ko")) if TEST_SYMBOLS.search(s)]
    assert "atoll_kmsg_check_fill" in in_test_module and "atoll_test_kmsg_bench" in in_test_module, \
        in_test_module


def help_text(cli):
    res = subprocess.run([cli, "--help"], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_release_cli_has_no_test_commands():
    release = help_text(built("atoll"))
    assert "create" in release, release
    assert [c for c in TEST_COMMANDS if c in release] == [], release
    res = subprocess.run([built("atoll"), "kmsg-bench", "x"], capture_output=True, text=True)
    assert res.returncode != 0 and "unrecognized subcommand" in res.stderr, res.stderr
    testing = help_text(built("atoll-test"))
    assert [c for c in TEST_COMMANDS if c not in testing] == [], testing


def test_production_lwk_image_has_no_self_tests():
    # A line only the self-tests print (kernel/src/selftest/kmsg.rs).
    marker = b"kmsg-check: Linux sent "
    with open(built("atoll-kernel"), "rb") as f:
        assert marker not in f.read()
    with open(built("atoll-kernel-test"), "rb") as f:
        assert marker in f.read()


# Issues the test module's ioctls on /dev/atoll (and PING, which atoll.ko
# has: it gets past the command to the struct check) and prints each errno.
IOCTLS = r"""
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include "atoll_abi.h"

static char req[1 << 16];

static void try(int fd, const char *name, unsigned long cmd)
{
    int rc = ioctl(fd, cmd, req);

    printf("IOCTL %s %d %d\n", name, rc, rc ? errno : 0);
}

int main(void)
{
    int fd = open("/dev/atoll", O_RDWR);

    if (fd < 0)
        return 2;
    try(fd, "KMSG_CHECK", ATOLL_IOC_KMSG_CHECK);
    try(fd, "KMSG_BENCH", ATOLL_IOC_KMSG_BENCH);
    try(fd, "KMSG_MCAST", ATOLL_IOC_KMSG_MCAST);
    try(fd, "PING", ATOLL_IOC_PING);
    return 0;
}
"""


def test_production_module_refuses_test_ioctls(vm, tmp_path):
    extra = tmp_path / "extra"
    extra.mkdir()
    (tmp_path / "ioctls.c").write_text(IOCTLS)
    res = subprocess.run(["gcc", "-static", "-O2", "-Wall", "-I", os.path.join(ROOT, "abi"), "-o",
                          str(extra / "ioctls"), str(tmp_path / "ioctls.c")], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    # atoll.ko alone, as installed: no test module, no /dev/atoll-test.
    out = vm(r'''
[ -e /dev/atoll-test ] && { echo "the test module is loaded"; exit 2; }
before=$(dmesg | wc -l)
/extra/ioctls || exit 3
echo "NEW KERNEL LINES: $(dmesg | tail -n +$((before + 1)) | grep -c .)"
''', extra_dir=str(extra), files={"/atoll.ko": built("atoll.ko")}, timeout=240)
    assert out.status == 0, out.output
    for name in ("KMSG_CHECK", "KMSG_BENCH", "KMSG_MCAST"):
        assert f"IOCTL {name} -1 25\n" in out.output, out.output  # ENOTTY
    assert "IOCTL PING -1 22\n" in out.output, out.output  # EINVAL: a zeroed struct
    assert "NEW KERNEL LINES: 0\n" in out.output, out.output
