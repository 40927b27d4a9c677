//! The motion model on real clips of the manifest: the built-in model denoises a val clip
//! (closer to the clean clip than the damaged one, and leaves a clean clip nearly as it was),
//! and with the `train` feature a short training run lowers its loss and resumes.

#[path = "../../rigml-io/tests/common/mod.rs"]
mod common;

use glam::Vec3;
use rigml_anim::humanoid::ChainKind;
use rigml_anim::retarget::rig_for;
use rigml_core::Transform;
use rigml_motion::data::Source;
use rigml_motion::denoise::{denoise, DenoiseOptions};
use rigml_motion::noise::{corrupt, Noise};
use rigml_motion::{MotionModel, Task};

/// The manifest's clip `id` on its skeleton (an error for a file that does not load or a
/// skeleton that does not map to a humanoid).
fn load_source(id: &str) -> Result<Source, String> {
    let c = rigml_io::load(&common::asset(id)).map_err(|e| format!("{id}: {e}"))?;
    let info = rig_for(&c.skeleton, &[], id).map_err(|e| format!("{id}: {e}"))?;
    Ok(Source {
        name: id.into(),
        skeleton: c.skeleton,
        clip: c.clips[0].clone(),
        info,
    })
}

fn source(id: &str) -> Source {
    load_source(id).unwrap_or_else(|e| panic!("{e}"))
}

/// Mean distance of the mapped joints between two pose sequences, in leg lengths.
fn joint_error(s: &Source, a: &[Vec<Transform>], b: &[Vec<Transform>]) -> f32 {
    let joints: Vec<usize> = s.info.map.roles().into_iter().map(|(_, j)| j).collect();
    let leg = 0.5 * (s.info.chain_length(ChainKind::LeftLeg) + s.info.chain_length(ChainKind::RightLeg));
    let mut sum = 0.0;
    for (x, y) in a.iter().zip(b) {
        let (wx, wy) = (s.skeleton.world_matrices(x), s.skeleton.world_matrices(y));
        for &j in &joints {
            sum += wx[j].w_axis.truncate().distance(wy[j].w_axis.truncate());
        }
    }
    sum / (a.len() * joints.len()) as f32 / leg
}

#[test]
fn the_built_in_model_denoises_a_val_clip() {
    // A val subject (never trained on).
    let s = source("cmu_08_01_walk");
    let model = MotionModel::built_in(Task::Denoise).unwrap();
    let clean = s.frames().unwrap();
    let clean_poses: Vec<Vec<Transform>> = clean.poses.iter().map(|p| p.local.clone()).collect();
    let (damaged, _) = damaged_copy(&s, &clean, &Noise::LEVELS[1], 5);
    let damaged_poses: Vec<Vec<Transform>> = damaged.poses.iter().map(|p| p.local.clone()).collect();
    let out = denoise(&model, &s, &damaged, &DenoiseOptions::default()).unwrap();
    assert_eq!(out.poses.len(), clean.poses.len());
    assert_eq!(out.contacts.len(), clean.poses.len());
    let before = joint_error(&s, &damaged_poses, &clean_poses);
    let after = joint_error(&s, &out.poses, &clean_poses);
    println!("joint error in leg lengths: damaged {before:.4}, denoised {after:.4}");
    assert!(after < 0.8 * before, "denoised {after} vs damaged {before}");
    // A walk has contacts, on both feet.
    assert!(out.contacts.iter().any(|c| c[0] || c[1]) && out.contacts.iter().any(|c| c[2] || c[3]));
    // The clean clip comes back nearly unchanged: a regression bound (the shipped model moves
    // this walk by 1.3 % of leg length; the aim is under 1 %, docs/model-card-motion.md).
    let same = denoise(&model, &s, &clean, &DenoiseOptions::default()).unwrap();
    let change = joint_error(&s, &same.poses, &clean_poses);
    println!("clean clip changed by {change:.4} leg lengths");
    assert!(change < 0.02, "clean clip changed by {change} leg lengths");
}

#[test]
fn bad_clips_are_refused_with_their_name() {
    let s = source("cmu_08_01_walk");
    let model = MotionModel::built_in(Task::Denoise).unwrap();
    let mut frames = s.frames().unwrap();
    frames.poses.truncate(1);
    frames.times.truncate(1);
    let e = denoise(&model, &s, &frames, &DenoiseOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("cmu_08_01_walk") && e.contains("fewer than two frames"),
        "{e}"
    );
}

#[cfg(feature = "train")]
#[test]
fn a_short_training_run_learns_and_resumes() {
    use rigml_motion::data::prepare;
    use rigml_motion::train::{train, MotionTrainConfig};
    use std::collections::HashMap;
    let sources = vec![source("cmu_131_02_walk"), source("cmu_131_01_walk")];
    let data = prepare(&sources, 2, 1, true).unwrap();
    assert_eq!(data.len(), 4);
    let config = MotionTrainConfig {
        steps: 60,
        batch: 4,
        window: 48,
        hidden: 32,
        learning_rate: 3e-3,
        val_every: 30,
        checkpoint_every: 30,
        ..MotionTrainConfig::default()
    };
    let mut checkpoints = Vec::new();
    let (file, history) = train(&data, Some(&data), &config, None, &HashMap::new(), &mut |e| {
        if let rigml_learn::TrainEvent::Checkpoint { step, model } = e {
            checkpoints.push((step, model.clone()));
        }
        Ok(())
    })
    .unwrap();
    let first: f32 = history.train[..10].iter().map(|e| e.1.total).sum::<f32>() / 10.0;
    let last: f32 = history.train[50..].iter().map(|e| e.1.total).sum::<f32>() / 10.0;
    assert!(last < 0.8 * first, "loss {first} -> {last}");
    assert_eq!(history.val.len(), 2);
    let model = MotionModel::from_file(&file, "trained").unwrap();
    assert_eq!(model.input.outputs, 32);
    // Resuming from the step-30 checkpoint continues at step 31 (the optimiser's moments start
    // afresh; the window stream is replayed) and ends at a loss like the uninterrupted run's.
    let (step, ckpt) = &checkpoints[0];
    assert_eq!(*step, 30);
    let resumed_from = MotionModel::from_file(ckpt, "ckpt").unwrap();
    let (_, resumed) = train(&data, None, &config, Some(&resumed_from), &HashMap::new(), &mut |_| {
        Ok(())
    })
    .unwrap();
    assert_eq!(resumed.train.first().map(|e| e.0), Some(31));
    assert_eq!(resumed.train.len(), 30);
    let end: f32 = resumed.train[20..].iter().map(|e| e.1.total).sum::<f32>() / 10.0;
    assert!(end < 0.8 * first, "resumed loss {first} -> {end}");
    // A model that reads the noise evidence: its file says so, it cleans a clip, and a resume
    // with other input settings is refused.
    let inputs = rigml_motion::train::Inputs {
        evidence: true,
        ..Default::default()
    };
    let wide = MotionTrainConfig {
        steps: 20,
        inputs,
        ..config.clone()
    };
    let (file, history) = train(&data, None, &wide, None, &HashMap::new(), &mut |_| Ok(())).unwrap();
    let first: f32 = history.train[..5].iter().map(|e| e.1.total).sum::<f32>() / 5.0;
    let last: f32 = history.train[15..].iter().map(|e| e.1.total).sum::<f32>() / 5.0;
    assert!(last < first, "loss {first} -> {last}");
    let model = MotionModel::from_file(&file, "wide").unwrap();
    assert!(model.evidence);
    assert_eq!(model.inputs(), rigml_motion::model::EVIDENCE_INPUTS);
    let s = &sources[0];
    let clean = s.frames().unwrap();
    let out = denoise(&model, s, &clean, &DenoiseOptions::default()).unwrap();
    assert_eq!(out.poses.len(), clean.poses.len());
    let e = train(&data, None, &config, Some(&model), &HashMap::new(), &mut |_| Ok(())).unwrap_err();
    assert!(e.to_string().contains("input settings"), "{e}");
    // A blending model: trained on the blend terms (its loss, the error at the clip's rate,
    // falls), its file says so, it cleans a clip, and it refuses to fill in-betweens; without
    // the evidence, or with in-filling windows, its settings are refused.
    let blend_data = rigml_motion::data::prepare_with(&sources, 2, 1, true, true).unwrap();
    assert!(blend_data
        .iter()
        .all(|p| p.blend.len() == 2 && p.blend[0].len() == p.len()));
    let blending = MotionTrainConfig {
        steps: 30,
        infill: 0.0,
        inputs: rigml_motion::train::Inputs {
            evidence: true,
            blend: true,
            ..Default::default()
        },
        ..config.clone()
    };
    let e = train(&data, None, &blending, None, &HashMap::new(), &mut |_| Ok(())).unwrap_err();
    assert!(e.to_string().contains("blend terms"), "{e}");
    let (file, history) = train(&blend_data, None, &blending, None, &HashMap::new(), &mut |_| Ok(())).unwrap();
    let first: f32 = history.train[..5].iter().map(|e| e.1.motion).sum::<f32>() / 5.0;
    let last: f32 = history.train[25..].iter().map(|e| e.1.motion).sum::<f32>() / 5.0;
    assert!(last < first, "blend loss {first} -> {last}");
    let model = MotionModel::from_file(&file, "blend").unwrap();
    assert!(model.blend && model.evidence);
    let out = denoise(&model, s, &clean, &DenoiseOptions::default()).unwrap();
    assert_eq!(out.poses.len(), clean.poses.len());
    let e = rigml_motion::inbetween::inbetween(&model, s, &clean, &[0, 30]).unwrap_err();
    assert!(e.to_string().contains("blending model"), "{e}");
    for inputs in [
        rigml_motion::train::Inputs {
            blend: true,
            ..Default::default()
        },
        rigml_motion::train::Inputs {
            blend: true,
            evidence: true,
            ..Default::default()
        },
    ] {
        let bad = MotionTrainConfig {
            inputs,
            infill: if inputs.evidence { 0.3 } else { 0.0 },
            ..config.clone()
        };
        assert!(bad.validate().is_err(), "{inputs:?}");
    }
}

/// Where the clean-clip change comes from (prints; run with --ignored --nocapture).
#[test]
#[ignore = "a measurement"]
fn floor_of_the_pipeline() {
    use rigml_anim::decode::{decode_onto, DecodeOptions};
    use rigml_anim::encode::encode;
    use rigml_motion::features::{interpolate, to_model_rate, MODEL_FPS};
    for id in ["cmu_08_01_walk", "cmu_08_05_walk_stride"] {
        let s = source(id);
        let clean = s.frames().unwrap();
        let poses: Vec<Vec<Transform>> = clean.poses.iter().map(|p| p.local.clone()).collect();
        let enc = encode(&s.skeleton, &s.info, &clean, id);
        for pin in [false, true] {
            let o = DecodeOptions {
                pin_feet: pin,
                ..DecodeOptions::default()
            };
            let out = decode_onto(&s.skeleton, &s.info, &enc, o, &poses);
            println!("{id}: decode pin {pin}: {:.4}", joint_error(&s, &out, &poses));
        }
        let low = to_model_rate(&enc.frames, clean.fps);
        let mut back = enc.clone();
        back.frames = interpolate(&low, MODEL_FPS, clean.fps, enc.frames.len());
        for (b, e) in back.frames.iter_mut().zip(&enc.frames) {
            b.contacts = e.contacts;
        }
        let o = DecodeOptions {
            pin_feet: false,
            ..DecodeOptions::default()
        };
        let out = decode_onto(&s.skeleton, &s.info, &back, o, &poses);
        println!("{id}: resampled, no pin: {:.4}", joint_error(&s, &out, &poses));
        let mut identity = MotionModel::built_in(Task::Denoise).unwrap();
        for c in std::iter::once(&mut identity.output) {
            c.weight.iter_mut().for_each(|w| *w = 0.0);
            c.bias.iter_mut().for_each(|w| *w = 0.0);
        }
        for pin in [false, true] {
            let o = DenoiseOptions {
                remove_skate: pin,
                ..DenoiseOptions::default()
            };
            let out = denoise(&identity, &s, &clean, &o).unwrap();
            println!(
                "{id}: identity model, pin {pin}: {:.4}",
                joint_error(&s, &out.poses, &poses)
            );
            let o = DenoiseOptions {
                remove_skate: pin,
                root_cutoff: 0.0,
                ..DenoiseOptions::default()
            };
            let out = denoise(&identity, &s, &clean, &o).unwrap();
            println!(
                "{id}: identity model, pin {pin}, no root filter: {:.4}",
                joint_error(&s, &out.poses, &poses)
            );
        }
    }
}

/// Contact probabilities against the truth on a clean val clip (prints; set RIGML_MOTION_MODEL).
#[test]
#[ignore = "a measurement"]
fn contact_probabilities() {
    use rigml_motion::data::model_frames;
    use rigml_motion::features::to_vectors;
    let model = match std::env::var("RIGML_MOTION_MODEL") {
        Ok(p) => MotionModel::load(std::path::Path::new(&p)).unwrap(),
        Err(_) => MotionModel::built_in(Task::Denoise).unwrap(),
    };
    let s = source("cmu_08_01_walk");
    let clean = s.frames().unwrap();
    let low = model_frames(&s, &clean);
    let p = model.predict(&to_vectors(&low), &vec![true; low.len()], None);
    for slot in 0..4 {
        let (mut on, mut off, mut non, mut noff) = (0.0, 0.0, 0, 0);
        for (f, frame) in low.iter().enumerate() {
            if frame.contacts[slot] {
                on += p.contacts[f][slot];
                non += 1;
            } else {
                off += p.contacts[f][slot];
                noff += 1;
            }
        }
        println!(
            "slot {slot}: mean p where true {:.3} ({non}), where false {:.3} ({noff})",
            on / non.max(1) as f32,
            off / noff.max(1) as f32
        );
    }
}

/// Share of frames in contact per slot on every val clip, by the IK-Rig encoder's rule and by
/// `rigml clean`'s detector (prints).
#[test]
#[ignore = "a measurement"]
fn contact_rates() {
    use rigml_anim::encode::encode;
    for row in common::rows_where("kind", "motion")
        .iter()
        .filter(|r| r.get("split") == "val")
    {
        let s = source(row.id());
        let clean = s.frames().unwrap();
        let enc = encode(&s.skeleton, &s.info, &clean, row.id());
        let ours = rigml_motion::data::foot_contacts(&s, &clean);
        let n = enc.frames.len() as f32;
        let rates = |c: &dyn Fn(usize, usize) -> bool| {
            (0..4)
                .map(|k| format!("{:.2}", (0..enc.frames.len()).filter(|&f| c(f, k)).count() as f32 / n))
                .collect::<Vec<_>>()
                .join(" ")
        };
        println!(
            "{}: {} frames at {} fps, IK-Rig contacts {}, clean's detector {}",
            row.id(),
            enc.frames.len(),
            clean.fps,
            rates(&|f, k| enc.frames[f].contacts[k]),
            rates(&|f, k| ours[f][k])
        );
    }
}

/// Where the learned clean-clip change comes from (prints; set RIGML_MOTION_MODEL).
#[test]
#[ignore = "a measurement"]
fn learned_change_breakdown() {
    use rigml_anim::decode::{decode_onto, DecodeOptions};
    use rigml_anim::encode::RigClip;
    use rigml_motion::data::model_frames;
    use rigml_motion::denoise::correct;
    use rigml_motion::features::{interpolate, MODEL_FPS};
    let model = match std::env::var("RIGML_MOTION_MODEL") {
        Ok(p) => MotionModel::load(std::path::Path::new(&p)).unwrap(),
        Err(_) => MotionModel::built_in(Task::Denoise).unwrap(),
    };
    for id in ["cmu_08_01_walk", "cmu_14_28_sit"] {
        let s = source(id);
        let clean = s.frames().unwrap();
        let poses: Vec<Vec<Transform>> = clean.poses.iter().map(|p| p.local.clone()).collect();
        let low = model_frames(&s, &clean);
        let out = correct(&model, &low, None, &DenoiseOptions::default());
        let run = |frames: &[rigml_anim::encode::RigFrame], pin: bool| {
            let rig = RigClip {
                name: id.into(),
                fps: clean.fps,
                times: clean.times.clone(),
                frames: interpolate(frames, MODEL_FPS, clean.fps, poses.len()),
            };
            let o = DecodeOptions {
                pin_feet: pin,
                ..DecodeOptions::default()
            };
            joint_error(&s, &decode_onto(&s.skeleton, &s.info, &rig, o, &poses), &poses)
        };
        println!(
            "{id}: model, pin: {:.4}; no pin: {:.4}",
            run(&out, true),
            run(&out, false)
        );
        let mut rooted = out.clone();
        for (r, l) in rooted.iter_mut().zip(&low) {
            r.origin = l.origin;
            r.forward = l.forward;
        }
        println!(
            "{id}: model with the input's root path, no pin: {:.4}",
            run(&rooted, false)
        );
        let mut only_root = low.clone();
        for (r, o) in only_root.iter_mut().zip(&out) {
            r.origin = o.origin;
            r.forward = o.forward;
        }
        println!(
            "{id}: input with the model's root path, no pin: {:.4}",
            run(&only_root, false)
        );
        let mut input_contacts = low.clone();
        for (r, o) in input_contacts.iter_mut().zip(&out) {
            r.contacts = o.contacts;
        }
        println!(
            "{id}: input with the model's contacts, pin: {:.4}",
            run(&input_contacts, true)
        );
    }
}

/// How much the model changes clean val input, per feature group, in train spreads (prints).
#[test]
#[ignore = "a measurement"]
fn clean_change_by_feature() {
    use rigml_motion::data::model_frames;
    use rigml_motion::features::to_vectors;
    let model = match std::env::var("RIGML_MOTION_MODEL") {
        Ok(p) => MotionModel::load(std::path::Path::new(&p)).unwrap(),
        Err(_) => MotionModel::built_in(Task::Denoise).unwrap(),
    };
    let groups: [(&str, std::ops::Range<usize>); 7] = [
        ("root velocity", 0..3),
        ("hips", 3..12),
        ("spine+neck", 12..42),
        ("arms", 42..72),
        ("legs", 72..102),
        ("shoulders+toes", 102..126),
        ("foot heights", 126..128),
    ];
    let mut sums = vec![0.0f64; groups.len()];
    let mut n = 0usize;
    for row in common::rows_where("kind", "motion")
        .iter()
        .filter(|r| r.get("split") == "val")
    {
        let s = source(row.id());
        let low = model_frames(&s, &s.frames().unwrap());
        let v = to_vectors(&low);
        let p = model.predict(&v, &vec![true; v.len()], None);
        for (a, b) in v.iter().zip(&p.vectors) {
            for (g, (_, r)) in groups.iter().enumerate() {
                for k in r.clone() {
                    let d = (a[k] - b[k]) / model.std[k];
                    sums[g] += (d * d) as f64 / r.len() as f64;
                }
            }
            n += 1;
        }
    }
    for (g, (name, _)) in groups.iter().enumerate() {
        println!("{name}: rms change {:.3} spreads", (sums[g] / n as f64).sqrt());
    }
}

/// In-betweens with an oracle (the clean clip's own model frames) in place of the model: what the
/// rest of the pipeline costs (prints). With RIGML_MOTION_MODEL, also the model's pose with the
/// true root path and the model's root path with the true pose; RIGML_TRUE_CONTACTS=1 gives
/// those the true contacts instead of the model's.
#[test]
#[ignore = "a measurement"]
fn inbetween_pipeline_floor() {
    use rigml_motion::data::model_frames;
    use rigml_motion::features::{to_vectors, MODEL_FPS};
    use rigml_motion::inbetween::{inbetween_with, interpolate_keys};
    use rigml_motion::model::Prediction;
    for id in ["cmu_08_01_walk", "cmu_14_28_sit"] {
        let s = source(id);
        let clean = s.frames().unwrap();
        let poses: Vec<Vec<Transform>> = clean.poses.iter().map(|p| p.local.clone()).collect();
        let truth = model_frames(&s, &clean);
        let truth_v = to_vectors(&truth);
        for spacing in [5usize, 30] {
            let step = (spacing as f32 * clean.fps / MODEL_FPS).round() as usize;
            let keys: Vec<usize> = (0..poses.len()).step_by(step).collect();
            let first = (keys[0] as f32 * MODEL_FPS / clean.fps).round() as usize;
            let oracle = |v: &[[f32; 128]], _: &[bool]| Prediction {
                vectors: (0..v.len())
                    .map(|i| truth_v[(first + i).min(truth_v.len() - 1)])
                    .collect(),
                contacts: (0..v.len())
                    .map(|i| {
                        truth[(first + i).min(truth.len() - 1)]
                            .contacts
                            .map(|c| if c { 1.0 } else { 0.0 })
                    })
                    .collect(),
            };
            let out = inbetween_with(&s, &clean, &keys, &oracle).unwrap();
            let last = *keys.last().unwrap();
            let lerp = interpolate_keys(&poses, &keys);
            if let Ok(p) = std::env::var("RIGML_MOTION_MODEL") {
                let model = MotionModel::load(std::path::Path::new(&p)).unwrap();
                let model = &model;
                let oracle = &oracle;
                let mixed = |root_from_truth: bool| {
                    move |v: &[[f32; 128]], k: &[bool]| {
                        let mut m = model.predict(v, k, None);
                        let o = oracle(v, k);
                        let mse = |a: &[[f32; 128]]| {
                            let mut e = 0.0;
                            for (x, y) in a.iter().zip(&o.vectors) {
                                for q in 3..128 {
                                    e += ((x[q] - y[q]) / model.std[q]).powi(2);
                                }
                            }
                            e / (a.len() * 125) as f32
                        };
                        println!("    pose mse: input {:.4}, model {:.4}", mse(v), mse(&m.vectors));
                        if std::env::var("RIGML_TRUE_CONTACTS").is_ok() {
                            m.contacts = o.contacts.clone();
                        }
                        for (a, b) in m.vectors.iter_mut().zip(&o.vectors) {
                            if root_from_truth {
                                a[..3].copy_from_slice(&b[..3]);
                            } else {
                                a[3..].copy_from_slice(&b[3..]);
                            }
                        }
                        m
                    }
                };
                let model_pose = inbetween_with(&s, &clean, &keys, &mixed(true)).unwrap();
                let model_root = inbetween_with(&s, &clean, &keys, &mixed(false)).unwrap();
                println!(
                    "  model pose + true root {:.4}; model root + true pose {:.4}",
                    joint_error(&s, &model_pose.poses[..=last], &poses[..=last]),
                    joint_error(&s, &model_root.poses[..=last], &poses[..=last])
                );
            }
            println!(
                "{id} spacing {spacing}: oracle {:.4}, interpolation {:.4} (leg lengths, frames up to the last key)",
                joint_error(&s, &out.poses[..=last], &poses[..=last]),
                joint_error(&s, &lerp[..=last], &poses[..=last])
            );
        }
    }
}

/// In-filling in the training's own terms on val windows: normalised error of the model's output
/// against the input's (interpolated) error (prints; set RIGML_MOTION_MODEL).
#[test]
#[ignore = "a measurement"]
fn infill_in_training_terms() {
    use rigml_motion::data::prepare;
    use rigml_motion::features::FEATURES;
    use rigml_motion::train::window;
    let model = match std::env::var("RIGML_MOTION_MODEL") {
        Ok(p) => MotionModel::load(std::path::Path::new(&p)).unwrap(),
        Err(_) => MotionModel::built_in(Task::Inbetween).unwrap(),
    };
    let data = prepare(&[source("cmu_08_01_walk")], 1, 1, false).unwrap();
    let w = 64;
    for spacing in [5usize, 15, 30] {
        let inputs = rigml_motion::train::Inputs::of(&model);
        let win = window(
            &data[0],
            0,
            w,
            None,
            Some((spacing, 0)),
            &model.mean,
            &model.std,
            &inputs,
        );
        let channels = inputs.channels();
        // To channel-major.
        let x: Vec<f32> = (0..channels * w)
            .map(|i| win.input[(i % w) * channels + i / w])
            .collect();
        let y = model.forward(&x, w);
        let (mut e_in, mut e_out, mut n) = (0.0, 0.0, 0);
        for f in 0..w {
            if win.input[f * channels + channels - 1] > 0.5 {
                continue;
            }
            for k in 0..FEATURES {
                let t = win.target[f * FEATURES + k];
                let i = win.input[f * channels + k];
                let o = i + y[k * w + f];
                e_in += (i - t) * (i - t);
                e_out += (o - t) * (o - t);
                n += 1;
            }
        }
        println!(
            "spacing {spacing}: input mse {:.4}, model mse {:.4}",
            e_in / n as f32,
            e_out / n as f32
        );
    }
}

/// Contact F1 per clean clip of a split (RIGML_SPLIT, val by default) at the model's rate, with
/// the true and predicted contact rates and the left ankle's height percentiles (prints; set
/// RIGML_MOTION_MODEL).
#[test]
#[ignore = "a measurement"]
fn contact_f1_per_clip() {
    use rigml_motion::data::{contact_f1 as f1, model_frames, prefilter};
    use rigml_motion::features::to_vectors;
    let model = match std::env::var("RIGML_MOTION_MODEL") {
        Ok(p) => MotionModel::load(std::path::Path::new(&p)).unwrap(),
        Err(_) => MotionModel::built_in(Task::Denoise).unwrap(),
    };
    let split = std::env::var("RIGML_SPLIT").unwrap_or("val".into());
    let mut all = Vec::new();
    let (mut pooled_p, mut pooled_t) = (Vec::new(), Vec::new());
    for row in common::rows_where("kind", "motion")
        .iter()
        .filter(|r| r.get("split") == split)
    {
        let Ok(s) = load_source(row.id()) else {
            continue;
        };
        let clean = s.frames().unwrap();
        let truth: Vec<[bool; 4]> = model_frames(&s, &clean).iter().map(|f| f.contacts).collect();
        let encode = |f: &rigml_anim::rig::Frames| rigml_anim::encode::encode(&s.skeleton, &s.info, f, row.id()).frames;
        let smooth = encode(&prefilter(&s, &clean).unwrap());
        let input = rigml_motion::features::to_model_rate(&smooth, clean.fps);
        let evidence = model
            .evidence
            .then(|| rigml_motion::evidence::noise_evidence(&encode(&clean), &smooth, clean.fps, input.len()));
        let p = model.predict(&to_vectors(&input), &vec![true; input.len()], evidence.as_deref());
        let pred: Vec<[bool; 4]> = p.contacts.iter().map(|c| c.map(|x| x >= 0.5)).collect();
        let rate =
            |c: &[[bool; 4]]| c.iter().map(|r| r.iter().filter(|x| **x).count()).sum::<usize>() as f32 / c.len() as f32;
        let v = f1(&pred, &truth);
        all.push(v);
        pooled_p.extend(pred.iter().copied());
        pooled_t.extend(truth.iter().copied());
        let mut hs: Vec<f32> = input.iter().map(|f| f.foot_heights[0]).collect();
        hs.sort_by(f32::total_cmp);
        let pct = |q: f32| hs[((hs.len() - 1) as f32 * q) as usize];
        println!(
            "{}: F1 {v:.3}, true rate {:.2}, predicted rate {:.2}, left foot height p5 {:.3} p50 {:.3}",
            row.id(),
            rate(&truth),
            rate(&pred),
            pct(0.05),
            pct(0.5)
        );
    }
    println!(
        "mean {:.3}, pooled {:.3}",
        all.iter().sum::<f64>() / all.len() as f64,
        f1(&pooled_p, &pooled_t)
    );
}

/// Share of frames of every train and val walk with an ankle in contact (a walk always has one
/// foot on the ground), by `rigml clean`'s detector as it is, with one floor for the clip, and
/// as it was (speeds between neighbouring frames, runs and gaps of 3 frames, one floor): the
/// measurement behind docs/ALGORITHMS.md §8's contact rule (prints).
#[test]
#[ignore = "a measurement"]
fn contact_support() {
    use rigml_anim::cleanup::contacts::{detect, ContactParams};
    let now = ContactParams::default();
    let one_floor = ContactParams {
        floor_window: 0.0,
        ..now
    };
    let mut means = [0.0f64; 3];
    let mut clips = 0;
    for row in common::rows_where("kind", "motion") {
        if !row.id().contains("walk") || row.get("split") == "test" {
            continue;
        }
        let Ok(s) = load_source(row.id()) else {
            continue;
        };
        let clean = s.frames().unwrap();
        let was = ContactParams {
            speed_span: 0.0,
            min_duration: 3.0 / clean.fps,
            max_gap: 3.0 / clean.fps,
            floor_window: 0.0,
            ..now
        };
        // The ankles (slots 0 and 2: left and right).
        let [left, _, right, _] = rigml_motion::data::foot_tracks(&s, &clean);
        let tracks: Vec<Vec<Vec3>> = [left, right].into_iter().flatten().collect();
        let mut line = format!("{}:", row.id());
        for (k, params) in [now, one_floor, was].iter().enumerate() {
            let flags: Vec<Vec<bool>> = tracks
                .iter()
                .map(|t| detect(t, s.info.hip_height, clean.fps, params))
                .collect();
            let n = clean.poses.len();
            let support = (0..n).filter(|&f| flags.iter().any(|c| c[f])).count() as f64 / n as f64;
            means[k] += support;
            line += &format!(" {support:.2}");
        }
        clips += 1;
        println!("{line}");
    }
    println!(
        "frames with an ankle in contact over {clips} walks: detector {:.3}, one floor {:.3}, frame-counted rule and one floor {:.3}",
        means[0] / clips as f64,
        means[1] / clips as f64,
        means[2] / clips as f64
    );
}

/// `clean` (frames of `s`) damaged with `noise` and `seed`, and the root offsets the sliding
/// added ([`corrupt`]).
fn damaged_copy(
    s: &Source,
    clean: &rigml_anim::rig::Frames,
    noise: &Noise,
    seed: u64,
) -> (rigml_anim::rig::Frames, Vec<Vec3>) {
    let mut damaged = clean.clone();
    let offsets = corrupt(
        &s.skeleton,
        &mut damaged.poses,
        clean.fps,
        s.info.facing * Vec3::Y,
        s.info.hip_height,
        noise,
        seed,
    );
    (damaged, offsets)
}

/// Cleaned poses as frames at the clean clip's times.
fn as_frames(clean: &rigml_anim::rig::Frames, poses: Vec<Vec<Transform>>) -> rigml_anim::rig::Frames {
    rigml_anim::rig::Frames {
        fps: clean.fps,
        times: clean.times.clone(),
        poses: poses.into_iter().map(|local| rigml_core::Pose { local }).collect(),
    }
}

/// The clips the motion measurements read: every val clip and every third train clip (in
/// manifest order) at 60 fps or more, with their clean frames.
fn measurement_clips() -> Vec<(String, Source, rigml_anim::rig::Frames)> {
    let mut train_seen = 0;
    let mut out = Vec::new();
    for row in common::rows_where("kind", "motion") {
        match row.get("split") {
            "val" => {}
            "train" => {
                train_seen += 1;
                if train_seen % 3 != 0 {
                    continue;
                }
            }
            _ => continue,
        }
        let Ok(s) = load_source(row.id()) else { continue };
        let frames = s.frames().unwrap();
        if frames.fps >= 60.0 {
            out.push((row.id().to_string(), s, frames));
        }
    }
    out
}

/// How much an adaptive choice among Butterworth cutoffs could gain over one cutoff: per clip
/// of val and every third train clip (at 60 fps or more), clean and at `rigml eval-motion`'s
/// three damage levels, the joint error of `rigml clean`'s Butterworth (no step limits, skate
/// removed) at several cutoffs and with none, and what choosing the best of them per clip, per
/// second or per joint and second (from the truth: an upper bound) would score (prints). With
/// `PARTS=1`, the heaviest level's four kinds of damage one at a time instead (jitter, spikes,
/// dropped frames, sliding). With `WANDER=all` the root's wander is taken out exactly before
/// cleaning, with `WANDER=shape` all of it but its mean over the clip (what a perfect estimate
/// of its velocity would leave). docs/experiments/2026-12-07-what-heavy-damage-is-made-of.md,
/// 2026-12-07-learning-the-wander.md.
#[test]
#[ignore = "a measurement"]
fn filter_bank_oracle() {
    use rigml_anim::cleanup::{clean, CleanOptions, Filter, FootskateOptions, Leg};
    use rigml_anim::retarget::bake_clip;
    use rigml_motion::data::NO_CUTS;
    let cutoffs: [Option<f64>; 7] = [None, Some(12.0), Some(8.0), Some(6.0), Some(4.0), Some(3.0), Some(2.0)];
    let l3 = Noise::LEVELS[2];
    let levels = match std::env::var("PARTS") {
        Ok(_) => vec![
            Noise {
                spike_rate: 0.0,
                drop_rate: 0.0,
                slide: 0.0,
                ..l3
            },
            Noise {
                jitter_degrees: 0.0,
                drop_rate: 0.0,
                slide: 0.0,
                ..l3
            },
            Noise {
                jitter_degrees: 0.0,
                spike_rate: 0.0,
                slide: 0.0,
                ..l3
            },
            Noise {
                jitter_degrees: 0.0,
                spike_rate: 0.0,
                drop_rate: 0.0,
                ..l3
            },
        ],
        Err(_) => std::iter::once(Noise::default()).chain(Noise::LEVELS).collect(),
    };
    // [level][version] sums of errors, and the oracles.
    let mut sums = vec![[0.0f64; 7]; levels.len()];
    let mut oracle = vec![[0.0f64; 3]; levels.len()];
    let mut clips = 0usize;
    for (id, s, clean_frames) in measurement_clips() {
        let truth: Vec<Vec<Transform>> = clean_frames.poses.iter().map(|p| p.local.clone()).collect();
        let joints: Vec<usize> = s.info.map.roles().into_iter().map(|(_, j)| j).collect();
        let leg = 0.5 * (s.info.chain_length(ChainKind::LeftLeg) + s.info.chain_length(ChainKind::RightLeg));
        let world = |p: &[Vec<Transform>]| -> Vec<Vec<Vec3>> {
            p.iter()
                .map(|x| {
                    let w = s.skeleton.world_matrices(x);
                    joints.iter().map(|&j| w[j].w_axis.truncate()).collect()
                })
                .collect()
        };
        let tw = world(&truth);
        let legs = Leg::from_humanoid(&s.info.map, &s.skeleton).unwrap();
        let n = truth.len();
        let sec = clean_frames.fps.round() as usize;
        for (l, noise) in levels.iter().enumerate() {
            let (mut damaged, wander) = damaged_copy(&s, &clean_frames, noise, 1);
            // WANDER=all takes the root's wander out exactly, WANDER=shape all but its mean over
            // the clip (what a perfect estimate of the wander's velocity would leave).
            if let Ok(how) = std::env::var("WANDER") {
                let mean = wander.iter().copied().sum::<Vec3>() / wander.len().max(1) as f32;
                let keep = if how == "shape" { mean } else { Vec3::ZERO };
                for (pose, w) in damaged.poses.iter_mut().zip(&wander) {
                    for (j, t) in pose.local.iter_mut().enumerate() {
                        if s.skeleton.parents[j].is_none() {
                            t.translation -= *w - keep;
                        }
                    }
                }
            }
            let poses: Vec<Vec<Transform>> = damaged.poses.iter().map(|p| p.local.clone()).collect();
            let times: Vec<f32> = damaged.times.iter().map(|t| t - damaged.times[0]).collect();
            let clip = bake_clip(&s.skeleton, &times, &poses, &id);
            // [version][frame][joint] errors in leg lengths.
            let errors: Vec<Vec<Vec<f32>>> = cutoffs
                .iter()
                .map(|c| {
                    let options = CleanOptions {
                        filter: c.map(|cutoff| Filter::Butterworth { cutoff, order: 2 }),
                        footskate: Some(FootskateOptions::default()),
                        limits: NO_CUTS,
                    };
                    let out = clean(&s.skeleton, &clip, &legs, s.info.hip_height, &options).unwrap();
                    world(&out.frames.poses)
                        .iter()
                        .zip(&tw)
                        .map(|(a, b)| a.iter().zip(b).map(|(x, y)| x.distance(*y) / leg).collect())
                        .collect()
                })
                .collect();
            let total = |v: usize, f: usize| errors[v][f].iter().sum::<f32>() as f64 / joints.len() as f64;
            let means: Vec<f64> = (0..cutoffs.len())
                .map(|v| (0..n).map(|f| total(v, f)).sum::<f64>() / n as f64)
                .collect();
            for (sum, mean) in sums[l].iter_mut().zip(&means) {
                *sum += mean;
            }
            // Per clip.
            oracle[l][0] += means.iter().copied().fold(f64::INFINITY, f64::min);
            // Per second (whole body), and per second and joint.
            let (mut body, mut joint) = (0.0f64, 0.0f64);
            for start in (0..n).step_by(sec) {
                let end = (start + sec).min(n);
                body += (0..cutoffs.len())
                    .map(|v| (start..end).map(|f| total(v, f)).sum::<f64>())
                    .fold(f64::INFINITY, f64::min);
                joint += (0..joints.len())
                    .map(|j| {
                        errors
                            .iter()
                            .map(|e| (start..end).map(|f| e[f][j] as f64).sum::<f64>())
                            .fold(f64::INFINITY, f64::min)
                    })
                    .sum::<f64>()
                    / joints.len() as f64;
            }
            oracle[l][1] += body / n as f64;
            oracle[l][2] += joint / n as f64;
        }
        clips += 1;
    }
    for l in 0..levels.len() {
        let m: Vec<String> = sums[l]
            .iter()
            .map(|x| format!("{:.3}", 100.0 * x / clips as f64))
            .collect();
        println!(
            "{}: cutoffs none/12/8/6/4/3/2 Hz {} | best per clip {:.3}, per second {:.3}, per joint and second {:.3} (% leg, {clips} clips)",
            levels[l].label(),
            m.join(" "),
            100.0 * oracle[l][0] / clips as f64,
            100.0 * oracle[l][1] / clips as f64,
            100.0 * oracle[l][2] / clips as f64
        );
    }
}

/// The cleaner pins the feet of a heavily damaged clip at the contacts of foot tracks smoothed
/// first: the clean capture's feet shake below the threshold, the heaviest damage's above it,
/// and on this val walk the result's contacts then match the clean clip's better than with pins
/// at the contacts of the tracks as they are.
#[test]
fn shaking_feet_are_pinned_at_the_contacts_of_smoothed_tracks() {
    use rigml_motion::data::{contact_cutoff, contact_f1, foot_contacts, foot_shake};
    let s = source("cmu_08_01_walk");
    let clean = s.frames().unwrap();
    let truth = foot_contacts(&s, &clean);
    let calm = foot_shake(&s, &clean);
    assert!(calm > 0.0 && contact_cutoff(calm).is_none(), "clean shake {calm}");
    let (damaged, _) = damaged_copy(&s, &clean, &Noise::LEVELS[2], 3);
    let shake = foot_shake(&s, &damaged);
    assert_eq!(contact_cutoff(shake), Some(3.0), "damaged shake {shake}");
    // Level 2's feet shake about 0.08 hip heights: their contacts are read as they are.
    assert_eq!(contact_cutoff(0.08), None);
    let model = MotionModel::built_in(Task::Denoise).unwrap();
    let out = denoise(&model, &s, &damaged, &DenoiseOptions::default()).unwrap();
    let reported = contact_f1(&out.contacts, &truth);
    // The same cleaning with pins at the contacts of the result's tracks as they are.
    let unpinned = denoise(
        &model,
        &s,
        &damaged,
        &DenoiseOptions {
            remove_skate: false,
            ..DenoiseOptions::default()
        },
    )
    .unwrap();
    let plain = rigml_motion::data::remove_skate(&s, unpinned.poses, clean.fps, None).unwrap();
    let before = contact_f1(&foot_contacts(&s, &as_frames(&clean, plain)), &truth);
    println!("contact F1 at level 3: {reported:.3} (pinned at the tracks' own contacts: {before:.3})");
    assert!(reported > before + 0.05, "{reported} against {before}");
}

/// Contact F1 (against the detector on the clean clip) of the detector run on foot tracks
/// low-passed first, at several cutoffs: on the built-in denoiser's output (skate removed) and
/// on the damaged clip itself, clean and at `rigml eval-motion`'s three damage levels, over the
/// val clips and every third train clip at 60 fps or more (prints; with `PER_CLIP=1` every
/// clip's F1s and the shake of its cleaned and damaged feet, [`rigml_motion::data::foot_shake`]).
/// docs/experiments/2026-12-07-contacts-of-shaking-feet.md.
#[test]
#[ignore = "a measurement"]
fn contacts_from_smoothed_tracks() {
    use rigml_anim::cleanup::contacts::{detect, ContactParams};
    use rigml_anim::cleanup::Filter;
    use rigml_motion::data::{contact_f1, foot_contacts, foot_shake, foot_tracks};
    // The detector on each foot track low-passed at `cutoff` first (none: as it is).
    let smoothed_contacts = |s: &Source, frames: &rigml_anim::rig::Frames, cutoff: Option<f64>| {
        let mut out = vec![[false; 4]; frames.poses.len()];
        for (k, track) in foot_tracks(s, frames).iter().enumerate() {
            let Some(track) = track else { continue };
            let track = match cutoff {
                Some(cutoff) => Filter::Butterworth { cutoff, order: 2 }
                    .apply_vec3(track, frames.fps as f64)
                    .unwrap(),
                None => track.clone(),
            };
            let flags = detect(&track, s.info.hip_height, frames.fps, &ContactParams::default());
            for (f, c) in flags.into_iter().enumerate() {
                out[f][k] = c;
            }
        }
        out
    };
    let cutoffs: [Option<f64>; 6] = [None, Some(8.0), Some(6.0), Some(4.0), Some(3.0), Some(2.0)];
    let model = MotionModel::built_in(Task::Denoise).unwrap();
    let levels: Vec<Noise> = std::iter::once(Noise::default()).chain(Noise::LEVELS).collect();
    // [level][input: output, damaged][cutoff]
    let mut sums = vec![[[0.0f64; 6]; 2]; levels.len()];
    let mut clips = 0usize;
    for (id, s, clean) in measurement_clips() {
        let truth = foot_contacts(&s, &clean);
        for (l, noise) in levels.iter().enumerate() {
            let (damaged, _) = damaged_copy(&s, &clean, noise, 1);
            let out = denoise(&model, &s, &damaged, &DenoiseOptions::default()).unwrap();
            let result = as_frames(&clean, out.poses);
            let mut line = format!("{} L{l}", id);
            for (i, frames) in [&result, &damaged].into_iter().enumerate() {
                for (c, cutoff) in cutoffs.iter().enumerate() {
                    let f1 = contact_f1(&smoothed_contacts(&s, frames, *cutoff), &truth);
                    sums[l][i][c] += f1;
                    line += &format!(" {f1:.2}");
                }
                line += &format!(" | shake {:.4} |", foot_shake(&s, frames));
            }
            if std::env::var("PER_CLIP").is_ok() {
                println!("{line}");
            }
        }
        clips += 1;
    }
    for (l, noise) in levels.iter().enumerate() {
        for (i, name) in ["denoised", "damaged"].iter().enumerate() {
            let m: Vec<String> = sums[l][i].iter().map(|x| format!("{:.3}", x / clips as f64)).collect();
            println!(
                "{} | {name}: tracks at none/8/6/4/3/2 Hz {} ({clips} clips)",
                noise.label(),
                m.join(" ")
            );
        }
    }
}
