"""Writes cpio archives in the "newc" format the Linux kernel unpacks as an
initramfs, in pure Python so that no cpio tool is needed.

Entry layout: a 110-byte ASCII header ("070701" + 13 hex fields), the NUL
terminated name, padding to 4 bytes, the data, padding to 4 bytes. The
archive ends with an entry named TRAILER!!!.
"""
import stat


class NewcWriter:
    """Appends entries to a binary file object; call close() to end it."""

    def __init__(self, out):
        self.out = out
        self.ino = 0

    def _entry(self, name, mode, data=b"", rdev=(0, 0), nlink=1):
        self.ino += 1
        name_b = name.lstrip("/").encode() + b"\0"
        fields = (self.ino, mode, 0, 0, nlink, 0, len(data),
                  0, 0, rdev[0], rdev[1], len(name_b), 0)
        header = b"070701" + b"".join(b"%08x" % f for f in fields)
        self.out.write(header + name_b + _pad(len(header) + len(name_b)))
        self.out.write(data + _pad(len(data)))

    def dir(self, name, perm=0o755):
        self._entry(name, stat.S_IFDIR | perm, nlink=2)

    def file(self, name, data, perm=0o644):
        self._entry(name, stat.S_IFREG | perm, data)

    def symlink(self, name, target):
        self._entry(name, stat.S_IFLNK | 0o777, target.encode())

    def chardev(self, name, major, minor, perm=0o600):
        self._entry(name, stat.S_IFCHR | perm, rdev=(major, minor))

    def close(self):
        self._entry("TRAILER!!!", 0, nlink=1)


def _pad(n):
    return b"\0" * (-n % 4)
