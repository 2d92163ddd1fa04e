//! The state's pretty JSON, byte for byte as `serde_json::to_writer_pretty` writes it (two
//! spaces per level), with each line break and its indentation written at once: serde_json's
//! `PrettyFormatter` writes the indentation two bytes at a time, and a state is mostly
//! indentation and short members.

use serde_json::ser::Formatter;
use std::io::{self, Write};

/// `,`, a line break and the indentation of level 64, to write a prefix of.
const BREAK: [u8; 2 + 2 * 64] = {
    let mut b = [b' '; 2 + 2 * 64];
    b[0] = b',';
    b[1] = b'\n';
    b
};

#[derive(Default)]
pub struct Pretty {
    level: usize,
    has_value: bool,
}

impl Pretty {
    /// A line break (after a comma unless `first`) and the current indentation.
    fn newline<W: ?Sized + Write>(&self, w: &mut W, first: bool) -> io::Result<()> {
        let start = usize::from(first);
        let end = 2 + 2 * self.level;
        match BREAK.get(start..end) {
            Some(b) => w.write_all(b),
            None => {
                w.write_all(&BREAK[start..2])?;
                for _ in 0..self.level {
                    w.write_all(b"  ")?;
                }
                Ok(())
            }
        }
    }
}

impl Formatter for Pretty {
    #[inline]
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.level += 1;
        self.has_value = false;
        w.write_all(b"[")
    }

    #[inline]
    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.level -= 1;
        if self.has_value {
            self.newline(w, true)?;
        }
        w.write_all(b"]")
    }

    #[inline]
    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.newline(w, first)
    }

    #[inline]
    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    #[inline]
    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.level += 1;
        self.has_value = false;
        w.write_all(b"{")
    }

    #[inline]
    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.level -= 1;
        if self.has_value {
            self.newline(w, true)?;
        }
        w.write_all(b"}")
    }

    #[inline]
    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.newline(w, first)
    }

    #[inline]
    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    #[inline]
    fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// Writes `v` as pretty JSON.
pub fn to_writer<W: Write, T: ?Sized + serde::Serialize>(w: W, v: &T) -> serde_json::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(w, Pretty::default());
    v.serialize(&mut ser)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn writes_what_serde_json_writes() {
        let mut deep = json!("leaf");
        for i in 0..80 {
            deep = json!({ "k": deep, "n": i, "a": [], "o": {}, "l": [1, {"x": [true, null]}] });
        }
        let v = json!({"a": [1, 2, {"b": "c\n\"d\""}], "e": {}, "f": [], "g": deep});
        let mut ours = Vec::new();
        super::to_writer(&mut ours, &v).unwrap();
        assert_eq!(
            String::from_utf8(ours).unwrap(),
            serde_json::to_string_pretty(&v).unwrap()
        );
    }
}
