//! `rigml demo`: the main job on embedded data, with no data files. The procedural humanoid's
//! bare mesh (its skeleton and weights thrown away) is auto-rigged as `rigml rig` does it (the
//! detected template, the embedded learned skin model), the procedural walk is retargeted onto
//! the new rig through IK-Rig as `rigml retarget` does it, and the result is written as
//! `rigml-demo.glb` beside `rigml-demo.png` (the learned weights, then a pose sheet of the walk).

use crate::rig::{placer, Controls};
use crate::skin::solver;
use anyhow::{anyhow, bail, Context, Result};
use rigml_anim::retarget::{retarget_clip, rig_for, Mode};
use rigml_core::Character;
use rigml_geom::procedural::{demo_humanoid, DEMO_NAME};
use rigml_io::SaveOptions;
use rigml_skin::SolveOptions;
use rigml_viz::{poses_from_clip, render_pose_sheet, render_weights, RenderOptions, RgbaImage, View};
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// File name of the rigged, animated character the demo writes inside the output directory.
pub const DEMO_FILE: &str = "rigml-demo.glb";
/// File name of the demo's picture (weights and pose sheet).
pub const DEMO_PICTURE: &str = "rigml-demo.png";

/// Frames of the walk drawn in the pose sheet.
const SHEET_POSES: usize = 6;
/// Side of a weight panel in pixels; pose panels are half as wide, so both rows are as wide.
const PANEL: u32 = 384;

/// Auto-rig a bare humanoid mesh, retarget a walk onto it, write rigml-demo.glb and .png.
#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  rigml demo                 writes ./rigml-demo.glb and ./rigml-demo.png
  rigml demo -o out --force  writes into out/, replacing the files if present
  rigml demo --json          the same, with a JSON summary on stdout

What it does, on data built into the binary: a procedural humanoid's mesh, with its skeleton
and skin thrown away, is rigged as `rigml rig MESH` would rig it (the shape is detected as a
standing humanoid, a Mixamo-named skeleton is placed in it and the embedded learned model
paints its skin weights); the procedural walk is then moved onto the new skeleton as `rigml
retarget` would move a capture clip (IK-Rig: feet and hands follow the clip, scaled by hip
height). The picture shows the weights (a colour per strongest joint; front, side, back) and
six frames of the walk seen from the side.")]
pub struct Args {
    /// Directory to write rigml-demo.glb and rigml-demo.png into (created if missing)
    /// [default: the current directory].
    #[arg(short = 'o', long = "out-dir", value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Replace existing rigml-demo.glb / rigml-demo.png.
    #[arg(long)]
    pub force: bool,
    /// Print a JSON summary instead of text.
    #[arg(long)]
    pub json: bool,
}

/// What the demo did, for the text and JSON reports.
#[derive(serde::Serialize)]
struct Summary {
    glb: String,
    png: String,
    vertices: usize,
    template: String,
    skin: String,
    joints: usize,
    joint_names: Vec<String>,
    max_influences: usize,
    unweighted_vertices: usize,
    clip: String,
    frames: usize,
    fps: f32,
    source_hip_height: f32,
    target_hip_height: f32,
    seconds: Seconds,
}

#[derive(serde::Serialize)]
struct Seconds {
    rig: f64,
    retarget: f64,
    write: f64,
    total: f64,
}

/// Rig, retarget, write both files, and describe what was done.
pub fn run(args: &Args) -> Result<String> {
    let started = Instant::now();
    let (dir, where_) = match &args.dir {
        Some(dir) => (dir.clone(), "choose another with -o DIR"),
        None => (PathBuf::from("."), "the current directory; choose another with -o DIR"),
    };
    let (glb, png) = (dir.join(DEMO_FILE), dir.join(DEMO_PICTURE));
    // Refuse to clobber before any work, so that neither file is replaced alone.
    for path in [&glb, &png] {
        if path.exists() && !args.force {
            bail!("{}: already exists (use --force to replace it)", path.display());
        }
    }

    let source = demo_humanoid().with_context(|| format!("{DEMO_NAME}: generated character is invalid"))?;
    let (rigged, template, skin_name) = auto_rig(&source)?;
    let rig_s = started.elapsed().as_secs_f64();

    let retarget_started = Instant::now();
    let clip = source
        .clips
        .first()
        .ok_or_else(|| anyhow!("{DEMO_NAME}: the procedural character has no walk"))?;
    let source_info = rig_for(&source.skeleton, &[], DEMO_NAME)?;
    let target_info = rig_for(&rigged.skeleton, &[], DEMO_FILE)?;
    let walk = retarget_clip(
        &source.skeleton,
        &source_info,
        clip,
        DEMO_NAME,
        &rigged.skeleton,
        &target_info,
        Mode::IkRig,
        &clip.name,
    )?;
    let mut character = rigged;
    character.clips = vec![walk.clip];
    character
        .validate()
        .with_context(|| format!("{DEMO_FILE}: the rigged, animated character is invalid"))?;
    let retarget_s = retarget_started.elapsed().as_secs_f64();

    let write_started = Instant::now();
    let picture = picture(&character)?;
    std::fs::create_dir_all(&dir).with_context(|| format!("{}: cannot create directory", dir.display()))?;
    rigml_io::save(&character, &glb, SaveOptions { force: args.force })?;
    rigml_io::atomic::write(&png, &rigml_viz::encode_png(&png, &picture)?, args.force)?;
    let write_s = write_started.elapsed().as_secs_f64();

    let skin = character.skin.as_ref();
    let summary = Summary {
        glb: glb.display().to_string(),
        png: png.display().to_string(),
        vertices: character.mesh.vertex_count(),
        template,
        skin: skin_name,
        joints: character.skeleton.joint_count(),
        joint_names: character.skeleton.names.clone(),
        max_influences: skin.map_or(0, |s| s.influences_max()),
        unweighted_vertices: skin.map_or(character.mesh.vertex_count(), |s| s.unskinned_count()),
        clip: character.clips[0].name.clone(),
        frames: walk.frames,
        fps: walk.fps,
        source_hip_height: source_info.hip_height,
        target_hip_height: target_info.hip_height,
        seconds: Seconds {
            rig: rig_s,
            retarget: retarget_s,
            write: write_s,
            total: started.elapsed().as_secs_f64(),
        },
    };
    if args.json {
        return Ok(serde_json::to_string_pretty(&summary)? + "\n");
    }
    Ok(describe(&summary, where_, &glb))
}

/// The bare mesh of `source` rigged as `rigml rig` does by default: the detected template with
/// its ground root, the embedded learned skin, four influences. Returns the character and the
/// names of the template and skin method used.
fn auto_rig(source: &Character) -> Result<(Character, String, String)> {
    let placer = placer("detect", Controls::default())?;
    let solver = solver("learned", None, None)?;
    let options = SolveOptions {
        max_influences: 4,
        ..SolveOptions::default()
    };
    let rigged = rigml_rig::rig_with_progress(
        DEMO_NAME,
        source.mesh.clone(),
        placer.as_ref(),
        solver.as_ref(),
        &options,
        &mut |_| {},
    )
    .map_err(|e| anyhow!("{DEMO_NAME}: auto-rigging the bare mesh: {e}"))?;
    Ok((rigged.character, rigged.template.to_string(), solver.name().to_string()))
}

/// The demo picture: the weights (front, side, back) above six side views of the walk.
fn picture(character: &Character) -> Result<RgbaImage> {
    let weights = render_weights(
        character,
        &RenderOptions {
            size: PANEL,
            ..RenderOptions::default()
        },
    )?;
    let poses = poses_from_clip(character, 0, SHEET_POSES)?;
    let sheet = render_pose_sheet(
        character,
        &poses,
        &RenderOptions {
            size: PANEL / 2,
            views: vec![View::Side],
            ..RenderOptions::default()
        },
    )?;
    let mut image = RgbaImage::new(weights.width().max(sheet.width()), weights.height() + sheet.height());
    image.blit(&weights, 0, 0);
    image.blit(&sheet, 0, weights.height());
    Ok(image)
}

/// The text report: what was done, where the files are, what to try next.
fn describe(s: &Summary, where_: &str, glb: &Path) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "rigged a bare procedural humanoid mesh ({} vertices): {} joints placed ({} template), \
         {} skin weights (up to {} influences, {} vertices unweighted) in {:.2} s",
        s.vertices, s.joints, s.template, s.skin, s.max_influences, s.unweighted_vertices, s.seconds.rig
    );
    let _ = writeln!(
        out,
        "retargeted the procedural walk onto it (IK-Rig, hip height {:.3} -> {:.3}): clip {:?}, {} frames \
         at {:.0} fps",
        s.source_hip_height, s.target_hip_height, s.clip, s.frames, s.fps
    );
    let _ = writeln!(out, "wrote {} ({where_})", s.glb);
    let _ = writeln!(
        out,
        "wrote {} (weights: a colour per strongest joint; below, {SHEET_POSES} frames of the walk)",
        s.png
    );
    let glb = glb.display();
    let _ = writeln!(out, "next:");
    for (command, what) in [
        (format!("rigml inspect {glb}"), "joints, skin and clip"),
        (format!("rigml view {glb}"), "look at it in a browser"),
        (
            format!("rigml render {glb} --joint LeftUpLeg -o leg.png"),
            "one joint's weights",
        ),
        (
            "rigml rig YOUR_MESH.obj -o yours.glb".to_string(),
            "the same on your own mesh",
        ),
        (
            "rigml retarget CLIP.bvh --to yours.glb -o moving.glb".to_string(),
            "your capture on it",
        ),
    ] {
        let _ = writeln!(out, "  {command:<56} {what}");
    }
    out
}
