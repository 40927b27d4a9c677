//! `rigml demo`: write the procedural demo character (no data files needed).

use anyhow::{Context, Result};
use rigml_geom::procedural::{demo_humanoid, DEMO_NAME};
use rigml_io::SaveOptions;
use std::fmt::Write;
use std::path::PathBuf;

/// File name the demo writes inside the output directory.
pub const DEMO_FILE: &str = "rigml-demo.glb";

/// Write rigml-demo.glb: a procedural humanoid (mesh, 21-joint skeleton, smooth skin, walk).
#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  rigml demo                 writes ./rigml-demo.glb
  rigml demo -o out --force  writes out/rigml-demo.glb, replacing it if present")]
pub struct Args {
    /// Directory to write rigml-demo.glb into (created if missing) [default: the current directory].
    #[arg(short = 'o', long = "out-dir", value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Replace an existing rigml-demo.glb.
    #[arg(long)]
    pub force: bool,
}

/// Build the character, write it, and describe it.
pub fn run(args: &Args) -> Result<String> {
    let character = demo_humanoid().with_context(|| format!("{DEMO_NAME}: generated character is invalid"))?;
    let (dir, where_) = match &args.dir {
        Some(dir) => (dir.clone(), "choose another with -o DIR"),
        None => (PathBuf::from("."), "the current directory; choose another with -o DIR"),
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("{}: cannot create directory", dir.display()))?;
    let path = dir.join(DEMO_FILE);
    rigml_io::save(&character, &path, SaveOptions { force: args.force })?;

    let mut out = String::new();
    let _ = writeln!(out, "wrote {} ({where_})", path.display());
    let _ = writeln!(
        out,
        "  {}: {} vertices, {} triangles in {} parts; {} joints (standard humanoid names); \
         skin with up to {} influences per vertex",
        character.name,
        character.mesh.vertex_count(),
        character.mesh.triangle_count(),
        character.mesh.parts.len(),
        character.skeleton.joint_count(),
        character.skin.as_ref().map_or(0, |s| s.influences_max()),
    );
    for clip in &character.clips {
        let _ = writeln!(
            out,
            "  clip {}: {:.2} s, {} keys, {} channels (loops, walks in place)",
            clip.name,
            clip.duration(),
            clip.key_count(),
            clip.channels.len()
        );
    }
    let _ = writeln!(out, "next: rigml inspect {}", path.display());
    Ok(out)
}
