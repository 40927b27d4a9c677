//! Riggers in the evaluation (METRICS.md §5 and §4): a rigger that returns the artist's own
//! skeleton scores zero on every skeleton metric, one that shifts every joint scores the shift,
//! and empty, non-finite or failing riggers are failures that stay out of the means.

use glam::Vec3;
use rigml_core::{Skeleton, Transform};
use rigml_eval::report::METRICS;
use rigml_eval::{Dataset, Method, Options, Progress};

#[path = "../../rigml-io/tests/common/mod.rs"]
mod common;

const ASSET: &str = "khronos-riggedfigure";

/// The artist's skeleton of the asset, re-read from its file (the rigger only sees the mesh).
fn artist_skeleton() -> Skeleton {
    rigml_io::load(&common::asset(ASSET)).unwrap().skeleton
}

/// `skeleton` with its root moved by `d` in model space (so every joint moves by `d`).
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
fn riggers_are_scored_with_skeleton_metrics_and_failures_counted() {
    let dataset = Dataset::open(&common::data_dir()).unwrap();
    let rows: Vec<_> = dataset.rows.iter().filter(|r| r.id == ASSET).collect();
    assert_eq!(rows.len(), 1);
    let character = rigml_io::load(&rows[0].path).unwrap();
    let (_, scale) = rigml_eval::deformation::normalisation(&character.mesh.positions).unwrap();
    // 0.01 normalised units along x.
    let d = Vec3::new(0.01 / scale, 0.0, 0.0);
    let methods = vec![
        Method::rigger("perfect", |bare| {
            assert!(
                bare.skeleton.is_empty() && bare.skin.is_none(),
                "the rigger sees the bare mesh"
            );
            Ok(artist_skeleton())
        }),
        Method::rigger("shifted", move |_| Ok(shifted(artist_skeleton(), d))),
        Method::rigger("empty", |_| Ok(Skeleton::default())),
        Method::rigger("broken", |_| Err("no idea".into())),
        Method::rigger("nan", |_| Ok(shifted(artist_skeleton(), Vec3::NAN))),
    ];
    let options = Options {
        deformation: false,
        ..Options::default()
    };
    let report = rigml_eval::evaluate(&rows, &methods, &options, &mut |_: Progress| {});
    let get = |method: &str, metric: &str| {
        let m = METRICS.iter().find(|m| m.name == metric).unwrap();
        report.values(method, m)
    };
    assert_eq!(get("perfect", "cd_j2j"), vec![0.0]);
    assert_eq!(get("perfect", "cd_b2b"), vec![0.0]);
    assert_eq!(get("perfect", "joint_count_error_abs"), vec![0.0]);
    for metric in ["cd_j2j", "cd_j2b", "cd_b2b"] {
        let v = get("shifted", metric);
        assert_eq!(v.len(), 1);
        // A pure shift of 0.01: every nearest joint is at most 0.01 away, and at least the
        // part of the shift no other GT joint absorbs; J2J is exactly 0.01 unless joints are
        // closer than 0.01 along x.
        assert!(v[0] > 0.002 && v[0] <= 0.01 + 1e-6, "{metric}: {}", v[0]);
    }
    assert!(get("shifted", "cd_j2j")[0] > get("shifted", "cd_b2b")[0] - 1e-6);
    for (method, cause) in [("empty", "no_joints"), ("broken", "error"), ("nan", "non_finite_joint")] {
        assert_eq!(report.failure_count(method), 1, "{method}");
        let r = report.of(method).next().unwrap();
        assert_eq!(r.failures[0].cause(), cause, "{method}");
        assert!(get(method, "cd_j2j").is_empty());
    }
    // No weight metric for riggers, and summary/CSV carry the skeleton columns.
    assert!(get("perfect", "l1_raw").is_empty());
    let csv = report.per_asset_csv();
    assert!(csv
        .lines()
        .next()
        .unwrap()
        .contains(",cd_j2j,cd_j2b,cd_b2b,joint_count_error_abs,"));
    let summary = rigml_eval::summary::summary_md(&report);
    assert!(summary.contains("## cd_j2j (lower is better)"), "{summary}");
    assert!(!summary.contains("## l1_raw"), "{summary}");
}
