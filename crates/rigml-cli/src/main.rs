//! The `rigml` command line: parse arguments, call the library, print results.
//!
//! One module per subcommand. Each returns the text it would print, so `main` alone talks to
//! the terminal: results go to stdout, failures to stderr as `error: <file>: <problem>` with a
//! non-zero exit status. No algorithm lives here (see `docs/ARCHITECTURE.md`).

mod arg_numbers;
mod clean;
mod convert;
mod decompose;
mod demo;
mod eval;
mod eval_motion;
mod ikrig;
mod inbetween;
mod inspect;
mod motion_data;
mod render;
mod retarget;
mod rig;
mod rig_seq;
mod seq_input;
mod skin;
mod skin_seq;
mod train;
mod train_motion;
mod train_skeleton;
mod view;

use clap::{Parser, Subcommand};
use std::io::Write;
use std::process::ExitCode;

const EXAMPLES: &str = "\
Examples:
  rigml demo                          auto-rig a built-in bare mesh, retarget a walk: rigml-demo.glb/.png
  rigml inspect rigml-demo.glb        summarise mesh, joints, skin, clips and problems
  rigml inspect Fox.glb --json        the same as one JSON object
  rigml convert Knight.fbx Knight.glb --max-influences 4
  rigml render Fox.glb --all --poses 6 -o fox.png
  rigml skin Ranger.glb -o ranger.glb         learned weights (the embedded model)
  rigml skin Ranger.glb --method heat -o ranger-heat.glb
  rigml rig creature.obj -o creature.glb      place a skeleton in a bare mesh and skin it
  rigml train --split train --val val -o skin.safetensors
  rigml train-skeleton --split train --val val -o skel.safetensors
  rigml train-motion --split train --val val -o motion.safetensors
  rigml clean walk.bvh -o walk-clean.bvh  smooth a mocap clip and remove foot skate
  rigml clean walk.bvh -o walk-clean.bvh --method learned   the learned motion model
  rigml inbetween walk.bvh --every 30 -o walk-keys.bvh      fill frames between key poses
  rigml eval-motion --split val      score denoising and in-betweens (filters, the model)
  rigml retarget walk.bvh --to Ranger.glb -o ranger-walk.glb
  rigml ikrig encode walk.bvh -o walk.csv
  rigml view Fox.glb                  look at mesh, skeleton, weights and clips in a browser
  rigml decompose sequences/horse_gallop --bones 30 -o horse.glb
  rigml skin-seq Wolf.glb --clip 11 --method heat --consistent
  rigml rig-seq sequences/horse_gallop -o horse-rig.glb   a named rig that replays the sequence
  rigml eval --split val --methods learned,heat,nearest,voxel -o report/
  rigml eval --split val --methods rig-auto -o report-rig/";

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
    Render(render::Args),
    Skin(skin::Args),
    Eval(eval::Args),
    Clean(clean::Args),
    Retarget(retarget::Args),
    Rig(rig::Args),
    Ikrig(ikrig::Args),
    View(view::Args),
    Decompose(decompose::Args),
    SkinSeq(skin_seq::Args),
    RigSeq(rig_seq::Args),
    Train(train::Args),
    TrainSkeleton(train_skeleton::Args),
    TrainMotion(train_motion::Args),
    EvalMotion(eval_motion::Args),
    Inbetween(inbetween::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Inspect(args) => inspect::run(&args),
        Command::Convert(args) => convert::run(&args),
        Command::Demo(args) => demo::run(&args),
        Command::Render(args) => render::run(&args),
        Command::Skin(args) => skin::run(&args),
        Command::Eval(args) => eval::run(&args),
        Command::Clean(args) => clean::run(&args),
        Command::Retarget(args) => retarget::run(&args),
        Command::Rig(args) => rig::run(&args),
        Command::Ikrig(args) => ikrig::run(&args),
        Command::View(args) => view::run(&args),
        Command::Decompose(args) => decompose::run(&args),
        Command::SkinSeq(args) => skin_seq::run(&args),
        Command::RigSeq(args) => rig_seq::run(&args),
        Command::Train(args) => train::run(&args),
        Command::TrainSkeleton(args) => train_skeleton::run(&args),
        Command::TrainMotion(args) => train_motion::run(&args),
        Command::EvalMotion(args) => eval_motion::run(&args),
        Command::Inbetween(args) => inbetween::run(&args),
    };
    match result {
        Ok(text) => print(&text),
        Err(error) => {
            // If even stderr is gone there is no one left to tell; still exit non-zero.
            let _ = writeln!(std::io::stderr(), "error: {}", error_message(&error));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes on one line, each cause once: library errors already quote their
/// source (`file: No such file or directory`), so a cause whose text is already there is skipped.
fn error_message(error: &anyhow::Error) -> String {
    let mut message = error.to_string();
    for cause in error.chain().skip(1) {
        let cause = cause.to_string();
        if !message.contains(&cause) {
            message.push_str(": ");
            message.push_str(&cause);
        }
    }
    message
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
