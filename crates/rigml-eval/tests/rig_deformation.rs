//! The end-to-end deformation error of skinned riggers (`rig_deform_*`, rigml-eval's
//! `rig_deformation` module) through the evaluation runner on a real asset: the artist's rig
//! returned as the prediction scores 0, the artist's skeleton with other weights scores what
//! METRICS.md §3 gives those weights, a moved skeleton scores more than 0, and a skin that
//! fails leaves the columns empty with a note while the skeleton metrics stand.

use glam::Vec3;
use rigml_core::{Character, Skeleton, Transform};
use rigml_eval::report::METRICS;
use rigml_eval::{Dataset, Method, Options, Progress};

#[path = "../../rigml-io/tests/common/mod.rs"]
mod common;

const ASSET: &str = "khronos-riggedfigure";

fn artist() -> Character {
    rigml_io::load(&common::asset(ASSET)).unwrap()
}

/// Every joint of `skeleton` moved by `d` in model space.
fn shifted(mut skeleton: Skeleton, d: Vec3) -> Skeleton {
    let world = skeleton.bind_world();
    for (j, p) in skeleton.parents.clone().iter().enumerate() {
        if p.is_none() {
            let t = &mut skeleton.rest_local[j];
            *t = Transform {
                translation: t.translation + d,
                ..*t
            };
        }
    }
    for (j, m) in world.iter().enumerate() {
        skeleton.inverse_bind[j] = (glam::Mat4::from_translation(d) * *m).inverse();
    }
    skeleton
}

#[test]
fn skinned_riggers_get_the_end_to_end_deformation_error() {
    let dataset = Dataset::open(&common::data_dir()).unwrap();
    let rows: Vec<_> = dataset.rows.iter().filter(|r| r.id == ASSET).collect();
    assert_eq!(rows.len(), 1);
    let (_, scale) = rigml_eval::deformation::normalisation(&artist().mesh.positions).unwrap();
    let d = Vec3::new(0.02 / scale, 0.0, 0.0);
    let artist_skin = |c: &Character| {
        assert!(
            c.skin.is_none() && !c.skeleton.is_empty(),
            "the skin sees the placed skeleton"
        );
        Ok(artist().skin.unwrap())
    };
    // Every vertex bound rigidly to joint 0 (the root, which random poses keep still): far from
    // the artist's weights.
    let rigid = |c: &Character| {
        rigml_core::Skin::rigid(&vec![0; c.mesh.vertex_count()], c.skeleton.joint_count()).map_err(|e| e.to_string())
    };
    let methods = vec![
        Method::skinned_rigger("perfect", |_| Ok(artist().skeleton), artist_skin),
        Method::skinned_rigger("rigid", |_| Ok(artist().skeleton), rigid),
        Method::skinned_rigger("shifted", move |_| Ok(shifted(artist().skeleton, d)), artist_skin),
        Method::skinned_rigger("no-skin", |_| Ok(artist().skeleton), |_| Err("no skin".into())),
        Method::rigger("unskinned", |_| Ok(artist().skeleton)),
        Method::solver(
            "rigid-weights",
            rigml_eval::robustness::Declared {
                cap: 4,
                ignores_end_sites: false,
            },
            rigid,
        ),
    ];
    let report = rigml_eval::evaluate(&rows, &methods, &Options::default(), &mut |_: Progress| {});
    let get = |method: &str, metric: &str| {
        let m = METRICS.iter().find(|m| m.name == metric).unwrap();
        report.values(method, m)
    };
    let perfect = get("perfect", "rig_deform_a_max");
    assert_eq!(perfect.len(), 1);
    assert!(perfect[0] < 1e-5, "{perfect:?}");
    // The artist's skeleton with rigid weights: exactly §3's number for those weights.
    for stat in ["mean", "max", "p95"] {
        let (a, b) = (
            get("rigid", &format!("rig_deform_a_{stat}")),
            get("rigid-weights", &format!("deform_a_{stat}")),
        );
        assert_eq!(a.len(), 1);
        assert!(a[0] > 0.01 && (a[0] - b[0]).abs() < 1e-6, "{stat}: {a:?} vs {b:?}");
    }
    // A skeleton moved by 0.02 with the artist's weights bends about the wrong pivots.
    let moved = get("shifted", "rig_deform_a_mean")[0];
    assert!(moved > 1e-3 && moved < 0.1, "{moved}");
    assert!(get("shifted", "cd_j2j")[0] > 0.0);
    // No skin, or no skinning asked for: the skeleton metrics stand, the rig columns are empty.
    for method in ["no-skin", "unskinned"] {
        assert!(get(method, "rig_deform_a_mean").is_empty(), "{method}");
        assert_eq!(get(method, "cd_j2j"), vec![0.0], "{method}");
        assert_eq!(report.failure_count(method), 0);
    }
    let note = &report.of("no-skin").next().unwrap().notes;
    assert!(note.iter().any(|n| n.contains("rig skin: no skin")), "{note:?}");
    let csv = report.per_asset_csv();
    assert!(csv
        .lines()
        .next()
        .unwrap()
        .contains(",rig_deform_a_mean,rig_deform_a_max,rig_deform_a_p95,"));
    let summary = rigml_eval::summary::summary_md(&report);
    assert!(summary.contains("## rig_deform_a_p95 (lower is better)"), "{summary}");
}
