//! `rigml rig-seq SEQ -o OUT.glb`: a mesh sequence becomes an animator's rig (issue 33): the
//! anchor frame is rigged once (named skeleton, one skin, as `rigml rig`), then every frame's
//! joint rotations (and the body root's translation) are solved so that the skinned anchor
//! reproduces the frame (rigml-seq's pose fitting), and written as one clip with one key per
//! frame.

use crate::arg_numbers::non_negative;
use crate::rig::{RigChoice, MOTION};
use crate::seq_input::{compare_with_truth, BakeArgs, Input};
use anyhow::{anyhow, bail, Context, Result};
use glam::{Mat4, Vec3};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use rigml::Controls;
use rigml_core::{Channel, ChannelValues, Clip, Interpolation, Mesh, Transform};
use rigml_eval::bone_match::BoneMatch;
use rigml_io::{Format, SaveOptions};
use rigml_seq::pose_fit::{FitOptions, FittedPose, PoseFitter, Rigid, WeightOptions};
use rigml_seq::Normalisation;
use rigml_seq::{FrameSource, SeqError};
use rigml_skin::SolveOptions;
use serde_json::{json, Value};
use std::fmt::Write;
use std::path::PathBuf;
use std::time::Instant;

mod anchor;
mod motion;

/// Rig a mesh sequence: named skeleton and one skin on the anchor frame, a clip that replays it.
#[derive(clap::Args)]
#[command(after_help = "\
SEQ is a folder of OBJ frames with one topology (frame files in natural order; a reference.obj
beside them is ignored), an Alembic (Ogawa) mesh cache .abc, or a skinned .glb/.gltf/.fbx whose
clip is baked to frames with its own skin (its own rig is then used only by --truth).

The anchor frame is rigged as `rigml rig` rigs a mesh: the skeleton is placed by --template and
skinned once by --skin. The placer reads limbs from the shape, so up to --anchor-tries frames
(the largest-area frame, then frames far apart in pose) are each rigged and fitted once, and
another frame replaces the largest only when its rig replays the sequence clearly closer (a cat
curled up in its largest frame, front legs together); --anchor names one, --rest rigs a rest mesh
given beside the frames instead (the same vertices in the same order, checked by the frames'
edge lengths). A standing humanoid (feet down, arms out) gets Mixamo names and can be
retargeted; when the largest frame is not one (a walk's stride), --template humanoid rigs the
largest frame that is (a capture's T-pose). Other rigs' joints then move to the
pivots the sequence turns them about (--keep-joints leaves them; a humanoid's stay, for
retargeting). Each frame is matched by posing that rig: joint rotations about the joints (the
bones keep their lengths) and a translation of the body root, by sweeps of weighted Procrustes
from the root outward. The weights are refitted to those poses --refine times (the poses after
each). Last, joints are added midway along the bones that replay the sequence worst, each kept
only when it lowers the error by more than its share (--splits). The output's mesh is the rigged
frame, its clip has one key per frame.

--template motion reads the skeleton from the motion instead of the shape: the sequence is
decomposed into --bones rigid bones (as `rigml decompose`), each pair joined where both turn
about one point, and that tree and its weights are fitted as above (no --skin). The shape
template, placed on the same frame, lends its ground root and the names of its joints that lie
near a motion joint (a quadruped's legs where it finds them); the other joints are bone_NN.
On fast gaits, where no single frame shows the legs as they move, it recovers an artist's joint
rotations closer than the shape templates do (docs/experiments/2026-11-27-rig-seq.md).

Reported: the reconstruction RMSE of the posed rig against the frames, per round and per frame
(METRICS.md §6 units: the largest frame's longest bounding-box side is 1; compare with `rigml
decompose` at as many bones, whose free bones have more freedom than a connected skeleton); the
skeleton's temporal stability (PJDD) and the temporal skinning error are 0 by construction (one
skeleton and one skin for every frame).

Examples:
  rigml rig-seq sequences/horse_gallop -o horse-rig.glb
  rigml rig-seq sequences/cat_poses --skin heat -o cat.glb --json
  rigml rig-seq Fox.glb --clip 2 -o fox.glb --truth          (joint rotations against the file's)
  rigml rig-seq walk_frames/ --template humanoid -o walker.glb
  rigml rig-seq Wolf.glb --clip 3 --template motion -o wolf.glb    (skeleton from the motion)
  rigml retarget walker.glb --to Ranger.glb -o ranger-walk.glb")]
pub struct Args {
    /// Folder of OBJ frames, an Alembic mesh cache (.abc), or a skinned animation (.glb, .gltf,
    /// .fbx).
    pub input: PathBuf,
    /// The rigged, animated character to write (.glb, .gltf or .fbx).
    #[arg(short, long)]
    pub output: PathBuf,
    /// How the anchor frame is rigged (as `rigml rig` rigs a mesh).
    #[command(flatten)]
    pub choice: RigChoice,
    /// Influence cap per vertex.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..))]
    pub max_influences: u16,
    /// Leave out the ground root (see `rigml rig --help`); the body root then carries the motion
    /// either way.
    #[arg(long)]
    pub no_ground_root: bool,
    /// Most fitting sweeps over the joints per frame.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u16).range(1..=10_000))]
    pub sweeps: u16,
    /// Most Levenberg–Marquardt steps over all joints at once after each frame's sweeps.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(0..=1000))]
    pub joint_steps: u16,
    /// The frame to rig (default: the frame of largest area, or a frame tried by
    /// --anchor-tries whose rig replays the sequence clearly closer; with --template humanoid,
    /// the largest that is a standing humanoid when that one is not).
    #[arg(long, value_name = "FRAME", conflicts_with = "rest")]
    pub anchor: Option<usize>,
    /// Frames tried as the anchor when none is given: each is rigged and fitted once (the first
    /// placing of the joints, on every frame of a sequence of up to 16, else on 16 spread over
    /// it with the tried ones among them, more when more than 14 are tried); the largest-area
    /// frame is tried first and kept unless another frame's rig replays them clearly closer
    /// (under 2/3 of its error); the others are each the frame farthest in pose from those
    /// already tried. 1 rigs the largest-area frame.
    /// Not with --template humanoid, nor with detect when the largest frame is a standing
    /// humanoid (rigged as one, for retargeting). Refused with --anchor or --rest, which say
    /// what to rig.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=64),
          conflicts_with_all = ["anchor", "rest"])]
    pub anchor_tries: u16,
    /// Rig this mesh instead of a frame: the same vertices in a rest pose (a capture's T-pose, a
    /// sequence's reference.obj); every frame is then fitted from it.
    #[arg(long, value_name = "MESH", conflicts_with = "truth")]
    pub rest: Option<PathBuf>,
    /// Rounds of refitting the skin weights to the fitted poses of every frame (then the poses
    /// to the new weights), after each placing of the joints (--pivot-rounds); 0 keeps the
    /// anchor's weights from --skin as they are.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(0..=100))]
    pub refine: u16,
    /// Pull of refitted weights towards the --skin weights (relative to each vertex's data).
    #[arg(long, default_value_t = 1e-4, value_parser = non_negative::<f64>)]
    pub weight_prior: f64,
    /// Keep the joints where the template placed them (by default each joint moves to the pivot
    /// its two bones turn about in the sequence, found from a free-bone fit; a humanoid's
    /// joints always stay, for retargeting).
    #[arg(long)]
    pub keep_joints: bool,
    /// How strongly joints stay where the template placed them when moved to their pivots
    /// (per frame; unitless, as the pivot residual and the pull are both lengths squared).
    #[arg(long, default_value_t = 1e-4, value_parser = non_negative::<f64>)]
    pub pivot_pull: f64,
    /// Most times the joints are moved to their pivots, each followed by the --refine rounds:
    /// later rounds read the pivots from free bones fitted with the refitted skin, and stop once
    /// a round does not lower the error. Joints and skin improve each other: see
    /// docs/experiments/2026-11-27-rig-seq.md.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u16).range(1..=100))]
    pub pivot_rounds: u16,
    /// With --template motion: rigid bones the sequence is decomposed into, each becoming a
    /// joint (bones that end with no weight are dropped) [default: 60].
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub bones: Option<u16>,
    /// Splits tried, at most, where the rig replays the sequence worst: after the alternation of
    /// joints and weights, the bone whose vertices carry the most residual gets a joint at its
    /// middle and the alternation runs again (a split that does not lower the error is undone
    /// and the next bone tried). Of the rigs on the way, the one of least error × weighted
    /// joints is written (a joint must lower the error by more than its share). Each try costs
    /// about one more alternation; 0 keeps the template's joints. Not for humanoids (the
    /// retargeter reads the template's joints).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(0..=64))]
    pub splits: u16,
    #[command(flatten)]
    pub bake: BakeArgs,
    /// Skinned input: compare the fitted joints' motion with the file's own joints (matched one
    /// to one by motion: where each moves the vertices the file's joint weights; and again by
    /// the vertices they weight): rotation and point errors per frame, and with --json each
    /// matched pair by name.
    #[arg(long)]
    pub truth: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Replace OUTPUT if it exists.
    #[arg(long)]
    pub force: bool,
}

/// Above this edge-length spread (`rigml_seq::source::edge_length_spread`) a `--rest` mesh's
/// vertices are taken to be in another order than the frames': poses and reference meshes of the
/// manifest's sequences differ by at most 0.071 (the lion's poses), a random reordering of
/// their vertices gives 0.59 to 0.79. A reordering of a few vertices only is not caught.
const REST_ORDER_SPREAD: f64 = 0.25;

/// Refuse a `--rest` mesh whose vertices are not listed in the frames' order: rigging it would
/// fit every frame against the wrong vertices without any other sign of trouble.
fn check_rest_order(
    path: &std::path::Path,
    rest: &[Vec3],
    frame: &[Vec3],
    triangles: &[[u32; 3]],
    f: usize,
) -> Result<()> {
    match rigml_seq::source::edge_length_spread(rest, frame, triangles) {
        Some(spread) if spread > REST_ORDER_SPREAD => bail!(
            "{}: its vertices are not in the frames' order (the frames' edges change length by a median factor of {:.2} between frame {f} and this mesh; poses change them by a few per cent): re-export it with the frames' vertex order",
            path.display(),
            spread.exp()
        ),
        _ => Ok(()),
    }
}

/// Load, rig the anchor, fit every frame, save, report.
pub fn run(args: &Args) -> Result<String> {
    match Format::from_path(&args.output)? {
        Format::Glb | Format::Gltf | Format::Fbx => {}
        _ => bail!("{}: rigml rig-seq writes .glb, .gltf or .fbx", args.output.display()),
    }
    if args.output.exists() && !args.force {
        bail!("{}: already exists (use --force to replace it)", args.output.display());
    }
    if args.truth && !Input::is_skinned_file(&args.input) {
        bail!(
            "{}: --truth needs a skinned input (.glb, .gltf, .fbx)",
            args.input.display()
        );
    }
    // A humanoid keeps the template's own joints and names: carried onto the Knight's walk, its
    // own KayKit rig from the library made the walk retargeted from the fitted clip float 0.21 H
    // above the floor (crates/rigml-cli/tests/rig_seq_retarget.rs).
    let controls = Controls {
        poles: false,
        ground_root: !args.no_ground_root,
        humanoid_conventions: false,
    };
    // --template motion has no placer and no skin solver: the decomposition gives both.
    let from_motion = args.choice.template == MOTION;
    if from_motion && (args.anchor.is_some() || args.rest.is_some()) {
        bail!(
            "{}: --template motion rigs the largest-area frame (the decomposition's rest shape): \
             --anchor and --rest are for the other templates",
            args.input.display()
        );
    }
    if !from_motion && args.bones.is_some() {
        bail!(
            "{}: --bones sets the bones of --template motion; the other templates place their own joints",
            args.input.display()
        );
    }
    let bones = usize::from(args.bones.unwrap_or(motion::DEFAULT_BONES));
    let tools = if from_motion {
        None
    } else {
        Some(args.choice.tools(controls)?)
    };
    let started = Instant::now();
    let options = args.bake.options();
    let input = Input::load(&args.input, &options, false)?;
    let source = input.source();
    let in_file = |e: &dyn std::fmt::Display| anyhow!("{}: {e}", args.input.display());
    // METRICS.md §6's anchor (largest area) sets the units of every error reported.
    let (largest, largest_positions) = rigml_seq::source::anchor(source).map_err(|e| in_file(&e))?;
    let normalisation = Normalisation::of_frame(&largest_positions)
        .ok_or_else(|| in_file(&format!("anchor frame {largest} has no extent")))?;
    let frame_count = source.frame_count();
    let load_s = started.elapsed().as_secs_f64();
    let rest_mesh = match &args.rest {
        Some(path) => {
            let mesh = rigml_io::load(path)?.mesh;
            if mesh.vertex_count() != source.vertex_count() {
                bail!(
                    "{}: {} vertices, the frames of {} have {}",
                    path.display(),
                    mesh.vertex_count(),
                    args.input.display(),
                    source.vertex_count()
                );
            }
            check_rest_order(path, &mesh.positions, &largest_positions, source.triangles(), largest)?;
            Some(mesh)
        }
        None => None,
    };
    let solve_options = SolveOptions {
        max_influences: usize::from(args.max_influences),
        ..SolveOptions::default()
    };
    let fit_options = FitOptions {
        sweeps: usize::from(args.sweeps),
        joint_steps: usize::from(args.joint_steps),
        ..FitOptions::default()
    };
    let trials_started = Instant::now();
    // The frame rigged (with --rest, none: the fits start at the largest frame).
    let (anchor, anchor_rule, trials) = match (&rest_mesh, &tools) {
        (Some(_), _) => (largest, "the --rest mesh", Vec::new()),
        (None, None) => (largest, "largest area (the decomposition's rest shape)", Vec::new()),
        (None, Some((placer, solver))) => {
            let trial_tools = anchor::TrialTools {
                placer: placer.as_ref(),
                solver: solver.as_ref(),
                solve_options: &solve_options,
                fit_options: &fit_options,
                scale: normalisation.scale,
            };
            anchor::choose_anchor(args, source, largest, &trial_tools).map_err(|e| in_file(&e))?
        }
    };
    let trials_s = trials_started.elapsed().as_secs_f64();
    let anchor_positions = match &rest_mesh {
        Some(mesh) => mesh.positions.clone(),
        None if anchor == largest => largest_positions,
        None => {
            let mut positions = Vec::new();
            source.read_frame(anchor, &mut positions).map_err(|e| in_file(&e))?;
            positions
        }
    };
    let rigged_frame = rest_mesh.is_none().then_some(anchor);
    let rigged_label = match rigged_frame {
        Some(f) => format!("anchor frame {f}"),
        None => "the rest mesh".to_string(),
    };

    // The anchor frame as a mesh: a skinned input keeps its UVs and materials.
    let mesh = match (rest_mesh, input.baked()) {
        (Some(mesh), _) => mesh,
        (None, Some((character, _))) if character.mesh.vertex_count() == anchor_positions.len() => {
            let mut mesh = character.mesh.clone();
            mesh.positions = anchor_positions.clone();
            if !mesh.normals.is_empty() {
                mesh.normals = mesh.compute_normals();
            }
            mesh
        }
        (None, _) => Mesh {
            positions: anchor_positions.clone(),
            triangles: source.triangles().to_vec(),
            ..Mesh::default()
        },
    };
    let name = args
        .input
        .file_stem()
        .map_or_else(|| "sequence".to_string(), |s| s.to_string_lossy().into_owned());
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg} [{elapsed}]")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    // What made the skin, for the report.
    let skin_source = tools.as_ref().map_or("decomposition", |(_, solver)| solver.name());
    let rig_started = Instant::now();
    let rigged = match &tools {
        None => {
            // The shape template on the same frame lends its joint names and its ground root;
            // where it cannot place a skeleton, the motion rig goes without them.
            bar.set_message("placing the shape template, for names".to_string());
            let shape = crate::rig::placer_with_model("auto", controls, args.choice.skeleton_model.as_deref())?
                .place(&mesh)
                .ok();
            bar.set_message(format!("decomposing the motion into {bones} bones"));
            motion::rig(
                source,
                mesh,
                bones,
                usize::from(args.max_influences),
                &name,
                shape.as_ref(),
            )
            .map_err(|e| in_file(&e))
        }
        Some((placer, solver)) => {
            bar.set_message(format!("rigging {rigged_label} ({}, {})", placer.name(), solver.name()));
            rigml_rig::rig_with_progress(
                &name,
                mesh,
                placer.as_ref(),
                solver.as_ref(),
                &solve_options,
                &mut |_| {},
            )
            .map_err(|e| in_file(&format!("{rigged_label}: {e}")))
        }
    };
    let rigml_rig::Rigged {
        mut character,
        template,
        ..
    } = match rigged {
        Ok(r) => r,
        Err(e) => {
            bar.finish_and_clear();
            return Err(e);
        }
    };
    let rig_s = rig_started.elapsed().as_secs_f64();
    let skin = character.skin.clone().context("the rig has no skin")?;
    let fixed = rigml_rig::controls(&character.skeleton);
    let mut fitter = PoseFitter::new(&character.skeleton, &skin, &anchor_positions, &fixed).map_err(|e| in_file(&e))?;

    let fit_started = Instant::now();
    let weight_options = WeightOptions {
        max_influences: usize::from(args.max_influences),
        prior: args.weight_prior,
    };
    let rounds = usize::from(args.refine);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} frames fitted, {msg} [{elapsed}]")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_length((frame_count * (1 + rounds * usize::from(args.pivot_rounds))) as u64);
    bar.set_position(0);
    // Per frame, a connected pose near the free bones' (a third start for the first fit).
    let mut free_starts: Vec<Vec<Rigid>> = Vec::new();
    // A humanoid keeps the template's joints: the retargeter reads its proportions and mirror
    // symmetry, which pivots fitted joint by joint break (the Knight's walk, retargeted from a
    // rig with moved joints, splayed the legs sideways).
    let move_joints = !args.keep_joints && template != "humanoid";
    if move_joints {
        // Free bones first: where each joint's bone and its parent's move alike is its pivot.
        // Each later pivot round: free bones, poses, and the weight rounds again.
        let later = usize::from(args.pivot_rounds) - 1;
        bar.set_length((frame_count * (rounds + 2) * (1 + later)) as u64);
        bar.set_message("free bones, for the joints' pivots".to_string());
        let (moved, starts) = placed_at_pivots(&fitter, source, anchor, None, &fit_options, args.pivot_pull, &bar)
            .map_err(|e| in_file(&e))?;
        character.skeleton = moved.skeleton().clone();
        fitter = moved;
        free_starts = starts;
    }
    bar.set_message("poses".to_string());
    let fitted =
        fit_frames(&fitter, source, anchor, None, &free_starts, &fit_options, &bar).map_err(|e| in_file(&e))?;
    // (RMSE, max, per frame) of the latest fit; its RMSE after every round.
    let error = rmse_of(&fitter, source, &fitted, normalisation.scale).map_err(|e| in_file(&e))?;
    let mut history = vec![error.0];
    let alternation = Alternation {
        source,
        anchor,
        fit_options: &fit_options,
        weight_options: &weight_options,
        rounds,
        pivot_pull: args.pivot_pull,
        move_joints,
        scale: normalisation.scale,
        bar: &bar,
    };
    let pivot_rounds = usize::from(args.pivot_rounds);
    let (best, pivot_rounds_run) = alternation
        .run(Snapshot { fitter, fitted, error }, pivot_rounds, &mut history)
        .map_err(|e| in_file(&e))?;
    // Joints where the rig replays the sequence worst (--splits).
    let splits = if move_joints { usize::from(args.splits) } else { 0 };
    let (best, splits_kept, split_tries) = split_worst_bones(
        &alternation,
        best,
        &anchor_positions,
        splits,
        pivot_rounds,
        &mut history,
    )
    .map_err(|e| in_file(&e))?;
    let Snapshot { fitter, fitted, error } = best;
    character.skeleton = fitter.skeleton().clone();
    let skin = fitter.skin().clone();
    let joints = character.skeleton.joint_count();
    bar.finish_and_clear();
    character.skin = Some(skin.clone());
    let fit_s = fit_started.elapsed().as_secs_f64();

    // The clip: rotations of every moved joint, translations of the body roots.
    let fps = args.bake.fps.or(input.fps()).unwrap_or(24.0);
    let times: Vec<f32> = (0..frame_count).map(|f| f as f32 / fps).collect();
    let locals: Vec<Vec<Transform>> = fitted.iter().map(|p| fitter.local_pose(&p.skinning)).collect();
    let mut channels = Vec::new();
    for j in fitter.moving_joints() {
        channels.push(Channel {
            joint: j,
            interpolation: Interpolation::Linear,
            times: times.clone(),
            values: ChannelValues::Rotation(rigml_core::continuous_rotations(locals.iter().map(|l| l[j].rotation))),
        });
    }
    for j in fitter.translating_joints() {
        channels.push(Channel {
            joint: j,
            interpolation: Interpolation::Linear,
            times: times.clone(),
            values: ChannelValues::Translation(locals.iter().map(|l| l[j].translation).collect()),
        });
    }
    character.clips = vec![Clip {
        name: name.clone(),
        channels,
    }];
    character.validate().map_err(|e| in_file(&e))?;

    // Reconstruction error (METRICS.md §6): the rig posed by its own clip against the frames.
    let (rmse, max, per_frame) = error;
    let weighted = weighted_joints(&fitter);
    let truth = match (input.baked(), args.truth) {
        (Some((original, baked)), true) => {
            let moving = fitter.moving_joints();
            let recovered: Vec<Vec<Mat4>> = fitted
                .iter()
                .map(|p| moving.iter().map(|&j| p.skinning[j].to_mat4()).collect())
                .collect();
            let positions = character.skeleton.bind_positions();
            let recovered_joints: Vec<Vec3> = moving.iter().map(|&j| positions[j]).collect();
            let compare = |by_skin| {
                compare_with_truth(
                    original,
                    baked,
                    anchor,
                    &recovered,
                    &recovered_joints,
                    normalisation.scale,
                    by_skin,
                )
                .with_context(|| format!("{}: --truth", args.input.display()))
            };
            // Each matched pair by name, largest rotation error first.
            let named = |t: &BoneMatch| -> Vec<(String, String, f64)> {
                let mut pairs: Vec<(String, String, f64)> = t
                    .pairs
                    .iter()
                    .zip(&t.rotation_deg_per_pair)
                    .map(|(&(j, b), &deg)| {
                        (
                            original.skeleton.names[j].clone(),
                            character.skeleton.names[moving[b]].clone(),
                            deg,
                        )
                    })
                    .collect();
                pairs.sort_by(|a, b| b.2.total_cmp(&a.2));
                pairs
            };
            let by_motion = compare(None)?;
            let by_skin = compare(Some((&skin, moving.as_slice())))?;
            let (motion_pairs, skin_pairs) = (named(&by_motion), named(&by_skin));
            Some([(by_motion, motion_pairs), (by_skin, skin_pairs)])
        }
        _ => None,
    };
    let write_started = Instant::now();
    rigml_io::save(&character, &args.output, SaveOptions { force: args.force })
        .with_context(|| format!("writing the rig of {}", args.input.display()))?;
    let write_s = write_started.elapsed().as_secs_f64();
    let total_s = started.elapsed().as_secs_f64();
    let sweeps_mean = fitted.iter().map(|p| p.sweeps as f64).sum::<f64>() / frame_count as f64;
    if args.json {
        let mut value = json!({
            "input": args.input.display().to_string(),
            "output": args.output.display().to_string(),
            "frames": frame_count,
            "vertices": anchor_positions.len(),
            "anchor_frame": rigged_frame,
            "anchor_rule": anchor_rule,
            "largest_area_frame": largest,
            "anchor_trials": trials.iter().map(|t| match &t.rmse {
                Ok(e) => json!({"frame": t.frame, "joints": t.joints, "rmse": e}),
                Err(why) => json!({"frame": t.frame, "error": why}),
            }).collect::<Vec<_>>(),
            "template": template,
            "skin": skin_source,
            "joints": joints,
            "joint_names": character.skeleton.names,
            "weighted_joints": weighted,
            "animated_joints": fitter.moving_joints().len(),
            "rmse": rmse,
            "max_error": max,
            "rmse_per_frame": per_frame,
            "rmse_per_round": history,
            "weight_rounds": rounds,
            "pivot_rounds": pivot_rounds_run,
            "bones_split": splits_kept,
            "split_tries": split_tries.iter().map(|t| json!({
                "joint": t.joint, "rmse": t.rmse, "weighted_joints": t.weighted_joints, "lowered": t.kept,
            })).collect::<Vec<_>>(),
            "pjdd": 0.0,
            "temporal_skin_error": 0.0,
            "sweeps_mean": sweeps_mean,
            "fps": fps,
            "seconds": {
                "load": load_s,
                "anchor_trials": trials_s,
                "rig": rig_s,
                "fit": fit_s,
                "write": write_s,
                "total": total_s,
            },
        });
        if let (Some([(t, per_joint), (s, skin_pairs)]), Some(obj)) = (&truth, value.as_object_mut()) {
            let listed = |pairs: &[(String, String, f64)]| -> Vec<Value> {
                pairs
                    .iter()
                    .map(|(joint, fitted, deg)| json!({"joint": joint, "fitted": fitted, "rotation_deg": deg}))
                    .collect()
            };
            obj.insert(
                "truth".into(),
                json!({
                    "joints_compared": t.joints,
                    "fitted_joints": t.bones,
                    "matched": t.pairs.len(),
                    "point_error_mean": t.point_error_mean,
                    "rotation_deg_mean": t.rotation_deg_mean,
                    "rotation_deg_median": t.rotation_deg_median,
                    "joint_position_error_mean": t.joint_position_error_mean,
                    "per_joint": listed(per_joint),
                    // The same measures with joints matched by the vertices they weight.
                    "by_skin": {
                        "matched": s.pairs.len(),
                        "point_error_mean": s.point_error_mean,
                        "rotation_deg_mean": s.rotation_deg_mean,
                        "rotation_deg_median": s.rotation_deg_median,
                        "joint_position_error_mean": s.joint_position_error_mean,
                        "per_joint": listed(skin_pairs),
                    },
                }),
            );
        }
        return Ok(serde_json::to_string_pretty(&value)? + "\n");
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {frame_count} frames × {} vertices, rigged {rigged_label} ({anchor_rule})",
        args.input.display(),
        anchor_positions.len()
    );
    if !trials.is_empty() {
        let tried: Vec<String> = trials
            .iter()
            .map(|t| match &t.rmse {
                Ok(e) => format!("{} ({} joints, {e:.2e})", t.frame, t.joints),
                Err(_) => format!("{} (could not be rigged)", t.frame),
            })
            .collect();
        let _ = writeln!(
            out,
            "  anchor: frames tried (first-fit RMSE): {}, in {trials_s:.2} s",
            tried.join(", ")
        );
    }
    let _ = writeln!(
        out,
        "  rig: {joints} joints ({template}, {weighted} weighted), {skin_source} skin, in {rig_s:.2} s"
    );
    let _ = writeln!(
        out,
        "  fit: {} joints animated, {:.1} sweeps per frame: RMSE {rmse:.3e}, max {max:.3e} (normalised), \
         {fit_s:.2} s; skeleton and skin fixed over frames (PJDD 0, temporal skin error 0)",
        fitter.moving_joints().len(),
        sweeps_mean
    );
    if let Some([(t, _), (by_skin, _)]) = &truth {
        let _ = writeln!(
            out,
            "  truth: {} weighted joints vs {} fitted, {} matched: rotation {:.2}° mean ({:.2}° median), \
             point error {:.3e}, joint positions {:.3e} (normalised)",
            t.joints,
            t.bones,
            t.pairs.len(),
            t.rotation_deg_mean,
            t.rotation_deg_median,
            t.point_error_mean,
            t.joint_position_error_mean.unwrap_or(f64::NAN)
        );
        let _ = writeln!(
            out,
            "  truth, joints matched by the vertices they weight: rotation {:.2}° mean ({:.2}° median), \
             point error {:.3e}, joint positions {:.3e}",
            by_skin.rotation_deg_mean,
            by_skin.rotation_deg_median,
            by_skin.point_error_mean,
            by_skin.joint_position_error_mean.unwrap_or(f64::NAN)
        );
    }
    let _ = writeln!(out, "wrote {} in {total_s:.2} s", args.output.display());
    Ok(out)
}

/// A state of `rig-seq`'s alternation of joints and weights, kept while it is the best so far
/// (the fitter holds that state's skeleton and skin).
#[derive(Clone)]
struct Snapshot {
    fitter: PoseFitter,
    fitted: Vec<FittedPose>,
    /// `(RMSE, max, RMSE per frame)`, as `rmse_of` gives them.
    error: (f64, f64, Vec<f64>),
}

/// Below this length (a fraction of the largest frame's longest side) a bone is not split.
const SPLIT_MIN_LENGTH: f32 = 0.02;

/// What one alternation of joints and weights needs besides the rig it starts from.
struct Alternation<'a> {
    source: &'a dyn FrameSource,
    anchor: usize,
    fit_options: &'a FitOptions,
    weight_options: &'a WeightOptions,
    /// Weight rounds after each placing of the joints.
    rounds: usize,
    pivot_pull: f64,
    /// Whether joints move to their pivots (not a humanoid's, not with --keep-joints).
    move_joints: bool,
    scale: f32,
    bar: &'a ProgressBar,
}

impl Alternation<'_> {
    /// From `start` (a rig and its fit of every frame): up to `pivot_rounds` rounds, each the
    /// joints moved to their pivots (not in the first round, whose joints were just placed)
    /// and the weight rounds, stopping once a whole round does not lower the error. Returns
    /// the rig of the lowest error seen (the alternation is not monotone to the last digit)
    /// and the rounds run; every round's RMSE is pushed onto `history`.
    fn run(&self, start: Snapshot, pivot_rounds: usize, history: &mut Vec<f64>) -> Result<(Snapshot, usize), SeqError> {
        let (source, anchor, bar) = (self.source, self.anchor, self.bar);
        let Snapshot {
            mut fitter,
            mut fitted,
            mut error,
        } = start;
        let mut best: Option<Snapshot> = None;
        let mut rounds_run = 0;
        for pivot_round in 0..pivot_rounds {
            if best.as_ref().is_some_and(|b| error.0 >= b.error.0) {
                break;
            }
            best = Some(Snapshot {
                fitter: fitter.clone(),
                fitted: fitted.clone(),
                error: error.clone(),
            });
            rounds_run += 1;
            if pivot_round > 0 && self.move_joints {
                // The refitted skin makes the free bones' motion cleaner: pivots again from it.
                bar.set_message(format!("pivots, round {} of {pivot_rounds}", pivot_round + 1));
                let (moved, starts) = placed_at_pivots(
                    &fitter,
                    source,
                    anchor,
                    Some(&fitted),
                    self.fit_options,
                    self.pivot_pull,
                    bar,
                )?;
                fitter = moved;
                let starts = unfitted_starts(starts);
                fitted = fit_frames(&fitter, source, anchor, Some(&starts), &[], self.fit_options, bar)?;
                error = rmse_of(&fitter, source, &fitted, self.scale)?;
                history.push(error.0);
            }
            for round in 0..self.rounds {
                bar.set_message(format!("weights and poses, round {} of {}", round + 1, self.rounds));
                let poses: Vec<Vec<Rigid>> = fitted.iter().map(|p| p.skinning.clone()).collect();
                let (_, next_fitter) = fitter.reweighted(source, &poses, self.weight_options)?;
                fitter = next_fitter;
                fitted = fit_frames(&fitter, source, anchor, Some(&fitted), &[], self.fit_options, bar)?;
                error = rmse_of(&fitter, source, &fitted, self.scale)?;
                history.push(error.0);
            }
        }
        let last = Snapshot { fitter, fitted, error };
        let kept = match best {
            Some(b) if b.error.0 < last.error.0 => b,
            _ => last,
        };
        Ok((kept, rounds_run))
    }
}

/// Up to `tries` bones split, one at a time, each where the latest kept rig's vertices carry the
/// most residual ([`rigml_seq::split::worst_bone`]), the alternation run again after each. A
/// split that lowers the error is kept and the next starts from it; one that does not is
/// undone and that bone is not tried again from the same rig. Of the rigs kept along the way,
/// the one of least error × weighted joints is returned (each joint must pay its share of the
/// error: the product falls only when a joint lowers the error by more than 1 / joints), with the
/// names of the joints whose bones were split, in order.
fn split_worst_bones(
    alternation: &Alternation,
    start: Snapshot,
    rest: &[Vec3],
    tries: usize,
    pivot_rounds: usize,
    history: &mut Vec<f64>,
) -> Result<(Snapshot, Vec<String>, Vec<SplitTry>), SeqError> {
    let score = |s: &Snapshot| s.error.0 * weighted_joints(&s.fitter) as f64;
    let mut current = start;
    let mut split_names: Vec<String> = Vec::new();
    // The best rig by score, the splits that made it, and the bones tried from `current`.
    let mut chosen: Option<(Snapshot, usize)> = None;
    let mut tried: Vec<(usize, usize)> = Vec::new();
    let mut trace = Vec::new();
    for _ in 0..tries {
        let residual = vertex_residuals(&current.fitter, alternation.source, &current.fitted)?;
        let fitter = &current.fitter;
        let Some((joint, child)) = rigml_seq::split::worst_bone(
            fitter.skeleton(),
            fitter.skin(),
            fitter.fixed(),
            rest,
            &residual,
            SPLIT_MIN_LENGTH / alternation.scale,
            &tried,
        ) else {
            break;
        };
        let split = rigml_seq::split::split_bone(fitter.skeleton(), fitter.skin(), fitter.fixed(), rest, joint, child)?;
        let split_fitter = PoseFitter::new(&split.skeleton, &split.skin, rest, &split.fixed)?;
        let starts = unfitted_starts(current.fitted.iter().map(|p| split.pose(&p.skinning, joint)));
        let name = fitter.skeleton().names[joint].clone();
        alternation.bar.set_message(format!("poses with {name}'s bone split"));
        let fitted = fit_frames(
            &split_fitter,
            alternation.source,
            alternation.anchor,
            Some(&starts),
            &[],
            alternation.fit_options,
            alternation.bar,
        )?;
        let error = rmse_of(&split_fitter, alternation.source, &fitted, alternation.scale)?;
        history.push(error.0);
        let (candidate, _) = alternation.run(
            Snapshot {
                fitter: split_fitter,
                fitted,
                error,
            },
            pivot_rounds,
            history,
        )?;
        let lowered = candidate.error.0 < current.error.0;
        trace.push(SplitTry {
            joint: name.clone(),
            rmse: candidate.error.0,
            weighted_joints: weighted_joints(&candidate.fitter),
            kept: lowered,
        });
        if !lowered {
            tried.push((joint, child));
            continue;
        }
        if chosen.is_none() {
            chosen = Some((current, 0));
        }
        current = candidate;
        split_names.push(name);
        tried.clear();
        if chosen.as_ref().is_some_and(|(c, _)| score(&current) < score(c)) {
            chosen = Some((current.clone(), split_names.len()));
        }
    }
    Ok(match chosen {
        Some((rig, k)) => {
            split_names.truncate(k);
            (rig, split_names, trace)
        }
        None => (current, Vec::new(), trace),
    })
}

/// Joints of `fitter`'s skin that weight at least one vertex (the count errors are compared at).
fn weighted_joints(fitter: &PoseFitter) -> usize {
    fitter
        .skin()
        .joints_used(fitter.joint_count())
        .iter()
        .filter(|u| **u)
        .count()
}

/// Starting poses for [`fit_frames`] (not yet fitted: no error, no sweeps).
fn unfitted_starts(poses: impl IntoIterator<Item = Vec<Rigid>>) -> Vec<FittedPose> {
    poses
        .into_iter()
        .map(|skinning| FittedPose {
            skinning,
            squared_error: f64::INFINITY,
            sweeps: 0,
        })
        .collect()
}

/// One bone split tried by [`split_worst_bones`]: whose bone, and the rig's error after it.
struct SplitTry {
    joint: String,
    rmse: f64,
    weighted_joints: usize,
    /// Whether it lowered the error (the next split then starts from it).
    kept: bool,
}

/// Per vertex, its squared error summed over the frames of the fit (in the frames' units).
fn vertex_residuals(
    fitter: &PoseFitter,
    source: &dyn FrameSource,
    fitted: &[FittedPose],
) -> Result<Vec<f64>, SeqError> {
    let mut residual = vec![0.0f64; fitter.vertex_count()];
    let mut frame = Vec::new();
    for (f, pose) in fitted.iter().enumerate() {
        source.read_frame(f, &mut frame)?;
        for ((r, p), q) in residual.iter_mut().zip(fitter.skinned(&pose.skinning)).zip(&frame) {
            *r += p.distance_squared(q.as_dvec3());
        }
    }
    Ok(residual)
}

/// Fit every frame: outward from the anchor, each frame starting from its neighbour's pose and
/// from the bind pose and from `extra_starts[f]` if given (keeping the closest fit: key poses
/// that are not a time series jump); or, given a `previous` fit of every frame, each frame from
/// its own.
fn fit_frames(
    fitter: &PoseFitter,
    source: &dyn FrameSource,
    anchor: usize,
    previous: Option<&[FittedPose]>,
    extra_starts: &[Vec<Rigid>],
    options: &FitOptions,
    bar: &ProgressBar,
) -> Result<Vec<FittedPose>, SeqError> {
    let frame_count = source.frame_count();
    if let Some(previous) = previous.filter(|p| p.len() == frame_count) {
        // Each frame from its own previous fit: independent, so in parallel.
        return (0..frame_count)
            .into_par_iter()
            .map(|f| {
                let mut frame = Vec::new();
                source.read_frame(f, &mut frame)?;
                let fit = fitter.fit(&frame, &previous[f].skinning, options);
                bar.inc(1);
                fit
            })
            .collect();
    }
    let bind = vec![Rigid::IDENTITY; fitter.joint_count()];
    let mut fitted: Vec<Option<FittedPose>> = vec![None; frame_count];
    let mut frame = Vec::new();
    let order: Vec<(usize, Option<usize>)> = std::iter::once((anchor, None))
        .chain((anchor + 1..frame_count).map(|f| (f, Some(f - 1))))
        .chain((0..anchor).rev().map(|f| (f, Some(f + 1))))
        .collect();
    for (f, neighbour) in order {
        source.read_frame(f, &mut frame)?;
        let mut starts: Vec<&[Rigid]> = vec![&bind];
        if let Some(n) = neighbour.and_then(|n| fitted[n].as_ref()) {
            starts.push(&n.skinning);
        }
        if let Some(extra) = extra_starts.get(f) {
            starts.push(extra);
        }
        let mut best: Option<FittedPose> = None;
        for start in starts {
            let fit = fitter.fit(&frame, start, options)?;
            if best.as_ref().is_none_or(|b| fit.squared_error < b.squared_error) {
                best = Some(fit);
            }
        }
        fitted[f] = best;
        bar.inc(1);
    }
    Ok(fitted.into_iter().flatten().collect())
}

/// Free bones fitted to every frame (each from its `previous` fit when given, else outward from
/// the anchor), then the rig with every joint moved to the pivot they show
/// ([`PoseFitter::with_pivots`]): its fitter, and per frame the free bones made connected for it
/// (starts for its fits).
fn placed_at_pivots(
    fitter: &PoseFitter,
    source: &dyn FrameSource,
    anchor: usize,
    previous: Option<&[FittedPose]>,
    options: &FitOptions,
    pull: f64,
    bar: &ProgressBar,
) -> Result<(PoseFitter, Vec<Vec<Rigid>>), SeqError> {
    let free = FitOptions { free: true, ..*options };
    let loose = fit_frames(fitter, source, anchor, previous, &[], &free, bar)?;
    let poses: Vec<Vec<Rigid>> = loose.into_iter().map(|p| p.skinning).collect();
    let (_, moved) = fitter.with_pivots(&poses, pull)?;
    let starts = poses.iter().map(|p| moved.connected(p)).collect();
    Ok((moved, starts))
}

/// `(RMSE, max, RMSE per frame)` of the fitted poses against the frames, in normalised units.
fn rmse_of(
    fitter: &PoseFitter,
    source: &dyn FrameSource,
    fitted: &[FittedPose],
    scale: f32,
) -> Result<(f64, f64, Vec<f64>), SeqError> {
    let (mut sum, mut max, mut count) = (0.0f64, 0.0f64, 0usize);
    let mut per_frame = Vec::with_capacity(fitted.len());
    let mut frame = Vec::new();
    for (f, pose) in fitted.iter().enumerate() {
        source.read_frame(f, &mut frame)?;
        let skinned = fitter.skinned(&pose.skinning);
        let mut frame_sum = 0.0f64;
        for (p, q) in skinned.iter().zip(&frame) {
            let d = p.distance(q.as_dvec3()) * f64::from(scale);
            frame_sum += d * d;
            max = max.max(d);
        }
        sum += frame_sum;
        count += frame.len();
        per_frame.push((frame_sum / frame.len().max(1) as f64).sqrt());
    }
    Ok(((sum / count.max(1) as f64).sqrt(), max, per_frame))
}
