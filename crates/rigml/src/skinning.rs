//! Skin weights the way a DCC rig asks for them: only deforming bones get weight, bones end at
//! their own tails, locked weights stay as they are and the rest is solved around them, every
//! row is capped, and a long solve reports progress and can be cancelled.
//!
//! Every solver runs unchanged: the constraints are applied around it. Non-deforming and locked
//! joints are taken out of the skeleton the solver sees (a kept joint's parent is its nearest
//! kept ancestor, so bones run between deforming joints as in Blender, where an IK or pole bone
//! between two deform bones does not bend the segment); the solver's rows are mapped back to
//! the full skeleton and scaled into the share of each vertex the locked weights leave free.

use crate::error::{invalid, Error, Result};
use glam::Vec3;
use rigml_core::{Mesh, Skeleton, Skin, Transform};
use rigml_skin::{SkinSolver, SolveOptions};

/// What to solve, beyond the mesh and the skeleton. `Default` is a plain solve: every joint
/// deforms, tails derived from the joints, nothing locked, 4 influences.
#[derive(Debug, Clone)]
pub struct SkinRequest {
    /// Influence cap per vertex (locked influences count toward it).
    pub max_influences: usize,
    /// Per joint: whether it deforms (Blender's `use_deform`; Rigify's `DEF-` bones). A joint
    /// that does not gets no weight. `None`: every joint deforms.
    pub deform: Option<Vec<bool>>,
    /// Per joint: its bone's tail in the skeleton's bind space ([`SolveOptions::tails`]).
    pub tails: Option<Vec<Vec3>>,
    /// The weights the mesh has now, one raw row of `(joint, weight)` per vertex, as stored
    /// (not normalised: a DCC's locked groups alone rarely sum to 1); what `locked_joints` and
    /// `locked_vertices` keep.
    pub existing: Option<Vec<Vec<(u32, f32)>>>,
    /// Per joint: its weights stay as they are in `existing` (Blender's locked vertex groups;
    /// "selected bones only" locks every other bone). The other joints share what is left.
    pub locked_joints: Option<Vec<bool>>,
    /// Per vertex: its whole row stays as it is in `existing`.
    pub locked_vertices: Option<Vec<bool>>,
    /// A flag another thread may set to stop the solver mid-way ([`rigml_skin::Cancel`]); the
    /// call then ends with [`Error::Cancelled`].
    pub cancel: Option<rigml_skin::Cancel>,
}

impl Default for SkinRequest {
    fn default() -> Self {
        SkinRequest {
            max_influences: SolveOptions::default().max_influences,
            deform: None,
            tails: None,
            existing: None,
            locked_joints: None,
            locked_vertices: None,
            cancel: None,
        }
    }
}

/// Where a [`skin_weights`] call is, for a progress bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Checking the request and building the solver's skeleton.
    Prepare,
    /// The solver runs (the long part).
    Solve,
    /// Mapping back, locking and capping.
    Combine,
    /// Finished.
    Done,
}

impl Stage {
    /// The stage's share of the work done when it starts, for a progress bar in `[0, 1]`.
    pub fn fraction(self) -> f32 {
        match self {
            Stage::Prepare => 0.0,
            Stage::Solve => 0.05,
            Stage::Combine => 0.95,
            Stage::Done => 1.0,
        }
    }
}

/// The result of [`skin_weights`].
#[derive(Debug, Clone)]
pub struct Skinned {
    /// Weights over every joint of the skeleton, rows normalised.
    pub skin: Skin,
    /// Per joint: whether the solver gave it weights (deforming and not locked).
    pub solved_joints: Vec<bool>,
    /// Vertices left without any weight.
    pub unweighted: usize,
    /// Rows whose locked influences alone filled the cap, so that they hold more influences
    /// than the cap (one solved influence is always kept where the locks leave a share free).
    pub over_cap: usize,
    /// Rows whose locked weights summed to more than 1 (kept in proportion, nothing solved).
    pub locked_over_one: usize,
}

/// Skin `mesh` to `skeleton` with `solver` under the constraints of `request`. `progress` is
/// called as each [`Stage`] starts; returning `false` cancels the call ([`Error::Cancelled`]).
/// Cancelling through `progress` takes effect between stages; `request.cancel`, set from another
/// thread, also stops a solver mid-way (between its phases).
///
/// ```
/// use rigml::{skin_weights, SkinRequest};
/// use rigml_skin::synthetic::tube_chain;
///
/// let (mesh, skeleton) = tube_chain(3, 6, 8, 0.2, 1.0); // a tube around a 4-joint chain
/// let solver = rigml::solver("nearest", &Default::default())?;
/// let request = SkinRequest {
///     deform: Some(vec![true, true, false, true]), // joint 2 is a control bone
///     max_influences: 2,
///     ..SkinRequest::default()
/// };
/// let out = skin_weights(&mesh, &skeleton, solver.as_ref(), &request, &mut |_| true)?;
/// assert!(out.skin.rows().all(|row| row.len() <= 2 && row.iter().all(|i| i.joint != 2)));
/// assert_eq!(out.unweighted, 0);
/// # Ok::<(), rigml::Error>(())
/// ```
pub fn skin_weights(
    mesh: &Mesh,
    skeleton: &Skeleton,
    solver: &dyn SkinSolver,
    request: &SkinRequest,
    progress: &mut dyn FnMut(Stage) -> bool,
) -> Result<Skinned> {
    let mut step = |stage: Stage| if progress(stage) { Ok(()) } else { Err(Error::Cancelled) };
    step(Stage::Prepare)?;
    let joints = skeleton.joint_count();
    let vertices = mesh.vertex_count();
    if request.max_influences == 0 {
        return Err(invalid("max_influences must be at least 1"));
    }
    check_len("deform", request.deform.as_ref().map(Vec::len), joints, "joints")?;
    check_len("tails", request.tails.as_ref().map(Vec::len), joints, "joints")?;
    check_len(
        "locked_joints",
        request.locked_joints.as_ref().map(Vec::len),
        joints,
        "joints",
    )?;
    check_len(
        "locked_vertices",
        request.locked_vertices.as_ref().map(Vec::len),
        vertices,
        "vertices",
    )?;
    if let Some(existing) = &request.existing {
        check_existing(existing, vertices, joints)?;
    } else if request.locked_vertices.as_ref().is_some_and(|l| l.iter().any(|&x| x)) {
        return Err(invalid("locked_vertices needs the existing weights to keep"));
    }
    let locked_joint = |j: usize| request.locked_joints.as_ref().is_some_and(|l| l[j]);
    let locked_vertex = |v: usize| request.locked_vertices.as_ref().is_some_and(|l| l[v]);
    let solved: Vec<bool> = (0..joints)
        .map(|j| request.deform.as_ref().is_none_or(|d| d[j]) && !locked_joint(j))
        .collect();
    let any_lock = (0..joints).any(locked_joint) || (0..vertices).any(locked_vertex);

    let free_vertices = (0..vertices).filter(|&v| !locked_vertex(v)).count();
    let solved_skin = if free_vertices == 0 {
        None
    } else if !solved.iter().any(|&s| s) {
        return Err(invalid(
            "no bone left to solve: every bone is locked or does not deform",
        ));
    } else {
        let (sub, map) = subset(skeleton, &solved);
        let options = SolveOptions {
            max_influences: request.max_influences,
            tails: request.tails.as_ref().map(|t| map.iter().map(|&j| t[j]).collect()),
            cancel: request.cancel.clone(),
            ..SolveOptions::default()
        };
        step(Stage::Solve)?;
        let skin = solver.solve(mesh, &sub, &options).map_err(|e| match e {
            rigml_skin::SkinError::Cancelled => Error::Cancelled,
            e => e.into(),
        })?;
        Some(skin.remap_joints(&map))
    };
    step(Stage::Combine)?;

    let (skin, over_cap, locked_over_one) = match (solved_skin, any_lock) {
        // Nothing locked: the solver's rows are the answer, untouched.
        (Some(skin), false) => (skin, 0, 0),
        (solved_skin, _) => combine(
            request,
            solved_skin.as_ref(),
            vertices,
            joints,
            &locked_joint,
            &locked_vertex,
        )?,
    };
    step(Stage::Done)?;
    Ok(Skinned {
        unweighted: skin.unskinned_count(),
        skin,
        solved_joints: solved,
        over_cap,
        locked_over_one,
    })
}

/// Locked rows and groups from `existing`, the solved rows scaled into what they leave free,
/// capped; returns the skin and the over-cap and over-one row counts.
fn combine(
    request: &SkinRequest,
    solved: Option<&Skin>,
    vertices: usize,
    joints: usize,
    locked_joint: &dyn Fn(usize) -> bool,
    locked_vertex: &dyn Fn(usize) -> bool,
) -> Result<(Skin, usize, usize)> {
    let cap = request.max_influences;
    let (mut over_cap, mut over_one) = (0, 0);
    let mut rows: Vec<Vec<(u32, f32)>> = Vec::with_capacity(vertices);
    for v in 0..vertices {
        let old = request.existing.as_ref().map_or(&[][..], |rows| rows[v].as_slice());
        if locked_vertex(v) {
            rows.push(old.to_vec());
            continue;
        }
        let mut row: Vec<(u32, f32)> = old
            .iter()
            .filter(|&&(j, w)| locked_joint(j as usize) && w > 0.0)
            .copied()
            .collect();
        let kept: f32 = row.iter().map(|e| e.1).sum();
        if kept > 1.0 + 1e-5 {
            over_one += 1;
        }
        let free = 1.0 - kept;
        if free > 1e-6 {
            let new = solved.map_or(&[][..], |s| s.influences(v));
            let room = cap.saturating_sub(row.len()).max(1).min(new.len());
            if row.len() + room > cap {
                over_cap += 1;
            }
            let share: f32 = new[..room].iter().map(|i| i.weight).sum();
            if share > 0.0 {
                row.extend(new[..room].iter().map(|i| (i.joint, i.weight / share * free)));
            }
        }
        rows.push(row);
    }
    let widest = rows.iter().map(Vec::len).max().unwrap_or(0).max(cap);
    let skin = Skin::from_rows(rows.iter().map(Vec::as_slice), joints, widest)?;
    Ok((skin, over_cap, over_one))
}

/// Existing rows: one per vertex, joints in range, weights finite and not negative.
fn check_existing(existing: &[Vec<(u32, f32)>], vertices: usize, joints: usize) -> Result<()> {
    if existing.len() != vertices {
        return Err(invalid(format!(
            "existing: {} rows for {vertices} vertices",
            existing.len()
        )));
    }
    for (v, row) in existing.iter().enumerate() {
        for &(j, w) in row {
            if j as usize >= joints {
                return Err(invalid(format!(
                    "existing: vertex {v}: joint {j} does not exist ({joints} joints)"
                )));
            }
            if !w.is_finite() || w < 0.0 {
                return Err(invalid(format!(
                    "existing: vertex {v}: weight {w} is not a finite weight >= 0"
                )));
            }
        }
    }
    Ok(())
}

fn check_len(what: &str, len: Option<usize>, expected: usize, of: &str) -> Result<()> {
    match len {
        Some(n) if n != expected => Err(invalid(format!("{what}: {n} values for {expected} {of}"))),
        _ => Ok(()),
    }
}

/// The skeleton of the joints where `keep` is true (each parented to its nearest kept
/// ancestor, rest and bind poses unchanged in model space), and for each of its joints the
/// index of the joint it came from.
pub fn subset(skeleton: &Skeleton, keep: &[bool]) -> (Skeleton, Vec<usize>) {
    if keep.iter().all(|&k| k) {
        return (skeleton.clone(), (0..skeleton.joint_count()).collect());
    }
    let world = skeleton.rest_world();
    let mut new_index: Vec<Option<usize>> = vec![None; skeleton.joint_count()];
    let mut map = Vec::new();
    let mut out = Skeleton::default();
    for j in 0..skeleton.joint_count() {
        // Nearest kept ancestor (parents come before children, so theirs is already known).
        let mut parent = skeleton.parents[j];
        while let Some(p) = parent {
            if keep[p] {
                break;
            }
            parent = skeleton.parents[p];
        }
        if !keep[j] {
            continue;
        }
        let local = match parent {
            Some(p) => world[p].inverse() * world[j],
            None => world[j],
        };
        new_index[j] = Some(map.len());
        out.names.push(skeleton.names[j].clone());
        out.parents.push(parent.and_then(|p| new_index[p]));
        out.rest_local.push(Transform::from_mat4(&local));
        out.inverse_bind.push(skeleton.inverse_bind[j]);
        map.push(j);
    }
    (out, map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rigml_skin::synthetic::tube_chain;
    use rigml_skin::{Heat, Nearest};

    fn plain(mesh: &Mesh, skeleton: &Skeleton, solver: &dyn SkinSolver, request: &SkinRequest) -> Skinned {
        skin_weights(mesh, skeleton, solver, request, &mut |_| true).unwrap()
    }

    #[test]
    fn without_constraints_it_is_the_solver() {
        let (mesh, skeleton) = tube_chain(3, 6, 8, 0.2, 1.0);
        let out = plain(&mesh, &skeleton, &Heat::default(), &SkinRequest::default());
        let direct = Heat::default()
            .solve(&mesh, &skeleton, &SolveOptions::default())
            .unwrap();
        assert_eq!(out.skin, direct);
        assert_eq!((out.unweighted, out.over_cap, out.locked_over_one), (0, 0, 0));
        assert!(out.solved_joints.iter().all(|&s| s));
    }

    #[test]
    fn a_non_deforming_joint_gets_nothing_and_its_bone_goes_to_the_next_deformer() {
        // Joint 2 (a control bone in the middle of the chain) does not deform: joint 1's bone
        // then runs to joint 3, so the vertices along 1..3 go to joint 1.
        let (mesh, skeleton) = tube_chain(3, 6, 8, 0.2, 1.0);
        let request = SkinRequest {
            deform: Some(vec![true, true, false, true]),
            ..SkinRequest::default()
        };
        let out = plain(&mesh, &skeleton, &Nearest::default(), &request);
        assert!(out.skin.rows().all(|r| r.iter().all(|i| i.joint != 2)));
        assert_eq!(out.solved_joints, vec![true, true, false, true]);
        // A vertex at y = 2.5 (between joints 2 and 3) belongs to joint 1 now.
        let v = mesh.positions.iter().position(|p| (p.y - 2.5).abs() < 1e-4).unwrap();
        assert_eq!(out.skin.influences(v)[0].joint, 1);
    }

    #[test]
    fn locked_groups_keep_their_weights_and_the_rest_fills_what_is_left() {
        let (mesh, skeleton) = tube_chain(3, 6, 8, 0.2, 1.0);
        // Existing weights: everything 30 % on joint 3 (locked), 70 % on joint 0.
        // Only the locked group is given, as a DCC passes it: 0.3, not normalised.
        let existing: Vec<Vec<(u32, f32)>> = (0..mesh.vertex_count()).map(|_| vec![(3, 0.3)]).collect();
        let request = SkinRequest {
            existing: Some(existing),
            locked_joints: Some(vec![false, false, false, true]),
            max_influences: 2,
            ..SkinRequest::default()
        };
        let out = plain(&mesh, &skeleton, &Heat::default(), &request);
        assert_eq!(out.solved_joints, vec![true, true, true, false]);
        for row in out.skin.rows() {
            let locked: f32 = row.iter().filter(|i| i.joint == 3).map(|i| i.weight).sum();
            assert!((locked - 0.3).abs() < 1e-6, "{row:?}");
            assert!(row.len() <= 2);
            let sum: f32 = row.iter().map(|i| i.weight).sum();
            assert!((sum - 1.0).abs() < 1e-5);
        }
        assert_eq!(out.over_cap, 0);
    }

    #[test]
    fn locked_rows_stay_and_locks_past_the_cap_are_counted() {
        let (mesh, skeleton) = tube_chain(3, 6, 8, 0.2, 1.0);
        let n = mesh.vertex_count();
        let existing: Vec<Vec<(u32, f32)>> = (0..n).map(|_| vec![(0, 0.25), (1, 0.25), (2, 0.5)]).collect();
        let mut locked_vertices = vec![false; n];
        locked_vertices[0] = true;
        let request = SkinRequest {
            existing: Some(existing.clone()),
            locked_joints: Some(vec![true, true, false, false]),
            locked_vertices: Some(locked_vertices),
            max_influences: 2,
            ..SkinRequest::default()
        };
        let out = plain(&mesh, &skeleton, &Nearest::default(), &request);
        let first: Vec<(u32, f32)> = out.skin.influences(0).iter().map(|i| (i.joint, i.weight)).collect();
        assert_eq!(first, vec![(2, 0.5), (0, 0.25), (1, 0.25)]);
        // Every other row: the two locked influences fill the cap, one solved influence more,
        // in the half they leave free.
        assert_eq!(out.over_cap, n - 1);
        for row in out.skin.rows().skip(1) {
            assert_eq!(row.len(), 3);
            let locked: f32 = row.iter().filter(|i| i.joint < 2).map(|i| i.weight).sum();
            assert!((locked - 0.5).abs() < 1e-6);
        }

        // Every bone locked: nothing to solve.
        let all = SkinRequest {
            existing: Some(existing),
            locked_joints: Some(vec![true; 4]),
            ..SkinRequest::default()
        };
        let err = skin_weights(&mesh, &skeleton, &Nearest::default(), &all, &mut |_| true).unwrap_err();
        assert!(err.to_string().contains("no bone left to solve"), "{err}");

        // Existing rows are checked.
        let bad = SkinRequest {
            existing: Some(vec![vec![(9, 1.0)]; n]),
            locked_joints: Some(vec![true, false, false, false]),
            ..SkinRequest::default()
        };
        let err = skin_weights(&mesh, &skeleton, &Nearest::default(), &bad, &mut |_| true).unwrap_err();
        assert!(
            err.to_string().contains("existing: vertex 0: joint 9 does not exist"),
            "{err}"
        );
    }

    #[test]
    fn explicit_tails_move_the_bones() {
        // Joint 3 is a leaf: derived, its bone continues the chain past y = 3 (the tube's end);
        // with a tail pointing sideways (+X) it runs through the last ring's +X side.
        let (mesh, skeleton) = tube_chain(3, 6, 8, 0.2, 1.0);
        let p = skeleton.bind_positions();
        let mut tails: Vec<Vec3> = (0..4)
            .map(|j| if j < 3 { p[j + 1] } else { p[3] + Vec3::X * 5.0 })
            .collect();
        let derived = plain(&mesh, &skeleton, &Nearest::default(), &SkinRequest::default());
        let request = SkinRequest {
            tails: Some(tails.clone()),
            ..SkinRequest::default()
        };
        let explicit = plain(&mesh, &skeleton, &Nearest::default(), &request);
        // Tails equal to the derived segments for 0..3 leave the rows along them as they were
        // (to the rounding of the shared smoothing).
        let v = mesh.positions.iter().position(|p| (p.y - 1.5).abs() < 1e-4).unwrap();
        let dense = |s: &Skin| s.to_dense(4)[v * 4..v * 4 + 4].to_vec();
        for (a, b) in dense(&derived.skin).iter().zip(dense(&explicit.skin)) {
            assert!((a - b).abs() < 1e-5);
        }
        // On the last ring, the side the tail points to goes (more) to joint 3.
        let end = mesh
            .positions
            .iter()
            .position(|q| (q.y - 3.0).abs() < 1e-4 && q.x > 0.19)
            .unwrap();
        let weight_3 = |s: &Skin| {
            s.influences(end)
                .iter()
                .find(|i| i.joint == 3)
                .map_or(0.0, |i| i.weight)
        };
        assert!(weight_3(&explicit.skin) > weight_3(&derived.skin) + 0.1);
        // Wrong counts are refused with a message.
        tails.pop();
        let bad = SkinRequest {
            tails: Some(tails),
            ..SkinRequest::default()
        };
        let err = skin_weights(&mesh, &skeleton, &Nearest::default(), &bad, &mut |_| true).unwrap_err();
        assert!(err.to_string().contains("tails: 3 values for 4 joints"), "{err}");
    }

    #[test]
    fn progress_sees_every_stage_and_can_cancel() {
        let (mesh, skeleton) = tube_chain(2, 4, 6, 0.2, 1.0);
        let mut seen = Vec::new();
        plain_progress(&mesh, &skeleton, &mut |s| {
            seen.push(s);
            true
        })
        .unwrap();
        assert_eq!(seen, vec![Stage::Prepare, Stage::Solve, Stage::Combine, Stage::Done]);
        let err = plain_progress(&mesh, &skeleton, &mut |s| s != Stage::Solve).unwrap_err();
        assert!(matches!(err, Error::Cancelled));
    }

    #[test]
    fn a_flag_set_once_the_solve_started_stops_the_solver_itself() {
        let (mesh, skeleton) = tube_chain(3, 6, 8, 0.2, 1.0);
        for method in ["heat", "voxel", "learned"] {
            let solver = crate::solver(method, &Default::default()).unwrap();
            let flag = rigml_skin::Cancel::new();
            let request = SkinRequest {
                cancel: Some(flag.clone()),
                ..SkinRequest::default()
            };
            // The stage hook lets every stage start; only the flag, set as the solver begins,
            // can stop it, so the solver must look at the flag itself.
            let mut stages = Vec::new();
            let err = skin_weights(&mesh, &skeleton, solver.as_ref(), &request, &mut |stage| {
                if stage == Stage::Solve {
                    flag.cancel();
                }
                stages.push(stage);
                true
            })
            .unwrap_err();
            assert!(matches!(err, Error::Cancelled), "{method}: {err}");
            assert_eq!(stages, vec![Stage::Prepare, Stage::Solve], "{method}");
            // Without the flag the same solve finishes.
            let done = skin_weights(&mesh, &skeleton, solver.as_ref(), &SkinRequest::default(), &mut |_| {
                true
            });
            assert!(done.is_ok(), "{method}");
        }
    }

    fn plain_progress(mesh: &Mesh, skeleton: &Skeleton, progress: &mut dyn FnMut(Stage) -> bool) -> Result<Skinned> {
        skin_weights(mesh, skeleton, &Nearest::default(), &SkinRequest::default(), progress)
    }

    #[test]
    fn subset_keeps_model_space_poses() {
        let (_, skeleton) = tube_chain(3, 2, 4, 0.2, 1.0);
        let (sub, map) = subset(&skeleton, &[true, false, true, true]);
        assert_eq!(map, vec![0, 2, 3]);
        assert_eq!(sub.parents, vec![None, Some(0), Some(1)]);
        let (a, b) = (skeleton.rest_world(), sub.rest_world());
        for (k, &j) in map.iter().enumerate() {
            assert!(a[j].abs_diff_eq(b[k], 1e-5));
        }
        assert_eq!(sub.bind_positions()[1], skeleton.bind_positions()[2]);
    }
}
