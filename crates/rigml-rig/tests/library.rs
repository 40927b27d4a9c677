//! The rig library of the embedded skeleton model (docs/experiments/2026-12-07-rig-library.md):
//! it holds the train split's rigs; `detect` gives a val fish shaped like a train fish that fish's
//! rig, closer to its artist's than the general template; a standing humanoid keeps the humanoid
//! template's landmarks and takes the conventions of its family's rigs
//! (docs/experiments/2026-12-07-humanoid-conventions.md).

#[path = "../../rigml-io/tests/common/mod.rs"]
mod common;

use rigml_eval::deformation::normalisation;
use rigml_eval::skeleton_metrics::{score, JointSet};
use rigml_rig::library::best_match;
use rigml_rig::{Auto, Detect, LearnedPlacer, SkeletonPlacer};

fn cd_j2j(placed: &rigml_rig::PlacedSkeleton, character: &rigml_core::Character) -> f64 {
    let (centre, scale) = normalisation(&character.mesh.positions).unwrap();
    let gt = JointSet::from_skeleton(&character.skeleton, centre, scale);
    let pred = JointSet::from_skeleton(&placed.to_skeleton().unwrap(), centre, scale);
    score(&pred, &gt).unwrap().cd_j2j
}

#[test]
fn the_embedded_library_holds_every_train_rig() {
    let learned = LearnedPlacer::embedded().unwrap();
    let library = learned
        .predictor()
        .library()
        .expect("the embedded model has a rig library");
    let train: Vec<String> = common::manifest()
        .iter()
        .filter(|r| r.get("kind") == "character" && r.get("split") == "train")
        .map(|r| r.id().to_string())
        .collect();
    let ids: Vec<&str> = library.rigs.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids.len(), train.len(), "one rig per train character");
    assert!(train.iter().all(|id| ids.contains(&id.as_str())));
    assert_eq!(library.threshold, 0.6);
}

#[test]
fn detect_gives_a_fish_the_rig_of_the_most_alike_train_fish() {
    let koi = common::asset("quaternius-cute-fish-koi");
    let row = common::rows_where("id", "quaternius-cute-fish-koi");
    assert_eq!(row[0].get("split"), "val");
    let koi = rigml_io::load(&koi).unwrap();
    let detect = Detect::embedded().unwrap();
    let (template, placed) = detect.place_with_template(&koi.mesh).unwrap();
    assert_eq!(template, "library");
    placed.validate().unwrap();
    let learned = LearnedPlacer::embedded().unwrap();
    let found = best_match(learned.predictor().library().unwrap(), &koi.mesh)
        .unwrap()
        .unwrap();
    // Measured: the goldfish's rig, similarity 0.87, CD-J2J 0.0028 against the general
    // template's 0.0612 (`rigml eval --split val --methods rig-detect,rig-auto`).
    assert!(found.id.starts_with("quaternius-cute-fish-"), "{}", found.id);
    assert!(found.similarity >= 0.6, "{}", found.similarity);
    assert_eq!(
        placed.names, found.skeleton.names,
        "the artist's joint names come with the rig"
    );
    // The placement names the rig it took, for the report.
    let reported = detect.place_reported(&koi.mesh).unwrap();
    assert_eq!(reported.template, "library");
    assert_eq!(reported.library_rig, Some((found.id.clone(), found.similarity)));
    let auto = Auto::embedded().unwrap().place(&koi.mesh).unwrap();
    let (with, without) = (cd_j2j(&placed, &koi), cd_j2j(&auto, &koi));
    println!(
        "koi: library {} ({}) CD-J2J {with:.4}, auto {without:.4}",
        found.id, found.similarity
    );
    assert!(with < 0.5 * without, "library {with:.4} against auto {without:.4}");
    // Without the library, detect is the general template again.
    let plain = Detect {
        library: false,
        ..Detect::embedded().unwrap()
    };
    assert_eq!(plain.place_with_template(&koi.mesh).unwrap().0, "auto");
}

#[test]
fn a_standing_humanoid_keeps_the_humanoid_landmarks_and_takes_its_familys_conventions() {
    let ranger = rigml_io::load(&common::asset("kaykit2-ranger")).unwrap();
    let detect = Detect::embedded().unwrap();
    let placed = detect.place_reported(&ranger.mesh).unwrap();
    assert_eq!(placed.template, "humanoid");
    // A KayKit rig (val's ranger is not in the library; its family's characters are).
    let (id, similarity) = placed.library_rig.clone().expect("an alike KayKit rig");
    assert!(id.starts_with("kaykit"), "{id}");
    assert!(similarity >= 0.6, "{similarity}");
    assert!(
        placed.skeleton.names.iter().any(|n| n == "hips"),
        "{:?}",
        placed.skeleton.names
    );
    // The template's ankles are kept.
    let template = Detect {
        humanoid_conventions: false,
        ..Detect::embedded().unwrap()
    }
    .place_reported(&ranger.mesh)
    .unwrap();
    assert_eq!(template.library_rig, None);
    assert!(template.skeleton.names.iter().any(|n| n == "Hips"));
    let foot = |s: &rigml_rig::PlacedSkeleton, name: &str| s.heads[s.names.iter().position(|n| n == name).unwrap()];
    assert_eq!(foot(&placed.skeleton, "foot.l"), foot(&template.skeleton, "LeftFoot"));
    let (with, without) = (cd_j2j(&placed.skeleton, &ranger), cd_j2j(&template.skeleton, &ranger));
    println!("ranger: {id} ({similarity}) CD-J2J {with:.4}, template {without:.4}");
    assert!(
        with < 0.8 * without,
        "conventions {with:.4} against the template {without:.4}"
    );
}

#[test]
fn a_model_without_a_library_leaves_detect_as_it_was_and_refuses_the_library_template() {
    use rigml_learn::skeleton::{net, Predictor, DEFAULT_MODEL};
    let mut model = net::from_bytes(DEFAULT_MODEL, "embedded").unwrap();
    model.weights.retain(|k, _| !k.starts_with("library."));
    model.metadata.retain(|k, _| !k.starts_with("rigml.skeleton.library."));
    let learned = LearnedPlacer::new(Predictor::new(model).unwrap());
    assert!(learned.predictor().library().is_none());
    let koi = rigml_io::load(&common::asset("quaternius-cute-fish-koi")).unwrap();
    let err = rigml_rig::LibraryPlacer {
        learned: learned.clone(),
    }
    .place(&koi.mesh)
    .unwrap_err();
    assert!(err.to_string().contains("no rig library"), "{err}");
    let detect = Detect {
        auto: Auto {
            curve: Default::default(),
            learned,
        },
        ..Detect::embedded().unwrap()
    };
    assert_eq!(detect.place_with_template(&koi.mesh).unwrap().0, "auto");
}
