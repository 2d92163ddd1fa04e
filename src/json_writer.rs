//! Compact JSON text for our output, byte for byte what `serde_json::to_writer` writes, but
//! cheaper per piece: member names the derive hands over as `&'static str` are written
//! without an escape scan, and string contents are searched 16 bytes at a time
//! ([`string_special`]; serde_json looks up every byte in a table). Converting Claude output
//! spent 15% of its time in serde_json's `serialize_str`.
//!
//! `serde_json::value::RawValue` serializes itself as a struct with a private marker name;
//! its text is written as it is, like serde_json does.
//!
//! [`write_pretty`] writes the same pieces laid out as `serde_json::to_writer_pretty` lays
//! them out (two spaces per level), for `reduce`'s state.

use crate::scan::string_special;
use serde::ser::{self, Error as _, Impossible, Serialize};
use serde_json::Error;
use std::io::{self, Write};
use std::sync::{mpsc, Arc, Mutex};

/// `ser::Serializer` methods that refuse their value with `Err($err)`, named by what they
/// serialize (`bool`, `seq`, `struct_variant`, …): a serializer that takes only some kinds of
/// value (a map key, a `RawValue`'s text, an event body) lists the rest here.
macro_rules! refuse_values {
    ($err:expr; $($kind:ident)*) => { $(crate::json_writer::refuse_values!(@ $err; $kind);)* };
    (@ $err:expr; bool) => {
        fn serialize_bool(self, _: bool) -> Result<Self::Ok, Self::Error> {
            Err($err)
        }
    };
    (@ $err:expr; i8) => {
        fn serialize_i8(self, _: i8) -> Result<Self::Ok, Self::Error> {
            Err($err)
        }
    };
    (@ $err:expr; i16) => {
        fn serialize_i16(self, _: i16) -> Result<Self::Ok, Self::Error> {
            Err($err)
        }
    };
    (@ $err:expr; i32) => {
        fn serialize_i32(self, _: i32) -> Result<Self::Ok, Self::Error> {
            Err($err)
        }
    };
    (@ $err:expr; i64) => {
        fn serialize_i64(self, _: i64) -> Result<Self::Ok, Self::Error> {
            Err($err)
        }
    };
    (@ $err:expr; u8) => {
        fn serialize_u8(self, _: u8) -> Result<Self::Ok, Self::Error> {
            Err($err)
        }
    };
    (@ $err:expr; u16) => {
        fn serialize_u16(self, _: u16) -> Result<Self::Ok, Self::Error> {
            Err($err)
        }
    };
    (@ $err:expr; u32) => {
        fn serialize_u32(self, _: u32) -> Result<Self::Ok, Self::Error> {
            Err($err)
        }
    };
    (@ $err:expr; u64) => {
        fn serialize_u64(self, _: u64) -> Result<Self::Ok, Self::Error> {
            Err($err)
        }
    };
    (@ $err:expr; f32) => {
        fn serialize_f32(self, _: f32) -> Result<Self::Ok, Self::Error> {
            Err($err)
        }
    };
    (@ $err:expr; f64) => {
        fn serialize_f64(self, _: f64) -> Result<Self::Ok, Self::Error> {
            Err($err)
        }
    };
    (@ $err:expr; char) => {
        fn serialize_char(self, _: char) -> Result<Self::Ok, Self::Error> {
            Err($err)
        }
    };
    (@ $err:expr; str) => {
        fn serialize_str(self, _: &str) -> Result<Self::Ok, Self::Error> {
            Err($err)
        }
    };
    (@ $err:expr; bytes) => {
        fn serialize_bytes(self, _: &[u8]) -> Result<Self::Ok, Self::Error> {
            Err($err)
        }
    };
    (@ $err:expr; none) => {
        fn serialize_none(self) -> Result<Self::Ok, Self::Error> {
            Err($err)
        }
    };
    (@ $err:expr; some) => {
        fn serialize_some<Refused: serde::Serialize + ?Sized>(
            self,
            _: &Refused,
        ) -> Result<Self::Ok, Self::Error> {
            Err($err)
        }
    };
    (@ $err:expr; unit) => {
        fn serialize_unit(self) -> Result<Self::Ok, Self::Error> {
            Err($err)
        }
    };
    (@ $err:expr; unit_struct) => {
        fn serialize_unit_struct(self, _: &'static str) -> Result<Self::Ok, Self::Error> {
            Err($err)
        }
    };
    (@ $err:expr; unit_variant) => {
        fn serialize_unit_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
        ) -> Result<Self::Ok, Self::Error> {
            Err($err)
        }
    };
    (@ $err:expr; newtype_struct) => {
        fn serialize_newtype_struct<Refused: serde::Serialize + ?Sized>(
            self,
            _: &'static str,
            _: &Refused,
        ) -> Result<Self::Ok, Self::Error> {
            Err($err)
        }
    };
    (@ $err:expr; newtype_variant) => {
        fn serialize_newtype_variant<Refused: serde::Serialize + ?Sized>(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: &Refused,
        ) -> Result<Self::Ok, Self::Error> {
            Err($err)
        }
    };
    (@ $err:expr; seq) => {
        fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Self::Error> {
            Err($err)
        }
    };
    (@ $err:expr; tuple) => {
        fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Self::Error> {
            Err($err)
        }
    };
    (@ $err:expr; tuple_struct) => {
        fn serialize_tuple_struct(
            self,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeTupleStruct, Self::Error> {
            Err($err)
        }
    };
    (@ $err:expr; tuple_variant) => {
        fn serialize_tuple_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeTupleVariant, Self::Error> {
            Err($err)
        }
    };
    (@ $err:expr; map) => {
        fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Self::Error> {
            Err($err)
        }
    };
    (@ $err:expr; struct) => {
        fn serialize_struct(
            self,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeStruct, Self::Error> {
            Err($err)
        }
    };
    (@ $err:expr; struct_variant) => {
        fn serialize_struct_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeStructVariant, Self::Error> {
            Err($err)
        }
    };
}
pub(crate) use refuse_values;

/// The struct name `RawValue` serializes under (serde_json's, stable since 1.0.29).
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// Appends `value` as compact JSON to `out`.
pub fn write<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) -> Result<(), Error> {
    value.serialize(Writer::<false> {
        out,
        level: 0,
        spill: None,
        split: None,
    })
}

/// How much pretty text is gathered before it is written out.
pub const SPILL_AT: usize = 64 * 1024;

/// Writes `value` as pretty JSON to `w`, byte for byte as `serde_json::to_writer_pretty`,
/// gathering it in `buf` (cleared first) and writing that out whenever it holds
/// [`SPILL_AT`] bytes, so that a large value is never all in memory as text.
pub fn write_pretty<T: Serialize + ?Sized>(
    w: &mut dyn Write,
    buf: &mut Vec<u8>,
    value: &T,
) -> io::Result<()> {
    buf.clear();
    value.serialize(Writer::<true> {
        out: buf,
        level: 0,
        spill: Some(&mut *w),
        split: None,
    })?;
    w.write_all(buf)?;
    buf.clear();
    Ok(())
}

/// Elements in one piece of an array that [`write_pretty_split`] shares out.
const PIECE: usize = 256;

/// [`write_pretty`] on two threads, the same text: the elements of the outermost arrays (those
/// not inside an element of another) go in pieces of [`PIECE`]. Both threads walk the whole
/// value and keep count the same way. This thread writes everything else and its own pieces,
/// and writes the other's pieces in their places as they come. The pieces are shared out as
/// the threads reach them ([`Claims`]): the other thread takes every second piece, and the
/// ones between as well while this thread lags two pieces behind it (writing out can be the
/// slow part: into a file, the kernel's copy into the page cache took two thirds of this
/// thread's time on a large state); this thread takes any piece it reaches untaken.
/// Memory: [`SPILL_AT`] here, and a few pieces of text on their way; the other thread also
/// keeps what it walks outside its pieces until its next piece (for `reduce`'s state, a few
/// small members), so a value that is mostly outside arrays gains nothing from this.
pub fn write_pretty_split<T: Serialize + Sync + ?Sized>(
    w: &mut dyn Write,
    buf: &mut Vec<u8>,
    value: &T,
) -> io::Result<()> {
    let claims = Arc::new(Mutex::new(Claims::default()));
    std::thread::scope(|scope| {
        let (pieces, received) = mpsc::sync_channel(2);
        let (give_back, returned) = mpsc::channel();
        let theirs = Arc::clone(&claims);
        let helper = scope.spawn(move || {
            let mut split = Split {
                role: Role::Pieces {
                    pieces,
                    returned,
                    open: false,
                },
                started: 0,
                claims: theirs,
                mine: false,
            };
            let mut out = Vec::new();
            value.serialize(Writer::<true> {
                out: &mut out,
                level: 0,
                spill: None,
                split: Some(&mut split),
            })
        });
        let mine = {
            // Dropped before the helper is waited for: a helper blocked on a full channel
            // then sees this end gone and stops.
            let mut split = Split {
                role: Role::Glue {
                    received,
                    give_back,
                },
                started: 0,
                claims,
                mine: true,
            };
            buf.clear();
            value.serialize(Writer::<true> {
                out: &mut *buf,
                level: 0,
                spill: Some(&mut *w),
                split: Some(&mut split),
            })
        };
        let helped = helper
            .join()
            .unwrap_or_else(|_| Err(Error::custom("the second writing thread panicked")));
        // The helper's own error explains a piece that never came; an error here (the output
        // is gone) explains the helper's.
        match (mine, helped) {
            (Err(e), _) => Err(e.into()),
            (Ok(()), Err(e)) => Err(e.into()),
            (Ok(()), Ok(())) => {
                w.write_all(buf)?;
                buf.clear();
                Ok(())
            }
        }
    })
}

/// What each of [`write_pretty_split`]'s threads does.
enum Role {
    /// Writes all but the other's pieces; receives those in order and writes them in place.
    Glue {
        received: mpsc::Receiver<Vec<u8>>,
        /// Written pieces' buffers, for reuse.
        give_back: mpsc::Sender<Vec<u8>>,
    },
    /// Writes its pieces alone, each into the buffer, and sends them.
    Pieces {
        pieces: mpsc::SyncSender<Vec<u8>>,
        returned: mpsc::Receiver<Vec<u8>>,
        /// The buffer holds a piece not sent yet.
        open: bool,
    },
}

/// A thread's part in [`write_pretty_split`].
struct Split {
    role: Role,
    /// Pieces started so far (of both threads).
    started: usize,
    claims: Arc<Mutex<Claims>>,
    /// Whether the current piece is this thread's.
    mine: bool,
}

fn helper_stopped() -> Error {
    Error::custom("the second writing thread stopped")
}

/// Which thread of [`write_pretty_split`] writes which piece, decided as they reach it.
#[derive(Default)]
struct Claims {
    /// Per piece: whether it is taken (by either thread).
    taken: Vec<bool>,
    /// Pieces the glue thread has reached.
    glue_reached: usize,
}

impl Split {
    /// Whether this thread takes piece `n`, which it has reached: the glue thread takes it
    /// unless the other did; the other takes it, unless the glue did, when `n` is odd or the
    /// glue thread has not reached piece `n - 2` yet (when they keep pace, the glue thread
    /// is at `n - 2` or `n - 1` as the other reaches `n`).
    fn claim(&self, n: usize) -> bool {
        let glue = matches!(self.role, Role::Glue { .. });
        // Nothing panics while holding the lock.
        let mut c = self.claims.lock().unwrap_or_else(|e| e.into_inner());
        if c.taken.len() <= n {
            c.taken.resize(n + 1, false);
        }
        if glue {
            c.glue_reached = n + 1;
        }
        let take = !c.taken[n] && (glue || n % 2 == 1 || c.glue_reached + 1 < n);
        if take {
            c.taken[n] = true;
        }
        take
    }

    /// A new piece starts at the element about to be written, whose text would follow `out`.
    fn start_piece(
        &mut self,
        out: &mut Vec<u8>,
        spill: Option<&mut (dyn Write + '_)>,
    ) -> Result<(), Error> {
        let n = self.started;
        self.started += 1;
        let claimed = self.claim(n);
        match &mut self.role {
            Role::Glue {
                received,
                give_back,
            } => {
                self.mine = claimed;
                if !self.mine {
                    let w = spill.ok_or_else(|| Error::custom("no output to write pieces to"))?;
                    let piece = received.recv().map_err(|_| helper_stopped())?;
                    w.write_all(out).map_err(Error::io)?;
                    out.clear();
                    w.write_all(&piece).map_err(Error::io)?;
                    // The helper may be gone already: it then needs no buffer.
                    let _ = give_back.send(piece);
                }
            }
            Role::Pieces { .. } => {
                self.end_piece(out)?;
                self.mine = claimed;
                if self.mine {
                    // What is in `out` is glue, the other thread's to write.
                    out.clear();
                    if let Role::Pieces { open, .. } = &mut self.role {
                        *open = true;
                    }
                }
            }
        }
        Ok(())
    }

    /// The helper's piece in `out`, if one is open, is complete: it is sent.
    fn end_piece(&mut self, out: &mut Vec<u8>) -> Result<(), Error> {
        if let Role::Pieces {
            pieces,
            returned,
            open,
        } = &mut self.role
        {
            if *open {
                *open = false;
                let mut next = returned.try_recv().unwrap_or_default();
                next.clear();
                std::mem::swap(out, &mut next);
                pieces.send(next).map_err(|_| helper_stopped())?;
            }
        }
        Ok(())
    }
}

/// `,`, a line break and the indentation of level 64, to write a prefix of.
const BREAK: [u8; 2 + 2 * 64] = {
    let mut b = [b' '; 2 + 2 * 64];
    b[0] = b',';
    b[1] = b'\n';
    b
};

/// A line break (after a comma unless `first`) and the indentation of `level`.
fn newline(out: &mut Vec<u8>, level: usize, first: bool) {
    let start = usize::from(first);
    match BREAK.get(start..2 + 2 * level) {
        Some(b) => out.extend_from_slice(b),
        None => {
            out.extend_from_slice(&BREAK[start..2]);
            out.resize(out.len() + 2 * level, b' ');
        }
    }
}

/// Appends `s` as a JSON string (quoted, escaped the way serde_json escapes).
#[inline]
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    write_str_bytes(out, s.as_bytes());
}

/// [`write_str`] of UTF-8 text held as bytes (the escapes are of ASCII bytes only): a JSON
/// text this writer wrote, as a string (`export --to clickhouse`'s `json` column).
pub fn write_str_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut done = 0;
    loop {
        let i = string_special(bytes, done);
        out.extend_from_slice(&bytes[done..i]);
        let Some(&b) = bytes.get(i) else { break };
        push_escape(out, b);
        done = i + 1;
    }
    out.push(b'"');
}

fn push_escape(out: &mut Vec<u8>, b: u8) {
    let (e, n) = escape_of(b);
    out.extend_from_slice(&e[..n]);
}

/// The JSON escape of the byte `b` (one that [`string_special`] stops at): its bytes, of which
/// the first `n` are it (`\n`, or `\u00XX` for a control byte without a short one). Looked up
/// in a table ([`ESCAPES`]): one byte in ten of `export --to clickhouse`'s `json` column is
/// escaped.
#[inline]
pub(crate) fn escape_of(b: u8) -> ([u8; 6], usize) {
    let e = &ESCAPES[usize::from(b)];
    ([e[0], e[1], e[2], e[3], e[4], e[5]], usize::from(e[7]))
}

/// Every byte's escape for [`escape_of`]: six bytes, then a zero, then how many of the six
/// are the escape.
static ESCAPES: [[u8; 8]; 256] = escapes();

const fn escapes() -> [[u8; 8]; 256] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut table = [[0u8; 8]; 256];
    let mut b = 0;
    while b < 256 {
        let short = match b as u8 {
            b'"' => b'"',
            b'\\' => b'\\',
            0x08 => b'b',
            0x0c => b'f',
            b'\n' => b'n',
            b'\r' => b'r',
            b'\t' => b't',
            _ => 0,
        };
        table[b] = if short != 0 {
            [b'\\', short, 0, 0, 0, 0, 0, 2]
        } else {
            [b'\\', b'u', b'0', b'0', HEX[b >> 4], HEX[b & 0xf], 0, 6]
        };
        b += 1;
    }
    table
}

/// A member name of our own types: written as it is (checked in debug builds).
#[inline]
fn write_static_key<const P: bool>(out: &mut Vec<u8>, key: &'static str) {
    debug_assert!(string_special(key.as_bytes(), 0) == key.len(), "{key:?}");
    out.reserve(key.len() + 4);
    out.push(b'"');
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(if P { b"\": " } else { b"\":" });
}

fn write_number<T: Serialize>(out: &mut Vec<u8>, n: T) -> Result<(), Error> {
    serde_json::to_writer(out, &n)
}

/// Writes one value; `P`: pretty, with line breaks and indentation.
struct Writer<'w, const P: bool> {
    out: &'w mut Vec<u8>,
    /// How many containers the value is in (pretty only).
    level: usize,
    /// Where the text goes when `out` grows large (pretty only).
    spill: Option<&'w mut dyn Write>,
    /// Its thread's part when two threads write (pretty only; see [`write_pretty_split`]):
    /// `Some` outside the elements that are shared out.
    split: Option<&'w mut Split>,
}

/// An object or array being written; `first` until its first member.
pub struct Compound<'w, const P: bool> {
    out: &'w mut Vec<u8>,
    /// How many containers its members are in (pretty only).
    level: usize,
    spill: Option<&'w mut dyn Write>,
    split: Option<&'w mut Split>,
    /// Elements so far (counted when `split` is `Some`).
    nth: usize,
    first: bool,
    /// The value of a `{"variant": …}` object is open too (closed by `end`).
    variant: bool,
    /// `RawValue`'s marker struct: its one field is text written as it is.
    raw: bool,
}

impl<const P: bool> Compound<'_, P> {
    /// What comes before a member: a comma unless it is the first, and in pretty text a line
    /// break and indentation; pretty text gathered so far may be written out first.
    #[inline]
    fn comma(&mut self) -> Result<(), Error> {
        if P {
            if self.out.len() >= SPILL_AT {
                if let Some(w) = self.spill.as_deref_mut() {
                    w.write_all(self.out).map_err(Error::io)?;
                    self.out.clear();
                }
            }
            newline(self.out, self.level, self.first);
            self.first = false;
        } else if self.first {
            self.first = false;
        } else {
            self.out.push(b',');
        }
        Ok(())
    }

    /// A writer for a member's value.
    #[inline]
    fn value(&mut self) -> Writer<'_, P> {
        Writer {
            out: self.out,
            level: self.level,
            spill: match &mut self.spill {
                Some(w) => Some(&mut **w),
                None => None,
            },
            split: self.split.as_deref_mut(),
        }
    }
}

impl<'w, const P: bool> Writer<'w, P> {
    fn open(self, bracket: u8, variant: Option<&'static str>) -> Compound<'w, P> {
        let mut level = self.level + 1;
        if let Some(v) = variant {
            self.out.push(b'{');
            if P {
                newline(self.out, level, true);
                level += 1;
            }
            write_static_key::<P>(self.out, v);
        }
        self.out.push(bracket);
        Compound {
            out: self.out,
            level,
            spill: self.spill,
            split: self.split,
            nth: 0,
            first: true,
            variant: variant.is_some(),
            raw: false,
        }
    }
}

impl<'w, const P: bool> ser::Serializer for Writer<'w, P> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'w, P>;
    type SerializeTuple = Compound<'w, P>;
    type SerializeTupleStruct = Compound<'w, P>;
    type SerializeTupleVariant = Compound<'w, P>;
    type SerializeMap = Compound<'w, P>;
    type SerializeStruct = Compound<'w, P>;
    type SerializeStructVariant = Compound<'w, P>;

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.out
            .extend_from_slice(if v { b"true" } else { b"false" });
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> Result<(), Error> {
        write_number(self.out, v)
    }
    fn serialize_i16(self, v: i16) -> Result<(), Error> {
        write_number(self.out, v)
    }
    fn serialize_i32(self, v: i32) -> Result<(), Error> {
        write_number(self.out, v)
    }
    fn serialize_i64(self, v: i64) -> Result<(), Error> {
        write_number(self.out, v)
    }
    fn serialize_i128(self, v: i128) -> Result<(), Error> {
        write_number(self.out, v)
    }
    fn serialize_u8(self, v: u8) -> Result<(), Error> {
        write_number(self.out, v)
    }
    fn serialize_u16(self, v: u16) -> Result<(), Error> {
        write_number(self.out, v)
    }
    fn serialize_u32(self, v: u32) -> Result<(), Error> {
        write_number(self.out, v)
    }
    fn serialize_u64(self, v: u64) -> Result<(), Error> {
        write_number(self.out, v)
    }
    fn serialize_u128(self, v: u128) -> Result<(), Error> {
        write_number(self.out, v)
    }
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        write_number(self.out, v)
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        write_number(self.out, v)
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        write_str(self.out, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        write_str(self.out, v);
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        use ser::SerializeSeq;
        let mut seq = self.serialize_seq(Some(v.len()))?;
        for b in v {
            seq.serialize_element(b)?;
        }
        seq.end()
    }
    fn serialize_none(self) -> Result<(), Error> {
        self.serialize_unit()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<(), Error> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Error> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        write_str(self.out, variant);
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<(), Error> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<(), Error> {
        self.out.push(b'{');
        if P {
            newline(self.out, self.level + 1, true);
        }
        write_static_key::<P>(self.out, variant);
        v.serialize(Writer::<P> {
            out: &mut *self.out,
            level: self.level + 1,
            spill: match self.spill {
                Some(w) => Some(&mut *w),
                None => None,
            },
            split: self.split,
        })?;
        if P {
            newline(self.out, self.level, true);
        }
        self.out.push(b'}');
        Ok(())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Compound<'w, P>, Error> {
        Ok(self.open(b'[', None))
    }
    fn serialize_tuple(self, len: usize) -> Result<Compound<'w, P>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Compound<'w, P>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Compound<'w, P>, Error> {
        Ok(self.open(b'[', Some(variant)))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Compound<'w, P>, Error> {
        Ok(self.open(b'{', None))
    }
    fn serialize_struct(self, name: &'static str, _: usize) -> Result<Compound<'w, P>, Error> {
        if name == RAW_VALUE_TOKEN {
            return Ok(Compound {
                out: self.out,
                level: self.level,
                spill: self.spill,
                split: self.split,
                nth: 0,
                first: true,
                variant: false,
                raw: true,
            });
        }
        Ok(self.open(b'{', None))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Compound<'w, P>, Error> {
        Ok(self.open(b'{', Some(variant)))
    }
}

impl<const P: bool> Compound<'_, P> {
    fn element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        if P && self.split.is_some() {
            return self.shared_element(v);
        }
        self.comma()?;
        v.serialize(self.value())
    }

    /// An element of an array whose elements two threads share out: written by this thread
    /// (alone: nothing inside it is shared) or left to the other.
    fn shared_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        let Some(split) = self.split.as_deref_mut() else {
            return Ok(());
        };
        if self.nth % PIECE == 0 {
            split.start_piece(self.out, self.spill.as_deref_mut())?;
        }
        self.nth += 1;
        if !split.mine {
            self.first = false;
            return Ok(());
        }
        self.comma()?;
        v.serialize(Writer::<P> {
            out: &mut *self.out,
            level: self.level,
            spill: match &mut self.spill {
                Some(w) => Some(&mut **w),
                None => None,
            },
            split: None,
        })
    }

    fn close(mut self, bracket: u8) -> Result<(), Error> {
        if P {
            if let Some(split) = self.split.as_deref_mut() {
                split.end_piece(self.out)?;
            }
        }
        if P && !self.first {
            newline(self.out, self.level - 1, true);
        }
        self.out.push(bracket);
        if self.variant {
            if P {
                newline(self.out, self.level - 2, true);
            }
            self.out.push(b'}');
        }
        Ok(())
    }
}

impl<const P: bool> ser::SerializeSeq for Compound<'_, P> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        self.element(v)
    }
    fn end(self) -> Result<(), Error> {
        self.close(b']')
    }
}

impl<const P: bool> ser::SerializeTuple for Compound<'_, P> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        self.element(v)
    }
    fn end(self) -> Result<(), Error> {
        self.close(b']')
    }
}

impl<const P: bool> ser::SerializeTupleStruct for Compound<'_, P> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        self.element(v)
    }
    fn end(self) -> Result<(), Error> {
        self.close(b']')
    }
}

impl<const P: bool> ser::SerializeTupleVariant for Compound<'_, P> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        self.element(v)
    }
    fn end(self) -> Result<(), Error> {
        self.close(b']')
    }
}

impl<const P: bool> ser::SerializeMap for Compound<'_, P> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.comma()?;
        key.serialize(KeyWriter { out: self.out })?;
        self.out.extend_from_slice(if P { b": " } else { b":" });
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        v.serialize(self.value())
    }
    fn end(self) -> Result<(), Error> {
        self.close(b'}')
    }
}

impl<const P: bool> ser::SerializeStruct for Compound<'_, P> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), Error> {
        if self.raw {
            return if key == RAW_VALUE_TOKEN {
                v.serialize(RawText { out: self.out })
            } else {
                Err(Error::custom("RawValue with a member of its own"))
            };
        }
        self.comma()?;
        write_static_key::<P>(self.out, key);
        v.serialize(self.value())
    }
    fn end(self) -> Result<(), Error> {
        if self.raw {
            return Ok(());
        }
        self.close(b'}')
    }
}

impl<const P: bool> ser::SerializeStructVariant for Compound<'_, P> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), Error> {
        self.comma()?;
        write_static_key::<P>(self.out, key);
        v.serialize(self.value())
    }
    fn end(self) -> Result<(), Error> {
        self.close(b'}')
    }
}

fn key_must_be_a_string() -> Error {
    Error::custom("key must be a string")
}

/// A map key: strings, and numbers, chars and booleans quoted (as serde_json does).
struct KeyWriter<'w> {
    out: &'w mut Vec<u8>,
}

impl KeyWriter<'_> {
    fn quoted<T: Serialize>(self, v: T) -> Result<(), Error> {
        self.out.push(b'"');
        serde_json::to_writer(&mut *self.out, &v)?;
        self.out.push(b'"');
        Ok(())
    }
}

impl ser::Serializer for KeyWriter<'_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Impossible<(), Error>;
    type SerializeTuple = Impossible<(), Error>;
    type SerializeTupleStruct = Impossible<(), Error>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = Impossible<(), Error>;
    type SerializeStruct = Impossible<(), Error>;
    type SerializeStructVariant = Impossible<(), Error>;

    fn serialize_str(self, v: &str) -> Result<(), Error> {
        write_str(self.out, v);
        Ok(())
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        write_str(self.out, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }
    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_i8(self, v: i8) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_i16(self, v: i16) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_i32(self, v: i32) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_i64(self, v: i64) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_i128(self, v: i128) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_u8(self, v: u8) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_u16(self, v: u16) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_u32(self, v: u32) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_u64(self, v: u64) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_u128(self, v: u128) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        if v.is_finite() {
            self.quoted(v)
        } else {
            Err(Error::custom(
                "float key must be finite (got NaN or +/-inf)",
            ))
        }
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        if v.is_finite() {
            self.quoted(v)
        } else {
            Err(Error::custom(
                "float key must be finite (got NaN or +/-inf)",
            ))
        }
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        write_str(self.out, variant);
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<(), Error> {
        v.serialize(self)
    }
    refuse_values!(key_must_be_a_string();
        bytes none some unit unit_struct newtype_variant
        seq tuple tuple_struct tuple_variant map struct struct_variant);
}

/// The text inside a `RawValue`: only a string is expected, and written as it is.
struct RawText<'w> {
    out: &'w mut Vec<u8>,
}

fn not_raw_text() -> Error {
    Error::custom("RawValue holding something other than its text")
}

impl ser::Serializer for RawText<'_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Impossible<(), Error>;
    type SerializeTuple = Impossible<(), Error>;
    type SerializeTupleStruct = Impossible<(), Error>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = Impossible<(), Error>;
    type SerializeStruct = Impossible<(), Error>;
    type SerializeStructVariant = Impossible<(), Error>;

    fn serialize_str(self, v: &str) -> Result<(), Error> {
        self.out.extend_from_slice(v.as_bytes());
        Ok(())
    }
    refuse_values!(not_raw_text();
        bool i8 i16 i32 i64 u8 u16 u32 u64 f32 f64 char bytes none some unit
        unit_struct unit_variant newtype_struct newtype_variant
        seq tuple tuple_struct tuple_variant map struct struct_variant);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::value::RawValue;
    use serde_json::Value;
    use std::collections::BTreeMap;

    fn same_as_serde_json<T: Serialize + Sync + ?Sized>(v: &T) {
        pretty_as_serde_json(v);
        let mut ours = Vec::new();
        write(&mut ours, v).expect("ours");
        let theirs = serde_json::to_vec(v).expect("serde_json");
        assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&theirs)
        );
    }

    #[test]
    fn every_byte_is_escaped_as_serde_json_escapes_it() {
        let all: String = (0u8..0x80).map(char::from).collect();
        same_as_serde_json(&all);
        // Every position of an escape within and around an eight-byte word.
        for len in 0..20 {
            for at in 0..len {
                for b in [b'"', b'\\', b'\n', 0x1f, 0x00, 0x7f, b' ', b'!', b'#', b'['] {
                    let mut s = vec![b'a'; len];
                    s[at] = b;
                    same_as_serde_json(std::str::from_utf8(&s).expect("ascii"));
                }
            }
        }
        same_as_serde_json("héllo \u{2028} 😀 \u{7f}\u{80}\u{ff} \"q\" \\ \t\r\n\u{0}\u{1b}");
    }

    #[test]
    fn random_strings_are_written_as_serde_json_writes_them() {
        let mut rng = crate::test_support::Rng(0x9e37_79b9_7f4a_7c15);
        let pieces = [
            "a", "\"", "\\", "\n", "\u{1}", "é", "😀", " ", "\u{7f}", "xyz0123",
        ];
        for _ in 0..20_000 {
            let mut s = String::new();
            for _ in 0..rng.below(40) {
                s.push_str(rng.pick::<&str>(&pieces));
            }
            same_as_serde_json(&s);
        }
    }

    fn pretty_as_serde_json<T: Serialize + Sync + ?Sized>(v: &T) {
        let mut ours = Vec::new();
        write_pretty(&mut ours, &mut Vec::new(), v).expect("ours");
        let theirs = serde_json::to_vec_pretty(v).expect("serde_json");
        assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&theirs)
        );
        let mut split = Vec::new();
        write_pretty_split(&mut split, &mut Vec::new(), v).expect("ours on two threads");
        assert_eq!(
            String::from_utf8_lossy(&split),
            String::from_utf8_lossy(&theirs)
        );
    }

    /// Arrays of every length around a piece's, side by side, nested, in maps and at the top.
    #[test]
    fn pretty_text_on_two_threads_is_the_same_text() {
        let item = |i: usize| serde_json::json!({ "i": i, "s": "y".repeat(i % 7), "a": [i, [i]] });
        let mut top = serde_json::Map::new();
        for n in [0, 1, PIECE - 1, PIECE, PIECE + 1, 2 * PIECE, 3 * PIECE + 5] {
            let list: Vec<Value> = (0..n).map(item).collect();
            top.insert(format!("list{n}"), Value::from(list.clone()));
            top.insert(format!("n{n}"), Value::from(n));
            top.insert(
                format!("deeper{n}"),
                serde_json::json!({ "x": { "list": list, "after": [1, 2] } }),
            );
            pretty_as_serde_json(&list);
        }
        let nested: Vec<Vec<Value>> = (0..600).map(|i| (0..i % 300).map(item).collect()).collect();
        top.insert(
            "nested".into(),
            serde_json::to_value(&nested).expect("value"),
        );
        pretty_as_serde_json(&top);
        pretty_as_serde_json(&nested);
    }

    /// Who takes which piece: every second one each while they keep pace, the other thread
    /// the ones between too while the glue thread lags, the glue thread any it reaches untaken.
    #[test]
    fn pieces_go_to_the_thread_that_reaches_them_free() {
        let claims = Arc::new(Mutex::new(Claims::default()));
        let (pieces, received) = mpsc::sync_channel(2);
        let (give_back, returned) = mpsc::channel();
        let split = |role| Split {
            role,
            started: 0,
            claims: Arc::clone(&claims),
            mine: false,
        };
        let glue = split(Role::Glue {
            received,
            give_back,
        });
        let other = split(Role::Pieces {
            pieces,
            returned,
            open: false,
        });
        // (which thread reaches piece n, whether it takes it), in the order they reach them.
        let steps = [
            (&glue, 0, true),
            (&other, 0, false),
            (&other, 1, true),
            // The glue thread is at piece 0: in step.
            (&other, 2, false),
            (&glue, 1, false),
            (&glue, 2, true),
            (&other, 3, true),
            (&other, 4, false),
            (&other, 5, true),
            // Still at 2, so three behind piece 6: the other thread takes it.
            (&other, 6, true),
            (&glue, 3, false),
            (&glue, 4, true),
            (&glue, 5, false),
            (&glue, 6, false),
            // The other thread is behind: the glue thread takes what it reaches.
            (&glue, 7, true),
            (&other, 7, false),
        ];
        for (i, (thread, n, takes)) in steps.into_iter().enumerate() {
            assert_eq!(thread.claim(n), takes, "step {i}: piece {n}");
        }
    }

    /// An output whose every write goes through a closure (slow, failing, …).
    struct Through<F: FnMut(&[u8]) -> io::Result<()>>(F);

    impl<F: FnMut(&[u8]) -> io::Result<()>> Write for Through<F> {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            (self.0)(b).map(|()| b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// An array of `n` small objects, a few hundred pieces' worth.
    fn big(n: usize) -> Vec<Value> {
        (0..n)
            .map(|i| serde_json::json!({ "i": i, "s": "x".repeat(i % 50) }))
            .collect()
    }

    /// An output slow to take the text: the other thread takes most pieces, the same text.
    #[test]
    fn pretty_text_on_two_threads_into_a_slow_output_is_the_same_text() {
        let big = big(20_000);
        let mut text = Vec::new();
        let mut slow = Through(|b: &[u8]| {
            std::thread::sleep(std::time::Duration::from_micros(200));
            text.extend_from_slice(b);
            Ok(())
        });
        write_pretty_split(&mut slow, &mut Vec::new(), &big).expect("ours on two threads");
        let theirs = serde_json::to_vec_pretty(&big).expect("serde_json");
        assert!(text == theirs, "the texts differ");
    }

    /// An output that fails part of the way: the error comes back, and neither thread waits
    /// for the other forever.
    #[test]
    fn pretty_text_on_two_threads_into_a_failing_output_is_an_error() {
        let big = big(50_000);
        for room in [0, 100, 70_000, 1_000_000] {
            let mut left = room;
            let mut fails = Through(|b: &[u8]| {
                if left < b.len() {
                    return Err(io::Error::new(io::ErrorKind::BrokenPipe, "gone"));
                }
                left -= b.len();
                Ok(())
            });
            let err = write_pretty_split(&mut fails, &mut Vec::new(), &big)
                .expect_err("the output fails");
            assert_eq!(err.kind(), io::ErrorKind::BrokenPipe, "{err}");
        }
    }

    #[test]
    fn values_of_every_shape_are_written_as_serde_json_writes_them() {
        let v: Value = serde_json::from_str(
            r#"{"a":[1,-2,3.5,1e300,-0.0,true,false,null,"s\u0001"],"b":{"":{},"c":[]},"d":18446744073709551615,"e":-9223372036854775808}"#,
        )
        .expect("json");
        same_as_serde_json(&v);
        let raw: Box<RawValue> = serde_json::from_str(r#"  {"x" : [1, 2]}"#).expect("raw");
        same_as_serde_json(&raw);
        same_as_serde_json(&vec![Some(&*raw), None]);
        let mut keys = BTreeMap::new();
        keys.insert(3u32, "three");
        keys.insert(10, "ten");
        same_as_serde_json(&keys);
        same_as_serde_json(&('x', 1u8, -1i8, 2.5f32, u128::MAX, i128::MIN, f64::NAN));

        #[derive(serde::Serialize)]
        enum E {
            Unit,
            New(u8),
            Tuple(u8, String),
            Struct { a: u8, b: Option<String> },
        }
        #[derive(serde::Serialize)]
        #[serde(rename_all = "camelCase")]
        struct S {
            one_two: Vec<E>,
            #[serde(flatten)]
            rest: BTreeMap<String, Value>,
            unit: (),
            bytes: &'static [u8],
        }
        let mut rest = BTreeMap::new();
        rest.insert("k\"ey".to_owned(), Value::from("v"));
        same_as_serde_json(&S {
            one_two: vec![
                E::Unit,
                E::New(1),
                E::Tuple(2, "t".into()),
                E::Struct { a: 3, b: None },
            ],
            rest,
            unit: (),
            bytes: b"ab",
        });
    }

    #[test]
    fn events_of_every_testdata_line_are_written_as_serde_json_writes_them() {
        for path in crate::test_support::testdata_jsonl() {
            let bytes = std::fs::read(&path).expect("testdata");
            for line in bytes.split(|&b| b == b'\n') {
                let Ok(v) = serde_json::from_slice::<Value>(line) else {
                    continue;
                };
                let mut ours = Vec::new();
                write(&mut ours, &v).expect("ours");
                assert_eq!(
                    ours,
                    serde_json::to_vec(&v).expect("theirs"),
                    "{}",
                    path.display()
                );
            }
        }
    }

    #[test]
    fn pretty_text_deeper_than_the_indentation_at_hand_and_larger_than_a_spill() {
        let mut deep = serde_json::json!("leaf");
        for i in 0..80 {
            deep = serde_json::json!({ "k": deep, "n": i, "a": [], "o": {}, "l": [1, {"x": [true, null]}] });
        }
        pretty_as_serde_json(&deep);
        let big: Vec<Value> = (0..20_000)
            .map(|i| serde_json::json!({ "i": i, "s": "x".repeat(i % 50), "e": [] }))
            .collect();
        let mut ours = Vec::new();
        let mut buf = Vec::new();
        write_pretty(&mut ours, &mut buf, &big).expect("ours");
        assert_eq!(ours, serde_json::to_vec_pretty(&big).expect("theirs"));
        assert!(ours.len() > 4 * SPILL_AT);
        assert!(buf.capacity() <= 2 * SPILL_AT, "{}", buf.capacity());
    }

    #[test]
    fn a_map_key_that_is_not_a_string_or_number_is_an_error() {
        let mut m = BTreeMap::new();
        m.insert(vec![1u8], 1);
        assert!(write(&mut Vec::new(), &m).is_err());
        assert!(serde_json::to_vec(&m).is_err());
    }
}
