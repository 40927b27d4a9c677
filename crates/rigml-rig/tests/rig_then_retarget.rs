//! Issue 10's "done when" test at library level: a bare humanoid mesh (an OBJ, so it truly has
//! no skeleton) is rigged with the humanoid placer and the learned skin (the product default),
//! saved to GLB and reloaded; val BVH clips are retargeted onto it through the IK-Rig (the
//! default of `rigml retarget`), saved to GLB and reloaded again. The same clips go onto the
//! artist's rig of the same character by the same path. Both are scored with the METRICS.md §7
//! foot metrics (penetration and foot skate) from the reloaded GLB's clip, and the auto-rigged
//! result must be no worse than the artist's.

#[path = "../../rigml-io/tests/common/mod.rs"]
mod common;
mod feet;

use feet::Feet;
use rigml_anim::decode::DecodeOptions;
use rigml_anim::retarget::{bake_clip, retarget_poses, rig_for, Mode, Source};
use rigml_anim::rig::{sample_frames, Frames, RigInfo};
use rigml_core::{ChannelValues, Character, Skeleton};
use rigml_io::SaveOptions;
use rigml_rig::Humanoid;
use std::path::{Path, PathBuf};

/// At most this many frames of each clip (keeps the debug test within seconds; 240 frames is
/// 2 s at 120 fps, a couple of steps of walking or running).
const MAX_FRAMES: usize = 240;

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
        attachments: Vec::new(),
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

    feet::score(&back, h_mesh)
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
            println!("{id} <- {clip_id}: {}", feet::report(&a, &r));
            feet::assert_no_worse(&a, &r, &format!("{id} <- {clip_id}"));
        }
    }
    let _ = std::fs::remove_dir_all(scratch_dir());
}
