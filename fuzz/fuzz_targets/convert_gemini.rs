//! The gemini converter (`--from gemini`) on any bytes: see `targets::convert`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| insights_fuzz::targets::convert("gemini", data));
