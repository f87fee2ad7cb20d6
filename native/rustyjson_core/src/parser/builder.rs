//! The interface between the parser and what it builds: [`Builder`], and the strings it hands over ([`Str`]).

#[allow(unused_imports)] // for the doc links
use super::{parse_some, ParseError, Progress, LARGE_CONTAINER, LONG_NUMBER};
use super::{ExpectedKey, Limits};

/// Where a string's bytes are: a slice of the input (no escapes) or unescaped bytes in a scratch buffer.
#[derive(Clone, Copy, Debug)]
pub enum Str<'a> {
    /// Bytes `start..end` of the input (`bytes` is that slice), taken verbatim.
    Input {
        start: usize,
        end: usize,
        bytes: &'a [u8],
    },
    /// Unescaped bytes, valid only for the duration of the call.
    Unescaped(&'a [u8]),
}

impl<'a> Str<'a> {
    /// The string's bytes.
    #[inline]
    pub fn bytes(&self) -> &'a [u8] {
        match *self {
            Str::Input { bytes, .. } => bytes,
            Str::Unescaped(b) => b,
        }
    }
}

/// Builds values bottom-up. `V` is the builder's value type (a BEAM term in the NIF).
pub trait Builder {
    /// A built value.
    type V: Copy;
    /// A built object key.
    type K: Copy;
    fn null(&mut self) -> Self::V;
    fn boolean(&mut self, value: bool) -> Self::V;
    /// An integer that fits in 64 bits.
    fn int(&mut self, value: i64) -> Self::V;
    /// A longer integer token (`-?digits`, at most [`Limits::integer_bytes`] bytes).
    fn big_int(&mut self, text: &[u8]) -> Self::V;
    /// A float token, its text and its (finite) value.
    fn float(&mut self, text: &[u8], value: f64) -> Self::V;
    /// A float token out of the `f64` range (`1e400`): Jason's token error unless the builder takes it
    /// (`floats: :decimals` does).
    fn float_out_of_range(&mut self, _text: &[u8]) -> Option<Self::V> {
        None
    }
    fn string(&mut self, s: Str) -> Self::V;
    /// An object key; `Err(())` aborts the parse with [`ParseError::Key`] (e.g. `keys: :atoms!`).
    #[allow(clippy::result_unit_err)]
    fn key(&mut self, s: Str) -> Result<Self::K, ()>;
    /// The object key the builder expects next, if it predicts one (`keys: :intern` does, from the order keys
    /// came in before). When the input holds exactly that key next, the parser takes it with
    /// [`Builder::expected_key_found`] instead of scanning it and calling [`Builder::key`].
    #[inline(always)]
    fn expected_key(&mut self) -> Option<ExpectedKey> {
        None
    }
    /// The key [`Builder::expected_key`] returned is at `input[start..end]`.
    fn expected_key_found(&mut self, _start: usize, _end: usize) -> Self::K {
        unreachable!("no key was expected")
    }
    /// A second guess, asked for when the input does not hold the expected key next.
    #[inline(always)]
    fn alternate_key(&mut self) -> Option<ExpectedKey> {
        None
    }
    /// The key [`Builder::alternate_key`] returned is at `input[start..end]`.
    fn alternate_key_found(&mut self, _start: usize, _end: usize) -> Self::K {
        unreachable!("no alternate key was given")
    }
    /// An array of the given elements (possibly none).
    fn array(&mut self, items: &[Self::V]) -> Self::V;
    /// An object: `keys[i]` maps to `values[i]`, in document order (duplicates possible; the first wins).
    fn object(&mut self, keys: &[Self::K], values: &[Self::V]) -> Self::V;
    /// Whether to stop before building the container about to close, of `len` entries (at least
    /// [`LARGE_CONTAINER`]), so the caller can build it elsewhere: a NIF on a normal scheduler moves the build of
    /// a million-key map (hundreds of milliseconds in one VM call) to a dirty one. The parser then returns
    /// [`Progress::Paused`] with the closing bracket unread, and asks again when called again.
    #[inline(always)]
    fn defer_build(&mut self, _len: usize, _object: bool) -> bool {
        false
    }
    /// How far past [`parse_some`]'s limit a string may run and still be scanned in this call: a longer one
    /// (a value or a key) pauses the parse before its opening quote ([`Progress::Paused`], after
    /// [`Builder::string_deferred`]), so a NIF on a normal scheduler can move it to a dirty one (unescaping 50 MB
    /// takes tens of milliseconds in one piece). Read once per call; no limit by default.
    #[inline(always)]
    fn string_scan_limit(&self) -> usize {
        usize::MAX
    }
    /// The parse paused before a string longer than [`Builder::string_scan_limit`] allows, or a number longer
    /// than [`LONG_NUMBER`].
    #[inline(always)]
    fn string_deferred(&mut self) {}
    /// A stand-in for a key [`Builder::key`] refused: it waits on the key stack until the refusal is reported
    /// (after the pair's value and the `,` or `}` after it, as Jason converts keys), and no object is built with
    /// it. Only builders that refuse keys are asked.
    fn refused_key(&mut self) -> Self::K {
        unreachable!("this builder refuses no key")
    }
    /// The limits for this parse (read once per [`parse_some`] call).
    #[inline(always)]
    fn limits(&self) -> Limits {
        Limits::default()
    }
    /// With [`Limits::duplicate_keys_error`]: the index in `keys` (one object's, in document order) of the first
    /// key equal to an earlier one.
    fn first_duplicate(&mut self, _keys: &[Self::K]) -> Option<usize> {
        None
    }
    /// With [`Limits::duplicate_keys_error`], the object is built by this instead of [`Builder::object`]:
    /// `starts[i]` is where key `i`'s opening quote is.
    fn object_with_starts(
        &mut self,
        keys: &[Self::K],
        _starts: &[usize],
        values: &[Self::V],
    ) -> Self::V {
        self.object(keys, values)
    }
}
