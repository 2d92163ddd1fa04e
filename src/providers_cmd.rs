//! `insights providers`: the capability matrix of every registered provider.
//!
//! The table is Markdown, so the README carries it verbatim (a test compares the two):
//! one row per capability of the adapter contract, one column per provider, by name.

use crate::providers::{Provider, PROVIDERS};
use anyhow::Context;
use serde_json::{json, Map, Value};
use std::io::Write;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print the matrix as a JSON array: one object per provider with its `name`, `about` and
    /// `capabilities`.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let text = if args.json { json_text() } else { table() };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .context("cannot write to standard output")?;
    Ok(ExitCode::SUCCESS)
}

/// The providers, by name.
fn providers() -> Vec<&'static Provider> {
    let mut v: Vec<&Provider> = PROVIDERS.iter().collect();
    v.sort_by_key(|p| p.name);
    v
}

/// The matrix as a Markdown table with padded columns.
pub fn table() -> String {
    let provs = providers();
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut header = vec!["capability".to_owned()];
    header.extend(provs.iter().map(|p| format!("`{}`", p.name)));
    rows.push(header);
    for (i, (label, _, _)) in provs[0].caps.entries().iter().enumerate() {
        let mut row = vec![label.to_string()];
        row.extend(provs.iter().map(|p| {
            let yes = p.caps.entries()[i].2;
            (if yes { "yes" } else { "no" }).to_owned()
        }));
        rows.push(row);
    }
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|c| rows.iter().map(|r| r[c].len()).max().unwrap_or(0))
        .collect();
    let line = |cells: &[String]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        format!("| {} |\n", padded.join(" | "))
    };
    let mut out = line(&rows[0]);
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    out.push_str(&line(&rule));
    for r in &rows[1..] {
        out.push_str(&line(r));
    }
    out
}

fn json_text() -> String {
    let list: Vec<Value> = providers()
        .into_iter()
        .map(|p| {
            let caps: Map<String, Value> = p
                .caps
                .entries()
                .iter()
                .map(|(_, key, v)| (key.to_string(), Value::Bool(*v)))
                .collect();
            json!({ "name": p.name, "about": p.about, "capabilities": caps })
        })
        .collect();
    let mut s = serde_json::to_string_pretty(&list).expect("JSON of plain values");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_has_a_row_per_capability_and_a_column_per_provider() {
        let t = table();
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 2 + 14);
        for p in PROVIDERS {
            assert!(lines[0].contains(&format!("`{}`", p.name)));
        }
        let cells = lines[2].matches('|').count();
        assert_eq!(cells, PROVIDERS.len() + 2);
    }

    #[test]
    fn json_lists_every_provider() {
        let v: Value = serde_json::from_str(&json_text()).unwrap();
        assert_eq!(v.as_array().unwrap().len(), PROVIDERS.len());
        assert_eq!(v[0]["capabilities"].as_object().unwrap().len(), 14);
    }
}
