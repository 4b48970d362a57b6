//! The runs of a range left between pages taken out of it: what a frame
//! free gives back when some of its pages have other holders.

/// Calls `run(start, len)` for each stretch of [start, end) outside the
/// pages listed in `taken` (their addresses, ascending, each `page` long
/// and inside the range).
pub fn between(
    start: u64,
    end: u64,
    page: u64,
    taken: impl IntoIterator<Item = u64>,
    mut run: impl FnMut(u64, u64),
) {
    let mut at = start;
    for t in taken {
        if at < t {
            run(at, t - at);
        }
        at = t + page;
    }
    if at < end {
        run(at, end - at);
    }
}

#[cfg(test)]
mod tests {
    use super::between;

    fn runs(start: u64, end: u64, taken: &[u64]) -> Vec<(u64, u64)> {
        let mut out = vec![];
        between(start, end, 0x1000, taken.iter().copied(), |a, n| out.push((a, n)));
        out
    }

    #[test]
    fn nothing_taken_is_one_run() {
        assert_eq!(runs(0x10000, 0x14000, &[]), vec![(0x10000, 0x4000)]);
    }

    #[test]
    fn taken_pages_split_the_range_at_either_end_and_inside() {
        assert_eq!(
            runs(0x10000, 0x16000, &[0x10000, 0x12000, 0x13000, 0x15000]),
            vec![(0x11000, 0x1000), (0x14000, 0x1000)]
        );
        assert_eq!(runs(0x10000, 0x12000, &[0x10000, 0x11000]), vec![]);
        assert_eq!(runs(0x10000, 0x13000, &[0x11000]), vec![(0x10000, 0x1000), (0x12000, 0x1000)]);
    }
}
