//! `insights-baseline skip|value`: JSON lines on standard input, read by serde_json alone.
//!
//! - `skip`: every line parsed into `serde::de::IgnoredAny` (no tree, nothing written);
//! - `value`: every line parsed into a `serde_json::Value` and written back, compact, one per
//!   line, to standard output.
//!
//! Lines serde_json refuses are counted and skipped. The line loop is the one a filter has:
//! a reused line buffer, a buffered reader and a buffered, locked standard output.

use std::io::{self, BufRead, BufReader, BufWriter, Write};

fn main() -> io::Result<()> {
    let mode = std::env::args().nth(1).unwrap_or_default();
    let write_back = match mode.as_str() {
        "skip" => false,
        "value" => true,
        _ => {
            eprintln!("usage: insights-baseline skip|value < LINES");
            std::process::exit(2);
        }
    };
    let mut input = BufReader::with_capacity(64 * 1024, io::stdin().lock());
    let mut out = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    let mut line = Vec::with_capacity(64 * 1024);
    let mut refused = 0u64;
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        if write_back {
            match serde_json::from_slice::<serde_json::Value>(&line) {
                Ok(v) => {
                    serde_json::to_writer(&mut out, &v)?;
                    out.write_all(b"\n")?;
                }
                Err(_) => refused += 1,
            }
        } else if serde_json::from_slice::<serde::de::IgnoredAny>(&line).is_err() {
            refused += 1;
        }
    }
    out.flush()?;
    if refused > 0 {
        eprintln!("insights-baseline: {refused} lines refused");
    }
    Ok(())
}
