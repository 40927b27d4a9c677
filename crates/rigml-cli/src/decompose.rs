//! `rigml decompose SEQ --bones B -o OUT.glb`: turn a mesh sequence into a rigged, animated
//! character by smooth skinning decomposition (rigml-seq), and optionally compare the recovered
//! bones with the ground truth of a skinned input.

use crate::arg_numbers::non_negative;
use crate::seq_input::{compare_with_truth, BakeArgs, Input};
use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use rigml_io::SaveOptions;
use serde_json::json;
use std::fmt::Write;
use std::path::PathBuf;
use std::time::Instant;

/// Decompose a mesh sequence into bones, weights and a skeleton (SSDR, as Dem Bones).
#[derive(clap::Args)]
#[command(after_help = "\
SEQ is a folder of OBJ frames with one topology (frame files in natural order; a reference.obj
beside them is ignored), an Alembic (Ogawa) mesh cache .abc (its first animated PolyMesh, one
frame per sample, parent Xforms applied, frame rate from its time sampling, units as stored), or
a skinned .glb/.gltf/.fbx whose clip is baked to frames with its own skin. The output's mesh is
the anchor frame (largest surface area), its clip has one key per frame, and re-skinning it
reproduces the sequence with the reported RMSE (METRICS.md §6 units: the anchor's longest
bounding-box side is 1).

Examples:
  rigml decompose sequences/horse_gallop --bones 30 --max-influences 4 -o horse.glb
  rigml decompose Bone_Anim.abc -o bones.glb --bones 10 --max-influences 8
  rigml decompose Wolf.glb --clip 2 --bones 30 -o wolf-ssdr.glb --truth --json
  rigml decompose mannequiny.glb --frames 100 --bones 30 -o m.glb --force
  rigml decompose long_capture/ --bones 40 --stream -o capture.glb")]
pub struct Args {
    /// Folder of OBJ frames, an Alembic mesh cache (.abc), or a skinned animation (.glb, .gltf,
    /// .fbx).
    pub input: PathBuf,
    /// The rigged character to write (.glb, .gltf).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Number of bones to fit.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub bones: u16,
    /// Non-zero weights per vertex.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=16))]
    pub max_influences: u16,
    /// Alternations of weight and transform updates.
    #[arg(long, default_value_t = 30)]
    pub iterations: usize,
    /// Motion-clustering rounds before the alternation.
    #[arg(long, default_value_t = 10)]
    pub init_iterations: usize,
    /// Sweeps over the bones per transform update (weighted Procrustes, others held fixed).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u16).range(1..=100))]
    pub transform_iterations: u16,
    /// Laplacian smoothness of the weights (normalised units, per frame).
    #[arg(long, default_value_t = 1e-4, value_parser = non_negative::<f64>)]
    pub smoothness: f64,
    /// Clustering seed (0: start from the vertex nearest the centre).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    #[command(flatten)]
    pub bake: BakeArgs,
    /// OBJ folder: re-read frames from disk on every pass instead of holding them (memory: one
    /// frame per thread; slower).
    #[arg(long)]
    pub stream: bool,
    /// Skinned input: compare the recovered bones with the file's own joints (matched one to
    /// one by the Hungarian method on where each moves the vertices the joint weights):
    /// rotation and point errors per frame, joint positions.
    #[arg(long)]
    pub truth: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Replace OUTPUT if it exists.
    #[arg(long)]
    pub force: bool,
}

/// Load, decompose, fit the skeleton, save, report.
pub fn run(args: &Args) -> Result<String> {
    if args.output.exists() && !args.force {
        bail!("{}: already exists (use --force to overwrite)", args.output.display());
    }
    let started = Instant::now();
    let options = args.bake.options();
    if args.truth && !Input::is_skinned_file(&args.input) {
        bail!(
            "{}: --truth needs a skinned input (.glb, .gltf, .fbx), not {}",
            args.input.display(),
            if args.input.is_dir() {
                "an OBJ folder"
            } else {
                "a mesh cache"
            }
        );
    }
    let input = Input::load(&args.input, &options, args.stream)?;
    let source = input.source();
    let load_seconds = started.elapsed().as_secs_f64();
    let seq_options = rigml_seq::Options {
        bones: usize::from(args.bones),
        max_influences: usize::from(args.max_influences),
        iterations: args.iterations,
        init_iterations: args.init_iterations,
        transform_iterations: usize::from(args.transform_iterations),
        smoothness: args.smoothness,
        seed: args.seed,
    };
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} iterations [{elapsed}]")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let solve_started = Instant::now();
    let decomposition = rigml_seq::decompose(source, &seq_options, &|done, total| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    })
    .with_context(|| format!("{}", args.input.display()))?;
    bar.finish_and_clear();
    let solve_seconds = solve_started.elapsed().as_secs_f64();
    let name = args
        .input
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "sequence".into());
    let fps = args.bake.fps.or(input.fps()).unwrap_or(24.0);
    let rig = rigml_seq::build_rig(&decomposition, &name, fps).with_context(|| format!("{}", args.input.display()))?;
    let truth = match (input.baked(), args.truth) {
        (Some((character, baked)), true) => Some(
            compare_truth(character, baked, &decomposition, &rig)
                .with_context(|| format!("{}: --truth", args.input.display()))?,
        ),
        _ => None,
    };
    rigml_io::save(&rig.character, &args.output, SaveOptions { force: args.force })?;
    let total_seconds = started.elapsed().as_secs_f64();
    let joints = rig.character.skeleton.joint_count();
    if args.json {
        let mut value = json!({
            "input": args.input.display().to_string(),
            "output": args.output.display().to_string(),
            "frames": source.frame_count(),
            "vertices": source.vertex_count(),
            "anchor_frame": decomposition.anchor,
            "bones_requested": args.bones,
            "bones": joints,
            "max_influences": args.max_influences,
            "iterations": args.iterations,
            "rmse": decomposition.rmse,
            "max_error": decomposition.max_error,
            "rmse_history": decomposition.history,
            "load_seconds": load_seconds,
            "decompose_seconds": solve_seconds,
            "total_seconds": total_seconds,
        });
        if let (Some(t), Some(obj)) = (&truth, value.as_object_mut()) {
            obj.insert(
                "truth".into(),
                json!({
                    "joints_compared": t.joints,
                    "bones": t.bones,
                    "matched": t.pairs.len(),
                    "point_error_mean": t.point_error_mean,
                    "rotation_deg_mean": t.rotation_deg_mean,
                    "rotation_deg_median": t.rotation_deg_median,
                    "joint_position_error_mean": t.joint_position_error_mean,
                }),
            );
        }
        return Ok(format!("{value}\n"));
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} frames × {} vertices, anchor frame {}",
        args.input.display(),
        source.frame_count(),
        source.vertex_count(),
        decomposition.anchor
    );
    let _ = writeln!(
        out,
        "  {joints} bones ({} requested), ≤ {} influences, {} iterations: LBS RMSE {:.3e}, max {:.3e} \
         (normalised), {solve_seconds:.2} s",
        args.bones, args.max_influences, args.iterations, decomposition.rmse, decomposition.max_error
    );
    if let Some(t) = &truth {
        let _ = writeln!(
            out,
            "  truth: {} weighted joints vs {} bones, {} matched: point error {:.3e}, rotation {:.2}° mean \
             ({:.2}° median), joint positions {:.3e} (normalised)",
            t.joints,
            t.bones,
            t.pairs.len(),
            t.point_error_mean,
            t.rotation_deg_mean,
            t.rotation_deg_median,
            t.joint_position_error_mean.unwrap_or(f64::NAN)
        );
    }
    let _ = writeln!(out, "wrote {} in {total_seconds:.2} s", args.output.display());
    Ok(out)
}

/// The recovered bones against the skinned input's own joints ([`compare_with_truth`]).
fn compare_truth(
    character: &rigml_core::Character,
    baked: &rigml_io::sequence::Baked,
    decomposition: &rigml_seq::Decomposition,
    rig: &rigml_seq::Rig,
) -> Result<rigml_eval::bone_match::BoneMatch> {
    use glam::Mat4;
    let recovered: Vec<Vec<Mat4>> = (0..decomposition.transforms.len())
        .map(|f| {
            rig.bone_of_joint
                .iter()
                .map(|&b| {
                    rigml_seq::rig::transform_in_units(decomposition, f, b)
                        .map_or(Mat4::IDENTITY, |(r, t)| Mat4::from_rotation_translation(r, t))
                })
                .collect()
        })
        .collect();
    compare_with_truth(
        character,
        baked,
        decomposition.anchor,
        &recovered,
        &rig.character.skeleton.bind_positions(),
        decomposition.normalisation.scale,
        None,
    )
}
