//! Alembic time samplings: when each sample of a property is, in seconds.

/// One time sampling of the archive: uniform (one time, a step), cyclic (several times per
/// cycle) or acyclic (every time listed).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TimeSampling {
    /// Seconds per cycle (the step of a uniform sampling).
    pub time_per_cycle: f64,
    /// Times of one cycle (all times when acyclic).
    pub times: Vec<f64>,
}

impl TimeSampling {
    /// Alembic's acyclic marker is a time per cycle of `f64::MAX / 32`; anything that large is
    /// read as acyclic.
    pub(crate) fn is_acyclic(&self) -> bool {
        self.time_per_cycle >= f64::MAX / 64.0
    }

    /// One time per cycle: samples `step` seconds apart.
    pub(crate) fn is_uniform(&self) -> bool {
        !self.is_acyclic() && self.times.len() == 1
    }

    /// The time of sample `i` in seconds; `None` when an acyclic sampling lists fewer times.
    pub(crate) fn time(&self, i: usize) -> Option<f64> {
        if self.is_acyclic() {
            return self.times.get(i).copied();
        }
        let n = self.times.len();
        let base = self.times.get(i % n.max(1))?;
        Some(base + (i / n) as f64 * self.time_per_cycle)
    }

    /// The sample (of `count`) whose time is nearest `t` (times increase with the index).
    pub(crate) fn nearest_index(&self, t: f64, count: usize) -> usize {
        let time = |i: usize| self.time(i).unwrap_or(f64::INFINITY);
        // First index whose time is >= t.
        let (mut lo, mut hi) = (0usize, count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if time(mid) < t {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        match lo {
            0 => 0,
            i if i >= count => count.saturating_sub(1),
            i if (time(i) - t).abs() < (t - time(i - 1)).abs() => i,
            i => i - 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_sampling_kinds() {
        let uniform = TimeSampling {
            time_per_cycle: 0.5,
            times: vec![1.0],
        };
        assert!(uniform.is_uniform());
        assert_eq!(uniform.time(4), Some(3.0));
        assert_eq!(uniform.nearest_index(2.2, 10), 2);
        assert_eq!(uniform.nearest_index(2.3, 10), 3);
        assert_eq!(uniform.nearest_index(-5.0, 10), 0);
        assert_eq!(uniform.nearest_index(99.0, 10), 9);
        let cyclic = TimeSampling {
            time_per_cycle: 1.0,
            times: vec![0.0, 0.25],
        };
        assert_eq!(cyclic.time(3), Some(1.25));
        let acyclic = TimeSampling {
            time_per_cycle: f64::MAX / 32.0,
            times: vec![0.0, 0.1, 0.7],
        };
        assert!(acyclic.is_acyclic() && !acyclic.is_uniform());
        assert_eq!(acyclic.time(2), Some(0.7));
        assert_eq!(acyclic.time(3), None);
        assert_eq!(acyclic.nearest_index(0.5, 3), 2);
        assert_eq!(acyclic.nearest_index(0.3, 3), 1);
    }
}
