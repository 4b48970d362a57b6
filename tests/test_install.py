"""`make install` (issue 17) into a staging root, as a fresh clone would:
the tree of files a distribution expects (none of the test parts: the
test module and its source, the LWK's test image, the CLI's test build),
DKMS building the installed module source, and in the test VM (without the
development build's module, CLI and image) the module loads from its
installed path and the installed CLI creates an enclave without --kernel,
runs a program in it and destroys it."""
import os
import stat
import subprocess

from conftest import ROOT

import vm as vm_tool


def test_install_tree_works_in_the_vm(vm, tmp_path):
    stage = tmp_path / "stage"
    kver = vm_tool.kernel_version()
    res = subprocess.run(["make", "-s", "install", f"DESTDIR={stage}", f"KVER={kver}"], cwd=ROOT,
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    assert f"installed Atoll 0.1.0 for kernel {kver}" in res.stdout, res.stdout
    files = sorted(os.path.relpath(os.path.join(d, f), stage) for d, _, fs in os.walk(stage) for f in fs)
    for want in ["usr/local/bin/atoll", "usr/local/lib/atoll/atoll-kernel", "usr/local/include/atoll_abi.h",
                 "usr/local/include/atoll_abi_gen.h", "usr/local/include/atoll_msg.h",
                 "usr/local/include/xpmem.h", "usr/local/lib/libxpmem.a", "usr/local/lib/libxpmem.so",
                 "usr/local/include/atoll/hrt.h", "usr/local/lib/libatoll-hrt.a",
                 "usr/local/lib/libatoll-hrt.so",
                 "usr/local/lib/atoll/spank_atoll.so", f"lib/modules/{kver}/updates/atoll.ko",
                 "lib/udev/rules.d/99-atoll.rules", "usr/src/atoll-0.1.0/dkms.conf",
                 "usr/src/atoll-0.1.0/host/Kbuild", "usr/src/atoll-0.1.0/host/main.c",
                 "usr/src/atoll-0.1.0/abi/atoll_abi.h", "usr/src/atoll-0.1.0/abi/atoll_abi_gen.h"]:
        assert want in files, (want, files)
    assert not [f for f in files if f.endswith((".o", ".mod.c", ".cmd"))], files
    assert not [f for f in files if "atoll_test" in f or "kmsg_check" in f or f.endswith("-test")], files
    help_text = subprocess.run([str(stage / "usr/local/bin/atoll"), "--help"], capture_output=True,
                               text=True).stdout
    assert "create" in help_text and "kmsg-" not in help_text, help_text
    assert os.stat(stage / "usr/local/bin/atoll").st_mode & stat.S_IXOTH
    # DKMS builds the installed source for the kernel (in a tree of its own here).
    tree = tmp_path / "dkms"
    tree.mkdir()
    for step in [["add"], ["build", "-k", kver]]:
        res = subprocess.run(["dkms", *step, "--sourcetree", str(stage / "usr/src"), "--dkmstree", str(tree),
                              "atoll/0.1.0"], capture_output=True, text=True, timeout=600)
        assert res.returncode == 0, (step, res.stdout + res.stderr)
    assert (tree / f"atoll/0.1.0/{kver}/x86_64/module/atoll.ko").exists(), os.listdir(tree / "atoll/0.1.0")

    out = vm(r'''
[ -e /dev/atoll ] && { echo "a module is loaded already"; exit 2; }
[ -e /bin/atoll ] && { echo "the development CLI is in the VM"; exit 2; }
insmod /extra/lib/modules/$(uname -r)/updates/atoll.ko || exit 3
echo "MODE $(stat -c %a /dev/atoll)"
PATH=/extra/usr/local/bin:$PATH
atoll create --cpus 2 --mem 128M --name inst || exit 4
atoll run inst -- /usr/bin/echo hello from the installed tree; echo "RUN: $?"
atoll destroy inst > /dev/null || exit 5
rmmod atoll && echo UNLOADED
''', extra_dir=str(stage), files={}, timeout=240)
    assert out.status == 0, out.output
    assert "MODE 666" in out.output, out.output
    assert "created enclave inst" in out.output, out.output
    assert "hello from the installed tree" in out.output and "RUN: 0" in out.output, out.output
    assert "UNLOADED" in out.output, out.output
