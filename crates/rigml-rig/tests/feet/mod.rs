//! Foot scores of a retargeted character and the "no worse than on the artist's rig" checks of
//! issue 10, shared by the library test (`rigml-rig/tests/rig_then_retarget.rs`) and the CLI
//! test (`rigml-cli/tests/rig_retarget_cli.rs`): METRICS.md §7 (penetration and foot skate) on
//! the ankle and toe joints, and the same formulas on the skinned mesh (its lowest vertex and
//! its sole centroids), which is what a viewer shows.

use glam::Vec3;
use rigml_anim::humanoid::Role;
use rigml_anim::retarget::rig_for;
use rigml_anim::rig::sample_frames;
use rigml_core::Character;
use rigml_eval::retarget_metrics as metrics;

/// Tolerance of "no worse": the auto-rig's value may exceed the artist's by 5 % of it, plus an
/// absolute floor for values that are ~0 on both: 0.002 H/s of skate (0.2 mm/s on a 1 m hip
/// height) and 0.0005 H of mean penetration (half a millimetre).
const RELATIVE: f64 = 0.05;
pub const SKATE_FLOOR: f64 = 0.002;
const DEPTH_FLOOR: f64 = 0.0005;

/// Foot scores of one retargeted character.
#[derive(Debug, Clone, Copy)]
pub struct Feet {
    pub frames: usize,
    /// §7 on the ankle and toe joints, in the character's own hip height `H`.
    pub skate: f64,
    pub depth: f64,
    pub deep_share: f64,
    /// Foot-joint frames in contact (§7 test), summed over the joints: skate is only meaningful
    /// with some.
    pub contacts: usize,
    /// Lowest foot joint over the clip, in hip heights above the ground.
    pub lowest: f32,
    pub hip_height: f32,
    /// The same formulas on the skinned mesh, in `h_mesh` (the artist's `H`, for both rigs):
    /// skate of the left and right sole centroids (H/s), mean penetration of the lowest vertex
    /// (H), contact frames of the soles, and the mean lowest-vertex height (H; a floating foot
    /// has no contact, hence no skate: this catches it).
    pub mesh_skate: f64,
    pub mesh_depth: f64,
    pub mesh_contacts: usize,
    pub mesh_lowest: f64,
}

/// Score the feet of `back`'s first clip (a retargeted character reloaded from its file), in
/// the canonical frame of its rig (Y up, ground at y = 0); `h_mesh` normalises the mesh scores.
pub fn score(back: &Character, h_mesh: f32) -> Feet {
    let name = &back.name;
    let skin = back.skin.as_ref().unwrap_or_else(|| panic!("{name}: not skinned"));
    let clip = back.clips.first().unwrap_or_else(|| panic!("{name}: no clip"));
    let played = sample_frames(&back.skeleton, clip, name).unwrap_or_else(|e| panic!("{e}"));
    let info = rig_for(&back.skeleton, &[], name).unwrap_or_else(|e| panic!("{e}"));
    let turn = info.facing.inverse();
    let roles = [Role::LeftFoot, Role::RightFoot, Role::LeftToes, Role::RightToes];
    let joints: Vec<usize> = roles.iter().filter_map(|&r| info.map.joint(r)).collect();
    assert_eq!(joints.len(), 4, "{name}: ankles and toes");

    // Soles: rest vertices in the lowest 2 % of the height, split by the mirror plane x = 0 of
    // the canonical frame (x = the character's left).
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
    assert!(soles.iter().all(|s| !s.is_empty()), "{name}: no sole vertices");

    let mut feet: Vec<Vec<Vec3>> = vec![Vec::with_capacity(played.poses.len()); joints.len()];
    let mut sole_tracks: Vec<Vec<Vec3>> = vec![Vec::new(), Vec::new()];
    let mut lowest_vertex: Vec<Vec<Vec3>> = vec![Vec::new()];
    for pose in &played.poses {
        let world = back.skeleton.world_matrices(&pose.local);
        for (track, &j) in feet.iter_mut().zip(&joints) {
            track.push(turn * world[j].w_axis.truncate());
        }
        let m = rigml_core::skinning_matrices(&back.skeleton, pose).expect("the pose fits the skeleton");
        let posed: Vec<Vec3> = rigml_core::lbs(&back.mesh.positions, skin, &m)
            .into_iter()
            .map(|p| turn * p)
            .collect();
        for (track, sole) in sole_tracks.iter_mut().zip(&soles) {
            track.push(sole.iter().map(|&v| posed[v]).sum::<Vec3>() / sole.len() as f32);
        }
        let low = posed
            .iter()
            .copied()
            .fold(Vec3::MAX, |a, p| if p.y < a.y { p } else { a });
        lowest_vertex[0].push(low);
    }
    let h = info.hip_height;
    let (depth, deep_share) = metrics::penetration(&feet, h).expect("frames");
    let in_contact = |tracks: &[Vec<Vec3>], h: f32| -> usize {
        tracks
            .iter()
            .map(|t| metrics::contacts(t, h, played.fps).into_iter().filter(|&c| c).count())
            .sum()
    };
    let low = &lowest_vertex[0];
    Feet {
        frames: played.poses.len(),
        skate: metrics::foot_skate(&feet, h, played.fps).expect("two frames or more"),
        depth,
        deep_share,
        contacts: in_contact(&feet, h),
        lowest: feet.iter().flatten().map(|p| p.y).fold(f32::MAX, f32::min) / h,
        hip_height: h,
        mesh_skate: metrics::foot_skate(&sole_tracks, h_mesh, played.fps).expect("frames"),
        mesh_depth: metrics::penetration(&lowest_vertex, h_mesh).expect("frames").0,
        mesh_contacts: in_contact(&sole_tracks, h_mesh),
        mesh_lowest: low.iter().map(|p| f64::from(p.y)).sum::<f64>() / low.len() as f64 / f64::from(h_mesh),
    }
}

/// `auto` is at most `artist` plus 5 % of it plus `floor`.
pub fn no_worse(auto: f64, artist: f64, floor: f64) -> bool {
    auto <= artist * (1.0 + RELATIVE) + floor
}

/// The auto-rigged character's feet (`a`) are no worse than the artist rig's (`r`) on the same
/// clip: joint and sole skate, joint and mesh penetration, share of deep frames, and not
/// floating (its lowest vertex on average no higher than the artist's, or the ground, plus
/// 0.02 H).
pub fn assert_no_worse(a: &Feet, r: &Feet, context: &str) {
    let checks = [
        ("foot skate", no_worse(a.skate, r.skate, SKATE_FLOOR)),
        ("penetration", no_worse(a.depth, r.depth, DEPTH_FLOOR)),
        ("deep frames", a.deep_share <= r.deep_share + 0.01),
        ("sole skate", no_worse(a.mesh_skate, r.mesh_skate, SKATE_FLOOR)),
        ("mesh penetration", no_worse(a.mesh_depth, r.mesh_depth, DEPTH_FLOOR)),
        ("floating feet", a.mesh_lowest <= r.mesh_lowest.max(0.0) + 0.02),
    ];
    for (what, ok) in checks {
        assert!(ok, "{context}: {what}: auto-rigged {a:?} vs artist {r:?}");
    }
}

/// Both characters' scores side by side, for the test log.
pub fn report(a: &Feet, r: &Feet) -> String {
    format!(
        "{} frames: skate auto {:.4} / artist {:.4} H/s; penetration auto {:.5} H ({:.1} % deep) / artist {:.5} H \
         ({:.1} % deep); contact joint-frames auto {} / artist {}; lowest foot joint auto {:.4} / artist {:.4} H; \
         H auto {:.4} / artist {:.4}\n  skinned mesh: sole skate auto {:.4} / artist {:.4} H/s; penetration auto \
         {:.5} / artist {:.5} H; sole contact frames auto {} / artist {}; mean lowest vertex auto {:.4} / artist \
         {:.4} H",
        a.frames,
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
        r.hip_height,
        a.mesh_skate,
        r.mesh_skate,
        a.mesh_depth,
        r.mesh_depth,
        a.mesh_contacts,
        r.mesh_contacts,
        a.mesh_lowest,
        r.mesh_lowest
    )
}
