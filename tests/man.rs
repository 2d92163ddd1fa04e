//! The man page and the shell completions are generated from the clap definitions
//! (`insights::cli::Cli`) and committed. `man/insights.1` is rendered by clap_mangen (title,
//! NAME, each command with its options, OPTIONS) around the hand-written sections in
//! `man/sections/`; `completions/` holds clap_complete's scripts for bash, zsh and fish. These
//! tests fail when a committed file differs from a fresh one, and
//! `BLESS=1 cargo test --locked --test integration man::` rewrites them.

use crate::util::{difference, root};
use clap::{Arg, Command, CommandFactory};
use clap_mangen::roff::Roff;
use clap_mangen::Man;
use insights::cli::Cli;
use std::collections::BTreeSet;
use std::path::Path;

const PAGE: &str = "man/insights.1";
const SECTIONS: &str = "man/sections";

/// The first lines of the page, a roff comment.
const NOTE: &str = "\
.\\\" Generated from the clap definitions (src/cli.rs) and man/sections/ by tests/man.rs:
.\\\" edit those, then run `BLESS=1 cargo test --locked --test integration man::`.
";

/// The hand-written sections after OPTIONS: heading and file in `man/sections/`, in order.
const AFTER_OPTIONS: [(&str, &str); 6] = [
    ("OUTPUT FORMAT", "output-format.roff"),
    ("DETECTION", "detection.roff"),
    ("EXIT STATUS", "exit-status.roff"),
    ("ENVIRONMENT", "environment.roff"),
    ("EXAMPLES", "examples.roff"),
    ("SEE ALSO", "see-also.roff"),
];

/// The completion scripts: shell and file.
const COMPLETIONS: [(clap_complete::Shell, &str); 3] = [
    (clap_complete::Shell::Bash, "completions/insights.bash"),
    (clap_complete::Shell::Zsh, "completions/_insights"),
    (clap_complete::Shell::Fish, "completions/insights.fish"),
];

/// The man page, and the files of `man/sections/` it was made with.
fn man_page() -> (String, BTreeSet<String>) {
    let mut used = BTreeSet::new();
    let mut section = |rel: &str| -> String {
        used.insert(rel.to_owned());
        let path = root().join(SECTIONS).join(rel);
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            !text.lines().any(|l| l.starts_with(".SH ")),
            "{SECTIONS}/{rel}: the generator writes the .SH headings"
        );
        text
    };

    let mut cli = Cli::command();
    cli.build();
    let man = Man::new(cli.clone());
    let mut page = String::from(NOTE);
    // roff's preamble, once: every piece clap_mangen renders starts with it (see `rendered`).
    page += &Roff::new().render();
    // Written here rather than by `render_title`, which drops an empty argument and so would
    // shift the source into the date's place. The date stays empty: the page changes with the
    // program, not with the calendar.
    page += &format!(
        ".TH INSIGHTS 1 \"\" \"insights {}\" \"User Commands\"\n",
        cli.get_version().expect("a version")
    );
    page += ".nh\n"; // no hyphenation: option names stay whole
    page += &from_help(&rendered(|w| man.render_name_section(w)));

    let commands: Vec<&Command> = cli.get_subcommands().filter(|c| !c.is_hide_set()).collect();
    page += ".SH SYNOPSIS\n";
    let top = usage(&mut cli.clone());
    let top = top
        .strip_suffix(" [\\fICOMMAND\\fR]\n")
        .expect("the usage ends with [COMMAND]");
    page += top;
    page += "\n";
    for sub in &commands {
        page += ".br\n";
        page += &usage(&mut own(sub, &cli));
    }
    page += ".SH DESCRIPTION\n";
    page += &section("description.roff");

    page += ".SH COMMANDS\n";
    for sub in &commands {
        let name = sub.get_name();
        let own = own(sub, &cli);
        page += &format!(".SS {name}\n");
        page += &usage(&mut own.clone());
        page += ".PP\n";
        let man = Man::new(own.clone());
        page += &from_help(&body(rendered(|w| man.render_description_section(w))));
        if name == "convert" {
            // `insights` without a command takes the same options: they are under OPTIONS
            // (man/sections/commands/convert.roff says so).
            let names = |c: &Command| -> BTreeSet<String> {
                c.get_arguments()
                    .filter(|a| !a.is_hide_set() && !a.is_global_set())
                    .filter(|a| !["help", "version"].contains(&a.get_id().as_str()))
                    .map(|a| a.get_id().to_string())
                    .collect()
            };
            assert_eq!(
                names(&own),
                names(&cli),
                "convert's options are the top level's"
            );
        } else if own.get_arguments().any(|a| !a.is_hide_set()) {
            page += &from_help(&body(rendered(|w| man.render_options_section(w))));
        }
        let extra = format!("commands/{name}.roff");
        if root().join(SECTIONS).join(&extra).exists() {
            page += &section(&extra);
        }
    }

    page += ".SH OPTIONS\n";
    page += &section("options.roff");
    page += &from_help(&body(rendered(|w| man.render_options_section(w))));

    for (heading, file) in AFTER_OPTIONS {
        page += &format!(".SH {heading}\n");
        page += &section(file);
    }
    (page, used)
}

/// Subcommand `sub` of the built `cli` as the man page shows it: without the global options
/// and `--help`, and without the values of an option whose values OPTIONS lists (`--from`'s
/// providers), so that each is listed once.
fn own(sub: &Command, cli: &Command) -> Command {
    let values = |a: &Arg| -> Vec<String> {
        a.get_possible_values()
            .iter()
            .map(|v| v.get_name().to_owned())
            .collect()
    };
    sub.clone().mut_args(|a| {
        if a.is_global_set() || a.get_id() == "help" {
            return a.hide(true);
        }
        let listed = a.get_long().is_some()
            && !values(&a).is_empty()
            && cli
                .get_arguments()
                .any(|t| t.get_long() == a.get_long() && values(t) == values(&a));
        if !listed {
            return a;
        }
        let help = a.get_long_help().or(a.get_help()).map(|h| h.to_string());
        let note = format!(
            "The values are those of --{} under OPTIONS.",
            a.get_long().unwrap()
        );
        a.hide_possible_values(true)
            .long_help(format!("{}\n\n{note}", help.unwrap_or_default()))
    })
}

/// What `render` writes, without roff's preamble (the page has it once).
fn rendered(render: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>) -> String {
    let mut buf = Vec::new();
    render(&mut buf).expect("render into memory");
    let text = String::from_utf8(buf).expect("UTF-8 roff");
    text.strip_prefix(&Roff::new().render())
        .expect("clap_mangen's output starts with roff's preamble")
        .to_owned()
}

/// A rendered section without its `.SH` line: the page lays out its own headings.
fn body(section: String) -> String {
    let (heading, rest) = section.split_once('\n').expect("a heading line");
    assert!(heading.starts_with(".SH "), "{heading:?}");
    assert!(
        !rest.lines().any(|l| l.starts_with(".SH ")),
        "a help heading on an option makes a section the page does not lay out:\n{rest}"
    );
    rest.to_owned()
}

/// The usage line of `cmd`, as roff: the command in bold, the placeholders in italics.
fn usage(cmd: &mut Command) -> String {
    let text = cmd.render_usage().to_string();
    let text = text.strip_prefix("Usage: ").unwrap_or(&text).trim();
    let bin = cmd.get_bin_name().unwrap_or(cmd.get_name()).to_owned();
    let rest = text
        .strip_prefix(bin.as_str())
        .unwrap_or_else(|| panic!("{text:?} does not start with {bin:?}"));
    let mut out = format!("\\fB{}\\fR", escape(&bin));
    let mut word = String::new();
    for c in rest.chars().chain([' ']) {
        if c.is_ascii_uppercase() || (c == '_' && !word.is_empty()) {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            out += &format!("\\fI{word}\\fR");
            word.clear();
        }
        if c != ' ' || !out.ends_with(' ') {
            out += &escape(&c.to_string());
        }
    }
    out.truncate(out.trim_end().len());
    out + "\n"
}

/// `text` with roff's special characters escaped, for a text line.
fn escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace('-', "\\-")
}

/// Roff that clap_mangen made of help texts, touched up: what they mark as `code` is set in
/// bold (not in control lines, nor in lines with an odd number of backticks), and characters
/// outside ASCII are written as escapes, which every roff reads whatever its input encoding.
fn from_help(roff: &str) -> String {
    let mut out = String::with_capacity(roff.len());
    let roff: String = roff
        .chars()
        .map(|c| match c {
            c if c.is_ascii() => c.to_string(),
            c => format!("\\[u{:04X}]", c as u32),
        })
        .collect();
    for line in roff.lines() {
        let ticks = line.matches('`').count();
        if line.starts_with('.') || ticks == 0 || ticks % 2 == 1 {
            out += line;
        } else {
            for (i, part) in line.split('`').enumerate() {
                if i % 2 == 1 {
                    out += &format!("\\fB{part}\\fR");
                } else {
                    out += part;
                }
            }
        }
        out += "\n";
    }
    out
}

/// Compares `actual` with the committed file `rel`, or rewrites it under `BLESS`.
fn check_file(rel: &str, actual: &str) -> Result<(), String> {
    let path = root().join(rel);
    if std::env::var_os("BLESS").is_some() {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        return std::fs::write(&path, actual).map_err(|e| format!("{rel}: {e}"));
    }
    let expected = std::fs::read_to_string(&path).map_err(|e| {
        format!("{rel}: {e} (BLESS=1 cargo test --locked --test integration man:: writes it)")
    })?;
    match difference(rel, &expected, actual) {
        Some(d) => Err(format!(
            "{d}\n{rel} is generated: BLESS=1 cargo test --locked --test integration man:: \
             rewrites it"
        )),
        None => Ok(()),
    }
}

#[test]
fn man_page_is_generated_from_the_cli_and_sections() {
    let (page, used) = man_page();
    if let Err(e) = check_file(PAGE, &page) {
        panic!("\n{e}");
    }
    let mut files = BTreeSet::new();
    collect(&root().join(SECTIONS), "", &mut files);
    let unused: Vec<_> = files.difference(&used).collect();
    assert!(
        unused.is_empty(),
        "{SECTIONS}: {unused:?} are not in the page (a command's file is \
         commands/<command>.roff)"
    );
}

/// The paths of the files below `dir`, relative to it.
fn collect(dir: &Path, prefix: &str, out: &mut BTreeSet<String>) {
    for e in std::fs::read_dir(dir).expect("read man/sections") {
        let e = e.expect("an entry");
        let name = format!("{prefix}{}", e.file_name().to_string_lossy());
        if e.path().is_dir() {
            collect(&e.path(), &format!("{name}/"), out);
        } else {
            out.insert(name);
        }
    }
}

#[test]
fn completions_are_generated_from_the_cli() {
    let mut failures = Vec::new();
    for (shell, rel) in COMPLETIONS {
        let mut script = Vec::new();
        clap_complete::generate(shell, &mut Cli::command(), "insights", &mut script);
        let script = String::from_utf8(script).expect("UTF-8 script");
        if let Err(e) = check_file(rel, &script) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
}

/// Every rule of `validate` is described, with its level, in the hand-written list.
#[test]
fn the_man_page_describes_every_validate_rule() {
    use insights::validate::rules::Rule;
    let rel = format!("{SECTIONS}/commands/validate.roff");
    let text = std::fs::read_to_string(root().join(&rel)).expect("the rules");
    let entries: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with(".BR ") && l.ends_with(")\""))
        .collect();
    let expected: Vec<String> = Rule::ALL
        .iter()
        .map(|r| format!(".BR {} \" ({})\"", escape(r.id()), r.level().as_str()))
        .collect();
    assert_eq!(
        entries, expected,
        "{rel}: one entry per rule, in Rule::ALL's order"
    );
}
