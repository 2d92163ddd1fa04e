//! The fast schema check: the event schema compiled into a plain tree of nodes, checked while
//! the line is parsed, with no `serde_json::Value` built.
//!
//! It answers one question: *is this event certainly valid?* [`FastSchema::check`] returns the
//! event's [`Facts`] when it is, and `None` when it is not sure: the event breaks the schema, or
//! uses something the fast check does not handle (a float where an integer is expected, a key
//! order other than `event` first, a keyword this compiler does not know, …), or is not even
//! JSON. The caller then does what it always did: parse the line into a `Value` and ask the
//! jsonschema validator, which gives the verdict and the messages. So the reports are the same
//! with and without the fast check, as long as it never calls an invalid event valid; the tests
//! compare both paths over every golden, invalid and malformed file and over mutated events.
//!
//! The compiler understands the keywords the event schema uses (`type`, `enum`, `const`,
//! `minLength`, `minimum`, `format: date-time` with its `pattern`, `items`, `properties`,
//! `required`, `additionalProperties`, `unevaluatedProperties: false`, `$ref` into `$defs`, and
//! `allOf` of `if {event: const} then` branches). A schema node with any other keyword is
//! compiled as *unsupported*: an event that reaches it is never fast-valid, so a schema change
//! can make the check slower but not wrong.
//!
//! Parsing goes through [`crate::json_reader`], a deserializer that reads JSON's grammar and makes
//! the calls serde_json's would (it leaves strings with escapes and most numbers to serde_json
//! itself), so a line the fast check reads completely is a line `Value` reads too (lone
//! surrogates, numbers out of range and nesting over 128 levels fail both).

use super::rules::Facts;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

type Id = u32;

/// JSON types, one bit each.
const NULL: u8 = 1;
const BOOL: u8 = 2;
const INT: u8 = 4; // an integer; `number` includes it
const FLOAT: u8 = 8;
const STRING: u8 = 16;
const ARRAY: u8 = 32;
const OBJECT: u8 = 64;
const ANY: u8 = 127;

/// The pattern the schema gives `timestamp` beside `format: date-time`; what
/// [`date_time`] accepts matches it.
const DATE_TIME_PATTERN: &str =
    "^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$";

/// Keywords that only annotate.
const ANNOTATIONS: &[&str] = &[
    "description",
    "title",
    "$schema",
    "$id",
    "$comment",
    "$defs",
    "examples",
    "default",
    "deprecated",
    "readOnly",
    "writeOnly",
];

#[derive(Debug, Clone)]
struct Prop {
    key: String,
    /// Every schema the member's value must satisfy.
    schemas: Vec<Id>,
    /// Allowed by a closed node (`additionalProperties` / `unevaluatedProperties: false`).
    allowed: bool,
    /// Its bit in the required mask.
    required: Option<u8>,
    /// Which fact it is, at the top of an event (see [`FACTS`]); 0 for none.
    fact: u8,
}

#[derive(Debug, Clone)]
struct Node {
    unsupported: bool,
    types: u8,
    /// `enum` / `const` (strings only), sorted.
    strings: Option<Vec<String>>,
    min_len: u64,
    date_time: bool,
    minimum: Option<f64>,
    items: Vec<Id>,
    /// Sorted by key.
    props: Vec<Prop>,
    /// Required members, until [`finish`] gives each its bit in the props.
    required: Vec<String>,
    /// How many required members have a bit.
    required_bits: u8,
    /// Members other than the allowed props are invalid.
    closed: bool,
    additional: Option<Id>,
    /// `allOf` of `if {key: const V} then S`: (key, V → S sorted).
    dispatch: Option<(String, Vec<(String, Id)>)>,
    /// Hash tables over `props` and `strings`, built once compiling is done.
    prop_index: Index,
    string_index: Index,
}

/// An open-addressing hash table of positions in a list of strings.
#[derive(Debug, Clone, Default)]
struct Index {
    /// The length is a power of two (or 0).
    slots: Vec<Slot>,
    /// 64 minus the log2 of the number of slots: a hash shifted right by it is a slot.
    shift: u32,
}

/// A slot of an [`Index`].
#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    /// The key's [`key_word`].
    word: u64,
    /// The key's length.
    len: usize,
    /// The key's position + 1, or 0 for an empty slot.
    pos: u16,
}

/// The first 4 and the last 4 bytes of `s`, overlapping when it is shorter than 8 (for fewer
/// than 4 bytes: its first, middle and last byte). With the length, this is the whole string
/// when it has at most 8 bytes.
#[inline]
fn key_word(s: &[u8]) -> u64 {
    match (s.first_chunk::<4>(), s.last_chunk::<4>()) {
        (Some(head), Some(tail)) => {
            (u64::from(u32::from_le_bytes(*head)) << 32) | u64::from(u32::from_le_bytes(*tail))
        }
        _ => match s {
            [] => 0,
            [a, ..] => {
                let mid = s[s.len() / 2];
                let last = s[s.len() - 1];
                u64::from(*a) | (u64::from(mid) << 8) | (u64::from(last) << 16)
            }
        },
    }
}

/// Whether `a` and `b`, of the same length of over 8 bytes, are equal: up to 16 bytes, by
/// their first and last 8 bytes, without a call to `memcmp`.
#[inline]
fn same_long(a: &[u8], b: &[u8]) -> bool {
    let word = |w: Option<&[u8; 8]>| w.map(|w| u64::from_le_bytes(*w));
    if a.len() <= 16 {
        if let (Some(ah), Some(at), Some(bh), Some(bt)) = (
            word(a.first_chunk()),
            word(a.last_chunk()),
            word(b.first_chunk()),
            word(b.last_chunk()),
        ) {
            return ah == bh && at == bt;
        }
    }
    a == b
}

/// The slot where probing for a key of `word` and `len` starts (multiply-shift hashing: the
/// top bits of the product).
#[inline]
fn home(word: u64, len: usize, shift: u32) -> usize {
    (word
        .wrapping_add(len as u64)
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        >> shift) as usize
}

impl Index {
    fn build<'a>(keys: impl Iterator<Item = &'a str> + Clone) -> Option<Index> {
        let n = keys.clone().count();
        if n == 0 {
            return Some(Index::default());
        }
        if n >= u16::MAX as usize / 4 {
            return None;
        }
        let len = (n * 2).next_power_of_two().max(4);
        let shift = 64 - len.trailing_zeros();
        let mut slots = vec![Slot::default(); len];
        for (i, k) in keys.enumerate() {
            let word = key_word(k.as_bytes());
            let mut at = home(word, k.len(), shift);
            while slots[at].pos != 0 {
                at = (at + 1) & (len - 1);
            }
            slots[at] = Slot {
                word,
                len: k.len(),
                pos: i as u16 + 1,
            };
        }
        Some(Index { slots, shift })
    }

    /// The position of `key` in `keys` (the list the index was built over).
    #[inline]
    fn find<'k>(&self, key: &str, at: impl Fn(usize) -> &'k str) -> Option<usize> {
        let len = self.slots.len();
        if len == 0 {
            return None;
        }
        let word = key_word(key.as_bytes());
        let mut i = home(word, key.len(), self.shift);
        loop {
            let slot = self.slots[i];
            if slot.pos == 0 {
                return None;
            }
            let p = slot.pos as usize - 1;
            // Up to 8 bytes, the word and the length are the whole key.
            if slot.word == word
                && slot.len == key.len()
                && (key.len() <= 8 || same_long(at(p).as_bytes(), key.as_bytes()))
            {
                return Some(p);
            }
            i = (i + 1) & (len - 1);
        }
    }
}

impl Node {
    fn any() -> Node {
        Node {
            unsupported: false,
            types: ANY,
            strings: None,
            min_len: 0,
            date_time: false,
            minimum: None,
            items: Vec::new(),
            props: Vec::new(),
            required: Vec::new(),
            required_bits: 0,
            closed: false,
            additional: None,
            dispatch: None,
            prop_index: Index::default(),
            string_index: Index::default(),
        }
    }

    fn unsupported() -> Node {
        Node {
            unsupported: true,
            ..Node::any()
        }
    }

    /// Whether checking an object or array against it needs more than its type.
    fn structural(&self) -> bool {
        !self.props.is_empty()
            || !self.required.is_empty()
            || self.required_bits > 0
            || self.closed
            || self.additional.is_some()
            || self.dispatch.is_some()
            || !self.items.is_empty()
    }

    #[inline]
    fn prop(&self, key: &str) -> Option<&Prop> {
        let i = self.prop_index.find(key, |i| &self.props[i].key)?;
        Some(&self.props[i])
    }

    fn has_string(&self, v: &str) -> bool {
        match &self.strings {
            None => true,
            Some(l) => self.string_index.find(v, |i| &l[i]).is_some(),
        }
    }

    /// Builds the hash tables; a node too big for them is unsupported.
    fn index(&mut self) {
        let props = Index::build(self.props.iter().map(|p| p.key.as_str()));
        let strings = Index::build(self.strings.iter().flatten().map(String::as_str));
        match (props, strings) {
            (Some(p), Some(s)) => {
                self.prop_index = p;
                self.string_index = s;
            }
            _ => *self = Node::unsupported(),
        }
    }

    fn required_mask(&self) -> u64 {
        self.props
            .iter()
            .filter_map(|p| p.required)
            .fold(0, |m, b| m | 1u64 << b)
    }
}

/// The event schema compiled for the fast check.
pub struct FastSchema {
    nodes: Vec<Node>,
    /// The root node, or for each `event` type the root merged with its branch.
    root: Id,
    by_event: Vec<(String, Id)>,
}

struct Compiler<'a> {
    defs: Option<&'a Map<String, Value>>,
    nodes: Vec<Node>,
    /// `$ref` targets, compiled once (`None` while being compiled: a cycle).
    refs: HashMap<String, Option<Id>>,
}

impl<'a> Compiler<'a> {
    fn push(&mut self, n: Node) -> Id {
        self.nodes.push(n);
        (self.nodes.len() - 1) as Id
    }

    fn compile(&mut self, s: &'a Value) -> Id {
        let n = self.node(s);
        self.push(n)
    }

    fn target(&mut self, r: &str) -> Option<Id> {
        let name = r.strip_prefix("#/$defs/")?;
        if name.contains(['/', '~', '%']) {
            return None;
        }
        match self.refs.get(name) {
            Some(Some(id)) => return Some(*id),
            Some(None) => return None, // a cycle: not supported
            None => {}
        }
        let s = self.defs?.get(name)?;
        self.refs.insert(name.to_owned(), None);
        let id = self.compile(s);
        self.refs.insert(name.to_owned(), Some(id));
        Some(id)
    }

    fn node(&mut self, s: &'a Value) -> Node {
        let m = match s {
            Value::Bool(true) => return Node::any(),
            Value::Object(m) => m,
            _ => return Node::unsupported(),
        };
        let mut n = Node::any();
        let mut own: Vec<Prop> = Vec::new();
        for (k, v) in m {
            let ok = match k.as_str() {
                k if ANNOTATIONS.contains(&k) => true,
                "type" => match type_bits(v) {
                    Some(t) => {
                        n.types &= t;
                        true
                    }
                    None => false,
                },
                "enum" | "const" => {
                    let list: Option<Vec<String>> = match v {
                        Value::Array(a) if k == "enum" => {
                            a.iter().map(|x| x.as_str().map(str::to_owned)).collect()
                        }
                        Value::String(x) if k == "const" => Some(vec![x.clone()]),
                        _ => None,
                    };
                    match list {
                        Some(mut l) => {
                            l.sort();
                            l.dedup();
                            n.strings = Some(intersect(n.strings.take(), l));
                            true
                        }
                        None => false,
                    }
                }
                "minLength" => match v.as_u64() {
                    Some(x) => {
                        n.min_len = x;
                        true
                    }
                    None => false,
                },
                "minimum" => match v.as_f64() {
                    Some(x) if v.is_u64() || v.is_i64() || x.fract() == 0.0 => {
                        n.minimum = Some(x);
                        true
                    }
                    _ => false,
                },
                "format" => {
                    v.as_str() == Some("date-time") && {
                        n.date_time = true;
                        true
                    }
                }
                "pattern" => {
                    v.as_str() == Some(DATE_TIME_PATTERN) && {
                        n.date_time = true;
                        true
                    }
                }
                "items" => {
                    let id = self.compile(v);
                    n.items.push(id);
                    true
                }
                "properties" => match v {
                    Value::Object(ps) => {
                        for (pk, pv) in ps {
                            let id = self.compile(pv);
                            own.push(Prop {
                                key: pk.clone(),
                                schemas: vec![id],
                                allowed: true,
                                required: None,
                                fact: 0,
                            });
                        }
                        true
                    }
                    _ => false,
                },
                "required" => match v {
                    Value::Array(a) if a.iter().all(Value::is_string) => {
                        n.required
                            .extend(a.iter().filter_map(|x| x.as_str().map(str::to_owned)));
                        true
                    }
                    _ => false,
                },
                // Handled below, once the properties are known.
                "additionalProperties" | "unevaluatedProperties" | "$ref" | "allOf" => true,
                _ => false,
            };
            if !ok {
                return Node::unsupported();
            }
        }
        own.sort_by(|a, b| a.key.cmp(&b.key));
        if own.windows(2).any(|w| w[0].key == w[1].key) {
            return Node::unsupported();
        }
        n.props = own;
        let own_keys: Vec<String> = n.props.iter().map(|p| p.key.clone()).collect();
        if let Some(r) = m.get("$ref") {
            let Some(t) = r.as_str().and_then(|r| self.target(r)) else {
                return Node::unsupported();
            };
            let t = self.nodes[t as usize].clone();
            if t.closed || t.additional.is_some() || t.dispatch.is_some() {
                // A closed target keeps its own evaluation scope: only a `$ref` with nothing
                // beside it but types is handled (`then: {$ref}`).
                let alone = n.props.is_empty()
                    && n.required.is_empty()
                    && n.items.is_empty()
                    && n.strings.is_none()
                    && n.min_len == 0
                    && !n.date_time
                    && n.minimum.is_none()
                    && !m.contains_key("additionalProperties")
                    && !m.contains_key("unevaluatedProperties")
                    && !m.contains_key("allOf");
                if !alone || t.unsupported {
                    return Node::unsupported();
                }
                let types = n.types;
                n = t;
                n.types &= types;
                return n;
            }
            n = merge(n, t);
        }
        match m.get("additionalProperties") {
            None | Some(Value::Bool(true)) => {}
            Some(Value::Bool(false)) => {
                n.closed = true;
                for p in &mut n.props {
                    p.allowed = own_keys.contains(&p.key);
                }
            }
            Some(s) => {
                if n.props.len() != own_keys.len() {
                    return Node::unsupported();
                }
                n.additional = Some(self.compile(s));
            }
        }
        match m.get("unevaluatedProperties") {
            None | Some(Value::Bool(true)) => {}
            // Evaluated: its own properties and those of its `$ref` (no allOf here).
            Some(Value::Bool(false)) if !m.contains_key("allOf") && n.additional.is_none() => {
                n.closed = true;
            }
            Some(_) => return Node::unsupported(),
        }
        if let Some(all) = m.get("allOf") {
            match self.dispatch(all) {
                Some(d) if n.additional.is_none() && !n.closed => n.dispatch = Some(d),
                _ => return Node::unsupported(),
            }
        }
        finish(n)
    }

    /// `allOf: [{if: {properties: {K: {const: V}}, required: [K]}, then: S}, …]`.
    fn dispatch(&mut self, all: &'a Value) -> Option<(String, Vec<(String, Id)>)> {
        let mut key: Option<&str> = None;
        let mut cases = Vec::new();
        for b in all.as_array()? {
            let b = b.as_object()?;
            if b.keys().any(|k| k != "if" && k != "then") {
                return None;
            }
            let cond = b.get("if")?.as_object()?;
            if cond.keys().any(|k| k != "properties" && k != "required") {
                return None;
            }
            let props = cond.get("properties")?.as_object()?;
            if props.len() != 1 {
                return None;
            }
            let (k, c) = props.iter().next()?;
            let c = c.as_object()?;
            if c.len() != 1 {
                return None;
            }
            let v = c.get("const")?.as_str()?;
            if cond.get("required")? != &Value::Array(vec![Value::String(k.clone())]) {
                return None;
            }
            if *key.get_or_insert(k) != k {
                return None;
            }
            let then = self.compile(b.get("then")?);
            cases.push((v.to_owned(), then));
        }
        cases.sort_by(|a, b| a.0.cmp(&b.0));
        if cases.windows(2).any(|w| w[0].0 == w[1].0) {
            return None;
        }
        Some((key?.to_owned(), cases))
    }
}

/// Assigns the required bits (a node with a required member it has no property for, or more
/// than 64 required members, is unsupported).
fn finish(mut n: Node) -> Node {
    if n.unsupported {
        return Node::unsupported();
    }
    let mut bit = 0u8;
    for r in std::mem::take(&mut n.required) {
        let Ok(i) = n.props.binary_search_by(|p| p.key.cmp(&r)) else {
            return Node::unsupported();
        };
        if n.props[i].required.is_none() {
            if bit == 64 {
                return Node::unsupported();
            }
            n.props[i].required = Some(bit);
            bit += 1;
        }
    }
    n.required_bits = bit;
    n
}

fn type_bits(v: &Value) -> Option<u8> {
    let one = |t: &str| -> Option<u8> {
        Some(match t {
            "null" => NULL,
            "boolean" => BOOL,
            "integer" => INT,
            "number" => INT | FLOAT,
            "string" => STRING,
            "array" => ARRAY,
            "object" => OBJECT,
            _ => return None,
        })
    };
    match v {
        Value::String(t) => one(t),
        Value::Array(a) => a.iter().try_fold(0, |m, t| Some(m | one(t.as_str()?)?)),
        _ => None,
    }
}

fn intersect(a: Option<Vec<String>>, b: Vec<String>) -> Vec<String> {
    match a {
        None => b,
        Some(a) => a.into_iter().filter(|x| b.contains(x)).collect(),
    }
}

/// Both `a` and `b` (neither closed, nor with additional schemas or dispatch, nor finished).
fn merge(mut a: Node, b: Node) -> Node {
    if a.unsupported || b.unsupported {
        return Node::unsupported();
    }
    a.types &= b.types;
    a.strings = match (a.strings.take(), b.strings) {
        (x, None) => x,
        (x, Some(l)) => Some(intersect(x, l)),
    };
    a.min_len = a.min_len.max(b.min_len);
    a.date_time |= b.date_time;
    a.minimum = match (a.minimum, b.minimum) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, y) => x.or(y),
    };
    a.items.extend(b.items);
    // b is finished: its required bits stand for required members.
    a.required.extend(
        b.props
            .iter()
            .filter(|p| p.required.is_some())
            .map(|p| p.key.clone()),
    );
    for p in b.props {
        match a.props.binary_search_by(|q| q.key.cmp(&p.key)) {
            Ok(i) => a.props[i].schemas.extend(p.schemas),
            Err(i) => a.props.insert(
                i,
                Prop {
                    required: None,
                    ..p
                },
            ),
        }
    }
    a
}

/// `root ∧ branch` for one `event` type: the branch may be closed, the root is not.
fn merge_branch(root: &Node, branch: &Node) -> Node {
    if branch.unsupported || branch.dispatch.is_some() || branch.additional.is_some() {
        return Node::unsupported();
    }
    let mut n = branch.clone();
    n.types &= root.types;
    if root.strings.is_some() || root.min_len > 0 || root.date_time || root.minimum.is_some() {
        return Node::unsupported();
    }
    n.items.extend(root.items.iter().copied());
    let mut bit = n.props.iter().filter_map(|p| p.required).count() as u8;
    for p in &root.props {
        match n.props.binary_search_by(|q| q.key.cmp(&p.key)) {
            Ok(i) => {
                n.props[i].schemas.extend(p.schemas.iter().copied());
                if p.required.is_some() && n.props[i].required.is_none() {
                    if bit == 64 {
                        return Node::unsupported();
                    }
                    n.props[i].required = Some(bit);
                    bit += 1;
                }
            }
            Err(i) => {
                let required = match p.required {
                    Some(_) if bit == 64 => return Node::unsupported(),
                    Some(_) => {
                        bit += 1;
                        Some(bit - 1)
                    }
                    None => None,
                };
                n.props.insert(
                    i,
                    Prop {
                        key: p.key.clone(),
                        schemas: p.schemas.clone(),
                        // A member only the root evaluates is unevaluated in a closed branch.
                        allowed: !n.closed,
                        required,
                        fact: 0,
                    },
                );
            }
        }
    }
    n.required_bits = bit;
    n
}

impl FastSchema {
    /// Compiles `schema`; what it cannot handle is compiled as unsupported (see the module).
    pub fn compile(schema: &Value) -> FastSchema {
        let mut c = Compiler {
            defs: schema.get("$defs").and_then(Value::as_object),
            nodes: Vec::new(),
            refs: HashMap::new(),
        };
        let root = c.compile(schema);
        let mut by_event = Vec::new();
        let r = c.nodes[root as usize].clone();
        if let Some((key, cases)) = &r.dispatch {
            if key == "event" {
                let mut base = r.clone();
                base.dispatch = None;
                for (v, then) in cases {
                    let mut n = merge_branch(&base, &c.nodes[*then as usize]);
                    for p in &mut n.props {
                        p.fact = FACTS
                            .iter()
                            .position(|f| *f == p.key)
                            .map_or(0, |i| i as u8 + 1);
                    }
                    let id = c.push(n);
                    by_event.push((v.clone(), id));
                }
            }
        }
        for n in &mut c.nodes {
            n.index();
        }
        FastSchema {
            nodes: c.nodes,
            root,
            by_event,
        }
    }

    fn node(&self, id: Id) -> &Node {
        &self.nodes[id as usize]
    }

    /// The event's facts if `line` is certainly a valid event (see the module); `None` when
    /// the caller must ask the full validator.
    pub fn check<'a>(&self, line: &'a str) -> Option<EventFacts<'a>> {
        let root = self.node(self.root);
        if root.unsupported || root.dispatch.is_none() || self.by_event.is_empty() {
            return None;
        }
        let mut de = crate::json_reader::Reader::new(line);
        let facts = de.deserialize_map(Top { fs: self }).ok()?;
        de.end().ok()?;
        Some(facts)
    }
}

/// Facts of an event read by the fast check; strings are borrowed from the line unless they
/// had escapes.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct EventFacts<'a> {
    pub event: Cow<'a, str>,
    pub id: Option<Cow<'a, str>>,
    pub seq: Option<u64>,
    pub session: Option<Cow<'a, str>>,
    pub turn_id: Option<Cow<'a, str>>,
    pub call_id: Option<Cow<'a, str>>,
    pub parent_call_id: Option<Cow<'a, str>>,
    pub request_id: Option<Cow<'a, str>>,
    pub tool_use_id: Option<Cow<'a, str>>,
    pub kind: Option<Cow<'a, str>>,
    pub status: Option<Cow<'a, str>>,
    pub block_index: Option<u64>,
    pub is_error: bool,
    pub provider: Option<Cow<'a, str>>,
    pub reason: Option<Cow<'a, str>>,
    pub diff: Option<Cow<'a, str>>,
}

impl EventFacts<'_> {
    /// As the rules read them ([`Facts::of`] for a `Value`).
    pub fn facts(&self) -> Facts<'_> {
        Facts {
            event: &self.event,
            id: self.id.as_deref(),
            seq: self.seq,
            session: self.session.as_deref().unwrap_or(""),
            turn_id: self.turn_id.as_deref(),
            call_id: self.call_id.as_deref(),
            parent_call_id: self.parent_call_id.as_deref(),
            request_id: self.request_id.as_deref(),
            tool_use_id: self.tool_use_id.as_deref(),
            kind: self.kind.as_deref(),
            status: self.status.as_deref(),
            block_index: self.block_index,
            is_error: self.is_error,
            provider: self.provider.as_deref().unwrap_or(""),
            reason: self.reason.as_deref(),
            diff: self.diff.as_deref(),
        }
    }
}

/// What a member's value was, for the facts.
enum Scalar<'de> {
    Str(Cow<'de, str>),
    U64(u64),
    Bool(bool),
    Other,
}

impl<'de> Scalar<'de> {
    fn str(self) -> Option<Cow<'de, str>> {
        match self {
            Scalar::Str(s) => Some(s),
            _ => None,
        }
    }
    fn u64(&self) -> Option<u64> {
        match self {
            Scalar::U64(n) => Some(*n),
            _ => None,
        }
    }
}

/// Stops the parse: the fast check is not sure (never shown to anyone).
fn bail<E: de::Error>() -> E {
    E::custom("not sure")
}

/// The top-level object: `event` first, then the members against the branch of its type.
struct Top<'s> {
    fs: &'s FastSchema,
}

impl<'de> Visitor<'de> for Top<'_> {
    type Value = EventFacts<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an event")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<EventFacts<'de>, A::Error> {
        let fs = self.fs;
        let first: Option<Cow<'de, str>> = map.next_key_seed(Key)?;
        if first.as_deref() != Some("event") {
            return Err(bail());
        }
        let event: Cow<'de, str> = map.next_value_seed(Str)?;
        let Ok(i) = fs
            .by_event
            .binary_search_by(|(v, _)| v.as_str().cmp(&event))
        else {
            return Err(bail());
        };
        let node = fs.node(fs.by_event[i].1);
        if node.unsupported {
            return Err(bail());
        }
        let mut seen = 0u64;
        let mut facts = EventFacts::default();
        // `event` itself, against its schemas.
        let p = node.prop("event").ok_or_else(bail)?;
        check_str(fs, &p.schemas, &event)?;
        if let Some(b) = p.required {
            seen |= 1 << b;
        }
        facts.event = event;
        while let Some(key) = map.next_key_seed(Key)? {
            let Some(p) = node.prop(&key) else {
                return Err(bail()); // branches are closed
            };
            if !p.allowed {
                return Err(bail());
            }
            if let Some(b) = p.required {
                seen |= 1 << b;
            }
            let v = map.next_value_seed(Val {
                fs,
                nodes: &p.schemas,
                want: p.fact != 0,
            })?;
            if p.fact != 0 {
                set_fact(&mut facts, p.fact, v);
            }
        }
        if seen != node.required_mask() {
            return Err(bail());
        }
        Ok(facts)
    }
}

/// The members the rules read ([`Facts`]), numbered from 1 in this order.
const FACTS: [&str; 16] = [
    "event",
    "id",
    "seq",
    "sessionId",
    "turnId",
    "callId",
    "parentCallId",
    "requestId",
    "kind",
    "status",
    "blockIndex",
    "isError",
    "provider",
    "reason",
    "toolUseId",
    "diff",
];

/// The last occurrence of a member wins, whatever its type (as in a `Value`).
fn set_fact<'de>(f: &mut EventFacts<'de>, fact: u8, v: Scalar<'de>) {
    match fact {
        1 => f.event = v.str().unwrap_or(Cow::Borrowed("")),
        2 => f.id = v.str(),
        3 => f.seq = v.u64(),
        4 => f.session = v.str(),
        5 => f.turn_id = v.str(),
        6 => f.call_id = v.str(),
        7 => f.parent_call_id = v.str(),
        8 => f.request_id = v.str(),
        9 => f.kind = v.str(),
        10 => f.status = v.str(),
        11 => f.block_index = v.u64(),
        12 => f.is_error = matches!(v, Scalar::Bool(true)),
        13 => f.provider = v.str(),
        14 => f.reason = v.str(),
        15 => f.tool_use_id = v.str(),
        16 => f.diff = v.str(),
        _ => {}
    }
}

/// A member name.
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Cow<'de, str>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Cow<'de, str>, D::Error> {
        d.deserialize_str(Str)
    }
}

/// A string value, borrowed when it can be.
struct Str;

impl<'de> DeserializeSeed<'de> for Str {
    type Value = Cow<'de, str>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Cow<'de, str>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Str {
    type Value = Cow<'de, str>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Borrowed(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(v))
    }
}

fn check_str<E: de::Error>(fs: &FastSchema, nodes: &[Id], v: &str) -> Result<(), E> {
    for &id in nodes {
        let n = fs.node(id);
        if n.unsupported || n.types & STRING == 0 {
            return Err(bail());
        }
        if !n.has_string(v) {
            return Err(bail());
        }
        if n.min_len > 0 && (v.chars().count() as u64) < n.min_len {
            return Err(bail());
        }
        if n.date_time && !date_time(v) {
            return Err(bail());
        }
    }
    Ok(())
}

/// A value against every schema in `nodes`.
struct Val<'s> {
    fs: &'s FastSchema,
    nodes: &'s [Id],
    /// Return the scalar (for the facts).
    want: bool,
}

impl Val<'_> {
    /// A non-string scalar of type `ty`.
    fn scalar<E: de::Error>(&self, ty: u8, number: Option<f64>) -> Result<(), E> {
        for &id in self.nodes {
            let n = self.fs.node(id);
            if n.unsupported || n.types & ty == 0 || n.strings.is_some() || n.date_time {
                return Err(bail());
            }
            if let (Some(min), Some(x)) = (n.minimum, number) {
                if x < min {
                    return Err(bail());
                }
            }
            if n.minimum.is_some() && number.is_none() {
                return Err(bail());
            }
        }
        Ok(())
    }

    /// The one node that says more than the type of a container, if any (after checking the
    /// type against all); more than one is not supported.
    fn container<E: de::Error>(&self, ty: u8) -> Result<Option<&Node>, E> {
        let mut one = None;
        for &id in self.nodes {
            let n = self.fs.node(id);
            if n.unsupported || n.types & ty == 0 || n.strings.is_some() || n.date_time {
                return Err(bail());
            }
            if n.minimum.is_some() {
                return Err(bail());
            }
            if n.structural() {
                if one.is_some() {
                    return Err(bail());
                }
                one = Some(n);
            }
        }
        Ok(one)
    }
}

impl<'de> DeserializeSeed<'de> for Val<'_> {
    type Value = Scalar<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Scalar<'de>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Val<'_> {
    type Value = Scalar<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Scalar<'de>, E> {
        self.scalar(NULL, None)?;
        Ok(Scalar::Other)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Scalar<'de>, E> {
        self.scalar(BOOL, None)?;
        Ok(Scalar::Bool(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Scalar<'de>, E> {
        // Exact for the small minimums schemas use; a large value passes them all.
        self.scalar(INT, Some(v.min(1 << 53) as f64))?;
        Ok(Scalar::U64(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Scalar<'de>, E> {
        self.scalar(INT, Some(v.clamp(-(1 << 53), 1 << 53) as f64))?;
        Ok(Scalar::Other)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Scalar<'de>, E> {
        // An integral float is an integer to JSON Schema; only `number` is handled here.
        self.scalar(FLOAT, Some(v))?;
        Ok(Scalar::Other)
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Scalar<'de>, E> {
        check_str(self.fs, self.nodes, v)?;
        Ok(if self.want {
            Scalar::Str(Cow::Borrowed(v))
        } else {
            Scalar::Other
        })
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Scalar<'de>, E> {
        check_str(self.fs, self.nodes, v)?;
        Ok(if self.want {
            Scalar::Str(Cow::Owned(v.to_owned()))
        } else {
            Scalar::Other
        })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Scalar<'de>, A::Error> {
        let fs = self.fs;
        match self.container(ARRAY)? {
            Some(n) => {
                while seq
                    .next_element_seed(Val {
                        fs,
                        nodes: &n.items,
                        want: false,
                    })?
                    .is_some()
                {}
            }
            None => while seq.next_element_seed(Skip)?.is_some() {},
        }
        Ok(Scalar::Other)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scalar<'de>, A::Error> {
        let fs = self.fs;
        let Some(n) = self.container(OBJECT)? else {
            while map.next_key_seed(Key)?.is_some() {
                map.next_value_seed(Skip)?;
            }
            return Ok(Scalar::Other);
        };
        if n.dispatch.is_some() {
            return Err(bail());
        }
        let mut seen = 0u64;
        while let Some(key) = map.next_key_seed(Key)? {
            let nodes: &[Id] = match n.prop(&key) {
                Some(p) => {
                    if !p.allowed {
                        return Err(bail());
                    }
                    if let Some(b) = p.required {
                        seen |= 1 << b;
                    }
                    &p.schemas
                }
                None if n.closed => return Err(bail()),
                None => match &n.additional {
                    Some(a) => std::slice::from_ref(a),
                    None => &[],
                },
            };
            map.next_value_seed(Val {
                fs,
                nodes,
                want: false,
            })?;
        }
        if seen != n.required_mask() {
            return Err(bail());
        }
        Ok(Scalar::Other)
    }
}

/// Any value, read in full (as a `Value` would be: strings decoded, numbers parsed).
struct Skip;

impl<'de> DeserializeSeed<'de> for Skip {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Skip {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Skip)?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_key_seed(Key)?.is_some() {
            map.next_value_seed(Skip)?;
        }
        Ok(())
    }
}

/// An RFC 3339 date-time ([`crate::time::parse`], the program's one reader) with upper-case
/// `T` and `Z` and no leap second: a subset of both `format: date-time` (as the jsonschema
/// crate checks it) and the schema's pattern. Leap seconds and lower-case letters are left
/// to the full validator.
pub fn date_time(s: &str) -> bool {
    crate::time::parse(s).is_some_and(|t| t.upper && t.second < 60)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::check::{check_reader, Context, FileReport};
    use crate::validate::rules::Policy;
    use jsonschema::Validator;
    use std::path::Path;

    struct Both {
        full: Validator,
        fast: FastSchema,
    }

    fn both() -> Both {
        let schema: Value = serde_json::from_str(crate::schema::EVENT_SCHEMA).unwrap();
        Both {
            full: super::super::compile(&schema).unwrap(),
            fast: FastSchema::compile(&schema),
        }
    }

    /// Every `*.jsonl` file below `testdata/`, sorted.
    /// The fast check may only say "valid" where the full validator does, with the same facts.
    /// Returns whether it said so.
    fn agree(b: &Both, line: &str) -> bool {
        let fast = b.fast.check(line);
        let value: Option<Value> = serde_json::from_str(line).ok();
        match (&fast, &value) {
            (None, _) => false,
            (Some(_), None) => panic!("fast-valid but not JSON to serde_json: {line}"),
            (Some(f), Some(v)) => {
                assert!(
                    b.full.is_valid(v),
                    "fast-valid but invalid: {line}\n{:?}",
                    b.full
                        .iter_errors(v)
                        .map(|e| e.to_string())
                        .collect::<Vec<_>>()
                );
                let m = v.as_object().expect("an object");
                assert_eq!(f.facts(), Facts::of(m), "{line}");
                true
            }
        }
    }

    #[test]
    fn an_index_finds_its_keys_and_nothing_else() {
        // Every string of up to 10 bytes over {a, b}, and a few longer ones that share their
        // first and last 4 or 8 bytes: the index over every third finds exactly those.
        let mut all = vec![String::new()];
        for len in 1..=10 {
            for bits in 0..1u32 << len {
                all.push(
                    (0..len)
                        .map(|i| if bits >> i & 1 == 1 { 'b' } else { 'a' })
                        .collect(),
                );
            }
        }
        all.extend(
            [
                "abcdXYZwxyz",
                "abcdXYwxyz",
                "abcdZYXwxyz",
                "0123456789abcdef",
                "0123456789abcdeF",
                "0123456_89abcdef",
                "01234567x9abcdef",
                "0123456789abcdefg",
                "01234567X89abcdefg",
                "01234567Y89abcdefg",
                "é",
                "aé",
                "éa",
                "\0",
                "a\0",
            ]
            .map(String::from),
        );
        let keys: Vec<&str> = all.iter().step_by(3).map(String::as_str).collect();
        let index = Index::build(keys.iter().copied()).expect("small enough");
        for (i, k) in all.iter().enumerate() {
            let want = (i % 3 == 0).then_some(i / 3);
            assert_eq!(index.find(k, |p| keys[p]), want, "{k:?}");
        }
        assert_eq!(Index::default().find("a", |p| keys[p]), None);
    }

    #[test]
    fn every_golden_event_takes_the_fast_path_and_agrees() {
        let b = both();
        let (mut lines, mut fast) = (0, 0);
        for f in crate::test_support::testdata_jsonl() {
            let text = std::fs::read(&f).unwrap();
            let text = String::from_utf8_lossy(&text);
            let golden = f.to_string_lossy().ends_with(".events.jsonl")
                && !f.components().any(|c| c.as_os_str() == "malformed");
            for l in text.lines() {
                lines += 1;
                let ok = agree(&b, l);
                fast += u32::from(ok);
                if golden {
                    assert!(ok, "{}: not fast-valid: {l}", f.display());
                }
            }
        }
        assert!(lines > 4000 && fast > 2000, "{lines} lines, {fast} fast");
    }

    /// Variants of `v`: each member removed, replaced by values of every type, given twice,
    /// and moved, at the top and one level down.
    fn mutations(v: &Value) -> Vec<String> {
        let others = [
            json!(null),
            json!(true),
            json!(0),
            json!(1),
            json!(-1),
            json!(1.5),
            json!(2.0),
            json!(""),
            json!("x"),
            json!("2026-02-30T10:00:00Z"),
            json!("2026-01-01T10:00:00z"),
            json!("2026-01-01T23:59:60Z"),
            json!([]),
            json!(["x"]),
            json!([{}]),
            json!({}),
            json!({"type": "text"}),
        ];
        let mut out = Vec::new();
        let Value::Object(m) = v else { return out };
        let text = serde_json::to_string(v).unwrap();
        for (k, val) in m {
            let mut w = m.clone();
            w.shift_remove(k);
            out.push(serde_json::to_string(&w).unwrap());
            for o in &others {
                let mut w = m.clone();
                w.insert(k.clone(), o.clone());
                out.push(serde_json::to_string(&w).unwrap());
                // Given twice, the first or the last one valid.
                let dup = format!(
                    "{},{}:{}}}",
                    &text[..text.len() - 1],
                    serde_json::to_string(k).unwrap(),
                    o
                );
                out.push(dup);
                let dup = format!(
                    "{{{}:{},{}",
                    serde_json::to_string(k).unwrap(),
                    o,
                    &text[1..]
                );
                out.push(dup);
            }
            // One level down.
            if let Value::Object(inner) = val {
                for ik in inner.keys() {
                    let mut w = m.clone();
                    w[k].as_object_mut().unwrap().shift_remove(ik);
                    out.push(serde_json::to_string(&w).unwrap());
                    for o in &others {
                        let mut w = m.clone();
                        w[k][ik] = o.clone();
                        out.push(serde_json::to_string(&w).unwrap());
                    }
                }
                let mut w = m.clone();
                w[k]["unexpectedMember"] = json!(1);
                out.push(serde_json::to_string(&w).unwrap());
            }
            if let Value::Array(items) = val {
                if let Some(Value::Object(first)) = items.first() {
                    for ik in first.keys() {
                        let mut w = m.clone();
                        w[k][0].as_object_mut().unwrap().shift_remove(ik);
                        out.push(serde_json::to_string(&w).unwrap());
                        for o in &others {
                            let mut w = m.clone();
                            w[k][0][ik] = o.clone();
                            out.push(serde_json::to_string(&w).unwrap());
                        }
                    }
                }
                for o in &others {
                    let mut w = m.clone();
                    w[k].as_array_mut().unwrap().push(o.clone());
                    out.push(serde_json::to_string(&w).unwrap());
                }
            }
        }
        let mut w = m.clone();
        w.insert("unexpectedMember".into(), json!(1));
        out.push(serde_json::to_string(&w).unwrap());
        // `event` last.
        let mut w = m.clone();
        if let Some(e) = w.shift_remove("event") {
            w.insert("event".into(), e);
        }
        out.push(serde_json::to_string(&w).unwrap());
        out
    }

    #[test]
    fn mutated_events_never_pass_the_fast_check_wrongly() {
        let b = both();
        // One event of each type and set of members, from the golden files.
        let mut shapes = std::collections::BTreeMap::new();
        for f in crate::test_support::testdata_jsonl() {
            if !f.to_string_lossy().ends_with(".events.jsonl") {
                continue;
            }
            for l in std::fs::read_to_string(&f).unwrap_or_default().lines() {
                let Ok(v) = serde_json::from_str::<Value>(l) else {
                    continue;
                };
                let Some(m) = v.as_object() else { continue };
                let mut key: Vec<String> = m.keys().cloned().collect();
                key.push(m.get("event").and_then(Value::as_str).unwrap_or("").into());
                shapes.entry(key).or_insert(v);
            }
        }
        let (mut n, mut fast) = (0, 0);
        for v in shapes.values() {
            for m in mutations(v) {
                n += 1;
                fast += u32::from(agree(&b, &m));
            }
        }
        assert!(n > 10_000, "{n} mutations");
        assert!(fast > 100, "{fast} of {n} mutations fast-valid");
    }

    #[test]
    fn strange_lines_are_left_to_the_full_check() {
        let b = both();
        let good = r#"{"event":"notice","id":"a:0","seq":1,"line":1,"provider":"claude","sessionId":"","subtype":"x"}"#;
        assert!(agree(&b, good));
        for l in [
            // A lone surrogate, a number out of range, nesting too deep, trailing data.
            r#"{"event":"notice","id":"a:0","seq":1,"line":1,"provider":"claude","sessionId":"","subtype":"x","extensions":{"x":"\ud800"}}"#,
            r#"{"event":"notice","id":"a:0","seq":1,"line":1,"provider":"claude","sessionId":"","subtype":"x","extensions":{"x":1e999}}"#,
            r#"{"event":"notice","id":"a:0","seq":1,"line":1,"provider":"claude","sessionId":"","subtype":"x"} x"#,
            r#"{"event":"notice","id":"a:0","seq":1.0,"line":1,"provider":"claude","sessionId":"","subtype":"x"}"#,
            r#"{"event":"notice","id":"","seq":1,"line":1,"provider":"claude","sessionId":"","subtype":"x"}"#,
            r#"{"id":"a:0","event":"notice","seq":1,"line":1,"provider":"claude","sessionId":"","subtype":"x"}"#,
            r#"{"event":"notice","id":"a:0","seq":1,"line":1,"provider":"claude","sessionId":"","subtype":"x","event":"text"}"#,
            r#"{"event":"notice","id":"a:0","seq":1,"line":1,"provider":"claude","sessionId":"","subtype":"x","seq":0}"#,
            r#"[1]"#,
        ] {
            assert!(!agree(&b, l), "{l}");
        }
        let deep = format!(
            r#"{{"event":"notice","id":"a:0","seq":1,"line":1,"provider":"claude","sessionId":"","subtype":"x","extensions":{{"x":{}1{}}}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        assert!(!agree(&b, &deep));
        // Escaped strings are facts too.
        let esc = r#"{"event":"notice","id":"a\u003a0","seq":1,"line":1,"provider":"claude","sessionId":"s\n","subtype":"x"}"#;
        assert!(agree(&b, esc));
    }

    #[test]
    fn date_times_are_a_subset_of_the_format_and_the_pattern() {
        let b = both();
        let base = r#"{"event":"notice","id":"a:0","seq":1,"line":1,"provider":"claude","sessionId":"","subtype":"x","timestamp":"TS"}"#;
        let mut fast = 0;
        for ts in [
            "2026-11-22T02:43:41.656Z",
            "2026-11-22T02:43:41Z",
            "2026-11-22T02:43:41.656+01:00",
            "2026-11-22T02:43:41-23:59",
            "2024-02-29T00:00:00Z",
            "2023-02-29T00:00:00Z",
            "2000-02-29T00:00:00Z",
            "1900-02-29T00:00:00Z",
            "2026-04-31T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-00-01T00:00:00Z",
            "2026-01-00T00:00:00Z",
            "2026-01-01T24:00:00Z",
            "2026-01-01T23:60:00Z",
            "2026-01-01T23:59:60Z",
            "2026-01-01t23:59:59Z",
            "2026-01-01T23:59:59z",
            "2026-01-01T23:59:59.Z",
            "2026-01-01T23:59:59+24:00",
            "2026-01-01T23:59:59+01:60",
            "2026-01-01T23:59:59+0100",
            "2026-01-01T23:59:59",
            "2026-01-01 23:59:59Z",
            "2026-01-01T23:59:59Z ",
            "+2026-01-01T23:59:59Z",
            "2026-1-01T23:59:59Z",
            "２０２６-01-01T23:59:59Z",
        ] {
            fast += u32::from(agree(&b, &base.replace("TS", ts)));
        }
        assert_eq!(fast, 6);
    }

    fn report(b: &Both, fast: &FastSchema, path: &Path, pipelined: bool) -> FileReport {
        let r = std::fs::File::open(path).unwrap();
        report_of(b, fast, r, path.display().to_string(), pipelined)
    }

    fn report_of(
        b: &Both,
        fast: &FastSchema,
        r: impl std::io::Read,
        name: String,
        pipelined: bool,
    ) -> FileReport {
        let opts = crate::convert::Options {
            forced: None,
            raw: false,
            clock: false,
            flush: crate::output::FlushPolicy::Block,
            strict: false,
            cc_insights: false,
            turn_ids: false,
            max_line: 1 << 20,
        };
        let p = Policy::default();
        let cx = Context {
            schema: &b.full,
            fast,
            opts: &opts,
            policy: &p,
        };
        check_reader(r, name, &cx, pipelined)
    }

    /// A log of many batches (every capture, eight times over: thousands of items, findings
    /// among them), so that the two threads hand batches back and forth and fill recycled
    /// ones: the report is the one thread's.
    #[test]
    fn a_log_of_many_batches_is_judged_as_on_one_thread() {
        let b = both();
        let mut log = Vec::new();
        for _ in 0..8 {
            for f in crate::test_support::testdata_jsonl() {
                log.extend(std::fs::read(&f).unwrap());
                if log.last() != Some(&b'\n') {
                    log.push(b'\n');
                }
            }
        }
        let one = report_of(&b, &b.fast, &log[..], "log".into(), false);
        let two = report_of(&b, &b.fast, &log[..], "log".into(), true);
        assert!(one.events > 8 * 256, "{} events", one.events);
        assert!(!one.findings.is_empty());
        assert_eq!(one.findings, two.findings);
        assert_eq!(one.health, two.health);
        assert_eq!(
            (one.lines, one.events, one.errors, one.warnings),
            (two.lines, two.events, two.errors, two.warnings)
        );
    }

    #[test]
    fn reports_are_the_same_without_the_fast_check() {
        let b = both();
        // A schema the fast check supports nothing of: every event takes the full path.
        let none = FastSchema::compile(&json!({"not": {}}));
        for f in crate::test_support::testdata_jsonl() {
            // Both stages on one thread, and on two.
            let with = report(&b, &b.fast, &f, false);
            let without = report(&b, &none, &f, true);
            assert_eq!(with.findings, without.findings, "{}", f.display());
            assert_eq!(with.health, without.health, "{}", f.display());
            assert_eq!(
                (with.lines, with.events, with.errors, with.warnings),
                (
                    without.lines,
                    without.events,
                    without.errors,
                    without.warnings
                ),
                "{}",
                f.display()
            );
        }
    }

    use serde_json::json;
}
