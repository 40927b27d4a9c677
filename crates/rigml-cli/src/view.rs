//! `rigml view IN [--compare OTHER]`: look at a character in the browser. Serves a local page
//! (three.js) showing the mesh, the skeleton, the weights of a clicked joint as a heat map and
//! the clips; with `--compare`, a second weight set side by side and the difference.
//!
//! Unlike the other subcommands this one prints before it returns: the address must be known
//! while the server runs (until Ctrl-C).

use anyhow::{Context, Result};
use rigml_viz::viewer::{three_bundled, Model, Server, Site};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Serve a local web page showing a character: mesh, skeleton, weights, clips.
#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  rigml view Fox.glb                         open the printed address in a browser
  rigml view Knight.fbx --port 8080          any format rigml reads (re-exported as GLB)
  rigml view artist.glb --compare heat.glb   both weight sets side by side, or |A - B|
The server listens on 127.0.0.1 only and runs until Ctrl-C.")]
pub struct Args {
    /// The character to show (any format rigml reads).
    pub input: PathBuf,
    /// A second file with the same mesh (another weight set): shown beside INPUT, or as the
    /// difference of the two.
    #[arg(long, value_name = "OTHER")]
    pub compare: Option<PathBuf>,
    /// Port on 127.0.0.1; 0 picks any free port.
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Print the address as one JSON object (`{"url": ..., "port": ...}`).
    #[arg(long)]
    pub json: bool,
}

/// Load, re-export as GLB, serve until the process is stopped.
pub fn run(args: &Args) -> Result<String> {
    let shown = model(&args.input)?;
    let compare = args.compare.as_deref().map(model).transpose()?;
    if !three_bundled() {
        eprintln!(
            "warning: three.js was not bundled into this build (npm was missing when it was built); \
             the page will only say so. Run `npm ci` in crates/rigml-viz/web and rebuild."
        );
    }
    let server = Server::bind(args.port, Site::new(shown, compare))?;
    let addr = server.addr()?;
    let url = server.url()?;
    let line = if args.json {
        serde_json::json!({"url": url, "port": addr.port()}).to_string()
    } else {
        format!("rigml view: serving {} at {url} (Ctrl-C to stop)", args.input.display())
    };
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}").and_then(|()| out.flush()).context("<stdout>")?;
    drop(out);
    server.serve()?;
    Ok(String::new())
}

/// The character at `path` as the viewer serves it.
fn model(path: &Path) -> Result<Model> {
    let character = rigml_io::load(path)?;
    let glb = rigml_io::gltf::to_glb(&character, path)?;
    let label = path
        .file_name()
        .map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
    Ok(Model::new(&label, &character, glb))
}
