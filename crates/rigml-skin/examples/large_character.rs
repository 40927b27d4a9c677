//! Write the procedural demo humanoid subdivided to at least N vertices (default 1 000 000) as
//! a glTF file without weights, for whole-command memory and time runs of `rigml skin`:
//!
//! ```text
//! cargo run --release -p rigml-skin --example large_character -- /tmp/large.glb 1000000
//! /usr/bin/time -v rigml skin /tmp/large.glb --method voxel -o /tmp/large-voxel.glb
//! ```

use anyhow::{Context, Result};
use rigml_core::Character;
use rigml_io::SaveOptions;
use rigml_skin::synthetic::large_humanoid;
use std::path::PathBuf;

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let path = PathBuf::from(args.next().context("usage: large_character OUT.glb [MIN_VERTICES]")?);
    let min_vertices: usize = match args.next() {
        Some(n) => n.parse().with_context(|| format!("{n:?} is not a vertex count"))?,
        None => 1_000_000,
    };
    let (mesh, skeleton) = large_humanoid(min_vertices)?;
    let character = Character {
        name: "rigml-demo-large".into(),
        mesh,
        skeleton,
        skin: None,
        clips: Vec::new(),
        attachments: Vec::new(),
    };
    rigml_io::save(&character, &path, SaveOptions { force: false })?;
    println!(
        "wrote {}: {} vertices, {} triangles, {} joints",
        path.display(),
        character.mesh.vertex_count(),
        character.mesh.triangle_count(),
        character.skeleton.joint_count()
    );
    Ok(())
}
