//! The humanoid clips of a manifest split, loaded for the motion model (`rigml train-motion`,
//! `rigml eval-motion`): every `motion` row of the split whose skeleton maps to a humanoid; and
//! the clips of a motion library named by paths (`rigml inbetween --method retrieval`).

use anyhow::Result;
use rayon::prelude::*;
use rigml_anim::retarget::rig_for;
use rigml_eval::dataset::Dataset;
use rigml_motion::data::Source;

/// A rejected row: `(id, why)`.
pub type Skipped = (String, String);

/// The split's clips; rows that do not load or are not humanoids come back as `(id, why)`.
pub fn load_split(dataset: &Dataset, split: &str) -> Result<(Vec<Source>, Vec<Skipped>)> {
    let rows = dataset.select(Some("motion"), Some(split));
    let loaded: Vec<std::result::Result<Source, Skipped>> = rows
        .par_iter()
        .map(|row| {
            let fail = |why: String| (row.id.clone(), why);
            let character = rigml_io::load(&row.path).map_err(|e| fail(e.to_string()))?;
            let clip = character
                .clips
                .first()
                .cloned()
                .ok_or_else(|| fail("has no clip".into()))?;
            let info = rig_for(&character.skeleton, &[], &row.id).map_err(|e| fail(e.to_string()))?;
            Ok(Source {
                name: row.id.clone(),
                skeleton: character.skeleton,
                clip,
                info,
            })
        })
        .collect();
    Ok(partition(loaded))
}

/// The successes and the `(name, why)` of the failures of `results`, each in order.
fn partition<T>(results: Vec<std::result::Result<T, Skipped>>) -> (Vec<T>, Vec<Skipped>) {
    let mut ok = Vec::new();
    let mut failed = Vec::new();
    for r in results {
        match r {
            Ok(v) => ok.push(v),
            Err(e) => failed.push(e),
        }
    }
    (ok, failed)
}

/// The clips of a motion library (`rigml inbetween --method retrieval --library`): every clip
/// of every file named, and of every file rigml reads in the folders named (not their
/// subfolders), whose skeleton maps to a humanoid. Files or clips that do not load or map come
/// back as `(name, why)`; a path that does not exist, or no usable clip at all, is an error.
pub fn load_library(paths: &[std::path::PathBuf]) -> Result<(Vec<Source>, Vec<Skipped>)> {
    let mut files = Vec::new();
    for path in paths {
        if !path.exists() {
            anyhow::bail!("{}: no such file or folder (--library)", path.display());
        }
        if path.is_dir() {
            let mut inside: Vec<_> = std::fs::read_dir(path)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?
                .filter_map(|entry| entry.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && rigml_io::Format::from_path(p).is_ok())
                .collect();
            inside.sort();
            files.extend(inside);
        } else {
            files.push(path.clone());
        }
    }
    let loaded: Vec<std::result::Result<Vec<Source>, Skipped>> = files
        .par_iter()
        .map(|file| {
            let name = file.display().to_string();
            let character = rigml_io::load(file).map_err(|e| (name.clone(), e.to_string()))?;
            if character.clips.is_empty() {
                return Err((name, "has no clip".into()));
            }
            let info = rig_for(&character.skeleton, &[], &name).map_err(|e| (name.clone(), e.to_string()))?;
            Ok(character
                .clips
                .iter()
                .map(|clip| Source {
                    name: format!("{name}#{}", clip.name),
                    skeleton: character.skeleton.clone(),
                    clip: clip.clone(),
                    info: info.clone(),
                })
                .collect())
        })
        .collect();
    let (per_file, skipped) = partition(loaded);
    let sources: Vec<Source> = per_file.into_iter().flatten().collect();
    if sources.is_empty() {
        let why: Vec<String> = skipped.iter().map(|(n, w)| format!("{n}: {w}")).collect();
        anyhow::bail!(
            "the motion library holds no humanoid clip ({} files read){}",
            files.len(),
            if why.is_empty() {
                String::new()
            } else {
                format!(": {}", why.join("; "))
            }
        );
    }
    Ok((sources, skipped))
}

/// A motion library ([`rigml_motion::library::Library`]) of the clips [`load_library`] finds in
/// `paths`, each with its mirror; returns it, the number of clips in it and those left out
/// (files that do not load or map, clips that cannot be encoded).
pub fn library(paths: &[std::path::PathBuf]) -> Result<(rigml_motion::library::Library, usize, Vec<Skipped>)> {
    let (sources, mut skipped) = load_library(paths)?;
    let (prepared, unusable) = partition(
        sources
            .par_iter()
            .map(
                |s| match rigml_motion::data::prepare(std::slice::from_ref(s), 0, 0, true) {
                    Ok(p) if p.iter().all(|p| p.is_finite()) => Ok(p),
                    Ok(_) => Err((
                        s.name.clone(),
                        "its IK-Rig encoding is not finite (a bone scaled to zero?)".into(),
                    )),
                    Err(e) => Err((s.name.clone(), e.to_string())),
                },
            )
            .collect(),
    );
    skipped.extend(unusable);
    if prepared.is_empty() {
        anyhow::bail!("the motion library holds no clip that could be encoded");
    }
    let clips = prepared.len();
    Ok((rigml_motion::library::Library::new(&prepared.concat()), clips, skipped))
}
