//! The networks of an ensemble fitted on several threads at once ([`SkinRecipe::jobs`]).
//!
//! Each worker thread takes the next network not yet started, samples the data with that
//! network's seed and fits it, exactly as one after another would (the model does not depend on
//! the number of threads). The workers' reports reach the caller's progress hook on the calling
//! thread, in the order they were made, through a channel; a hook that asks to stop, or a
//! network that fails, stops the other workers at their next report.

use super::{member_seed, train_member, MemberRun, Phase, Progress, SkinRecipe};
use crate::error::{Error, Result};
use rigml_eval::dataset::Dataset;
use rigml_learn::train::{Losses, TrainEvent};
use rigml_learn::{LearnError, ModelFile};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

/// What a worker reports, owned so that it can cross threads.
enum Report {
    Member {
        index: usize,
        seed: u64,
    },
    Item {
        member: Option<usize>,
        phase: Phase,
        done: usize,
        total: usize,
        id: String,
    },
    Step {
        member: usize,
        step: usize,
        total: usize,
        losses: Losses,
    },
    Val {
        member: usize,
        step: usize,
        losses: Losses,
    },
    Checkpoint {
        member: usize,
        step: usize,
        model: ModelFile,
    },
    Done {
        member: usize,
        result: Result<(MemberRun, ModelFile)>,
    },
}

impl Report {
    /// A worker's progress event, owned.
    fn of(progress: Progress) -> Report {
        match progress {
            Progress::Item {
                phase,
                done,
                total,
                id,
                member,
            } => Report::Item {
                member,
                phase,
                done,
                total,
                id: id.to_string(),
            },
            Progress::Member { index, seed, .. } => Report::Member { index, seed },
            Progress::Fit { member, event } => match event {
                TrainEvent::Step { step, total, losses } => Report::Step {
                    member,
                    step,
                    total,
                    losses,
                },
                TrainEvent::Val { step, losses } => Report::Val { member, step, losses },
                TrainEvent::Checkpoint { step, model } => Report::Checkpoint {
                    member,
                    step,
                    model: model.clone(),
                },
            },
        }
    }

    /// The event to show the caller (`None` for a network's end).
    fn progress(&self, count: usize) -> Option<Progress<'_>> {
        Some(match self {
            Report::Member { index, seed } => Progress::Member {
                index: *index,
                count,
                seed: *seed,
            },
            Report::Item {
                member,
                phase,
                done,
                total,
                id,
            } => Progress::Item {
                phase: *phase,
                done: *done,
                total: *total,
                id,
                member: *member,
            },
            Report::Step {
                member,
                step,
                total,
                losses,
            } => Progress::Fit {
                member: *member,
                event: TrainEvent::Step {
                    step: *step,
                    total: *total,
                    losses: *losses,
                },
            },
            Report::Val { member, step, losses } => Progress::Fit {
                member: *member,
                event: TrainEvent::Val {
                    step: *step,
                    losses: *losses,
                },
            },
            Report::Checkpoint { member, step, model } => Progress::Fit {
                member: *member,
                event: TrainEvent::Checkpoint { step: *step, model },
            },
            Report::Done { .. } => return None,
        })
    }
}

/// Fit the recipe's networks on `jobs` threads; the results in member order, or the first
/// failure (a network's, or the hook's).
pub(super) fn train_members(
    dataset: &Dataset,
    recipe: &SkinRecipe,
    jobs: usize,
    metadata: &HashMap<String, String>,
    progress: &mut dyn FnMut(Progress) -> Result<(), LearnError>,
) -> Result<Vec<(MemberRun, ModelFile)>> {
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let (send, receive) = mpsc::channel::<Report>();
    let mut fitted: Vec<Option<(MemberRun, ModelFile)>> = (0..recipe.members).map(|_| None).collect();
    let mut failure: Option<Error> = None;
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            let send = send.clone();
            let (next, stop) = (&next, &stop);
            scope.spawn(move || loop {
                let member = next.fetch_add(1, Ordering::SeqCst);
                if member >= recipe.members || stop.load(Ordering::SeqCst) {
                    break;
                }
                let stopped = || LearnError::Train("stopped: another network failed or the run was cancelled".into());
                if send
                    .send(Report::Member {
                        index: member,
                        seed: member_seed(recipe, member),
                    })
                    .is_err()
                {
                    break;
                }
                let mut hook = |event: Progress| {
                    if stop.load(Ordering::SeqCst) {
                        return Err(stopped());
                    }
                    send.send(Report::of(event)).map_err(|_| stopped())
                };
                let result = train_member(dataset, recipe, member, None, metadata, &mut hook);
                if send.send(Report::Done { member, result }).is_err() {
                    break;
                }
            });
        }
        drop(send);
        // Ends when every worker has ended (each holds a sender until then).
        for report in receive {
            if let Report::Done { member, result } = report {
                match result {
                    Ok(done) => fitted[member] = Some(done),
                    // The first failure is the cause; those after it are workers it stopped.
                    Err(e) => {
                        stop.store(true, Ordering::SeqCst);
                        failure.get_or_insert(e);
                    }
                }
            } else if failure.is_none() {
                let shown = match report.progress(recipe.members) {
                    Some(event) => progress(event),
                    None => Ok(()),
                };
                if let Err(e) = shown {
                    stop.store(true, Ordering::SeqCst);
                    failure = Some(e.into());
                }
            }
        }
    });
    if let Some(e) = failure {
        return Err(e);
    }
    fitted
        .into_iter()
        .enumerate()
        .map(|(member, done)| done.ok_or_else(|| crate::error::invalid(format!("network {member} was not fitted"))))
        .collect()
}
