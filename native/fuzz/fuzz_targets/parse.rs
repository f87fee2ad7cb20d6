//! The parser on arbitrary bytes (see `rustyjson_core::checks::check_parse`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| rustyjson_core::checks::check_parse(data));
