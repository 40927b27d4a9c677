//! Humanoid mapping on the real assets: every BVH clip and the humanoid characters of the
//! train and val splits must map, with each limb's joints named like their role.

#[path = "../../rigml-io/tests/common/mod.rs"]
mod common;

use rigml_anim::humanoid::{map_humanoid, ChainKind, Role};

fn describe(names: &[String], map: &rigml_anim::humanoid::HumanoidMap) -> String {
    let roles: Vec<String> = map
        .roles()
        .iter()
        .map(|(r, j)| format!("{}={}", r.name(), names[*j]))
        .collect();
    let spine = map.chain(ChainKind::Spine).len();
    let neck = map.chain(ChainKind::Neck).len();
    format!("spine {spine} neck {neck}: {}", roles.join(" "))
}

#[test]
fn every_bvh_clip_maps() {
    let rows = common::rows_where("kind", "motion");
    assert!(rows.len() >= 10, "expected the BVH clips in the manifest");
    for row in rows {
        let c = rigml_io::load(&row.path()).unwrap_or_else(|e| panic!("{}: {e}", row.id()));
        let map = map_humanoid(&c.skeleton).unwrap_or_else(|e| panic!("{}: {e}", row.id()));
        println!("{}: {}", row.id(), describe(&c.skeleton.names, &map));
        for (role, words) in [
            (Role::LeftFoot, &["foot", "ankle"][..]),
            (Role::RightHand, &["hand", "wrist"][..]),
            (Role::LeftLowerLeg, &["leg", "knee", "shin"][..]),
        ] {
            let name = c.skeleton.names[map.joint(role).unwrap()].to_lowercase();
            assert!(
                words.iter().any(|w| name.contains(w)),
                "{}: {} = {name}",
                row.id(),
                role.name()
            );
        }
    }
}

#[test]
#[ignore = "loads ~30 character files; run to see every humanoid's mapping"]
fn humanoid_characters_map() {
    let mut failed = Vec::new();
    for row in common::manifest() {
        if row.get("kind") != "character" || !row.get("notes").contains("humanoid") || row.get("split") == "test" {
            continue;
        }
        let c = match rigml_io::load(&row.path()) {
            Ok(c) => c,
            Err(e) => {
                println!("{}: load: {e}", row.id());
                continue;
            }
        };
        match map_humanoid(&c.skeleton) {
            Ok(map) => println!("{}: {}", row.id(), describe(&c.skeleton.names, &map)),
            Err(e) => {
                println!("{}: {e}", row.id());
                failed.push(row.id().to_string());
            }
        }
    }
    println!("unmapped: {failed:?}");
}
