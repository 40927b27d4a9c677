//! The `rigml` command line: parse arguments, call the library, print results.
//!
//! One module per subcommand. Each returns the text it would print, so `main` alone talks to
//! the terminal: results go to stdout, failures to stderr as `error: <file>: <problem>` with a
//! non-zero exit status. No algorithm lives here (see `docs/ARCHITECTURE.md`).

mod convert;
mod demo;
mod inspect;

use clap::{Parser, Subcommand};
use rigml_core::Character;
use rigml_io::gltf::ReadOptions;
use rigml_io::{Format, IoError};
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

const EXAMPLES: &str = "\
Examples:
  rigml demo                          write ./rigml-demo.glb, a procedural walking humanoid
  rigml inspect rigml-demo.glb        summarise mesh, joints, skin, clips and problems
  rigml inspect Fox.glb --json        the same as one JSON object
  rigml convert Knight.glb Knight2.glb --max-influences 2";

/// rigml: rigging tools for 3D characters (skin weights, formats, animation).
#[derive(Parser)]
#[command(name = "rigml", version, after_help = EXAMPLES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Inspect(inspect::Args),
    Convert(convert::Args),
    Demo(demo::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Inspect(args) => inspect::run(&args),
        Command::Convert(args) => convert::run(&args),
        Command::Demo(args) => demo::run(&args),
    };
    match result {
        Ok(text) => print(&text),
        Err(error) => {
            // If even stderr is gone there is no one left to tell; still exit non-zero.
            let _ = writeln!(std::io::stderr(), "error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// Read a file for a subcommand. With `repair`, glTF files whose weights are NaN load with
/// those vertices unskinned instead of failing; the repairs come back as sentences (other
/// readers have nothing to repair and return none).
fn load(path: &Path, repair: bool) -> Result<(Character, Vec<String>), IoError> {
    match Format::from_path(path)? {
        Format::Gltf | Format::Glb if repair => {
            let outcome = rigml_io::gltf::read_with(path, ReadOptions { repair: true })?;
            Ok((outcome.character, outcome.warnings))
        }
        _ => Ok((rigml_io::load(path)?, Vec::new())),
    }
}

/// Write the result to stdout. A closed pipe (`rigml inspect x | head`) is not an error;
/// any other write failure is reported.
fn print(text: &str) -> ExitCode {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "error: <stdout>: {e}");
            ExitCode::FAILURE
        }
    }
}
