//! `rigml inbetween CLIP --keys 0,30,60 -o OUT`: keep a clip's key frames and fill the frames
//! between them, by interpolation (every joint slerped between neighbouring keys), by the
//! learned motion model or by retrieval from a motion library (both in IK-Rig space, decoded
//! onto the clip's skeleton).

use anyhow::{anyhow, bail, Context, Result};
use rigml_anim::cleanup::{contacts, Frames, Leg};
use rigml_anim::humanoid::skeleton_label;
use rigml_anim::retarget::rig_for;
use rigml_core::Transform;
use rigml_eval::retarget_metrics::{foot_skate, jitter};
use rigml_io::{Format, SaveOptions};
use rigml_motion::data::Source;
use rigml_motion::inbetween::{check_keys, inbetween, inbetween_with, interpolate_keys};
use rigml_motion::MotionModel;
use serde::Serialize;
use std::path::PathBuf;

/// One `--keys` item: a frame `N`, or every frame from `A` to `B` (`A-B`, `A ≤ B`).
fn key_span(text: &str) -> Result<(usize, usize), String> {
    let frame = |t: &str| {
        t.trim()
            .parse::<usize>()
            .map_err(|_| format!("{t:?} is not a frame index (a whole number from 0)"))
    };
    match text.split_once('-') {
        Some((a, b)) => {
            let (a, b) = (frame(a)?, frame(b)?);
            if a > b {
                return Err(format!("the run {text:?} ends before it starts"));
            }
            Ok((a, b))
        }
        None => frame(text).map(|k| (k, k)),
    }
}

/// Keep a clip's key frames and fill the frames between them.
#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  rigml inbetween walk.bvh --every 30 -o walk-keys30.bvh
  rigml inbetween walk.bvh --keys 0,40,80,120 --method learned -o walk-learned.bvh --json
  rigml inbetween walk.bvh --keys 0-39,100-139 --method learned -o walk-transition.bvh
                    (frames 0–39 and 100–139 kept; the transition 40–99 filled, the model
                     reading the motion of the kept runs as well as their poses)
  rigml inbetween blocking.bvh --every 30 --method retrieval --library mocap/ -o filled.bvh
                    (each gap filled from the stretch of captured motion in mocap/ that best
                     matches its keys, bent to meet them)

Key frames are indices into the clip's own frames (0 = its first); A-B keeps every frame from A
to B. Frames before the first key and after the last hold that key. interpolate (the default):
every joint's rotation slerped and translation lerped between neighbouring keys. learned
(humanoids): the motion model fills the frames in IK-Rig space at 30 fps and the result is
decoded onto the clip's skeleton, key frames kept exactly (where several keys fall on one 30 fps
frame the model reads the first). retrieval (humanoids): the same path, but every gap is filled
from the library's clips: the stretches whose ends look like the gap's keys (and whose root
travels as the keys' does) are bent onto the keys and averaged; as good as the library is close
to the motion. Measured against interpolation with `rigml eval-motion` (docs/model-card-motion.md).")]
pub struct Args {
    /// The clip: a BVH file, or any file with a skeleton and a clip (the first is used).
    pub input: PathBuf,
    /// Where to write the result (.bvh keeps the input's rotation orders; .glb, .gltf).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Key frames, comma-separated and increasing; `A-B` keeps every frame from A to B.
    #[arg(
        long,
        value_delimiter = ',',
        value_parser = key_span,
        conflicts_with = "every",
        required_unless_present = "every"
    )]
    pub keys: Vec<(usize, usize)>,
    /// A key every N frames from frame 0 (and the last frame).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub every: Option<u32>,
    /// How to fill the frames between keys.
    #[arg(long, default_value = "interpolate", value_parser = ["interpolate", "learned", "retrieval"])]
    pub method: String,
    /// With --method retrieval: the motion library, clip files (BVH, FBX, glTF) or folders of
    /// them; every humanoid clip in them is searched.
    #[arg(long, value_name = "PATH", num_args = 1.., required_if_eq("method", "retrieval"))]
    pub library: Vec<PathBuf>,
    /// With --method learned: a motion model file instead of the built-in in-between model.
    #[arg(long, value_name = "FILE")]
    pub model: Option<PathBuf>,
    /// Humanoid role overrides, one `role joint-name` per line (for --method learned).
    #[arg(long, value_name = "FILE")]
    pub map: Option<PathBuf>,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Replace OUTPUT if it exists.
    #[arg(long)]
    pub force: bool,
}

#[derive(Serialize)]
struct Report {
    input: String,
    output: String,
    method: String,
    frames: usize,
    fps: f32,
    keys: Vec<usize>,
    /// Frames filled (neither keys nor held before the first / after the last key).
    filled: usize,
    /// With --method retrieval: clips in the library (mirrors not counted) and those left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    library_clips: Option<usize>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    library_skipped: Vec<(String, String)>,
    /// METRICS.md §7 jitter of every joint of the result, H/s³ (humanoids).
    jitter: Option<f64>,
    /// METRICS.md §7 foot skate of the result, each foot joint above its own floor, H/s.
    foot_skate: Option<f64>,
}

pub fn run(args: &Args) -> Result<String> {
    Format::from_path(&args.output)?;
    if !args.force && args.output.exists() {
        bail!("{}: already exists (pass --force to replace it)", args.output.display());
    }
    if args.model.is_some() && args.method != "learned" {
        bail!("--model names a motion model for --method learned");
    }
    if !args.library.is_empty() && args.method != "retrieval" {
        bail!("--library names the clips --method retrieval searches");
    }
    let input = args.input.display().to_string();
    let mut character = rigml_io::load(&args.input)?;
    let skeleton = character.skeleton.clone();
    let Some(clip) = character.clips.first().cloned() else {
        bail!("{input}: has no animation clip");
    };
    let baked = Frames::bake(&skeleton, &clip).map_err(|e| anyhow!("{input}: {e}"))?;
    let n = baked.len();
    let keys: Vec<usize> = match args.every {
        Some(every) => {
            let mut k: Vec<usize> = (0..n).step_by(every as usize).collect();
            if k.last() != Some(&(n - 1)) {
                k.push(n - 1);
            }
            k
        }
        None => args.keys.iter().flat_map(|&(a, b)| a..=b).collect(),
    };
    check_keys(&keys, n, &input)?;
    let overrides = crate::retarget::read_map(args.map.as_deref())?;
    let asset = format!("{input}: {}", skeleton_label(&skeleton));
    let info = rig_for(&skeleton, &overrides, &asset);
    let mut library_clips = None;
    let mut library_skipped = Vec::new();
    let poses: Vec<Vec<Transform>> = match args.method.as_str() {
        method @ ("learned" | "retrieval") => {
            let info = info.as_ref().map_err(|e| {
                anyhow!("{e} (--method {method} works on humanoids; pass --map FILE to name their joints)")
            })?;
            let source = Source {
                name: input.clone(),
                skeleton: skeleton.clone(),
                clip: clip.clone(),
                info: info.clone(),
            };
            if method == "learned" {
                let model = match &args.model {
                    Some(path) => MotionModel::load(path)?,
                    None => MotionModel::built_in(rigml_motion::Task::Inbetween)?,
                };
                inbetween(&model, &source, &baked.to_sampled(), &keys)?.poses
            } else {
                let (library, clips, skipped) = crate::motion_data::library(&args.library)?;
                for (name, why) in &skipped {
                    // Loading and mapping errors name the file already.
                    let what = if why.contains(name.as_str()) {
                        why.clone()
                    } else {
                        format!("{name}: {why}")
                    };
                    eprintln!("warning: motion library: left out {what}");
                }
                library_clips = Some(clips);
                library_skipped = skipped;
                inbetween_with(&source, &baked.to_sampled(), &keys, &|v, k| library.predict(v, k))?.poses
            }
        }
        _ => interpolate_keys(&baked.poses, &keys),
    };
    let result = Frames {
        fps: baked.fps,
        start: baked.start,
        poses,
    };
    if let Some(first) = character.clips.first_mut() {
        *first = result.to_clip(&clip);
    }
    let out_format = Format::from_path(&args.output)?;
    if out_format == Format::Bvh && Format::from_path(&args.input)? == Format::Bvh {
        let bytes = std::fs::read(&args.input).with_context(|| input.clone())?;
        let orders = rigml_io::bvh::parse(&bytes, &args.input)?.rotation_order;
        let text = rigml_io::bvh::to_bvh_with_orders(&character, &args.output, &orders)?;
        rigml_io::atomic::write(&args.output, text.as_bytes(), args.force)?;
    } else {
        rigml_io::save(&character, &args.output, SaveOptions { force: args.force })?;
    }
    let (jit, skate) = match &info {
        Ok(info) => {
            let h = info.hip_height;
            let positions = result.world_positions(&skeleton);
            let feet = Leg::from_humanoid(&info.map, &skeleton)
                .map(|legs| rigml_anim::cleanup::foot_tracks(&positions, &legs))
                .unwrap_or_default();
            let relative: Vec<_> = feet.iter().map(|t| contacts::floor_relative(t)).collect();
            (jitter(&positions, h, result.fps), foot_skate(&relative, h, result.fps))
        }
        Err(_) => (None, None),
    };
    let first = keys[0];
    let last = keys[keys.len() - 1];
    let report = Report {
        input: input.clone(),
        output: args.output.display().to_string(),
        method: args.method.clone(),
        frames: n,
        fps: baked.fps,
        filled: (last - first + 1) - keys.len(),
        keys,
        library_clips,
        library_skipped,
        jitter: jit,
        foot_skate: skate,
    };
    if args.json {
        return Ok(serde_json::to_string_pretty(&report)? + "\n");
    }
    let fmt = |x: Option<f64>| x.map_or_else(|| "n/a".into(), |v| format!("{v:.4}"));
    let library = report
        .library_clips
        .map_or_else(String::new, |n| format!(" from a library of {n} clips"));
    Ok(format!(
        "{input}: {} frames at {:.2} fps, {} keys ({}), {} frames filled by {}{library}\n\
         jitter {} H/s³, foot skate {} H/s (own floor)\nwrote {}\n",
        report.frames,
        report.fps,
        report.keys.len(),
        if report.keys.len() <= 12 {
            report.keys.iter().map(usize::to_string).collect::<Vec<_>>().join(",")
        } else {
            format!("{}, {}, ... {}", report.keys[0], report.keys[1], last)
        },
        report.filled,
        report.method,
        fmt(report.jitter),
        fmt(report.foot_skate),
        report.output
    ))
}
