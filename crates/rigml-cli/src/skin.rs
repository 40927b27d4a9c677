//! `rigml skin IN -o OUT.glb`: compute skin weights for a character's mesh from its own
//! skeleton (bind pose) with the learned model (default) or one of the geometric solvers, and
//! write the skinned result.

use anyhow::{anyhow, bail, Result};
use rigml_io::SaveOptions;
use rigml_skin::SkinSolver;
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The solvers `--method` (and `rigml eval --methods`) can name: the library's registry.
pub use rigml::METHODS;

/// The solver called `name` ([`rigml::solver`]), with `resolution` for `voxel` and `model` (a
/// model file instead of the embedded default) for `learned`.
pub fn solver(name: &str, resolution: Option<usize>, model: Option<&Path>) -> Result<Box<dyn SkinSolver + Send>> {
    Ok(rigml::solver(name, &rigml::MethodSettings { resolution, model })?)
}

/// Compute skin weights (learned model by default, or a geometric solver) for the file's own skeleton.
#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  rigml skin Ranger.glb -o ranger.glb
  rigml skin Ranger.glb --model my-skin.safetensors -o ranger.glb
  rigml skin Ranger.glb --method heat -o ranger-heat.glb
  rigml skin Knight.fbx --method voxel --resolution 128 -o knight.glb
  rigml skin Fox.glb --method nearest --max-influences 2 -o fox.glb --force")]
pub struct Args {
    /// A character with a mesh and a skeleton (its weights, if any, are replaced).
    pub input: PathBuf,
    /// The skinned character to write (.glb, .gltf).
    #[arg(short, long)]
    pub output: PathBuf,
    /// learned: the trained network (rigml train); nearest: distance to bones; heat: bone heat
    /// diffusion (Blender's automatic weights); voxel: geodesic voxel binding (Maya's).
    #[arg(long, default_value = "learned", value_parser = clap::builder::PossibleValuesParser::new(METHODS))]
    pub method: String,
    /// Influence cap per vertex.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..))]
    pub max_influences: u16,
    /// Voxel grid resolution along the longest side (voxel method; default 256).
    #[arg(long, value_name = "R", value_parser = clap::value_parser!(u16).range(8..=rigml_geom::voxel::MAX_RESOLUTION as i64))]
    pub resolution: Option<u16>,
    /// A model file from `rigml train` for the learned method (default: the embedded model).
    #[arg(long, value_name = "FILE")]
    pub model: Option<PathBuf>,
    /// Replace OUTPUT if it exists.
    #[arg(long)]
    pub force: bool,
}

/// Load, solve, save; returns what was done.
pub fn run(args: &Args) -> Result<String> {
    let mut character = rigml_io::load(&args.input)?;
    if character.skeleton.is_empty() {
        bail!("{}: has no skeleton to bind to", args.input.display());
    }
    let solver = solver(&args.method, args.resolution.map(usize::from), args.model.as_deref())?;
    let request = rigml::SkinRequest {
        max_influences: usize::from(args.max_influences),
        ..rigml::SkinRequest::default()
    };
    let started = Instant::now();
    let skin = rigml::skin_weights(
        &character.mesh,
        &character.skeleton,
        solver.as_ref(),
        &request,
        &mut |_| true,
    )
    .map_err(|e| anyhow!("{}: {}: {e}", args.input.display(), solver.name()))?
    .skin;
    let seconds = started.elapsed().as_secs_f64();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} weights for {} vertices over {} joints in {seconds:.2} s (up to {} influences)",
        args.input.display(),
        solver.name(),
        skin.vertex_count(),
        character.skeleton.joint_count(),
        skin.influences_max()
    );
    character.skin = Some(skin);
    rigml_io::save(&character, &args.output, SaveOptions { force: args.force })?;
    let _ = writeln!(out, "wrote {}", args.output.display());
    Ok(out)
}
