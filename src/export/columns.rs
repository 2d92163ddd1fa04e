//! The members of a converter's event that a ClickHouse row takes from its body (`callId`,
//! `toolName`, `stepUsage`, …), read from the typed event as it would be written
//! ([`Captured::of`]): the body is serialized into a [`Capture`], which keeps those members
//! and passes over the rest, so a row made from the converter's event equals the row made
//! from its JSON line, without writing the line and parsing it back.

use serde::ser::{Error as _, Impossible, Serialize, SerializeStruct, Serializer};

/// The body members a row takes, in buffers kept from event to event.
#[derive(Default)]
pub struct Captured {
    pub call_id: Text,
    pub parent_call_id: Text,
    pub tool_name: Text,
    pub model: Text,
    pub message_id: Text,
    pub is_error: Option<bool>,
    pub duration_ms: Option<f64>,
    /// `stepUsage` as JSON text (read as a row reads it, from that text).
    pub step_usage: Text,
    /// A member the line could not be read with (a string member that is not a string):
    /// the row of the line would be left out, and so is this one.
    pub unreadable: bool,
}

/// A string member: whether the body had it (and not `null`), and its text.
#[derive(Default)]
pub struct Text {
    pub set: bool,
    pub text: String,
}

impl Text {
    pub fn get(&self) -> Option<&str> {
        self.set.then_some(self.text.as_str())
    }
}

impl Captured {
    /// The members of `body` (an [`crate::event::Body`]), the earlier event's forgotten.
    pub fn of(&mut self, body: &impl Serialize) -> &mut Self {
        for t in [
            &mut self.call_id,
            &mut self.parent_call_id,
            &mut self.tool_name,
            &mut self.model,
            &mut self.message_id,
            &mut self.step_usage,
        ] {
            t.set = false;
            t.text.clear();
        }
        self.is_error = None;
        self.duration_ms = None;
        self.unreadable = body.serialize(Capture(self)).is_err();
        self
    }
}

/// Serializes a body (a struct) keeping the members a row takes.
struct Capture<'c>(&'c mut Captured);

fn not_a_struct() -> serde_json::Error {
    serde_json::Error::custom("internal error: an event body that is not a struct")
}

impl Serializer for Capture<'_> {
    type Ok = ();
    type Error = serde_json::Error;
    type SerializeSeq = Impossible<(), serde_json::Error>;
    type SerializeTuple = Impossible<(), serde_json::Error>;
    type SerializeTupleStruct = Impossible<(), serde_json::Error>;
    type SerializeTupleVariant = Impossible<(), serde_json::Error>;
    type SerializeMap = Impossible<(), serde_json::Error>;
    type SerializeStruct = Self;
    type SerializeStructVariant = Impossible<(), serde_json::Error>;

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, serde_json::Error> {
        Ok(self)
    }
    fn serialize_newtype_struct<V: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &V,
    ) -> Result<(), serde_json::Error> {
        v.serialize(self)
    }
    crate::json_writer::refuse_values!(not_a_struct();
        bool i8 i16 i32 i64 u8 u16 u32 u64 f32 f64 char str bytes
        none some unit unit_struct unit_variant
        newtype_variant seq tuple tuple_struct tuple_variant map struct_variant);
}

impl SerializeStruct for Capture<'_> {
    type Ok = ();
    type Error = serde_json::Error;

    fn serialize_field<V: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        v: &V,
    ) -> Result<(), serde_json::Error> {
        let c = &mut *self.0;
        let text = match key {
            "callId" => &mut c.call_id,
            "parentCallId" => &mut c.parent_call_id,
            "toolName" => &mut c.tool_name,
            "model" => &mut c.model,
            "messageId" => &mut c.message_id,
            "stepUsage" => {
                let mut json = std::mem::take(&mut c.step_usage.text).into_bytes();
                json.clear();
                crate::json_writer::write(&mut json, v)?;
                c.step_usage.text = String::from_utf8(json).map_err(serde_json::Error::custom)?;
                c.step_usage.set = true;
                return Ok(());
            }
            "isError" => {
                c.is_error = match v.serialize(Scalar(&mut String::new()))? {
                    Kind::Bool(b) => Some(b),
                    Kind::Null => None,
                    _ => return Err(serde_json::Error::custom("isError: not a boolean")),
                };
                return Ok(());
            }
            "durationMs" => {
                c.duration_ms = match v.serialize(Scalar(&mut String::new()))? {
                    Kind::Number(n) => Some(n),
                    Kind::Null => None,
                    _ => return Err(serde_json::Error::custom("durationMs: not a number")),
                };
                return Ok(());
            }
            _ => return Ok(()),
        };
        match v.serialize(Scalar(&mut text.text))? {
            Kind::Str => text.set = true,
            Kind::Null => {}
            _ => return Err(serde_json::Error::custom("not a string")),
        }
        Ok(())
    }

    fn end(self) -> Result<(), serde_json::Error> {
        Ok(())
    }
}

/// What a member's value is, as its JSON would read.
enum Kind {
    Null,
    /// A string, written into the [`Scalar`]'s buffer.
    Str,
    Bool(bool),
    Number(f64),
}

/// Serializes one scalar value: a string into `.0`; anything else a row does not take
/// (an array, an object) is an error.
struct Scalar<'b>(&'b mut String);

fn not_a_scalar() -> serde_json::Error {
    serde_json::Error::custom("not a scalar")
}

impl Serializer for Scalar<'_> {
    type Ok = Kind;
    type Error = serde_json::Error;
    type SerializeSeq = Impossible<Kind, serde_json::Error>;
    type SerializeTuple = Impossible<Kind, serde_json::Error>;
    type SerializeTupleStruct = Impossible<Kind, serde_json::Error>;
    type SerializeTupleVariant = Impossible<Kind, serde_json::Error>;
    type SerializeMap = Impossible<Kind, serde_json::Error>;
    type SerializeStruct = Impossible<Kind, serde_json::Error>;
    type SerializeStructVariant = Impossible<Kind, serde_json::Error>;

    fn serialize_bool(self, v: bool) -> Result<Kind, serde_json::Error> {
        Ok(Kind::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<Kind, serde_json::Error> {
        Ok(Kind::Number(f64::from(v)))
    }
    fn serialize_i16(self, v: i16) -> Result<Kind, serde_json::Error> {
        Ok(Kind::Number(f64::from(v)))
    }
    fn serialize_i32(self, v: i32) -> Result<Kind, serde_json::Error> {
        Ok(Kind::Number(f64::from(v)))
    }
    // As serde_json reads an integer into an `f64`.
    #[allow(clippy::cast_precision_loss)]
    fn serialize_i64(self, v: i64) -> Result<Kind, serde_json::Error> {
        Ok(Kind::Number(v as f64))
    }
    fn serialize_u8(self, v: u8) -> Result<Kind, serde_json::Error> {
        Ok(Kind::Number(f64::from(v)))
    }
    fn serialize_u16(self, v: u16) -> Result<Kind, serde_json::Error> {
        Ok(Kind::Number(f64::from(v)))
    }
    fn serialize_u32(self, v: u32) -> Result<Kind, serde_json::Error> {
        Ok(Kind::Number(f64::from(v)))
    }
    #[allow(clippy::cast_precision_loss)]
    fn serialize_u64(self, v: u64) -> Result<Kind, serde_json::Error> {
        Ok(Kind::Number(v as f64))
    }
    fn serialize_f32(self, v: f32) -> Result<Kind, serde_json::Error> {
        self.serialize_f64(f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> Result<Kind, serde_json::Error> {
        // serde_json writes a number that is not finite as `null`.
        Ok(if v.is_finite() {
            Kind::Number(v)
        } else {
            Kind::Null
        })
    }
    fn serialize_char(self, v: char) -> Result<Kind, serde_json::Error> {
        self.0.push(v);
        Ok(Kind::Str)
    }
    fn serialize_str(self, v: &str) -> Result<Kind, serde_json::Error> {
        self.0.push_str(v);
        Ok(Kind::Str)
    }
    fn serialize_none(self) -> Result<Kind, serde_json::Error> {
        Ok(Kind::Null)
    }
    fn serialize_some<V: Serialize + ?Sized>(self, v: &V) -> Result<Kind, serde_json::Error> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<Kind, serde_json::Error> {
        Ok(Kind::Null)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<Kind, serde_json::Error> {
        Ok(Kind::Null)
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<Kind, serde_json::Error> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<V: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &V,
    ) -> Result<Kind, serde_json::Error> {
        v.serialize(self)
    }
    crate::json_writer::refuse_values!(not_a_scalar();
        bytes newtype_variant seq tuple tuple_struct tuple_variant map struct struct_variant);
}
