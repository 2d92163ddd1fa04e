//! The published contract: `schemas/insights-event.schema.json`, embedded.

/// The InsightsEvent JSON Schema (draft 2020-12).
pub const EVENT_SCHEMA: &str = include_str!("../schemas/insights-event.schema.json");
