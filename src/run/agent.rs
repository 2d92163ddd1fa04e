//! The agent's process and the threads that read for the loop: the agent's standard output
//! and `insights run`'s own standard input, a line at a time, into one channel.

use crate::command::{Command, CommandError};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::Sender;

/// What the loop hears, in the order it happened.
pub enum Heard {
    /// A command line (its number on standard input), read and checked.
    Command(u64, Result<Command, CommandError>),
    /// Standard input has ended.
    CommandsEnd,
    /// A line the agent wrote, without its line break.
    Line(Vec<u8>),
    /// The agent closed its output (it has ended, or is ending).
    AgentEnd,
}

/// The agent's process.
pub struct Agent {
    pub child: Child,
    /// Its standard input; `None` for a one-shot CLI, and once closed.
    pub stdin: Option<ChildStdin>,
}

impl Agent {
    /// Starts `argv` in its own process group (a terminal's Ctrl-C reaches `insights run`,
    /// which decides what the agent gets), its standard error shared with ours, its output
    /// read into `tx`. `talks`: the agent reads our lines on its standard input; else it gets
    /// none.
    pub fn start(argv: &[String], talks: bool, tx: Sender<Heard>) -> std::io::Result<Agent> {
        let (prog, args) = argv
            .split_first()
            .ok_or_else(|| std::io::Error::other("no agent command line"))?;
        let mut cmd = std::process::Command::new(prog);
        cmd.args(args)
            .stdin(if talks { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd.spawn()?;
        let stdin = child.stdin.take();
        if let Some(out) = child.stdout.take() {
            std::thread::spawn(move || read_lines(out, tx));
        }
        Ok(Agent { child, stdin })
    }

    /// Writes one line (and its line break) to the agent at once.
    pub fn send(&mut self, line: &str) -> std::io::Result<()> {
        let Some(w) = self.stdin.as_mut() else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "the agent's input is closed",
            ));
        };
        let mut buf = Vec::with_capacity(line.len() + 1);
        buf.extend_from_slice(line.as_bytes());
        buf.push(b'\n');
        w.write_all(&buf)?;
        w.flush()
    }

    /// Closes the agent's input: the end of the conversation, for the protocols that end so.
    pub fn close_input(&mut self) {
        self.stdin = None;
    }

    /// Sends signal `signo` to the agent (SIGINT for a one-shot CLI's interrupt).
    pub fn signal(&mut self, signo: i32) {
        #[cfg(unix)]
        // SAFETY: kill(2) on the child's pid, which has not been waited for.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, signo);
        }
        #[cfg(not(unix))]
        let _ = (signo, self.child.kill());
    }
}

/// Reads `r` a line at a time into `tx` until it ends, then says so.
fn read_lines(r: impl Read, tx: Sender<Heard>) {
    let mut r = BufReader::with_capacity(64 * 1024, r);
    loop {
        let mut line = Vec::new();
        match r.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                if line.last() == Some(&b'\n') {
                    line.pop();
                    if line.last() == Some(&b'\r') {
                        line.pop();
                    }
                }
                if tx.send(Heard::Line(line)).is_err() {
                    return;
                }
            }
        }
    }
    let _ = tx.send(Heard::AgentEnd);
}

/// Reads commands from `r` (standard input) into `tx`, each checked, until it ends.
pub fn read_commands(r: impl Read + Send + 'static, tx: Sender<Heard>) {
    std::thread::spawn(move || {
        let mut r = BufReader::new(r);
        let mut n = 0u64;
        loop {
            let mut line = Vec::new();
            match r.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    n += 1;
                    if line.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    let c = crate::command::parse(&line);
                    if tx.send(Heard::Command(n, c)).is_err() {
                        return;
                    }
                }
            }
        }
        let _ = tx.send(Heard::CommandsEnd);
    });
}
