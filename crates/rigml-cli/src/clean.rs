//! `rigml clean CLIP -o OUT`: smooth a mocap clip and remove foot skate, reporting the contacts
//! found and jitter / foot skate (METRICS.md §7) before and after.

use crate::arg_numbers::{non_negative, positive};
use anyhow::{anyhow, bail, Context, Result};
use glam::Vec3;
use rigml_anim::cleanup::{self, contacts, CleanOptions, Filter, FootskateOptions, Frames, Leg, StepLimits};
use rigml_anim::humanoid::skeleton_label;
use rigml_anim::retarget::rig_for;
use rigml_core::Skeleton;
use rigml_eval::retarget_metrics::{foot_skate, jitter};
use rigml_io::{Format, SaveOptions};
use rigml_motion::data::Source;
use rigml_motion::denoise::{denoise, DenoiseOptions};
use rigml_motion::MotionModel;
use serde::Serialize;
use std::fmt::Write;
use std::path::PathBuf;

/// The filters `--filter` can name.
pub const FILTERS: &[&str] = &["butterworth", "savgol", "one-euro", "none"];

/// Smooth a mocap clip and pin its feet during contacts (two-bone leg IK).
#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  rigml clean walk.bvh -o walk-clean.bvh
  rigml clean walk.bvh -o walk-clean.bvh --filter savgol --cutoff 8 --json
  rigml clean walk.bvh -o walk-smooth.bvh --filter one-euro --cutoff 2 --beta 1 --no-footskate
  rigml clean dance.bvh -o dance-clean.bvh --map dance-roles.txt --force
  rigml clean walk.bvh -o walk-clean.bvh --method learned
  rigml clean walk.bvh -o walk-clean.bvh --method learned --model motion.safetensors --json

Filters act on every animated joint's rotation (hemisphere-aligned quaternions, renormalised)
and translation. butterworth: zero-phase (forward-backward), cutoff in Hz (default 6);
savgol: Savitzky-Golay, cubic by default, window from --cutoff (default 6 Hz) or --window;
one-euro: the adaptive 1€ filter (causal), --cutoff is its minimum cutoff (default 2 Hz).
Foot skate is removed by pinning each ankle/toe during its contacts (height < 0.05 H above the
joint's floor within a second either side, speed over 1/15 s < 0.5 H/s, with hysteresis) and
solving hip-knee-ankle IK.
--method learned (humanoids): the motion model (docs/model-card-motion.md) reads the smoothed
clip in IK-Rig space at 30 fps and says, per feature and moment, how much of what smoothing took
away to give back (a model trained without --blend corrects the smoothed clip instead); the
result at the clip's rate is decoded back onto its own skeleton (joints outside the IK-Rig
chains, such as fingers and twist bones, keep their smoothed rotations), and foot skate is
removed as above (where the clip's feet shake hard, over 0.1 hip heights from their own 6 Hz
low-pass, at the contacts of foot tracks low-passed at 3 Hz); the contacts reported are those
found on the result, as after the filters.
The filter flags do not apply to it.")]
pub struct Args {
    /// The clip to clean: a BVH file, or any file with a skeleton and a clip (the first is cleaned).
    pub input: PathBuf,
    /// Where to write the cleaned clip (.bvh keeps the input's rotation orders; .glb, .gltf).
    #[arg(short, long)]
    pub output: PathBuf,
    /// filter: smooth with --filter and remove foot skate by threshold contacts; learned: the
    /// learned motion model (denoising and contacts in IK-Rig space; humanoids).
    #[arg(long, default_value = "filter", value_parser = ["filter", "learned"])]
    pub method: String,
    /// With --method learned: a motion model file (from rigml train-motion) instead of the
    /// built-in denoising model.
    #[arg(long, value_name = "FILE")]
    pub model: Option<PathBuf>,
    /// Smoothing filter.
    #[arg(long, default_value = "butterworth", value_parser = clap::builder::PossibleValuesParser::new(FILTERS))]
    pub filter: String,
    /// Cutoff frequency in Hz (1€: the minimum cutoff); default 6 (1€: 2).
    #[arg(long, value_name = "HZ", value_parser = positive::<f64>)]
    pub cutoff: Option<f64>,
    /// Butterworth order (default 2) or Savitzky–Golay polynomial order (default 3).
    #[arg(long, value_name = "N")]
    pub order: Option<usize>,
    /// Savitzky–Golay window in frames (odd, at least 3); overrides --cutoff.
    #[arg(long, value_name = "FRAMES")]
    pub window: Option<usize>,
    /// 1€ speed coefficient: how fast the cutoff rises with speed.
    #[arg(long, default_value_t = 1.0, value_parser = non_negative::<f64>)]
    pub beta: f64,
    /// Rotation per frame (degrees) beyond which a joint's track is filtered in separate pieces
    /// (reference frames, marker glitches): the jump is kept, not smeared.
    #[arg(long, value_name = "DEG", default_value_t = 30.0, value_parser = positive::<f32>)]
    pub max_step: f32,
    /// Lower the hips where a pinned foot is out of the leg's reach (docs/ALGORITHMS.md §8 step 4).
    #[arg(long)]
    pub lower_hips: bool,
    /// Only smooth; leave the feet alone.
    #[arg(long)]
    pub no_footskate: bool,
    /// Humanoid role overrides, one `role joint-name` per line (e.g. `leftFoot LeftAnkle`).
    #[arg(long, value_name = "FILE")]
    pub map: Option<PathBuf>,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Replace OUTPUT if it exists.
    #[arg(long)]
    pub force: bool,
}

/// The filter the arguments describe, `None` for `--filter none`.
fn filter(args: &Args, fps: f64) -> Result<Option<Filter>> {
    let f = match args.filter.as_str() {
        "none" => return Ok(None),
        "butterworth" => Filter::Butterworth {
            cutoff: args.cutoff.unwrap_or(6.0),
            order: args.order.unwrap_or(2),
        },
        "savgol" => {
            let order = args.order.unwrap_or(3);
            match args.window {
                Some(w) if w % 2 == 1 && w >= 3 => Filter::SavitzkyGolay {
                    half_window: w / 2,
                    order,
                },
                Some(w) => bail!("--window must be odd and at least 3, got {w}"),
                None => Filter::savgol_for_cutoff(args.cutoff.unwrap_or(6.0), order, fps)?,
            }
        }
        "one-euro" => Filter::one_euro(args.cutoff.unwrap_or(2.0), args.beta),
        other => bail!("unknown filter {other:?} (choose one of {})", FILTERS.join(", ")),
    };
    f.validate(fps)?;
    Ok(Some(f))
}

/// Jitter and foot skate of one version of the motion.
#[derive(Serialize, Clone, Copy)]
struct Measures {
    /// METRICS.md §7 jitter over all joints, H/s³.
    jitter: Option<f64>,
    /// METRICS.md §7 foot skate (ankle and toe joints, ground y = 0), H/s.
    foot_skate: Option<f64>,
    /// The same with each foot joint's height taken above its own floor level, H/s.
    foot_skate_floor: Option<f64>,
}

fn measure(skeleton: &Skeleton, frames: &Frames, legs: &[Leg], h: f32) -> Measures {
    let positions = frames.world_positions(skeleton);
    let feet = cleanup::foot_tracks(&positions, legs);
    let relative: Vec<Vec<Vec3>> = feet.iter().map(|t| contacts::floor_relative(t)).collect();
    Measures {
        jitter: jitter(&positions, h, frames.fps),
        foot_skate: (!feet.is_empty()).then(|| foot_skate(&feet, h, frames.fps)).flatten(),
        foot_skate_floor: (!feet.is_empty())
            .then(|| foot_skate(&relative, h, frames.fps))
            .flatten(),
    }
}

#[derive(Serialize)]
struct JointContacts {
    joint: String,
    /// `[start, end)` frame ranges.
    intervals: Vec<[usize; 2]>,
    frames: usize,
}

#[derive(Serialize)]
struct LegJson {
    leg: String,
    contacts: Vec<JointContacts>,
    adjusted_frames: usize,
    /// Largest ankle goal left unreached (out of reach), in hip heights.
    max_residual: f32,
}

#[derive(Serialize)]
struct Report {
    input: String,
    output: String,
    clip: String,
    frames: usize,
    fps: f32,
    hip_height: f32,
    filter: String,
    footskate: bool,
    /// Largest lowering of the hips that kept pinned feet reachable, in hip heights.
    hip_drop: f32,
    /// Discontinuities the filter did not smooth across: `[joint name or "(pose)", frame]`.
    cuts: Vec<(String, usize)>,
    legs: Vec<LegJson>,
    before: Measures,
    after: Measures,
}

fn describe(filter: &Option<Filter>) -> String {
    match filter {
        None => "none".into(),
        Some(Filter::Butterworth { cutoff, order }) => format!("butterworth order {order}, {cutoff} Hz, zero phase"),
        Some(Filter::SavitzkyGolay { half_window, order }) => {
            format!("savgol order {order}, window {} frames", 2 * half_window + 1)
        }
        Some(Filter::OneEuro {
            min_cutoff,
            beta,
            d_cutoff,
        }) => format!("one-euro min cutoff {min_cutoff} Hz, beta {beta}, derivative cutoff {d_cutoff} Hz"),
    }
}

/// The legs and hip height `H` of a humanoid skeleton (with `--map` overrides).
fn legs_of(args: &Args, skeleton: &Skeleton) -> Result<(Vec<Leg>, f32)> {
    let overrides = crate::retarget::read_map(args.map.as_deref())?;
    let asset = format!("{}: {}", args.input.display(), skeleton_label(skeleton));
    let info = rig_for(skeleton, &overrides, &asset)
        .map_err(|e| anyhow!("{e} (pass --map FILE to name the leg joints, or --no-footskate)"))?;
    let legs = Leg::from_humanoid(&info.map, skeleton).map_err(|e| anyhow!("{}: {e}", args.input.display()))?;
    Ok((legs, info.hip_height))
}

/// Write the cleaned character: BVH with the input's own rotation orders when both are BVH,
/// otherwise whatever the output extension names.
fn save(args: &Args, character: &rigml_core::Character) -> Result<()> {
    let out_format = Format::from_path(&args.output)?;
    let in_format = Format::from_path(&args.input)?;
    if out_format == Format::Bvh && in_format == Format::Bvh {
        let bytes = std::fs::read(&args.input).with_context(|| args.input.display().to_string())?;
        let orders = rigml_io::bvh::parse(&bytes, &args.input)?.rotation_order;
        let text = rigml_io::bvh::to_bvh_with_orders(character, &args.output, &orders)?;
        rigml_io::atomic::write(&args.output, text.as_bytes(), args.force)?;
    } else {
        rigml_io::save(character, &args.output, SaveOptions { force: args.force })?;
    }
    Ok(())
}

fn intervals_text(intervals: &[std::ops::Range<usize>]) -> String {
    intervals
        .iter()
        .map(|r| format!("{}-{}", r.start, r.end))
        .collect::<Vec<_>>()
        .join(" ")
}

fn fmt_measure(x: Option<f64>) -> String {
    x.map_or_else(|| "n/a".into(), |v| format!("{v:.4}"))
}

/// Load, clean, save; returns the report.
pub fn run(args: &Args) -> Result<String> {
    // Check the output format and clobbering before the work.
    Format::from_path(&args.output)?;
    if !args.force && args.output.exists() {
        bail!("{}: already exists (pass --force to replace it)", args.output.display());
    }
    let mut character = rigml_io::load(&args.input)?;
    let input = args.input.display().to_string();
    let skeleton = character.skeleton.clone();
    let Some(clip) = character.clips.first().cloned() else {
        bail!("{input}: has no animation clip to clean");
    };
    if args.method == "learned" {
        return run_learned(args, &mut character, clip);
    }
    if args.model.is_some() {
        bail!("--model names a motion model for --method learned");
    }
    let (legs, h) = if args.no_footskate {
        // A humanoid still gives H and the feet to measure; anything else is scaled by its size.
        legs_of(args, &skeleton).unwrap_or_else(|_| (Vec::new(), cleanup::rest_size(&skeleton)))
    } else {
        legs_of(args, &skeleton)?
    };
    let fps = Frames::bake(&skeleton, &clip).map_err(|e| anyhow!("{input}: {e}"))?.fps;
    let options = CleanOptions {
        filter: filter(args, f64::from(fps)).map_err(|e| anyhow!("{input}: {e}"))?,
        limits: StepLimits {
            max_rotation_degrees: args.max_step,
            ..StepLimits::default()
        },
        footskate: (!args.no_footskate).then(|| FootskateOptions {
            lower_hips: args.lower_hips,
            ..FootskateOptions::default()
        }),
    };
    let cleaned = cleanup::clean(&skeleton, &clip, &legs, h, &options).map_err(|e| anyhow!("{input}: {e}"))?;
    let before = measure(&skeleton, &cleaned.original, &legs, h);
    let after = measure(&skeleton, &cleaned.frames, &legs, h);
    if let Some(first) = character.clips.first_mut() {
        *first = cleaned.clip.clone();
    }
    save(args, &character)?;

    let report = Report {
        input: input.clone(),
        output: args.output.display().to_string(),
        clip: clip.name.clone(),
        frames: cleaned.frames.len(),
        fps,
        hip_height: h,
        filter: describe(&options.filter),
        footskate: options.footskate.is_some(),
        hip_drop: if h > 0.0 {
            cleaned.hip_drop / h
        } else {
            cleaned.hip_drop
        },
        cuts: cleaned
            .cuts
            .iter()
            .map(|c| {
                let name = c
                    .joint
                    .and_then(|j| skeleton.names.get(j))
                    .map_or("(pose)", String::as_str);
                (name.to_string(), c.frame)
            })
            .collect(),
        legs: cleaned
            .legs
            .iter()
            .map(|l| LegJson {
                leg: l.leg.clone(),
                contacts: l
                    .contacts
                    .iter()
                    .map(|c| JointContacts {
                        joint: c.name.clone(),
                        intervals: c.intervals.iter().map(|r| [r.start, r.end]).collect(),
                        frames: c.frames(),
                    })
                    .collect(),
                adjusted_frames: l.adjusted_frames,
                max_residual: if h > 0.0 { l.max_residual / h } else { l.max_residual },
            })
            .collect(),
        before,
        after,
    };
    if args.json {
        return Ok(serde_json::to_string_pretty(&report)? + "\n");
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{input}: clip {:?}, {} frames at {fps:.2} fps, {} = {h:.3}",
        report.clip,
        report.frames,
        if legs.is_empty() {
            "size (not a humanoid: no hip height)"
        } else {
            "hip height H"
        }
    );
    let _ = writeln!(out, "filter: {}", report.filter);
    if !report.cuts.is_empty() {
        const SHOWN: usize = 8;
        let listed: Vec<String> = report
            .cuts
            .iter()
            .take(SHOWN)
            .map(|(j, f)| format!("{j}@{f}"))
            .collect();
        let more = report.cuts.len().saturating_sub(SHOWN);
        let _ = writeln!(
            out,
            "kept {} jumps unsmoothed (joint@frame; over {}° per frame, or the whole pose): {}{}",
            report.cuts.len(),
            args.max_step,
            listed.join(" "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        );
    }
    if options.footskate.is_some() {
        let _ = writeln!(out, "contacts (frame ranges, end exclusive):");
        for leg in &cleaned.legs {
            for c in &leg.contacts {
                let _ = writeln!(
                    out,
                    "  {:<5} {:<14} {:>3} contacts, {:>5} frames: {}",
                    leg.leg,
                    c.name,
                    c.intervals.len(),
                    c.frames(),
                    intervals_text(&c.intervals)
                );
            }
            let _ = writeln!(
                out,
                "  {:<5} {} frames adjusted, largest unreached ankle goal {:.4} H",
                leg.leg,
                leg.adjusted_frames,
                if h > 0.0 {
                    leg.max_residual / h
                } else {
                    leg.max_residual
                }
            );
        }
    }
    if args.lower_hips && options.footskate.is_some() {
        let _ = writeln!(
            out,
            "hips lowered by up to {:.4} H to keep pinned feet in reach",
            report.hip_drop
        );
    }
    write_measures(&mut out, &before, &after);
    let _ = writeln!(out, "wrote {}", args.output.display());
    Ok(out)
}

/// The before/after table of jitter and foot skate both methods print.
fn write_measures(out: &mut String, before: &Measures, after: &Measures) {
    let _ = writeln!(out, "                              before -> after");
    for (label, b, a) in [
        ("jitter (H/s³)                ", before.jitter, after.jitter),
        ("foot skate (H/s, ground y=0) ", before.foot_skate, after.foot_skate),
        (
            "foot skate (H/s, own floor)  ",
            before.foot_skate_floor,
            after.foot_skate_floor,
        ),
    ] {
        let _ = writeln!(out, "{label} {} -> {}", fmt_measure(b), fmt_measure(a));
    }
}

#[derive(Serialize)]
struct LearnedReport {
    input: String,
    output: String,
    clip: String,
    frames: usize,
    fps: f32,
    hip_height: f32,
    method: String,
    model: String,
    footskate: bool,
    /// Contacts the model found: ankles and toes.
    contacts: Vec<JointContacts>,
    before: Measures,
    after: Measures,
}

/// `--method learned`: denoise in IK-Rig space with the motion model, decode onto the clip's
/// own skeleton, remove foot skate as the filters do, save, report.
fn run_learned(args: &Args, character: &mut rigml_core::Character, clip: rigml_core::Clip) -> Result<String> {
    let input = args.input.display().to_string();
    if args.cutoff.is_some() || args.order.is_some() || args.window.is_some() || args.lower_hips {
        bail!("--cutoff, --order, --window and --lower-hips belong to --method filter");
    }
    let skeleton = character.skeleton.clone();
    let overrides = crate::retarget::read_map(args.map.as_deref())?;
    let asset = format!("{input}: {}", skeleton_label(&skeleton));
    let info = rig_for(&skeleton, &overrides, &asset)
        .map_err(|e| anyhow!("{e} (--method learned works on humanoids; pass --map FILE to name their joints)"))?;
    let legs = Leg::from_humanoid(&info.map, &skeleton).map_err(|e| anyhow!("{input}: {e}"))?;
    let (model, model_name) = match &args.model {
        Some(path) => (MotionModel::load(path)?, path.display().to_string()),
        None => (
            MotionModel::built_in(rigml_motion::Task::Denoise)?,
            "built-in (denoising)".to_string(),
        ),
    };
    let h = info.hip_height;
    let source = Source {
        name: input.clone(),
        skeleton: skeleton.clone(),
        clip: clip.clone(),
        info,
    };
    let frames = source.frames()?;
    let options = DenoiseOptions {
        remove_skate: !args.no_footskate,
        ..DenoiseOptions::default()
    };
    let out = denoise(&model, &source, &frames, &options)?;
    let before = Frames::from_sampled(&frames);
    let after = Frames {
        poses: out.poses.clone(),
        ..before.clone()
    };
    if let Some(first) = character.clips.first_mut() {
        *first = after.to_clip(&clip);
    }
    save(args, character)?;
    let names = ["left ankle", "left toes", "right ankle", "right toes"];
    let contacts = names
        .iter()
        .enumerate()
        .map(|(slot, name)| {
            let flags: Vec<bool> = out.contacts.iter().map(|c| c[slot]).collect();
            let intervals = contacts::intervals(&flags);
            JointContacts {
                joint: name.to_string(),
                intervals: intervals.iter().map(|r| [r.start, r.end]).collect(),
                frames: flags.iter().filter(|&&c| c).count(),
            }
        })
        .collect();
    let report = LearnedReport {
        input: input.clone(),
        output: args.output.display().to_string(),
        clip: clip.name.clone(),
        frames: out.poses.len(),
        fps: frames.fps,
        hip_height: h,
        method: "learned".into(),
        model: model_name,
        footskate: !args.no_footskate,
        contacts,
        before: measure(&skeleton, &before, &legs, h),
        after: measure(&skeleton, &after, &legs, h),
    };
    if args.json {
        return Ok(serde_json::to_string_pretty(&report)? + "\n");
    }
    let mut text = String::new();
    let _ = writeln!(
        text,
        "{input}: clip {:?}, {} frames at {:.2} fps, hip height H = {h:.3}",
        report.clip, report.frames, report.fps
    );
    let _ = writeln!(
        text,
        "method: learned motion model ({}), feet {}",
        report.model,
        if report.footskate {
            "pinned with leg IK where the result's contacts are"
        } else {
            "not pinned"
        }
    );
    let _ = writeln!(text, "contacts found on the result (frame ranges, end exclusive):");
    for c in &report.contacts {
        let ranges: Vec<std::ops::Range<usize>> = c.intervals.iter().map(|r| r[0]..r[1]).collect();
        let _ = writeln!(
            text,
            "  {:<12} {:>3} contacts, {:>5} frames: {}",
            c.joint,
            c.intervals.len(),
            c.frames,
            intervals_text(&ranges)
        );
    }
    write_measures(&mut text, &report.before, &report.after);
    let _ = writeln!(text, "wrote {}", args.output.display());
    Ok(text)
}
