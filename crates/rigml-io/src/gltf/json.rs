//! Path-aware access to the glTF JSON document: every lookup that can fail says where, as a
//! JSON path (`skins[0].joints[3]`), so errors point at the place in the file.

use serde_json::{Map, Value};

/// A JSON object.
pub(super) type Obj = Map<String, Value>;

/// Why reading failed, before the file name is attached: `unsupported` marks valid glTF that
/// rigml cannot represent (compressed meshes, shear), the rest is malformed input.
#[derive(Debug)]
pub(super) struct Fail {
    pub unsupported: bool,
    pub message: String,
}

/// A malformed-input failure with its message (which starts with the JSON path).
pub(super) fn fail(message: impl Into<String>) -> Fail {
    Fail {
        unsupported: false,
        message: message.into(),
    }
}

/// A failure for valid input that rigml cannot represent.
pub(super) fn unsupported(message: impl Into<String>) -> Fail {
    Fail {
        unsupported: true,
        message: message.into(),
    }
}

/// The value as an object, or an error naming `path`.
pub(super) fn object<'a>(value: &'a Value, path: &str) -> Result<&'a Obj, Fail> {
    value
        .as_object()
        .ok_or_else(|| fail(format!("{path}: expected a JSON object")))
}

/// `obj[key]` as an array; a missing key is an empty array.
pub(super) fn array<'a>(obj: &'a Obj, key: &str, path: &str) -> Result<&'a [Value], Fail> {
    match obj.get(key) {
        None => Ok(&[]),
        Some(Value::Array(items)) => Ok(items),
        Some(_) => Err(fail(format!("{}: expected an array", join(path, key)))),
    }
}

/// Element `i` of a top-level array such as `nodes`, as an object, or an error saying that the
/// referring place (`referrer`) names an item that does not exist.
pub(super) fn item<'a>(items: &'a [Value], i: usize, what: &str, referrer: &str) -> Result<&'a Obj, Fail> {
    let value = items
        .get(i)
        .ok_or_else(|| fail(format!("{referrer}: {what} {i} does not exist")))?;
    object(value, &format!("{what}s[{i}]"))
}

/// A non-negative integer (array index, count, byte offset).
pub(super) fn as_index(value: &Value, path: &str) -> Result<usize, Fail> {
    value.as_u64().and_then(|v| usize::try_from(v).ok()).ok_or_else(|| {
        fail(format!(
            "{path}: expected a non-negative integer, found {}",
            short(value)
        ))
    })
}

/// Optional `obj[key]` as a non-negative integer.
pub(super) fn opt_index(obj: &Obj, key: &str, path: &str) -> Result<Option<usize>, Fail> {
    obj.get(key).map(|v| as_index(v, &join(path, key))).transpose()
}

/// Required `obj[key]` as a non-negative integer.
pub(super) fn req_index(obj: &Obj, key: &str, path: &str) -> Result<usize, Fail> {
    opt_index(obj, key, path)?.ok_or_else(|| fail(format!("{path}: missing \"{key}\"")))
}

/// Optional `obj[key]` as a string.
pub(super) fn opt_str<'a>(obj: &'a Obj, key: &str, path: &str) -> Result<Option<&'a str>, Fail> {
    match obj.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(fail(format!("{}: expected a string", join(path, key)))),
    }
}

/// Optional `obj[key]` as a boolean (default `false`).
pub(super) fn flag(obj: &Obj, key: &str, path: &str) -> Result<bool, Fail> {
    match obj.get(key) {
        None => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(fail(format!("{}: expected true or false", join(path, key)))),
    }
}

/// Optional `obj[key]` as exactly `N` numbers.
pub(super) fn opt_floats<const N: usize>(obj: &Obj, key: &str, path: &str) -> Result<Option<[f32; N]>, Fail> {
    let Some(value) = obj.get(key) else {
        return Ok(None);
    };
    let here = join(path, key);
    let items = value
        .as_array()
        .filter(|a| a.len() == N)
        .ok_or_else(|| fail(format!("{here}: expected an array of {N} numbers")))?;
    let mut out = [0.0; N];
    for (o, v) in out.iter_mut().zip(items) {
        *o = v
            .as_f64()
            .ok_or_else(|| fail(format!("{here}: expected an array of {N} numbers")))? as f32;
    }
    Ok(Some(out))
}

/// `path.key`, or `key` at the root.
pub(super) fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// A value for an error message, cut short.
fn short(value: &Value) -> String {
    let mut s = value.to_string();
    if s.len() > 40 {
        let cut = (0..=40).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0);
        s.truncate(cut);
        s.push('…');
    }
    s
}
