//! String escaping for JSON output.

use crate::buffer::Buffer;

/// For each byte: 0 = copy as is, otherwise the escape kind.
/// `b'u'` means `\u00XX`; any other value is the letter after the backslash.
static JSON_ESCAPES: [u8; 256] = build_json_table();

const fn build_json_table() -> [u8; 256] {
    let mut table = [0u8; 256];
    let mut i = 0;
    while i < 0x20 {
        table[i] = b'u';
        i += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0A] = b'n';
    table[0x0C] = b'f';
    table[0x0D] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
}

const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";

/// Writes `s` as a quoted JSON string (escape mode `:json`). `s` must already be valid UTF-8.
pub fn write_json_string(out: &mut Buffer, s: &[u8]) {
    out.push(b'"');
    let mut start = 0;
    for (i, &b) in s.iter().enumerate() {
        let kind = JSON_ESCAPES[b as usize];
        if kind == 0 {
            continue;
        }
        out.extend(&s[start..i]);
        if kind == b'u' {
            out.extend(b"\\u00");
            out.push(HEX_UPPER[(b >> 4) as usize]);
            out.push(HEX_UPPER[(b & 0xF) as usize]);
        } else {
            out.push(b'\\');
            out.push(kind);
        }
        start = i + 1;
    }
    out.extend(&s[start..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn escaped(s: &str) -> String {
        let mut out = Buffer::default();
        write_json_string(&mut out, s.as_bytes());
        String::from_utf8(out.into_vec()).unwrap()
    }

    #[test]
    fn short_and_unicode_escapes() {
        assert_eq!(escaped("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(escaped("\n\t\r\u{8}\u{c}"), r#""\n\t\r\b\f""#);
        assert_eq!(escaped("\u{1}\u{1f}"), r#""\u0001\u001F""#);
        assert_eq!(escaped("héllo/<"), "\"héllo/<\"");
    }
}
