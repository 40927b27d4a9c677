//! Path-aware access to the glTF JSON document: every lookup that can fail says where, as a
//! JSON path (`skins[0].joints[3]`), so errors point at the place in the file.

pub(super) use super::value::{Obj, Value};
use std::fmt;

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

/// A JSON path for error messages, formatted only when an error is raised: reading a valid
/// file builds no path strings. `&str`, `String` and [`at`] closures all qualify.
pub(super) trait Here: fmt::Display + Copy {}
impl<T: fmt::Display + Copy> Here for T {}

/// A path written by a closure on demand (`at(move |f| write!(f, "{here}.children[{k}]"))`).
#[derive(Clone, Copy)]
pub(super) struct At<F>(F);

impl<F: Fn(&mut fmt::Formatter<'_>) -> fmt::Result> fmt::Display for At<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (self.0)(f)
    }
}

/// A lazily formatted path (see [`At`]).
pub(super) fn at<F: Fn(&mut fmt::Formatter<'_>) -> fmt::Result + Copy>(write: F) -> At<F> {
    At(write)
}

/// `path.key`, or `key` at the root (an empty path), formatted on demand.
#[derive(Clone, Copy)]
pub(super) struct Join<'k, P>(P, &'k str);

impl<P: fmt::Display> fmt::Display for Join<'_, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Only ever formatted for an error message, so the temporary string costs nothing.
        let path = self.0.to_string();
        if path.is_empty() {
            f.write_str(self.1)
        } else {
            write!(f, "{path}.{}", self.1)
        }
    }
}

/// `path.key`, or `key` at the root.
pub(super) fn join<P: Here>(path: P, key: &str) -> Join<'_, P> {
    Join(path, key)
}

/// The value as an object, or an error naming `path`.
pub(super) fn object<'a, 'j>(value: &'a Value<'j>, path: impl Here) -> Result<&'a Obj<'j>, Fail> {
    value
        .as_object()
        .ok_or_else(|| fail(format!("{path}: expected a JSON object")))
}

/// `obj[key]` as an array; a missing key is an empty array.
pub(super) fn array<'a, 'j>(obj: &'a Obj<'j>, key: &str, path: impl Here) -> Result<&'a [Value<'j>], Fail> {
    match obj.get(key) {
        None => Ok(&[]),
        Some(Value::Array(items)) => Ok(items.as_slice()),
        Some(_) => Err(fail(format!("{}: expected an array", join(path, key)))),
    }
}

/// Element `i` of a top-level array such as `nodes`, as an object, or an error saying that the
/// referring place (`referrer`) names an item that does not exist.
pub(super) fn item<'a, 'j>(
    items: &'a [Value<'j>],
    i: usize,
    what: &str,
    referrer: impl Here,
) -> Result<&'a Obj<'j>, Fail> {
    let value = items
        .get(i)
        .ok_or_else(|| fail(format!("{referrer}: {what} {i} does not exist")))?;
    object(value, at(move |f| write!(f, "{what}s[{i}]")))
}

/// A non-negative integer (array index, count, byte offset).
pub(super) fn as_index(value: &Value, path: impl Here) -> Result<usize, Fail> {
    value.as_u64().and_then(|v| usize::try_from(v).ok()).ok_or_else(|| {
        fail(format!(
            "{path}: expected a non-negative integer, found {}",
            short(value)
        ))
    })
}

/// Optional `obj[key]` as a non-negative integer.
pub(super) fn opt_index(obj: &Obj, key: &str, path: impl Here) -> Result<Option<usize>, Fail> {
    obj.get(key).map(|v| as_index(v, join(path, key))).transpose()
}

/// Required `obj[key]` as a non-negative integer.
pub(super) fn req_index(obj: &Obj, key: &str, path: impl Here) -> Result<usize, Fail> {
    opt_index(obj, key, path)?.ok_or_else(|| fail(format!("{path}: missing \"{key}\"")))
}

/// Optional `obj[key]` as a string.
pub(super) fn opt_str<'a>(obj: &'a Obj<'_>, key: &str, path: impl Here) -> Result<Option<&'a str>, Fail> {
    match obj.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.as_ref())),
        Some(_) => Err(fail(format!("{}: expected a string", join(path, key)))),
    }
}

/// Optional `obj[key]` as a boolean (default `false`).
pub(super) fn flag(obj: &Obj, key: &str, path: impl Here) -> Result<bool, Fail> {
    match obj.get(key) {
        None => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(fail(format!("{}: expected true or false", join(path, key)))),
    }
}

/// Optional `obj[key]` as a finite number.
pub(super) fn opt_float(obj: &Obj, key: &str, path: impl Here) -> Result<Option<f32>, Fail> {
    obj.get(key)
        .map(|v| {
            v.as_f64()
                .map(|x| x as f32)
                .filter(|x| x.is_finite())
                .ok_or_else(|| fail(format!("{}: expected a number", join(path, key))))
        })
        .transpose()
}

/// Optional `obj[key]` as exactly `N` numbers.
pub(super) fn opt_floats<const N: usize>(obj: &Obj, key: &str, path: impl Here) -> Result<Option<[f32; N]>, Fail> {
    let Some(value) = obj.get(key) else {
        return Ok(None);
    };
    let bad = || fail(format!("{}: expected an array of {N} numbers", join(path, key)));
    let items = value.as_array().filter(|a| a.len() == N).ok_or_else(bad)?;
    let mut out = [0.0; N];
    for (o, v) in out.iter_mut().zip(items) {
        *o = v.as_f64().ok_or_else(bad)? as f32;
    }
    Ok(Some(out))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn message<T: std::fmt::Debug>(r: Result<T, Fail>) -> String {
        r.expect_err("should fail").message
    }

    #[test]
    fn lazy_paths_read_as_the_eager_ones_did() {
        let v = super::super::value::parse(br#"{"scene":"x","nodes":[{"mesh":-1,"rotation":[0,1]}],"animations":{}}"#)
            .expect("valid JSON");
        let root = object(&v, "(root)").expect("object");
        // At the root the key alone; below it `path.key`.
        assert_eq!(
            message(opt_index(root, "scene", "")),
            "scene: expected a non-negative integer, found \"x\""
        );
        assert_eq!(message(array(root, "animations", "")), "animations: expected an array");
        let nodes = array(root, "nodes", "").expect("array");
        let node = item(nodes, 0, "node", "scene").expect("node 0");
        let here = at(move |f| write!(f, "nodes[{}]", 0));
        assert_eq!(
            message(opt_index(node, "mesh", here)),
            "nodes[0].mesh: expected a non-negative integer, found -1"
        );
        assert_eq!(
            message(opt_floats::<4>(node, "rotation", here)),
            "nodes[0].rotation: expected an array of 4 numbers"
        );
        let nested = at(move |f| write!(f, "{here}.children[{}]", 3));
        assert_eq!(
            message(req_index(node, "skin", join(nested, "x"))),
            "nodes[0].children[3].x: missing \"skin\""
        );
        assert_eq!(
            message(item(nodes, 5, "node", nested)),
            "nodes[0].children[3]: node 5 does not exist"
        );
    }
}
