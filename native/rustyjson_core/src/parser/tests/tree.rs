//! The test builder: a plain Rust value tree in an arena, with switches for the builder hooks under test.

use super::super::*;

/// Builds a plain Rust value tree, to check what the parser produced.
#[derive(Debug, Clone, PartialEq)]
pub(in crate::parser) enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Big(String),
    Float(f64),
    Str(String, bool),
    Array(Vec<Value>),
    Object(Vec<(Value, Value)>),
}

/// Values live in an arena; the builder's value type is an index.
#[derive(Default)]
pub(in crate::parser) struct Tree {
    pub(in crate::parser) arena: Vec<Value>,
    pub(in crate::parser) reject_key: Option<&'static str>,
    /// Defer every large container's build once (`defer_build`), counting the deferrals.
    pub(in crate::parser) defer_large: bool,
    pub(in crate::parser) deferred: Vec<(usize, bool)>,
    pub(in crate::parser) limits: Limits,
    /// The key starts `object_with_starts` was given, per object in closing order.
    pub(in crate::parser) starts: Vec<Vec<usize>>,
    /// `string_scan_limit`, and how many times the parse paused before a long string.
    pub(in crate::parser) string_scan: Option<usize>,
    pub(in crate::parser) strings_deferred: usize,
}

impl Tree {
    fn add(&mut self, v: Value) -> usize {
        self.arena.push(v);
        self.arena.len() - 1
    }
}

impl Builder for Tree {
    type V = usize;
    type K = usize;
    fn null(&mut self) -> usize {
        self.add(Value::Null)
    }
    fn boolean(&mut self, v: bool) -> usize {
        self.add(Value::Bool(v))
    }
    fn int(&mut self, v: i64) -> usize {
        self.add(Value::Int(v))
    }
    fn big_int(&mut self, t: &[u8]) -> usize {
        self.add(Value::Big(String::from_utf8(t.to_vec()).unwrap()))
    }
    fn float(&mut self, _: &[u8], v: f64) -> usize {
        self.add(Value::Float(v))
    }
    fn string(&mut self, s: Str) -> usize {
        let referenced = matches!(s, Str::Input { .. });
        self.add(Value::Str(
            String::from_utf8(s.bytes().to_vec()).unwrap(),
            referenced,
        ))
    }
    fn key(&mut self, s: Str) -> Result<usize, ()> {
        if Some(s.bytes()) == self.reject_key.map(str::as_bytes) {
            return Err(());
        }
        Ok(self.string(s))
    }
    fn refused_key(&mut self) -> usize {
        usize::MAX
    }
    fn string_scan_limit(&self) -> usize {
        self.string_scan.unwrap_or(usize::MAX)
    }
    fn string_deferred(&mut self) {
        self.strings_deferred += 1;
    }
    fn array(&mut self, items: &[usize]) -> usize {
        let v = Value::Array(items.iter().map(|&i| self.arena[i].clone()).collect());
        self.add(v)
    }
    fn object(&mut self, keys: &[usize], values: &[usize]) -> usize {
        assert_eq!(keys.len(), values.len());
        let v = Value::Object(
            keys.iter()
                .zip(values)
                .map(|(&k, &v)| (self.arena[k].clone(), self.arena[v].clone()))
                .collect(),
        );
        self.add(v)
    }
    fn defer_build(&mut self, len: usize, object: bool) -> bool {
        // Asked again for the same container when the parse goes on: build it then.
        let again = self.deferred.last() == Some(&(len, object));
        if self.defer_large && !again {
            self.deferred.push((len, object));
            return true;
        }
        false
    }
    fn limits(&self) -> Limits {
        self.limits
    }
    fn first_duplicate(&mut self, keys: &[usize]) -> Option<usize> {
        // Equal text, whether escaped or not (`Str`'s flag says which).
        let text = |k: usize| match &self.arena[k] {
            Value::Str(text, _) => text,
            _ => unreachable!("keys are strings"),
        };
        (1..keys.len()).find(|&j| keys[..j].iter().any(|&i| text(i) == text(keys[j])))
    }
    fn object_with_starts(&mut self, keys: &[usize], starts: &[usize], values: &[usize]) -> usize {
        assert_eq!(keys.len(), starts.len());
        self.starts.push(starts.to_vec());
        self.object(keys, values)
    }
}
