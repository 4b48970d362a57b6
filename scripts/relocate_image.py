#!/usr/bin/env python3
"""Write a copy of the LWK image that QEMU's PVH loader places DELTA bytes
higher in physical memory: every PT_LOAD segment's physical address and the
PVH entry note move by DELTA; nothing else changes. The kernel must then
apply its own relocations to run there (this is how the tests prove that it
runs at an arbitrary 2 MiB-aligned address, as the co-kernel path needs)."""
import struct
import sys

PT_LOAD, PT_NOTE = 1, 4
XEN_ELFNOTE_PHYS32_ENTRY = 18


def relocate(data: bytearray, delta: int) -> bytearray:
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise ValueError("not an ELF64 image")
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    moved_entry = False
    for i in range(phnum):
        ph = phoff + i * phentsize
        p_type, = struct.unpack_from("<I", data, ph)
        p_offset, _vaddr, p_paddr, p_filesz = struct.unpack_from("<QQQQ", data, ph + 8)
        if p_type == PT_LOAD:
            struct.pack_into("<Q", data, ph + 24, p_paddr + delta)
        elif p_type == PT_NOTE:
            pos, end = p_offset, p_offset + p_filesz
            while pos + 12 <= end:
                namesz, descsz, ntype = struct.unpack_from("<III", data, pos)
                desc = pos + 12 + (namesz + 3) // 4 * 4
                if ntype == XEN_ELFNOTE_PHYS32_ENTRY:
                    entry, = struct.unpack_from("<I", data, desc)
                    struct.pack_into("<I", data, desc, entry + delta)
                    moved_entry = True
                pos = desc + (descsz + 3) // 4 * 4
    if not moved_entry:
        raise ValueError("no PVH entry note found")
    return data


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: relocate_image.py IN OUT DELTA")
    delta = int(sys.argv[3], 0)
    if delta % (2 << 20):
        sys.exit("DELTA must be a multiple of 2 MiB")
    with open(sys.argv[1], "rb") as f:
        data = bytearray(f.read())
    with open(sys.argv[2], "wb") as f:
        f.write(relocate(data, delta))


if __name__ == "__main__":
    main()
