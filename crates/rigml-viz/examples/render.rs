//! Render a character file's weights to PNG (what `rigml render` will do; the CLI proper lives
//! in rigml-cli).
//!
//! ```text
//! cargo run -p rigml-viz --example render -- IN.glb (--joint NAME | --dominant | --all)
//!     [--poses N] [--compare OTHER.glb] [--size PX] [--bind] [--force] -o OUT.png
//! ```
//! `--poses N` draws N frames of the first clip (or the rest pose when there is none);
//! `--compare` draws the weights of IN against OTHER's (same mesh and skeleton order).

use rigml_viz::{
    poses_from_clip, render_compare, render_pose_sheet, render_weights, save_png, RenderOptions, WeightMode,
};
use std::path::PathBuf;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (mut input, mut output, mut compare) = (None, None, None);
    let (mut joint, mut mode, mut poses, mut force) = (None, WeightMode::Dominant, 0usize, false);
    let mut options = RenderOptions::default();
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--joint" => joint = Some(value()?),
            "--dominant" => mode = WeightMode::Dominant,
            "--all" => mode = WeightMode::All,
            "--poses" => poses = value()?.parse()?,
            "--compare" => compare = Some(PathBuf::from(value()?)),
            "--size" => options.size = value()?.parse()?,
            "--bind" => options.rest_pose = false,
            "--force" => force = true,
            "-o" => output = Some(PathBuf::from(value()?)),
            _ if input.is_none() => input = Some(PathBuf::from(arg)),
            _ => return Err(format!("unexpected argument {arg}").into()),
        }
    }
    let (Some(input), Some(output)) = (input, output) else {
        return Err("usage: render IN (--joint NAME|--dominant|--all) [--poses N] [--compare OTHER] -o OUT.png".into());
    };
    let start = Instant::now();
    let character = rigml_io::load(&input)?;
    let loaded = start.elapsed();
    options.mode = match joint {
        Some(name) => WeightMode::Joint(
            character
                .skeleton
                .index_of(&name)
                .ok_or_else(|| format!("{}: no joint named {name}", input.display()))?,
        ),
        None => mode,
    };
    let start = Instant::now();
    let image = if let Some(other) = compare {
        let other = rigml_io::load(&other)?;
        let b = other.skin.ok_or("the compared file has no skin")?;
        let a = character.skin.as_ref().ok_or("the input has no skin")?;
        let cmp = render_compare(&character, a, &b, &options)?;
        eprintln!(
            "difference: max {:.4}, mean {:.4}",
            cmp.max_difference, cmp.mean_difference
        );
        cmp.image
    } else if poses > 0 {
        let list = if character.clips.is_empty() {
            vec![rigml_core::Pose::rest(&character.skeleton); poses]
        } else {
            poses_from_clip(&character, 0, poses)?
        };
        render_pose_sheet(&character, &list, &options)?
    } else {
        render_weights(&character, &options)?
    };
    let rendered = start.elapsed();
    save_png(&output, &image, force)?;
    eprintln!(
        "{}: {} vertices, {} triangles; load {:.1} ms, render {}x{} in {:.1} ms",
        input.display(),
        character.mesh.vertex_count(),
        character.mesh.triangle_count(),
        loaded.as_secs_f64() * 1e3,
        image.width(),
        image.height(),
        rendered.as_secs_f64() * 1e3
    );
    Ok(())
}
