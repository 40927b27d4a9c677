//! rigml geometry: procedural shapes, and the mesh algorithms the solvers share — welding and
//! adjacency, the cotangent Laplacian, a triangle BVH for ray and segment queries, point/segment
//! distances and solid voxelisation (see `docs/ARCHITECTURE.md`).
//!
//! The solver-facing modules take plain slices (`&[Vec3]`, `&[[u32; 3]]`) so that callers can
//! work on a welded or normalised copy of a [`rigml_core::Mesh`] without cloning it.

pub mod adjacency;
pub mod bvh;
pub mod laplacian;
pub mod point_sets;
pub mod procedural;
pub mod segment;
pub mod voxel;

pub use adjacency::{Adjacency, Welded};
pub use bvh::Bvh;
pub use laplacian::CotLaplacian;
pub use point_sets::chamfer;
pub use segment::{closest_on_segment, segment_distance, segment_parameter};
pub use voxel::{Cell, VoxelGrid};
