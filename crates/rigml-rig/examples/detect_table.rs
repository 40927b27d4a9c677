//! How often the default template's test for a standing humanoid (`looks_humanoid`, which
//! `--template detect` follows) says yes on train and val characters caught in their own clips:
//! `cargo run --release -p rigml-rig --example detect_table [FRAMES_PER_CLIP] [ID|all] [FRAMES.tsv]`.
//!
//! `rigml rig-seq` rigs one frame of a sequence, so the test sees characters mid-stride,
//! grazing or crouching, not only in their bind pose. Every clip of every train/val character
//! (or of the one manifest row `ID`) is baked at a few even frames with its own skin; the table
//! gives, per manifest category (`cat=` in the notes) and family, the share of frames taken for
//! a standing humanoid; every character not of a humanoid category with frames taken for one is
//! listed with its clips (`H` taken, `.` not) and the frame the humanoid test read (up,
//! forward) on the first of them. The Khronos fox's `Run` clip is skipped: it is the test
//! sequence `fox_run`. Test rows are never read. `FRAMES.tsv` gets one line per frame: id,
//! category, family, taken, and the orientation's mirror shares across the lateral and the
//! depth planes.

mod common;

use rigml_eval::Dataset;
use std::collections::BTreeMap;
use std::path::PathBuf;

fn data_dir() -> PathBuf {
    std::env::var_os("RIGML_DATA").map_or_else(|| PathBuf::from("../shared/data"), PathBuf::from)
}

/// Categories whose characters are meant to be rigged as humanoids.
fn humanoid_category(cat: &str) -> bool {
    cat.starts_with("humanoid") || cat.ends_with("-humanoid")
}

fn main() {
    let mut args = std::env::args().skip(1);
    let per_clip: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(6);
    let only = args.next().filter(|a| a != "all");
    // Optional: one line per frame (id, category, family, taken, symmetry, depth symmetry).
    let mut frames_out = args.next().map(|p| std::fs::File::create(p).expect("frames TSV"));
    let data = Dataset::open(&data_dir()).unwrap_or_else(|e| panic!("{e}"));
    // (category, family) → (frames, taken for a humanoid)
    let mut table: BTreeMap<(String, String), (usize, usize)> = BTreeMap::new();
    for row in data.select(Some("character"), None) {
        if !(row.split == "train" || row.split == "val") || only.as_ref().is_some_and(|id| *id != row.id) {
            continue;
        }
        let cat = row
            .notes
            .split(';')
            .find_map(|n| n.trim().strip_prefix("cat="))
            .unwrap_or("none")
            .to_string();
        let Ok(character) = rigml_io::load(&row.path) else {
            println!("{}: could not be read", row.id);
            continue;
        };
        let (mut line, mut taken, mut frames, mut first) = (Vec::new(), 0, 0, None);
        for (clip, baked) in common::baked_clips(&character, &row.id, &row.path, per_clip) {
            let mut marks = String::new();
            for frame in &baked.sequence.frames {
                let mut mesh = character.mesh.clone();
                mesh.positions.clone_from(frame);
                frames += 1;
                let check = rigml_rig::looks_humanoid(&mesh);
                let yes = matches!(&check, Ok(check) if check.verdict.is_ok());
                if let (true, None, Ok(check)) = (yes, first, &check) {
                    first = Some((check.orientation.up, check.orientation.forward));
                }
                if let (Some(out), Ok(check)) = (frames_out.as_mut(), &check) {
                    use std::io::Write;
                    let o = &check.orientation;
                    writeln!(
                        out,
                        "{}\t{cat}\t{}\t{yes}\t{}\t{}",
                        row.id, row.family, o.symmetry, o.depth_symmetry
                    )
                    .expect("frames TSV");
                }
                taken += usize::from(yes);
                marks.push(if yes { 'H' } else { '.' });
            }
            line.push(format!(
                "{}:{marks}",
                clip.name.rsplit('|').next().unwrap_or(&clip.name)
            ));
        }
        if frames == 0 {
            continue;
        }
        let cell = table.entry((cat.clone(), row.family.clone())).or_default();
        cell.0 += frames;
        cell.1 += taken;
        if let (false, Some((up, forward))) = (humanoid_category(&cat), first) {
            println!(
                "{:44} {:5} {cat:24} {taken}/{frames} taken for a humanoid; first read with up {up:.2}, forward {forward:.2}",
                row.id, row.split
            );
            println!("    {}", line.join(" "));
        }
    }
    println!();
    println!(
        "{:26} {:44} {:>7} {:>8} {:>6}",
        "category", "family", "frames", "humanoid", "share"
    );
    for ((cat, family), (frames, taken)) in &table {
        println!(
            "{cat:26} {family:44} {frames:7} {taken:8} {:6.3}",
            *taken as f64 / *frames as f64
        );
    }
}
