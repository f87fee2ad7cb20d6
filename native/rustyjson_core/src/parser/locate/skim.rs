//! Skips a container no path enters at block speed, validating it: 64 bytes at a time are classified into bit
//! masks (quotes, backslashes, brackets and punctuation, whitespace, control bytes, non-ASCII), strings are found
//! by a prefix XOR of their unescaped quotes, and the grammar is checked over the tokens alone (brackets, commas,
//! colons, string starts, scalar starts), never byte by byte.
//!
//! A skim proves a container valid or gives up: it never reports an error itself. On any doubt the locator walks
//! the same container token by token, which finds the error at the parser's position. So a skim must never accept
//! what the parser refuses; refusing what the parser accepts (a number it leaves to the parser that is invalid,
//! bytes past the container's end) costs only time. It is resumable at every block, so a NIF slice can end in
//! the middle of a large array.

use super::{LocateOptions, Parser, Skip};

mod classify;
use classify::{Classify, Masks, BLOCK};

/// How far past a block holding non-ASCII bytes the UTF-8 check runs in one call.
const UTF8_AHEAD: usize = 4096;
/// A scalar longer than this is left to the token walk (which bounds long numbers by the NIF's slices).
const LONG_SCALAR: usize = 1024;
/// Containers open at once in a skim (a bit each in a `u64`); a deeper one is a doubt.
const DEEPEST: u32 = 63;

// Token classes, by their first byte (`CLASS`).
const SCALAR: u8 = 0;
const QUOTE: u8 = 1;
const COLON: u8 = 2;
const COMMA: u8 = 3;
const OPEN_ARRAY: u8 = 4;
const OPEN_OBJECT: u8 = 5;
const CLOSE_ARRAY: u8 = 6;
const CLOSE_OBJECT: u8 = 7;

// The grammar's states: what may come next, and the kind of the innermost container.
/// Sticky: the skim has a doubt.
const DOUBT: u8 = 0;
const VALUE_IN_ARRAY: u8 = 1;
const VALUE_IN_OBJECT: u8 = 2;
const ARRAY_FIRST: u8 = 3;
const OBJECT_FIRST: u8 = 4;
const KEY: u8 = 5;
const COLON_NEXT: u8 = 6;
const AFTER_IN_ARRAY: u8 = 7;
const AFTER_IN_OBJECT: u8 = 8;
/// A valid closing bracket: the state is then the enclosing container's `AFTER_IN_*`.
const CLOSED: u8 = 9;

/// The class of a token by its first byte (every other byte starts a number or literal).
static CLASS: [u8; 256] = {
    let mut t = [SCALAR; 256];
    t[b'"' as usize] = QUOTE;
    t[b':' as usize] = COLON;
    t[b',' as usize] = COMMA;
    t[b'[' as usize] = OPEN_ARRAY;
    t[b'{' as usize] = OPEN_OBJECT;
    t[b']' as usize] = CLOSE_ARRAY;
    t[b'}' as usize] = CLOSE_OBJECT;
    t
};

/// `NEXT[state][class]`: the state after a token.
const NEXT: [[u8; 8]; 9] = {
    const D: u8 = DOUBT;
    // Columns: scalar, quote, colon, comma, `[`, `{`, `]`, `}`.
    const fn value(after: u8) -> [u8; 8] {
        [after, after, D, D, ARRAY_FIRST, OBJECT_FIRST, D, D]
    }
    [
        [D; 8],
        value(AFTER_IN_ARRAY),
        value(AFTER_IN_OBJECT),
        {
            let mut row = value(AFTER_IN_ARRAY);
            row[CLOSE_ARRAY as usize] = CLOSED;
            row
        },
        [D, COLON_NEXT, D, D, D, D, D, CLOSED],
        [D, COLON_NEXT, D, D, D, D, D, D],
        [D, D, VALUE_IN_OBJECT, D, D, D, D, D],
        [D, D, D, VALUE_IN_ARRAY, D, D, CLOSED, D],
        [D, D, D, KEY, D, D, D, CLOSED],
    ]
};

/// Bits per state in a [`TRANSITIONS`] word; a state is kept as its offset there (`state * STATE_BITS`).
const STATE_BITS: u32 = 6;

/// `NEXT` as one word per token class, the next state's offset at each state's offset: a step of the grammar is
/// a shift and a mask (two cycles), not a dependent table load. Closing brackets have two classes each (`+ 2`
/// when the enclosing container is an object), so that `CLOSED` becomes that container's `AFTER_IN_*`.
static TRANSITIONS: [u64; 16] = {
    let mut t = [0u64; 16];
    let mut class = 0;
    while class < 10 {
        let mut state = 0;
        while state < 9 {
            let (column, enclosing) = if class >= 8 {
                (class - 2, 1)
            } else {
                (class, 0)
            };
            let mut next = NEXT[state][column];
            if next == CLOSED {
                next = AFTER_IN_ARRAY + enclosing;
            }
            t[class] |= ((next as u32 * STATE_BITS) as u64) << (state as u32 * STATE_BITS);
            state += 1;
        }
        class += 1;
    }
    t
};

/// Whether skims are worth trying: where blocks are classified with SIMD (x86-64, aarch64). Elsewhere, and with
/// the `portable` feature, the locator walks everything token by token (a skim classifying byte by byte is slower
/// than that walk); the skim itself is tested there all the same.
pub(super) const SKIMS: bool = cfg!(all(
    any(target_arch = "x86_64", target_arch = "aarch64"),
    not(feature = "portable")
));

/// Where [`Skim::run`] stopped.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Skimmed {
    /// The container is valid and ends before this position.
    Ended(usize),
    /// Past the byte limit: [`Skim::run`] goes on from this position (a block boundary).
    Paused(usize),
    /// The container may be invalid: walk it token by token.
    Doubt,
}

/// A skim of the container whose opening bracket is at `start`, carried between slices.
pub(super) struct Skim {
    pub(super) start: usize,
    /// The nesting and integer limits, and whether floats out of range are valid.
    options: LocateOptions,
    /// The next block's first byte.
    next: usize,
    /// All ones when the previous block ended inside a string.
    in_string: u64,
    /// The previous block ended with a backslash that escapes this block's first byte.
    escaping: bool,
    /// The previous block's last byte was part of a number or literal.
    in_scalar: bool,
    /// The grammar's state, as its offset in a [`TRANSITIONS`] word.
    state: u8,
    /// The open containers' kinds, innermost in bit 0 (1 for an object), and how many are open.
    kinds: u64,
    depth: u32,
    /// How many containers may be open at once (the nesting limit less the locator's open frames).
    room: u32,
    /// Bytes before this position are known to be UTF-8 (carried from skim to skim: a check runs ahead of the
    /// block that needed it, past the end of a small container).
    pub(super) utf8_to: usize,
    /// The `\u` escape at this position is the low half of a surrogate pair already checked.
    low_surrogate: usize,
}

/// Bit `i` is the XOR of bits `0..=i`: set from an opening quote up to (not including) its closing one.
#[inline(always)]
fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

/// The bytes escaped by a backslash; `carry`: the previous block's last byte escapes this block's first, and on
/// return whether this block's last does the same for the next. Backslashes are rare: a loop over them.
#[inline(always)]
fn escaped(backslash: u64, carry: &mut bool) -> u64 {
    if backslash == 0 && !*carry {
        return 0;
    }
    let mut escaped = 0;
    let mut rest = backslash;
    if std::mem::take(carry) {
        escaped = 1;
        rest &= !1;
    }
    while rest != 0 {
        let i = rest.trailing_zeros();
        if i == 63 {
            *carry = true;
            break;
        }
        escaped |= 2 << i;
        // The escaped byte, a backslash or not, escapes nothing.
        rest &= !(3 << i);
    }
    escaped
}

impl Skim {
    /// A skim of the container opened at `input[start]`, with `room` containers allowed open at once (at least 1);
    /// `utf8_to`: the input before it is known to be UTF-8 (a character boundary).
    pub(super) fn new(start: usize, room: usize, utf8_to: usize, options: LocateOptions) -> Self {
        Skim {
            start,
            options,
            next: start,
            in_string: 0,
            escaping: false,
            in_scalar: false,
            // Any state that takes a value (as an offset): the container's own closing bracket ends the skim.
            state: VALUE_IN_ARRAY * STATE_BITS as u8,
            kinds: 0,
            depth: 0,
            room: room.min(DEEPEST as usize) as u32,
            utf8_to,
            low_surrogate: usize::MAX,
        }
    }

    /// The bytes classified so far end here (after a doubt: the end of the block that raised it).
    pub(super) fn skimmed_to(&self) -> usize {
        self.next
    }

    /// Skims blocks until the container ends, the position passes `limit` at a block boundary, or a doubt.
    pub(super) fn run(&mut self, input: &[u8], limit: usize) -> Skimmed {
        #[cfg(all(target_arch = "x86_64", not(feature = "portable")))]
        {
            if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("bmi2") {
                // SAFETY: the CPU has AVX2 and BMI2.
                return unsafe { self.run_avx2(input, limit) };
            }
            self.run_with::<classify::Sse2>(input, limit)
        }
        #[cfg(all(target_arch = "aarch64", not(feature = "portable")))]
        return self.run_with::<classify::Neon>(input, limit);
        #[cfg(any(
            not(any(target_arch = "x86_64", target_arch = "aarch64")),
            feature = "portable"
        ))]
        self.run_with::<classify::Bytes>(input, limit)
    }

    #[cfg(all(target_arch = "x86_64", not(feature = "portable")))]
    #[target_feature(enable = "avx2,bmi1,bmi2")]
    unsafe fn run_avx2(&mut self, input: &[u8], limit: usize) -> Skimmed {
        self.run_with::<classify::Avx2>(input, limit)
    }

    #[inline(always)]
    fn run_with<C: Classify>(&mut self, input: &[u8], limit: usize) -> Skimmed {
        let mut padded: [u8; BLOCK];
        loop {
            let base = self.next;
            if base >= input.len() {
                // The input ends inside the container (or a string in it).
                return Skimmed::Doubt;
            }
            if base > limit {
                return Skimmed::Paused(base);
            }
            let block: &[u8; BLOCK] = match input.get(base..base + BLOCK) {
                Some(bytes) => bytes.try_into().expect("a block"),
                None => {
                    // The input's last bytes, padded with whitespace (which makes no token).
                    padded = [b' '; BLOCK];
                    padded[..input.len() - base].copy_from_slice(&input[base..]);
                    &padded
                }
            };
            self.next = base + BLOCK;
            match self.block(input, base, block, C::masks(block)) {
                Some(None) => {}
                Some(Some(end)) => return Skimmed::Ended(end),
                None => return Skimmed::Doubt,
            }
        }
    }

    /// One block at `base`, classified as `m`: `Some(Some(end))` if the container closes in it, `Some(None)` if
    /// it goes on, `None` on a doubt.
    #[inline(always)]
    fn block(
        &mut self,
        input: &[u8],
        base: usize,
        block: &[u8; BLOCK],
        m: Masks,
    ) -> Option<Option<usize>> {
        let escaped = escaped(m.backslash, &mut self.escaping);
        let quotes = m.quote & !escaped;
        let in_string = prefix_xor(quotes) ^ self.in_string;
        self.in_string = ((in_string as i64) >> 63) as u64;
        // Outside strings, backslashes and non-ASCII bytes are never valid; inside, control bytes are not.
        if (m.backslash | m.high) & !in_string != 0 || m.control & in_string != 0 {
            return None;
        }
        if m.high != 0 && self.options.limits.validate_utf8 {
            self.check_utf8(input, base)?;
        }
        let escapes = m.backslash & !escaped & in_string;
        if escapes != 0 {
            self.check_escapes(input, base, escapes)?;
        }
        let scalar = !(m.breaks | in_string);
        let scalar_starts = scalar & !((scalar << 1) | self.in_scalar as u64);
        self.in_scalar = scalar >> 63 != 0;
        // Scalar bytes that are not digits: a run with none (and no leading zero) is a valid integer.
        let odd = scalar & !m.digit;
        let fast_int = self.options.limits.integer_bytes.min(18) as u32;
        let mut tokens = (m.structural & !in_string) | (quotes & in_string) | scalar_starts;
        // Numbers and literals first, on their own: digits alone (no leading zero) within the block make a valid
        // integer without a look at its bytes; anything else goes to `scalar_at`.
        let mut starts = scalar_starts;
        while starts != 0 {
            let i = starts.trailing_zeros();
            starts &= starts - 1;
            let run = (!scalar >> i).trailing_zeros();
            let digits_only = i + run < 64
                && run <= fast_int
                && (odd >> i) & ((1 << run) - 1) == 0
                && (block[i as usize] != b'0' || run == 1);
            if !digits_only {
                scalar_at(input, base + i as usize, &self.options)?;
            }
        }
        // Then the grammar: the state is a shift and a mask, the open containers' kinds a shift in or out.
        let (mut state, mut kinds, mut depth) = (self.state as u64, self.kinds, self.depth);
        while tokens != 0 {
            let i = tokens.trailing_zeros();
            tokens &= tokens - 1;
            let class = CLASS[block[i as usize] as usize];
            let closing = class >= CLOSE_ARRAY;
            // The enclosing container's kind (bit 1: bit 0 is the one a closing bracket closes).
            let index = class as usize + (closing as usize & (kinds >> 1) as usize & 1) * 2;
            state = (TRANSITIONS[index & 15] >> state) & 63;
            if class >= OPEN_ARRAY {
                if closing {
                    depth -= 1;
                    kinds >>= 1;
                    if depth == 0 {
                        return (state != DOUBT as u64).then_some(Some(base + i as usize + 1));
                    }
                } else {
                    depth += 1;
                    kinds = (kinds << 1) | (class & 1) as u64;
                    if depth > self.room {
                        return None;
                    }
                }
            }
        }
        (self.state, self.kinds, self.depth) = (state as u8, kinds, depth);
        (state != DOUBT as u64).then_some(None)
    }

    /// The block at `base` holds non-ASCII bytes (all in strings): checks the UTF-8 from where the last check
    /// ended, a few KiB ahead, to a character boundary.
    #[cold]
    fn check_utf8(&mut self, input: &[u8], base: usize) -> Option<()> {
        let end_of_block = (base + BLOCK).min(input.len());
        if self.utf8_to >= end_of_block {
            return Some(());
        }
        // A block after one without non-ASCII bytes starts on a character boundary.
        let from = self.utf8_to.max(base);
        let mut to = (end_of_block + UTF8_AHEAD).min(input.len());
        let mut back = 0;
        while to < input.len() && input[to] & 0xC0 == 0x80 && back < 3 {
            to -= 1;
            back += 1;
        }
        simdutf8::basic::from_utf8(&input[from..to]).ok()?;
        self.utf8_to = to;
        Some(())
    }

    /// Checks each escape (a backslash in a string that is not itself escaped) at `base` plus a bit of `escapes`.
    #[cold]
    fn check_escapes(&mut self, input: &[u8], base: usize, mut escapes: u64) -> Option<()> {
        while escapes != 0 {
            let at = base + escapes.trailing_zeros() as usize;
            escapes &= escapes - 1;
            match input.get(at + 1)? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                b'u' => {
                    let unit = crate::parser::strings::hex4(input.get(at + 2..at + 6)?)?;
                    if (0xD800..0xDC00).contains(&unit) {
                        // A high surrogate: valid only with a low one right after it.
                        let low = match input.get(at + 6..at + 12)? {
                            [b'\\', b'u', hex @ ..] => crate::parser::strings::hex4(hex)?,
                            _ => return None,
                        };
                        if !(0xDC00..0xE000).contains(&low) {
                            return None;
                        }
                        self.low_surrogate = at + 6;
                    } else if (0xDC00..0xE000).contains(&unit) && at != self.low_surrogate {
                        return None;
                    }
                }
                _ => return None,
            }
        }
        Some(())
    }
}

/// Checks the number or literal starting at `input[at]` (not whitespace, punctuation or a quote) and that it
/// ends the run of such bytes; simple integers and fractions here, the rest by the parser's own number.
#[inline(never)]
fn scalar_at(input: &[u8], at: usize, options: &LocateOptions) -> Option<()> {
    let end = match input[at] {
        b't' => literal(input, at, b"true")?,
        b'f' => literal(input, at, b"false")?,
        b'n' => literal(input, at, b"null")?,
        _ => number(input, at, options)?,
    };
    match input.get(end) {
        None => Some(()),
        Some(&b) if super::ends_scalar(b) => Some(()),
        Some(_) => None,
    }
}

#[inline(always)]
fn literal(input: &[u8], at: usize, word: &[u8]) -> Option<usize> {
    (input.get(at..at + word.len())? == word).then_some(at + word.len())
}

#[inline(always)]
fn number(input: &[u8], at: usize, options: &LocateOptions) -> Option<usize> {
    // Runs of digits stop at the scan's cap: a longer number is the token walk's.
    let cap = input.len().min(at + LONG_SCALAR);
    let digits = |mut i: usize| {
        while i < cap && input[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    let mut i = at + (input[at] == b'-') as usize;
    match input.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i = digits(i + 1),
        _ => return None,
    }
    match input.get(i) {
        Some(b'e' | b'E') => exact_number(input, at, options),
        Some(b'.') => {
            let fraction = i + 1;
            i = digits(fraction);
            if i == fraction || i == cap {
                return None;
            }
            // Without an exponent, fewer than 300 integer digits are always within the float range.
            if matches!(input.get(i), Some(b'e' | b'E')) || fraction - at > 300 {
                return exact_number(input, at, options);
            }
            Some(i)
        }
        _ if i - at <= 18 && i - at <= options.limits.integer_bytes => Some(i),
        _ => exact_number(input, at, options),
    }
}

/// A number the fast check leaves alone (an exponent, a long integer): the parser's own, which knows the digit
/// limit and the float range.
#[cold]
fn exact_number(input: &[u8], at: usize, options: &LocateOptions) -> Option<usize> {
    let end = input[at..]
        .iter()
        .take(LONG_SCALAR + 1)
        .position(|&b| super::ends_scalar(b))
        .map_or(input.len().min(at + LONG_SCALAR + 1), |n| at + n);
    if end - at > LONG_SCALAR {
        return None;
    }
    let mut p = Parser::new(input, at, options.limits, true);
    let decimals = options.decimals;
    p.number(&mut Skip { decimals }).ok()?;
    Some(p.pos)
}

#[cfg(test)]
mod tests;
