//! Control messages' payloads: little-endian u64 words.

/// Up to 6 words as little-endian bytes, and how many bytes they take.
pub fn to_bytes(words: &[u64]) -> ([u8; 48], usize) {
    let mut bytes = [0u8; 48];
    let words = &words[..words.len().min(6)];
    for (chunk, w) in bytes.chunks_mut(8).zip(words) {
        chunk.copy_from_slice(&w.to_le_bytes());
    }
    (bytes, words.len() * 8)
}
