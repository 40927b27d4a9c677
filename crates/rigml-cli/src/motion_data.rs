//! The humanoid clips of a manifest split, loaded for the motion model (`rigml train-motion`,
//! `rigml eval-motion`): every `motion` row of the split whose skeleton maps to a humanoid.

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
    let mut sources = Vec::new();
    let mut skipped = Vec::new();
    for r in loaded {
        match r {
            Ok(s) => sources.push(s),
            Err(e) => skipped.push(e),
        }
    }
    Ok((sources, skipped))
}
