//! Our reading of every manifest GLB agrees with glTF's own semantics, computed independently
//! with the `gltf` crate: joint world matrices equal the nodes' global transforms, and linear
//! blend skinning of our mesh in the rest pose puts every vertex where glTF skinning
//! (`sum w * global(joint) * IBM * x`, the mesh node's own transform ignored) puts it.

mod common;

use glam::{Mat4, Vec3};
use rigml_core::{lbs, skinning_matrices, Pose};
use rigml_io::gltf::{self as reader, ReadOptions};
use std::collections::HashMap;

/// Global matrices of the default scene's nodes, and its skinned mesh nodes in depth-first order.
fn globals(doc: &gltf::Document) -> (HashMap<usize, Mat4>, Vec<usize>) {
    let mut global = HashMap::new();
    let mut skinned = Vec::new();
    let scene = doc.default_scene().or_else(|| doc.scenes().next()).expect("a scene");
    let mut stack: Vec<(gltf::Node, Mat4)> = scene.nodes().map(|n| (n, Mat4::IDENTITY)).collect();
    stack.reverse();
    while let Some((node, above)) = stack.pop() {
        let g = above * Mat4::from_cols_array_2d(&node.transform().matrix());
        global.insert(node.index(), g);
        if node.mesh().is_some() && node.skin().is_some() {
            skinned.push(node.index());
        }
        let children: Vec<_> = node.children().collect();
        stack.extend(children.into_iter().rev().map(|c| (c, g)));
    }
    (global, skinned)
}

#[test]
fn joints_and_skinned_rest_positions_match_gltf_semantics() {
    let (mut files, mut joints_checked, mut vertices_checked, mut overall) = (0, 0, 0, 0f32);
    for row in common::rows_with_format(&["glb"]) {
        let id = row.id().to_string();
        let bytes = std::fs::read(row.path()).unwrap();
        let file = gltf::Gltf::from_slice_without_validation(&bytes).unwrap();
        let blob = file.blob.as_deref();
        let c = reader::read_with(&row.path(), ReadOptions { repair: true })
            .unwrap()
            .character;
        let (global, skinned) = globals(&file.document);

        // Joint world matrices = node global transforms (joints matched by unique name).
        let mut names: HashMap<&str, Vec<usize>> = HashMap::new();
        for n in file.document.nodes() {
            names.entry(n.name().unwrap_or("")).or_default().push(n.index());
        }
        let world = c.skeleton.rest_world();
        let size = c.size();
        for (j, name) in c.skeleton.names.iter().enumerate() {
            let Some([node]) = names.get(name.as_str()).map(Vec::as_slice) else {
                continue;
            };
            let g = global[node];
            let scale = g.to_cols_array().iter().fold(1f32, |s, x| s.max(x.abs()));
            assert!(
                world[j].abs_diff_eq(g, 1e-4 * scale),
                "{id}: joint {name}: {:?} vs {g:?}",
                world[j]
            );
            joints_checked += 1;
        }

        // Rest-pose skinning of every vertex, ours vs the file's.
        let skin = c.skin.as_ref().unwrap();
        let ours = lbs(
            &c.mesh.positions,
            skin,
            &skinning_matrices(&c.skeleton, &Pose::rest(&c.skeleton)).unwrap(),
        );
        let mut v = 0;
        let mut worst = 0f32;
        for &n in &skinned {
            let node = file.document.nodes().nth(n).unwrap();
            let gskin = node.skin().unwrap();
            let ibm: Vec<Mat4> = match gskin.reader(|_| blob).read_inverse_bind_matrices() {
                Some(m) => m.map(|m| Mat4::from_cols_array_2d(&m)).collect(),
                None => vec![Mat4::IDENTITY; gskin.joints().count()],
            };
            let joint_mats: Vec<Mat4> = gskin.joints().zip(&ibm).map(|(j, m)| global[&j.index()] * *m).collect();
            for prim in node.mesh().unwrap().primitives() {
                let r = prim.reader(|_| blob);
                let positions: Vec<[f32; 3]> = r.read_positions().unwrap().collect();
                let joints: Vec<[u16; 4]> = r.read_joints(0).unwrap().into_u16().collect();
                let weights: Vec<[f32; 4]> = r.read_weights(0).unwrap().into_f32().collect();
                for k in 0..positions.len() {
                    let (w, js) = (weights[k], joints[k]);
                    let sum: f32 = w.iter().sum();
                    if sum.is_finite() && sum > 1e-8 {
                        let x = Vec3::from(positions[k]);
                        let expect: Vec3 = (0..4)
                            .filter(|&i| w[i] != 0.0)
                            .map(|i| joint_mats[js[i] as usize].transform_point3(x) * (w[i] / sum))
                            .sum();
                        worst = worst.max((ours[v] - expect).length());
                        vertices_checked += 1;
                    }
                    v += 1;
                }
            }
        }
        assert_eq!(v, c.mesh.vertex_count(), "{id}: vertex count");
        let posed_size = ours.iter().fold(0f32, |m, p| m.max(p.abs().max_element())).max(size);
        assert!(
            worst <= 1e-4 * posed_size,
            "{id}: skinned rest positions differ by {worst} (size {posed_size})"
        );
        overall = overall.max(worst / posed_size);
        files += 1;
    }
    assert!(
        files >= 70 && joints_checked > 1000,
        "{files} files, {joints_checked} joints checked"
    );
    println!(
        "{files} files: {joints_checked} joint world matrices and {vertices_checked} skinned vertices agree; \
         worst vertex error {overall:e} of the character's size"
    );
}
