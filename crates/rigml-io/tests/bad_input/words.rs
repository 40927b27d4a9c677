//! Words an error message must contain (one of, case-insensitive) to count as naming the
//! problem. Lists are short on purpose: a message that says none of them does not tell the
//! user what is wrong.

pub const NON_FINITE: &[&str] = &["nan", "non-finite", "not finite", "infinite", "finite"];
pub const OUT_OF_RANGE: &[&str] = &[
    "out of range",
    "range",
    "does not exist",
    "refers to",
    "exceed",
    "beyond",
    "but the",
];
pub const OUT_OF_BOUNDS: &[&str] = &[
    "beyond",
    "exceed",
    "out of",
    "bounds",
    "past",
    "outside",
    "short",
    "too small",
    "larger",
    "overflow",
    "truncated",
    "end of",
    "do not fit",
    "does not fit",
];
pub const CYCLE: &[&str] = &["cycle"];
pub const EMPTY: &[&str] = &["empty", "no vertices", "no geometry", "nothing"];
