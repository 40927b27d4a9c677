//! FBX out: every manifest character written as binary FBX by rigml and read back through ufbx
//! (rigml's FBX reader) keeps its vertices, triangles, joints and weights (within 1e-6) and its
//! attachments (props on joints), and its clips pose the mesh as the original's do (within 1e-5
//! of the posed mesh's size, or of the stored mesh's where a clip shrinks it).

mod common;

use rigml_core::glam::Vec3;
use rigml_core::{lbs, skinning_matrices, Character};
use std::collections::HashMap;

/// Skinned vertex positions of `c` at time `t` of clip `k`.
fn posed(c: &Character, k: usize, t: f32) -> Vec<Vec3> {
    let pose = c.clips[k].sample(&c.skeleton, t);
    let m = skinning_matrices(&c.skeleton, &pose).unwrap();
    lbs(&c.mesh.positions, c.skin.as_ref().unwrap(), &m)
}

/// Largest side of the points' bounding box (1 when they have none).
fn extent(points: &[Vec3]) -> f32 {
    let Some(&first) = points.first() else { return 1.0 };
    let (lo, hi) = points
        .iter()
        .fold((first, first), |(lo, hi), &p| (lo.min(p), hi.max(p)));
    let e = (hi - lo).max_element();
    if e > 0.0 && e.is_finite() {
        e
    } else {
        1.0
    }
}

fn worst_distance(a: &[Vec3], b: &[Vec3]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x.distance(*y)).fold(0.0, f32::max)
}

/// The original and its FBX round trip agree; `Err` says how not.
fn compare(id: &str, c: &Character, back: &Character) -> Result<String, String> {
    let size = c.size();
    if back.mesh.vertex_count() != c.mesh.vertex_count() || back.mesh.triangles != c.mesh.triangles {
        return Err(format!(
            "{id}: mesh {}v/{}t came back as {}v/{}t",
            c.mesh.vertex_count(),
            c.mesh.triangle_count(),
            back.mesh.vertex_count(),
            back.mesh.triangle_count()
        ));
    }
    // The writer may re-bind a mesh whose bind pose differs from its rest pose by one shared
    // transform (the stored vertices then change, the posed ones do not).
    let rebound = rigml_io::fbx::write::as_written(c);
    let stored = rebound.as_ref().map_or(&c.mesh.positions, |r| &r.mesh.positions);
    let moved = worst_distance(stored, &back.mesh.positions) / size;
    if moved > 1e-5 {
        return Err(format!("{id}: vertices moved by {moved:.2e} of the size"));
    }
    let mut names = back.skeleton.names.clone();
    names.sort();
    let mut expected = c.skeleton.names.clone();
    expected.sort();
    if names != expected {
        return Err(format!(
            "{id}: joints {:?} came back as {:?}",
            c.skeleton.names, back.skeleton.names
        ));
    }
    let (Some(skin), Some(back_skin)) = (&c.skin, &back.skin) else {
        return Err(format!("{id}: the skin did not come back"));
    };
    let index: HashMap<&str, usize> = back
        .skeleton
        .names
        .iter()
        .enumerate()
        .map(|(j, n)| (n.as_str(), j))
        .collect();
    let mut worst_weight = 0.0f32;
    for v in 0..c.mesh.vertex_count() {
        let mut a: Vec<(usize, f32)> = skin
            .influences(v)
            .iter()
            .map(|i| (index[c.skeleton.names[i.joint as usize].as_str()], i.weight))
            .collect();
        let mut b: Vec<(usize, f32)> = back_skin
            .influences(v)
            .iter()
            .map(|i| (i.joint as usize, i.weight))
            .collect();
        a.sort_by_key(|x| x.0);
        b.sort_by_key(|x| x.0);
        if a.len() != b.len() || a.iter().zip(&b).any(|(x, y)| x.0 != y.0) {
            return Err(format!("{id}: vertex {v} weights {a:?} came back as {b:?}"));
        }
        for (x, y) in a.iter().zip(&b) {
            worst_weight = worst_weight.max((x.1 - y.1).abs());
        }
    }
    if worst_weight > 1e-6 {
        return Err(format!("{id}: weights differ by {worst_weight:.2e}"));
    }
    if back.attachments.len() != c.attachments.len() {
        return Err(format!(
            "{id}: {} attachments came back as {}",
            c.attachments.len(),
            back.attachments.len()
        ));
    }
    let (rest, back_rest) = (c.skeleton.rest_world(), back.skeleton.rest_world());
    // Matched by name (their order among the scene's nodes is the reader's, not the file's).
    for a in &c.attachments {
        let Some(b) = back.attachments.iter().find(|b| b.name == a.name) else {
            return Err(format!("{id}: attachment '{}' did not come back", a.name));
        };
        let place = |rest: &[rigml_core::glam::Mat4], x: &rigml_core::Attachment| -> Vec<Vec3> {
            let m = rest[x.joint] * x.local;
            x.mesh.positions.iter().map(|p| m.transform_point3(*p)).collect()
        };
        let moved = worst_distance(&place(&rest, a), &place(&back_rest, b)) / size;
        // A prop's placement goes through Euler angles and the joint's rest matrix in single
        // precision (the stag's horns, under a ×100 armature: 1.6e-5).
        if a.mesh.vertex_count() != b.mesh.vertex_count() || moved > 1e-4 {
            return Err(format!(
                "{id}: attachment '{}' came back as '{}' ({} vs {} vertices, moved {moved:.2e})",
                a.name,
                b.name,
                a.mesh.vertex_count(),
                b.mesh.vertex_count()
            ));
        }
    }
    if back.clips.len() != c.clips.iter().filter(|k| !k.channels.is_empty()).count() {
        return Err(format!(
            "{id}: {} clips came back as {}",
            c.clips.len(),
            back.clips.len()
        ));
    }
    let mut worst_pose = 0.0f32;
    for (k, clip) in c.clips.iter().enumerate() {
        let Some(bk) = back.clips.iter().position(|b| b.name == clip.name) else {
            return Err(format!("{id}: clip '{}' did not come back", clip.name));
        };
        // The reader samples on the writer's frame grid; compare at grid times.
        let fps = rigml_io::fbx::write::frame_rate(c) as f32;
        let frames = (clip.duration() * fps).round() as usize;
        for f in [0, frames / 3, frames / 2, frames] {
            let t = (clip.start() + f as f32 / fps).min(clip.start() + clip.duration());
            let a = posed(c, k, t);
            let b = posed(back, bk, t);
            // Relative to the posed mesh's own size: under a scaled armature (Quaternius' ×100)
            // the stored bind-pose mesh is 1/100 of what the pose shows. Never below the stored
            // size: a clip may scale the mesh to a point (KayKit's Spawn clips start at 0).
            worst_pose = worst_pose.max(worst_distance(&a, &b) / extent(&a).max(size));
        }
    }
    if worst_pose > 1e-5 {
        return Err(format!("{id}: posed vertices differ by {worst_pose:.2e} of the size"));
    }
    // Joints whose rest rotation the writer re-expressed: the frames it turned so that Blender
    // does not connect a moving child, and those children.
    let turned = rebound.as_ref().map_or(0, |r| {
        (0..r.skeleton.joint_count())
            .filter(|&j| r.skeleton.rest_local[j].rotation != c.skeleton.rest_local[j].rotation)
            .count()
    });
    Ok(format!(
        "{id}: moved {moved:.1e}, weights {worst_weight:.1e}, posed {worst_pose:.1e}, rotations re-expressed {turned}"
    ))
}

#[test]
fn every_manifest_character_round_trips_through_fbx() {
    let rows: Vec<_> = common::manifest()
        .into_iter()
        .filter(|r| r.get("kind") == "character")
        .collect();
    assert!(!rows.is_empty());
    let mut failures = Vec::new();
    for row in &rows {
        let c = rigml_io::load(&row.path()).unwrap_or_else(|e| panic!("{}: {e}", row.id()));
        let path = std::path::Path::new("x.fbx");
        let bytes = rigml_io::fbx::to_fbx(&c, path).unwrap_or_else(|e| panic!("{}: {e}", row.id()));
        let back = match rigml_io::fbx::from_bytes(&bytes, path) {
            Ok(back) => back,
            Err(e) => {
                failures.push(format!("{}: rigml's FBX does not load: {e}", row.id()));
                continue;
            }
        };
        match compare(row.id(), &c, &back) {
            Ok(line) => println!("{line}"),
            Err(e) => failures.push(e),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {}:\n{}",
        failures.len(),
        rows.len(),
        failures.join("\n")
    );
}
