//! Shared by the examples that judge a placer on train and val characters caught in their own
//! clips.

use rigml_core::{Character, Clip};
use rigml_io::sequence::{bake, Baked, SequenceOptions};
use std::path::Path;

/// The clips of `character` (manifest row `id`, read from `path`), each baked at `per_clip`
/// even frames with its own skin. The Khronos fox's `Run` clip is never baked (it is the test
/// sequence `fox_run`); clips that cannot be baked are skipped.
pub fn baked_clips<'a>(
    character: &'a Character,
    id: &'a str,
    path: &'a Path,
    per_clip: usize,
) -> impl Iterator<Item = (&'a Clip, Baked)> + 'a {
    character
        .clips
        .iter()
        .enumerate()
        .filter(move |(_, clip)| !(id == "khronos-fox" && clip.name == "Run"))
        .filter_map(move |(c, clip)| {
            let options = SequenceOptions {
                clip: c,
                frames: Some(per_clip),
            };
            bake(character, &options, path).ok().map(|baked| (clip, baked))
        })
}
