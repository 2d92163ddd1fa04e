//! The acp converter (`--from acp`) on any bytes: see `targets::convert`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| insights_fuzz::targets::convert("acp", data));
