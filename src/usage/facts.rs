//! What `usage` and `sessions` read of a session file's line: the tokens of one model
//! response, the prompt that starts a turn, the session's id and directory. Each provider
//! module gives them from the same wire types its event mapping reads (`line_facts`), without
//! building events.

use crate::event::Str;

/// Tokens of one model response, or summed over many. The kinds do not overlap:
/// - `input`: prompt tokens neither read from nor written to a cache (Codex and Gemini count
///   cached tokens in their input; they are taken out here, as Claude's wire already does);
/// - `output`: every generated token, reasoning included (all are billed as output);
/// - `reasoning`: the part of `output` that was reasoning, where the agent says (Codex,
///   Gemini; Claude does not tell it apart);
/// - `cache_creation_1h`: the part of `cache_creation` written for an hour (Anthropic).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_creation: u64,
    pub cache_creation_1h: u64,
    pub reasoning: u64,
}

impl Tokens {
    pub fn total(&self) -> u64 {
        self.input
            .saturating_add(self.output)
            .saturating_add(self.cache_read)
            .saturating_add(self.cache_creation)
    }

    /// Sums, saturating: counts come from files, and a file may say anything.
    pub fn add(&mut self, o: &Tokens) {
        self.input = self.input.saturating_add(o.input);
        self.output = self.output.saturating_add(o.output);
        self.cache_read = self.cache_read.saturating_add(o.cache_read);
        self.cache_creation = self.cache_creation.saturating_add(o.cache_creation);
        self.cache_creation_1h = self.cache_creation_1h.saturating_add(o.cache_creation_1h);
        self.reasoning = self.reasoning.saturating_add(o.reasoning);
    }

    pub fn is_zero(&self) -> bool {
        self.total() == 0 && self.reasoning == 0
    }
}

/// One line's facts. Empty for a line that says none of them.
#[derive(Debug, Default)]
pub struct LineFacts<'a> {
    /// Unix milliseconds, from the line's own timestamp.
    pub time: Option<i64>,
    pub session: Option<Str<'a>>,
    pub cwd: Option<Str<'a>>,
    pub model: Option<Str<'a>>,
    /// The tokens of one model response.
    pub usage: Option<Tokens>,
    /// The agent's own cost of that response, in dollars, where it writes one.
    pub cost_usd: Option<f64>,
    /// Identifies the response where the agent writes it again (a resumed Claude session
    /// repeats its earlier messages; one message is written once per content block): the
    /// same key is counted once, with its largest token count.
    pub response: Option<u64>,
    /// A turn starts: a person's prompt, or a turn the agent's goal started; one still
    /// running counts. These are the turns `reduce` lists in its tree.
    pub turn: bool,
}

/// What a file's earlier lines said that later lines need: Codex writes the model once per
/// turn and its token counts as running totals.
#[derive(Debug, Default)]
pub struct FileMemo {
    pub model: Option<String>,
    pub session: Option<String>,
    pub cwd: Option<String>,
    /// The last running total, to tell a new response from the same total written again.
    pub totals: Option<Tokens>,
}

/// What a reading of session files needs of them: the responses' tokens alone (`usage`,
/// `statusline`), or also the prompts that start turns (`sessions`, the store). Most of a
/// conversation's lines that a person wrote are prompts: `usage` leaves them unparsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wanted {
    Responses,
    ResponsesAndTurns,
}

/// Byte strings that a provider's `line_wanted` looks for in every line of a session file,
/// each searcher built once, at the first search (a searcher built per line costs more than
/// the search).
pub struct Marks {
    marks: &'static [&'static str],
    finders: std::sync::OnceLock<Vec<memchr::memmem::Finder<'static>>>,
}

impl Marks {
    pub const fn new(marks: &'static [&'static str]) -> Marks {
        Marks {
            marks,
            finders: std::sync::OnceLock::new(),
        }
    }

    /// Whether `line` holds any of the marks.
    pub fn any_in(&self, line: &[u8]) -> bool {
        let finders = self.finders.get_or_init(|| {
            (self.marks.iter())
                .map(|m| memchr::memmem::Finder::new(m.as_bytes()))
                .collect()
        });
        finders.iter().any(|f| f.find(line).is_some())
    }
}
