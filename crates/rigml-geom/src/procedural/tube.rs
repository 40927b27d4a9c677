//! Straight generalised cylinders ("tubes") laid along a chain of joints, closed by
//! half-ellipsoid caps, with skin weights computed from the same parameter that places each
//! ring: every ring at distance `s` along the tube belongs to the joint whose stretch of the
//! tube contains `s`, and near a joint boundary it blends smoothly (smoothstep) into the next
//! joint, so the surface bends without tearing or creasing.

use glam::Vec3;
use rigml_core::Mesh;
use std::f32::consts::{FRAC_PI_2, TAU};

/// Extra rings in each end cap (between the last body ring and the pole).
const CAP_RINGS: usize = 3;

/// Blend half-width at a joint boundary, as a multiple of the tube's mean half-axis there:
/// about one radius on each side, the region over which a real elbow or knee skin creases.
const BLEND_PER_RADIUS: f32 = 1.0;

/// Never let two blend zones touch: each may use at most this fraction of the distance to its
/// neighbouring boundary (or to the tube's end), so a vertex has at most two influences.
const BLEND_GAP_FRACTION: f32 = 0.45;

/// One vertex's influences: two `(joint, weight)` pairs summing to 1 (the second may be 0).
pub(super) type WeightRow = [(u32, f32); 2];

/// A straight tube in the rest pose around part of the skeleton.
pub(super) struct Tube {
    /// Part name, kept as the mesh part name.
    pub name: &'static str,
    /// Centre of the first body ring (the start cap extends behind it).
    pub start: Vec3,
    /// Unit direction of the tube's axis.
    pub direction: Vec3,
    /// Axis length from the first to the last body ring.
    pub length: f32,
    /// Reference direction for the cross-section's second axis (must not be parallel to
    /// `direction`); the first axis is `direction × front`.
    pub front: Vec3,
    /// Cross-section profile: `(s, half_side, half_front)` keys with increasing `s` (distance
    /// from `start` along the axis), interpolated smoothly in between and held beyond the ends.
    pub profile: Vec<(f32, f32, f32)>,
    /// `(joint, s)`: the joint owning the tube from `s` up to the next entry's `s`; the first
    /// entry owns everything before it too unless `parent` is set.
    pub joints: Vec<(u32, f32)>,
    /// A joint that owns the tube before the first entry's `s` (the limb's attachment, e.g. the
    /// hips for a leg), blended into the first joint like any other boundary.
    pub parent: Option<u32>,
    /// Vertices per ring.
    pub around: usize,
    /// Target distance between body rings.
    pub spacing: f32,
}

/// A change of ownership along the tube, blended over `centre ± half_width`.
#[derive(Debug, Clone, Copy)]
struct Boundary {
    centre: f32,
    half_width: f32,
    before: u32,
    after: u32,
}

/// One ring of vertices: axis position, scale of the cross-section, and the cross-section's
/// half-axes before scaling.
struct Ring {
    s: f32,
    scale: f32,
    half_axes: (f32, f32),
}

impl Tube {
    /// The tube's vertices, triangles (one closed, consistently outward-oriented surface) and
    /// one weight row per vertex.
    pub fn build(&self) -> (Mesh, Vec<WeightRow>) {
        let front = (self.front - self.direction * self.front.dot(self.direction)).normalize_or_zero();
        let side = self.direction.cross(front);
        let rings = self.rings();
        let boundaries = self.boundaries();
        let m = self.around.max(3);

        let mut positions = Vec::with_capacity(rings.len() * m + 2);
        let mut weights = Vec::with_capacity(rings.len() * m + 2);
        let (start_pole, end_pole) = (-self.cap_length(0.0), self.length + self.cap_length(self.length));
        positions.push(self.start + self.direction * start_pole);
        weights.push(self.weights_at(start_pole, &boundaries));
        for ring in &rings {
            let centre = self.start + self.direction * ring.s;
            let (hs, hf) = ring.half_axes;
            let row = self.weights_at(ring.s, &boundaries);
            for a in 0..m {
                let phi = TAU * a as f32 / m as f32;
                positions.push(centre + side * (hs * ring.scale * phi.cos()) + front * (hf * ring.scale * phi.sin()));
                weights.push(row);
            }
        }
        positions.push(self.start + self.direction * end_pole);
        weights.push(self.weights_at(end_pole, &boundaries));

        let mesh = Mesh {
            positions,
            triangles: tube_triangles(rings.len(), m),
            ..Default::default()
        };
        (mesh, weights)
    }

    /// Rings from the start pole to the end pole: start cap, body, end cap.
    fn rings(&self) -> Vec<Ring> {
        let body = ((self.length / self.spacing.max(1e-3)).ceil() as usize).max(1);
        let (c0, c1) = (self.cap_length(0.0), self.cap_length(self.length));
        let (a0, a1) = (self.half_axes(0.0), self.half_axes(self.length));
        let cap_angle = |i: usize| FRAC_PI_2 * i as f32 / (CAP_RINGS + 1) as f32;
        let mut rings = Vec::with_capacity(body + 1 + 2 * CAP_RINGS);
        for i in (1..=CAP_RINGS).rev() {
            let theta = cap_angle(i);
            rings.push(Ring {
                s: -c0 * theta.sin(),
                scale: theta.cos(),
                half_axes: a0,
            });
        }
        for i in 0..=body {
            let s = self.length * i as f32 / body as f32;
            rings.push(Ring {
                s,
                scale: 1.0,
                half_axes: self.half_axes(s),
            });
        }
        for i in 1..=CAP_RINGS {
            let theta = cap_angle(i);
            rings.push(Ring {
                s: self.length + c1 * theta.sin(),
                scale: theta.cos(),
                half_axes: a1,
            });
        }
        rings
    }

    /// How far the cap at axis position `s` (0 or `length`) reaches beyond it: the smaller
    /// half-axis there, so the cap is a half-ellipsoid that is never pointier than round.
    fn cap_length(&self, s: f32) -> f32 {
        let (hs, hf) = self.half_axes(s);
        hs.min(hf)
    }

    /// Cross-section half-axes at `s`, smoothly interpolated between profile keys.
    fn half_axes(&self, s: f32) -> (f32, f32) {
        let Some(&(s0, hs0, hf0)) = self.profile.first() else {
            return (0.0, 0.0);
        };
        if s <= s0 {
            return (hs0, hf0);
        }
        for w in self.profile.windows(2) {
            let ((sa, hsa, hfa), (sb, hsb, hfb)) = (w[0], w[1]);
            if s <= sb {
                let u = smoothstep(if sb > sa { (s - sa) / (sb - sa) } else { 1.0 });
                return (hsa + (hsb - hsa) * u, hfa + (hfb - hfa) * u);
            }
        }
        self.profile.last().map_or((hs0, hf0), |&(_, hs, hf)| (hs, hf))
    }

    /// The ownership changes along the tube with their blend widths.
    fn boundaries(&self) -> Vec<Boundary> {
        let mut raw: Vec<(f32, u32, u32)> = Vec::new();
        if let (Some(parent), Some(&(first, s))) = (self.parent, self.joints.first()) {
            raw.push((s, parent, first));
        }
        for w in self.joints.windows(2) {
            raw.push((w[1].1, w[0].0, w[1].0));
        }
        let tube_start = -self.cap_length(0.0);
        let tube_end = self.length + self.cap_length(self.length);
        (0..raw.len())
            .map(|i| {
                let (centre, before, after) = raw[i];
                let prev = if i == 0 { tube_start } else { raw[i - 1].0 };
                let next = raw.get(i + 1).map_or(tube_end, |r| r.0);
                let (hs, hf) = self.half_axes(centre);
                let half_width = (BLEND_PER_RADIUS * 0.5 * (hs + hf))
                    .min(BLEND_GAP_FRACTION * (centre - prev))
                    .min(BLEND_GAP_FRACTION * (next - centre))
                    .max(0.0);
                Boundary {
                    centre,
                    half_width,
                    before,
                    after,
                }
            })
            .collect()
    }

    /// Influences of a point at axis position `s`.
    fn weights_at(&self, s: f32, boundaries: &[Boundary]) -> WeightRow {
        for b in boundaries {
            if b.half_width > 0.0 && (s - b.centre).abs() < b.half_width {
                let w = smoothstep((s - b.centre + b.half_width) / (2.0 * b.half_width));
                return [(b.before, 1.0 - w), (b.after, w)];
            }
        }
        [(self.owner(s), 1.0), (self.owner(s), 0.0)]
    }

    /// The joint whose stretch of the tube contains `s` (no blending).
    fn owner(&self, s: f32) -> u32 {
        let Some(&(first, first_s)) = self.joints.first() else {
            return 0;
        };
        match self.parent {
            Some(parent) if s < first_s => parent,
            _ => self
                .joints
                .iter()
                .rev()
                .find(|(_, js)| *js <= s)
                .map_or(first, |&(j, _)| j),
        }
    }
}

/// Triangles of a tube with `ring_count` rings of `m` vertices between two poles (vertex 0 and
/// the last vertex), ordered so that faces point outward when ring `a` runs from the side axis
/// towards the front axis (side = direction × front).
fn tube_triangles(ring_count: usize, m: usize) -> Vec<[u32; 3]> {
    let vertex = |r: usize, a: usize| (1 + r * m + a % m) as u32;
    let end_pole = (1 + ring_count * m) as u32;
    let mut triangles = Vec::with_capacity(2 * m * ring_count);
    for a in 0..m {
        triangles.push([0, vertex(0, a), vertex(0, a + 1)]);
    }
    for r in 0..ring_count.saturating_sub(1) {
        for a in 0..m {
            triangles.push([vertex(r, a), vertex(r + 1, a), vertex(r, a + 1)]);
            triangles.push([vertex(r, a + 1), vertex(r + 1, a), vertex(r + 1, a + 1)]);
        }
    }
    let last = ring_count.saturating_sub(1);
    for a in 0..m {
        triangles.push([end_pole, vertex(last, a + 1), vertex(last, a)]);
    }
    triangles
}

/// `3u² − 2u³` on `u` clamped to [0, 1]: a C¹ ramp from 0 to 1.
pub(super) fn smoothstep(u: f32) -> f32 {
    let u = u.clamp(0.0, 1.0);
    u * u * (3.0 - 2.0 * u)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rod() -> Tube {
        Tube {
            name: "rod",
            start: Vec3::ZERO,
            direction: Vec3::X,
            length: 1.0,
            front: Vec3::Z,
            profile: vec![(0.0, 0.1, 0.1), (1.0, 0.05, 0.08)],
            joints: vec![(0, 0.0), (1, 0.5)],
            parent: None,
            around: 8,
            spacing: 0.1,
        }
    }

    #[test]
    fn weights_blend_across_the_joint_only() {
        let tube = rod();
        let b = tube.boundaries();
        assert_eq!(b.len(), 1);
        assert_eq!(tube.weights_at(0.1, &b)[0], (0, 1.0));
        assert_eq!(tube.weights_at(0.9, &b)[0], (1, 1.0));
        let mid = tube.weights_at(0.5, &b);
        assert_eq!((mid[0].0, mid[1].0), (0, 1));
        assert!((mid[0].1 - 0.5).abs() < 1e-6 && (mid[1].1 - 0.5).abs() < 1e-6);
        // Continuous at the edges of the blend zone.
        let edge = b[0].centre + b[0].half_width;
        let inside = tube.weights_at(edge - 1e-4, &b);
        assert!(inside[1].1 > 0.999);
    }

    #[test]
    fn parent_owns_the_start() {
        let mut tube = rod();
        tube.parent = Some(7);
        tube.joints = vec![(0, 0.3), (1, 0.7)];
        let b = tube.boundaries();
        assert_eq!(b.len(), 2);
        assert_eq!(tube.weights_at(-0.05, &b)[0], (7, 1.0));
        assert_eq!(tube.weights_at(0.5, &b)[0], (0, 1.0));
        assert!(b[0].centre + b[0].half_width <= b[1].centre - b[1].half_width);
    }

    #[test]
    fn surface_is_closed_and_outward() {
        let (mesh, weights) = rod().build();
        assert_eq!(mesh.positions.len(), weights.len());
        mesh.validate().unwrap();
        // Every directed edge once, its reverse once: closed, consistently oriented.
        let mut edges = std::collections::HashMap::new();
        for t in &mesh.triangles {
            for k in 0..3 {
                *edges.entry((t[k], t[(k + 1) % 3])).or_insert(0) += 1;
            }
        }
        for (&(a, b), &n) in &edges {
            assert_eq!(n, 1);
            assert_eq!(edges.get(&(b, a)), Some(&1));
        }
        // Positive signed volume means outward faces; close to the ideal tube volume.
        let p = &mesh.positions;
        let volume: f32 = mesh
            .triangles
            .iter()
            .map(|t| p[t[0] as usize].dot(p[t[1] as usize].cross(p[t[2] as usize])) / 6.0)
            .sum();
        assert!(volume > 0.0, "volume {volume}");
        assert!(volume < std::f32::consts::PI * 0.1 * 0.1 * 1.2);
    }
}
