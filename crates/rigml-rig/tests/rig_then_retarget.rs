//! Issue 10's "done when" test at library level: a bare humanoid mesh (an OBJ, so it truly has
//! no skeleton) is rigged with the humanoid placer and the learned skin (the product default),
//! saved to GLB and reloaded; val BVH clips are retargeted onto it through the IK-Rig (the
//! default of `rigml retarget`), saved to GLB and reloaded again. The same clips go onto the
//! artist's rig of the same character by the same path. Both are scored with the METRICS.md §7
//! foot metrics (penetration and foot skate) from the reloaded GLB's clip, and the auto-rigged
//! result must be no worse than the artist's.

#[path = "../../rigml-io/tests/common/mod.rs"]
mod common;

use glam::Vec3;
use rigml_anim::decode::DecodeOptions;
use rigml_anim::humanoid::Role;
use rigml_anim::retarget::{bake_clip, retarget_poses, rig_for, Mode, Source};
use rigml_anim::rig::{sample_frames, Frames, RigInfo};
use rigml_core::{ChannelValues, Character, Skeleton};
use rigml_eval::retarget_metrics as metrics;
use rigml_io::SaveOptions;
use rigml_rig::Humanoid;
use std::path::{Path, PathBuf};

/// At most this many frames of each clip (keeps the debug test within seconds; 240 frames is
/// 2 s at 120 fps, a couple of steps of walking or running).
const MAX_FRAMES: usize = 240;

/// Tolerance of "no worse": the auto-rig's value may exceed the artist's by 5 % of it, plus an
/// absolute floor for values that are ~0 on both: 0.002 H/s of skate (0.2 mm/s on a 1 m hip
/// height) and 0.0005 H of mean penetration (half a millimetre).
const RELATIVE: f64 = 0.05;
const SKATE_FLOOR: f64 = 0.002;
const DEPTH_FLOOR: f64 = 0.0005;

fn load(path: &Path) -> Character {
    rigml_io::load(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn scratch_dir() -> PathBuf {
    std::env::temp_dir().join(format!("rigml-rig-then-retarget-{}", std::process::id()))
}

fn scratch(name: &str) -> PathBuf {
    let dir = scratch_dir();
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn info(skeleton: &Skeleton, asset: &str) -> RigInfo {
    rig_for(skeleton, &[], asset).unwrap_or_else(|e| panic!("{asset}: {e}"))
}

/// The bare mesh of `id`, written to an OBJ and read back: no skeleton, no skin, no clips.
fn bare_mesh(id: &str) -> rigml_core::Mesh {
    let character = load(&common::asset(id));
    let bare = Character {
        name: id.to_string(),
        mesh: character.mesh,
        skeleton: Skeleton::default(),
        skin: None,
        clips: Vec::new(),
    };
    let obj = scratch(&format!("{id}.obj"));
    rigml_io::save(&bare, &obj, SaveOptions { force: true }).unwrap_or_else(|e| panic!("{e}"));
    let back = load(&obj);
    assert!(
        back.skeleton.is_empty() && back.skin.is_none(),
        "{id}: the OBJ carries a rig"
    );
    back.mesh
}

/// The first `MAX_FRAMES` frames of a motion row's clip.
fn clip(id: &str) -> (Character, RigInfo, Frames) {
    let source = load(&common::asset(id));
    let clip = source.clips.first().unwrap_or_else(|| panic!("{id}: no clip"));
    let mut frames = sample_frames(&source.skeleton, clip, id).unwrap_or_else(|e| panic!("{e}"));
    frames.times.truncate(MAX_FRAMES);
    frames.poses.truncate(MAX_FRAMES);
    let rig = info(&source.skeleton, id);
    (source, rig, frames)
}

/// Foot scores of one retargeted character, from its reloaded GLB.
#[derive(Debug, Clone, Copy)]
struct Feet {
    skate: f64,
    depth: f64,
    deep_share: f64,
    /// Foot-joint frames in contact (METRICS.md §7 test): skate is only meaningful with some.
    contacts: usize,
    /// Lowest foot joint over the clip, in hip heights above the ground.
    lowest: f32,
    hip_height: f32,
    /// The same §7 formulas on the skinned mesh (what a viewer shows), in the artist's `H` for
    /// both rigs: skate of the left and right sole centroids (H/s), mean penetration of the
    /// lowest vertex (H), contact frames of the soles, and the mean lowest-vertex height (H).
    mesh_skate: f64,
    mesh_depth: f64,
    mesh_contacts: usize,
    mesh_lowest: f64,
}

/// Retarget `frames` onto `target` (IK-Rig, as `rigml retarget` does), save as GLB, reload,
/// check that it plays, and score its feet; `h_mesh` normalises the mesh-level scores.
fn retarget_and_score(
    source: &Character,
    source_info: &RigInfo,
    frames: &Frames,
    target: &Character,
    out: &Path,
    h_mesh: f32,
) -> Feet {
    let target_info = info(&target.skeleton, &target.name);
    let src = Source {
        skeleton: &source.skeleton,
        info: source_info,
        frames,
    };
    let poses = retarget_poses(
        &src,
        &target.skeleton,
        &target_info,
        Mode::IkRig,
        DecodeOptions::default(),
    );
    let times: Vec<f32> = frames.times.iter().map(|t| t - frames.times[0]).collect();
    let mut animated = target.clone();
    animated.clips = vec![bake_clip(&target.skeleton, &times, &poses, "retargeted")];
    rigml_io::save(&animated, out, SaveOptions { force: true }).unwrap_or_else(|e| panic!("{e}"));

    // The GLB plays: a skinned mesh, the clip with finite keys spanning the source's frames.
    let back = load(out);
    back.validate().unwrap_or_else(|e| panic!("{}: {e}", out.display()));
    let skin = back
        .skin
        .as_ref()
        .unwrap_or_else(|| panic!("{}: not skinned", out.display()));
    assert_eq!(skin.vertex_count(), back.mesh.positions.len());
    assert_eq!(back.skeleton.names, target.skeleton.names);
    let clip = back
        .clips
        .first()
        .unwrap_or_else(|| panic!("{}: no clip", out.display()));
    assert!(!clip.channels.is_empty(), "{}: empty clip", out.display());
    for c in &clip.channels {
        assert!(c.times.iter().all(|t| t.is_finite()));
        let finite = match &c.values {
            ChannelValues::Translation(v) | ChannelValues::Scale(v) => v.iter().all(|v| v.is_finite()),
            ChannelValues::Rotation(q) => q.iter().all(|q| q.is_finite()),
        };
        assert!(finite, "{}: non-finite keys on joint {}", out.display(), c.joint);
    }
    let played = sample_frames(&back.skeleton, clip, &back.name).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(played.poses.len(), frames.poses.len(), "{}: frame count", out.display());

    // Feet of the reloaded clip in the canonical frame (Y up, ground y = 0), METRICS.md §7:
    // ankles and toes of both legs.
    let back_info = info(&back.skeleton, &back.name);
    let turn = back_info.facing.inverse();
    let roles = [Role::LeftFoot, Role::RightFoot, Role::LeftToes, Role::RightToes];
    let joints: Vec<usize> = roles.iter().filter_map(|&r| back_info.map.joint(r)).collect();
    assert_eq!(joints.len(), 4, "{}: ankles and toes", out.display());
    let mut feet: Vec<Vec<Vec3>> = vec![Vec::with_capacity(played.poses.len()); joints.len()];
    for pose in &played.poses {
        let world = back.skeleton.world_matrices(&pose.local);
        for (track, &j) in feet.iter_mut().zip(&joints) {
            track.push(turn * world[j].w_axis.truncate());
        }
    }
    let h = back_info.hip_height;
    let skate = metrics::foot_skate(&feet, h, played.fps).expect("two frames or more");
    let (depth, deep_share) = metrics::penetration(&feet, h).expect("frames");
    let contacts = feet
        .iter()
        .map(|t| metrics::contacts(t, h, played.fps).into_iter().filter(|&c| c).count())
        .sum();
    let lowest = feet.iter().flatten().map(|p| p.y).fold(f32::MAX, f32::min) / h;

    // The skinned mesh in the canonical frame: soles are the vertices in the lowest 2 % of the
    // rest height, split left/right by the rest mirror plane (x = 0 in the canonical frame).
    let rest: Vec<Vec3> = back.mesh.positions.iter().map(|p| turn * *p).collect();
    let (lo, hi) = rest
        .iter()
        .fold((f32::MAX, f32::MIN), |(lo, hi), p| (lo.min(p.y), hi.max(p.y)));
    let band = lo + 0.02 * (hi - lo);
    let soles: [Vec<usize>; 2] = [true, false].map(|left| {
        (0..rest.len())
            .filter(|&v| rest[v].y <= band && (rest[v].x > 0.0) == left)
            .collect()
    });
    assert!(
        soles.iter().all(|s| !s.is_empty()),
        "{}: no sole vertices",
        out.display()
    );
    let mut sole_tracks: Vec<Vec<Vec3>> = vec![Vec::new(), Vec::new()];
    let mut lowest_mesh: Vec<Vec<Vec3>> = vec![Vec::new()];
    for pose in &played.poses {
        let m = rigml_core::skinning::skinning_matrices(&back.skeleton, pose).expect("pose fits the skeleton");
        let posed = rigml_core::skinning::lbs(&back.mesh.positions, skin, &m);
        for (track, sole) in sole_tracks.iter_mut().zip(&soles) {
            let sum: Vec3 = sole.iter().map(|&v| turn * posed[v]).sum();
            track.push(sum / sole.len() as f32);
        }
        let low = posed
            .iter()
            .map(|p| turn * *p)
            .fold(Vec3::splat(f32::MAX), |a, p| if p.y < a.y { p } else { a });
        lowest_mesh[0].push(low);
    }
    let mesh_skate = metrics::foot_skate(&sole_tracks, h_mesh, played.fps).expect("frames");
    let (mesh_depth, _) = metrics::penetration(&lowest_mesh, h_mesh).expect("frames");
    let mesh_contacts = sole_tracks
        .iter()
        .map(|t| {
            metrics::contacts(t, h_mesh, played.fps)
                .into_iter()
                .filter(|&c| c)
                .count()
        })
        .sum();
    let mesh_lowest =
        lowest_mesh[0].iter().map(|p| f64::from(p.y)).sum::<f64>() / lowest_mesh[0].len() as f64 / f64::from(h_mesh);
    Feet {
        skate,
        depth,
        deep_share,
        contacts,
        lowest,
        hip_height: h,
        mesh_skate,
        mesh_depth,
        mesh_contacts,
        mesh_lowest,
    }
}

fn no_worse(auto: f64, artist: f64, floor: f64) -> bool {
    auto <= artist * (1.0 + RELATIVE) + floor
}

#[test]
fn an_auto_rigged_bare_humanoid_keeps_its_feet_on_the_ground() {
    let solver = rigml_learn::Learned::embedded().expect("embedded model");
    let options = rigml_skin::SolveOptions::default();
    let clips: Vec<(&str, (Character, RigInfo, Frames))> = ["cmu_131_02_walk", "cmu_09_01_run"]
        .into_iter()
        .map(|id| (id, clip(id)))
        .collect();
    for id in ["godot-mannequiny", "kaykit2-ranger"] {
        let artist = load(&common::asset(id));
        let h = info(&artist.skeleton, id).hip_height;
        let rigged = rigml_rig::rig(id, bare_mesh(id), &Humanoid::default(), &solver, &options)
            .unwrap_or_else(|e| panic!("{id}: {e}"));
        let glb = scratch(&format!("{id}-auto.glb"));
        rigml_io::save(&rigged, &glb, SaveOptions { force: true }).unwrap_or_else(|e| panic!("{e}"));
        let auto = load(&glb);
        assert!(
            auto.skin.is_some() && !auto.skeleton.is_empty(),
            "{id}: the rig did not survive the GLB"
        );
        for (clip_id, (source, source_info, frames)) in &clips {
            let a = retarget_and_score(
                source,
                source_info,
                frames,
                &auto,
                &scratch(&format!("{id}-{clip_id}-auto.glb")),
                h,
            );
            let r = retarget_and_score(
                source,
                source_info,
                frames,
                &artist,
                &scratch(&format!("{id}-{clip_id}-artist.glb")),
                h,
            );
            println!(
                "{id} <- {clip_id} ({} frames): skate auto {:.4} / artist {:.4} H/s; penetration auto {:.5} H ({:.1} % deep) / \
                 artist {:.5} H ({:.1} % deep); contact joint-frames auto {} / artist {}; lowest foot joint auto {:.4} / \
                 artist {:.4} H; H auto {:.4} / artist {:.4}",
                frames.poses.len(),
                a.skate,
                r.skate,
                a.depth,
                a.deep_share * 100.0,
                r.depth,
                r.deep_share * 100.0,
                a.contacts,
                r.contacts,
                a.lowest,
                r.lowest,
                a.hip_height,
                r.hip_height
            );
            println!(
                "  skinned mesh: sole skate auto {:.4} / artist {:.4} H/s; penetration auto {:.5} / artist {:.5} H; \
                 sole contact frames auto {} / artist {}; mean lowest vertex auto {:.4} / artist {:.4} H",
                a.mesh_skate,
                r.mesh_skate,
                a.mesh_depth,
                r.mesh_depth,
                a.mesh_contacts,
                r.mesh_contacts,
                a.mesh_lowest,
                r.mesh_lowest
            );
            assert!(
                no_worse(a.skate, r.skate, SKATE_FLOOR),
                "{id} <- {clip_id}: skate {a:?} vs artist {r:?}"
            );
            assert!(
                no_worse(a.depth, r.depth, DEPTH_FLOOR),
                "{id} <- {clip_id}: penetration {a:?} vs artist {r:?}"
            );
            assert!(
                no_worse(a.mesh_skate, r.mesh_skate, SKATE_FLOOR),
                "{id} <- {clip_id}: sole skate {a:?} vs artist {r:?}"
            );
            assert!(
                no_worse(a.mesh_depth, r.mesh_depth, DEPTH_FLOOR),
                "{id} <- {clip_id}: mesh penetration {a:?} vs artist {r:?}"
            );
            // Not floating either (a floating foot has no contact, hence no skate): the mesh's lowest
            // vertex no higher on average than the artist's (or the ground) plus 0.02 H.
            assert!(
                a.mesh_lowest <= r.mesh_lowest.max(0.0) + 0.02,
                "{id} <- {clip_id}: the auto-rigged feet float {a:?} vs artist {r:?}"
            );
            assert!(
                a.deep_share <= r.deep_share + 0.01,
                "{id} <- {clip_id}: deep frames {a:?} vs artist {r:?}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(scratch_dir());
}
