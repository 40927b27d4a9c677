//! Smoothing filters for uniformly sampled tracks: the 1€ filter, Savitzky–Golay and zero-phase
//! Butterworth (forward-backward with odd-reflection edge padding, like SciPy's `filtfilt`).
//!
//! All three are written here by hand: no well-kept Rust crate offers Savitzky–Golay smoothing
//! with proper edge fits or a zero-phase Butterworth with edge padding, and each is a few dozen
//! lines (docs/ALGORITHMS.md §8). Scalar tracks are filtered in `f64`; vector tracks component by
//! component; rotation tracks in a hemisphere-aligned 4D space and renormalised.

use super::CleanupError;
use glam::{DQuat, DVec4, Quat, Vec3};
use std::f64::consts::PI;

/// Highest Butterworth order accepted (higher orders only ring at the edges).
pub const MAX_BUTTERWORTH_ORDER: usize = 8;
/// Highest Savitzky–Golay polynomial order accepted (the normal equations stay well conditioned).
pub const MAX_SAVGOL_ORDER: usize = 6;

/// A smoothing filter for tracks sampled at a fixed frame rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Filter {
    /// Casiez et al.'s adaptive low-pass (causal): cutoff `min_cutoff + beta·|dx̂|` in Hz, the
    /// derivative smoothed at `d_cutoff` Hz. Smooths slow motion hard, lags little on fast motion.
    OneEuro { min_cutoff: f64, beta: f64, d_cutoff: f64 },
    /// Least-squares polynomial of `order` over `2·half_window + 1` frames (zero phase); near the
    /// clip ends the window is shifted inwards, so polynomials of `order` pass unchanged everywhere.
    SavitzkyGolay { half_window: usize, order: usize },
    /// Butterworth low-pass of `order` with `cutoff` in Hz, run forward and backward (zero phase,
    /// squared magnitude: the gain at `cutoff` is 1/2).
    Butterworth { cutoff: f64, order: usize },
}

impl Filter {
    /// The 1€ filter with the usual derivative cutoff of 1 Hz.
    pub fn one_euro(min_cutoff: f64, beta: f64) -> Filter {
        Filter::OneEuro {
            min_cutoff,
            beta,
            d_cutoff: 1.0,
        }
    }

    /// A Savitzky–Golay filter of `order` whose −3 dB point is near `cutoff` Hz, using Schafer's
    /// approximation `fc ≈ (order + 1) / (3.2·m − 4.6) · fs/2` (IEEE SP Magazine 2011) for the
    /// half window `m` (at least `order / 2 + 1`).
    pub fn savgol_for_cutoff(cutoff: f64, order: usize, fps: f64) -> Result<Filter, CleanupError> {
        if !(cutoff > 0.0 && cutoff.is_finite() && fps > 0.0 && fps.is_finite()) {
            return Err(CleanupError::Parameter(format!(
                "Savitzky–Golay needs a positive cutoff and frame rate (got {cutoff} Hz at {fps} fps)"
            )));
        }
        let m = ((order as f64 + 1.0) * fps / (2.0 * cutoff) + 4.6) / 3.2;
        let half_window = (m.round() as usize).max(order / 2 + 1);
        Ok(Filter::SavitzkyGolay { half_window, order })
    }

    /// Check the parameters against the frame rate: positive finite cutoffs below Nyquist,
    /// orders in range.
    pub fn validate(&self, fps: f64) -> Result<(), CleanupError> {
        let bad = |what: String| Err(CleanupError::Parameter(what));
        if !(fps > 0.0 && fps.is_finite()) {
            return bad(format!("frame rate must be positive, got {fps}"));
        }
        match *self {
            Filter::OneEuro {
                min_cutoff,
                beta,
                d_cutoff,
            } => {
                if !(min_cutoff > 0.0 && min_cutoff.is_finite() && d_cutoff > 0.0 && d_cutoff.is_finite()) {
                    return bad(format!(
                        "1€ cutoffs must be positive (min {min_cutoff} Hz, d {d_cutoff} Hz)"
                    ));
                }
                if !(beta >= 0.0 && beta.is_finite()) {
                    return bad(format!("1€ beta must be zero or positive, got {beta}"));
                }
            }
            Filter::SavitzkyGolay { half_window, order } => {
                if order > MAX_SAVGOL_ORDER {
                    return bad(format!("Savitzky–Golay order {order} is above {MAX_SAVGOL_ORDER}"));
                }
                if 2 * half_window < order + 1 {
                    return bad(format!(
                        "Savitzky–Golay window of {} frames is too short for order {order}",
                        2 * half_window + 1
                    ));
                }
            }
            Filter::Butterworth { cutoff, order } => {
                if !(1..=MAX_BUTTERWORTH_ORDER).contains(&order) {
                    return bad(format!(
                        "Butterworth order must be 1..={MAX_BUTTERWORTH_ORDER}, got {order}"
                    ));
                }
                if !(cutoff > 0.0 && cutoff < fps / 2.0) {
                    return bad(format!(
                        "Butterworth cutoff must lie between 0 and the Nyquist frequency {} Hz, got {cutoff}",
                        fps / 2.0
                    ));
                }
            }
        }
        Ok(())
    }

    /// Filter one scalar track sampled at `fps`. Validates first.
    pub fn apply(&self, x: &[f64], fps: f64) -> Result<Vec<f64>, CleanupError> {
        self.validate(fps)?;
        Ok(match *self {
            Filter::OneEuro {
                min_cutoff,
                beta,
                d_cutoff,
            } => one_euro(x, fps, min_cutoff, beta, d_cutoff),
            Filter::SavitzkyGolay { half_window, order } => savgol(x, half_window, order),
            Filter::Butterworth { cutoff, order } => {
                // SciPy pads 3·(order + 1) samples; one period of the cutoff is longer at mocap
                // rates and lets the start-up transient die out before the real samples.
                let pad = (3 * (order + 1)).max((fps / cutoff).ceil() as usize);
                filtfilt(&butterworth(order, cutoff, fps), x, pad)
            }
        })
    }

    /// Filter a 3D track component by component.
    pub fn apply_vec3(&self, track: &[Vec3], fps: f64) -> Result<Vec<Vec3>, CleanupError> {
        let mut out = vec![[0.0f32; 3]; track.len()];
        for c in 0..3 {
            let x: Vec<f64> = track.iter().map(|v| f64::from(v[c])).collect();
            for (o, y) in out.iter_mut().zip(self.apply(&x, fps)?) {
                o[c] = y as f32;
            }
        }
        Ok(out.into_iter().map(Vec3::from_array).collect())
    }

    /// Filter a rotation track: make consecutive quaternions share a hemisphere (`q_t·q_{t-1} ≥
    /// 0`), filter the four components, renormalise. Sound for the small per-frame angles of
    /// mocap (docs/ALGORITHMS.md §8, rotations item 3).
    pub fn apply_quat(&self, track: &[Quat], fps: f64) -> Result<Vec<Quat>, CleanupError> {
        let aligned = align_hemispheres(track);
        let mut out = vec![DVec4::ZERO; aligned.len()];
        for c in 0..4 {
            let x: Vec<f64> = aligned.iter().map(|q| q[c]).collect();
            for (o, y) in out.iter_mut().zip(self.apply(&x, fps)?) {
                o[c] = y;
            }
        }
        Ok(out
            .iter()
            .zip(&aligned)
            .map(|(v, raw)| {
                let q = DQuat::from_vec4(*v);
                // A filtered value can only vanish for a track that turns ~180° within the filter
                // window; keep the input sample rather than divide by zero.
                if q.length() > 1e-9 {
                    q.normalize().as_quat()
                } else {
                    DQuat::from_vec4(*raw).normalize().as_quat()
                }
            })
            .collect())
    }
}

/// Unit quaternions as `f64` 4-vectors, each flipped into the hemisphere of the one before.
pub fn align_hemispheres(track: &[Quat]) -> Vec<DVec4> {
    let mut out: Vec<DVec4> = Vec::with_capacity(track.len());
    for q in track {
        let mut v = DVec4::from(q.as_dquat().normalize());
        if let Some(prev) = out.last() {
            if v.dot(*prev) < 0.0 {
                v = -v;
            }
        }
        out.push(v);
    }
    out
}

/// Smoothing factor of an exponential filter with cutoff `fc` Hz at sample period `te` s.
fn alpha(fc: f64, te: f64) -> f64 {
    let tau = 1.0 / (2.0 * PI * fc);
    1.0 / (1.0 + tau / te)
}

/// The 1€ filter (Casiez, Roussel, Vogel, CHI 2012) over one scalar track.
pub fn one_euro(x: &[f64], fps: f64, min_cutoff: f64, beta: f64, d_cutoff: f64) -> Vec<f64> {
    let te = 1.0 / fps;
    let mut out = Vec::with_capacity(x.len());
    let Some(&first) = x.first() else { return out };
    let (mut prev, mut dprev) = (first, 0.0f64);
    out.push(first);
    let a_d = alpha(d_cutoff, te);
    for &xi in x.iter().skip(1) {
        let dx = (xi - prev) / te;
        dprev += a_d * (dx - dprev);
        let fc = min_cutoff + beta * dprev.abs();
        prev += alpha(fc, te) * (xi - prev);
        out.push(prev);
    }
    out
}

/// Savitzky–Golay weights that evaluate, at sample `k` of a `w`-sample window, the least-squares
/// polynomial of `order` through the window (`h` with `ŷ_k = Σ h_i y_i`).
pub fn savgol_weights(w: usize, order: usize, k: usize) -> Vec<f64> {
    let order = order.min(w.saturating_sub(1));
    let cols = order + 1;
    // Positions relative to the evaluation point, scaled to about ±1 to keep AᵀA well conditioned.
    let scale = (w as f64 / 2.0).max(1.0);
    let powers = |i: usize| -> Vec<f64> {
        let u = (i as f64 - k as f64) / scale;
        let mut p = Vec::with_capacity(cols);
        let mut acc = 1.0;
        for _ in 0..cols {
            p.push(acc);
            acc *= u;
        }
        p
    };
    let rows: Vec<Vec<f64>> = (0..w).map(powers).collect();
    let mut ata = vec![vec![0.0f64; cols]; cols];
    for r in &rows {
        for a in 0..cols {
            for b in 0..cols {
                ata[a][b] += r[a] * r[b];
            }
        }
    }
    // ŷ(0) = β₀ = e₀ᵀ (AᵀA)⁻¹ Aᵀ y, so h = A z with (AᵀA) z = e₀.
    let mut e0 = vec![0.0f64; cols];
    e0[0] = 1.0;
    let z = solve(ata, e0);
    rows.iter()
        .map(|r| r.iter().zip(&z).map(|(a, b)| a * b).sum())
        .collect()
}

/// Solve a small dense system by Gaussian elimination with partial pivoting. The Savitzky–Golay
/// normal matrices are symmetric positive definite (distinct sample positions, `order < w`), so
/// a pivot never vanishes; a zero pivot would leave that unknown at zero rather than divide.
fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Vec<f64> {
    let n = b.len();
    for c in 0..n {
        let p = (c..n)
            .max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs()))
            .unwrap_or(c);
        a.swap(c, p);
        b.swap(c, p);
        let pivot = a[c][c];
        if pivot.abs() < 1e-300 {
            continue;
        }
        let (top, rest) = a.split_at_mut(c + 1);
        let row_c = &top[c];
        for (r, row) in rest.iter_mut().enumerate() {
            let f = row[c] / pivot;
            for (x, y) in row[c..].iter_mut().zip(&row_c[c..]) {
                *x -= f * y;
            }
            b[c + 1 + r] -= f * b[c];
        }
    }
    let mut x = vec![0.0f64; n];
    for c in (0..n).rev() {
        let s: f64 = (c + 1..n).map(|k| a[c][k] * x[k]).sum();
        x[c] = if a[c][c].abs() < 1e-300 {
            0.0
        } else {
            (b[c] - s) / a[c][c]
        };
    }
    x
}

/// Savitzky–Golay smoothing: interior samples use the centred `2m+1` window; the first and last
/// `m` samples use the window shifted inwards (an asymmetric fit), and tracks shorter than the
/// window use the whole track.
pub fn savgol(x: &[f64], m: usize, order: usize) -> Vec<f64> {
    let n = x.len();
    let w = (2 * m + 1).min(n);
    if w == 0 {
        return Vec::new();
    }
    // Weights per evaluation offset k within the window, computed on first use.
    let mut cache: Vec<Option<Vec<f64>>> = vec![None; w];
    let half = w / 2;
    (0..n)
        .map(|t| {
            let lo = t.saturating_sub(half).min(n - w);
            let k = t - lo;
            let h = cache[k].get_or_insert_with(|| savgol_weights(w, order, k));
            h.iter().zip(&x[lo..lo + w]).map(|(a, b)| a * b).sum()
        })
        .collect()
}

/// One second-order (or first-order, `b2 = a2 = 0`) IIR section, `a0 = 1`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Biquad {
    pub b: [f64; 3],
    pub a: [f64; 3],
}

/// A Butterworth low-pass of `order` at `cutoff` Hz for sampling rate `fps`, as cascaded
/// sections from the bilinear transform with a prewarped cutoff (`K = tan(π fc / fs)`).
pub fn butterworth(order: usize, cutoff: f64, fps: f64) -> Vec<Biquad> {
    let k = (PI * cutoff / fps).tan();
    let k2 = k * k;
    let mut sections = Vec::with_capacity(order.div_ceil(2));
    for s in 0..order / 2 {
        // Pole pair s of the analogue prototype: Q = 1 / (2 cos θ), θ = π(2s+1)/(2N).
        let theta = PI * (2 * s + 1) as f64 / (2 * order) as f64;
        let q = 1.0 / (2.0 * theta.cos());
        let norm = 1.0 + k / q + k2;
        let b0 = k2 / norm;
        sections.push(Biquad {
            b: [b0, 2.0 * b0, b0],
            a: [1.0, 2.0 * (k2 - 1.0) / norm, (1.0 - k / q + k2) / norm],
        });
    }
    if order % 2 == 1 {
        let b0 = k / (1.0 + k);
        sections.push(Biquad {
            b: [b0, b0, 0.0],
            a: [1.0, (k - 1.0) / (k + 1.0), 0.0],
        });
    }
    sections
}

/// Run one section over `x` (direct form II transposed), starting in the steady state of a
/// constant input equal to `x[0]` (SciPy's `lfilter_zi` scaled by the first sample).
fn run_section(s: &Biquad, x: &mut [f64]) {
    let Some(&x0) = x.first() else { return };
    let dc = (s.b[0] + s.b[1] + s.b[2]) / (s.a[0] + s.a[1] + s.a[2]);
    let y0 = dc * x0;
    let mut z2 = s.b[2] * x0 - s.a[2] * y0;
    let mut z1 = s.b[1] * x0 - s.a[1] * y0 + z2;
    for v in x.iter_mut() {
        let xi = *v;
        let y = s.b[0] * xi + z1;
        z1 = s.b[1] * xi - s.a[1] * y + z2;
        z2 = s.b[2] * xi - s.a[2] * y;
        *v = y;
    }
}

/// Zero-phase filtering: remove the line through the first and last samples, pad both ends by
/// odd reflection (`pad` samples, at most `n − 1`), run the cascade forward, reverse, run again,
/// reverse, cut the padding and add the line back.
///
/// A zero-phase filter with unit DC gain passes a line unchanged, so removing it first changes
/// nothing in the middle of the track, but the filter then starts from rest at both ends instead
/// of from a trend, which removes most of the start-up transient SciPy's `filtfilt` leaves there.
pub fn filtfilt(sections: &[Biquad], x: &[f64], pad: usize) -> Vec<f64> {
    let n = x.len();
    if n < 2 {
        return x.to_vec();
    }
    let pad = pad.min(n - 1);
    let (first, last) = (x[0], x[n - 1]);
    let line = |t: usize| first + (last - first) * t as f64 / (n - 1) as f64;
    let r: Vec<f64> = x.iter().enumerate().map(|(t, v)| v - line(t)).collect();
    // The residual is 0 at both ends, so odd reflection is plain negation.
    let mut y: Vec<f64> = Vec::with_capacity(n + 2 * pad);
    y.extend((1..=pad).rev().map(|i| -r[i]));
    y.extend_from_slice(&r);
    y.extend((1..=pad).map(|i| -r[n - 1 - i]));
    for _pass in 0..2 {
        for s in sections {
            run_section(s, &mut y);
        }
        y.reverse();
    }
    y[pad..pad + n].iter().enumerate().map(|(t, v)| v + line(t)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) {
        assert!((a - b).abs() <= tol, "{a} != {b} (tolerance {tol})");
    }

    #[test]
    fn savgol_weights_match_the_published_table() {
        // Savitzky & Golay 1964, quadratic/cubic smoothing over 5 points: (-3, 12, 17, 12, -3)/35.
        let h = savgol_weights(5, 2, 2);
        for (a, b) in h.iter().zip([-3.0, 12.0, 17.0, 12.0, -3.0]) {
            close(*a, b / 35.0, 1e-12);
        }
        // Quadratic over 7 points: (-2, 3, 6, 7, 6, 3, -2)/21.
        let h = savgol_weights(7, 3, 3);
        for (a, b) in h.iter().zip([-2.0, 3.0, 6.0, 7.0, 6.0, 3.0, -2.0]) {
            close(*a, b / 21.0, 1e-12);
        }
    }

    #[test]
    fn savgol_preserves_polynomials_of_its_order_to_the_edges() {
        let cubic: Vec<f64> = (0..40)
            .map(|t| {
                let t = t as f64 * 0.1;
                2.0 - t + 0.5 * t * t - 0.3 * t * t * t
            })
            .collect();
        let y = savgol(&cubic, 6, 3);
        for (a, b) in y.iter().zip(&cubic) {
            close(*a, *b, 1e-9);
        }
        // Order 2 does not keep a cubic: the check above can fail.
        let y2 = savgol(&cubic, 6, 2);
        assert!(y2.iter().zip(&cubic).any(|(a, b)| (a - b).abs() > 1e-3));
        // A track shorter than the window is fitted as a whole.
        let short = savgol(&cubic[..5], 6, 3);
        for (a, b) in short.iter().zip(&cubic[..5]) {
            close(*a, *b, 1e-9);
        }
    }

    #[test]
    fn butterworth_coefficients_hand_computed() {
        // Order 2 at fs/4: K = tan(π/4) = 1, norm = 2 + √2; b0 = 1/(2+√2), a1 = 0,
        // a2 = (2-√2)/(2+√2).
        let s = butterworth(2, 25.0, 100.0);
        assert_eq!(s.len(), 1);
        let r2 = 2f64.sqrt();
        close(s[0].b[0], 1.0 / (2.0 + r2), 1e-12);
        close(s[0].b[1], 2.0 / (2.0 + r2), 1e-12);
        close(s[0].a[1], 0.0, 1e-12);
        close(s[0].a[2], (2.0 - r2) / (2.0 + r2), 1e-12);
        // Order 3 = one biquad + one first-order section, each with DC gain 1.
        let s = butterworth(3, 6.0, 120.0);
        assert_eq!(s.len(), 2);
        for sec in &s {
            close(sec.b.iter().sum::<f64>() / sec.a.iter().sum::<f64>(), 1.0, 1e-12);
        }
    }

    #[test]
    fn filtfilt_passes_dc_attenuates_nyquist_and_halves_at_cutoff() {
        let f = Filter::Butterworth { cutoff: 6.0, order: 2 };
        let dc = f.apply(&[3.5; 50], 120.0).unwrap();
        for y in &dc {
            close(*y, 3.5, 1e-12);
        }
        let nyquist: Vec<f64> = (0..200).map(|t| if t % 2 == 0 { 1.0 } else { -1.0 }).collect();
        let y = f.apply(&nyquist, 120.0).unwrap();
        for v in &y[60..140] {
            assert!(v.abs() < 1e-6, "nyquist leak {v}");
        }
        // A sine at the cutoff: forward-backward squares |H| = 1/√2, so the amplitude halves.
        let fps = 120.0;
        let sine: Vec<f64> = (0..2400).map(|t| (2.0 * PI * 6.0 * t as f64 / fps).sin()).collect();
        let y = f.apply(&sine, fps).unwrap();
        let peak = y[600..1800].iter().fold(0.0f64, |m, v| m.max(v.abs()));
        close(peak, 0.5, 0.01);
        // Zero phase: the filtered sine peaks where the input does.
        let (i, _) = y[600..620]
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .unwrap();
        let (j, _) = sine[600..620]
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .unwrap();
        assert_eq!(i, j);
    }

    #[test]
    fn filtfilt_keeps_a_ramp_to_the_edges() {
        // The end-to-end line is taken out before filtering, so a ramp passes unchanged, ends
        // included; a parabola is kept in the middle and close at the ends.
        let ramp: Vec<f64> = (0..200).map(|t| 0.25 * t as f64 - 3.0).collect();
        let y = Filter::Butterworth { cutoff: 5.0, order: 4 }
            .apply(&ramp, 120.0)
            .unwrap();
        for (a, b) in y.iter().zip(&ramp) {
            close(*a, *b, 1e-9);
        }
        let parabola: Vec<f64> = (0..200).map(|t| (t as f64 / 100.0 - 1.0).powi(2)).collect();
        let y = Filter::Butterworth { cutoff: 5.0, order: 2 }
            .apply(&parabola, 120.0)
            .unwrap();
        let err = y.iter().zip(&parabola).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        assert!(err < 1e-3, "parabola error {err}");
    }

    #[test]
    fn one_euro_hand_computed() {
        // fc = 1/(2π Te) makes τ = Te and α = 1/2: a step from 0 to 1 gives 0.5, then 0.75.
        let fps = 100.0;
        let fc = fps / (2.0 * PI);
        let y = one_euro(&[0.0, 1.0, 1.0], fps, fc, 0.0, 1.0);
        close(y[1], 0.5, 1e-12);
        close(y[2], 0.75, 1e-12);
        // A larger beta follows a fast ramp more closely.
        let ramp: Vec<f64> = (0..100).map(|t| t as f64).collect();
        let slow = one_euro(&ramp, fps, 1.0, 0.0, 1.0);
        let fast = one_euro(&ramp, fps, 1.0, 0.5, 1.0);
        assert!((ramp[99] - fast[99]).abs() < (ramp[99] - slow[99]).abs());
        // Constant stays constant.
        for v in one_euro(&[2.0; 10], fps, 1.0, 0.5, 1.0) {
            close(v, 2.0, 0.0);
        }
    }

    #[test]
    fn quaternion_tracks_ignore_sign_flips() {
        let q = Quat::from_rotation_y(0.7);
        let track: Vec<Quat> = (0..30).map(|t| if t % 2 == 0 { q } else { -q }).collect();
        for f in [
            Filter::Butterworth { cutoff: 6.0, order: 2 },
            Filter::SavitzkyGolay {
                half_window: 4,
                order: 2,
            },
            Filter::one_euro(1.0, 0.1),
        ] {
            for r in f.apply_quat(&track, 120.0).unwrap() {
                assert!(r.dot(q).abs() > 1.0 - 1e-6, "{f:?}: {r:?}");
            }
        }
    }

    #[test]
    fn bad_parameters_are_errors() {
        let x = [0.0; 10];
        assert!(Filter::Butterworth { cutoff: 60.0, order: 2 }.apply(&x, 120.0).is_err());
        assert!(Filter::Butterworth { cutoff: 6.0, order: 0 }.apply(&x, 120.0).is_err());
        assert!(Filter::Butterworth {
            cutoff: f64::NAN,
            order: 2
        }
        .apply(&x, 120.0)
        .is_err());
        assert!(Filter::SavitzkyGolay {
            half_window: 1,
            order: 3
        }
        .apply(&x, 120.0)
        .is_err());
        assert!(Filter::one_euro(0.0, 0.0).apply(&x, 120.0).is_err());
        assert!(Filter::one_euro(1.0, 0.0).apply(&x, 0.0).is_err());
        assert!(Filter::savgol_for_cutoff(-1.0, 3, 120.0).is_err());
        // Schafer: order 3, 6 Hz at 120 fps -> m = (4·10 + 4.6)/3.2 ≈ 13.9 -> 14.
        assert_eq!(
            Filter::savgol_for_cutoff(6.0, 3, 120.0).unwrap(),
            Filter::SavitzkyGolay {
                half_window: 14,
                order: 3
            }
        );
    }
}
