//! Statistics for lock benchmarks.

/// Jain's fairness index, `(Σx)² / (n·Σx²)`.
///
/// 1.0 when every thread got the same share, `1/n` when one thread got
/// everything. Empty or all-zero input has no unfairness to report, so it
/// yields 1.0 rather than dividing by zero.
pub fn jain_index(xs: &[u64]) -> f64 {
    let sum: f64 = xs.iter().map(|&x| x as f64).sum();
    let sum_sq: f64 = xs.iter().map(|&x| (x as f64) * (x as f64)).sum();
    if sum_sq == 0.0 {
        return 1.0;
    }
    sum * sum / (xs.len() as f64 * sum_sq)
}

/// Summary of a sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    /// Sample size.
    pub n: usize,
    /// Smallest value.
    pub min: u64,
    /// Largest value.
    pub max: u64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Middle value; for even `n`, the mean of the two middle values
    /// rounded down.
    pub median: u64,
}

/// Summarizes `xs`, sorting it in place. An empty sample gives all zeros
/// (with `n = 0`) instead of panicking, so a benchmark that measured
/// nothing can still be reported.
pub fn summarize(xs: &mut [u64]) -> Summary {
    let n = xs.len();
    if n == 0 {
        return Summary { n: 0, min: 0, max: 0, mean: 0.0, median: 0 };
    }
    xs.sort_unstable();
    let sum: u128 = xs.iter().map(|&x| u128::from(x)).sum();
    let median = if n % 2 == 1 {
        xs[n / 2]
    } else {
        let (a, b) = (xs[n / 2 - 1], xs[n / 2]);
        a + (b - a) / 2
    };
    Summary { n, min: xs[0], max: xs[n - 1], mean: sum as f64 / n as f64, median }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn jain_known_values() {
        assert!(close(jain_index(&[1, 1, 1, 1]), 1.0));
        assert!(close(jain_index(&[1, 0, 0, 0]), 0.25));
        assert!(close(jain_index(&[5, 5]), 1.0));
        // (1+2+3)² / (3·14) = 36/42
        assert!(close(jain_index(&[1, 2, 3]), 36.0 / 42.0));
        assert!(close(jain_index(&[]), 1.0));
        assert!(close(jain_index(&[0, 0, 0]), 1.0));
        assert!(close(jain_index(&[u64::MAX, u64::MAX]), 1.0));
    }

    #[test]
    fn summary_odd_and_even() {
        let mut xs = [9, 1, 5, 3, 7];
        let s = summarize(&mut xs);
        assert_eq!(xs, [1, 3, 5, 7, 9], "sorted in place");
        assert_eq!(s, Summary { n: 5, min: 1, max: 9, mean: 5.0, median: 5 });

        let mut xs = [4, 1, 2, 10];
        assert_eq!(summarize(&mut xs), Summary { n: 4, min: 1, max: 10, mean: 4.25, median: 3 });

        let mut xs = [u64::MAX, u64::MAX - 1];
        let s = summarize(&mut xs);
        assert_eq!(s.median, u64::MAX - 1);
        assert_eq!(s.mean, u64::MAX as f64);
    }

    #[test]
    fn summary_of_nothing() {
        assert_eq!(summarize(&mut []), Summary { n: 0, min: 0, max: 0, mean: 0.0, median: 0 });
        assert_eq!(summarize(&mut [7]).median, 7);
    }
}
