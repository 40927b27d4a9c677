//! Errors of the data model: what is wrong with the data, naming the item at fault.
//! Readers wrap these with the file name; the CLI turns them into messages.

use thiserror::Error;

/// A violation of a data-model invariant.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum CoreError {
    #[error("mesh: vertex {vertex} has a non-finite position")]
    NonFinitePosition { vertex: usize },
    #[error("mesh: triangle {triangle} refers to vertex {index}, but there are {vertex_count} vertices")]
    TriangleIndexOutOfRange {
        triangle: usize,
        index: u32,
        vertex_count: usize,
    },
    #[error("mesh: {what} has {got} entries, expected {expected} (one per vertex)")]
    AttributeLength {
        what: &'static str,
        got: usize,
        expected: usize,
    },
    #[error("mesh: part {part} covers vertices {start}..{end}, beyond the {vertex_count} vertices")]
    PartOutOfRange {
        part: usize,
        start: usize,
        end: usize,
        vertex_count: usize,
    },
    #[error("mesh: part {part} uses material {material}, but there are {material_count} materials")]
    MaterialOutOfRange {
        part: usize,
        material: usize,
        material_count: usize,
    },
    #[error("mesh: material {material} uses image {image}, but there are {image_count} images")]
    ImageOutOfRange {
        material: usize,
        image: usize,
        image_count: usize,
    },
    #[error("attachment {name}: {problem}")]
    Attachment { name: String, problem: String },
    #[error("skeleton: {what} has {got} entries, expected {expected} (one per joint)")]
    SkeletonLength {
        what: &'static str,
        got: usize,
        expected: usize,
    },
    #[error(
        "skeleton: joint {joint} ({name}) has parent {parent}, which does not come before it (cycle or bad order)"
    )]
    ParentOrder { joint: usize, name: String, parent: usize },
    #[error("skeleton: joint {joint} ({name}) has a non-finite {what}")]
    NonFiniteJoint {
        joint: usize,
        name: String,
        what: &'static str,
    },
    #[error("skeleton: joint {joint} ({name}) has a singular inverse bind matrix")]
    SingularBind { joint: usize, name: String },
    #[error("skeleton: hierarchy has a cycle through joint {joint} ({name})")]
    Cycle { joint: usize, name: String },
    #[error("skin: vertex {vertex} refers to joint {joint}, but the skeleton has {joint_count} joints")]
    JointIndexOutOfRange {
        vertex: usize,
        joint: u32,
        joint_count: usize,
    },
    #[error("skin: vertex {vertex} has a non-finite or negative weight {weight}")]
    BadWeight { vertex: usize, weight: f32 },
    #[error("skin: covers {got} vertices but the mesh has {expected}")]
    SkinLength { got: usize, expected: usize },
    #[error("skin: max_influences must be at least 1")]
    ZeroInfluenceCap,
    #[error("clip {clip}: channel {channel} targets joint {joint}, but the skeleton has {joint_count} joints")]
    ChannelJointOutOfRange {
        clip: String,
        channel: usize,
        joint: usize,
        joint_count: usize,
    },
    #[error("clip {clip}: channel {channel}: {problem}")]
    BadChannel {
        clip: String,
        channel: usize,
        problem: String,
    },
    #[error("pose has {got} joints but the skeleton has {expected}")]
    PoseLength { got: usize, expected: usize },
    #[error("sequence: frame {frame} has {got} vertices, expected {expected}")]
    FrameLength { frame: usize, got: usize, expected: usize },
}
