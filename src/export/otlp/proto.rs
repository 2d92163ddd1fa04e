//! The few OTLP messages a trace export needs, declared by hand for prost (protobuf) and serde
//! (OTLP/JSON), the same structs for both.
//!
//! Field numbers and types are those of opentelemetry-proto v1.11 (the `.proto` file and line
//! of each message is named on it); fields the export never sets are left out, which protobuf
//! allows (a decoder sees them unset). OTLP/JSON is the proto3 JSON mapping with OTLP's
//! exceptions (OTLP specification, "JSON Protobuf Encoding"): member names in lowerCamelCase,
//! `traceId`/`spanId`/`parentSpanId` as hex (not base64), enums as integers, 64-bit integers as
//! decimal strings; members at their default value are left out.

use serde::{Serialize, Serializer};

/// `opentelemetry/proto/collector/trace/v1/trace_service.proto`, `ExportTraceServiceRequest`:
/// what `POST /v1/traces` carries, and one line of the Collector's OTLP JSON file format.
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportTraceServiceRequest {
    /// `repeated ResourceSpans resource_spans = 1;`
    #[prost(message, repeated, tag = "1")]
    pub resource_spans: Vec<ResourceSpans>,
}

/// `trace_service.proto`, `ExportTraceServiceResponse`: the answer to a request, which may
/// reject some of its spans.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ExportTraceServiceResponse {
    /// `ExportTracePartialSuccess partial_success = 1;`
    #[prost(message, optional, tag = "1")]
    pub partial_success: Option<ExportTracePartialSuccess>,
}

/// `trace_service.proto`, `ExportTracePartialSuccess`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ExportTracePartialSuccess {
    /// `int64 rejected_spans = 1;`
    #[prost(int64, tag = "1")]
    pub rejected_spans: i64,
    /// `string error_message = 2;`
    #[prost(string, tag = "2")]
    pub error_message: String,
}

/// `opentelemetry/proto/trace/v1/trace.proto`, `ResourceSpans`.
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceSpans {
    /// `opentelemetry.proto.resource.v1.Resource resource = 1;`
    #[prost(message, optional, tag = "1")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource: Option<Resource>,
    /// `repeated ScopeSpans scope_spans = 2;`
    #[prost(message, repeated, tag = "2")]
    pub scope_spans: Vec<ScopeSpans>,
    /// `string schema_url = 3;`
    #[prost(string, tag = "3")]
    #[serde(skip_serializing_if = "String::is_empty")]
    pub schema_url: String,
}

/// `opentelemetry/proto/resource/v1/resource.proto`, `Resource`.
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// `repeated opentelemetry.proto.common.v1.KeyValue attributes = 1;`
    #[prost(message, repeated, tag = "1")]
    pub attributes: Vec<KeyValue>,
}

/// `trace.proto`, `ScopeSpans`.
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScopeSpans {
    /// `opentelemetry.proto.common.v1.InstrumentationScope scope = 1;`
    #[prost(message, optional, tag = "1")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<InstrumentationScope>,
    /// `repeated Span spans = 2;`
    #[prost(message, repeated, tag = "2")]
    pub spans: Vec<Span>,
    /// `string schema_url = 3;`
    #[prost(string, tag = "3")]
    #[serde(skip_serializing_if = "String::is_empty")]
    pub schema_url: String,
}

/// `opentelemetry/proto/common/v1/common.proto`, `InstrumentationScope`.
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InstrumentationScope {
    /// `string name = 1;`
    #[prost(string, tag = "1")]
    pub name: String,
    /// `string version = 2;`
    #[prost(string, tag = "2")]
    #[serde(skip_serializing_if = "String::is_empty")]
    pub version: String,
}

/// `trace.proto`, `Span.SpanKind`.
pub const SPAN_KIND_INTERNAL: i32 = 1;
/// `trace.proto`, `Span.SpanKind`.
pub const SPAN_KIND_CLIENT: i32 = 3;
/// `trace.proto`, `Status.StatusCode`: `STATUS_CODE_ERROR = 2`.
pub const STATUS_CODE_ERROR: i32 = 2;

/// `trace.proto`, `Span` (no events, links or trace state: the export makes none).
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Span {
    /// `bytes trace_id = 1;` (16 bytes)
    #[prost(bytes = "vec", tag = "1")]
    #[serde(serialize_with = "hex")]
    pub trace_id: Vec<u8>,
    /// `bytes span_id = 2;` (8 bytes)
    #[prost(bytes = "vec", tag = "2")]
    #[serde(serialize_with = "hex")]
    pub span_id: Vec<u8>,
    /// `bytes parent_span_id = 4;` (empty for a root span)
    #[prost(bytes = "vec", tag = "4")]
    #[serde(serialize_with = "hex", skip_serializing_if = "Vec::is_empty")]
    pub parent_span_id: Vec<u8>,
    /// `fixed32 flags = 16;`: the W3C trace flags in bits 0–7 (sampled: 1), and bit 8
    /// (`SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK`) set: the parent is known not to be remote.
    #[prost(fixed32, tag = "16")]
    #[serde(skip_serializing_if = "is_zero_u32")]
    pub flags: u32,
    /// `string name = 5;`
    #[prost(string, tag = "5")]
    pub name: String,
    /// `SpanKind kind = 6;`
    #[prost(int32, tag = "6")]
    #[serde(skip_serializing_if = "is_zero_i32")]
    pub kind: i32,
    /// `fixed64 start_time_unix_nano = 7;`
    #[prost(fixed64, tag = "7")]
    #[serde(serialize_with = "decimal")]
    pub start_time_unix_nano: u64,
    /// `fixed64 end_time_unix_nano = 8;`
    #[prost(fixed64, tag = "8")]
    #[serde(serialize_with = "decimal")]
    pub end_time_unix_nano: u64,
    /// `repeated opentelemetry.proto.common.v1.KeyValue attributes = 9;`
    #[prost(message, repeated, tag = "9")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub attributes: Vec<KeyValue>,
    /// `Status status = 15;`
    #[prost(message, optional, tag = "15")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
}

/// `trace.proto`, `Status`.
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    /// `string message = 2;`
    #[prost(string, tag = "2")]
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// `StatusCode code = 3;`
    #[prost(int32, tag = "3")]
    #[serde(skip_serializing_if = "is_zero_i32")]
    pub code: i32,
}

/// `common.proto`, `KeyValue`.
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyValue {
    /// `string key = 1;`
    #[prost(string, tag = "1")]
    pub key: String,
    /// `AnyValue value = 2;`
    #[prost(message, optional, tag = "2")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<AnyValue>,
}

/// `common.proto`, `AnyValue`.
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(transparent)]
pub struct AnyValue {
    /// `oneof value { … }`
    #[prost(oneof = "Value", tags = "1, 2, 3, 4")]
    pub value: Option<Value>,
}

/// `common.proto`, `AnyValue`'s `oneof value` (the scalar members: the export writes
/// structured values, such as messages, as JSON strings, which the conventions allow).
#[derive(Clone, PartialEq, prost::Oneof, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Value {
    /// `string string_value = 1;`
    #[prost(string, tag = "1")]
    StringValue(String),
    /// `bool bool_value = 2;`
    #[prost(bool, tag = "2")]
    BoolValue(bool),
    /// `int64 int_value = 3;`
    #[prost(int64, tag = "3")]
    IntValue(#[serde(serialize_with = "decimal_i64")] i64),
    /// `double double_value = 4;`
    #[prost(double, tag = "4")]
    DoubleValue(f64),
}

fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

fn is_zero_i32(n: &i32) -> bool {
    *n == 0
}

/// Bytes as lowercase hex (OTLP/JSON's trace and span ids), written on the stack for an id
/// (three of them a span).
fn hex<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut stack = [0u8; 32];
    let mut heap = Vec::new();
    let text: &mut [u8] = match stack.get_mut(..bytes.len() * 2) {
        Some(t) => t,
        None => {
            heap.resize(bytes.len() * 2, 0);
            &mut heap
        }
    };
    for (pair, b) in text.chunks_exact_mut(2).zip(bytes) {
        pair[0] = DIGITS[usize::from(b >> 4)];
        pair[1] = DIGITS[usize::from(b & 15)];
    }
    s.serialize_str(std::str::from_utf8(text).map_err(serde::ser::Error::custom)?)
}

/// A 64-bit integer as a decimal string (the proto3 JSON mapping of (fixed)int64).
fn decimal<S: Serializer>(n: &u64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(itoa::Buffer::new().format(*n))
}

fn decimal_i64<S: Serializer>(n: &i64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(itoa::Buffer::new().format(*n))
}
