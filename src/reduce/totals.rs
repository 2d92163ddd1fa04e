//! Tokens, cost and context: the accounting rules.
//!
//! * `turn_complete` is authoritative. Its `costUsd`, `modelUsage` and `durationApiMs` are
//!   **running totals** of the agent process (Claude reports `total_cost_usd` and `modelUsage`
//!   for the whole session so far): a turn's share is the increase since the previous report,
//!   and a report lower than the previous one starts a new run (a resumed session in a new
//!   process), whose figures add to the earlier runs'. **Except ACP's, Codex's and OpenCode's**
//!   (providers `acp`, `codex`, `opencode`): ACP's answer to a prompt reports that prompt's own
//!   usage, Codex's `modelUsage` is the turn's own usage under its model, and OpenCode's cost is
//!   its steps' sum, so their figures are the turn's own
//!   and add up ([`crate::event::running_turn_totals`], the one rule `replay` follows too);
//!   where a running `total` counts the same tokens (Codex), they are counted once.
//! * usage_update `costUsd` (ACP) is a running total of the session's cost (ACP's turn_complete
//!   carries none).
//! * usage_update `total` (Codex) is a running total of the session's tokens in the same way.
//! * A turn's tokens are, in this order of preference: its per-model figures (the increase of
//!   the running totals, subagents included; ACP's own), the increase of `total` during the
//!   turn, the turn's own `usage`, or the sum of the per-request usage_update `stepUsage` of
//!   the turn with one value per `messageId` (Claude repeats the same usage on every content
//!   block of a message; the last value of a message counts, once).
//! * A turn's cost is, in this order: the increase of the running cost reported during it,
//!   its turn_complete's own `costUsd`, the sum of its requests' own costs (`stepUsage.cost`),
//!   or, where the wire reports no cost at all (session files), its requests' tokens priced
//!   with the shipped table (`usage`'s prices, request by request, so a long prompt's tier
//!   and the hour-long cache writes count as `usage` counts them).
//! * While a turn runs its tokens are that per-request estimate (or the `total` increase), and
//!   the session's totals include it; `turn_complete` replaces it.
//! * Context use is that of the main agent's last usage_update by
//!   [`crate::event::context_in_use`] (the one definition `replay` shows too): its
//!   `contextTokens` when reported, else the size of the request (input, cache read, cache
//!   creation and output tokens of its `stepUsage`); or the tokens left after a compaction.
//!   The window is the model's (`contextWindow` of usage_update or of the session model's
//!   `modelUsage`).

use super::state::*;
use super::view::{Ev, TokenUsage};
use crate::event::running_turn_totals;

fn tokens(u: &TokenUsage) -> Tokens {
    Tokens {
        input_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
        cache_read_tokens: u.cache_read_tokens,
        cache_creation_tokens: u.cache_creation_tokens,
        reasoning_tokens: u.reasoning_tokens,
    }
}

/// Adds `m` into the list by model name.
fn merge_model(into: &mut Vec<ModelTotals>, m: &ModelTotals) {
    match into.iter_mut().find(|x| x.model == m.model) {
        Some(x) => {
            x.tokens.add(&m.tokens);
            x.cost_usd = add_cost(x.cost_usd, m.cost_usd);
            x.web_search_requests += m.web_search_requests;
            if m.context_window.is_some() {
                x.context_window = m.context_window;
            }
            if m.max_output_tokens.is_some() {
                x.max_output_tokens = m.max_output_tokens;
            }
        }
        None => push_small(into, m.clone()),
    }
}

/// A sum or difference of costs rounded to 1e-10 dollars, which drops the float noise of the
/// arithmetic (converters that sum costs round so too: OpenCode's turns).
pub(crate) fn dollars(x: f64) -> f64 {
    (x * 1e10).round() / 1e10
}

/// The shipped price of one request's tokens (`hour`: the cache written for an hour), for a
/// wire that reports no cost: the figure `usage` gives the same request.
fn priced(model: Option<&str>, t: &Tokens, hour: u64) -> Option<f64> {
    let price = crate::usage::prices::Prices::shipped().find(model?)?;
    Some(price.cost(&crate::usage::Tokens {
        input: t.input_tokens,
        output: t.output_tokens,
        cache_read: t.cache_read_tokens,
        cache_creation: t.cache_creation_tokens,
        cache_creation_1h: hour,
        reasoning: t.reasoning_tokens,
    }))
}

fn sum_tokens(list: &[ModelTotals]) -> Tokens {
    list.iter()
        .fold(Tokens::default(), |acc, m| acc.plus(&m.tokens))
}

impl Account {
    /// The turn's tokens and cost from its `turn_complete`; `model` names the model the turn's
    /// tokens are attributed to when no per-model figures are reported.
    pub fn turn_complete(&mut self, ev: &Ev, model: Option<&str>) -> (Tokens, Option<f64>) {
        let running = running_turn_totals(ev.provider.as_deref().unwrap_or(""));
        let own_cost = match ev.cost_usd {
            Some(c) if running => {
                self.report_cost(c);
                None
            }
            c => c,
        };
        let cost = self.settle_cost(own_cost);
        let mut reported: Vec<ModelTotals> = ev
            .model_usage
            .iter()
            .flat_map(|p| p.0.iter())
            .map(|(name, u)| ModelTotals {
                model: name.to_string(),
                tokens: tokens(&u.tokens()),
                cost_usd: u.cost_usd,
                web_search_requests: u.web_search_requests.unwrap_or(0),
                context_window: u.context_window,
                max_output_tokens: u.max_output_tokens,
            })
            .collect();
        // Kept as `run_models`, one list per session.
        reported.shrink_to_fit();
        let live = self.live_sum();
        let turn_total = self.turn_total.take();
        self.live = Vec::new();
        let model = model.or(self.last_model.as_deref()).map(str::to_owned);
        let t = if !reported.is_empty() && !running {
            // The turn's own per-model figures (ACP's, Codex's): the model attribution of the
            // turn's tokens. Where a running `total` was reported during the turn (Codex's
            // usage_update), the session's tokens count them already: its increase is the
            // turn's, and they are not added again.
            for m in &reported {
                merge_model(&mut self.extra_models, m);
            }
            match turn_total {
                Some(t) => t,
                None => {
                    let t = sum_tokens(&reported);
                    self.extra.add(&t);
                    t
                }
            }
        } else if !reported.is_empty() {
            let reset = self.run_models.iter().any(|old| {
                match reported.iter().find(|n| n.model == old.model) {
                    None => true,
                    Some(n) => {
                        n.tokens.below(&old.tokens)
                            || n.web_search_requests < old.web_search_requests
                            || n.cost_usd.unwrap_or(0.0) < old.cost_usd.unwrap_or(0.0)
                    }
                }
            });
            let before = if reset {
                for m in std::mem::take(&mut self.run_models) {
                    merge_model(&mut self.base_models, &m);
                }
                Tokens::default()
            } else {
                sum_tokens(&self.run_models)
            };
            self.run_models = reported;
            sum_tokens(&self.run_models).minus(&before)
        } else {
            let t = match (turn_total, ev.usage.as_deref()) {
                (Some(t), _) => t,
                (None, Some(u)) => {
                    let t = serde_json::from_str::<TokenUsage>(u.get())
                        .map(|u| tokens(&u))
                        .unwrap_or_default();
                    self.extra.add(&t);
                    t
                }
                (None, None) => {
                    self.extra.add(&live);
                    live
                }
            };
            if let (Some(name), false) = (model, t.is_zero()) {
                merge_model(
                    &mut self.extra_models,
                    &ModelTotals {
                        model: name,
                        tokens: t,
                        ..ModelTotals::default()
                    },
                );
            }
            t
        };
        (t, cost)
    }

    /// The cost of the turn that ends: the increase of the running totals reported during
    /// it, or else `own` (a turn_complete's own cost) or the sum of its requests' own costs,
    /// which then add to the session's.
    fn settle_cost(&mut self, own: Option<f64>) -> Option<f64> {
        let priced = self.turn_priced.take();
        match self.turn_cost.take() {
            Some(c) => Some(c),
            None => {
                let step = own.or_else(|| self.live_cost()).or(priced);
                self.extra_cost = add_cost(self.extra_cost, step).map(dollars);
                step
            }
        }
    }

    /// The sum of the requests' own costs since the last turn_complete, when any was reported.
    fn live_cost(&self) -> Option<f64> {
        self.live
            .iter()
            .fold(None, |acc, l| add_cost(acc, l.cost_usd))
            .map(dollars)
    }

    /// The cost of the open turn so far, as its requests report it.
    pub fn open_turn_cost(&self) -> Option<f64> {
        self.turn_cost
            .or_else(|| self.live_cost())
            .or(self.turn_priced)
    }

    /// The turn's own API time from a turn_complete's `durationApiMs`, a running total of the
    /// run as `costUsd` is (Claude Code adds every request of its process): its increase, or
    /// the whole report when it is lower than the last (a new run). A provider whose figures
    /// are the turn's own (`running` false) reports it as it is.
    pub fn report_api_ms(&mut self, ms: Option<u64>, running: bool) -> Option<u64> {
        let ms = ms?;
        if !running {
            return Some(ms);
        }
        let own = match self.run_api_ms {
            Some(r) if ms >= r => ms - r,
            _ => ms,
        };
        self.run_api_ms = Some(ms);
        Some(own)
    }

    /// A running total of the session's cost (turn_complete or usage_update `costUsd`); its
    /// increase counts for the running turn.
    pub fn report_cost(&mut self, c: f64) {
        let inc = match self.run_cost {
            // Rounded to 1e-10 dollars: the difference of two reports carries float noise.
            Some(r) if c >= r => dollars(c - r),
            Some(r) => {
                self.base_cost += r;
                c
            }
            None => c,
        };
        self.run_cost = Some(c);
        self.turn_cost = Some(self.turn_cost.unwrap_or(0.0) + inc);
    }

    /// A turn ended without `turn_complete` (a new turn began): its tokens and cost are what
    /// is known so far. The estimate is settled here, except where per-model running totals
    /// will report it with the next turn_complete.
    pub fn settle_incomplete(&mut self) -> (Tokens, Option<f64>) {
        let t = match self.turn_total.take() {
            Some(t) => t,
            None => {
                let l = self.live_sum();
                if !self.has_models() {
                    self.extra.add(&l);
                }
                l
            }
        };
        let cost = self.settle_cost(None);
        self.live = Vec::new();
        (t, cost)
    }

    /// The per-request estimate since the last turn_complete.
    fn live_sum(&self) -> Tokens {
        self.live
            .iter()
            .fold(Tokens::default(), |acc, l| acc.plus(&l.tokens))
    }

    /// The open turn's tokens so far.
    pub fn open_turn_tokens(&self) -> Tokens {
        self.turn_total.unwrap_or_else(|| self.live_sum())
    }

    /// Whether per-model running totals were ever reported.
    fn has_models(&self) -> bool {
        !self.run_models.is_empty() || !self.base_models.is_empty()
    }

    /// The session's tokens, cost and per-model figures.
    pub fn totals(&self) -> (Tokens, Option<f64>, Vec<ModelTotals>) {
        let mut models = self.base_models.clone();
        for m in &self.run_models {
            merge_model(&mut models, m);
        }
        let mut t = if self.has_models() {
            sum_tokens(&models)
        } else {
            self.base_total.plus(&self.run_total.unwrap_or_default())
        };
        t.add(&self.extra);
        if self.turn_total.is_none() {
            t.add(&self.live_sum());
        }
        for m in &self.extra_models {
            merge_model(&mut models, m);
        }
        let mut cost = self.run_cost.map(|r| self.base_cost + r);
        let live = self
            .live_cost()
            .or(self.turn_priced)
            .filter(|_| self.turn_cost.is_none());
        if self.extra_cost.is_some() || live.is_some() {
            cost = add_cost(add_cost(cost, self.extra_cost), live).map(dollars);
        }
        (t, cost, models)
    }
}

impl State {
    pub(super) fn usage_update(&mut self, s: usize, ev: &Ev, seq: u64) {
        let session_model = self.tree.sessions[s].model.as_deref();
        let acc = &mut self.cursor.sessions[s].account;
        if ev.model.is_some() {
            acc.last_model = ev.model.as_deref().map(str::to_owned);
        }
        if let Some(c) = ev.cost_usd {
            acc.report_cost(c);
        }
        let step = ev.step_usage.unwrap_or_default();
        if let Some(total) = &ev.total {
            let new = tokens(total);
            let inc = match acc.run_total {
                Some(old) if !new.below(&old) => new.minus(&old),
                Some(old) => {
                    acc.base_total.add(&old);
                    new
                }
                None => new,
            };
            acc.run_total = Some(new);
            acc.turn_total = Some(acc.turn_total.unwrap_or_default().plus(&inc));
            if ev.cost_usd.is_none() && !inc.is_zero() {
                acc.turn_priced = add_cost(
                    acc.turn_priced,
                    priced(acc.last_model.as_deref().or(session_model), &inc, 0),
                );
            }
        } else if !step.is_empty() {
            let t = Tokens {
                input_tokens: step.input_tokens.unwrap_or(0),
                output_tokens: step.output_tokens.unwrap_or(0),
                cache_read_tokens: step.cache_read_input_tokens.unwrap_or(0),
                cache_creation_tokens: step.cache_creation_input_tokens.unwrap_or(0),
                reasoning_tokens: 0,
            };
            let hour = step
                .cache_creation
                .and_then(|c| c.ephemeral_1h_input_tokens)
                .unwrap_or(0);
            let cost = step
                .cost
                .or_else(|| priced(acc.last_model.as_deref().or(session_model), &t, hour));
            let id = ev.message_id.as_deref();
            // Usage of one message repeats on its block lines: the last value counts, once.
            // Such lines are adjacent, so the search from the end is short.
            match id.and_then(|id| {
                acc.live
                    .iter_mut()
                    .rev()
                    .find(|l| l.message_id.as_deref() == Some(id))
            }) {
                Some(l) => {
                    l.tokens = t;
                    l.cost_usd = cost.or(l.cost_usd);
                }
                None => push_small(
                    &mut acc.live,
                    LiveUsage {
                        message_id: id.map(str::to_owned),
                        tokens: t,
                        cost_usd: cost,
                    },
                ),
            }
        }
        let ctx = &mut self.totals.sessions[s].context;
        let used = crate::event::context_in_use(
            ev.context_tokens,
            step.input_tokens,
            step.cache_read_input_tokens,
            step.cache_creation_input_tokens,
            step.output_tokens,
        );
        if let (None, Some(used)) = (ev.parent(), used) {
            let c = ctx.get_or_insert_with(Context::default);
            c.used_tokens = used;
            c.seq = seq;
        }
        if let Some(w) = ev.context_window {
            let c = ctx.get_or_insert_with(|| Context {
                seq,
                ..Context::default()
            });
            c.window_tokens = Some(w);
        }
    }

    /// The context window of the session's model from turn_complete `modelUsage` (or of the
    /// only model reported).
    pub(super) fn window_from_models(&mut self, s: usize, ev: &Ev, seq: u64) {
        let Some(p) = &ev.model_usage else {
            return;
        };
        let model = self.tree.sessions[s].model.as_deref();
        let pick =
            p.0.iter()
                .find(|(name, _)| Some(name.as_ref()) == model)
                .or_else(|| if p.0.len() == 1 { p.0.first() } else { None });
        if let Some(w) = pick.and_then(|(_, u)| u.context_window) {
            let c = self.totals.sessions[s]
                .context
                .get_or_insert_with(|| Context {
                    seq,
                    ..Context::default()
                });
            c.window_tokens = Some(w);
        }
    }

    /// Fills in what is derived: each session's tokens, cost and models, running turns'
    /// estimates, and the totals of all sessions. Call before writing the state.
    pub fn finish(&mut self) {
        let mut all = Counts::default();
        let mut models: Vec<ModelTotals> = Vec::new();
        for (s, st) in self.totals.sessions.iter_mut().enumerate() {
            let acc = &self.cursor.sessions[s].account;
            let (t, cost, m) = acc.totals();
            st.counts.tokens = t;
            st.counts.cost_usd = cost;
            st.models = m;
            for x in &st.models {
                merge_model(&mut models, x);
            }
            all.add(&st.counts);
            if let Some(k) = self.pending.sessions[s].turn {
                let turn = &mut self.tree.sessions[s].turns[k as usize - 1];
                turn.tokens = acc.open_turn_tokens();
                if acc.turn_cost.is_none() {
                    turn.cost_usd = acc.open_turn_cost();
                }
            }
        }
        self.totals.all = all;
        self.totals.models = models;
    }
}
