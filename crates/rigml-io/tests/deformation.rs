//! The deformation check: every animated glTF character of the manifest, posed by rigml
//! (`rigml_io::load` → `Clip::sample` → `skinning_matrices` → `lbs`), must land where two
//! oracles put it.
//!
//! 1. [`glb_characters_match_independent_evaluation`]: an independent evaluator
//!    (`tests/independent_gltf`) that reads the same file with the `gltf` crate, poses the full
//!    node hierarchy (non-joint ancestors included) from the raw samplers in f64 and skins the raw
//!    JOINTS_n/WEIGHTS_n. Our parts are matched to the file's primitives by vertex count and bind
//!    position, our clips to the file's animations by name (or by index when names do not
//!    decide). Each clip is sampled at its ends and at four inner times that fall between keys;
//!    a character without animations is checked in its rest pose. A file the strict reader
//!    refuses for unusable weights (NaN) is compared through the repairing read, and the
//!    vertices it repaired must be exactly those the oracle finds unusable.
//! 2. [`fox_matches_external_bake`]: the Khronos Fox against `sequences/fox_*/ground_truth.npz`,
//!    baked by another program (pygltflib + numpy) at the keyframe times, through `weld_map`.
//!
//! What it has caught: a bind-space tolerance in the reader loose enough to merge the
//! Quaternius Suit's skins, which bind the Neck 7e-5 apart in a mesh scaled ×100 (0.35 % of the
//! character's size in the rest pose).
//!
//! **Tolerance.** An error is measured relative to the frame's size `S` = the longest side of the
//! oracle's posed bounding box, or the largest distance of a posed vertex from the origin if that
//! is larger (f32 rounding grows with the coordinates' magnitude, and characters with root motion
//! walk far from the origin), and never less than the same size of the bind mesh (a clip may
//! scale the character down to a point). Our pipeline is f32 throughout: f32 keeps 24 bits (6e-8 relative),
//! and a vertex goes through ~10–40 matrix products down the hierarchy plus a 4-term blend, so
//! honest rounding stays within a few 1e-6·S. Real mistakes (a missed ancestor transform, a
//! wrong joint, a slerp the long way round, a wrong tangent scale) move vertices by 1e-3·S or
//! more. `REL_TOL` = 1e-5 separates the two with margin on both sides.

mod common;
mod independent_gltf;
mod npz;

use glam::DVec3;
use rigml_core::{lbs, skinning_matrices, Character, Pose};
use rigml_io::gltf::ReadOptions;
use std::ops::Range;
use std::path::Path;

const REL_TOL: f64 = 1e-5;

/// Fractions of a clip's key range sampled: both ends and inner times that are not keys in
/// general (so interpolation is exercised, not just key lookup).
const SAMPLES: [f64; 6] = [0.0, 0.1, 0.37, 0.5, 0.83, 1.0];

/// Outcome for one character.
#[derive(Default)]
struct Outcome {
    clips: usize,
    frames: usize,
    compared: usize,
    skipped: usize,
    worst: Worst,
    notes: Vec<String>,
}

/// The largest vertex error, the same divided by its frame's size, and where it was.
#[derive(Default, Clone)]
struct Worst {
    err: f64,
    rel: f64,
    at: String,
}

impl Worst {
    fn update(&mut self, err: f64, size: f64, at: impl FnOnce() -> String) {
        self.err = self.err.max(err);
        // A NaN error is recorded (and fails), never skipped.
        let rel = err / size;
        if rel.is_nan() || rel > self.rel {
            self.rel = rel;
            self.at = at();
        }
    }
}

/// `x <= tol`, false for NaN.
fn within(x: f64, tol: f64) -> bool {
    x <= tol
}

/// Frame size `S` (see the module doc) of the oracle's posed positions.
fn frame_size(points: impl Iterator<Item = DVec3> + Clone) -> f64 {
    let (lo, hi) = points
        .clone()
        .fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(lo, hi), p| {
            (lo.min(p), hi.max(p))
        });
    let reach = points.map(|p| p.length()).fold(0.0, f64::max);
    (hi - lo).max_element().max(reach)
}

/// Our mesh parts paired with the oracle's primitives: (our vertex range, primitive index).
fn match_parts(c: &Character, doc: &independent_gltf::Document) -> Result<Vec<(Range<usize>, usize)>, String> {
    let rest = doc.globals(None, 0.0);
    let binds: Vec<Vec<DVec3>> = doc.primitives.iter().map(|p| doc.bind_primitive(p, &rest)).collect();
    let mut used = vec![false; binds.len()];
    let mut pairs = Vec::new();
    for part in &c.mesh.parts {
        let ours = c
            .mesh
            .positions
            .get(part.vertices.clone())
            .ok_or_else(|| format!("part {:?}: vertex range out of the mesh", part.name))?;
        let distance = |b: &[DVec3]| {
            b.iter()
                .zip(ours)
                .map(|(b, o)| (*b - o.as_dvec3()).length())
                .fold(0.0, f64::max)
        };
        let best = binds
            .iter()
            .enumerate()
            .filter(|(i, b)| !used[*i] && b.len() == ours.len())
            .map(|(i, b)| (i, distance(b)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .ok_or_else(|| {
                format!(
                    "part {:?} ({} vertices) has no primitive of that size",
                    part.name,
                    ours.len()
                )
            })?;
        used[best.0] = true;
        pairs.push((part.vertices.clone(), best.0));
    }
    let dropped: Vec<String> = doc
        .primitives
        .iter()
        .zip(&used)
        .filter(|(p, u)| !**u && p.influences.is_some())
        .map(|(p, _)| format!("node {} mesh {} primitive {}", p.node, p.mesh, p.primitive))
        .collect();
    if !dropped.is_empty() {
        return Err(format!(
            "skinned primitives missing from our mesh: {}",
            dropped.join(", ")
        ));
    }
    Ok(pairs)
}

/// Index of our clip for the file's animation `a`: by name when the name is unique on both
/// sides, else by position when the counts agree.
fn match_clip(c: &Character, doc: &independent_gltf::Document, a: usize) -> Option<usize> {
    let name = doc.animations.get(a)?.name.as_deref();
    let unique_in_doc = |n: &str| doc.animations.iter().filter(|x| x.name.as_deref() == Some(n)).count() == 1;
    if let Some(n) = name.filter(|n| unique_in_doc(n)) {
        let ours: Vec<usize> = (0..c.clips.len()).filter(|&i| c.clips[i].name == n).collect();
        if let [i] = ours[..] {
            return Some(i);
        }
    }
    (c.clips.len() == doc.animations.len()).then_some(a)
}

fn check_character(path: &Path) -> Result<Outcome, String> {
    let doc = independent_gltf::open(path)?;
    let mut out = Outcome::default();
    let bad_weights = doc
        .primitives
        .iter()
        .filter_map(|p| p.influences.as_ref())
        .flatten()
        .filter(|r| r.is_none())
        .count();
    let c = match rigml_io::load(path) {
        Ok(c) => c,
        // Refusing a file with unusable weights, with an error naming it, is right; then the
        // repairing read must give the same deformation everywhere else.
        Err(e) if bad_weights > 0 && e.path() == path => {
            out.notes.push(format!(
                "strict load refused it ({bad_weights} vertices with unusable weights): {e}"
            ));
            let o = rigml_io::gltf::read_with(path, ReadOptions { repair: true }).map_err(|e| e.to_string())?;
            o.character
                .validate()
                .map_err(|e| format!("repaired character invalid: {e}"))?;
            out.notes
                .push(format!("compared the repaired read ({} warnings)", o.warnings.len()));
            o.character
        }
        Err(e) => return Err(format!("rigml_io::load failed: {e}")),
    };
    let skin = c.skin.as_ref().ok_or("loaded without a skin")?;
    let pairs = match_parts(&c, &doc)?;
    if c.clips.len() != doc.animations.len() {
        out.notes.push(format!(
            "{} clips, file has {} animations",
            c.clips.len(),
            doc.animations.len()
        ));
    }
    // Each animation at its sample times; a file without animations in its rest pose.
    let mut jobs: Vec<(Option<usize>, f64)> = Vec::new();
    for (a, anim) in doc.animations.iter().enumerate() {
        let (lo, hi) = anim.range();
        jobs.extend(SAMPLES.map(|s| (Some(a), lo + (hi - lo) * s)));
    }
    if jobs.is_empty() {
        jobs.push((None, 0.0));
    }
    out.clips = doc.animations.len();
    let mut unskinned_in_file = 0;
    // Floor for the frame size: clips may shrink a character to a point (KayKit "Spawn_Ground").
    let bind_size = frame_size(
        pairs
            .iter()
            .flat_map(|(r, _)| c.mesh.positions[r.clone()].iter().map(|p| p.as_dvec3())),
    );
    for (a, t) in jobs {
        let anim = a.map(|a| &doc.animations[a]);
        let (pose, label) = match a {
            Some(a) => {
                let k = match_clip(&c, &doc, a)
                    .ok_or_else(|| format!("animation {a} ({:?}) has no clip", doc.animations[a].name))?;
                (
                    c.clips[k].sample(&c.skeleton, t as f32),
                    format!("clip {:?}", c.clips[k].name),
                )
            }
            None => (Pose::rest(&c.skeleton), "rest pose".to_string()),
        };
        let globals = doc.globals(anim, t);
        let m = skinning_matrices(&c.skeleton, &pose).map_err(|e| e.to_string())?;
        let ours = lbs(&c.mesh.positions, skin, &m);
        // (vertex, oracle position)
        let mut frame: Vec<(usize, DVec3)> = Vec::new();
        for (range, p) in &pairs {
            let oracle = doc.pose_primitive(&doc.primitives[*p], &globals);
            for (v, o) in range.clone().zip(oracle) {
                match o {
                    Some(o) => frame.push((v, o)),
                    // Unusable weights in the file: we must have left the vertex unskinned.
                    None if skin.influences(v).is_empty() => unskinned_in_file += 1,
                    None => return Err(format!("vertex {v}: the file's weights are unusable but it is skinned")),
                }
            }
        }
        let size = frame_size(frame.iter().map(|e| e.1)).max(bind_size);
        for (v, o) in &frame {
            let err = (ours[*v].as_dvec3() - *o).length();
            out.worst
                .update(err, size, || format!("{label} t={t:.4} vertex {v} (S={size:.4})"));
        }
        out.compared += frame.len();
        out.frames += 1;
    }
    out.skipped = unskinned_in_file;
    Ok(out)
}

#[test]
fn glb_characters_match_independent_evaluation() {
    let rows: Vec<_> = common::rows_with_format(&["glb", "gltf"])
        .into_iter()
        .filter(|r| r.get("kind") == "character")
        .collect();
    assert!(!rows.is_empty(), "no glTF character in the manifest");
    let mut failures = Vec::new();
    let mut worst = (0.0f64, String::new());
    for row in &rows {
        let id = row.get("id");
        match check_character(&row.path()) {
            Ok(o) => {
                let w = &o.worst;
                println!(
                    "{id:42} clips {:3} frames {:4} vertices {:8} skipped {:5} max err {:.3e} rel {:.3e} {}",
                    o.clips, o.frames, o.compared, o.skipped, w.err, w.rel, w.at
                );
                for n in &o.notes {
                    println!("    note: {n}");
                }
                if o.manifest_clips_differ(row.count("clips")) {
                    println!("    note: manifest says {:?} clips", row.get("clips"));
                }
                if w.rel > worst.0 {
                    worst = (w.rel, format!("{id}: {}", w.at));
                }
                if !within(w.rel, REL_TOL) {
                    failures.push(format!("{id}: relative error {:.3e} at {}", w.rel, w.at));
                }
            }
            Err(e) => {
                println!("{id:42} FAILED: {e}");
                failures.push(format!("{id}: {e}"));
            }
        }
    }
    println!(
        "{} characters, worst relative error {:.3e} ({})",
        rows.len(),
        worst.0,
        worst.1
    );
    assert!(
        failures.is_empty(),
        "{} of {} characters fail:\n{}",
        failures.len(),
        rows.len(),
        failures.join("\n")
    );
}

impl Outcome {
    fn manifest_clips_differ(&self, manifest: Option<usize>) -> bool {
        manifest != Some(self.clips)
    }
}

#[test]
fn fox_matches_external_bake() {
    let rows = common::manifest();
    let fox = rows
        .iter()
        .find(|r| r.get("id") == "khronos-fox")
        .expect("manifest has khronos-fox");
    let c = rigml_io::load(&fox.path()).unwrap_or_else(|e| panic!("{e}"));
    let skin = c.skin.as_ref().expect("the Fox is skinned");
    let bakes: Vec<_> = rows
        .iter()
        .filter(|r| r.get("kind") == "sequence" && r.get("id").starts_with("fox_"))
        .collect();
    assert_eq!(bakes.len(), 3, "expected fox_walk, fox_run and fox_survey");
    for bake in bakes {
        let npz = bake.path().join("ground_truth.npz");
        let read = |name: &str| npz::read(&npz, name).unwrap_or_else(|e| panic!("{e}"));
        let (times, vertices, weld, rest) = (read("times"), read("vertices"), read("weld_map"), read("rest_vertices"));
        let anim = bake.get("id").trim_start_matches("fox_");
        let clip = c
            .clips
            .iter()
            .find(|k| k.name.eq_ignore_ascii_case(anim))
            .unwrap_or_else(|| panic!("no clip named {anim}"));
        let welded = vertices.shape[1];
        assert_eq!(
            weld.data.len(),
            c.mesh.positions.len(),
            "weld_map covers every GLB vertex"
        );
        let weld: Vec<usize> = weld.data.iter().map(|&w| w as usize).collect();
        assert!(weld.iter().all(|&w| w < welded));
        // The bind mesh, welded, is the bake's rest mesh (same vertex order as the file).
        let rest_err = weld
            .iter()
            .zip(&c.mesh.positions)
            .map(|(&w, p)| (DVec3::from_slice(&rest.data[3 * w..3 * w + 3]) - p.as_dvec3()).length())
            .fold(0.0, f64::max);
        assert!(
            rest_err < 1e-4,
            "{anim}: bind mesh differs from the bake's rest mesh by {rest_err}"
        );
        let (mut max_err, mut max_rel) = (0.0f64, 0.0f64);
        for (f, &t) in times.data.iter().enumerate() {
            let pose = clip.sample(&c.skeleton, t as f32);
            let ours = lbs(&c.mesh.positions, skin, &skinning_matrices(&c.skeleton, &pose).unwrap());
            let frame = |w: usize| DVec3::from_slice(&vertices.data[(f * welded + w) * 3..(f * welded + w) * 3 + 3]);
            let size = frame_size((0..welded).map(frame));
            for (v, &w) in weld.iter().enumerate() {
                let err = (ours[v].as_dvec3() - frame(w)).length();
                max_err = max_err.max(err);
                max_rel = max_rel.max(err / size);
            }
        }
        println!(
            "fox {anim:7} {} frames: max error {max_err:.3e} (relative {max_rel:.3e}), bind vs rest {rest_err:.3e}",
            times.data.len()
        );
        assert!(
            max_rel <= REL_TOL,
            "{anim}: relative error {max_rel:.3e} over {REL_TOL:e}"
        );
    }
}
