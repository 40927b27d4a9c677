//! The Alembic reader on Dem Bones' example cache (manifest row `dem_bones_example`):
//! - it reads as a 400-frame, 24 fps sequence of 754 vertices and 1504 triangles whose first
//!   frame is the rest mesh Dem Bones pairs it with (`Bone_Geom.fbx`, in metres where the cache
//!   is in centimetres): same vertices in the same order, same winding;
//! - `load` and `save` refuse `.abc` (a sequence, not a character), and no truncation of the
//!   file makes the reader panic;
//! - Blender's Alembic importer (`tools/blender/abc_check.py`) shows the same counts, polygons
//!   wound the same way and the same positions at the first, middle and last frame. That part
//!   runs only when `RIGML_BPY` names a Python that has `bpy` (tools/blender/README.md); without
//!   it the test fails when `CI` is set and otherwise says so and passes.

mod common;

use glam::Vec3;
use rigml_io::sequence::{load_sequence, SequenceOptions};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn cache() -> std::path::PathBuf {
    common::asset("dem_bones_example")
}

/// Longest side of the points' bounding box.
fn size(points: &[Vec3]) -> f32 {
    let (lo, hi) = points
        .iter()
        .fold((Vec3::MAX, Vec3::MIN), |(lo, hi), p| (lo.min(*p), hi.max(*p)));
    (hi - lo).max_element()
}

#[test]
fn dem_bones_cache_reads_as_its_rest_mesh_in_motion() {
    let path = cache();
    let abc = rigml_io::alembic::read(&path).unwrap();
    let seq = &abc.sequence;
    assert_eq!(abc.object, "/Bone/BoneShape");
    assert_eq!(seq.name, "Bone_Anim");
    assert_eq!(seq.frames.len(), 400);
    assert_eq!(seq.frames[0].len(), 754);
    assert_eq!(seq.triangles.len(), 1504);
    assert_eq!(seq.fps, Some(24.0));
    assert!((abc.times[0] - 1.0 / 24.0).abs() < 1e-12 && (abc.times[399] - 400.0 / 24.0).abs() < 1e-9);
    assert!(abc.warnings.is_empty(), "{:?}", abc.warnings);
    assert_eq!(&load_sequence(&path, &SequenceOptions::default()).unwrap(), seq);
    // Frames move, and not all alike.
    assert!(seq.frames[0] != seq.frames[200] && seq.frames[200] != seq.frames[399]);

    // The rest mesh Dem Bones decomposes the cache with: the first frame, vertex for vertex
    // (the cache is in centimetres, with the parent Xform's translation applied), and the
    // same triangles with the same winding.
    let rest = rigml_io::load(&path.with_file_name("Bone_Geom.fbx")).unwrap().mesh;
    let scale = size(&rest.positions);
    let worst = |f: usize| {
        assert_eq!(rest.positions.len(), seq.frames[f].len());
        seq.frames[f]
            .iter()
            .zip(&rest.positions)
            .map(|(a, b)| (*a / 100.0 - *b).length() / scale)
            .fold(0.0f32, f32::max)
    };
    // Measured: 4.1e-5 of the size (the FBX's rest mesh is not bit for bit the cache's first
    // sample), against 2.8e-4 for the second frame.
    let (first, second) = (worst(0), worst(1));
    assert!(
        first < 1e-4 && first < second / 4.0,
        "first frame vs Bone_Geom.fbx: {first} (second: {second})"
    );
    // Same winding: Bone_Geom.fbx splits some quads along the other diagonal, so compare
    // area-weighted vertex normals (on the FBX's positions) rather than triangles.
    let normals = |triangles: &[[u32; 3]]| {
        let mut n = vec![Vec3::ZERO; rest.positions.len()];
        for t in triangles {
            let [a, b, c] = t.map(|i| rest.positions[i as usize]);
            let face = (b - a).cross(c - a);
            for i in t {
                n[*i as usize] += face;
            }
        }
        n
    };
    assert_eq!(seq.triangles.len(), rest.triangles.len());
    let dots: Vec<f32> = normals(&seq.triangles)
        .iter()
        .zip(normals(&rest.triangles))
        .map(|(a, b)| a.normalize_or_zero().dot(b.normalize_or_zero()))
        .collect();
    let mean = dots.iter().sum::<f32>() / dots.len() as f32;
    let least = dots.iter().copied().fold(1.0f32, f32::min);
    eprintln!(
        "vs Bone_Geom.fbx: first frame within {first:.1e} of the size (second {second:.1e}); \
         vertex normals agree: least cosine {least:.3}, mean {mean:.4}"
    );
    assert!(
        least > 0.5 && mean > 0.99,
        "vertex normals vs Bone_Geom.fbx: least {least}, mean {mean}"
    );
}

#[test]
fn abc_is_a_sequence_not_a_character_and_damage_is_an_error() {
    let path = cache();
    let e = rigml_io::load(&path).unwrap_err().to_string();
    assert!(
        e.contains("Bone_Anim.abc") && e.contains("mesh sequence") && e.contains("rigml decompose"),
        "{e}"
    );
    let dir = tempfile::tempdir().unwrap();
    let character = rigml_io::load(&path.with_file_name("Bone_Geom.fbx")).unwrap();
    let out = dir.path().join("x.abc");
    let e = rigml_io::save(&character, &out, Default::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("writing Alembic is not supported"), "{e}");
    assert!(!out.exists());

    let bytes = std::fs::read(&path).unwrap();
    for k in 0..64 {
        let n = bytes.len() * k / 64;
        let e = rigml_io::alembic::read_bytes(&bytes[..n], &path)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with(&path.display().to_string()), "{e}");
    }
    // The last bytes are the root group and the archive's header blocks: damage each of them.
    for i in bytes.len() - 1200..bytes.len() {
        let mut b = bytes.clone();
        b[i] ^= 0xa5;
        let _ = rigml_io::alembic::read_bytes(&b, &path);
    }
}

/// Blender's positions (Z up) back in Alembic's Y-up axes.
fn from_blender(p: &Value) -> Vec3 {
    let c = |i: usize| p[i].as_f64().expect("a coordinate") as f32;
    Vec3::new(c(0), c(2), -c(1))
}

#[test]
fn blender_reads_the_same_cache() {
    let Some(python) = std::env::var_os("RIGML_BPY") else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but RIGML_BPY is not: .ci/run installs bpy and sets it"
        );
        eprintln!("skipped: set RIGML_BPY to a Python with bpy (tools/blender/README.md) to compare with Blender");
        return;
    };
    let path = cache();
    let abc = rigml_io::alembic::read(&path).unwrap();
    let seq = &abc.sequence;
    let picked = [0, seq.frames.len() / 2, seq.frames.len() - 1];
    let times: Vec<String> = picked.iter().map(|&f| format!("{:.17}", abc.times[f])).collect();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/blender/abc_check.py");
    let o = Command::new(&python)
        .arg(&script)
        .arg(&path)
        .arg("--times")
        .arg(times.join(","))
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", Path::new(&python).display()));
    let stdout = String::from_utf8_lossy(&o.stdout);
    // The importer prints its own lines; the JSON is the last line.
    let json = stdout.lines().rev().find(|l| l.starts_with('{')).unwrap_or_else(|| {
        panic!(
            "abc_check.py printed no JSON; stdout:\n{stdout}\nstderr:\n{}",
            String::from_utf8_lossy(&o.stderr)
        )
    });
    let blender: Value = serde_json::from_str(json).unwrap();
    assert!(o.status.success(), "{blender}");
    let fps = seq.fps.unwrap() as f64;
    assert_eq!(blender["fps"].as_f64(), Some(fps));
    assert_eq!(blender["frame_start"].as_f64(), Some((abc.times[0] * fps).round()));
    assert_eq!(
        blender["frame_end"].as_f64(),
        Some((abc.times[seq.frames.len() - 1] * fps).round())
    );
    let objects = blender["objects"].as_array().expect("objects");
    assert_eq!(objects.len(), 1, "{}", blender["objects"]);
    let object = &objects[0];
    assert_eq!(object["vertices"].as_u64(), Some(seq.frames[0].len() as u64));
    assert_eq!(object["triangles"].as_u64(), Some(seq.triangles.len() as u64));

    // Our triangles, polygon by polygon (fans of n - 2), go around each of Blender's polygons
    // in its direction.
    let polygons = object["polygon_vertices"].as_array().expect("polygons");
    let mut triangles = seq.triangles.iter();
    for (i, polygon) in polygons.iter().enumerate() {
        let corners: Vec<u32> = polygon
            .as_array()
            .expect("a polygon")
            .iter()
            .map(|v| v.as_u64().expect("an index") as u32)
            .collect();
        let n = corners.len();
        for _ in 0..n - 2 {
            let t = triangles.next().expect("a triangle per polygon fan");
            let at: Vec<usize> = t
                .iter()
                .map(|v| corners.iter().position(|c| c == v).expect("a corner of the polygon"))
                .collect();
            let turns = (at[1] + n - at[0]) % n + (at[2] + n - at[1]) % n + (at[0] + n - at[2]) % n;
            assert_eq!(turns, n, "polygon {i} {corners:?}: triangle {t:?} winds the other way");
        }
    }
    assert!(triangles.next().is_none());

    let scale = size(&seq.frames[0]);
    let mut worst = 0.0f32;
    for (frame, &f) in object["frames"].as_array().expect("frames").iter().zip(&picked) {
        let positions = frame["positions"].as_array().expect("positions");
        assert_eq!(positions.len(), seq.frames[f].len());
        for (p, ours) in positions.iter().zip(&seq.frames[f]) {
            worst = worst.max((from_blender(p) - *ours).length() / scale);
        }
    }
    eprintln!(
        "Blender {} vs rigml: frames {picked:?}, worst position difference {worst:.2e} of the mesh size",
        blender["blender"]
    );
    assert!(
        worst < 1e-5,
        "positions differ from Blender's by {worst} of the mesh size"
    );
}
