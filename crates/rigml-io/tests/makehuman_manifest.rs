//! The four MakeHuman rigs in the data manifest: mesh, joint and influence counts match their
//! rows (and the counts the notes give), and every joint sits inside the body.

mod common;

use common::data_dir;

fn manifest_rows(format: &str) -> Vec<common::Row> {
    common::rows_where("format", format)
}

/// The number in front of `suffix` in the notes, e.g. `139` from `139 bones carry weights`.
fn noted(notes: &str, suffix: &str) -> usize {
    let before = &notes[..notes.find(suffix).unwrap_or_else(|| panic!("'{suffix}' not in notes"))];
    before.split_whitespace().last().unwrap().parse().unwrap()
}

#[test]
fn every_makehuman_rig_matches_its_row() {
    let rows = manifest_rows("makehuman");
    assert_eq!(rows.len(), 4);
    for row in rows {
        let id = &row["id"];
        let path = data_dir().join(&row["path"]);
        let started = std::time::Instant::now();
        let c = rigml_io::load(&path).unwrap();
        let read_ms = started.elapsed().as_secs_f64() * 1e3;
        let skin = c.skin.as_ref().unwrap();
        assert_eq!(c.mesh.vertex_count().to_string(), row["vertices"], "{id}: vertices");
        assert_eq!(c.mesh.triangle_count().to_string(), row["triangles"], "{id}: triangles");
        assert_eq!(c.skeleton.joint_count().to_string(), row["joints"], "{id}: joints");
        assert_eq!(
            skin.influences_max().to_string(),
            row["influences_max"],
            "{id}: influences_max"
        );
        let weighted = c.mesh.vertex_count() - skin.unskinned_count();
        assert_eq!(
            weighted,
            noted(&row["notes"], "of 19158 verts weighted"),
            "{id}: weighted vertices"
        );
        let mut used = vec![false; c.skeleton.joint_count()];
        for r in skin.rows() {
            for i in r {
                used[i.joint as usize] = true;
            }
        }
        let used = used.iter().filter(|u| **u).count();
        assert_eq!(
            used,
            noted(&row["notes"], "bones carry weights"),
            "{id}: bones with weight"
        );

        // Joints lie inside the body's bounds (a misplaced joint or an axis swap would not).
        let (lo, hi) = c.mesh.bounds().unwrap();
        let roots: Vec<usize> = (0..c.skeleton.joint_count())
            .filter(|&j| c.skeleton.parents[j].is_none())
            .collect();
        // The OpenPose rig has no pelvis joint above its hips: LHip, MidHip and RHip are roots.
        let expected_roots = if id == "makehuman-openpose" { 3 } else { 1 };
        assert_eq!(roots.len(), expected_roots, "{id}: roots");
        for (j, p) in c.skeleton.bind_positions().iter().enumerate() {
            assert!(
                p.cmpge(lo - 0.01).all() && p.cmple(hi + 0.01).all(),
                "{id}: joint {} at {p} outside the body {lo}..{hi}",
                c.skeleton.names[j]
            );
        }
        let p = c.skeleton.bind_positions();
        let height = |name: &str| c.skeleton.index_of(name).map(|j| p[j].y);
        println!(
            "{id}: {} verts, {} tris, {} joints, influences_max {}, {weighted} weighted, {used} bones with weight; \
             root {} at y={:.2}; head y={:?}; body y {:.2}..{:.2}; read in {read_ms:.0} ms",
            c.mesh.vertex_count(),
            c.mesh.triangle_count(),
            c.skeleton.joint_count(),
            skin.influences_max(),
            c.skeleton.names[roots[0]],
            p[roots[0]].y,
            height("head").or(height("Head")).or(height("Nose")),
            lo.y,
            hi.y
        );
    }
}

/// MPFB places joints by vertex-group cubes (`g joint-*` in base.obj), `.mhskel` by explicit
/// vertex lists; 120 of the 125 cube groups are exactly one of the `.mhskel` lists, so MPFB
/// joints must land on default-rig joints. Expected misses, found by hand in the data:
/// game_engine's Root (`joint-ground`) and ball_l/ball_r (`joint-*-foot-1`), cubes the default
/// rig places no bone head on; cmu_mb's one MEAN-placed joint; openpose's 9 MEAN-placed joints
/// and LSmallToe/RSmallToe (`joint-*-toe-1-3`, a cube no default-rig bone head uses).
#[test]
fn mpfb_cube_joints_coincide_with_mhskel_joints() {
    let dir = data_dir().join("characters/makehuman");
    let default = rigml_io::load(&dir.join("rig_default.json")).unwrap();
    let reference = default.skeleton.bind_positions();
    for (rig, expected) in [
        ("rig_game_engine.json", 50),
        ("rig_cmu_mb.json", 30),
        ("rig_openpose.json", 13),
    ] {
        let c = rigml_io::load(&dir.join(rig)).unwrap();
        let mut matched = 0;
        for p in c.skeleton.bind_positions() {
            let d = reference
                .iter()
                .map(|q| (p - *q).length())
                .fold(f32::INFINITY, f32::min);
            if d < 1e-4 {
                matched += 1;
            }
        }
        println!(
            "{rig}: {matched} of {} joints on a default-rig joint",
            c.skeleton.joint_count()
        );
        assert_eq!(matched, expected, "{rig}");
    }
}
