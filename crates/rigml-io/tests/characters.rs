//! Every `character` row of the shared manifest loads, and what we read agrees with the file:
//! vertex, triangle, joint, influence and clip counts equal the manifest's survey (measured
//! independently in Python with pygltflib / ufbx / json), weights are normalised, skeletons are
//! acyclic and parents-first.

mod common;

#[test]
fn every_manifest_character_loads_with_the_surveyed_counts() {
    let rows: Vec<_> = common::manifest().into_iter().filter(|r| r.get("kind") == "character").collect();
    assert!(rows.len() >= 80, "manifest lists {} characters", rows.len());
    const COLUMNS: [&str; 5] = ["vertices", "triangles", "joints", "influences_max", "clips"];
    let mut failures = Vec::new();
    println!("{:<42} {:>7} {:>7} {:>5} {:>4} {:>5}  warnings", "id", "verts", "tris", "jnts", "inf", "clips");
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
                failures.push(format!("{}: {column}: ours {ours}, manifest {:?}", row.id(), row.count(column)));
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
        if let Some(j) = c.skeleton.parents.iter().enumerate().position(|(j, p)| p.is_some_and(|p| p >= j)) {
            failures.push(format!("{}: joint {j} comes before its parent", row.id()));
        }
        if let Err(e) = c.validate() {
            failures.push(format!("{}: {e}", row.id()));
        }
    }
    assert!(failures.is_empty(), "{} problems:\n{}", failures.len(), failures.join("\n"));
}
