//! `rigml convert IN OUT`: read any supported file, optionally prune skin weights, write the
//! format OUT's extension names.

use anyhow::Result;
use rigml_io::{Format, IoError, SaveOptions};
use std::fmt::Write;
use std::path::PathBuf;

/// Convert between formats (OUTPUT's extension picks the writer), optionally capping influences.
#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  rigml convert Knight.glb Knight.gltf
  rigml convert Knight.glb Knight2.glb --max-influences 2
  rigml convert Fox.glb Fox.gltf --force   (writes Fox.gltf and Fox.bin)")]
pub struct Args {
    /// The file to read.
    pub input: PathBuf,
    /// The file to write; its extension picks the format.
    pub output: PathBuf,
    /// Replace OUTPUT if it exists.
    #[arg(long)]
    pub force: bool,
    /// Keep at most N influences per vertex (the heaviest), renormalised to sum 1.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub max_influences: Option<u16>,
    /// Load glTF files with NaN skin weights by making those vertices unskinned (each repair
    /// is printed) instead of refusing them.
    #[arg(long)]
    pub repair: bool,
}

/// Load, prune, save; returns what was done.
pub fn run(args: &Args) -> Result<String> {
    let mut out = String::new();
    // Check the output extension before the (possibly slow) load.
    let output_format = Format::from_path(&args.output)?;
    let (mut character, repairs) = crate::load(&args.input, args.repair)?;
    for r in &repairs {
        let _ = writeln!(out, "repaired: {r}");
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
    rigml_io::save(&character, &args.output, SaveOptions { force: args.force })?;
    let _ = writeln!(
        out,
        "wrote {} ({}): {} vertices, {} triangles, {} joints, {} clips",
        args.output.display(),
        crate::inspect::format_name(output_format),
        character.mesh.vertex_count(),
        character.mesh.triangle_count(),
        character.skeleton.joint_count(),
        character.clips.len()
    );
    if let Some(lost) = dropped_by(output_format) {
        let _ = writeln!(out, "note: {lost}");
    }
    Ok(out)
}

/// What a format cannot hold, to warn that the conversion drops it.
fn dropped_by(format: Format) -> Option<&'static str> {
    match format {
        Format::Obj => Some("OBJ holds only the mesh: skeleton, skin and clips were not written"),
        Format::Bvh => Some("BVH holds only the skeleton and motion: mesh and skin were not written"),
        Format::RigNet => Some("RigNet rig files hold no animation: clips were not written"),
        _ => None,
    }
}
