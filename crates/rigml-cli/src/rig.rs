//! `rigml rig MESH -o OUT.glb`: auto-rig a bare mesh — place a skeleton inside it (a template
//! or the general curve-skeleton placer), skin it, and write skeleton + skin + bind pose as one
//! GLB.

use crate::skin::{solver, METHODS};
use anyhow::{anyhow, bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use rigml_io::{Format, SaveOptions};
use rigml_rig::Stage;
use rigml_skin::SolveOptions;
use std::fmt::Write;
use std::path::PathBuf;
use std::time::Instant;

/// The templates `--template` (and `rigml eval --methods rig-<template>`) can name, which
/// control joints they add, and the placer of each: the library's registry.
pub use rigml::{placer, placer_with_model, Controls, TEMPLATES};

/// `--template motion`: the skeleton read from a mesh sequence's motion (`rigml rig-seq` only,
/// where a sequence is there to read it from; see `rig_seq::motion`).
pub const MOTION: &str = "motion";

/// How a mesh is rigged: the skeleton template, the skin solver and its model. Shared by
/// `rigml rig` and `rigml rig-seq`, which rig their mesh the same way.
#[derive(clap::Args)]
pub struct RigChoice {
    /// Skeleton template: detect (humanoid when the shape is a standing humanoid, with the
    /// conventions of alike library humanoids' rigs when there are such, else the
    /// skeleton model's library rig when the shape is like one of its characters, else auto),
    /// humanoid (Mixamo-named, retargetable), auto (any shape), curve (auto without the
    /// learned model's pruning), learned (the skeleton model alone), library (the library's
    /// most alike rig, however alike) or, for rig-seq only, motion (joints where the
    /// sequence's own rigid parts turn; --skin is not used).
    #[arg(long, default_value = "detect",
          value_parser = clap::builder::PossibleValuesParser::new(TEMPLATES.iter().copied().chain([MOTION])))]
    pub template: String,
    /// Skin weights: learned (the trained network), heat (Blender's automatic weights), voxel
    /// (Maya's geodesic voxel binding) or nearest (distance to bones).
    #[arg(long, default_value = "learned", value_parser = clap::builder::PossibleValuesParser::new(METHODS))]
    pub skin: String,
    /// A model file from `rigml train` for --skin learned (default: the embedded model).
    #[arg(long, value_name = "FILE")]
    pub model: Option<PathBuf>,
    /// A model file from `rigml train-skeleton` for the templates that use one (detect, auto,
    /// learned, library; default: the embedded model). Its rig library is the rigs of the
    /// characters it was trained on (or given with `rigml train-skeleton --library-into`).
    #[arg(long, value_name = "FILE")]
    pub skeleton_model: Option<PathBuf>,
}

impl RigChoice {
    /// The skeleton placer and the skin solver these flags name (the model files are read
    /// here, so a bad one is refused before any slow work).
    pub fn tools(
        &self,
        controls: Controls,
    ) -> Result<(
        Box<dyn rigml_rig::SkeletonPlacer + Send>,
        Box<dyn rigml_skin::SkinSolver + Send>,
    )> {
        if self.template == MOTION {
            bail!(
                "--template motion reads the skeleton from how a mesh sequence moves: it is for \
                 `rigml rig-seq`; a single mesh takes detect, humanoid, auto, curve, learned or library"
            );
        }
        let placer = placer_with_model(&self.template, controls, self.skeleton_model.as_deref())?;
        Ok((placer, solver(&self.skin, None, self.model.as_deref())?))
    }
}

/// Auto-rig a mesh: place a skeleton, compute skin weights, write a rigged GLB.
#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  rigml rig creature.obj -o creature.glb
  rigml rig Wolf.glb --skin heat -o wolf-rigged.glb         (the file's own skeleton is ignored;
                                                             the rig shows the mesh where it did)
  rigml rig scan.obj --template humanoid -o scan.glb        (Mixamo names; fingers if modelled)
  rigml rig robot.fbx --template auto --max-influences 4 -o robot.glb --force
  rigml rig creature.obj -o creature.fbx                    (binary FBX for Maya, Max, Blender)
  rigml rig creature.obj -o creature.glb --json             (joints and seconds per stage)
  rigml rig fish.glb --skeleton-model mine.safetensors -o fish-rigged.glb
                          (a studio's rigs as the library: rigml train-skeleton --library-into)
The default template (detect) uses the humanoid template when the mesh is a standing humanoid
(T- or A-pose); when the skeleton model's rig library holds humanoids shaped like it, the
artists' rig those agree on is carried onto the template's landmarks (its joint names, joint
count and conventions, on the template's ankles and toes). For any other shape it first looks
for a rig to reuse: the skeleton model keeps the rigs of the characters it was trained on (its rig library), and when the mesh's shape (how
its surface spreads over its bounding box, and the box's proportions) is like one of theirs
(similarity 0.6 or more), that character's rig, its joint names and conventions included, is
moved onto the mesh by the two bounding boxes (--template library always takes the most alike
rig); otherwise it uses the general template. The general template (auto) finds a curve
skeleton of any shape: joints at the centres of the limbs' cross-sections, left/right pairs
named _L/_R when the mesh is mirror symmetric. When the learned skeleton model, trained on
artists' rigs, puts no joint near a quarter or more of it (fins, lanterns, spikes), those end
chains are dropped; short limbs the curve skeleton took for the rim of a thick body (a T-rex's
arms) are put back where the model rigs them. --template curve keeps every chain it finds,
--template learned uses that model's joints alone. A shape standing on four mirrored legs gets
quadruped legs (shoulder and hip at the spine, elbow/stifle, carpus/hock, foot, toe; named
shoulder_L ... hand_L, pelvis_L ... toe_end_L) placed by the proportions of artists' rigs, front
legs at the end whose body stands higher beyond the legs (the head); --poles adds an IK pole target in front of each leg
(front_leg_pole_L/R, back_leg_pole_L/R: children of the root that carry no weight, for an IK
chain to aim at). Both templates put a ground root (`root`) above the body's root
joint (Hips, or the general template's body): a weightless joint at the model's origin, or
on the floor under the mesh when the origin lies outside it, where game engines expect the
root for root motion (on a four-legged shape raised to where artists put it, about a third of
the leg's height up); --no-ground-root leaves it out. A library rig keeps its artist's own
root and control joints; with --poles or --no-ground-root, which shape the templates'
skeletons, detect skips the library.")]
pub struct Args {
    /// The mesh to rig (.obj, .glb, .gltf, .fbx); a skeleton or skin in it is ignored.
    pub input: PathBuf,
    /// The rigged character to write (.glb, .gltf or .fbx).
    #[arg(short, long)]
    pub output: PathBuf,
    #[command(flatten)]
    pub choice: RigChoice,
    /// Add IK pole targets in front of a four-legged shape's legs (general template; control
    /// joints without weight, `front_leg_pole_L` ...). `detect` then skips the rig library, as
    /// with --no-ground-root.
    #[arg(long)]
    pub poles: bool,
    /// Leave out the ground root (`root`, weightless, at the model's origin) that the humanoid
    /// and general templates put above the body's root joint.
    #[arg(long)]
    pub no_ground_root: bool,
    /// Influence cap per vertex.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..))]
    pub max_influences: u16,
    /// Replace OUTPUT if it exists.
    #[arg(long)]
    pub force: bool,
    /// Print a JSON summary (joints, seconds per stage) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Load, place, skin, save; returns what was done.
pub fn run(args: &Args) -> Result<String> {
    // Refuse a bad or existing output before the slow work.
    match Format::from_path(&args.output)? {
        Format::Glb | Format::Gltf | Format::Fbx => {}
        _ => bail!("{}: rigml rig writes .glb, .gltf or .fbx", args.output.display()),
    }
    if args.output.exists() && !args.force {
        bail!("{}: already exists (use --force to replace it)", args.output.display());
    }
    let controls = Controls {
        poles: args.poles,
        ground_root: !args.no_ground_root,
        humanoid_conventions: true,
    };
    let (placer, solver) = args
        .choice
        .tools(controls)
        .with_context(|| format!("{}: not rigged", args.input.display()))?;
    let started = Instant::now();
    let loaded = rigml_io::load(&args.input)?;
    let had_skeleton = !loaded.skeleton.is_empty();
    // Where the file shows its mesh (a whole-character transform kept in its skeleton, which
    // the new skeleton replaces): the rig is put there too.
    let placement = rigml_rig::scene::shown_placement(&loaded);
    let name = args
        .input
        .file_stem()
        .map_or_else(|| loaded.name.clone(), |s| s.to_string_lossy().into_owned());
    let load_s = started.elapsed().as_secs_f64();
    let options = SolveOptions {
        max_influences: usize::from(args.max_influences),
        ..SolveOptions::default()
    };
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg} [{elapsed}]")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    let mut marks: Vec<(Stage, Instant)> = Vec::new();
    let mut progress = |stage: Stage| {
        bar.set_message(match stage {
            Stage::Place => format!("placing joints ({})", placer.name()),
            Stage::Skin => format!("skinning ({})", solver.name()),
            Stage::Done => "done".to_string(),
        });
        marks.push((stage, Instant::now()));
    };
    let rigml_core::Character {
        mesh,
        skeleton: old_skeleton,
        attachments,
        ..
    } = loaded;
    let vertices = mesh.vertex_count();
    let rigged = rigml_rig::rig_with_progress(&name, mesh, placer.as_ref(), solver.as_ref(), &options, &mut progress)
        .map_err(|e| anyhow!("{}: {e}", args.input.display()));
    bar.finish_and_clear();
    let rigml_rig::Rigged {
        mut character,
        template,
        library_rig,
    } = rigged?;
    if let Some(m) = placement {
        rigml_rig::scene::place_in_scene(&mut character.skeleton, m);
    }
    // Props, hats and horns the file's joints carried hang from the new joints nearest them.
    character.attachments = rigml_rig::scene::reattach(&attachments, &old_skeleton, &character.skeleton);
    let stage_s = |from: Stage, to: Stage| {
        let at = |s: Stage| marks.iter().find(|m| m.0 == s).map(|m| m.1);
        at(from).zip(at(to)).map_or(0.0, |(a, b)| (b - a).as_secs_f64())
    };
    let (place_s, skin_s) = (stage_s(Stage::Place, Stage::Skin), stage_s(Stage::Skin, Stage::Done));
    let write_started = Instant::now();
    rigml_io::save(&character, &args.output, SaveOptions { force: args.force })
        .with_context(|| format!("writing the rig of {}", args.input.display()))?;
    let write_s = write_started.elapsed().as_secs_f64();
    let total_s = started.elapsed().as_secs_f64();
    let skin = character.skin.as_ref();
    let influences = skin.map_or(0, |s| s.influences_max());
    if args.json {
        let summary = serde_json::json!({
            "input": args.input.display().to_string(),
            "output": args.output.display().to_string(),
            "template": template,
            "library_rig": library_rig.as_ref().map(|(id, similarity)| serde_json::json!({
                "id": id,
                "similarity": similarity,
            })),
            "skin": solver.name(),
            "vertices": vertices,
            "joints": character.skeleton.joint_count(),
            "joint_names": character.skeleton.names,
            "max_influences": influences,
            "input_skeleton_ignored": had_skeleton,
            "attachments": character.attachments.iter().map(|a| serde_json::json!({
                "name": a.name,
                "joint": character.skeleton.names[a.joint],
            })).collect::<Vec<_>>(),
            "placement": placement.map(|m| {
                let (scale, axis, angle, translation) = describe(m);
                serde_json::json!({
                    "scale": scale,
                    "rotation_axis": axis,
                    "rotation_degrees": angle,
                    "translation": translation,
                })
            }),
            "seconds": {
                "load": load_s,
                "place": place_s,
                "skin": skin_s,
                "write": write_s,
                "total": total_s,
            },
        });
        return Ok(serde_json::to_string_pretty(&summary)? + "\n");
    }
    let mut out = String::new();
    if had_skeleton {
        let _ = writeln!(
            out,
            "note: {}: its own skeleton and skin are ignored",
            args.input.display()
        );
    }
    if let Some(m) = placement {
        let (scale, [ax, ay, az], angle, [x, y, z]) = describe(m);
        let _ = writeln!(
            out,
            "note: the file shows its mesh scaled {scale:.4}x, turned {angle:.1} degrees about \
             ({ax:.2}, {ay:.2}, {az:.2}) and moved by ({x:.4}, {y:.4}, {z:.4}); the rig's root \
             carries that, so the rigged mesh shows where the input's did"
        );
    }
    let placed_by = match (&library_rig, template) {
        (Some((id, similarity)), "humanoid") => {
            format!("humanoid landmarks with the conventions of the library's rig of {id}, similarity {similarity:.2}")
        }
        (Some((id, similarity)), _) => format!("library: the rig of {id}, similarity {similarity:.2}"),
        (None, _) => template.to_string(),
    };
    let _ = writeln!(
        out,
        "{}: {} joints placed ({placed_by}) in {place_s:.2} s, {} weights for {vertices} vertices in {skin_s:.2} s \
         (up to {influences} influences)",
        args.input.display(),
        character.skeleton.joint_count(),
        solver.name(),
    );
    for a in &character.attachments {
        let _ = writeln!(
            out,
            "note: {} (carried by a joint of the input) now hangs from {}",
            a.name, character.skeleton.names[a.joint]
        );
    }
    let _ = writeln!(out, "wrote {} ({total_s:.2} s in all)", args.output.display());
    Ok(out)
}

/// A similarity's uniform scale, rotation (axis and angle in degrees, at most 180) and
/// translation, for the report.
fn describe(m: glam::Mat4) -> (f32, [f32; 3], f32, [f32; 3]) {
    let (scale, rotation, translation) = m.to_scale_rotation_translation();
    let (axis, angle) = rotation.to_axis_angle();
    let (axis, angle) = if angle > std::f32::consts::PI {
        (-axis, std::f32::consts::TAU - angle)
    } else {
        (axis, angle)
    };
    (scale.x, axis.to_array(), angle.to_degrees(), translation.to_array())
}
