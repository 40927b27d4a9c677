//! Renders of real characters from the data set (read through `manifest.tsv`): the selected
//! joint's region is hot, the background is empty, output is deterministic, a clip's poses
//! change the picture. Set `RIGML_VIZ_OUT` to a folder to keep the PNGs for a look.

use glam::Quat;
use rigml_core::{Character, Pose};
use rigml_viz::colormap::heat_value;
use rigml_viz::{
    poses_from_clip, render_compare, render_pose_sheet, render_weights, render_weights_frame, RenderOptions, RgbaImage,
    WeightMode, NO_TRIANGLE,
};
use std::path::Path;

// The manifest reader the rigml-io integration tests use (one copy, shared by path).
#[path = "../../rigml-io/tests/common/mod.rs"]
mod common;

/// Load the manifest row `id` (its `path` column) with rigml-io.
fn load(id: &str) -> Character {
    let row = common::rows_where("id", id)
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("{id} not in manifest"));
    let path = row.path();
    let character = rigml_io::load(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        character.mesh.vertex_count().to_string(),
        row["vertices"],
        "{id} vertices"
    );
    character
}

fn keep(name: &str, image: &RgbaImage) {
    if name.is_empty() {
        return;
    }
    if let Some(dir) = std::env::var_os("RIGML_VIZ_OUT") {
        let path = Path::new(&dir).join(name);
        std::fs::write(&path, rigml_viz::encode_png(&path, image).unwrap()).unwrap();
    }
}

/// The joint with the most vertices it holds at weight > 0.5.
fn busiest_joint(c: &Character) -> usize {
    let skin = c.skin.as_ref().unwrap();
    let mut counts = vec![0usize; c.skeleton.joint_count()];
    for row in skin.rows() {
        for i in row.iter().filter(|i| i.weight > 0.5) {
            counts[i.joint as usize] += 1;
        }
    }
    (0..counts.len())
        .max_by_key(|&j| (counts[j], std::cmp::Reverse(j)))
        .unwrap()
}

/// Mean heat of pixels on triangles whose mean weight for `j` is > 0.5, and elsewhere.
fn heat_split(c: &Character, j: usize, size: u32, file: &str) -> (f32, f32, usize, usize) {
    let opts = RenderOptions {
        mode: WeightMode::Joint(j),
        size,
        ..RenderOptions::default()
    };
    let frame = render_weights_frame(c, &opts).unwrap();
    keep(file, &frame.image);
    let skin = c.skin.as_ref().unwrap();
    let weight = |v: u32| {
        skin.influences(v as usize)
            .iter()
            .find(|i| i.joint as usize == j)
            .map_or(0.0, |i| i.weight)
    };
    let (mut hot, mut cold) = (Vec::new(), Vec::new());
    for (k, &t) in frame.triangle.iter().enumerate() {
        let (x, y) = ((k as u32) % frame.image.width(), (k as u32) / frame.image.width());
        let px = frame.image.pixel(x, y).unwrap();
        if t == NO_TRIANGLE {
            assert_eq!(px, [0, 0, 0, 0], "{}: background pixel ({x}, {y})", c.name);
            continue;
        }
        let tri = c.mesh.triangles[t as usize];
        let w = tri.iter().map(|&v| weight(v)).sum::<f32>() / 3.0;
        let h = heat_value(px).unwrap();
        if w > 0.5 {
            hot.push(h);
        } else {
            cold.push(h);
        }
    }
    let mean = |v: &[f32]| v.iter().sum::<f32>() / v.len().max(1) as f32;
    (mean(&hot), mean(&cold), hot.len(), cold.len())
}

fn check_character(id: &str) {
    let c = load(id);
    let j = busiest_joint(&c);
    let (hot, cold, n_hot, n_cold) = heat_split(&c, j, 256, &format!("{id}-joint.png"));
    eprintln!(
        "{id}: joint {j} ({}): hot {hot:.3} over {n_hot} px, elsewhere {cold:.3} over {n_cold} px",
        c.skeleton.names[j]
    );
    assert!(n_hot > 200, "{id}: only {n_hot} pixels on joint {j}'s region");
    assert!(
        hot > 0.6 && cold < 0.2 && hot > 4.0 * cold,
        "{id}: hot {hot}, cold {cold}"
    );
    // Every joint that owns a visible region: that region is clearly hotter than the rest.
    let mut checked = 0;
    for j in 0..c.skeleton.joint_count() {
        let (hot, cold, n_hot, _) = heat_split(&c, j, 128, "");
        if n_hot < 50 {
            continue;
        }
        checked += 1;
        eprintln!(
            "{id}: joint {j:2} {:24} hot {hot:.3} ({n_hot:5} px), elsewhere {cold:.3}",
            c.skeleton.names[j]
        );
        assert!(hot > 0.5 && hot > cold + 0.4, "{id}: joint {j}: hot {hot}, cold {cold}");
    }
    assert!(checked >= 8, "{id}: only {checked} joints own a visible region");

    for (mode, name) in [(WeightMode::Dominant, "dominant"), (WeightMode::All, "all")] {
        let opts = RenderOptions {
            mode,
            size: 256,
            ..RenderOptions::default()
        };
        let a = render_weights(&c, &opts).unwrap();
        let b = render_weights(&c, &opts).unwrap();
        assert_eq!(a, b, "{id}: {name} render not deterministic");
        keep(&format!("{id}-{name}.png"), &a);
    }

    let skin = c.skin.clone().unwrap();
    let cmp = render_compare(
        &c,
        &skin,
        &skin,
        &RenderOptions {
            size: 192,
            ..RenderOptions::default()
        },
    )
    .unwrap();
    assert_eq!(cmp.max_difference, 0.0);
    keep(&format!("{id}-compare-same.png"), &cmp.image);
    let pruned = skin.pruned(1).unwrap();
    let cmp = render_compare(
        &c,
        &skin,
        &pruned,
        &RenderOptions {
            size: 192,
            ..RenderOptions::default()
        },
    )
    .unwrap();
    assert!(cmp.max_difference > 0.1, "{id}: pruning to 1 influence changed little");
    keep(&format!("{id}-compare-pruned.png"), &cmp.image);
}

#[test]
fn riggedfigure_weights() {
    check_character("khronos-riggedfigure");
}

#[test]
fn ranger_weights() {
    check_character("kaykit2-ranger");
}

/// Panels of a one-row pose sheet, left to right.
fn panels(sheet: &RgbaImage, size: u32) -> Vec<RgbaImage> {
    (0..sheet.width() / size)
        .map(|k| sheet.crop(k * size, 0, size, size))
        .collect()
}

#[test]
fn riggedfigure_clip_pose_sheet_moves() {
    let c = load("khronos-riggedfigure");
    let mut poses = vec![Pose::bind(&c.skeleton)];
    poses.extend(poses_from_clip(&c, 0, 4).unwrap());
    let opts = RenderOptions {
        size: 160,
        views: vec![rigml_viz::View::Front],
        ..RenderOptions::default()
    };
    let sheet = render_pose_sheet(&c, &poses, &opts).unwrap();
    keep("khronos-riggedfigure-poses.png", &sheet);
    let p = panels(&sheet, 160);
    assert_eq!(p.len(), 5);
    let moved = p[1..].iter().filter(|q| **q != p[0]).count();
    assert!(moved >= 3, "only {moved} of 4 clip frames differ from the bind pose");
    assert_ne!(p[1], p[3], "the walk cycle's first and middle frames look the same");
}

#[test]
fn ranger_posed_arm_changes_the_picture() {
    // The Ranger has no clips: pose it by hand (busiest joint rotated 60 degrees).
    let c = load("kaykit2-ranger");
    let bind = Pose::bind(&c.skeleton);
    let j = c.skeleton.index_of("upperarm.l").unwrap_or_else(|| busiest_joint(&c));
    let mut posed = bind.clone();
    posed.local[j].rotation *= Quat::from_rotation_z(1.0);
    let opts = RenderOptions {
        size: 160,
        ..RenderOptions::default()
    };
    let sheet = render_pose_sheet(&c, &[bind.clone(), posed], &opts).unwrap();
    keep("kaykit2-ranger-poses.png", &sheet);
    assert_eq!(
        sheet.crop(0, 0, 160, 160),
        render_pose_sheet(&c, &[bind.clone(), bind], &opts)
            .unwrap()
            .crop(0, 0, 160, 160)
    );
    assert_ne!(sheet.crop(0, 0, 160, 160), sheet.crop(160, 0, 160, 160));
}

/// Pixel bounding box size (width, height) of the opaque pixels of `image`.
fn opaque_extent(image: &RgbaImage) -> (u32, u32) {
    let mut b = (u32::MAX, u32::MAX, 0, 0);
    for y in 0..image.height() {
        for x in 0..image.width() {
            if image.pixel(x, y).unwrap()[3] != 0 {
                b = (b.0.min(x), b.1.min(y), b.2.max(x), b.3.max(y));
            }
        }
    }
    (b.2.saturating_sub(b.0), b.3.saturating_sub(b.1))
}

#[test]
fn riggedfigure_stands_up_in_rest_pose() {
    // Its bind-space mesh lies along -Y with Z up; the root's rest rotation stands it up.
    let c = load("khronos-riggedfigure");
    let front = |rest_pose| {
        let opts = RenderOptions {
            size: 128,
            views: vec![rigml_viz::View::Front],
            rest_pose,
            ..RenderOptions::default()
        };
        opaque_extent(&render_weights(&c, &opts).unwrap())
    };
    let (w, h) = front(true);
    assert!(h > w, "rest pose: {w} x {h} px, expected a standing figure");
    let (w, h) = front(false);
    assert!(
        w > 2 * h,
        "bind space: {w} x {h} px, expected the figure seen lying down"
    );
}
