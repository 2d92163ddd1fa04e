//! Letting sessions go ([`State::forget_sessions`]): a reader that has taken what it needs
//! of some sessions (`export --to otlp`, once their turns are spans) removes them from the
//! state, which then holds the sessions still going rather than every session read.

use super::state::{Node, State};

impl State {
    /// Removes the sessions whose positions `gone` marks, with all that is theirs (the tree's
    /// node, totals, pending, cursor and entries), as if they had not been read; the totals of
    /// every session together stay. A session whose entry a kept session refers to is kept
    /// too. A later event of a session removed starts it again, as a new one.
    ///
    /// Returns the positions removed (`gone`, less those kept).
    pub fn forget_sessions(&mut self, gone: &[bool]) -> anyhow::Result<Vec<bool>> {
        let n = self.tree.sessions.len();
        let mut gone: Vec<bool> = (0..n)
            .map(|s| gone.get(s).copied().unwrap_or(false))
            .collect();
        // The session of each entry, by position.
        let of: Vec<Option<usize>> = self
            .entries
            .iter()
            .map(|e| self.idx.sessions.get(&e.session_id).copied())
            .collect();
        let entry_gone = |gone: &[bool], e: u32| {
            of.get(e as usize)
                .copied()
                .flatten()
                .is_some_and(|s| gone[s])
        };
        // A kept session referring to an entry of a session to go keeps that session.
        loop {
            let mut changed = false;
            for s in 0..n {
                if gone[s] {
                    continue;
                }
                let mut needs = Vec::new();
                self.entry_refs(s, &mut |e| {
                    if entry_gone(&gone, e) {
                        needs.push(e);
                    }
                });
                for e in needs {
                    if let Some(Some(k)) = of.get(e as usize) {
                        changed |= std::mem::replace(&mut gone[*k], false);
                    }
                }
            }
            if !changed {
                break;
            }
        }
        if !gone.contains(&true) {
            return Ok(gone);
        }
        // The entries kept, and where each old one went.
        let mut to = vec![u32::MAX; self.entries.len()];
        let mut kept = Vec::with_capacity(self.entries.len());
        for (i, e) in std::mem::take(&mut self.entries).into_iter().enumerate() {
            if !entry_gone(&gone, i as u32) {
                to[i] = kept.len() as u32;
                kept.push(e);
            }
        }
        self.entries = kept;
        let mut k = 0;
        self.tree.sessions.retain(|_| (!gone[k], k += 1).0);
        k = 0;
        self.totals.sessions.retain(|_| (!gone[k], k += 1).0);
        k = 0;
        self.pending.sessions.retain(|_| (!gone[k], k += 1).0);
        k = 0;
        self.cursor.sessions.retain(|_| (!gone[k], k += 1).0);
        if self.cursor.session.as_ref().is_some_and(|id| {
            self.idx
                .sessions
                .get(id)
                .is_some_and(|&s| gone.get(s).copied().unwrap_or(false))
        }) {
            self.cursor.session = None;
        }
        let map = |e: &mut u32| *e = to.get(*e as usize).copied().unwrap_or(u32::MAX);
        fn nodes(list: &mut [Node], map: &dyn Fn(&mut u32)) {
            for n in list {
                map(&mut n.entry);
                nodes(&mut n.children, map);
            }
        }
        for sess in &mut self.tree.sessions {
            for turn in &mut sess.turns {
                nodes(&mut turn.children, &map);
            }
        }
        for p in &mut self.pending.sessions {
            p.tools.iter_mut().for_each(|t| map(&mut t.entry));
            p.questions.iter_mut().for_each(|t| map(&mut t.entry));
            p.permissions.iter_mut().for_each(|r| map(&mut r.entry));
            if let Some(plan) = &mut p.plan {
                map(&mut plan.entry);
            }
        }
        for c in &mut self.cursor.sessions {
            for scope in &mut c.scopes {
                if let Some(e) = &mut scope.last_entry {
                    map(e);
                }
            }
        }
        self.rebuild_index()?;
        Ok(gone)
    }

    /// Calls `f` with every entry the session at position `s` refers to.
    fn entry_refs(&self, s: usize, f: &mut dyn FnMut(u32)) {
        fn nodes(list: &[Node], f: &mut dyn FnMut(u32)) {
            for n in list {
                f(n.entry);
                nodes(&n.children, f);
            }
        }
        for turn in &self.tree.sessions[s].turns {
            nodes(&turn.children, f);
        }
        if let Some(p) = self.pending.sessions.get(s) {
            p.tools.iter().for_each(|t| f(t.entry));
            p.questions.iter().for_each(|t| f(t.entry));
            p.permissions.iter().for_each(|r| f(r.entry));
            if let Some(plan) = &p.plan {
                f(plan.entry);
            }
        }
        if let Some(c) = self.cursor.sessions.get(s) {
            for scope in &c.scopes {
                if let Some(e) = scope.last_entry {
                    f(e);
                }
            }
        }
    }
}
