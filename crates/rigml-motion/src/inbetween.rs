//! Frames between key poses: the motion model fills them in IK-Rig space (masked in-filling,
//! trained beside denoising), and the result is decoded onto the clip's skeleton; key frames stay
//! exactly as given. [`interpolate_keys`] is the baseline the model is measured against: every
//! joint's rotation slerped and translation lerped between neighbouring keys.

use crate::data::{decode_on_skeleton, Source};
use crate::features::{from_vectors, interpolate, lerp_frame, to_vectors, CONTACTS, MODEL_FPS};
use crate::model::{MotionModel, Prediction};
use crate::train::fill_between_keys;
use crate::MotionError;
use glam::Vec2;
use rigml_anim::encode::{encode, RigClip, RigFrame};
use rigml_anim::rig::Frames;
use rigml_core::{Pose, Transform};

/// In-betweens of a clip.
#[derive(Debug, Clone, PartialEq)]
pub struct Inbetweens {
    /// Local transforms of every joint, one per frame of the clip (keys as given).
    pub poses: Vec<Vec<Transform>>,
    /// Contacts (left ankle, left toes, right ankle, right toes) per frame, as the model predicts
    /// them (not used for pinning; see [`inbetween_with`]).
    pub contacts: Vec<[bool; CONTACTS]>,
}

/// Check key frame indices: at least two, strictly increasing, inside `0..n`.
pub fn check_keys(keys: &[usize], n: usize, clip: &str) -> Result<(), MotionError> {
    let bad = |problem: String| MotionError::Clip {
        clip: clip.to_string(),
        problem,
    };
    if keys.len() < 2 {
        return Err(bad(format!("needs at least two key frames, got {}", keys.len())));
    }
    if let Some(w) = keys.windows(2).find(|w| w[1] <= w[0]) {
        return Err(bad(format!("key frames must increase: {} then {}", w[0], w[1])));
    }
    if let Some(&k) = keys.iter().find(|&&k| k >= n) {
        return Err(bad(format!(
            "key frame {k} is past the clip's last frame {}",
            n.saturating_sub(1)
        )));
    }
    Ok(())
}

/// The baseline: frames between neighbouring keys interpolated joint by joint (rotations
/// slerped, translations and scales lerped); frames before the first key and after the last
/// hold that key.
pub fn interpolate_keys(poses: &[Vec<Transform>], keys: &[usize]) -> Vec<Vec<Transform>> {
    let n = poses.len();
    (0..n)
        .map(|f| {
            let next = keys.partition_point(|&k| k <= f);
            if next == 0 {
                return poses[keys[0]].clone();
            }
            let a = keys[next - 1];
            let Some(&b) = keys.get(next) else {
                return poses[a].clone();
            };
            let t = (f - a) as f32 / (b - a) as f32;
            poses[a]
                .iter()
                .zip(&poses[b])
                .map(|(x, y)| Transform {
                    translation: x.translation.lerp(y.translation, t),
                    rotation: x.rotation.slerp(y.rotation, t).normalize(),
                    scale: x.scale.lerp(y.scale, t),
                })
                .collect()
        })
        .collect()
}

/// A predictor of model frames: vectors and key mask in, corrected vectors and contacts out.
pub type Predictor<'a> = dyn Fn(&[[f32; crate::features::FEATURES]], &[bool]) -> Prediction + 'a;

/// Fill the frames between `keys` (indices into `frames`, a clip of `source`'s skeleton at its
/// own rate) with `model`. Only the key frames of `frames` are read.
pub fn inbetween(
    model: &MotionModel,
    source: &Source,
    frames: &Frames,
    keys: &[usize],
) -> Result<Inbetweens, MotionError> {
    if model.blend {
        return Err(MotionError::Model {
            origin: "the model given".into(),
            problem: "is a blending model (trained with --blend): it cleans clips and cannot fill in-betweens".into(),
        });
    }
    inbetween_with(source, frames, keys, &|vectors, known| {
        model.predict(vectors, known, None)
    })
}

/// [`inbetween`] with any predictor of the model frames from the first key to the last (the
/// model, or an oracle when measuring what the rest of the pipeline costs).
pub fn inbetween_with(
    source: &Source,
    frames: &Frames,
    keys: &[usize],
    predict: &Predictor,
) -> Result<Inbetweens, MotionError> {
    let n = frames.poses.len();
    check_keys(keys, n, &source.name)?;
    let fps = frames.fps;
    let input: Vec<Vec<Transform>> = frames.poses.iter().map(|p| p.local.clone()).collect();
    let base = interpolate_keys(&input, keys);
    let at = |k: usize| (k as f32 * MODEL_FPS / fps).round() as usize;
    let model_keys = keys_on_model_frames(keys, &at);
    // The keys alone, encoded (the encoder keeps poles and hemispheres continuous from key to key).
    let key_frames = Frames {
        fps,
        times: model_keys.iter().map(|&k| frames.times[k]).collect(),
        poses: model_keys
            .iter()
            .map(|&k| Pose {
                local: input[k].clone(),
            })
            .collect(),
    };
    let encoded = encode(&source.skeleton, &source.info, &key_frames, &source.name).frames;
    let slots: Vec<usize> = model_keys.iter().map(|&k| at(k)).collect();
    let first = slots[0];
    let last = *slots.last().unwrap_or(&first);
    // The model's input: keys, and between them their linear interpolation in IK-Rig space.
    let mut filled: Vec<RigFrame> = Vec::with_capacity(last - first + 1);
    let mut known = Vec::with_capacity(last - first + 1);
    for (i, pair) in slots.windows(2).enumerate() {
        let span = pair[1] - pair[0];
        for s in 0..span {
            filled.push(lerp_frame(&encoded[i], &encoded[i + 1], s as f32 / span as f32));
            known.push(s == 0);
        }
    }
    filled.push(*encoded.last().unwrap_or(&encoded[0]));
    known.push(true);
    // In the model's vector space the frames between keys are exactly what training showed it
    // (`fill_between_keys`: features lerped linearly, root velocity the gap's mean).
    let vectors = fill_between_keys(&to_vectors(&filled), &known);
    let prediction = predict(&vectors, &known);
    // Key vectors as given; contacts as predicted.
    let out_vectors: Vec<_> = (0..vectors.len())
        .map(|i| if known[i] { vectors[i] } else { prediction.vectors[i] })
        .collect();
    let contacts: Vec<[bool; CONTACTS]> = prediction.contacts.iter().map(|p| p.map(|c| c >= 0.5)).collect();
    let mut out = from_vectors(&filled[0], &out_vectors, &contacts);
    pin_root_to_keys(&mut out, &filled, &known);
    // Back to the clip's frames, from the first key to the last; outside them the keys hold.
    let span = keys[keys.len() - 1] - keys[0] + 1;
    let native = interpolate(&out, MODEL_FPS, fps, span);
    let mut rig_frames = Vec::with_capacity(n);
    for f in 0..n {
        let i = f.clamp(keys[0], keys[keys.len() - 1]) - keys[0];
        rig_frames.push(native[i.min(native.len() - 1)]);
    }
    // Foot skate is removed from the decoded result where its own feet are low and slow
    // ([`crate::data::remove_skate`]), not where the model says: between keys its contact head is unreliable
    // (measured on val walks with keys 30 frames apart, pinning at the model's contacts tripled
    // the joint error). On val, against the decoder's own pinning: skate 0.053 → 0.0019 H/s at
    // 15-frame spacing, 0.027 → 0.0007 at 30; joint error 6.95 → 6.70 % and 10.86 → 10.88 %.
    let contacts: Vec<[bool; CONTACTS]> = rig_frames.iter().map(|f| f.contacts).collect();
    let rig = RigClip {
        name: source.name.clone(),
        fps,
        times: frames.times.iter().map(|t| t - frames.times[0]).collect(),
        frames: rig_frames,
    };
    let mut poses = decode_on_skeleton(source, &rig, &base, true, None)?;
    for &k in keys {
        poses[k] = input[k].clone();
    }
    Ok(Inbetweens { poses, contacts })
}

/// The keys the model reads, one per model frame: where several keys fall on one (a run of
/// keys, as in a held context, in a clip faster than the model's rate) the first of them, and
/// the last key of all in place of the one before it on its frame, so that the model's frames
/// span every key. The output keeps every key exactly all the same.
fn keys_on_model_frames(keys: &[usize], at: &dyn Fn(usize) -> usize) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::with_capacity(keys.len());
    let last = keys.last().copied();
    for &k in keys {
        match out.last_mut() {
            Some(p) if at(*p) == at(k) => {
                if Some(k) == last {
                    *p = k;
                }
            }
            _ => out.push(k),
        }
    }
    out
}

/// Integrated root paths drift from the keys: spread each key's position and heading error
/// linearly over the frames since the previous key, so that every key is met exactly.
fn pin_root_to_keys(out: &mut [RigFrame], given: &[RigFrame], known: &[bool]) {
    let heading = |f: &RigFrame| f.forward.x.atan2(f.forward.y);
    let wrap = |a: f32| (a + std::f32::consts::PI).rem_euclid(std::f32::consts::TAU) - std::f32::consts::PI;
    let keys: Vec<usize> = (0..out.len()).filter(|&i| known[i]).collect();
    // Errors at the keys, then applied as linear ramps between them (from the last key's).
    let errors: Vec<(Vec2, f32)> = keys
        .iter()
        .map(|&k| {
            (
                given[k].origin - out[k].origin,
                wrap(heading(&given[k]) - heading(&out[k])),
            )
        })
        .collect();
    for (w, pair) in keys.windows(2).enumerate() {
        let (a, b) = (pair[0], pair[1]);
        let last_window = w + 2 == keys.len();
        for (i, frame) in out.iter_mut().enumerate().take(b + 1).skip(a) {
            let t = (i - a) as f32 / (b - a) as f32;
            let (ea, eb) = (errors[w], errors[w + 1]);
            let d = ea.0.lerp(eb.0, t);
            let yaw = heading(frame) + ea.1 + (eb.1 - ea.1) * t;
            if i < b || last_window {
                frame.origin += d;
                frame.forward = Vec2::new(yaw.sin(), yaw.cos());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{Quat, Vec3};

    #[test]
    fn interpolation_between_keys_and_key_checks() {
        let pose = |a: f32, x: f32| {
            vec![Transform {
                translation: Vec3::new(x, 0.0, 0.0),
                rotation: Quat::from_rotation_y(a),
                scale: Vec3::ONE,
            }]
        };
        let poses: Vec<Vec<Transform>> = (0..7).map(|f| pose(f as f32 * 0.1, f as f32 * f as f32)).collect();
        let out = interpolate_keys(&poses, &[1, 5]);
        assert_eq!(out[0], poses[1]);
        assert_eq!(out[6], poses[5]);
        assert!((out[3][0].translation.x - 13.0).abs() < 1e-5);
        assert!(out[3][0].rotation.angle_between(Quat::from_rotation_y(0.3)) < 1e-3);
        assert!(check_keys(&[0, 5], 6, "c").is_ok());
        for bad in [&[0usize][..], &[3, 3], &[4, 2], &[0, 6]] {
            let e = check_keys(bad, 6, "c").unwrap_err().to_string();
            assert!(e.contains("\"c\""), "{e}");
        }
    }

    #[test]
    fn runs_of_keys_give_the_model_one_key_per_frame() {
        // A 120 fps clip: four clip frames to a model frame.
        let at = |k: usize| (k as f32 / 4.0).round() as usize;
        let run: Vec<usize> = (0..=9).chain([30]).chain(40..=41).collect();
        assert_eq!(keys_on_model_frames(&run, &at), [0, 2, 6, 30, 41]);
        assert_eq!(keys_on_model_frames(&[0, 8, 16], &at), [0, 8, 16]);
        assert_eq!(keys_on_model_frames(&[0, 1], &at), [1]);
    }
}
