"""Broken LWK images for the failure tests, made from the real one on the
host: one cut short (the CLI must refuse it) and one whose entry point spins
for ever (it loads, then never reports booted)."""
import struct
import subprocess


def _entry_file_offset(image):
    """File offset of kernel_entry64, through the PT_LOAD that holds it."""
    out = subprocess.run(["nm", image], capture_output=True, text=True, check=True).stdout
    vaddr = next(int(line.split()[0], 16) for line in out.splitlines() if line.endswith(" kernel_entry64"))
    with open(image, "rb") as f:
        data = f.read()
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    for i in range(phnum):
        p_type, _, p_offset, p_vaddr, _, p_filesz = struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize)
        if p_type == 1 and p_vaddr <= vaddr < p_vaddr + p_filesz:
            return p_offset + vaddr - p_vaddr
    raise ValueError("kernel_entry64 is in no PT_LOAD segment")


def write_truncated(image, out):
    with open(image, "rb") as f:
        data = f.read()
    with open(out, "wb") as f:
        f.write(data[: len(data) // 3])


def write_hanging(image, out):
    """The image with `jmp .` (eb fe) at its entry: never boots."""
    with open(image, "rb") as f:
        data = bytearray(f.read())
    at = _entry_file_offset(image)
    data[at:at + 2] = b"\xeb\xfe"
    with open(out, "wb") as f:
        f.write(data)
