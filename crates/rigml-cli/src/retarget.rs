//! `rigml retarget CLIP --to CHARACTER -o OUT.glb`: move a humanoid clip onto another humanoid
//! through the IK-Rig encoding (or by FK rotation copy with `--mode fk`), root motion scaled by
//! hip height. Shared helpers (loading a clip, `--map` files) serve `rigml ikrig` too.

use anyhow::{anyhow, bail, Context, Result};
use rigml_anim::humanoid::{limb_end_detached, parse_map_file, ChainKind, Role};
use rigml_anim::retarget::{retarget_clip, rig_for, Mode};
use rigml_anim::rig::RigInfo;
use rigml_core::{Character, Clip, Skeleton};
use rigml_io::SaveOptions;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Retarget a humanoid clip onto another humanoid character.
#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  rigml retarget ../shared/data/motion/cmu_09_01_run.bvh --to Ranger.glb -o ranger-run.glb
  rigml retarget walk.bvh --to mannequiny.glb --mode fk -o fk.glb --force
  rigml retarget dance.glb --clip-name Dance --to Witch.glb --to-map witch-map.txt -o out.glb --json

A map file overrides the automatic humanoid mapping, one `role joint-name` per line
(roles are VRM names: hips, spine, chest, neck, head, leftUpperArm, leftLowerArm, leftHand,
leftUpperLeg, leftLowerLeg, leftFoot, leftToes, right…; `#` starts a comment).")]
pub struct Args {
    /// The animated source (.bvh, .glb, .gltf, .fbx) whose skeleton is a humanoid.
    pub clip: PathBuf,
    /// The character to animate (.glb, .gltf, .fbx, …); its mesh, skin and skeleton are kept.
    #[arg(long, value_name = "CHARACTER")]
    pub to: PathBuf,
    /// The animated character to write (.glb, .gltf or .fbx).
    #[arg(short, long)]
    pub output: PathBuf,
    /// ikrig: chain goals solved by IK on the target (default); fk: copy joint rotations.
    #[arg(long, default_value = "ikrig", value_parser = clap::builder::PossibleValuesParser::new(["ikrig", "fk"]))]
    pub mode: String,
    /// Which clip of the source to use (by name; default: the first).
    #[arg(long)]
    pub clip_name: Option<String>,
    /// Humanoid map overrides for the source skeleton.
    #[arg(long, value_name = "FILE")]
    pub map: Option<PathBuf>,
    /// Humanoid map overrides for the target skeleton.
    #[arg(long, value_name = "FILE")]
    pub to_map: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Replace OUTPUT if it exists.
    #[arg(long)]
    pub force: bool,
}

/// The `--json` summary.
#[derive(Serialize)]
struct Summary {
    source: String,
    clip: String,
    target: String,
    output: String,
    mode: String,
    frames: usize,
    fps: f32,
    source_hip_height: f32,
    target_hip_height: f32,
    seconds: f64,
    /// Which target joint plays each humanoid role (VRM names), to check the mapping by.
    target_roles: BTreeMap<&'static str, String>,
    /// How the target's limbs end where its rig is not a plain chain (no hand joint, IK feet).
    target_notes: Vec<String>,
}

/// Notes on a mapped rig's limbs that a technical animator would want to know: arms with no hand
/// joint (a finger root stands for the hand and the others turn with it) and feet or hands that
/// are IK targets outside the limb (placed at the end of the lower joint).
pub fn limb_notes(skeleton: &Skeleton, info: &RigInfo) -> Vec<String> {
    let name = |j: usize| skeleton.names.get(j).map_or("?", String::as_str);
    let mut notes = Vec::new();
    for kind in [
        ChainKind::LeftArm,
        ChainKind::RightArm,
        ChainKind::LeftLeg,
        ChainKind::RightLeg,
    ] {
        let chain = info.map.chain(kind);
        let &[_, lower, end] = chain else { continue };
        let limb = kind.name().replace('_', " ");
        let companions = &info.end_companions[kind as usize];
        if !companions.is_empty() {
            notes.push(format!(
                "{limb}: no hand joint; the arm ends at {} and {} other finger root(s) under {} turn with it",
                name(end),
                companions.len(),
                name(lower)
            ));
        }
        if limb_end_detached(skeleton, chain) {
            notes.push(format!(
                "{limb}: {} is an IK target outside the limb; it is placed at the end of {}",
                name(end),
                name(lower)
            ));
        }
    }
    notes
}

/// Read a `--map` file into role overrides (none when `path` is absent).
pub fn read_map(path: Option<&Path>) -> Result<Vec<(Role, String)>> {
    let Some(path) = path else { return Ok(Vec::new()) };
    let text = std::fs::read_to_string(path).with_context(|| format!("{}", path.display()))?;
    Ok(parse_map_file(&text, &path.display().to_string())?)
}

/// Load a file and pick one of its clips (by name, else the first).
pub fn load_clip(path: &Path, name: Option<&str>) -> Result<(Character, Clip)> {
    let character = rigml_io::load(path)?;
    let clip = match name {
        Some(n) => character.clips.iter().find(|c| c.name == n).cloned().ok_or_else(|| {
            let names: Vec<&str> = character.clips.iter().map(|c| c.name.as_str()).collect();
            anyhow!("{}: no clip named {n:?} (clips: {})", path.display(), names.join(", "))
        })?,
        None => character
            .clips
            .first()
            .cloned()
            .ok_or_else(|| anyhow!("{}: has no animation clip", path.display()))?,
    };
    Ok((character, clip))
}

/// Map and measure a character's skeleton, naming its file in errors.
pub fn rig(character: &Character, path: &Path, map: Option<&Path>) -> Result<RigInfo> {
    if character.skeleton.is_empty() {
        bail!("{}: has no skeleton", path.display());
    }
    Ok(rig_for(
        &character.skeleton,
        &read_map(map)?,
        &path.display().to_string(),
    )?)
}

pub fn run(args: &Args) -> Result<String> {
    let mode = if args.mode == "fk" { Mode::Fk } else { Mode::IkRig };
    let (source, clip) = load_clip(&args.clip, args.clip_name.as_deref())?;
    let source_info = rig(&source, &args.clip, args.map.as_deref())?;
    let mut target = rigml_io::load(&args.to)?;
    let target_info = rig(&target, &args.to, args.to_map.as_deref())?;
    let started = Instant::now();
    let out = retarget_clip(
        &source.skeleton,
        &source_info,
        &clip,
        &args.clip.display().to_string(),
        &target.skeleton,
        &target_info,
        mode,
        &clip.name,
    )?;
    let seconds = started.elapsed().as_secs_f64();
    target.clips = vec![out.clip];
    rigml_io::save(&target, &args.output, SaveOptions { force: args.force })?;
    let summary = Summary {
        source: args.clip.display().to_string(),
        clip: clip.name.clone(),
        target: args.to.display().to_string(),
        output: args.output.display().to_string(),
        mode: args.mode.clone(),
        frames: out.frames,
        fps: out.fps,
        source_hip_height: source_info.hip_height,
        target_hip_height: target_info.hip_height,
        seconds,
        target_roles: target_info
            .map
            .roles()
            .into_iter()
            .map(|(r, j)| (r.name(), target.skeleton.names[j].clone()))
            .collect(),
        target_notes: limb_notes(&target.skeleton, &target_info),
    };
    if args.json {
        return Ok(serde_json::to_string_pretty(&summary)? + "\n");
    }
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}: clip {:?}, {} frames at {:.1} fps, retargeted ({}) onto {} in {:.3} s (hip height {:.4} -> {:.4})",
        summary.source,
        summary.clip,
        summary.frames,
        summary.fps,
        summary.mode,
        summary.target,
        seconds,
        summary.source_hip_height,
        summary.target_hip_height
    );
    for note in &summary.target_notes {
        let _ = writeln!(s, "note: {}: {note}", summary.target);
    }
    let _ = writeln!(s, "wrote {}", summary.output);
    Ok(s)
}
