//! rigml's animation tools: humanoid chain mapping, IK solvers, IK-Rig retargeting and mocap
//! cleanup (smoothing filters, foot-contact detection, foot-skate removal).
//!
//! Depends on `rigml-core` only (see `docs/ARCHITECTURE.md`). Index letters follow the project
//! style: `j` joints, `f` frames.

pub mod cleanup;
