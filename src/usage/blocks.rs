//! `insights usage --by block`: billing blocks, the windows Claude's plans are metered in
//! (5 hours by default), as ccusage's `blocks` cuts them.
//!
//! Each agent's responses, in time order, are cut into blocks: a block starts at the hour
//! (UTC) of its first response and holds every response until one comes more than the window
//! after the block's start, or more than the window after the response before it. A pause
//! longer than the window is a gap block of its own, from the window's length after the last
//! response to the next response. A block is active while the last response is less than the
//! window ago and the block has not ended; the active block has a burn rate (from its first
//! to its last response) and a projection to its end at that rate.

use super::{Loaded, Sum};
use crate::time::format_millis;
use serde_json::{json, Map, Value};

const HOUR_MS: i64 = 3_600_000;

/// One block of one agent, or a gap between two of them.
#[derive(Debug, Clone)]
pub struct Block {
    pub agent: &'static str,
    pub start: i64,
    pub end: i64,
    /// The last response in it; none for a gap.
    pub last: Option<i64>,
    pub first: Option<i64>,
    pub gap: bool,
    pub active: bool,
    pub sum: Sum,
    /// Its models, in the order of their first response.
    pub models: Vec<String>,
}

/// The rate of the active block, from its first to its last response.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Burn {
    /// All tokens (input, output, cache read and write) a minute.
    pub tokens_per_minute: f64,
    /// Input and output tokens a minute (ccusage's indicator).
    pub tokens_per_minute_for_indicator: f64,
    /// `None` when a response's cost is unknown.
    pub cost_per_hour: Option<f64>,
}

impl Block {
    pub fn burn(&self) -> Option<Burn> {
        let minutes = (self.last? - self.first?) as f64 / 60_000.0;
        if self.gap || minutes <= 0.0 {
            return None;
        }
        let t = &self.sum.tokens;
        Some(Burn {
            tokens_per_minute: t.total() as f64 / minutes,
            tokens_per_minute_for_indicator: t.input.saturating_add(t.output) as f64 / minutes,
            cost_per_hour: self.sum.cost.map(|c| c / minutes * 60.0),
        })
    }

    /// The active block's tokens and cost at its end, at its burn rate; with the minutes
    /// left (rounded).
    pub fn projection(&self, now: i64) -> Option<(u64, Option<f64>, u64)> {
        if !self.active {
            return None;
        }
        let burn = self.burn()?;
        let left = ((self.end - now) as f64 / 60_000.0).max(0.0);
        let tokens = self.sum.tokens.total() as f64 + burn.tokens_per_minute * left;
        let cost = match (self.sum.cost, burn.cost_per_hour) {
            (Some(c), Some(h)) => Some(((c + h / 60.0 * left) * 100.0).round() / 100.0),
            _ => None,
        };
        Some((tokens.round() as u64, cost, left.round() as u64))
    }

    pub fn json(&self, now: i64) -> Value {
        let mut m = Map::new();
        let iso = |ms: i64| json!(format_millis(ms.max(0) as u64));
        let id = if self.gap {
            format!("gap-{}", format_millis(self.start.max(0) as u64))
        } else {
            format_millis(self.start.max(0) as u64)
        };
        m.insert("id".into(), json!(id));
        m.insert("agent".into(), json!(self.agent));
        m.insert("startTime".into(), iso(self.start));
        m.insert("endTime".into(), iso(self.end));
        m.insert("actualEndTime".into(), self.last.map_or(Value::Null, iso));
        m.insert("isActive".into(), json!(self.active));
        m.insert("isGap".into(), json!(self.gap));
        m.insert("entries".into(), json!(self.sum.responses));
        m.insert("models".into(), json!(self.models));
        self.sum.json(&mut m);
        let burn = self.burn().filter(|_| self.active).map(|b| {
            json!({
                "tokensPerMinute": b.tokens_per_minute,
                "tokensPerMinuteForIndicator": b.tokens_per_minute_for_indicator,
                "costPerHour": b.cost_per_hour,
            })
        });
        m.insert("burnRate".into(), burn.unwrap_or(Value::Null));
        let projection = self.projection(now).map(|(tokens, cost, left)| {
            json!({"totalTokens": tokens, "totalCost": cost, "remainingMinutes": left})
        });
        m.insert("projection".into(), projection.unwrap_or(Value::Null));
        Value::Object(m)
    }
}

/// The blocks of every agent of `l`'s kept responses that carry a time, cut with a window of
/// `hours`, active as of `now` (Unix milliseconds); in time order, each agent's blocks and
/// gaps in turn.
pub fn blocks(l: &Loaded, hours: f64, now: i64) -> Vec<Block> {
    let window = (hours * HOUR_MS as f64).round() as i64;
    let mut responses: Vec<(&'static str, i64, usize)> = l
        .kept
        .iter()
        .enumerate()
        .filter_map(|(k, &i)| {
            let e = &l.scan.entries[i];
            Some((e.agent.name(), e.time?, k)).filter(|_| e.response)
        })
        .collect();
    responses.sort_by_key(|&(agent, time, k)| (agent, time, k));
    let mut out: Vec<Block> = Vec::new();
    let mut open: Option<Block> = None;
    for (agent, time, k) in responses {
        let e = &l.scan.entries[l.kept[k]];
        if let Some(b) = open.take() {
            let last = b.last.unwrap_or(b.start);
            if b.agent == agent && time - b.start <= window && time - last <= window {
                open = Some(b);
            } else {
                let same_agent = b.agent == agent;
                out.push(close(b, window, now));
                if same_agent && time - last > window {
                    out.push(Block {
                        agent,
                        start: last + window,
                        end: time,
                        last: None,
                        first: None,
                        gap: true,
                        active: false,
                        sum: Sum::zero(),
                        models: Vec::new(),
                    });
                }
            }
        }
        let b = open.get_or_insert_with(|| Block {
            agent,
            start: time.div_euclid(HOUR_MS) * HOUR_MS,
            end: 0,
            last: None,
            first: Some(time),
            gap: false,
            active: false,
            sum: Sum::zero(),
            models: Vec::new(),
        });
        b.sum.add(&e.tokens, l.costs[k]);
        b.last = Some(time);
        let model = l.scan.str(e.model);
        if !b.models.iter().any(|m| m == model) {
            b.models.push(model.to_owned());
        }
    }
    if let Some(b) = open {
        out.push(close(b, window, now));
    }
    // Agents interleaved by time, each one's blocks and gaps in their order: a block by its
    // first response, a gap by the last response before it (a gap starts a window after it,
    // which may be later than the next block's start at the hour).
    out.sort_by_key(|b| {
        let at = if b.gap {
            b.start - window
        } else {
            b.first.unwrap_or(b.start)
        };
        (at, b.agent)
    });
    out
}

fn close(mut b: Block, window: i64, now: i64) -> Block {
    b.end = b.start + window;
    b.active = b.last.is_some_and(|l| now - l < window) && now < b.end;
    b
}

/// Now, in Unix milliseconds.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::usage::scan::{Entry, Scan};
    use crate::usage::{Agent, Tokens};

    const T0: i64 = 1_704_103_200_000; // 2024-01-01T10:00:00Z

    /// A load of Claude responses at these minutes after T0 (+ 30 s into the hour for the
    /// first), each of 1,000 input and 500 output tokens and a cent.
    fn loaded(minutes: &[i64]) -> Loaded {
        let mut scan = Scan::default();
        scan.strings = vec![String::new(), "m".into()];
        for &m in minutes {
            scan.entries.push(Entry {
                agent: Agent::Claude,
                time: Some(T0 + 30_000 + m * 60_000),
                session: 0,
                project: 0,
                model: 1,
                file: 0,
                tokens: Tokens {
                    input: 1000,
                    output: 500,
                    ..Tokens::default()
                },
                cost_usd: Some(0.01),
                response: true,
                turn: false,
            });
        }
        let n = minutes.len();
        Loaded {
            scan,
            kept: (0..n).collect(),
            costs: vec![Some(0.01); n],
            zone: crate::time::Zone::Fixed(0),
            unpriced: Default::default(),
            looked: Vec::new(),
            from_db: false,
        }
    }

    #[test]
    fn a_block_starts_at_the_hour_and_lasts_the_window() {
        let b = blocks(&loaded(&[0, 60, 120]), 5.0, 0);
        assert_eq!(b.len(), 1);
        assert_eq!((b[0].start, b[0].end), (T0, T0 + 5 * HOUR_MS));
        assert_eq!(b[0].sum.responses, 3);
        assert_eq!(b[0].json(0)["id"], "2024-01-01T10:00:00.000Z");
    }

    #[test]
    fn a_response_past_the_window_starts_a_block_and_a_long_pause_is_a_gap() {
        // 5 h 10 min after the block's start, 3 h after the last response: a new block, no
        // gap; then 6 h of silence: a gap from 5 h after the last response.
        let b = blocks(&loaded(&[0, 130, 310, 670]), 5.0, 0);
        let shape: Vec<(bool, usize)> = b
            .iter()
            .map(|b| (b.gap, b.sum.responses as usize))
            .collect();
        assert_eq!(shape, [(false, 2), (false, 1), (true, 0), (false, 1)]);
        assert_eq!(b[1].start, T0 + 5 * HOUR_MS);
        assert_eq!(b[2].start, T0 + 30_000 + 310 * 60_000 + 5 * HOUR_MS);
        assert_eq!(b[2].end, T0 + 30_000 + 670 * 60_000);
        assert_eq!(
            b[2].json(0)["id"],
            format!("gap-{}", format_millis(b[2].start as u64))
        );
    }

    #[test]
    fn the_active_block_has_a_burn_rate_and_a_projection() {
        // Two responses ten minutes apart; now is an hour after the block's start.
        let now = T0 + HOUR_MS;
        let b = blocks(&loaded(&[0, 10]), 5.0, now);
        assert!(b[0].active);
        let burn = b[0].burn().unwrap();
        assert_eq!(burn.tokens_per_minute, 300.0);
        assert_eq!(burn.tokens_per_minute_for_indicator, 300.0);
        assert!((burn.cost_per_hour.unwrap() - 0.12).abs() < 1e-9);
        // 4 h left: 3,000 + 300 × 240 tokens; $0.02 + $0.12 × 4.
        assert_eq!(b[0].projection(now), Some((75_000, Some(0.5), 240)));
        // Five hours after the last response nothing is active.
        let later = T0 + 30_000 + 10 * 60_000 + 5 * HOUR_MS;
        assert!(!blocks(&loaded(&[0, 10]), 5.0, later)[0].active);
        // One response: no rate.
        assert!(blocks(&loaded(&[0]), 5.0, now)[0].burn().is_none());
    }

    #[test]
    fn the_window_is_a_parameter() {
        // An hour and a half apart: past a 1-hour window, with a gap between.
        let gaps: Vec<bool> = blocks(&loaded(&[0, 90]), 1.0, 0)
            .iter()
            .map(|b| b.gap)
            .collect();
        assert_eq!(gaps, [false, true, false]);
        assert_eq!(blocks(&loaded(&[0, 90]), 2.0, 0).len(), 1);
    }
}
