//! Animation on rigml characters: humanoid chain mapping, IK solvers (analytic two-bone and
//! FABRIK), IK-Rig motion encoding/decoding, retargeting and mocap cleanup
//! (`docs/ALGORITHMS.md` §7–8). Depends on `rigml-core` only; file I/O is the caller's.

pub mod cleanup;
pub mod decode;
pub mod encode;
pub mod error;
pub mod humanoid;
pub mod ik;
pub mod retarget;
pub mod rig;
pub mod table;

pub use error::AnimError;
