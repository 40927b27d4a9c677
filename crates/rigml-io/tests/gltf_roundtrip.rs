//! Every GLB character of the manifest: read, write back as GLB, read again, and get the same
//! character; counts are compared with the manifest columns.

mod common;

use rigml_core::{ChannelValues, Character};
use rigml_io::gltf::{self, ReadOptions};

/// Read strictly; a file refused only for NaN weights is read again with repair.
/// Whether the file's glTF document (read by the `gltf` crate, not by rigml) gives some
/// primitive a material, and some material a base colour texture.
fn materials_in_document(row: &common::Row) -> (bool, bool) {
    let path = row.path();
    let doc = ::gltf::Gltf::open(&path).unwrap_or_else(|e| panic!("{}: gltf crate: {e}", row.id()));
    let material = doc
        .meshes()
        .flat_map(|m| m.primitives())
        .any(|p| p.material().index().is_some());
    let texture = doc
        .materials()
        .any(|m| m.pbr_metallic_roughness().base_color_texture().is_some());
    (material, texture)
}

fn read_glb(row: &common::Row) -> (Character, Vec<String>) {
    let path = row.path();
    match gltf::read(&path) {
        Ok(c) => (c, Vec::new()),
        Err(e) if e.to_string().contains("NaN") => {
            let outcome = gltf::read_with(&path, ReadOptions { repair: true })
                .unwrap_or_else(|e| panic!("{}: repair failed: {e}", row.id()));
            assert!(!outcome.warnings.is_empty(), "{}: repaired without a warning", row.id());
            (outcome.character, outcome.warnings)
        }
        Err(e) => panic!("{}: {e}", row.id()),
    }
}

/// Equal to float rounding (relative 1e-6, or 1e-9 absolute near zero).
fn close(a: glam::Vec3, b: glam::Vec3) -> bool {
    (a - b).abs().max_element() <= 1e-6 * a.abs().max_element().max(b.abs().max_element()) + 1e-9
}

fn assert_same(id: &str, a: &Character, b: &Character) {
    assert_eq!(a.mesh.positions, b.mesh.positions, "{id}: positions");
    assert_eq!(a.mesh.triangles, b.mesh.triangles, "{id}: triangles");
    assert_eq!(a.mesh.parts.len(), b.mesh.parts.len(), "{id}: parts");
    assert_eq!(a.mesh.uvs, b.mesh.uvs, "{id}: uvs");
    assert_eq!(a.mesh.materials, b.mesh.materials, "{id}: materials");
    assert_eq!(a.mesh.images, b.mesh.images, "{id}: images");
    assert_eq!(a.attachments.len(), b.attachments.len(), "{id}: attachments");
    for (x, y) in a.attachments.iter().zip(&b.attachments) {
        assert_eq!((&x.name, x.joint), (&y.name, y.joint), "{id}: attachment");
        assert_eq!(x.mesh, y.mesh, "{id}: attachment {} mesh", x.name);
        assert!(
            x.local.abs_diff_eq(y.local, 1e-5),
            "{id}: attachment {} transform",
            x.name
        );
    }
    let material_of = |c: &Character| c.mesh.parts.iter().map(|p| p.material).collect::<Vec<_>>();
    assert_eq!(material_of(a), material_of(b), "{id}: part materials");
    let (sa, sb) = (&a.skeleton, &b.skeleton);
    assert_eq!(sa.names, sb.names, "{id}: joint names");
    assert_eq!(sa.parents, sb.parents, "{id}: parents");
    // Roots' rest transforms and channels pass through a division by the lifted common scale
    // (see the writer): equal to float rounding, not bit for bit.
    for (j, (x, y)) in sa.rest_local.iter().zip(&sb.rest_local).enumerate() {
        assert!(
            close(x.translation, y.translation)
                && close(x.scale, y.scale)
                && x.rotation.dot(y.rotation).abs() > 1.0 - 1e-6,
            "{id}: rest transform of joint {j}: {x:?} vs {y:?}"
        );
    }
    assert_eq!(sa.inverse_bind, sb.inverse_bind, "{id}: inverse bind matrices");
    match (&a.skin, &b.skin) {
        (Some(ka), Some(kb)) => {
            assert_eq!(ka.vertex_count(), kb.vertex_count(), "{id}: skin rows");
            for (v, (ra, rb)) in ka.rows().zip(kb.rows()).enumerate() {
                assert_eq!(ra.len(), rb.len(), "{id}: vertex {v} influence count");
                for i in ra {
                    let other = rb.iter().find(|x| x.joint == i.joint);
                    let w = other.map_or(f32::NAN, |x| x.weight);
                    assert!(
                        (w - i.weight).abs() <= 1e-6,
                        "{id}: vertex {v} joint {}: {} vs {w}",
                        i.joint,
                        i.weight
                    );
                }
            }
        }
        (None, None) => {}
        _ => panic!("{id}: skin present on one side only"),
    }
    let clips_a: Vec<_> = a
        .clips
        .iter()
        .filter(|c| c.channels.iter().any(|ch| !ch.times.is_empty()))
        .collect();
    assert_eq!(clips_a.len(), b.clips.len(), "{id}: clips");
    for (ca, cb) in clips_a.iter().zip(&b.clips) {
        assert_eq!(ca.name, cb.name, "{id}: clip name");
        let channels: Vec<_> = ca.channels.iter().filter(|c| !c.times.is_empty()).collect();
        assert_eq!(channels.len(), cb.channels.len(), "{id}: clip {} channels", ca.name);
        for (x, y) in channels.iter().zip(&cb.channels) {
            assert_eq!(
                (x.joint, x.interpolation, &x.times),
                (y.joint, y.interpolation, &y.times),
                "{id}: clip {}",
                ca.name
            );
            let same = match (&x.values, &y.values) {
                (ChannelValues::Translation(u), ChannelValues::Translation(v))
                | (ChannelValues::Scale(u), ChannelValues::Scale(v)) => {
                    u.len() == v.len() && u.iter().zip(v).all(|(a, b)| close(*a, *b))
                }
                (ChannelValues::Rotation(u), ChannelValues::Rotation(v)) => u == v,
                _ => false,
            };
            assert!(same, "{id}: clip {} channel of joint {}", ca.name, x.joint);
        }
    }
}

#[test]
fn every_manifest_glb_round_trips_and_matches_the_manifest_counts() {
    let rows = common::rows_with_format(&["glb"]);
    assert!(
        rows.len() >= 70,
        "expected the ~73 GLB characters, found {}",
        rows.len()
    );
    println!(
        "{:<42} {:>13} {:>13} {:>7} {:>7} {:>7}  notes",
        "id", "vertices", "triangles", "joints", "infl", "clips"
    );
    let mut mismatches = Vec::new();
    let (mut with_materials, mut textured, mut attached) = (0, 0, Vec::new());
    let mut material_mismatches = Vec::new();
    for row in &rows {
        let (c, warnings) = read_glb(row);
        let ours = (
            c.mesh.parts.iter().any(|p| p.material.is_some()),
            c.mesh.materials.iter().any(|m| m.base_color_texture.is_some()),
        );
        let theirs = materials_in_document(row);
        if ours != theirs {
            material_mismatches.push(format!(
                "{}: (material, texture) ours {ours:?}, gltf crate {theirs:?}",
                row.id()
            ));
        }
        with_materials += usize::from(ours.0);
        textured += usize::from(ours.1);
        if !c.attachments.is_empty() {
            attached.push((row.id().to_string(), c.attachments.len()));
        }
        let path = row.path();
        let glb = gltf::to_glb(&c, &path).unwrap_or_else(|e| panic!("{}: write: {e}", row.id()));
        let back = gltf::from_bytes(&glb, &path).unwrap_or_else(|e| panic!("{}: re-read: {e}", row.id()));
        assert_same(row.id(), &c, &back);

        let ours = [
            c.mesh.vertex_count(),
            c.mesh.triangle_count(),
            c.skeleton.joint_count(),
            c.skin.as_ref().map_or(0, |s| s.influences_max()),
            c.clips.len(),
        ];
        let columns = ["vertices", "triangles", "joints", "influences_max", "clips"];
        let theirs: Vec<Option<usize>> = columns.iter().map(|k| row.count(k)).collect();
        let cell = |k: usize| match theirs[k] {
            Some(t) if t == ours[k] => format!("{}", ours[k]),
            Some(t) => {
                mismatches.push(format!("{} {}: ours {} manifest {t}", row.id(), columns[k], ours[k]));
                format!("{}≠{t}", ours[k])
            }
            None => format!("{}/-", ours[k]),
        };
        let cells: Vec<String> = (0..5).map(cell).collect();
        println!(
            "{:<42} {:>13} {:>13} {:>7} {:>7} {:>7}  {}",
            row.id(),
            cells[0],
            cells[1],
            cells[2],
            cells[3],
            cells[4],
            warnings.join("; ")
        );
    }
    // Materials and base colour textures (KayKit's atlases, the Khronos Fox and CesiumMan, the
    // Quaternius mechs, ...) are read wherever the gltf crate's document has them.
    println!("{with_materials} with materials, {textured} textured");
    assert!(with_materials > 0 && textured > 0, "materials and textures are read");
    assert!(material_mismatches.is_empty(), "{material_mismatches:#?}");
    // Unskinned meshes under joints: KayKit's first adventurers' props (swords, shields, a
    // spellbook, the mage's hat and cape) and the stag's horns.
    let attached: Vec<(&str, usize)> = attached.iter().map(|(id, n)| (id.as_str(), *n)).collect();
    assert_eq!(
        attached,
        [
            ("kaykit1-knight", 9),
            ("kaykit1-mage", 6),
            ("quaternius-animals-stag", 1)
        ],
        "attachments are read"
    );
    println!("{} disagreements with the manifest", mismatches.len());
    for m in &mismatches {
        println!("  {m}");
    }
    assert!(
        mismatches.is_empty(),
        "counts disagree with the manifest: {mismatches:?}"
    );
}
