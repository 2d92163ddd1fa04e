//! The loop of `insights run`: commands in, the agent's protocol out, events of both
//! directions on standard output.
//!
//! Order (the command language's promise): commands apply in the order given. A
//! `send_message` waits until the agent is idle; a `permission_response` without `requestId`
//! waits for the next request (and is an error once the turn has ended without one); the
//! others apply as soon as the agent has finished its handshake. `interrupt` and `kill` act at
//! once, ahead of the queue. A command that cannot be carried out is an `error` event (and a
//! message on standard error) and nothing reaches the agent.
//!
//! Every line written to the agent and every line it writes goes, in that order, to the
//! converter (numbered as the lines of a capture of both directions, which `--log` writes)
//! and to `--log`: `insights` of the log gives the same events.

use super::agent::{read_commands, Agent, Heard};
use super::{Args, Permissions};
use crate::cli::Config;
use crate::command::{Action, Command, Decision};
use crate::convert::{Converter, Options};
use crate::diag::Diag;
use crate::event::{Body, ErrorEvent, Event, Extensions, Severity};
use crate::output::{FlushPolicy, Out, WholeLines};
use crate::providers::talk::{self, Answer, Outbox, Talk};
use anyhow::Context;
use std::borrow::Cow;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::process::ExitCode;
use std::sync::mpsc::{self, RecvTimeoutError, TryRecvError};
use std::time::{Duration, Instant};

/// How long an agent may take to end after its input was closed, before it is sent SIGTERM
/// (and as long again before SIGKILL).
const GRACE: Duration = Duration::from_secs(10);

/// The input name of the lines in diagnostics.
const NAME: &str = "agent";

pub fn run(args: &Args, config: &Config) -> anyhow::Result<ExitCode> {
    let (provider, speaker) = super::choose(args.protocol.as_deref(), &args.agent);
    let cwd = std::env::current_dir()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let topts = talk::Options {
        cwd,
        resume: args.resume.clone(),
        token: token(),
    };
    let mut argv = args.agent.clone();
    if let Some(s) = speaker {
        let mut rest = argv.split_off(1);
        (s.prepare)(&mut rest, &topts);
        argv.extend(rest);
    }
    let log = match &args.log {
        Some(p) => Some(BufWriter::new(
            File::create(p).with_context(|| format!("cannot create {}", p.display()))?,
        )),
        None => None,
    };
    let copts = Options {
        forced: None,
        raw: false,
        clock: !args.no_timestamp,
        flush: FlushPolicy::WhenIdle,
        strict: false,
        cc_insights: false,
        turn_ids: args.turn_ids,
        max_line: 64 << 20,
    };
    crate::signals::install_for_run();
    let mut out = Out::new(WholeLines::new(std::io::stdout().lock(), false));
    let conv = Converter::new(&copts, &mut out);
    let (tx, rx) = mpsc::channel();
    let mut d = Driver {
        conv,
        diag: Diag::new(config.color_err),
        provider: provider.unwrap_or("unknown"),
        talk: speaker.map(|s| (s.new)(&topts)),
        agent: None,
        log,
        lineno: 0,
        queue: VecDeque::new(),
        commands_ended: false,
        permissions: args.permissions,
        closed_at: None,
        killed: false,
        interrupts: 0,
    };
    let agent = match Agent::start(&argv, speaker.is_some(), tx.clone()) {
        Ok(a) => a,
        Err(e) => {
            let why = format!(
                "cannot start the agent `{}`: {}",
                argv.first().map(String::as_str).unwrap_or(""),
                crate::diag::io_words(&e)
            );
            d.error(0, None, None, &why)?;
            d.conv
                .out()
                .flush()
                .context("cannot write to standard output")?;
            return Ok(ExitCode::from(127));
        }
    };
    d.agent = Some(agent);
    if let Some(text) = &args.prompt {
        d.queue.push_back((
            0,
            Command {
                id: None,
                session_id: None,
                action: Action::SendMessage {
                    text: text.clone(),
                    images: Vec::new(),
                },
            },
        ));
    }
    read_commands(std::io::stdin(), tx);
    let mut ob = Outbox::default();
    if let Some(t) = d.talk.as_mut() {
        t.start(&mut ob);
    }
    d.say(ob, None)?;
    let status = d.run_loop(&rx)?;
    d.conv
        .out()
        .flush()
        .context("cannot write to standard output")?;
    if let Some(l) = d.log.as_mut() {
        l.flush().context("cannot write the --log file")?;
    }
    Ok(ExitCode::from(status))
}

/// A token for request ids, different from run to run.
fn token() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!("{:08x}", nanos ^ std::process::id().rotate_left(16))
}

struct Driver<'o, W: Write> {
    conv: Converter<'o, W>,
    diag: Diag,
    provider: &'static str,
    /// The protocol; `None` for a one-shot CLI.
    talk: Option<Box<dyn Talk>>,
    agent: Option<Agent>,
    log: Option<BufWriter<File>>,
    /// The lines of both directions so far: the capture's line numbers.
    lineno: u64,
    /// Commands waiting their turn, with their line on standard input.
    queue: VecDeque<(u64, Command)>,
    commands_ended: bool,
    permissions: Permissions,
    /// When the agent's input was closed (the end of the conversation).
    closed_at: Option<Instant>,
    /// Whether a `kill` (or a second Ctrl-C) ended the agent.
    killed: bool,
    interrupts: u32,
}

/// What the queue's first command can do now.
enum Now {
    Apply,
    Wait,
    Fail(String),
}

impl<W: Write> Driver<'_, W> {
    fn run_loop(&mut self, rx: &mpsc::Receiver<Heard>) -> anyhow::Result<u8> {
        loop {
            self.pump()?;
            self.maybe_close();
            // Output and log are flushed when nothing more is there to read: at once for a
            // live agent, in large writes for one that writes fast.
            let heard = match rx.try_recv() {
                Ok(h) => Some(h),
                Err(TryRecvError::Disconnected) => Some(Heard::AgentEnd),
                Err(TryRecvError::Empty) => {
                    self.flush()?;
                    match rx.recv_timeout(Duration::from_millis(50)) {
                        Ok(h) => Some(h),
                        Err(RecvTimeoutError::Timeout) => None,
                        Err(RecvTimeoutError::Disconnected) => Some(Heard::AgentEnd),
                    }
                }
            };
            match heard {
                Some(Heard::Command(n, Ok(c))) => self.command(n, c)?,
                Some(Heard::Command(n, Err(e))) => {
                    self.error(n, e.id.as_deref(), e.command.as_deref(), &e.message)?
                }
                Some(Heard::CommandsEnd) => self.commands_ended = true,
                Some(Heard::Line(l)) => self.hear(l)?,
                Some(Heard::AgentEnd) => return self.end(rx),
                None => {}
            }
            self.signals();
        }
    }

    /// A command read: `interrupt` and `kill` at once, the others in order.
    fn command(&mut self, n: u64, c: Command) -> anyhow::Result<()> {
        if let (Some(want), Some(have)) = (
            c.session_id.as_deref(),
            self.talk.as_ref().and_then(|t| t.session()),
        ) {
            if want != have {
                let why = format!("no session `{want}` in this run (its session is `{have}`)");
                return self.refuse(n, &c, &why);
            }
        }
        match c.action {
            Action::Interrupt => {
                let r = match self.talk.as_mut() {
                    Some(t) => {
                        let mut ob = Outbox::default();
                        let r = t.interrupt(&mut ob);
                        if r.is_ok() {
                            self.say(ob, c.id.as_deref())?;
                        }
                        r
                    }
                    None => {
                        if let Some(a) = self.agent.as_mut() {
                            a.signal(libc::SIGINT);
                        }
                        Ok(())
                    }
                };
                if let Err(why) = r {
                    self.refuse(n, &c, &why)?;
                }
                Ok(())
            }
            Action::Kill => {
                self.kill();
                Ok(())
            }
            _ => {
                self.queue.push_back((n, c));
                Ok(())
            }
        }
    }

    fn kill(&mut self) {
        if let Some(a) = self.agent.as_mut() {
            self.killed = true;
            a.signal(libc::SIGKILL);
        }
    }

    /// Applies the commands at the head of the queue that can be applied now.
    fn pump(&mut self) -> anyhow::Result<()> {
        while let Some((n, c)) = self.queue.front() {
            let (n, now) = (*n, self.readiness(c));
            match now {
                Now::Wait => break,
                Now::Fail(why) => {
                    let (_, c) = self.queue.pop_front().expect("the front was read");
                    self.refuse(n, &c, &why)?;
                }
                Now::Apply => {
                    let (_, c) = self.queue.pop_front().expect("the front was read");
                    self.apply(n, c)?;
                }
            }
        }
        self.answer_unanswered()
    }

    fn readiness(&self, c: &Command) -> Now {
        let Some(t) = self.talk.as_ref() else {
            return Now::Fail(
                "a one-shot CLI takes no commands but `interrupt` and `kill` \
                 (drive it with its protocol: --protocol)"
                    .into(),
            );
        };
        let ready = t.idle() || t.busy();
        match &c.action {
            Action::SendMessage { .. } if t.idle() => Now::Apply,
            Action::SendMessage { .. } => Now::Wait,
            Action::PermissionResponse { decision, .. } if t.offers(*decision).is_err() => {
                Now::Fail(t.offers(*decision).err().unwrap_or_default())
            }
            Action::PermissionResponse {
                request_id: None, ..
            } => {
                if !t.pending().is_empty() {
                    Now::Apply
                } else if t.idle() {
                    Now::Fail("no permission request is waiting: the turn ended without one".into())
                } else {
                    Now::Wait
                }
            }
            _ if ready => Now::Apply,
            _ => Now::Wait,
        }
    }

    fn apply(&mut self, n: u64, c: Command) -> anyhow::Result<()> {
        let Some(t) = self.talk.as_mut() else {
            return Ok(());
        };
        let mut ob = Outbox::default();
        let r = match &c.action {
            Action::SendMessage { text, images } => t.prompt(text, images, &mut ob),
            Action::PermissionResponse {
                request_id,
                decision,
                updated_input,
                message,
            } => {
                let id = match request_id {
                    Some(id) => Some(id.clone()),
                    None => t.pending().into_iter().next(),
                };
                match id {
                    Some(id) if t.pending().contains(&id) => t.answer(
                        &id,
                        &Answer {
                            decision: *decision,
                            updated_input: updated_input.as_deref(),
                            message: message.as_deref(),
                        },
                        &mut ob,
                    ),
                    Some(id) => Err(format!("no permission request `{id}` is waiting")),
                    None => Err("no permission request is waiting".into()),
                }
            }
            Action::SetModel { model } => t.set_model(model, &mut ob),
            Action::SetPermissionMode { mode } => t.set_permission_mode(mode, &mut ob),
            Action::SetReasoningEffort { effort } => t.set_reasoning_effort(effort, &mut ob),
            Action::Interrupt | Action::Kill => Ok(()),
        };
        match r {
            Ok(()) => self.say(ob, c.id.as_deref()),
            Err(why) => self.refuse(n, &c, &why),
        }
    }

    /// `--permissions allow|deny`, and `ask` once the commands have ended: answers each
    /// request that no queued command can answer.
    fn answer_unanswered(&mut self) -> anyhow::Result<()> {
        let decision = match self.permissions {
            Permissions::Allow => Decision::Allow,
            Permissions::Deny => Decision::Deny,
            Permissions::Ask if self.commands_ended => Decision::Deny,
            Permissions::Ask => return Ok(()),
        };
        let queued = self
            .queue
            .iter()
            .any(|(_, c)| matches!(c.action, Action::PermissionResponse { .. }));
        let Some(t) = self.talk.as_mut() else {
            return Ok(());
        };
        if queued {
            return Ok(());
        }
        let message = match self.permissions {
            Permissions::Ask => "insights run: no answer (the commands ended)",
            _ => "insights run --permissions deny",
        };
        for id in t.pending() {
            let mut ob = Outbox::default();
            let a = Answer {
                decision,
                updated_input: None,
                message: (decision == Decision::Deny).then_some(message),
            };
            if t.answer(&id, &a, &mut ob).is_ok() {
                self.say(ob, None)?;
                return self.answer_unanswered();
            }
        }
        Ok(())
    }

    /// Once the commands have ended and the agent has nothing running or waiting: the end of
    /// the conversation, said as the protocol says it, then its input closed. An agent that
    /// does not end then is sent SIGTERM, and SIGKILL after as long again.
    fn maybe_close(&mut self) {
        let Some(a) = self.agent.as_mut() else {
            return;
        };
        if let Some(at) = self.closed_at {
            let waited = at.elapsed();
            if waited > GRACE * 2 {
                a.signal(libc::SIGKILL);
            } else if waited > GRACE {
                a.signal(libc::SIGTERM);
            }
            return;
        }
        if !self.commands_ended || !self.queue.is_empty() {
            return;
        }
        let Some(t) = self.talk.as_mut() else {
            return;
        };
        if t.busy() || !t.pending().is_empty() {
            return;
        }
        let mut ob = Outbox::default();
        t.finish(&mut ob);
        // Errors are reported by `say`; the input is closed either way.
        let _ = self.say(ob, None);
        if let Some(a) = self.agent.as_mut() {
            a.close_input();
        }
        self.closed_at = Some(Instant::now());
    }

    /// Ctrl-C: the first interrupts the turn, the next kills the agent. SIGTERM and SIGHUP
    /// are passed on to the agent, once.
    fn signals(&mut self) {
        let n = crate::signals::interrupts();
        if n > self.interrupts {
            let first = self.interrupts == 0;
            self.interrupts = n;
            if first {
                let c = Command {
                    id: None,
                    session_id: None,
                    action: Action::Interrupt,
                };
                if self.command(0, c).is_err() {
                    self.kill();
                }
            } else {
                self.kill();
            }
        }
        if let Some(s) = crate::signals::caught() {
            if let Some(a) = self.agent.as_mut() {
                if !self.killed {
                    self.killed = true;
                    a.signal(s);
                }
            }
        }
    }

    /// The agent has closed its output: what is left in the queue cannot be carried out; the
    /// exit status is the agent's.
    fn end(&mut self, rx: &mpsc::Receiver<Heard>) -> anyhow::Result<u8> {
        // Lines the reader sent before its end are all in the channel before it.
        while let Ok(h) = rx.try_recv() {
            if let Heard::Line(l) = h {
                self.hear(l)?;
            }
        }
        // The end of the capture: what the converter holds for a later line (a prompt waiting
        // for the line that names its session) is written now.
        self.conv
            .close_input(self.lineno, NAME, &mut self.diag)
            .context("cannot write to standard output")?;
        let status = match self.agent.as_mut().map(|a| a.child.wait()) {
            Some(Ok(s)) => s,
            Some(Err(e)) => {
                self.error(0, None, None, &format!("cannot wait for the agent: {e}"))?;
                return Ok(2);
            }
            None => return Ok(0),
        };
        while let Some((n, c)) = self.queue.pop_front() {
            self.refuse(n, &c, "the agent has ended")?;
        }
        let code = exit_code(&status);
        if code != 0 && !self.killed {
            self.error(0, None, None, &format!("the agent ended with {status}"))?;
        }
        if let Some(s) = crate::signals::caught() {
            return Ok(crate::signals::exit_status(s));
        }
        Ok(code)
    }

    /// Writes `ob`'s lines to the agent, the log and the converter, the events marked with
    /// the command's `id`.
    fn say(&mut self, ob: Outbox, id: Option<&str>) -> anyhow::Result<()> {
        for line in ob.lines {
            let sent = match self.agent.as_mut() {
                Some(a) => a.send(&line),
                None => Ok(()),
            };
            if let Err(e) = sent {
                let why = format!("cannot write to the agent: {}", crate::diag::io_words(&e));
                self.error(0, id, None, &why)?;
                continue;
            }
            self.conv.command_id = id.map(str::to_owned);
            let r = self.record(line.as_bytes());
            self.conv.command_id = None;
            r?;
        }
        Ok(())
    }

    /// A line the agent wrote: to the log and the converter, then to its protocol, whose
    /// answers follow it.
    fn hear(&mut self, line: Vec<u8>) -> anyhow::Result<()> {
        self.record(&line)?;
        if let Some(t) = self.talk.as_mut() {
            let mut ob = Outbox::default();
            t.heard(&String::from_utf8_lossy(&line), &mut ob);
            self.say(ob, None)?;
        }
        Ok(())
    }

    /// One line of the capture: logged and converted (flushed by [`Driver::flush`]).
    fn record(&mut self, line: &[u8]) -> anyhow::Result<()> {
        self.lineno += 1;
        if let Some(l) = self.log.as_mut() {
            l.write_all(line)
                .and_then(|_| l.write_all(b"\n"))
                .context("cannot write the --log file")?;
        }
        self.conv
            .line(line, self.lineno, false, NAME, &mut self.diag)
            .context("cannot write to standard output")?;
        Ok(())
    }

    /// Writes out the events and log lines buffered.
    fn flush(&mut self) -> anyhow::Result<()> {
        if let Some(l) = self.log.as_mut() {
            l.flush().context("cannot write the --log file")?;
        }
        self.conv
            .out()
            .flush()
            .context("cannot write to standard output")
    }

    fn refuse(&mut self, n: u64, c: &Command, why: &str) -> anyhow::Result<()> {
        self.error(n, c.id.as_deref(), Some(c.action.name()), why)
    }

    /// An `error` event of the run's own (and the message on standard error): a command that
    /// cannot be carried out (its line `n` on standard input, its `id` and name), or the agent
    /// that cannot start or ended badly (`n` 0).
    fn error(
        &mut self,
        n: u64,
        id: Option<&str>,
        command: Option<&str>,
        why: &str,
    ) -> anyhow::Result<()> {
        let message = match command {
            Some(c) => format!("command `{c}`: {why}"),
            None => why.to_owned(),
        };
        if n > 0 {
            self.diag.error(Some(&format!("<stdin>:{n}")), &message);
        } else {
            self.diag.error(None, &message);
        }
        let mut ext = Extensions::default();
        ext.put_opt("insights.commandId", id.map(|s| Cow::Owned(s.to_owned())));
        ext.put_opt(
            "insights.command",
            command.map(|s| Cow::Owned(s.to_owned())),
        );
        if n > 0 {
            ext.put("insights.commandLine", n);
        }
        let session = self
            .talk
            .as_ref()
            .and_then(|t| t.session())
            .unwrap_or("")
            .to_owned();
        let event_id = if n > 0 {
            format!("command:{n}:error")
        } else {
            format!("run:{}:error", self.lineno)
        };
        let code = Cow::Borrowed(if n > 0 { "command" } else { "agent" });
        let body = Body::Error(ErrorEvent::new(
            Cow::Owned(message),
            Severity::Error,
            Some(code),
        ));
        let ev = Event {
            event: body.kind(),
            id: Cow::Owned(event_id),
            seq: 0,
            line: n.max(1),
            timestamp: None,
            provider: self.provider,
            session_id: Cow::Owned(session),
            turn_id: None,
            body,
            raw: None,
            extensions: ext,
        };
        self.conv
            .write_own(ev)
            .context("cannot write to standard output")?;
        Ok(())
    }
}

/// The exit status a shell would report for `s`.
fn exit_code(s: &std::process::ExitStatus) -> u8 {
    if let Some(c) = s.code() {
        return c.clamp(0, 255) as u8;
    }
    #[cfg(unix)]
    if let Some(sig) = std::os::unix::process::ExitStatusExt::signal(s) {
        return crate::signals::exit_status(sig);
    }
    1
}
