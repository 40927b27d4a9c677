//! The noise evidence: what the model cannot see in a window of prefiltered frames, given to it
//! beside them. Per model frame and feature, how much the prefilter ([`crate::data::prefilter`])
//! took away around it: the root mean square of the raw clip's vectors minus the prefiltered
//! ones over the clip frames that make the model frame. A clean clip shows its own fast detail
//! there, jitter a level spread over every feature, a spike a burst on the joints it hit.
//! Without it the model must guess from smoothed frames how damaged they were: it changed clean
//! val clips by 0.96 % of leg where the prefilter alone changes them by 0.44 %; with it, by 0.60 %
//! (docs/experiments/2026-12-02-motion-noise-evidence.md).

use crate::features::{model_frame_window, to_vectors, FEATURES};
use rigml_anim::encode::RigFrame;
/// Per model frame (`count` of them) and feature, the root mean square of `raw` minus
/// `filtered` (the same clip at `fps`, unsmoothed and prefiltered) over the clip frames that make
/// the model frame ([`model_frame_window`]); in the features' own units.
pub fn noise_evidence(raw: &[RigFrame], filtered: &[RigFrame], fps: f32, count: usize) -> Vec<[f32; FEATURES]> {
    let n = raw.len().min(filtered.len());
    if n == 0 {
        return vec![[0.0; FEATURES]; count];
    }
    let (a, b) = (to_vectors(&raw[..n]), to_vectors(&filtered[..n]));
    (0..count)
        .map(|i| {
            let window = model_frame_window(i, n, fps);
            let k = window.len() as f32;
            let mut out = [0.0f32; FEATURES];
            for f in window {
                for (o, (x, y)) in out.iter_mut().zip(a[f].iter().zip(&b[f])) {
                    *o += (x - y) * (x - y);
                }
            }
            out.map(|s| (s / k).sqrt())
        })
        .collect()
}

/// One evidence number `e` of a feature whose clean spread is `std`, as the model reads it:
/// `ln(1 + e / std)` (jitter of a few degrees and a spike of thirty lie within a few units).
pub fn evidence_channel(e: f32, std: f32) -> f32 {
    (e / std).ln_1p()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::model_frame_window;
    use crate::features::resample_down;

    fn frame(x: f32) -> RigFrame {
        RigFrame {
            origin: glam::Vec2::ZERO,
            forward: glam::Vec2::Y,
            hips: glam::Vec3::new(0.0, x, 0.0),
            hips_rotation: glam::Quat::IDENTITY,
            chains: [rigml_anim::encode::ChainGoal::NEUTRAL; 6],
            shoulders: [glam::Quat::IDENTITY; 2],
            toes: [glam::Quat::IDENTITY; 2],
            contacts: [false; 4],
            foot_heights: [x, -x],
        }
    }

    /// The windows are those `resample_down` averages, so evidence lines up with the frames.
    #[test]
    fn windows_match_the_resampler() {
        let frames: Vec<RigFrame> = (0..50).map(|i| frame(i as f32)).collect();
        let down = resample_down(&frames, 120.0).unwrap();
        for (i, d) in down.iter().enumerate() {
            let w = model_frame_window(i, frames.len(), 120.0);
            let mean = w.clone().map(|f| f as f32).sum::<f32>() / w.len() as f32;
            assert!((d.hips.y - mean).abs() < 1e-4, "frame {i}: {} vs {mean}", d.hips.y);
        }
        assert_eq!(model_frame_window(3, 10, 30.0), 3..4);
        assert_eq!(model_frame_window(3, 10, 24.0), 2..3);
    }

    #[test]
    fn evidence_is_the_residual_level() {
        let raw: Vec<RigFrame> = (0..40).map(|i| frame(if i % 2 == 0 { 0.1 } else { -0.1 })).collect();
        let smooth: Vec<RigFrame> = (0..40).map(|_| frame(0.0)).collect();
        let e = noise_evidence(&raw, &smooth, 120.0, 10);
        assert_eq!(e.len(), 10);
        // The hips' height (feature 4) alternates ±0.1 about the smooth clip.
        assert!((e[5][4] - 0.1).abs() < 1e-5, "{}", e[5][4]);
        assert_eq!(noise_evidence(&smooth, &smooth, 120.0, 10)[5][4], 0.0);
    }
}
