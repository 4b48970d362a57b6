//! Structs as the bytes that cross a boundary, field by field in their C
//! layout, little-endian: the helpers the *_bytes modules share.

/// Appends fields in order, little-endian, as the C layout places them.
pub(crate) struct Writer<'a> {
    pub(crate) out: &'a mut [u8],
    pub(crate) at: usize,
}

impl Writer<'_> {
    pub(crate) fn put(&mut self, bytes: &[u8]) {
        self.out[self.at..self.at + bytes.len()].copy_from_slice(bytes);
        self.at += bytes.len();
    }
}

/// Takes fields in order, little-endian.
pub(crate) struct Reader<'a> {
    pub(crate) bytes: &'a [u8],
    pub(crate) at: usize,
}

impl Reader<'_> {
    pub(crate) fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut v = [0u8; N];
        v.copy_from_slice(&self.bytes[self.at..self.at + N]);
        self.at += N;
        v
    }
    pub(crate) fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }
    pub(crate) fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }
    pub(crate) fn i64(&mut self) -> i64 {
        i64::from_le_bytes(self.take())
    }
}
