//! Every OBJ frame of the manifest's `obj_frames` sequences reads with the manifest's vertex and
//! triangle counts, and the MakeHuman base mesh reads with its vertex groups. Writing and
//! re-reading a frame gives the same mesh.

use rigml_io::obj;
use std::path::PathBuf;

mod common;

use common::data_dir;

fn manifest_rows(format: &str) -> Vec<common::Row> {
    common::rows_where("format", format)
}

#[test]
fn every_sequence_frame_matches_its_row() {
    let rows = manifest_rows("obj_frames");
    assert_eq!(rows.len(), 6);
    for row in rows {
        let id = &row["id"];
        let dir = data_dir().join(&row["path"]);
        let mut frames: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "obj"))
            .collect();
        frames.sort();
        let frame_count = frames
            .iter()
            .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("frame_"))
            .count();
        assert_eq!(frame_count.to_string(), row["frames"], "{id}: frames");
        let mut first_triangles = None;
        for path in &frames {
            let c = rigml_io::load(path).unwrap();
            assert_eq!(c.mesh.vertex_count().to_string(), row["vertices"], "{}", path.display());
            assert_eq!(
                c.mesh.triangle_count().to_string(),
                row["triangles"],
                "{}",
                path.display()
            );
            assert!(c.skeleton.is_empty() && c.skin.is_none());
            // Every frame shares one connectivity.
            let tris = first_triangles.get_or_insert_with(|| c.mesh.triangles.clone());
            assert_eq!(&c.mesh.triangles, tris, "{}: connectivity differs", path.display());
        }
        let c = obj::read(&frames[0]).unwrap();
        let back = obj::from_bytes(obj::to_obj(&c).as_bytes(), &frames[0]).unwrap();
        assert_eq!(back.mesh, c.mesh, "{id}: write → read");
        println!(
            "{id}: {} OBJ files, {} verts, {} tris, uvs {}, normals {}",
            frames.len(),
            c.mesh.vertex_count(),
            c.mesh.triangle_count(),
            c.mesh.uvs.len(),
            c.mesh.normals.len()
        );
    }
}

#[test]
fn makehuman_base_mesh_has_its_groups() {
    let path = data_dir().join("characters/makehuman/base.obj");
    let file = obj::parse(&std::fs::read(&path).unwrap(), &path).unwrap();
    assert_eq!(file.mesh.vertex_count(), 19158);
    assert_eq!(file.mesh.triangle_count(), 36972, "18486 quads, fan-triangulated");
    // 21334 texture coordinates for 19158 vertices: seams, so no per-vertex uvs.
    assert!(file.mesh.uvs.is_empty());
    assert_eq!(file.groups.len(), 139);
    let cube = file.group("joint-head").unwrap();
    assert_eq!(cube.len(), 8, "a joint helper is a cube");
    assert!(file.group("body").unwrap().len() > 13000);
}
