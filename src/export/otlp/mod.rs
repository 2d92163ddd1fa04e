//! `--to otlp`: OpenTelemetry GenAI traces (issue 45, part 2), to be built here.
//!
//! The entry point is [`target`]: it is given the command line and standard output and
//! returns the [`Target`] that receives every event, in the order read, as its InsightsEvent
//! JSON line ([`Target::event`]), then [`Target::finish`] at the end of the run. What it
//! should write: OTLP/JSON, one `ExportTraceServiceRequest` a line (the Collector's OTLP JSON
//! file receiver reads it), or, with `--endpoint`, OTLP/HTTP protobuf; spans per the GenAI
//! semantic conventions (`invoke_agent` per turn, `chat` per model request, `execute_tool` per
//! call), ids derived from the session, turn and call ids, only ended turns.

use super::{Args, Target};
use std::io::Write;

/// The OTLP target for `args`, writing to `out` (unless its options name an endpoint).
pub fn target(args: &Args, out: Box<dyn Write>) -> anyhow::Result<Box<dyn Target>> {
    let _ = (args, out);
    anyhow::bail!("--to otlp is not built yet: use --to clickhouse")
}
