//! Axis-aligned boxes: the smallest closed meshes, for tests and generated shapes.

use glam::Vec3;

/// Corner `k` (bit 0: x, bit 1: y, bit 2: z; 0 = low side) and the 12 outward-facing triangles.
const TRIANGLES: [[u32; 3]; 12] = [
    [0, 2, 3],
    [0, 3, 1],
    [4, 5, 7],
    [4, 7, 6],
    [0, 1, 5],
    [0, 5, 4],
    [2, 6, 7],
    [2, 7, 3],
    [0, 4, 6],
    [0, 6, 2],
    [1, 3, 7],
    [1, 7, 5],
];

/// Append the closed box from `lo` to `hi` (8 corners, 12 triangles wound outwards).
pub fn append_cuboid(positions: &mut Vec<Vec3>, triangles: &mut Vec<[u32; 3]>, lo: Vec3, hi: Vec3) {
    let base = positions.len() as u32;
    positions.extend((0..8).map(|k| {
        Vec3::new(
            if k & 1 == 0 { lo.x } else { hi.x },
            if k & 2 == 0 { lo.y } else { hi.y },
            if k & 4 == 0 { lo.z } else { hi.z },
        )
    }));
    triangles.extend(TRIANGLES.iter().map(|t| t.map(|i| base + i)));
}

/// The closed box from `lo` to `hi` as positions and triangles.
pub fn cuboid(lo: Vec3, hi: Vec3) -> (Vec<Vec3>, Vec<[u32; 3]>) {
    let mut positions = Vec::with_capacity(8);
    let mut triangles = Vec::with_capacity(12);
    append_cuboid(&mut positions, &mut triangles, lo, hi);
    (positions, triangles)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triangles_face_outwards_and_enclose_the_volume() {
        let (p, t) = cuboid(Vec3::ZERO, Vec3::new(1.0, 2.0, 3.0));
        let centre = Vec3::new(0.5, 1.0, 1.5);
        let mut volume = 0.0;
        for tri in &t {
            let [a, b, c] = tri.map(|i| p[i as usize]);
            let normal = (b - a).cross(c - a);
            assert!(normal.dot((a + b + c) / 3.0 - centre) > 0.0, "{tri:?} faces inwards");
            volume += a.dot(b.cross(c)) / 6.0;
        }
        assert!((volume - 6.0).abs() < 1e-5, "volume {volume}");
    }
}
