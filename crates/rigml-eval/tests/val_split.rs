//! The evaluation on the real val split (`shared/data/manifest.tsv`): the ground truth scored
//! against itself is perfect on every character that loads, and a perturbed copy (weights of
//! odd-numbered joints moved to their parents) is measurably worse. Also checks that the
//! report files are written and that `per_asset.csv` is byte-identical across two runs.

use rigml_core::{Character, Skin};
use rigml_eval::robustness::Declared;
use rigml_eval::{Dataset, Method, Options, Progress};
use std::collections::HashMap;

use std::sync::Arc;

// The manifest reader the rigml-io integration tests use (one copy, shared by path).
#[path = "../../rigml-io/tests/common/mod.rs"]
mod common;

use common::data_dir;

/// Every weight of an odd-numbered joint that has a parent moves to that parent.
fn perturb(c: &Character, skin: &Skin) -> Skin {
    let rows: Vec<Vec<(u32, f32)>> = skin
        .rows()
        .map(|r| {
            r.iter()
                .map(|i| match c.skeleton.parents[i.joint as usize] {
                    Some(p) if i.joint % 2 == 1 => (p as u32, i.weight),
                    _ => (i.joint, i.weight),
                })
                .collect()
        })
        .collect();
    Skin::from_rows(rows.iter().map(|r| r.as_slice()), c.skeleton.joint_count(), 16).unwrap()
}

#[test]
fn gt_is_perfect_and_perturbed_is_worse_on_val() {
    let dataset = Dataset::open(&data_dir()).unwrap();
    let rows = dataset.select(Some("character"), Some("val"));
    assert!(!rows.is_empty());
    // GT skins for the solver closures (which never see the GT skin), keyed by name and vertex
    // count: `Ranger.glb` and `Ranger.fbx` share the name.
    let key = |c: &Character| format!("{}#{}", c.name, c.mesh.vertex_count());
    let mut skins: HashMap<String, (Character, Skin)> = HashMap::new();
    for r in &rows {
        if let Ok(c) = rigml_io::load(&r.path) {
            if let Some(s) = c.skin.clone() {
                skins.insert(key(&c), (c, s));
            }
        }
    }
    assert!(!skins.is_empty(), "no val character loads");
    let skins = Arc::new(skins);
    let declared = Declared {
        cap: 16,
        ignores_end_sites: false,
    };
    let (a, b) = (skins.clone(), skins.clone());
    let methods = [
        Method::solver("gt", declared, move |c| {
            a.get(&key(c)).map(|s| s.1.clone()).ok_or("unknown".into())
        }),
        Method::solver("perturbed", declared, move |c| {
            b.get(&key(c)).map(|(c, s)| perturb(c, s)).ok_or("unknown".into())
        }),
    ];
    let mut seen = 0;
    let report = rigml_eval::evaluate(&rows, &methods, &Options::default(), &mut |p| {
        if let Progress::Asset { .. } = p {
            seen += 1
        }
    });
    assert_eq!(seen, rows.len());
    assert_eq!(report.results.len(), 2 * skins.len(), "{:?}", report.load_failures);
    let mut worse = 0;
    for r in &report.results {
        if r.method == "gt" {
            assert!(r.failures.is_empty(), "{}: {:?}", r.asset, r.failures);
            for s in [r.raw.unwrap(), r.top4.unwrap()] {
                assert_eq!((s.precision, s.recall, s.l1), (1.0, 1.0, 0.0), "{}", r.asset);
            }
            assert_eq!(r.pool.unwrap().0, 1.0, "{}", r.asset);
            let d = r.deform_random.unwrap();
            assert_eq!((d.mean, d.max, d.p95, d.poses), (0.0, 0.0, 0.0, 10), "{}", r.asset);
            if let Some(d) = r.deform_clips {
                assert_eq!((d.mean, d.max), (0.0, 0.0), "{}", r.asset);
            }
        } else {
            let raw = r.raw.unwrap();
            assert!(raw.l1 >= 0.0 && raw.precision <= 1.0 && raw.recall <= 1.0);
            if raw.l1 > 1e-3 {
                assert!(r.deform_random.unwrap().mean > 0.0, "{}", r.asset);
                worse += 1;
            }
        }
    }
    assert!(worse > 0, "the perturbation changed no asset");

    // Files, and a byte-identical per_asset.csv on a second run.
    let dir = tempfile::tempdir().unwrap();
    let files = rigml_eval::write_report(&report, dir.path(), false).unwrap();
    for name in [
        "per_asset.csv",
        "timing.csv",
        "summary.md",
        "deform_a_p95.png",
        "time_vs_vertices.png",
    ] {
        assert!(files.contains(&dir.path().join(name)), "{name} missing: {files:?}");
    }
    assert!(
        rigml_eval::write_report(&report, dir.path(), false).is_err(),
        "overwrote without force"
    );
    let again = rigml_eval::evaluate(&rows, &methods, &Options::default(), &mut |_| {});
    assert_eq!(report.per_asset_csv(), again.per_asset_csv());
    if let Ok(out) = std::env::var("RIGML_EVAL_OUT") {
        // For a person to look at: `RIGML_EVAL_OUT=/tmp/x cargo test -p rigml-eval --test val_split`.
        rigml_eval::write_report(&report, std::path::Path::new(&out), true).unwrap();
    }
    let summary = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert!(summary.contains("## deform_a_p95"));
}

/// External weights: the GT of every loadable val character exported as `<asset id>.npz`
/// (`external::write_npz`), read back through `ExternalFiles::from_dir` and scored: perfect.
/// An asset without a file is a failure of cause `error`, not a crash.
#[test]
fn external_npz_of_the_gt_scores_perfectly() {
    let dataset = Dataset::open(&data_dir()).unwrap();
    let rows = dataset.select(Some("character"), Some("val"));
    let dir = tempfile::tempdir().unwrap();
    let mut written = Vec::new();
    for r in &rows {
        let Ok(c) = rigml_io::load(&r.path) else { continue };
        let Some(skin) = &c.skin else { continue };
        let path = dir.path().join(format!("{}.npz", r.id));
        rigml_eval::external::write_npz(
            &path,
            &c.skeleton.names,
            &rigml_eval::skin_metrics::rows_of(skin),
            false,
        )
        .unwrap();
        written.push(r.id.clone());
    }
    assert!(!written.is_empty());
    // Leave one asset without its file.
    let missing = written.pop().unwrap();
    std::fs::remove_file(dir.path().join(format!("{missing}.npz"))).unwrap();
    let files = rigml_eval::ExternalFiles::from_dir(dir.path()).unwrap();
    let methods = [Method::external("gt-npz", files)];
    let report = rigml_eval::evaluate(&rows, &methods, &Options::default(), &mut |_| {});
    for r in &report.results {
        if r.asset == missing {
            assert_eq!(r.failures.len(), 1);
            assert_eq!(r.failures[0].cause(), "error");
            continue;
        }
        assert!(r.failures.is_empty(), "{}: {:?}", r.asset, r.failures);
        let s = r.raw.unwrap();
        assert_eq!((s.precision, s.recall), (1.0, 1.0), "{}", r.asset);
        assert!(s.l1 < 1e-5, "{}: {}", r.asset, s.l1);
        assert!(r.deform_random.unwrap().max < 1e-5, "{}", r.asset);
    }
}
