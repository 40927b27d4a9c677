//! Time one solver on one character file: `cargo run --release -p rigml-skin --example
//! skin_time -- <heat|nearest|voxel> <file>`; prints vertex/joint counts, seconds and the
//! METRICS.md §4 failures found.

use rigml_skin::post::Prepared;
use rigml_skin::{check, Heat, Nearest, SkinSolver, SolveOptions, Voxel};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(method), Some(path)) = (args.get(1), args.get(2)) else {
        return Err("usage: skin_time <heat|nearest|voxel> <file>".into());
    };
    let solver: Box<dyn SkinSolver> = match method.as_str() {
        "heat" => Box::new(Heat::default()),
        "nearest" => Box::new(Nearest::default()),
        "voxel" => Box::new(Voxel::default()),
        other => return Err(format!("unknown method {other}").into()),
    };
    let character = rigml_io::load(std::path::Path::new(path))?;
    let options = SolveOptions::default();
    let start = Instant::now();
    let skin = solver.solve(&character.mesh, &character.skeleton, &options)?;
    let seconds = start.elapsed().as_secs_f64();
    let bones = Prepared::new(&character.mesh, &character.skeleton)?.bones;
    let failures = check::failures(&skin, character.mesh.vertex_count(), options.max_influences, &bones);
    println!(
        "{method} {path}: {} vertices, {} joints, {seconds:.3} s, failures: {failures:?}",
        character.mesh.vertex_count(),
        character.skeleton.joint_count()
    );
    Ok(())
}
