//! Point-to-segment distances (bones are segments between joint positions).

use glam::Vec3;

/// Where along segment `a..b` the point closest to `p` lies: 0 at `a`, 1 at `b` (0 for a
/// segment of zero length).
pub fn segment_parameter(p: Vec3, a: Vec3, b: Vec3) -> f32 {
    let ab = b - a;
    let len2 = ab.length_squared();
    if len2 <= f32::MIN_POSITIVE {
        return 0.0;
    }
    ((p - a).dot(ab) / len2).clamp(0.0, 1.0)
}

/// The point of segment `a..b` closest to `p` (the segment may have zero length).
pub fn closest_on_segment(p: Vec3, a: Vec3, b: Vec3) -> Vec3 {
    a + (b - a) * segment_parameter(p, a, b)
}

/// Distance from `p` to the segment `a..b`.
pub fn segment_distance(p: Vec3, a: Vec3, b: Vec3) -> f32 {
    (p - closest_on_segment(p, a, b)).length()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_to_interior_ends_and_degenerate_segments() {
        let (a, b) = (Vec3::ZERO, Vec3::X * 2.0);
        assert!((segment_distance(Vec3::new(1.0, 1.0, 0.0), a, b) - 1.0).abs() < 1e-6);
        assert!((segment_distance(Vec3::new(-3.0, 0.0, 0.0), a, b) - 3.0).abs() < 1e-6);
        assert!((segment_distance(Vec3::new(2.0, 0.0, 4.0), a, b) - 4.0).abs() < 1e-6);
        assert!((segment_distance(Vec3::Y, a, a) - 1.0).abs() < 1e-6);
    }
}
