//! A small z-buffered triangle rasteriser with orthographic cameras.
//!
//! Own code rather than a dependency: what is needed is ~200 lines (project, edge-function
//! fill, depth test, Lambert + ambient shading, per-vertex colour interpolation), and no light
//! crate does exactly this without pulling in a GPU API or a full scene graph. Output is a
//! plain RGBA image whose background is fully transparent, plus the triangle drawn at each
//! pixel (for statistics and tests). Every step is sequential per panel, so the same input
//! gives the same bytes on every run.

use glam::{Vec2, Vec3};

/// "No triangle here" in [`Frame::triangle`].
pub const NO_TRIANGLE: u32 = u32::MAX;

/// Ambient share of the shading: the darkest lit surface keeps this much of its colour.
const AMBIENT: f32 = 0.35;

/// Fraction of the panel left empty on each side around the fitted model.
const MARGIN: f32 = 0.05;

/// An 8-bit RGBA image, rows top to bottom, 4 bytes per pixel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RgbaImage {
    width: u32,
    height: u32,
    data: Vec<u8>,
}

impl RgbaImage {
    /// A fully transparent image.
    pub fn new(width: u32, height: u32) -> RgbaImage {
        RgbaImage {
            width,
            height,
            data: vec![0; width as usize * height as usize * 4],
        }
    }

    pub fn width(&self) -> u32 {
        self.width
    }

    pub fn height(&self) -> u32 {
        self.height
    }

    /// The raw bytes, RGBA, row-major.
    pub fn as_bytes(&self) -> &[u8] {
        &self.data
    }

    /// The pixel at (x, y); `None` outside the image.
    pub fn pixel(&self, x: u32, y: u32) -> Option<[u8; 4]> {
        if x >= self.width || y >= self.height {
            return None;
        }
        let i = (y as usize * self.width as usize + x as usize) * 4;
        let p = self.data.get(i..i + 4)?;
        Some([p[0], p[1], p[2], p[3]])
    }

    fn set(&mut self, x: u32, y: u32, rgba: [u8; 4]) {
        let i = (y as usize * self.width as usize + x as usize) * 4;
        if let Some(p) = self.data.get_mut(i..i + 4) {
            p.copy_from_slice(&rgba);
        }
    }

    /// A copy of the rectangle at (x0, y0) of size w×h (clipped to the image).
    pub fn crop(&self, x0: u32, y0: u32, w: u32, h: u32) -> RgbaImage {
        let mut out = RgbaImage::new(w, h);
        for y in 0..h {
            for x in 0..w {
                if let Some(p) = self.pixel(x0 + x, y0 + y) {
                    out.set(x, y, p);
                }
            }
        }
        out
    }

    /// Copy `other` into this image with its top-left corner at (x0, y0).
    pub fn blit(&mut self, other: &RgbaImage, x0: u32, y0: u32) {
        for y in 0..other.height.min(self.height.saturating_sub(y0)) {
            for x in 0..other.width.min(self.width.saturating_sub(x0)) {
                if let Some(p) = other.pixel(x, y) {
                    self.set(x0 + x, y0 + y, p);
                }
            }
        }
    }
}

/// Which side the model is seen from. Model space is taken as Y-up with the character facing
/// +Z (the glTF convention, which rigml readers produce).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum View {
    /// From +Z, looking at the character's face.
    Front,
    /// From +X (the character's left), its front to the image's left.
    Side,
    /// From -Z.
    Back,
}

impl View {
    /// Screen right, screen up, and the direction towards the viewer, in model space.
    fn basis(self) -> (Vec3, Vec3, Vec3) {
        match self {
            View::Front => (Vec3::X, Vec3::Y, Vec3::Z),
            View::Side => (Vec3::NEG_Z, Vec3::Y, Vec3::X),
            View::Back => (Vec3::NEG_X, Vec3::Y, Vec3::NEG_Z),
        }
    }
}

/// An orthographic camera fitted to a set of points: uniform scale, centred in a square panel.
#[derive(Debug, Clone, Copy)]
pub struct Camera {
    view: View,
    center: Vec2,
    scale: f32,
    size: u32,
}

impl Camera {
    /// Fit the non-empty, finite points of every set in `point_sets` (e.g. all poses of a
    /// sheet, so they share one scale) into a `size`×`size` panel. `None` when no point is
    /// finite.
    pub fn fit(view: View, point_sets: &[&[Vec3]], size: u32) -> Option<Camera> {
        let (right, up, _) = view.basis();
        let mut lo = Vec2::splat(f32::INFINITY);
        let mut hi = Vec2::splat(f32::NEG_INFINITY);
        for p in point_sets.iter().flat_map(|s| s.iter()).filter(|p| p.is_finite()) {
            let q = Vec2::new(p.dot(right), p.dot(up));
            lo = lo.min(q);
            hi = hi.max(q);
        }
        if !lo.is_finite() || !hi.is_finite() {
            return None;
        }
        let extent = (hi - lo).max_element().max(1e-12);
        let scale = size as f32 * (1.0 - 2.0 * MARGIN) / extent;
        if !scale.is_finite() {
            return None;
        }
        Some(Camera {
            view,
            center: (lo + hi) * 0.5,
            scale,
            size,
        })
    }

    /// Pixel coordinates (x right, y down) and depth (larger = nearer the viewer).
    fn project(&self, p: Vec3) -> Vec3 {
        let (right, up, toward) = self.view.basis();
        let half = self.size as f32 * 0.5;
        Vec3::new(
            (p.dot(right) - self.center.x) * self.scale + half,
            half - (p.dot(up) - self.center.y) * self.scale,
            p.dot(toward),
        )
    }

    /// Light direction: from the viewer, a little above and to the left.
    fn light(&self) -> Vec3 {
        let (right, up, toward) = self.view.basis();
        (toward * 0.8 + up * 0.5 - right * 0.3).normalize()
    }
}

/// One rendered panel: the image and, per pixel, the index of the triangle drawn there
/// ([`NO_TRIANGLE`] for background).
#[derive(Debug, Clone)]
pub struct Frame {
    pub image: RgbaImage,
    pub triangle: Vec<u32>,
}

/// Draw `triangles` of `positions` with per-vertex `colours` (linear RGB in [0, 1]) through
/// `camera`. Triangles with an out-of-range index, a non-finite corner or no area are
/// skipped; shading is two-sided Lambert + ambient with flat face normals.
pub fn rasterize(positions: &[Vec3], triangles: &[[u32; 3]], colours: &[Vec3], camera: &Camera) -> Frame {
    let size = camera.size;
    let n = size as usize * size as usize;
    let mut image = RgbaImage::new(size, size);
    let mut depth = vec![f32::NEG_INFINITY; n];
    let mut ids = vec![NO_TRIANGLE; n];
    let light = camera.light();
    for (t, tri) in triangles.iter().enumerate() {
        let corner = |k: usize| -> Option<(Vec3, Vec3)> {
            let v = *tri.get(k)? as usize;
            Some((*positions.get(v)?, colours.get(v).copied().unwrap_or(Vec3::ONE)))
        };
        let (Some((a, ca)), Some((b, cb)), Some((c, cc))) = (corner(0), corner(1), corner(2)) else {
            continue;
        };
        let normal = (b - a).cross(c - a).normalize_or_zero();
        let shade = AMBIENT + (1.0 - AMBIENT) * normal.dot(light).abs();
        let (pa, pb, pc) = (camera.project(a), camera.project(b), camera.project(c));
        if !(pa.is_finite() && pb.is_finite() && pc.is_finite()) {
            continue;
        }
        let area = edge(pa, pb, pc);
        if area.abs() < 1e-12 {
            continue;
        }
        let min = pa.min(pb).min(pc);
        let max = pa.max(pb).max(pc);
        let x0 = min.x.floor().max(0.0) as u32;
        let y0 = min.y.floor().max(0.0) as u32;
        let x1 = (max.x.ceil().max(0.0) as u32).min(size);
        let y1 = (max.y.ceil().max(0.0) as u32).min(size);
        for y in y0..y1 {
            for x in x0..x1 {
                let p = Vec3::new(x as f32 + 0.5, y as f32 + 0.5, 0.0);
                let (wa, wb, wc) = (edge(pb, pc, p) / area, edge(pc, pa, p) / area, edge(pa, pb, p) / area);
                if wa < 0.0 || wb < 0.0 || wc < 0.0 {
                    continue;
                }
                let z = wa * pa.z + wb * pb.z + wc * pc.z;
                let i = y as usize * size as usize + x as usize;
                let Some(zbuf) = depth.get_mut(i) else { continue };
                if z <= *zbuf {
                    continue;
                }
                *zbuf = z;
                if let Some(id) = ids.get_mut(i) {
                    *id = t as u32;
                }
                let colour = (ca * wa + cb * wb + cc * wc) * shade;
                image.set(x, y, to_rgba(colour));
            }
        }
    }
    Frame { image, triangle: ids }
}

/// Twice the signed area of (a, b, p) in the screen plane.
fn edge(a: Vec3, b: Vec3, p: Vec3) -> f32 {
    (b.x - a.x) * (p.y - a.y) - (b.y - a.y) * (p.x - a.x)
}

fn to_rgba(c: Vec3) -> [u8; 4] {
    let byte = |v: f32| (v.clamp(0.0, 1.0) * 255.0).round() as u8;
    [byte(c.x), byte(c.y), byte(c.z), 255]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quad() -> (Vec<Vec3>, Vec<[u32; 3]>) {
        let p = vec![
            Vec3::new(-1.0, -1.0, 0.0),
            Vec3::new(1.0, -1.0, 0.0),
            Vec3::new(1.0, 1.0, 0.0),
            Vec3::new(-1.0, 1.0, 0.0),
        ];
        (p, vec![[0, 1, 2], [0, 2, 3]])
    }

    #[test]
    fn front_quad_fills_panel_inside_margin() {
        let (p, t) = quad();
        let cam = Camera::fit(View::Front, &[&p], 100).unwrap();
        let frame = rasterize(&p, &t, &[Vec3::ONE; 4], &cam);
        let covered = frame.triangle.iter().filter(|&&id| id != NO_TRIANGLE).count();
        assert_eq!(covered, 90 * 90, "margin is 5 px each side");
        assert_eq!(frame.image.pixel(0, 0), Some([0, 0, 0, 0]));
        assert_eq!(frame.image.pixel(50, 50).unwrap()[3], 255);
        // Seen edge-on from the side, a flat quad has no area.
        let cam = Camera::fit(View::Side, &[&p], 100).unwrap();
        let frame = rasterize(&p, &t, &[Vec3::ONE; 4], &cam);
        assert!(frame.triangle.iter().all(|&id| id == NO_TRIANGLE));
    }

    #[test]
    fn nearer_triangle_wins_in_either_order() {
        let (mut p, _) = quad();
        p.extend(p.clone().iter().map(|q| *q * 0.5 + Vec3::Z));
        let colours: Vec<Vec3> = (0..8).map(|v| if v < 4 { Vec3::X } else { Vec3::Y }).collect();
        for tris in [
            vec![[0, 1, 2], [0, 2, 3], [4, 5, 6], [4, 6, 7]],
            vec![[4, 5, 6], [4, 6, 7], [0, 1, 2], [0, 2, 3]],
        ] {
            for (view, near) in [(View::Front, Vec3::Y), (View::Back, Vec3::X)] {
                let cam = Camera::fit(view, &[&p], 64).unwrap();
                let px = rasterize(&p, &tris, &colours, &cam).image.pixel(32, 32).unwrap();
                let green = px[1] > px[0];
                assert_eq!(green, near == Vec3::Y, "{view:?} {tris:?}");
            }
        }
    }

    #[test]
    fn bad_triangles_are_skipped_not_fatal() {
        let (mut p, mut t) = quad();
        p.push(Vec3::NAN);
        t.push([0, 1, 4]);
        t.push([0, 1, 99]);
        t.push([0, 0, 1]);
        let cam = Camera::fit(View::Front, &[&p], 32).unwrap();
        let frame = rasterize(&p, &t, &[], &cam);
        assert!(frame.triangle.iter().all(|&id| id == NO_TRIANGLE || id < 2));
        assert!(Camera::fit(View::Front, &[&[Vec3::NAN]], 32).is_none());
    }

    #[test]
    fn blit_and_crop_round_trip() {
        let mut small = RgbaImage::new(2, 2);
        small.set(1, 1, [1, 2, 3, 4]);
        let mut big = RgbaImage::new(5, 5);
        big.blit(&small, 3, 3);
        assert_eq!(big.pixel(4, 4), Some([1, 2, 3, 4]));
        assert_eq!(big.crop(3, 3, 2, 2), small);
        big.blit(&small, 4, 4); // clipped, no panic
        assert_eq!(big.pixel(9, 9), None);
    }
}
