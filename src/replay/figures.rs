//! A turn's figures as `reduce` counts them: the replay feeds every event to a
//! [`Reducer`] as well, and a footer shows the tokens and cost of the turn the reducer closed
//! (with the turn's subagents, from each step's usage when the agent reports no turn total, as in
//! its own session files), so that `replay`, `reduce`, `sessions` and `usage` give one number for
//! one conversation.

use crate::reduce::state::{State, Tokens};
use crate::reduce::view::Ev;
use crate::reduce::Reducer;
use serde_json::Value;

pub struct Figures {
    red: Reducer,
}

impl Default for Figures {
    fn default() -> Self {
        Figures {
            red: Reducer::new(State::new(), None),
        }
    }
}

/// What the reducer counted for a turn that ended.
pub struct TurnFigures {
    pub tokens: Tokens,
    pub cost: Option<f64>,
}

impl Figures {
    /// Feeds one event; events the reducer cannot read change nothing.
    pub fn feed(&mut self, ev: &Value) {
        if let Ok(line) = serde_json::to_string(ev) {
            self.feed_line(&line);
        }
    }

    /// Feeds one event as its line (what the replay reads: no second serialization).
    pub fn feed_line(&mut self, line: &str) {
        let mut e = Ev::default();
        if e.read(line).is_ok() {
            self.red.feed(&mut e);
        }
    }

    /// The figures of the turn of `session` that the event fed last ended, if it ended one.
    pub fn ended(&self, session: &str) -> Option<TurnFigures> {
        let st = &self.red.state;
        let turn = st.turn_ended_at(session, st.last_seq)?;
        Some(TurnFigures {
            tokens: turn.tokens.clone(),
            cost: turn.cost_usd,
        })
    }
}
