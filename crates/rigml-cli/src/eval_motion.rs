//! `rigml eval-motion --split val`: score mocap denoising on a manifest split (METRICS.md §10).
//! Every humanoid clip of the split is damaged with each noise level of
//! [`rigml_motion::noise::Noise::LEVELS`] (and left clean), then cleaned by each filter of
//! `rigml clean` (with its foot-skate removal) and by the learned model; each result is compared
//! with the clean clip: joint position error, jitter, foot skate and contact F1. Then
//! in-betweens: keys every 5, 15 and 30 frames (at 30 fps) of each clean clip, the frames between
//! them filled by interpolation and by the model, scored on those frames.

use crate::arg_numbers::positive;
use crate::motion_data::load_split;
use anyhow::{bail, Result};
use glam::Vec3;
use rayon::prelude::*;
use rigml_anim::cleanup::{self, contacts, CleanOptions, Filter, FootskateOptions, Leg, StepLimits};
use rigml_anim::retarget::bake_clip;
use rigml_anim::rig::Frames;
use rigml_core::{Pose, Transform};
use rigml_eval::dataset::Dataset;
use rigml_eval::retarget_metrics::{foot_skate, jitter};
use rigml_motion::data::{foot_contacts, prepare, ContactCounts, Source, NO_CUTS};
use rigml_motion::denoise::{denoise, DenoiseOptions};
use rigml_motion::features::MODEL_FPS;
use rigml_motion::inbetween::{inbetween, inbetween_with, interpolate_keys};
use rigml_motion::library::{subject_of, Library};
use rigml_motion::noise::{corrupt, Noise};
use rigml_motion::{MotionModel, Task};
use serde::Serialize;
use std::fmt::Write;
use std::path::PathBuf;
use std::time::Instant;

/// Score mocap denoising (filters and the learned model) on a manifest split.
#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  rigml eval-motion --split val
  rigml eval-motion --split val --model motion.safetensors --json
Noise levels: none (the clean clip), then jitter 1°, 2° and 4° per axis on every joint, the last
two with marker-swap spikes, dropped frames and foot sliding (docs/METRICS.md §10). Methods: the
damaged clip as it is, `rigml clean`'s filters (butterworth 6 Hz, savgol 6 Hz, one-euro) each
with foot-skate removal, as `rigml clean` runs them and with its step limits off (-nocut: heavy
jitter trips the pose-speed limit on every frame, and then nothing is smoothed), and the
learned model (rigml clean --method learned).")]
pub struct Args {
    /// The data folder holding manifest.tsv, or the manifest itself.
    #[arg(long, default_value = "../shared/data")]
    pub data: PathBuf,
    /// Split to score (test: for reporting only).
    #[arg(long, default_value = "val", value_parser = ["train", "val", "test"])]
    pub split: String,
    /// A motion model file for both tasks instead of the built-in ones (the denoising model and
    /// the in-between model); a blending model (`train-motion --blend`) for cleaning only.
    #[arg(long, value_name = "FILE")]
    pub model: Option<PathBuf>,
    /// Below this frequency (Hz) the cleaned root path follows the clip, above it the model.
    #[arg(long, value_name = "HZ", default_value_t = DenoiseOptions::default().root_cutoff, value_parser = positive::<f64>)]
    pub root_cutoff: f64,
    /// Interpolate the model's frames back to the clip's rate instead of applying its change at
    /// the clip's rate (how denoising worked before 2026-11-27, late; for comparison).
    #[arg(long)]
    pub resampled_output: bool,
    /// Also fill the in-betweens by retrieval from the clean clips of this split (a motion
    /// library; `rigml inbetween --method retrieval`), never from the scored clip's own subject
    /// (so `--split train --library train` scores the library leaving one subject out at a time).
    #[arg(long, value_name = "SPLIT", value_parser = ["train", "val", "test"])]
    pub library: Option<String>,
    /// Seed of the damage.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Scores of one method on one clip at one noise level.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Score {
    /// Mean distance of the humanoid's mapped joints from the clean clip's, in leg lengths.
    pub joint_error: f64,
    /// METRICS.md §7 jitter of the mapped joints, hip heights per s³.
    pub jitter: f64,
    /// METRICS.md §7 foot skate of the ankles and toes above their own floor, hip heights per s.
    pub skate: f64,
    /// F1 of the contacts (ankles and toes) against the clean clip's.
    pub contact_f1: f64,
    /// The frame counts that F1 is made of (summed over clips for the pooled F1).
    #[serde(skip)]
    pub contacts: ContactCounts,
}

#[derive(Serialize)]
struct Row {
    level: String,
    method: String,
    clips: usize,
    /// Means over clips (`contact_f1`: the mean of per-clip F1s).
    mean: Score,
    /// Contact F1 over every frame of every clip at once (METRICS.md §10): each contact frame
    /// counts once, where the mean of per-clip F1s weighs a clip with a dozen contact frames
    /// as much as a long walk.
    contact_f1_pooled: f64,
    /// The frame counts of the pooled F1, for pooling several reports (cross-validation folds).
    contact_counts: Counts,
}

/// [`ContactCounts`] as the JSON report writes them.
#[derive(Serialize)]
struct Counts {
    hits: u64,
    false_alarms: u64,
    misses: u64,
}

#[derive(Serialize)]
struct Report {
    split: String,
    model: String,
    clips: Vec<String>,
    skipped: Vec<(String, String)>,
    rows: Vec<Row>,
    /// In-betweens at each key spacing: interpolation and the model.
    inbetweens: Vec<InbetweenRow>,
    /// Seconds of clip the learned model cleans per second of CPU time (one thread at a time per clip).
    learned_speed: f64,
}

const METHODS: [&str; 8] = [
    "damaged",
    "butterworth",
    "savgol",
    "one-euro",
    "butterworth-nocut",
    "savgol-nocut",
    "one-euro-nocut",
    "learned",
];

// The `-nocut` filters run without step limits (`NO_CUTS`): under heavy jitter at 120 fps every
// frame exceeds `rigml clean`'s pose-speed limit, so its filters cut everywhere and smooth
// nothing; these variants show what the filters themselves can do.

fn filter_of(method: &str, fps: f64) -> Option<Filter> {
    match method.trim_end_matches("-nocut") {
        "butterworth" => Some(Filter::Butterworth { cutoff: 6.0, order: 2 }),
        "savgol" => Filter::savgol_for_cutoff(6.0, 3, fps).ok(),
        "one-euro" => Some(Filter::one_euro(2.0, 1.0)),
        _ => None,
    }
}

fn positions(source: &Source, poses: &[Vec<Transform>]) -> Vec<Vec<Vec3>> {
    poses
        .iter()
        .map(|p| {
            source
                .skeleton
                .world_matrices(p)
                .iter()
                .map(|m| m.w_axis.truncate())
                .collect()
        })
        .collect()
}

/// The clean clip every method of one clip is scored against: its frames, joint positions and
/// contacts, computed once rather than once per method.
struct Reference {
    frames: Frames,
    positions: Vec<Vec<Vec3>>,
    contacts: Vec<[bool; 4]>,
}

impl Reference {
    fn new(source: &Source, frames: Frames) -> Reference {
        let poses: Vec<Vec<Transform>> = frames.poses.iter().map(|p| p.local.clone()).collect();
        Reference {
            positions: positions(source, &poses),
            contacts: foot_contacts(source, &frames),
            frames,
        }
    }
}

/// Score `poses` (with `contacts`, or contacts found on them by the threshold rule) against
/// the clean clip.
fn score(source: &Source, clean: &Reference, poses: &[Vec<Transform>], contacts_used: Option<&[[bool; 4]]>) -> Score {
    score_frames(source, clean, poses, contacts_used, None)
}

/// [`score`] with the joint error over the frames `counted` marks only (all when `None`).
fn score_frames(
    source: &Source,
    reference: &Reference,
    poses: &[Vec<Transform>],
    contacts_used: Option<&[[bool; 4]]>,
    counted: Option<&[bool]>,
) -> Score {
    let info = &source.info;
    let map = &info.map;
    let clean = &reference.frames;
    let joints: Vec<usize> = map.roles().into_iter().map(|(_, j)| j).collect();
    let (pc, po) = (&reference.positions, positions(source, poses));
    let leg = 0.5
        * (info.chain_length(rigml_anim::humanoid::ChainKind::LeftLeg)
            + info.chain_length(rigml_anim::humanoid::ChainKind::RightLeg));
    let n = pc.len().min(po.len());
    let mut error = 0.0f64;
    let mut frames = 0usize;
    for f in 0..n {
        if counted.is_some_and(|c| !c.get(f).copied().unwrap_or(false)) {
            continue;
        }
        frames += 1;
        for &j in &joints {
            error += f64::from(pc[f][j].distance(po[f][j]));
        }
    }
    let error = error / (frames * joints.len()).max(1) as f64 / f64::from(leg.max(1e-6));
    let h = info.hip_height;
    let facing_inv = info.facing.inverse();
    let mapped: Vec<Vec<Vec3>> = po
        .iter()
        .map(|p| joints.iter().map(|&j| facing_inv * p[j]).collect())
        .collect();
    let feet: Vec<Vec<Vec3>> = Leg::from_humanoid(map, &source.skeleton)
        .map(|legs| cleanup::foot_tracks(&po, &legs))
        .unwrap_or_default()
        .iter()
        .map(|t| contacts::floor_relative(&t.iter().map(|p| facing_inv * *p).collect::<Vec<_>>()))
        .collect();
    let as_frames = |poses: &[Vec<Transform>]| Frames {
        fps: clean.fps,
        times: clean.times.clone(),
        poses: poses.iter().map(|l| Pose { local: l.clone() }).collect(),
    };
    let found: Vec<[bool; 4]> = match contacts_used {
        Some(c) => c.to_vec(),
        None => foot_contacts(source, &as_frames(poses)),
    };
    let contacts = ContactCounts::of(&found, &reference.contacts);
    Score {
        joint_error: error,
        jitter: jitter(&mapped, h, clean.fps).unwrap_or(0.0),
        skate: foot_skate(&feet, h, clean.fps).unwrap_or(0.0),
        contact_f1: contacts.f1(),
        contacts,
    }
}

/// Every method's score on one clip at one level, and the learned model's seconds.
fn run_clip(
    model: &MotionModel,
    source: &Source,
    level: Option<&Noise>,
    seed: u64,
    options: &DenoiseOptions,
) -> Result<(Vec<Score>, f64)> {
    let clean = source.frames()?;
    let mut damaged = clean.clone();
    if let Some(noise) = level {
        let up = source.info.facing * Vec3::Y;
        corrupt(
            &source.skeleton,
            &mut damaged.poses,
            clean.fps,
            up,
            source.info.hip_height,
            noise,
            seed,
        );
    }
    let damaged_poses: Vec<Vec<Transform>> = damaged.poses.iter().map(|p| p.local.clone()).collect();
    let times: Vec<f32> = damaged.times.iter().map(|t| t - damaged.times[0]).collect();
    let clip = bake_clip(&source.skeleton, &times, &damaged_poses, &source.name);
    let legs = Leg::from_humanoid(&source.info.map, &source.skeleton)?;
    let fps = clean.fps;
    let clean = Reference::new(source, clean);
    let mut scores = Vec::new();
    let mut seconds = 0.0;
    for method in METHODS {
        let s = match method {
            "damaged" => score(source, &clean, &damaged_poses, None),
            "learned" => {
                let started = Instant::now();
                let out = denoise(model, source, &damaged, options)?;
                seconds = started.elapsed().as_secs_f64();
                score(source, &clean, &out.poses, Some(&out.contacts))
            }
            filter => {
                let options = CleanOptions {
                    filter: filter_of(filter, f64::from(fps)),
                    footskate: Some(FootskateOptions::default()),
                    limits: if filter.ends_with("-nocut") {
                        NO_CUTS
                    } else {
                        StepLimits::default()
                    },
                };
                let cleaned = cleanup::clean(&source.skeleton, &clip, &legs, source.info.hip_height, &options)?;
                score(source, &clean, &cleaned.frames.poses, None)
            }
        };
        scores.push(s);
    }
    Ok((scores, seconds))
}

/// Key spacings of the in-between evaluation, in frames at 30 fps (LAFAN1's protocol).
pub const SPACINGS: [usize; 3] = [5, 15, 30];

/// Known frames before each transition in LAFAN1's layout (at 30 fps): the context, whose
/// velocities a method can read.
pub const CONTEXT: usize = 10;

/// How key frames are laid out for the in-between evaluation.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Protocol {
    /// A key every N frames.
    Keys,
    /// LAFAN1's transitions: [`CONTEXT`] known frames, N hidden ones, then the target frame
    /// (the first of the next transition's context), repeated along the clip.
    Transitions,
}

impl Protocol {
    /// The name in the report's table and JSON.
    fn name(self) -> &'static str {
        match self {
            Protocol::Keys => "keys",
            Protocol::Transitions => "transitions",
        }
    }
}

/// Key frames (indices into a clip of `n` frames, `per_frame` of them per 30 fps frame) and the
/// frames scored, for `protocol` with gaps of `spacing` frames at 30 fps.
fn layout(protocol: Protocol, n: usize, per_frame: f32, spacing: usize) -> (Vec<usize>, Vec<bool>) {
    let mut counted = vec![false; n];
    match protocol {
        Protocol::Keys => {
            let every = ((spacing as f32 * per_frame).round() as usize).max(1);
            let keys: Vec<usize> = (0..n).step_by(every).collect();
            let last = *keys.last().unwrap_or(&0);
            for (f, c) in counted.iter_mut().enumerate() {
                *c = f <= last && f % every != 0;
            }
            (keys, counted)
        }
        Protocol::Transitions => {
            let step = (per_frame.round() as usize).max(1);
            let mut keys = Vec::new();
            let mut start = 0;
            loop {
                keys.extend((0..CONTEXT).map(|k| start + k * step).take_while(|&f| f < n));
                let last = start + (CONTEXT - 1) * step;
                let target = last + (spacing + 1) * step;
                if target >= n {
                    break;
                }
                for c in &mut counted[last + 1..target] {
                    *c = true;
                }
                start = target;
            }
            (keys, counted)
        }
    }
}

#[derive(Serialize)]
struct InbetweenRow {
    /// [`Protocol::name`].
    protocol: &'static str,
    /// Key spacing (keys) or transition length (transitions) in frames at 30 fps.
    spacing: usize,
    method: String,
    clips: usize,
    /// Joint error over the frames between keys (leg lengths).
    joint_error: f64,
    /// Foot skate of the whole result (H/s).
    skate: f64,
}

/// Interpolation's and the model's scores on one clip with its keys laid out by `protocol`
/// with gaps of `spacing` model frames; `None` for a clip too short for two gaps (keys) or one
/// transition (a clip that cannot be sampled is an error, as in the denoising half).
fn inbetween_clip(
    model: &MotionModel,
    library: Option<&Library>,
    source: &Source,
    protocol: Protocol,
    spacing: usize,
) -> Result<Option<Vec<Score>>> {
    let clean = source.frames()?;
    let frames = clean.poses.len() as f32 / clean.fps * MODEL_FPS;
    let too_short = match protocol {
        Protocol::Keys => frames <= 2.0 * spacing as f32,
        Protocol::Transitions => frames <= (CONTEXT + spacing + 1) as f32,
    };
    if too_short {
        return Ok(None);
    }
    let n = clean.poses.len();
    let (keys, counted) = layout(protocol, n, clean.fps / MODEL_FPS, spacing);
    let poses: Vec<Vec<Transform>> = clean.poses.iter().map(|p| p.local.clone()).collect();
    let lerp = interpolate_keys(&poses, &keys);
    let learned = inbetween(model, source, &clean, &keys)?;
    let retrieved = match library {
        Some(l) => {
            let subject = subject_of(&source.name);
            Some(inbetween_with(source, &clean, &keys, &|v, k| {
                l.predict_for(v, k, Some(subject))
            })?)
        }
        None => None,
    };
    let clean = Reference::new(source, clean);
    let mut scores = vec![
        score_frames(source, &clean, &lerp, None, Some(&counted)),
        score_frames(source, &clean, &learned.poses, Some(&learned.contacts), Some(&counted)),
    ];
    if let Some(r) = retrieved {
        scores.push(score_frames(
            source,
            &clean,
            &r.poses,
            Some(&r.contacts),
            Some(&counted),
        ));
    }
    Ok(Some(scores))
}

pub fn run(args: &Args) -> Result<String> {
    // --model serves both tasks; by default each has its built-in model.
    let (denoiser, inbetweener, model_name) = match &args.model {
        // A blending model only cleans: the in-betweens keep the built-in model.
        Some(path) => {
            let model = MotionModel::load(path)?;
            if model.blend {
                let name = format!("{} (denoising; built-in in-betweens)", path.display());
                (model, MotionModel::built_in(Task::Inbetween)?, name)
            } else {
                (model.clone(), model, path.display().to_string())
            }
        }
        None => (
            MotionModel::built_in(Task::Denoise)?,
            MotionModel::built_in(Task::Inbetween)?,
            "built-in (denoising; in-betweens)".to_string(),
        ),
    };
    let dataset = Dataset::open(&args.data)?;
    let (sources, skipped) = load_split(&dataset, &args.split)?;
    if sources.is_empty() {
        bail!("the {} split holds no humanoid motion clip", args.split);
    }
    let options = DenoiseOptions {
        root_cutoff: args.root_cutoff,
        at_clip_rate: !args.resampled_output,
        ..DenoiseOptions::default()
    };
    let levels: Vec<(String, Option<Noise>)> = std::iter::once(("none (clean)".to_string(), None))
        .chain(Noise::LEVELS.iter().map(|n| (n.label(), Some(*n))))
        .collect();
    let mut rows = Vec::new();
    let (mut clip_seconds, mut model_seconds) = (0.0, 0.0);
    for (li, (label, level)) in levels.iter().enumerate() {
        let per_clip: Vec<(Vec<Score>, f64)> = sources
            .par_iter()
            .enumerate()
            .map(|(ci, s)| {
                run_clip(
                    &denoiser,
                    s,
                    level.as_ref(),
                    args.seed ^ ((li * 1000 + ci) as u64),
                    &options,
                )
            })
            .collect::<Result<_>>()?;
        for (ci, (_, secs)) in per_clip.iter().enumerate() {
            model_seconds += secs;
            let clip = &sources[ci];
            let duration = clip.clip.duration() - clip.clip.start();
            clip_seconds += f64::from(duration);
        }
        for (m, method) in METHODS.iter().enumerate() {
            let k = per_clip.len() as f64;
            let mut mean = Score::default();
            for (scores, _) in &per_clip {
                mean.joint_error += scores[m].joint_error / k;
                mean.jitter += scores[m].jitter / k;
                mean.skate += scores[m].skate / k;
                mean.contact_f1 += scores[m].contact_f1 / k;
                mean.contacts += scores[m].contacts;
            }
            rows.push(Row {
                level: label.clone(),
                method: method.to_string(),
                clips: per_clip.len(),
                contact_f1_pooled: mean.contacts.f1(),
                contact_counts: Counts {
                    hits: mean.contacts.hits,
                    false_alarms: mean.contacts.false_alarms,
                    misses: mean.contacts.misses,
                },
                mean,
            });
        }
    }
    let library = match &args.library {
        Some(split) => {
            let (clips, _) = load_split(&dataset, split)?;
            if clips.is_empty() {
                bail!("the library split {split} holds no humanoid motion clip");
            }
            Some(Library::new(&prepare(&clips, 0, 0, true)?))
        }
        None => None,
    };
    let methods: &[&str] = if library.is_some() {
        &["interpolate", "learned", "retrieval"]
    } else {
        &["interpolate", "learned"]
    };
    let mut inbetweens = Vec::new();
    for (protocol, spacing) in [Protocol::Keys, Protocol::Transitions]
        .into_iter()
        .flat_map(|p| SPACINGS.map(|s| (p, s)))
    {
        let per_clip: Vec<Vec<Score>> = sources
            .par_iter()
            .map(|s| inbetween_clip(&inbetweener, library.as_ref(), s, protocol, spacing))
            .collect::<Result<Vec<_>>>()?
            .into_iter()
            .flatten()
            .collect();
        for (m, method) in methods.iter().enumerate() {
            let k = per_clip.len().max(1) as f64;
            inbetweens.push(InbetweenRow {
                protocol: protocol.name(),
                spacing,
                method: method.to_string(),
                clips: per_clip.len(),
                joint_error: per_clip.iter().map(|s| s[m].joint_error).sum::<f64>() / k,
                skate: per_clip.iter().map(|s| s[m].skate).sum::<f64>() / k,
            });
        }
    }
    let report = Report {
        split: args.split.clone(),
        model: model_name,
        clips: sources.iter().map(|s| s.name.clone()).collect(),
        skipped,
        rows,
        inbetweens,
        learned_speed: clip_seconds / model_seconds.max(1e-9),
    };
    if args.json {
        return Ok(serde_json::to_string_pretty(&report)? + "\n");
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "motion denoising on {} ({} clips; model {}): means over clips",
        report.split,
        report.clips.len(),
        report.model
    );
    for (id, why) in &report.skipped {
        let _ = writeln!(out, "skipped {id}: {why}");
    }
    let _ = writeln!(
        out,
        "| noise | method | joint error (% leg) | jitter (H/s³) | skate (H/s) | contact F1 (mean of clips) | contact F1 (pooled) |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|");
    for r in &report.rows {
        let _ = writeln!(
            out,
            "| {} | {} | {:.3} | {:.1} | {:.4} | {:.3} | {:.3} |",
            r.level,
            r.method,
            100.0 * r.mean.joint_error,
            r.mean.jitter,
            r.mean.skate,
            r.mean.contact_f1,
            r.contact_f1_pooled
        );
    }
    let _ = writeln!(
        out,
        "\nin-betweens (keys: a key every N frames at 30 fps; transitions: LAFAN1's {CONTEXT} known frames, N hidden, the target; error over the hidden frames):"
    );
    let _ = writeln!(
        out,
        "| protocol | N | method | clips | joint error (% leg) | skate (H/s) |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|");
    for r in &report.inbetweens {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {:.3} | {:.4} |",
            r.protocol,
            r.spacing,
            r.method,
            r.clips,
            100.0 * r.joint_error,
            r.skate
        );
    }
    let _ = writeln!(
        out,
        "learned model: {:.0}x real time (clip seconds per second of compute, decoding included)",
        report.learned_speed
    );
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_transitions_lay_out_known_and_scored_frames() {
        // A key every 3 frames at 30 fps of a 60 fps clip: every 6th frame.
        let (keys, counted) = layout(Protocol::Keys, 20, 2.0, 3);
        assert_eq!(keys, [0, 6, 12, 18]);
        assert!(counted[1] && counted[17] && !counted[6] && !counted[19]);
        // Transitions of 2 frames at 30 fps in a 30 fps clip: 10 known, 2 hidden, 10 known, ...
        let (keys, counted) = layout(Protocol::Transitions, 30, 1.0, 2);
        let expected: Vec<usize> = (0..10).chain(12..22).chain(24..30).collect();
        assert_eq!(keys, expected);
        let scored: Vec<usize> = (0..30).filter(|&f| counted[f]).collect();
        assert_eq!(scored, [10, 11, 22, 23]);
        // At 120 fps the context keys are 4 frames apart; everything between the last context
        // key and the target is scored, nothing else.
        let (keys, counted) = layout(Protocol::Transitions, 100, 4.0, 5);
        assert_eq!(&keys[..10], &[0, 4, 8, 12, 16, 20, 24, 28, 32, 36]);
        assert_eq!(keys[10], 36 + 6 * 4);
        assert_eq!(counted.iter().filter(|&&c| c).count(), 23);
        assert!(!counted[35] && counted[37] && counted[59] && !counted[60]);
    }
}
