//! The term builder: the parser's [`Builder`] for BEAM terms (strings and keys as binaries or atoms, numbers,
//! arrays, and objects handed to `maps`), its per-call state and the per-thread tables it borrows.

use super::*;

/// A builder kept by a scheduler thread from call to call (see [`TermBuilder::reuse`]).
pub(super) type Kept = TermBuilder<'static>;

/// The most terms a kept builder's scratch vectors keep between calls.
const SCRATCH_KEEP: usize = 4096;

/// A fresh binary holding `bytes`.
#[inline(always)]
fn copy_binary(env: *mut ErlNifEnv, bytes: &[u8]) -> T {
    copy_binary_key(env, bytes).term
}

/// A fresh binary holding `bytes`, with a pointer to its data.
#[inline(always)]
fn copy_binary_key(env: *mut ErlNifEnv, bytes: &[u8]) -> Key {
    let mut term = MaybeUninit::<T>::uninit();
    unsafe {
        let ptr = enif_make_new_binary(env, bytes.len(), term.as_mut_ptr());
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr, bytes.len());
        Key {
            term: term.assume_init(),
            ptr,
            len: bytes.len(),
        }
    }
}

/// Refused keys of up to this many bytes (as written) are reported decoded; longer ones by their span.
const REFUSED_KEY_MAX: usize = 4096;

impl<'a> TermBuilder<'a> {
    /// A builder of terms in `env`; `input` (a binary term of `env`) holds `bytes`, the document; `opts` is the
    /// options term (read here: its flags and limits passed from another function come back through memory).
    pub(super) fn new(env: Env<'a>, input: T, bytes: &'a [u8], opts: Term<'_>) -> Self {
        let raw_env = env.as_c_arg();
        let layout = term::layout(raw_env);
        let mut builder = TermBuilder {
            // The per-call fields are set by `start_call`.
            env: raw_env,
            rust_env: env,
            input,
            input_bytes: bytes,
            keys: KEYS_STRINGS,
            copy_strings: false,
            ordered: false,
            decimals: false,
            limits: Limits::default(),
            duplicates_error: false,
            duplicates_last: false,
            key_positions: false,
            nil: atoms::nil().as_c_arg(),
            true_: atoms::true_().as_c_arg(),
            false_: atoms::false_().as_c_arg(),
            cache: KeyCache::new(),
            pairs: Vec::new(),
            key_terms: Vec::new(),
            // Only the first `shape_len` are ever read: left unwritten, a small decode does not pay for 768 bytes.
            shape: [const { MaybeUninit::uninit() }; FLATMAP_MAX],
            shape_len: 0,
            shape_idx: [0; FLATMAP_MAX],
            shapes: Vec::new(),
            last_shape: 0,
            intern_suspended: false,
            writes: &layout.writes,
            heap_binaries: layout.writes.heap_binaries.is_some(),
            short_input: layout.writes.input_copies_max(),
            flat_maps: layout.writes.flat_maps.is_some(),
            floats: layout.writes.floats.is_some(),
            arena: write::Arena::new(0),
            hash_maps: layout.hash_maps,
            hashed_maps: layout.hashed_maps,
            trie: Default::default(),
            large_shapes: Vec::new(),
            large_fills: Vec::new(),
            defer_large: false,
            deferred: false,
            shared: SharedText::empty(),
        };
        builder.start_call(env, input, bytes, opts);
        if builder.keys == KEYS_INTERN {
            INTERN.with(|c| {
                if let Ok(mut c) = c.try_borrow_mut() {
                    builder.cache = std::mem::take(&mut c.0);
                    builder.shapes = std::mem::take(&mut c.1);
                }
            });
            builder.cache.restart();
        }
        builder
    }

    /// This thread's kept builder (`kept`, made on first use) set up for a call as `new` would make it: only the
    /// per-call fields are written, and its scratch storage and key cache carry over. Making a builder was a
    /// tenth of decoding a small object (OTP 29); setting one up costs a few of its ~60 stores. The caller ends
    /// the call with [`TermBuilder::end_call`] (see [`CallEnd`]).
    #[inline(always)]
    pub(super) fn reuse<'s>(
        kept: &'s mut Option<Kept>,
        env: Env<'a>,
        input: T,
        bytes: &'a [u8],
        opts: Term<'_>,
    ) -> &'s mut TermBuilder<'a> {
        let Some(builder) = kept else {
            return Self::keep(kept, TermBuilder::new(env, input, bytes, opts));
        };
        // SAFETY: only lifetimes differ; a kept builder's references are stale between calls and are all
        // replaced here before anything reads them.
        let builder =
            unsafe { std::mem::transmute::<&'s mut Kept, &'s mut TermBuilder<'a>>(builder) };
        builder.start_call(env, input, bytes, opts);
        if builder.keys == KEYS_INTERN {
            builder.cache.restart();
        }
        builder
    }

    #[cold]
    fn keep<'s>(kept: &'s mut Option<Kept>, builder: TermBuilder<'a>) -> &'s mut TermBuilder<'a> {
        // SAFETY: as in `reuse`. A kept builder is never dropped (the thread's state is `ManuallyDrop`), and the
        // `keys: :intern` tables `new` may have taken from the thread stay with it.
        let builder = unsafe { std::mem::transmute::<TermBuilder<'a>, Kept>(builder) };
        let builder = kept.insert(builder);
        unsafe { std::mem::transmute::<&'s mut Kept, &'s mut TermBuilder<'a>>(builder) }
    }

    /// The fields that change from call to call: the environment, the input and what the options say.
    #[inline(always)]
    fn start_call(&mut self, env: Env<'a>, input: T, bytes: &'a [u8], opts: Term<'_>) {
        let raw_env = env.as_c_arg();
        let (opts_bits, limits) = options(&term::layout(raw_env).reads, opts);
        self.env = raw_env;
        self.rust_env = env;
        self.input = input;
        self.input_bytes = bytes;
        self.keys = match opts_bits & 7 {
            KEYS_STRINGS if bytes.len() >= INTERN_FROM => KEYS_INTERN,
            keys => keys,
        };
        self.copy_strings = opts_bits & STRINGS_COPY != 0;
        self.ordered = opts_bits & ORDERED_OBJECTS != 0;
        self.decimals = opts_bits & FLOAT_DECIMALS != 0;
        self.limits = Limits {
            duplicate_keys_error: opts_bits & (DUPLICATES_ERROR | KEY_POSITIONS) != 0,
            validate_utf8: opts_bits & RAW_STRINGS == 0,
            ..limits
        };
        self.duplicates_error = opts_bits & DUPLICATES_ERROR != 0;
        self.duplicates_last = opts_bits & DUPLICATES_LAST != 0;
        self.key_positions = opts_bits & KEY_POSITIONS != 0;
        // The last call's shape holds its terms: forgotten.
        self.shape_len = 0;
        self.intern_suspended = false;
        self.arena = write::Arena::new(bytes.len());
        self.defer_large = false;
        self.deferred = false;
        self.shared = SharedText::empty();
    }

    /// What every call does before it returns: the arena's unused rest becomes a valid term, and large-object
    /// shapes go back to the thread.
    pub(super) fn end_call(&mut self) {
        // SAFETY: the arena's terms were written in this call, which has not returned yet.
        unsafe { self.writes.seal(self.env, &self.arena) };
        // The chunk's bytes may not be written once the call returns.
        self.shared = SharedText::empty();
        if !self.large_shapes.is_empty() {
            LARGE_SHAPES.with(|c| {
                if let Ok(mut c) = c.try_borrow_mut() {
                    **c = std::mem::take(&mut self.large_shapes);
                }
            });
        }
        // Scratch a large object grew is not kept for the next call on this thread.
        if self.pairs.capacity() > SCRATCH_KEEP {
            self.pairs = Vec::new();
        }
        if self.key_terms.capacity() > SCRATCH_KEEP {
            self.key_terms = Vec::new();
        }
    }

    /// `keys: :intern`'s tables, taken out at a yield of a detached decode: its terms stay valid (nothing
    /// collects the decode's own environment), so the next slice goes on with them instead of a restarted
    /// cache, and keys and shapes stay shared across the whole document.
    pub(super) fn suspend_intern(&mut self) -> Option<InternTables> {
        self.intern_suspended = true;
        (self.keys == KEYS_INTERN).then(|| InternTables {
            cache: std::mem::take(&mut self.cache),
            shapes: std::mem::take(&mut self.shapes),
            last_shape: self.last_shape,
        })
    }

    /// Goes on with the tables of the decode's previous slice; the ones this builder took from the thread go
    /// back to it.
    pub(super) fn resume_intern(&mut self, tables: InternTables) {
        let fresh_cache = std::mem::replace(&mut self.cache, tables.cache);
        let fresh_shapes = std::mem::replace(&mut self.shapes, tables.shapes);
        self.last_shape = tables.last_shape;
        INTERN.with(|c| {
            if let Ok(mut c) = c.try_borrow_mut() {
                c.0 = fresh_cache;
                c.1 = fresh_shapes;
            }
        });
    }

    /// What the decode returns: the value, or `{:error, position}`, `{:error, {position, token}}` or
    /// `{:error, {:atom | :existing_atom, key}}` (turned into a `RustyJson.DecodeError` in Elixir).
    pub(super) fn outcome(&mut self, parsed: Result<T, ParseError>, bytes: &[u8]) -> T {
        let env = self.rust_env;
        let term = match parsed {
            Ok(term) => return term,
            Err(ParseError::UnexpectedByte(pos))
            | Err(ParseError::UnexpectedEnd(pos))
            | Err(ParseError::LongToken(pos)) => (atoms::error(), pos).encode(env),
            Err(ParseError::Memory { at, needed }) => {
                (atoms::error(), (atoms::out_of_memory(), at, needed as u64)).encode(env)
            }
            Err(ParseError::TooLarge { at, limit }) => {
                (atoms::error(), (atoms::term_limit(), at, limit as u64)).encode(env)
            }
            Err(ParseError::Token { start, end })
            | Err(ParseError::DuplicateKey { start, end }) => {
                let token = unsafe { Term::new(env, self.copy_binary(&bytes[start..end])) };
                (atoms::error(), (start, token)).encode(env)
            }
            Err(ParseError::Key { start, end }) => {
                // The key as decoded, from its token (the refusal may date from an earlier slice); a long one
                // as its span, which Elixir decodes in slices (unescaping it here could hold the scheduler).
                let key = if end - start <= REFUSED_KEY_MAX {
                    let validate = self.limits.validate_utf8;
                    let key = parser::string_at(bytes, start - 1, validate).unwrap_or_default();
                    unsafe { Term::new(env, self.copy_binary(&key)) }
                } else {
                    (start, end).encode(env)
                };
                let tag = if self.keys == KEYS_EXISTING_ATOMS {
                    atoms::existing_atom()
                } else {
                    atoms::atom()
                };
                (atoms::error(), (tag, key)).encode(env)
            }
        };
        term.as_c_arg()
    }

    #[inline(always)]
    fn copy_binary(&self, bytes: &[u8]) -> T {
        if self.heap_binaries && bytes.len() <= HEAP_BIN_MAX {
            return unsafe { self.writes.heap_binary(self.env, &self.arena, bytes) };
        }
        copy_binary(self.env, bytes)
    }

    /// The key at `input[start..end]` (no escapes): a sub-binary unless it is short or `strings: :copy`. Its
    /// bytes are read where they lie in the input, copied or not: read back from the copy just written, a key's
    /// first word (sorting a small object's keys) was a failed store forwarding.
    #[inline(always)]
    fn input_key(&self, start: usize, end: usize) -> Key {
        if self.copy_strings || end - start <= self.short_input {
            return self.key_at(self.copy_binary(&self.input_bytes[start..end]), start, end);
        }
        let term = unsafe { enif_make_sub_binary(self.env, self.input, start, end - start) };
        self.key_at(term, start, end)
    }

    /// The key at `input[start..end]`, whose term is `term` (made for it now, or by the key cache earlier).
    #[inline(always)]
    fn key_at(&self, term: T, start: usize, end: usize) -> Key {
        Key {
            term,
            ptr: self.input_bytes[start..].as_ptr(),
            len: end - start,
        }
    }

    /// A fresh binary holding `bytes`, with a pointer to its data (which stays put for the whole call).
    #[inline(always)]
    fn copy_key(&self, bytes: &[u8]) -> Key {
        if self.heap_binaries && bytes.len() <= HEAP_BIN_MAX {
            let term = unsafe { self.writes.heap_binary(self.env, &self.arena, bytes) };
            return Key {
                term,
                // The binary's own bytes: `bytes` may be the parser's scratch buffer, reused for the next key.
                ptr: self.writes.heap_binary_bytes(term),
                len: bytes.len(),
            };
        }
        copy_binary_key(self.env, bytes)
    }

    #[inline(always)]
    fn binary(&mut self, s: Str, copy: bool) -> T {
        match s {
            Str::Input { start, end, .. } if !copy && end - start > self.short_input => unsafe {
                enif_make_sub_binary(self.env, self.input, start, end - start)
            },
            Str::Unescaped(bytes)
                if !copy && (HEAP_BIN_MAX + 1..=SHARED_STRING_MAX).contains(&bytes.len()) =>
            {
                self.shared_binary(bytes)
            }
            s => self.copy_binary(s.bytes()),
        }
    }

    /// `bytes` (unescaped text) as a sub-binary of this call's shared binary ([`SharedText`]). Out of line: the
    /// string builder it would join is on every string's path.
    #[inline(never)]
    fn shared_binary(&mut self, bytes: &[u8]) -> T {
        if self.shared.len - self.shared.used < bytes.len() {
            if bytes.len() > SHARED_TAIL_MAX {
                return copy_binary(self.env, bytes);
            }
            self.new_shared_chunk(bytes.len());
        }
        let shared = &mut self.shared;
        // SAFETY: `bytes.len()` bytes are free past `used` in the chunk, which this call made and still owns.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                shared.data.add(shared.used),
                bytes.len(),
            );
            let term = enif_make_sub_binary(self.env, shared.term, shared.used, bytes.len());
            shared.used += bytes.len();
            term
        }
    }

    /// A fresh shared binary: [`SHARED_CHUNK`] bytes, or the input's size when it is smaller (a string's
    /// unescaped text is never longer than its token), and room for at least the `needed` bytes (never more
    /// than [`SHARED_TAIL_MAX`]).
    #[cold]
    fn new_shared_chunk(&mut self, needed: usize) {
        let len = SHARED_CHUNK.min(self.input_bytes.len()).max(needed);
        let mut term = MaybeUninit::<T>::uninit();
        // SAFETY: a binary of this call's environment; its bytes are written only during this call.
        let data = unsafe { enif_make_new_binary(self.env, len, term.as_mut_ptr()) };
        self.shared = SharedText {
            term: unsafe { term.assume_init() },
            data,
            len,
            used: 0,
        };
    }
}

impl Drop for TermBuilder<'_> {
    fn drop(&mut self) {
        self.end_call();
        if self.keys == KEYS_INTERN && !self.intern_suspended {
            // Give the tables back to this thread for the next call.
            INTERN.with(|c| {
                if let Ok(mut c) = c.try_borrow_mut() {
                    c.0 = std::mem::take(&mut self.cache);
                    c.1 = std::mem::take(&mut self.shapes);
                }
            });
        }
    }
}

/// A thread's kept builder in use by one call: [`TermBuilder::end_call`] runs when the call is done with it
/// (a panic too), as `Drop` does for a builder of its own.
pub(super) struct CallEnd<'s, 'a>(pub(super) &'s mut TermBuilder<'a>);

impl Drop for CallEnd<'_, '_> {
    fn drop(&mut self) {
        self.0.end_call();
    }
}

impl<'a> Builder for TermBuilder<'a> {
    type V = T;
    type K = Key;

    #[inline(always)]
    fn null(&mut self) -> T {
        self.nil
    }
    #[inline(always)]
    fn boolean(&mut self, value: bool) -> T {
        if value {
            self.true_
        } else {
            self.false_
        }
    }
    #[inline(always)]
    fn int(&mut self, value: i64) -> T {
        if let Some(t) = self.writes.small(value) {
            return t;
        }
        unsafe { enif_make_int64(self.env, value) }
    }
    fn big_int(&mut self, text: &[u8]) -> T {
        self.integer_from_text(text)
    }
    #[inline(always)]
    fn float(&mut self, text: &[u8], value: f64) -> T {
        if self.decimals {
            return self.decimal(text);
        }
        if self.floats {
            return unsafe { self.writes.float(self.env, &self.arena, value) };
        }
        unsafe { enif_make_double(self.env, value) }
    }
    fn float_out_of_range(&mut self, text: &[u8]) -> Option<T> {
        // `Decimal.new("1e400")` is fine: only native floats have a range.
        self.decimals.then(|| self.decimal(text))
    }
    #[inline(always)]
    fn string(&mut self, s: Str) -> T {
        self.binary(s, self.copy_strings)
    }
    #[inline(always)]
    fn expected_key(&mut self) -> Option<ExpectedKey> {
        if self.keys != KEYS_INTERN {
            return None;
        }
        self.cache.expected()
    }

    #[inline(always)]
    fn expected_key_found(&mut self, start: usize, end: usize) -> Key {
        let term = self.cache.take_expected();
        self.key_at(term, start, end)
    }
    #[inline(always)]
    fn alternate_key(&mut self) -> Option<ExpectedKey> {
        // Asked only after `expected_key` gave one, so the key mode is `:intern`.
        self.cache.alternate()
    }
    #[inline(always)]
    fn alternate_key_found(&mut self, start: usize, end: usize) -> Key {
        let term = self.cache.take_alternate();
        self.key_at(term, start, end)
    }

    #[inline(always)]
    fn key(&mut self, s: Str) -> Result<Key, ()> {
        match (self.keys, s) {
            (KEYS_STRINGS, Str::Input { start, end, .. }) => Ok(self.input_key(start, end)),
            (KEYS_STRINGS | KEYS_COPY, s) => Ok(self.copy_key(s.bytes())),
            (KEYS_INTERN, Str::Input { start, end, .. }) => {
                if !self.cache.look_up_next() {
                    // The cache gave up (keys rarely repeat): exactly the default's work until it tries again.
                    return Ok(self.input_key(start, end));
                }
                Ok(match self.cache.lookup(self.input_bytes, start, end) {
                    Lookup::Hit(term) => self.key_at(term, start, end),
                    Lookup::Vacant(vacant) => {
                        let key = self.input_key(start, end);
                        self.cache.fill(vacant, key.term);
                        key
                    }
                    Lookup::Skip => self.input_key(start, end),
                })
            }
            (KEYS_ATOMS | KEYS_EXISTING_ATOMS, s) => {
                let existing = self.keys == KEYS_EXISTING_ATOMS;
                match self.atom(s.bytes(), existing) {
                    Some(term) => Ok(Key {
                        term,
                        ptr: std::ptr::null(),
                        len: 0,
                    }),
                    None => Err(()),
                }
            }
            (_, s) => Ok(self.copy_key(s.bytes())),
        }
    }
    #[inline(always)]
    fn array(&mut self, items: &[T]) -> T {
        unsafe {
            match items.len() {
                1 => enif_make_list_cell(
                    self.env,
                    items[0],
                    enif_make_list_from_array(self.env, std::ptr::null(), 0),
                ),
                n => enif_make_list_from_array(self.env, items.as_ptr(), n as u32),
            }
        }
    }
    fn refused_key(&mut self) -> Key {
        Key {
            term: self.nil,
            ptr: std::ptr::null(),
            len: 0,
        }
    }
    #[inline(always)]
    fn string_scan_limit(&self) -> usize {
        if self.defer_large {
            STRING_SCAN
        } else {
            usize::MAX
        }
    }
    fn string_deferred(&mut self) {
        self.deferred = true;
    }
    #[inline(always)]
    fn defer_build(&mut self, len: usize, object: bool) -> bool {
        // Objects from 2048 pairs (about 0.3 ms of the VM's map build; a million keys take 200-400 ms), arrays
        // from 256K items (a list cell is two words written: ~0.5 ms).
        let large = if object { true } else { len >= 1 << 18 };
        self.deferred = self.defer_large && large;
        self.deferred
    }
    #[inline(always)]
    fn limits(&self) -> Limits {
        self.limits
    }
    fn first_duplicate(&mut self, keys: &[Key]) -> Option<usize> {
        if self.duplicates_error {
            maps::first_duplicate(keys)
        } else {
            None
        }
    }
    fn object_with_starts(&mut self, keys: &[Key], starts: &[usize], values: &[T]) -> T {
        if self.key_positions {
            self.ordered_object_with_positions(keys, starts, values)
        } else {
            self.object(keys, values)
        }
    }
    #[inline(always)]
    fn object(&mut self, keys: &[Key], values: &[T]) -> T {
        // Whether this object's keys came from the cache (it may turn on again as the object ends).
        let interned = self.keys == KEYS_INTERN && self.cache.enabled();
        if self.keys == KEYS_INTERN {
            self.cache.object_done();
        }
        if self.ordered {
            self.pairs.clear();
            for (k, &v) in keys.iter().zip(values) {
                let t = unsafe { enif_make_tuple_from_array(self.env, [k.term, v].as_ptr(), 2) };
                self.pairs.push(t);
            }
            let list = unsafe {
                enif_make_list_from_array(self.env, self.pairs.as_ptr(), self.pairs.len() as u32)
            };
            let k = [atoms::__struct__().as_c_arg(), atoms::values().as_c_arg()];
            let v = [atoms::ordered_object().as_c_arg(), list];
            return self.map_of(&k, &v);
        }
        if self.duplicates_last && keys.len() > 1 {
            return self.map_last_wins(interned, keys, values);
        }
        self.map(interned, keys, values)
    }
}

impl TermBuilder<'_> {
    /// The map of an object's pairs, the first of repeated keys winning (Jason's rule).
    #[inline(always)]
    fn map(&mut self, interned: bool, keys: &[Key], values: &[T]) -> T {
        let n = keys.len();
        if n == 0 {
            return unsafe { enif_make_new_map(self.env) };
        }
        let written = self.flat_maps && !keys[0].ptr.is_null();
        if n <= SMALL_MAP_PUTS && !written {
            // The single-entry fast path: no arrays, no sort. (Putting from the last pair back would keep the
            // first of duplicate keys if the limit grew.)
            unsafe {
                let mut map = enif_make_new_map(self.env);
                for (k, &v) in keys.iter().zip(values).rev() {
                    let mut out = MaybeUninit::<T>::uninit();
                    enif_make_map_put(self.env, map, k.term, v, out.as_mut_ptr());
                    map = out.assume_init();
                }
                return map;
            }
        }
        if (2..=FLATMAP_MAX).contains(&n) && !keys[0].ptr.is_null() || n == 1 && written {
            if interned {
                return self.flatmap_interned(keys, values);
            }
            return self.flatmap(keys, values);
        }
        if self.hash_maps.is_some()
            && (FLATMAP_MAX + 1..=hamt::MAX_KEYS).contains(&n)
            && !keys[0].ptr.is_null()
        {
            return self.large_map(keys, values);
        }
        if n > FLATMAP_MAX && !keys[0].ptr.is_null() {
            return self.large_map_laid_out(keys, values);
        }
        self.large_map_by_vm(keys, values)
    }

    /// `duplicate_keys: :last`: the pairs reversed, so the usual rule keeps the last of repeated keys.
    #[cold]
    fn map_last_wins(&mut self, interned: bool, keys: &[Key], values: &[T]) -> T {
        let keys: Vec<Key> = keys.iter().rev().copied().collect();
        let values: Vec<T> = values.iter().rev().copied().collect();
        self.map(interned, &keys, &values)
    }

    /// An ordered object whose pairs are `{key, value, position of the key's opening quote}`: `keys: fun` with
    /// `duplicate_keys: :error` compares the function's results in Elixir and reports a repeat there.
    #[cold]
    fn ordered_object_with_positions(&mut self, keys: &[Key], starts: &[usize], values: &[T]) -> T {
        if self.keys == KEYS_INTERN {
            self.cache.object_done();
        }
        self.pairs.clear();
        for ((k, &v), &start) in keys.iter().zip(values).zip(starts) {
            let at = unsafe { enif_make_int64(self.env, start as i64) };
            let t = unsafe { enif_make_tuple_from_array(self.env, [k.term, v, at].as_ptr(), 3) };
            self.pairs.push(t);
        }
        let list = unsafe {
            enif_make_list_from_array(self.env, self.pairs.as_ptr(), self.pairs.len() as u32)
        };
        let k = [atoms::__struct__().as_c_arg(), atoms::values().as_c_arg()];
        let v = [atoms::ordered_object().as_c_arg(), list];
        self.map_of(&k, &v)
    }
}
