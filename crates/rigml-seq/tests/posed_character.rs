//! Real data: a skinned val character posed with its own weights over its clip gives a sequence;
//! decomposing it must reproduce it (RMSE under a stated bound), the written GLB must re-skin to
//! every frame, and per-frame vs consistent skinning with a geometric solver must behave as
//! METRICS.md §6 says (temporal error > 0 per frame, 0 by construction when consistent).

#[path = "../../rigml-io/tests/common/mod.rs"]
mod common;

use glam::Vec3;
use rigml_io::sequence::{bake, SequenceOptions};
use rigml_io::SaveOptions;
use rigml_seq::consistent::{consistent, per_frame, PosedFrames};
use rigml_seq::{build_rig, decompose, Normalisation, Options};
use rigml_skin::{Nearest, SolveOptions};

/// The small val character with a clip (370 vertices, 19 joints): fast in a debug build.
const CHARACTER: &str = "khronos-riggedfigure";
/// Bound on the decomposition's LBS RMSE (normalised units) with 19 bones and 4 influences.
/// Measured 2.7e-4 to 4.0e-4 for this asset (see the report); Dem Bones on the Sumner sequences is at
/// 3e-3 to 9e-3, so this bound is an order tighter than a blurry fit would pass.
const RMSE_BOUND: f64 = 1e-3;

fn posed() -> (rigml_core::Character, rigml_io::sequence::Baked) {
    let rows = common::rows_where("id", CHARACTER);
    let row = rows.first().expect("manifest row");
    assert_eq!(row.get("split"), "val");
    let path = row.path();
    let character = rigml_io::load(&path).unwrap();
    // Its clip has few keys (linear); sample 20 evenly spaced frames.
    let options = SequenceOptions {
        clip: 0,
        frames: Some(20),
    };
    let baked = bake(&character, &options, &path).unwrap();
    assert_eq!(baked.sequence.frames.len(), 20);
    (character, baked)
}

#[test]
fn decomposition_reproduces_the_posed_character_and_its_glb_re_skins() {
    let (character, baked) = posed();
    let seq = &baked.sequence;
    let options = Options {
        bones: character.skeleton.joint_count(),
        max_influences: 4,
        iterations: 20,
        ..Options::default()
    };
    let d = decompose(seq, &options, &|_, _| {}).unwrap();
    println!(
        "{CHARACTER}: {} frames × {} vertices, {} bones: RMSE {:.3e}, max {:.3e}",
        seq.frames.len(),
        seq.frames[0].len(),
        d.bone_count(),
        d.rmse,
        d.max_error
    );
    assert!(d.rmse < RMSE_BOUND, "RMSE {} ≥ {RMSE_BOUND}", d.rmse);
    // The alternation improves on its first smoothed fit. (Not necessarily on the rigid
    // clusters of the initialisation, history[0]: on this segmented figure those are nearly
    // exact, the smoothness term blurs them at the first weight update, and whether 20 rounds
    // win that back depends on rounding: 2.6e-4 to 4.0e-4 for three orderings of the same sums.)
    assert!(d.history.last().unwrap() < &d.history[1], "{:?}", d.history);

    let rig = build_rig(&d, "figure", 24.0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("figure.glb");
    rigml_io::save(&rig.character, &out, SaveOptions::default()).unwrap();
    let back = rigml_io::load(&out).unwrap();
    assert_eq!(back.mesh.vertex_count(), seq.frames[0].len());
    let skin = back.skin.as_ref().unwrap();
    assert!(skin.influences_max() <= 4);
    let clip = &back.clips[0];
    let scale = Normalisation::of_frame(&seq.frames[d.anchor]).unwrap().scale;
    let (mut sum, mut count) = (0.0f64, 0usize);
    for (f, frame) in seq.frames.iter().enumerate() {
        let pose = clip.sample(&back.skeleton, f as f32 / 24.0);
        let m = rigml_core::skinning_matrices(&back.skeleton, &pose).unwrap();
        let x = rigml_core::lbs(&back.mesh.positions, skin, &m);
        let own = d.reconstruct(f).unwrap();
        // The file re-skins to the decomposition's own reconstruction of every frame …
        let drift = x.iter().zip(&own).map(|(a, b)| a.distance(*b)).fold(0.0, f32::max) * scale;
        assert!(drift < 1e-4, "frame {f}: GLB differs from the decomposition by {drift}");
        for (a, b) in x.iter().zip(frame) {
            sum += f64::from((a.distance(*b) * scale).powi(2));
            count += 1;
        }
    }
    // … and so reproduces the sequence with the decomposition's RMSE.
    let rmse = (sum / count as f64).sqrt();
    assert!((rmse - d.rmse).abs() < 1e-5, "re-skinned RMSE {rmse} vs {}", d.rmse);
}

#[test]
fn per_frame_skinning_drifts_and_consistent_skinning_does_not() {
    let (character, baked) = posed();
    let posed = PosedFrames {
        triangles: &baked.sequence.triangles,
        frames: &baked.sequence.frames,
        skeleton: &character.skeleton,
        skinning: &baked.skinning,
    };
    let solver = Nearest::default();
    let options = SolveOptions::default();
    let skins = per_frame(&posed, &solver, &options, &|_, _| {}).unwrap();
    let joints = character.skeleton.joint_count();
    let dense: Vec<Vec<f32>> = skins.iter().map(|s| s.to_dense(joints)).collect();
    let n = baked.sequence.frames[0].len();
    let (tse, per_vertex) = rigml_eval::sequence_metrics::tse(&dense, n).unwrap();
    let result = consistent(&posed, &solver, &options).unwrap();
    let carried = vec![result.skin.to_dense(joints); baked.sequence.frames.len()];
    let (tse_consistent, _) = rigml_eval::sequence_metrics::tse(&carried, n).unwrap();
    let scale = Normalisation::of_frame(&baked.sequence.frames[result.anchor])
        .unwrap()
        .scale;
    let (rmse, _) =
        rigml_eval::sequence_metrics::lbs_rmse(&result.reconstructed, &baked.sequence.frames, scale).unwrap();
    println!(
        "{CHARACTER} nearest: per-frame TSE {tse:.2} ({per_vertex:.4}/vertex); consistent TSE 0, LBS RMSE {rmse:.3e}"
    );
    assert_eq!(tse_consistent, 0.0);
    // The anchor frame itself is reproduced exactly by its own pose.
    let anchor_error = result.reconstructed[result.anchor]
        .iter()
        .zip(&baked.sequence.frames[result.anchor])
        .map(|(a, b): (&Vec3, &Vec3)| a.distance(*b))
        .fold(0.0, f32::max);
    assert!(anchor_error * scale < 1e-5, "{anchor_error}");
    assert!(rmse.is_finite() && rmse < 0.05, "{rmse}");
    // Per-frame weights drift with the pose (measured 1.17 summed, see the report).
    assert!(tse > 0.0, "{tse}");
}
