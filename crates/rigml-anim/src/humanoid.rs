//! Humanoid mapping: which joint plays which standard bone role (VRM humanoid names), and the
//! six IK-Rig chains (spine, neck, two arms, two legs) built from those roles.
//!
//! Roles are found from joint names first (Mixamo, VRM/Unity, CMU/BVH, Daz/Poser, MakeHuman,
//! Quaternius, KayKit and Godot/Unreal-mannequin conventions), with a topology and rest-pose
//! fallback for limbs whose ends have no recognisable name. A `--map` file ([`parse_map_file`])
//! overrides any role. What cannot be matched is reported, one reason per role.

mod detect;

use crate::AnimError;
pub(crate) use detect::is_ancestor;
use detect::{detect, lowest_common_ancestor, path};
use rigml_core::Skeleton;

/// A standard humanoid bone role (the VRM 1.0 humanoid names, body bones only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    Hips,
    Spine,
    Chest,
    UpperChest,
    Neck,
    Head,
    LeftShoulder,
    LeftUpperArm,
    LeftLowerArm,
    LeftHand,
    RightShoulder,
    RightUpperArm,
    RightLowerArm,
    RightHand,
    LeftUpperLeg,
    LeftLowerLeg,
    LeftFoot,
    LeftToes,
    RightUpperLeg,
    RightLowerLeg,
    RightFoot,
    RightToes,
}

impl Role {
    /// Every role, in declaration order (the index used by [`HumanoidMap`]).
    pub const ALL: [Role; 22] = [
        Role::Hips,
        Role::Spine,
        Role::Chest,
        Role::UpperChest,
        Role::Neck,
        Role::Head,
        Role::LeftShoulder,
        Role::LeftUpperArm,
        Role::LeftLowerArm,
        Role::LeftHand,
        Role::RightShoulder,
        Role::RightUpperArm,
        Role::RightLowerArm,
        Role::RightHand,
        Role::LeftUpperLeg,
        Role::LeftLowerLeg,
        Role::LeftFoot,
        Role::LeftToes,
        Role::RightUpperLeg,
        Role::RightLowerLeg,
        Role::RightFoot,
        Role::RightToes,
    ];

    /// The VRM name (`"leftUpperArm"`), used in `--map` files and messages.
    pub fn name(self) -> &'static str {
        match self {
            Role::Hips => "hips",
            Role::Spine => "spine",
            Role::Chest => "chest",
            Role::UpperChest => "upperChest",
            Role::Neck => "neck",
            Role::Head => "head",
            Role::LeftShoulder => "leftShoulder",
            Role::LeftUpperArm => "leftUpperArm",
            Role::LeftLowerArm => "leftLowerArm",
            Role::LeftHand => "leftHand",
            Role::RightShoulder => "rightShoulder",
            Role::RightUpperArm => "rightUpperArm",
            Role::RightLowerArm => "rightLowerArm",
            Role::RightHand => "rightHand",
            Role::LeftUpperLeg => "leftUpperLeg",
            Role::LeftLowerLeg => "leftLowerLeg",
            Role::LeftFoot => "leftFoot",
            Role::LeftToes => "leftToes",
            Role::RightUpperLeg => "rightUpperLeg",
            Role::RightLowerLeg => "rightLowerLeg",
            Role::RightFoot => "rightFoot",
            Role::RightToes => "rightToes",
        }
    }

    /// The role with this VRM name, ignoring case, spaces, `_` and `-`.
    pub fn from_name(name: &str) -> Option<Role> {
        let key: String = name
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .map(|c| c.to_ascii_lowercase())
            .collect();
        Role::ALL.into_iter().find(|r| r.name().to_ascii_lowercase() == key)
    }

    /// Roles every mapping must have: hips, head and the three joints of each limb.
    pub fn is_required(self) -> bool {
        !matches!(
            self,
            Role::Spine
                | Role::Chest
                | Role::UpperChest
                | Role::Neck
                | Role::LeftShoulder
                | Role::RightShoulder
                | Role::LeftToes
                | Role::RightToes
        )
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// One of the six IK-Rig chains.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChainKind {
    /// Hips to the joint the arms hang from (chest / upper chest).
    Spine,
    /// That joint to the head.
    Neck,
    LeftArm,
    RightArm,
    LeftLeg,
    RightLeg,
}

impl ChainKind {
    pub const ALL: [ChainKind; 6] = [
        ChainKind::Spine,
        ChainKind::Neck,
        ChainKind::LeftArm,
        ChainKind::RightArm,
        ChainKind::LeftLeg,
        ChainKind::RightLeg,
    ];

    /// Short lower-case name (`"left_arm"`), used in encoding column names.
    pub fn name(self) -> &'static str {
        match self {
            ChainKind::Spine => "spine",
            ChainKind::Neck => "neck",
            ChainKind::LeftArm => "left_arm",
            ChainKind::RightArm => "right_arm",
            ChainKind::LeftLeg => "left_leg",
            ChainKind::RightLeg => "right_leg",
        }
    }

    /// Limbs are solved with two-bone IK, spine and neck with FABRIK.
    pub fn is_limb(self) -> bool {
        !matches!(self, ChainKind::Spine | ChainKind::Neck)
    }
}

/// The roles of a skeleton's joints and its IK-Rig chains.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HumanoidMap {
    roles: [Option<usize>; 22],
    /// Joint indices of each chain, root first, in [`ChainKind::ALL`] order. A chain's root is
    /// fixed while it is solved (spine: hips; neck: the spine's end; limbs: upper arm / leg).
    chains: [Vec<usize>; 6],
    motion_root: usize,
}

impl HumanoidMap {
    /// The joint playing `role`, if any.
    pub fn joint(&self, role: Role) -> Option<usize> {
        self.roles[role.index()]
    }

    /// The joints of a chain, root first (at least two).
    pub fn chain(&self, kind: ChainKind) -> &[usize] {
        &self.chains[kind as usize]
    }

    /// The joint that carries root motion: the hips, or (when the legs hang beside the hips
    /// from a common root, as in Quaternius rigs) that root. Moving it moves hips and legs.
    pub fn motion_root(&self) -> usize {
        self.motion_root
    }

    /// Every `(role, joint)` pair that is mapped, in [`Role::ALL`] order.
    pub fn roles(&self) -> Vec<(Role, usize)> {
        Role::ALL
            .into_iter()
            .filter_map(|r| self.joint(r).map(|j| (r, j)))
            .collect()
    }

    /// Build a map from explicit roles (all required roles present), deriving the chains and
    /// checking that they are connected. Spine/chest/neck roles missing from `roles` are filled
    /// from the chain paths.
    pub fn from_roles(skeleton: &Skeleton, roles: &[(Role, usize)], asset: &str) -> Result<HumanoidMap, AnimError> {
        let mut table = [None; 22];
        for &(r, j) in roles {
            if j >= skeleton.joint_count() {
                return Err(unmapped(
                    asset,
                    vec![format!("{}: joint index {j} out of range", r.name())],
                ));
            }
            table[r.index()] = Some(j);
        }
        build(skeleton, table, asset)
    }
}

fn unmapped(asset: &str, problems: Vec<String>) -> AnimError {
    AnimError::Unmapped {
        asset: asset.to_string(),
        problems,
    }
}

/// Map a skeleton's joints to humanoid roles and chains from names, with a topology fallback.
/// The error lists every required role that could not be matched and why.
pub fn map_humanoid(skeleton: &Skeleton) -> Result<HumanoidMap, AnimError> {
    map_humanoid_with(skeleton, &[], &skeleton_label(skeleton))
}

/// [`map_humanoid`] with explicit `(role, joint name)` overrides (from a `--map` file), which
/// win over detection; `asset` names the skeleton in errors.
pub fn map_humanoid_with(
    skeleton: &Skeleton,
    overrides: &[(Role, String)],
    asset: &str,
) -> Result<HumanoidMap, AnimError> {
    let mut problems = Vec::new();
    let mut table: [Option<usize>; 22] = [None; 22];
    for (role, name) in overrides {
        match skeleton.index_of(name) {
            Some(j) => table[role.index()] = Some(j),
            None => problems.push(format!(
                "{}: the map file names joint {name:?}, which is not in the skeleton",
                role.name()
            )),
        }
    }
    if !problems.is_empty() {
        return Err(unmapped(asset, problems));
    }
    detect(skeleton, &mut table);
    build(skeleton, table, asset)
}

/// Whether a limb chain `[upper, lower, end]` has its end outside the limb's hierarchy: an IK
/// foot or hand parented to the root, which turning the upper and lower joints does not carry, so
/// whatever poses the limb must also place the end (the decoder and foot-skate removal do).
pub fn limb_end_detached(skeleton: &Skeleton, chain: &[usize]) -> bool {
    match *chain {
        [_, lower, end] => !is_ancestor(skeleton, lower, end),
        _ => false,
    }
}

/// The joints that turn with a limb's end beside the end itself: where the rig has no hand
/// joint and a finger root stands for the hand (its parent is the chain's lower joint, and its
/// name a finger's or palm's), the lower joint's other finger-named children, so that the whole
/// hand turns with the hand's goal rather than one finger. Empty for every other chain.
pub fn hand_companions(skeleton: &Skeleton, chain: &[usize]) -> Vec<usize> {
    let &[_, lower, end] = chain else {
        return Vec::new();
    };
    let stem = |j: usize| detect::side_and_stem(&skeleton.names[j]).1;
    if skeleton.parents.get(end).copied().flatten() != Some(lower) || !detect::is_finger_name(&stem(end)) {
        return Vec::new();
    }
    (0..skeleton.joint_count())
        .filter(|&j| j != end && skeleton.parents[j] == Some(lower) && detect::is_finger_name(&stem(j)))
        .collect()
}

/// A short description of a skeleton for messages: joint count and root name.
pub fn skeleton_label(skeleton: &Skeleton) -> String {
    let root = skeleton.names.first().map_or("(empty)", String::as_str);
    format!("skeleton with {} joints (root {root})", skeleton.joint_count())
}

/// Parse a `--map` file: one `role joint-name` pair per line (separated by `=`, `:`, a tab or
/// spaces; the joint name is the rest of the line), `#` comments and blank lines ignored.
pub fn parse_map_file(text: &str, file: &str) -> Result<Vec<(Role, String)>, AnimError> {
    let mut out = Vec::new();
    for (k, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let err = |message: String| AnimError::MapFile {
            file: file.to_string(),
            line: k + 1,
            message,
        };
        let split = line
            .find(|c: char| c == '=' || c == ':' || c.is_whitespace())
            .ok_or_else(|| err(format!("expected `role joint`, got {line:?}")))?;
        let (role, rest) = line.split_at(split);
        let name = rest
            .trim_start_matches(|c: char| c == '=' || c == ':' || c.is_whitespace())
            .trim();
        let role = Role::from_name(role).ok_or_else(|| {
            err(format!(
                "unknown role {role:?} (expected one of: {})",
                Role::ALL.map(Role::name).join(", ")
            ))
        })?;
        if name.is_empty() {
            return Err(err(format!("role {} has no joint name", role.name())));
        }
        if out.iter().any(|(r, _)| *r == role) {
            return Err(err(format!("role {} is given twice", role.name())));
        }
        out.push((role, name.to_string()));
    }
    Ok(out)
}

/// Check the role table and derive the chains.
fn build(skeleton: &Skeleton, mut table: [Option<usize>; 22], asset: &str) -> Result<HumanoidMap, AnimError> {
    let mut problems: Vec<String> = Role::ALL
        .into_iter()
        .filter(|r| r.is_required() && table[r.index()].is_none())
        .map(|r| format!("{}: {}", r.name(), why_missing(r)))
        .collect();
    if !problems.is_empty() {
        return Err(unmapped(asset, problems));
    }
    let get = |r: Role| table[r.index()].unwrap_or(0);
    let name = |j: usize| skeleton.names.get(j).cloned().unwrap_or_default();
    let hips = get(Role::Hips);
    let head = get(Role::Head);
    // Limbs: upper -> lower -> end must be a parent line, and hang below the hips or the chest.
    let mut limb = |kind: ChainKind, roles: [Role; 3]| -> Vec<usize> {
        let [u, l, e] = roles.map(get);
        match (path(skeleton, u, l), path(skeleton, l, e)) {
            (Some(a), Some(b)) if a.len() >= 2 && b.len() >= 2 => vec![u, l, e],
            // An end driven by IK from elsewhere (parented to the root): see `limb_end_detached`.
            (Some(a), None) if a.len() >= 2 && !is_ancestor(skeleton, u, e) && !is_ancestor(skeleton, e, u) => {
                vec![u, l, e]
            }
            _ => {
                problems.push(format!(
                    "{}: {} ({}), {} ({}) and {} ({}) are not a parent line",
                    kind.name(),
                    roles[0].name(),
                    name(u),
                    roles[1].name(),
                    name(l),
                    roles[2].name(),
                    name(e)
                ));
                Vec::new()
            }
        }
    };
    let left_arm = limb(
        ChainKind::LeftArm,
        [Role::LeftUpperArm, Role::LeftLowerArm, Role::LeftHand],
    );
    let right_arm = limb(
        ChainKind::RightArm,
        [Role::RightUpperArm, Role::RightLowerArm, Role::RightHand],
    );
    let left_leg = limb(
        ChainKind::LeftLeg,
        [Role::LeftUpperLeg, Role::LeftLowerLeg, Role::LeftFoot],
    );
    let right_leg = limb(
        ChainKind::RightLeg,
        [Role::RightUpperLeg, Role::RightLowerLeg, Role::RightFoot],
    );
    // The joint that carries root motion: the hips, or the root both hips and legs hang from.
    let motion_root = lowest_common_ancestor(skeleton, hips, get(Role::LeftUpperLeg))
        .and_then(|a| lowest_common_ancestor(skeleton, a, get(Role::RightUpperLeg)));
    let motion_root = match motion_root {
        Some(m) if ![Role::LeftUpperLeg, Role::RightUpperLeg].contains(&role_of(&table, m)) => m,
        _ => {
            problems.push(format!(
                "the legs ({}, {}) and hips ({}) do not hang from a common joint",
                name(get(Role::LeftUpperLeg)),
                name(get(Role::RightUpperLeg)),
                name(hips)
            ));
            hips
        }
    };
    // The branch the arms hang from ends the spine and starts the neck.
    let branch = lowest_common_ancestor(skeleton, get(Role::LeftUpperArm), get(Role::RightUpperArm));
    let spine = match branch {
        Some(b) if b != hips && is_ancestor(skeleton, hips, b) => path(skeleton, hips, b).unwrap_or_default(),
        _ => {
            problems.push(format!(
                "spine: the arms ({}, {}) do not branch from a joint below hips ({})",
                name(get(Role::LeftUpperArm)),
                name(get(Role::RightUpperArm)),
                name(hips)
            ));
            Vec::new()
        }
    };
    let neck = match branch {
        Some(b) if b != head && is_ancestor(skeleton, b, head) => path(skeleton, b, head).unwrap_or_default(),
        _ => {
            problems.push(format!(
                "neck: head ({}) is not below the joint the arms branch from",
                name(head)
            ));
            Vec::new()
        }
    };
    if !problems.is_empty() {
        return Err(unmapped(asset, problems));
    }
    // Optional trunk roles from the paths when not given.
    let inner = &spine[1..];
    let fill = |table: &mut [Option<usize>; 22], r: Role, j: Option<usize>| {
        if table[r.index()].is_none() {
            table[r.index()] = j;
        }
    };
    fill(&mut table, Role::Spine, inner.first().copied());
    fill(&mut table, Role::Chest, inner.get(1).copied());
    if inner.len() >= 3 {
        fill(&mut table, Role::UpperChest, inner.last().copied());
    }
    if neck.len() >= 3 {
        fill(&mut table, Role::Neck, neck.get(1).copied());
    }
    Ok(HumanoidMap {
        roles: table,
        chains: [spine, neck, left_arm, right_arm, left_leg, right_leg],
        motion_root,
    })
}

/// The role a joint plays in `table` (Hips when it plays none; only compared with limb roles).
fn role_of(table: &[Option<usize>; 22], j: usize) -> Role {
    Role::ALL
        .into_iter()
        .find(|r| table[r.index()] == Some(j))
        .unwrap_or(Role::Hips)
}

fn why_missing(role: Role) -> &'static str {
    match role {
        Role::Hips => "no joint named hips/hip/pelvis above both legs, and the legs have no common ancestor",
        Role::Head => "no joint named head below the arms' branch, and no joint above that branch",
        Role::LeftHand | Role::RightHand => "no joint named hand/wrist on that side, and no arm chain found",
        Role::LeftFoot | Role::RightFoot => "no joint named foot/ankle on that side, and no leg chain found",
        _ => "its limb's end joint has too few ancestors",
    }
}

#[cfg(test)]
mod tests;

/// A T-posed Mixamo-named test skeleton (hips at y = 1, left along +X, facing +Z).
#[cfg(test)]
pub(crate) fn test_skeleton() -> Skeleton {
    tests::humanoid(tests::mixamo)
}
