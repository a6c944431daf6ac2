//! Values that may be arbitrarily deep, torn down without recursion.
//!
//! `serde_json::Value`'s own `Drop` recurses once per nesting level, so dropping a value
//! `JSON.parse` accepts (100 000 levels) overflows the stack. Whatever holds a parsed value holds
//! it as a [`Deep`], whose `Drop` is [`dispose`]: cheap for shallow values (only the top-level
//! members are looked at when none is a container), iterative for the rest.

use serde_json::{Map, Value};
use std::fmt;
use std::ops::{Deref, DerefMut};

/// An owned JSON value (or object) that is dropped without recursion, however deep it is.
///
/// Reads and writes go through [`Deref`]/[`DerefMut`]; [`Deep::into_inner`] hands the plain value
/// back, and with it the duty to drop it safely.
pub struct Deep<T: Into<Value> + Default = Value>(T);

impl<T: Into<Value> + Default> Deep<T> {
    /// Takes ownership of `v`.
    pub fn new(v: T) -> Self {
        Deep(v)
    }

    /// The plain value: from here on its drop recurses again (move it into another `Deep`, or
    /// into a holder that frees it safely).
    pub fn into_inner(mut self) -> T {
        std::mem::take(&mut self.0)
    }
}

impl Deep {
    /// The object this value is, still dropped safely; `None` (and the value dropped) otherwise.
    #[inline]
    pub fn into_object(mut self) -> Option<Deep<Map<String, Value>>> {
        match std::mem::take(&mut self.0) {
            Value::Object(m) => Some(Deep(m)),
            other => {
                self.0 = other;
                None
            }
        }
    }
}

impl<T: Into<Value> + Default> Drop for Deep<T> {
    fn drop(&mut self) {
        dispose(std::mem::take(&mut self.0).into());
    }
}

impl<T: Into<Value> + Default> Deref for Deep<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: Into<Value> + Default> DerefMut for Deep<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

impl<T: Into<Value> + Default> Default for Deep<T> {
    fn default() -> Self {
        Deep(T::default())
    }
}

impl<T: Into<Value> + Default> From<T> for Deep<T> {
    fn from(v: T) -> Self {
        Deep(v)
    }
}

/// A copy (`Clone` recurses: meant for shallow values).
impl<T: Into<Value> + Default + Clone> Clone for Deep<T> {
    fn clone(&self) -> Self {
        Deep(self.0.clone())
    }
}

/// Compares the values held (`==` recurses: meant for shallow values).
impl<T: Into<Value> + Default + PartialEq> PartialEq for Deep<T> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

/// Shown as the value it holds (`Debug` recurses: meant for shallow values in tests and logs).
impl<T: Into<Value> + Default + fmt::Debug> fmt::Debug for Deep<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Drops a value without recursion, so a 100 000-deep value cannot overflow the stack. Only the
/// top-level members are looked at when none of them is a container.
#[inline]
pub(super) fn dispose(v: Value) {
    let mut stack: Vec<Value> = match v {
        Value::Array(a) if a.iter().any(is_container) => a,
        Value::Object(m) if m.values().any(is_container) => m.into_iter().map(|(_, v)| v).collect(),
        _ => return,
    };
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(a) => stack.extend(a),
            Value::Object(m) => stack.extend(m.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

#[inline]
fn is_container(v: &Value) -> bool {
    matches!(v, Value::Array(_) | Value::Object(_))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::json::parse;

    /// Runs `f` on a thread with a 256 KiB stack: a recursive drop of a 200 000-deep value
    /// needs megabytes, so finishing proves the drop is iterative.
    fn on_a_small_stack(f: impl FnOnce() + Send + 'static) {
        std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(f)
            .expect("spawn")
            .join()
            .expect("no stack overflow");
    }

    /// A `depth`-deep value built without the parser: arrays in objects in arrays… (the outermost
    /// is an array when `depth` is odd).
    fn nested(depth: usize) -> Value {
        let mut v = Value::Null;
        for i in 0..depth {
            v = if i % 2 == 0 {
                Value::Array(vec![v])
            } else {
                let mut m = Map::new();
                m.insert("k".into(), v);
                Value::Object(m)
            };
        }
        v
    }

    #[test]
    fn dropping_a_200k_deep_value_does_not_overflow_a_small_stack() {
        on_a_small_stack(|| {
            let array = Deep::new(nested(200_001));
            let object = Deep::new(nested(200_000));
            assert!(array.is_array() && object.is_object());
            drop(array);
            drop(object.into_object());
            let text = format!("{}{}", "[".repeat(200_000), "]".repeat(200_000));
            drop(Deep::new(parse(&text).unwrap().value));
        });
    }

    #[test]
    fn the_plain_value_comes_back_and_a_non_object_is_no_object() {
        let d = Deep::new(serde_json::json!({"a": [1]}));
        assert_eq!(d["a"][0], 1);
        assert_eq!(d.into_inner(), serde_json::json!({"a": [1]}));
        assert!(Deep::new(serde_json::json!([1])).into_object().is_none());
        let mut o = Deep::new(serde_json::json!({"a": 1}))
            .into_object()
            .unwrap();
        assert_eq!(o.shift_remove("a"), Some(serde_json::json!(1)));
    }
}
