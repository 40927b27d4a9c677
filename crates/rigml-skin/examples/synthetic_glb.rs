//! Write the benchmark tubes of `benches/solvers.rs` as GLB files, so that other tools (Blender's
//! automatic weights, `tools/blender/compare_speed.py`) can be timed on exactly the same meshes:
//!
//! `cargo run --release -p rigml-skin --example synthetic_glb -- OUT_DIR [--force]`
//!
//! writes OUT_DIR/tube-10k-20.glb (10 272 vertices, 20 bones) and OUT_DIR/tube-100k-60.glb
//! (99 904 vertices, 60 bones). A glTF importer only builds an armature for a skinned mesh, so
//! each file carries the nearest-bone weights as a placeholder skin (the tools under test replace
//! it).

use rigml_core::Character;
use rigml_io::SaveOptions;
use rigml_skin::synthetic::tube_chain;
use rigml_skin::{Nearest, SkinSolver, SolveOptions};
use std::path::PathBuf;

/// `(file stem, bones, rings per bone, vertices around)` as in the solver benchmark.
const TUBES: [(&str, usize, usize, usize); 2] = [("tube-10k-20", 20, 16, 32), ("tube-100k-60", 60, 26, 64)];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let force = args.iter().any(|a| a == "--force");
    let Some(dir) = args.iter().find(|a| !a.starts_with("--")).map(PathBuf::from) else {
        return Err("usage: synthetic_glb OUT_DIR [--force]".into());
    };
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for (stem, bones, rings, around) in TUBES {
        let (mesh, skeleton) = tube_chain(bones, rings, around, 0.1, 0.5);
        let skin = Nearest::default().solve(&mesh, &skeleton, &SolveOptions::default())?;
        let character = Character {
            name: stem.to_string(),
            mesh,
            skeleton,
            skin: Some(skin),
            clips: Vec::new(),
            attachments: Vec::new(),
        };
        let path = dir.join(format!("{stem}.glb"));
        rigml_io::save(&character, &path, SaveOptions { force })?;
        println!(
            "wrote {} ({} vertices, {} joints)",
            path.display(),
            character.mesh.vertex_count(),
            character.skeleton.joint_count()
        );
    }
    Ok(())
}
