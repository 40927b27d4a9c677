//! Every `character` row of the shared manifest loads, and what we read agrees with the file:
//! vertex, triangle, joint, influence and clip counts equal the manifest's survey (measured
//! independently in Python with pygltflib / ufbx / json), weights are normalised, skeletons are
//! acyclic and parents-first.

mod common;

#[test]
fn every_manifest_character_loads_with_the_surveyed_counts() {
    let rows: Vec<_> = common::manifest()
        .into_iter()
        .filter(|r| r.get("kind") == "character")
        .collect();
    assert!(rows.len() >= 80, "manifest lists {} characters", rows.len());
    const COLUMNS: [&str; 5] = ["vertices", "triangles", "joints", "influences_max", "clips"];
    let mut failures = Vec::new();
    println!(
        "{:<42} {:>7} {:>7} {:>5} {:>4} {:>5}  warnings",
        "id", "verts", "tris", "jnts", "inf", "clips"
    );
    for row in &rows {
        let loaded = match rigml_io::load_with_warnings(&row.path()) {
            Ok(loaded) => loaded,
            Err(e) => {
                failures.push(format!("{}: load failed: {e}", row.id()));
                continue;
            }
        };
        let c = &loaded.character;
        let Some(skin) = c.skin.as_ref() else {
            failures.push(format!("{}: no skin", row.id()));
            continue;
        };
        let ours = [
            c.mesh.vertex_count(),
            c.mesh.triangle_count(),
            c.skeleton.joint_count(),
            skin.influences_max(),
            c.clips.len(),
        ];
        println!(
            "{:<42} {:>7} {:>7} {:>5} {:>4} {:>5}  {}",
            row.id(),
            ours[0],
            ours[1],
            ours[2],
            ours[3],
            ours[4],
            loaded.warnings.len()
        );
        for (column, ours) in COLUMNS.iter().zip(ours) {
            if row.count(column) != Some(ours) {
                failures.push(format!(
                    "{}: {column}: ours {ours}, manifest {:?}",
                    row.id(),
                    row.count(column)
                ));
            }
        }
        if let Some((v, sum)) = skin
            .rows()
            .enumerate()
            .filter(|(_, r)| !r.is_empty())
            .map(|(v, r)| (v, r.iter().map(|i| i.weight).sum::<f32>()))
            .find(|(_, sum)| (sum - 1.0).abs() > 1e-5)
        {
            failures.push(format!("{}: vertex {v} weights sum to {sum}", row.id()));
        }
        if let Some(j) = c
            .skeleton
            .parents
            .iter()
            .enumerate()
            .position(|(j, p)| p.is_some_and(|p| p >= j))
        {
            failures.push(format!("{}: joint {j} comes before its parent", row.id()));
        }
        if let Err(e) = c.validate() {
            failures.push(format!("{}: {e}", row.id()));
        }
    }
    assert!(
        failures.is_empty(),
        "{} problems:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Characters converted from other formats (FBX, MakeHuman — one of them with three root joints)
/// come back from GLB with the same vertices, joints and weights.
#[test]
fn converted_characters_round_trip_through_glb() {
    for row in common::rows_with_format(&["fbx", "makehuman"]) {
        let c = rigml_io::load(&row.path()).unwrap_or_else(|e| panic!("{}: {e}", row.id()));
        let glb = rigml_io::gltf::to_glb(&c, &row.path()).unwrap();
        let back = rigml_io::gltf::from_bytes(&glb, &row.path()).unwrap_or_else(|e| panic!("{}: {e}", row.id()));
        assert_eq!(back.mesh.positions, c.mesh.positions, "{}", row.id());
        assert_eq!(back.mesh.triangles, c.mesh.triangles, "{}", row.id());
        assert_eq!(back.skeleton.names, c.skeleton.names, "{}", row.id());
        assert_eq!(back.skeleton.parents, c.skeleton.parents, "{}", row.id());
        let joints = c.skeleton.joint_count();
        let (a, b) = (c.skin.unwrap().to_dense(joints), back.skin.unwrap().to_dense(joints));
        let worst = a.iter().zip(&b).map(|(x, y)| (x - y).abs()).fold(0.0f32, f32::max);
        assert!(worst <= 1e-6, "{}: weights differ by {worst}", row.id());
    }
}

/// The Quaternius Bee ships NaN skin weights on 12 vertices: `load` keeps the file usable, makes
/// exactly those vertices unskinned and says where, rather than failing or hiding it.
#[test]
fn nan_weights_are_repaired_with_a_warning() {
    let row = common::rows_where("id", "quaternius-platformer-game-bee").remove(0);
    let loaded = rigml_io::load_with_warnings(&row.path()).unwrap();
    assert!(
        !loaded.warnings.is_empty() && loaded.warnings.iter().all(|w| w.contains("NaN")),
        "{:?}",
        loaded.warnings
    );
    assert_eq!(loaded.character.skin.unwrap().unskinned_count(), 12);
    assert!(rigml_io::gltf::read(&row.path())
        .unwrap_err()
        .to_string()
        .contains("NaN"));
}
