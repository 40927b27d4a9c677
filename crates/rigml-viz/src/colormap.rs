//! Colour maps: a perceptual heat map for one joint's weights, a deterministic palette of
//! distinct colours for joint identities, and a grey→red map for weight differences.
//!
//! The heat map is matplotlib's viridis sampled at 9 evenly spaced stops (the colour values
//! are published in the public domain / CC0) and linearly interpolated between them; it is
//! perceptually uniform and readable by colour-blind viewers, and each stop has a different
//! hue, so [`heat_value`] can read a value back from a shaded pixel.

use glam::Vec3;

/// viridis at t = 0, 1/8, ..., 1 (sRGB bytes).
const VIRIDIS: [[u8; 3]; 9] = [
    [0x44, 0x01, 0x54],
    [0x47, 0x2c, 0x7a],
    [0x3b, 0x52, 0x8b],
    [0x2c, 0x72, 0x8e],
    [0x21, 0x91, 0x8c],
    [0x28, 0xae, 0x80],
    [0x5e, 0xc9, 0x62],
    [0xad, 0xdc, 0x30],
    [0xfd, 0xe7, 0x25],
];

/// Difference map: neutral grey (no difference, keeps the shape readable) through yellow and
/// orange to red (difference at or above the scale).
const DIFFERENCE: [[u8; 3]; 4] = [
    [0x8c, 0x8c, 0x8c],
    [0xf0, 0xd0, 0x40],
    [0xf0, 0x80, 0x20],
    [0xd0, 0x10, 0x10],
];

/// Colour of unskinned vertices in joint-identity renders.
pub const UNSKINNED: Vec3 = Vec3::new(0.55, 0.55, 0.55);

fn byte_colour(c: [u8; 3]) -> Vec3 {
    Vec3::new(c[0] as f32, c[1] as f32, c[2] as f32) / 255.0
}

/// Piecewise-linear lookup in an evenly spaced table; `t` is clamped to [0, 1], NaN reads 0.
fn lookup(table: &[[u8; 3]], t: f32) -> Vec3 {
    let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
    let last = table.len().saturating_sub(1);
    let x = t * last as f32;
    let i = (x.floor() as usize).min(last.saturating_sub(1));
    let f = x - i as f32;
    let a = table.get(i).copied().unwrap_or([0; 3]);
    let b = table.get(i + 1).copied().unwrap_or(a);
    byte_colour(a).lerp(byte_colour(b), f)
}

/// Heat colour of a weight in [0, 1] (viridis: dark purple = 0, yellow = 1).
pub fn heat(t: f32) -> Vec3 {
    lookup(&VIRIDIS, t)
}

/// Colour of a difference: `d / scale` on the grey→red map.
pub fn difference(d: f32, scale: f32) -> Vec3 {
    let scale = if scale > 0.0 && scale.is_finite() { scale } else { 1.0 };
    lookup(&DIFFERENCE, d / scale)
}

/// A distinct colour for joint `j`, the same on every run: hues step by the golden angle so
/// neighbouring indices (often neighbouring bones) differ strongly, and brightness and
/// saturation alternate so hues that come round again stay apart.
pub fn joint_colour(j: usize) -> Vec3 {
    let hue = (j as f64 * 0.618_033_988_749_895).fract() as f32;
    let saturation = [0.75, 0.55, 0.9][j % 3];
    let value = [0.95, 0.8, 0.65][(j / 3) % 3];
    hsv(hue, saturation, value)
}

fn hsv(h: f32, s: f32, v: f32) -> Vec3 {
    let h6 = h.fract() * 6.0;
    let c = v * s;
    let x = c * (1.0 - ((h6 % 2.0) - 1.0).abs());
    let rgb = match h6 as u32 {
        0 => Vec3::new(c, x, 0.0),
        1 => Vec3::new(x, c, 0.0),
        2 => Vec3::new(0.0, c, x),
        3 => Vec3::new(0.0, x, c),
        4 => Vec3::new(x, 0.0, c),
        _ => Vec3::new(c, 0.0, x),
    };
    rgb + Vec3::splat(v - c)
}

/// Read a heat value back from a (possibly shaded) heat-map pixel: the value whose viridis
/// colour has the nearest chromaticity (colour divided by brightness, so Lambert shading
/// cancels). `None` for transparent pixels. Meant for statistics over renders and for tests;
/// accurate to about ±0.05 (8-bit rounding of dark, shaded pixels).
pub fn heat_value(pixel: [u8; 4]) -> Option<f32> {
    if pixel[3] == 0 {
        return None;
    }
    let chroma = |c: Vec3| c / (c.x + c.y + c.z).max(1e-6);
    let target = chroma(Vec3::new(pixel[0] as f32, pixel[1] as f32, pixel[2] as f32));
    const STEPS: usize = 256;
    (0..=STEPS)
        .map(|i| {
            let t = i as f32 / STEPS as f32;
            (t, chroma(heat(t)).distance_squared(target))
        })
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(t, _)| t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heat_ends_and_clamping() {
        assert_eq!(heat(0.0), byte_colour(VIRIDIS[0]));
        assert_eq!(heat(1.0), byte_colour(VIRIDIS[8]));
        assert_eq!(heat(-3.0), heat(0.0));
        assert_eq!(heat(7.0), heat(1.0));
        assert_eq!(heat(f32::NAN), heat(0.0));
        // Brightness rises monotonically along viridis.
        let luma = |c: Vec3| c.dot(Vec3::new(0.2126, 0.7152, 0.0722));
        for i in 0..64 {
            assert!(luma(heat(i as f32 / 64.0)) < luma(heat((i + 1) as f32 / 64.0)));
        }
    }

    #[test]
    fn heat_value_inverts_shaded_heat() {
        for i in 0..=20 {
            let t = i as f32 / 20.0;
            for shade in [0.4f32, 0.7, 1.0] {
                let c = heat(t) * shade * 255.0;
                let px = [c.x.round() as u8, c.y.round() as u8, c.z.round() as u8, 255];
                let back = heat_value(px).unwrap();
                assert!((back - t).abs() < 0.06, "t {t} shade {shade} read back {back}");
            }
        }
        assert_eq!(heat_value([10, 20, 30, 0]), None);
    }

    #[test]
    fn joint_colours_are_distinct_and_stable() {
        let colours: Vec<Vec3> = (0..64).map(joint_colour).collect();
        for a in 0..64 {
            for b in a + 1..64 {
                assert!(colours[a].distance(colours[b]) > 0.02, "joints {a} and {b} look alike");
            }
            assert!(colours[a].min_element() >= 0.0 && colours[a].max_element() <= 1.0);
        }
        for j in 0..8 {
            assert!(colours[j].distance(colours[j + 1]) > 0.2, "neighbours {j}, {}", j + 1);
        }
        assert_eq!(joint_colour(5), joint_colour(5));
    }

    #[test]
    fn difference_map_is_grey_at_zero_and_red_at_scale() {
        let zero = difference(0.0, 0.5);
        assert!(zero.x == zero.y && zero.y == zero.z);
        let full = difference(0.5, 0.5);
        assert!(full.x > 0.7 && full.y < 0.2 && full.z < 0.2);
        assert_eq!(difference(0.2, 0.0), difference(0.2, 1.0));
    }
}
