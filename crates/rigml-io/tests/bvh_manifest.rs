//! Every BVH clip in the data manifest: joint, frame and fps counts match the manifest, and a
//! write → read round trip keeps every joint's world position at every frame.

use rigml_io::bvh;

mod common;

use common::data_dir;

fn manifest_rows(kind: &str) -> Vec<common::Row> {
    common::rows_where("kind", kind)
}

#[test]
fn every_manifest_bvh_matches_its_row() {
    let rows = manifest_rows("motion");
    // The manifest lists every BVH file of the data set, one motion row each.
    let files = common::files_with_extension(&data_dir().join("motion"), "bvh");
    assert!(
        !files.is_empty(),
        "no BVH files under {}",
        data_dir().join("motion").display()
    );
    assert_eq!(
        rows.len(),
        files.len(),
        "motion rows in the manifest against BVH files on disk"
    );
    for row in rows {
        let path = data_dir().join(&row["path"]);
        let bytes = std::fs::read(&path).unwrap();
        let started = std::time::Instant::now();
        let file = bvh::parse(&bytes, &path).unwrap();
        file.character.validate().unwrap();
        let id = &row["id"];
        assert_eq!(file.bvh_joint_count().to_string(), row["joints"], "{id}: joints");
        assert_eq!(file.frame_count.to_string(), row["frames"], "{id}: frames");
        let fps: f64 = row["fps"].parse().unwrap();
        assert!((file.fps() - fps).abs() < 0.01, "{id}: fps {} vs {fps}", file.fps());
        let end_sites = file.end_site.iter().filter(|e| **e).count();
        let noted = format!("{end_sites} End Sites");
        assert!(row["notes"].contains(&noted), "{id}: {noted} not in notes");
        // Notes say e.g. "root rot order ZYX, joints rot order ZXY/ZYX".
        let notes = &row["notes"];
        let root_order = notes
            .split("root rot order ")
            .nth(1)
            .unwrap()
            .split(',')
            .next()
            .unwrap();
        assert_eq!(file.rotation_order[0], root_order, "{id}: root rotation order");
        let joint_orders: Vec<&str> = notes
            .split("joints rot order ")
            .nth(1)
            .unwrap()
            .split(';')
            .next()
            .unwrap()
            .split('/')
            .collect();
        let mut seen: Vec<&str> = file.rotation_order[1..]
            .iter()
            .filter(|o| !o.is_empty())
            .map(String::as_str)
            .collect();
        let zxy = seen.iter().filter(|o| **o == "ZXY").count();
        seen.sort_unstable();
        seen.dedup();
        let mut noted = joint_orders.clone();
        noted.sort_unstable();
        assert_eq!(seen, noted, "{id}: joint rotation orders");
        let clip = &file.character.clips[0];
        assert_eq!(clip.key_count(), file.frame_count, "{id}: keys");
        println!(
            "{id}: {} joints + {end_sites} end sites, {} frames at {:.3} fps, root order {root_order}, \
             {zxy} non-root joints ZXY, read in {:.1} ms",
            file.bvh_joint_count(),
            file.frame_count,
            file.fps(),
            started.elapsed().as_secs_f64() * 1e3
        );
    }
}

#[test]
fn every_manifest_bvh_round_trips_through_the_writer() {
    for row in manifest_rows("motion") {
        let path = data_dir().join(&row["path"]);
        let id = &row["id"];
        let file = bvh::parse(&std::fs::read(&path).unwrap(), &path).unwrap();
        let a = file.character.clone();
        // Once in Z-Y-X, once in the file's own per-joint orders.
        for own_orders in [false, true] {
            let text = if own_orders {
                bvh::to_bvh_with_orders(&a, &path, &file.rotation_order).unwrap()
            } else {
                bvh::to_bvh(&a, &path).unwrap()
            };
            let b = bvh::parse(text.as_bytes(), &path).unwrap();
            if own_orders {
                assert_eq!(b.rotation_order, file.rotation_order, "{id}");
            }
            assert_eq!(b.character.skeleton.names, a.skeleton.names, "{id}");
            assert_eq!(b.character.skeleton.parents, a.skeleton.parents, "{id}");
            let b = b.character;
            let (ca, cb) = (&a.clips[0], &b.clips[0]);
            assert_eq!(ca.key_count(), cb.key_count(), "{id}: frames");
            let tolerance = 1e-4 * a.size();
            let times = &ca.channels[0].times;
            let mut worst = 0.0f32;
            for (f, &t) in times.iter().enumerate() {
                let wa = a.skeleton.world_matrices(&ca.sample(&a.skeleton, t).local);
                // Same frame index in the re-read clip (its times are rebuilt from Frame Time).
                let tb = cb.channels[0].times[f];
                let wb = b.skeleton.world_matrices(&cb.sample(&b.skeleton, tb).local);
                for (j, (ma, mb)) in wa.iter().zip(&wb).enumerate() {
                    let d = (ma.w_axis - mb.w_axis).length();
                    worst = worst.max(d);
                    assert!(d <= tolerance, "{id}: frame {f} joint {j}: moved {d} (> {tolerance})");
                }
            }
            println!(
                "{id} ({}): worst joint drift {worst:.2e} (size {:.1})",
                if own_orders { "own orders" } else { "ZYX" },
                a.size()
            );
        }
    }
}
