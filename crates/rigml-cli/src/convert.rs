//! `rigml convert IN OUT`: read any supported file, optionally prune skin weights, write the
//! format OUT's extension names.

use anyhow::Result;
use rigml_core::Character;
use rigml_io::{Format, IoError, SaveOptions};
use std::fmt::Write;
use std::path::PathBuf;

/// Convert between formats (OUTPUT's extension picks the writer), optionally capping influences.
#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  rigml convert Knight.fbx Knight.glb --max-influences 4
  rigml convert Fox.glb Fox.gltf --force   (writes Fox.gltf and Fox.bin)
  rigml convert Fox.glb Fox.fbx   (binary FBX 7.4 for Maya, 3ds Max, MotionBuilder, Blender)
  rigml convert 12_01_walk.bvh walk.glb
  rigml convert Knight.fbx -o Knight.glb   (-o as in the other commands)")]
pub struct Args {
    /// The file to read.
    pub input: PathBuf,
    /// The file to write; its extension picks the format (or give it with -o, as the other
    /// commands take theirs).
    #[arg(
        value_name = "OUTPUT",
        required_unless_present = "output_flag",
        conflicts_with = "output_flag"
    )]
    pub output: Option<PathBuf>,
    /// The file to write (instead of OUTPUT).
    #[arg(short = 'o', long = "output", value_name = "OUTPUT")]
    pub output_flag: Option<PathBuf>,
    /// Replace OUTPUT if it exists.
    #[arg(long)]
    pub force: bool,
    /// Keep at most N influences per vertex (the heaviest), renormalised to sum 1.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub max_influences: Option<u16>,
}

impl Args {
    /// The file to write, given as OUTPUT or with -o (clap requires exactly one).
    fn output(&self) -> Result<&std::path::Path> {
        match (&self.output, &self.output_flag) {
            (Some(p), None) | (None, Some(p)) => Ok(p),
            _ => anyhow::bail!("give the file to write once: as OUTPUT or with -o"),
        }
    }
}

/// Load, prune, save; returns what was done.
pub fn run(args: &Args) -> Result<String> {
    let output = args.output()?;
    let mut out = String::new();
    // Check the output extension before the (possibly slow) load.
    let output_format = Format::from_path(output)?;
    let loaded = rigml_io::load_with_warnings(&args.input)?;
    let mut character = loaded.character;
    for warning in &loaded.warnings {
        let _ = writeln!(out, "repaired: {}: {warning}", args.input.display());
    }
    if let Some(cap) = args.max_influences {
        let cap = usize::from(cap);
        match &character.skin {
            Some(skin) => {
                let over = skin.rows().filter(|r| r.len() > cap).count();
                let pruned = skin.pruned(cap).map_err(|e| IoError::invalid(&args.input, e))?;
                let _ = writeln!(
                    out,
                    "pruned skin to at most {cap} influences per vertex ({over} of {} vertices changed)",
                    skin.vertex_count()
                );
                character.skin = Some(pruned);
            }
            None => {
                let _ = writeln!(
                    out,
                    "note: {} has no skin; --max-influences changes nothing",
                    args.input.display()
                );
            }
        }
    }
    rigml_io::save(&character, output, SaveOptions { force: args.force })?;
    let _ = writeln!(
        out,
        "wrote {} ({}): character with {} vertices, {} triangles, {} joints, {} clip(s)",
        output.display(),
        crate::inspect::format_name(output_format),
        character.mesh.vertex_count(),
        character.mesh.triangle_count(),
        character.skeleton.joint_count(),
        character.clips.len()
    );
    if let Some(lost) = dropped_by(output_format, &character) {
        let _ = writeln!(out, "note: {lost}");
    }
    if matches!(output_format, Format::Gltf | Format::Glb) {
        for clip in &character.clips {
            if let Some(shift) = rigml_io::gltf::clip_start_shift(clip) {
                let _ = writeln!(
                    out,
                    "note: clip '{}' starts at {:.3} s; glTF key times cannot be negative, so it was written {shift:.3} s later, starting at 0",
                    clip.name, -shift
                );
            }
        }
    }
    Ok(out)
}

fn has_texture(m: &rigml_core::Material) -> bool {
    m.base_color_texture.is_some()
        || m.metallic_roughness_texture.is_some()
        || m.normal_texture.is_some()
        || m.occlusion_texture.is_some()
        || m.emissive_texture.is_some()
}

/// What a format cannot hold of this character, to warn that the conversion dropped it.
fn dropped_by(format: Format, character: &Character) -> Option<String> {
    let extra_clips = character.clips.len().saturating_sub(1);
    match format {
        Format::Obj => Some("OBJ holds only the mesh: skeleton, skin and clips were not written".to_string()),
        Format::Bvh => Some(format!(
            "BVH holds only the skeleton and one clip: mesh, skin{} were not written",
            if extra_clips > 0 {
                format!(" and the {extra_clips} clip(s) after the first")
            } else {
                String::new()
            }
        )),
        Format::Fbx if character.mesh.materials.iter().any(has_texture) => {
            Some("FBX is written with material colours only: textures and images were not written".to_string())
        }
        Format::RigNet if !character.clips.is_empty() => {
            Some("RigNet rig files hold no animation: clips were not written".to_string())
        }
        _ => None,
    }
}
