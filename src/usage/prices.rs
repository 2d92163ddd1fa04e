//! The price table: dollars per million tokens by model, shipped as `data/prices.json` and
//! never fetched at run time. `--prices FILE` adds to it or overrides it, model by model.

use super::Tokens;
use anyhow::{anyhow, Context};
use serde::Deserialize;
use std::collections::HashMap;
use std::path::Path;

/// The table shipped with the program.
const SHIPPED: &str = include_str!("../../data/prices.json");

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    date: Option<String>,
    #[serde(default)]
    #[allow(dead_code)]
    unit: Option<String>,
    #[serde(default)]
    #[allow(dead_code)]
    about: Option<String>,
    #[serde(default)]
    #[allow(dead_code)]
    sources: HashMap<String, String>,
    models: Vec<Entry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    names: Vec<String>,
    #[serde(flatten)]
    base: Rates,
    /// Prompts longer than this many tokens are billed at `tier` as a whole.
    above: Option<u64>,
    tier: Option<Rates>,
    #[allow(dead_code)]
    source: Option<String>,
}

/// Dollars per million tokens of each kind.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Rates {
    input: f64,
    output: f64,
    /// Cached input read; input's price where the table gives none.
    cache_read: Option<f64>,
    /// Cache written for five minutes (Anthropic), input's price where none is given.
    cache_write: Option<f64>,
    /// Cache written for an hour (Anthropic).
    cache_write1h: Option<f64>,
}

#[derive(Debug, Clone, Copy)]
pub struct Price {
    base: Rates,
    tier: Option<(u64, Rates)>,
}

/// Prices by normalized model name.
#[derive(Debug, Default)]
pub struct Prices {
    by_name: HashMap<String, Price>,
    /// The shipped table's date, for `--help` and the README.
    pub date: String,
}

impl Prices {
    /// The shipped table, then `extra` (a file of the same shape) over it.
    pub fn load(extra: Option<&Path>) -> anyhow::Result<Prices> {
        let mut p = Prices::default();
        p.add(SHIPPED)
            .map_err(|e| anyhow!("data/prices.json: {e}"))?;
        if let Some(path) = extra {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            let date = std::mem::take(&mut p.date);
            p.add(&text)
                .with_context(|| format!("{}: not a price table", path.display()))?;
            p.date = date;
        }
        Ok(p)
    }

    fn add(&mut self, text: &str) -> anyhow::Result<()> {
        let file: File = serde_json::from_str(text)?;
        for e in file.models {
            let price = Price {
                base: e.base,
                tier: match (e.above, e.tier) {
                    (Some(n), Some(t)) => Some((n, t)),
                    (None, None) => None,
                    _ => return Err(anyhow!("`above` and `tier` go together")),
                },
            };
            for n in e.names {
                self.by_name.insert(normalize(&n).to_owned(), price);
            }
        }
        self.date = file.date.unwrap_or_default();
        Ok(())
    }

    /// The shipped table, read once: for commands that price tokens the agent gave no cost
    /// for and take no `--prices` (`reduce`, `replay`).
    pub fn shipped() -> &'static Prices {
        static SHIPPED_TABLE: std::sync::OnceLock<Prices> = std::sync::OnceLock::new();
        SHIPPED_TABLE.get_or_init(|| {
            let mut p = Prices::default();
            // The table is part of the program; a test loads it, so this cannot fail.
            let _ = p.add(SHIPPED);
            p
        })
    }

    /// The price of a model, by its name as the agent wrote it.
    pub fn find(&self, model: &str) -> Option<&Price> {
        self.by_name.get(normalize(model))
    }
}

impl Price {
    /// The cost of one response's tokens in dollars. A tier applies to the whole response
    /// when its prompt (input, cache read and cache write) is longer than the tier's bound.
    pub fn cost(&self, t: &Tokens) -> f64 {
        let prompt = t.input + t.cache_read + t.cache_creation;
        let r = match self.tier {
            Some((above, tier)) if prompt > above => tier,
            _ => self.base,
        };
        let write5m = t.cache_creation.saturating_sub(t.cache_creation_1h);
        let per_token = t.input as f64 * r.input
            + t.output as f64 * r.output
            + t.cache_read as f64 * r.cache_read.unwrap_or(r.input)
            + write5m as f64 * r.cache_write.unwrap_or(r.input)
            + t.cache_creation_1h as f64 * r.cache_write1h.unwrap_or(2.0 * r.input);
        per_token / 1e6
    }
}

/// A model name without what tells only where it was served or when it was snapshotted:
/// a provider prefix (`anthropic/`, `models/`, …) and a date suffix (`-20250929`,
/// `@20250929`).
fn normalize(model: &str) -> &str {
    let mut m = model.rsplit('/').next().unwrap_or(model);
    for sep in ['-', '@'] {
        if let Some((head, tail)) = m.rsplit_once(sep) {
            if tail.len() == 8 && tail.bytes().all(|b| b.is_ascii_digit()) {
                m = head;
            }
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(input: u64, output: u64, read: u64, write: u64) -> Tokens {
        Tokens {
            input,
            output,
            cache_read: read,
            cache_creation: write,
            ..Tokens::default()
        }
    }

    #[test]
    fn the_shipped_table_loads_and_names_are_normalized() {
        let p = Prices::load(None).unwrap();
        assert!(!p.date.is_empty());
        assert!(p.find("claude-sonnet-4-5-20250929").is_some());
        assert!(p.find("anthropic/claude-opus-4-8").is_some());
        assert!(p.find("gpt-5.5").is_some());
        // No prefix matching: a new model is unpriced, not priced as an older one.
        assert!(p.find("gpt-5.9").is_none());
        assert!(p.find("<synthetic>").is_none());
    }

    #[test]
    fn cost_per_kind_of_token() {
        let p = Prices::load(None).unwrap();
        let opus = p.find("claude-opus-4-8").unwrap();
        // 1M of each kind: 5 + 25 + 0.5 + 6.25.
        let c = opus.cost(&tokens(1_000_000, 1_000_000, 1_000_000, 1_000_000));
        assert!((c - 36.75).abs() < 1e-9, "{c}");
        let mut t = tokens(0, 0, 0, 1_000_000);
        t.cache_creation_1h = 1_000_000;
        assert!((opus.cost(&t) - 10.0).abs() < 1e-9);
    }

    #[test]
    fn a_long_prompt_is_billed_at_the_tier_as_a_whole() {
        let p = Prices::load(None).unwrap();
        let sonnet = p.find("claude-sonnet-4-5").unwrap();
        let short = sonnet.cost(&tokens(100_000, 1_000, 100_000, 0));
        assert!((short - (0.3 + 0.015 + 0.03)).abs() < 1e-9, "{short}");
        let long = sonnet.cost(&tokens(100_000, 1_000, 100_001, 0));
        assert!((long - (0.6 + 0.0225 + 0.0600006)).abs() < 1e-9, "{long}");
    }

    #[test]
    fn a_prices_file_overrides_model_by_model() {
        let dir = std::env::temp_dir().join(format!("insights-prices-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("p.json");
        std::fs::write(
            &f,
            r#"{"models":[{"names":["gpt-5.5"],"input":1,"output":2},{"names":["my-model"],"input":1,"output":1}]}"#,
        )
        .unwrap();
        let p = Prices::load(Some(&f)).unwrap();
        assert!((p.find("gpt-5.5").unwrap().cost(&tokens(1_000_000, 0, 0, 0)) - 1.0).abs() < 1e-9);
        assert!(p.find("my-model").is_some());
        assert!(p.find("claude-opus-4-8").is_some());
        std::fs::write(&f, r#"{"models":[{"names":["x"],"input":1}]}"#).unwrap();
        assert!(Prices::load(Some(&f)).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
