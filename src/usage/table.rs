//! Aligned text tables for `usage` and `sessions`: key columns left, numbers right.

pub use crate::replay::text::thousands;

/// A cost in dollars with cents, or `?` when unknown.
pub fn dollars(c: Option<f64>) -> String {
    match c {
        Some(c) if c > 0.0 && c < 0.005 => "<0.01".to_owned(),
        Some(c) => {
            let cents = (c * 100.0).round() as u64;
            format!("{}.{:02}", thousands(cents / 100), cents % 100)
        }
        None => "?".to_owned(),
    }
}

/// The table as text, the columns where `right` says so aligned right; a rule under the
/// header and above the footer.
pub fn render(
    head: &[String],
    right: &[bool],
    rows: &[Vec<String>],
    foot: Option<&Vec<String>>,
) -> String {
    let width = |s: &str| s.chars().count();
    let mut w: Vec<usize> = head.iter().map(|h| width(h)).collect();
    for r in rows.iter().chain(foot) {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(width(c));
        }
    }
    let line = |r: &[String]| {
        let cells: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let pad = " ".repeat(w[i] - width(c));
                if right.get(i).copied().unwrap_or(false) {
                    format!("{pad}{c}")
                } else {
                    format!("{c}{pad}")
                }
            })
            .collect();
        let mut s = cells.join("  ");
        s.truncate(s.trim_end().len());
        s.push('\n');
        s
    };
    let rule = {
        let mut s = w
            .iter()
            .map(|&n| "-".repeat(n))
            .collect::<Vec<_>>()
            .join("  ");
        s.push('\n');
        s
    };
    let mut out = line(head);
    out.push_str(&rule);
    for r in rows {
        out.push_str(&line(r));
    }
    if let Some(f) = foot {
        out.push_str(&rule);
        out.push_str(&line(f));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_as_people_write_them() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(dollars(Some(1234.567)), "1,234.57");
        assert_eq!(dollars(Some(0.001)), "<0.01");
        assert_eq!(dollars(Some(0.0)), "0.00");
        assert_eq!(dollars(None), "?");
    }

    #[test]
    fn keys_left_numbers_right() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let t = render(
            &s(&["day", "input"]),
            &[false, true],
            &[s(&["2026-11-26", "1,000"])],
            Some(&s(&["total", "1,000"])),
        );
        assert_eq!(
            t,
            "day         input\n----------  -----\n2026-11-26  1,000\n----------  -----\ntotal       1,000\n"
        );
    }
}
