//! Bit operations over `[u64]` bitmaps, shared by the frame allocator.
//!
//! Bit `i` lives in word `i / 64` at position `i % 64`. Every operation works
//! on a half-open bit range `[from, to)` and touches whole words where it can,
//! so scanning a mostly-full bitmap costs one comparison per 64 bits.

const BITS: u64 = 64;

/// Mask of the bits `[lo, hi)` inside one word (`lo < hi <= 64`).
fn word_mask(lo: u64, hi: u64) -> u64 {
    let upper = if hi >= BITS { u64::MAX } else { (1u64 << hi) - 1 };
    let lower = !((1u64 << lo) - 1);
    upper & lower
}

/// Calls `f(word_index, mask)` for each word overlapping the bit range.
fn for_each_word(from: u64, to: u64, mut f: impl FnMut(usize, u64)) {
    let mut bit = from;
    while bit < to {
        let word = bit / BITS;
        let lo = bit % BITS;
        let hi = core::cmp::min(BITS, to - word * BITS);
        f(word as usize, word_mask(lo, hi));
        bit = (word + 1) * BITS;
    }
}

/// First bit in `[from, to)` whose value equals `value`.
fn find(words: &[u64], from: u64, to: u64, value: bool) -> Option<u64> {
    let mut bit = from;
    while bit < to {
        let word = bit / BITS;
        let lo = bit % BITS;
        let hi = core::cmp::min(BITS, to - word * BITS);
        let raw = words[word as usize];
        // Turn the search into "find a one": invert when looking for zeros,
        // so an all-ones word is skipped by a single test.
        let ones = if value { raw } else { !raw };
        let hits = ones & word_mask(lo, hi);
        if hits != 0 {
            return Some(word * BITS + u64::from(hits.trailing_zeros()));
        }
        bit = (word + 1) * BITS;
    }
    None
}

/// First set bit in `[from, to)`.
pub(crate) fn first_set(words: &[u64], from: u64, to: u64) -> Option<u64> {
    find(words, from, to, true)
}

/// First clear bit in `[from, to)`.
pub(crate) fn first_clear(words: &[u64], from: u64, to: u64) -> Option<u64> {
    find(words, from, to, false)
}

/// Number of set bits in `[from, to)`.
pub(crate) fn count_set(words: &[u64], from: u64, to: u64) -> u64 {
    let mut n = 0;
    for_each_word(from, to, |w, mask| n += u64::from((words[w] & mask).count_ones()));
    n
}

/// Sets every bit in `[from, to)`.
pub(crate) fn set_range(words: &mut [u64], from: u64, to: u64) {
    for_each_word(from, to, |w, mask| words[w] |= mask);
}

/// Clears every bit in `[from, to)`.
pub(crate) fn clear_range(words: &mut [u64], from: u64, to: u64) {
    for_each_word(from, to, |w, mask| words[w] &= !mask);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks() {
        assert_eq!(word_mask(0, 64), u64::MAX);
        assert_eq!(word_mask(0, 1), 1);
        assert_eq!(word_mask(63, 64), 1 << 63);
        assert_eq!(word_mask(4, 8), 0xf0);
    }

    #[test]
    fn set_clear_find_count() {
        let mut w = [0u64; 3];
        set_range(&mut w, 60, 130);
        assert_eq!(count_set(&w, 0, 192), 70);
        assert_eq!(first_set(&w, 0, 192), Some(60));
        assert_eq!(first_clear(&w, 60, 192), Some(130));
        assert_eq!(first_clear(&w, 60, 130), None);
        clear_range(&mut w, 64, 128);
        assert_eq!(count_set(&w, 0, 192), 6);
        assert_eq!(first_set(&w, 61, 192), Some(61));
        assert_eq!(first_set(&w, 64, 192), Some(128));
        assert_eq!(first_set(&w, 64, 128), None);
        assert_eq!(first_set(&w, 5, 5), None);
    }
}
