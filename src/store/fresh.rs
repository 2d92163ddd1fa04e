//! A first store: the database does not exist yet and every source is a file.
//!
//! The database is then built in a file of its own beside it (`<name>.building-<pid>-<n>`),
//! without a journal, and published whole at the end. In WAL mode every page is written
//! twice, once to the log and once more to the database when the log is checkpointed; here
//! it is written once, and nothing is synced until the end. Nobody else can see the file
//! while it is built, so nothing needs the journal: a run killed before the end leaves no
//! database, only its building file, which the next first store removes; running again then
//! gives what one clean run gives.
//!
//! Publishing is a hard link to the database's name, which fails rather than replace a
//! database another writer made meanwhile; the sources are then stored into that database
//! as any later run stores them (each event once, by its key).

use anyhow::{bail, Context as _};
use rusqlite::Connection;
use std::fs::File;
use std::path::{Path, PathBuf};

/// A database being built: its file, locked for as long as it is built.
pub struct Building {
    path: PathBuf,
    /// Held open and locked (`flock`) until the end: the next first store removes only the
    /// building files that nobody holds. It is closed after SQLite's own handle, so that
    /// SQLite's locks on the file are not dropped with it.
    file: Option<File>,
}

/// The suffix of a building file's name, before the process id.
const BUILDING: &str = ".building-";

/// Starts building a new database for `db`, when there is none yet (`None` when there is a
/// file at `db`, even an empty one, or when no building file can be made and linked there: it
/// is written in place then). Building files of earlier runs that were killed are removed.
pub fn start(db: &Path) -> anyhow::Result<Option<Building>> {
    let (Some(dir), Some(name)) = (db.parent(), db.file_name()) else {
        return Ok(None);
    };
    let dir = folder(dir);
    let prefix = format!("{}{BUILDING}", name.to_string_lossy());
    match std::fs::symlink_metadata(db) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            return Err(e).with_context(|| format!("cannot open the database {}", db.display()))
        }
        Ok(_) => {
            // A run killed between publishing and removing its building file left a second
            // name of the database.
            remove_abandoned(dir, &prefix);
            return Ok(None);
        }
    }
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the folder {}", dir.display()))?;
    remove_abandoned(dir, &prefix);
    // A name no other run has, even one with the same process id (another container, another
    // host on a shared folder).
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let path = dir.join(format!("{prefix}{}-{nanos}", std::process::id()));
    // Any failure here (a name too long, a folder that cannot be written, a file system
    // without locks or hard links) leaves the database to be written in place.
    let Ok(file) = File::options()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
    else {
        return Ok(None);
    };
    let building = Building {
        path,
        file: Some(file),
    };
    let usable = building.file.as_ref().is_some_and(|f| f.try_lock().is_ok())
        && building.is_ours()
        && can_link(&building.path);
    Ok(usable.then_some(building))
}

/// `dir`, or `.` for the empty folder of a bare file name.
fn folder(dir: &Path) -> &Path {
    if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    }
}

/// Whether a second name can be made for the file at `path` (a file system with hard links).
fn can_link(path: &Path) -> bool {
    let mut probe = path.as_os_str().to_owned();
    probe.push("-link");
    let probe = PathBuf::from(probe);
    let ok = std::fs::hard_link(path, &probe).is_ok();
    let _ = std::fs::remove_file(&probe);
    ok
}

impl Building {
    /// Where the database is built.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the building file's name still names the file this run holds (no other run
    /// removed it, taking it for an abandoned one, before it was locked).
    fn is_ours(&self) -> bool {
        use std::os::unix::fs::MetadataExt as _;
        let (Some(f), Ok(named)) = (&self.file, std::fs::symlink_metadata(&self.path)) else {
            return false;
        };
        f.metadata()
            .is_ok_and(|m| m.dev() == named.dev() && m.ino() == named.ino())
    }

    /// Publishes the database built (its connection `conn`, closed here) as `db`: WAL mode
    /// set, the file synced, then linked to its name. `Ok(false)` when another writer made a
    /// database there meanwhile: nothing is published, and the sources are to be stored into
    /// the database at `db` as usual.
    pub fn publish(self, conn: Connection, db: &Path) -> anyhow::Result<bool> {
        let named = |e: rusqlite::Error| {
            anyhow::anyhow!(
                "{}: cannot finish the database: {}",
                db.display(),
                super::ingest::db_words(&e)
            )
        };
        // WAL mode is kept in the file's header: set, and its log emptied, before it is
        // published, so that it opens as every store does.
        conn.pragma_update(None, "locking_mode", "NORMAL")
            .map_err(named)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(named)?;
        conn.close().map_err(|(_, e)| named(e))?;
        let file = self
            .file
            .as_ref()
            .context("internal error: published twice")?;
        file.sync_all()
            .with_context(|| format!("cannot write {}", self.path.display()))?;
        if !self.is_ours() {
            bail!(
                "{}: its building file {} was removed by another run: nothing was stored",
                db.display(),
                self.path.display()
            );
        }
        match std::fs::hard_link(&self.path, db) {
            Ok(()) => {
                if let Some(dir) = db.parent() {
                    // The new name reaches the disk (a directory opened to be synced).
                    let _ = File::open(folder(dir)).and_then(|d| d.sync_all());
                }
                Ok(true)
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
            Err(e) => {
                Err(e).with_context(|| format!("{}: cannot publish the new database", db.display()))
            }
        }
    }
}

impl Drop for Building {
    /// The building file goes (published, it lives on under the database's name).
    fn drop(&mut self) {
        remove_with_log(&self.path);
        self.file = None;
    }
}

/// Removes a building file and what SQLite kept beside it.
fn remove_with_log(path: &Path) {
    for suffix in ["", "-wal", "-shm", "-journal", "-link"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(p));
    }
}

/// Removes the building files in `dir` named `prefix<pid>` that no run holds (their run was
/// killed).
fn remove_abandoned(dir: &Path, prefix: &str) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.filter_map(Result::ok) {
        let name = e.file_name();
        let Some(id) = name.to_str().and_then(|n| n.strip_prefix(prefix)) else {
            continue;
        };
        // `<pid>-<nanos>`; not its `-wal`, `-shm` or `-link` (removed with it).
        if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
            continue;
        }
        let path = e.path();
        // Held when it cannot be opened (another user's) or its lock is taken.
        let abandoned = File::open(&path).is_ok_and(|f| f.try_lock().is_ok());
        if abandoned {
            remove_with_log(&path);
        }
    }
}

/// Sets a new database being built (`conn`, on [`Building::path`]) for writing without a
/// journal: see the module's comment.
pub fn unjournaled(conn: &Connection) -> rusqlite::Result<()> {
    conn.pragma_update(None, "locking_mode", "EXCLUSIVE")?;
    conn.pragma_update(None, "journal_mode", "OFF")?;
    conn.pragma_update(None, "synchronous", "OFF")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("insights-fresh-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn building_files(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(BUILDING))
            .collect();
        v.sort();
        v
    }

    /// Built, published in WAL mode, and the building file gone; a database that exists is
    /// written in place.
    #[test]
    fn a_new_database_is_published_whole() {
        let d = dir("publish");
        let db = d.join("a.db");
        let b = start(&db).unwrap().expect("no database yet");
        let conn = crate::store::schema::open_building(b.path()).unwrap();
        conn.execute_batch("INSERT INTO session_ids (session_id) VALUES ('s')")
            .unwrap();
        assert!(!db.exists());
        assert!(b.publish(conn, &db).unwrap());
        assert!(building_files(&d).is_empty());
        let c = Connection::open(&db).unwrap();
        let mode: String = c
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        let n: i64 = c
            .query_row("SELECT count(*) FROM session_ids", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 1);
        assert!(start(&db).unwrap().is_none());
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// Another writer made the database meanwhile: it is left as it is.
    #[test]
    fn a_database_made_meanwhile_is_not_replaced() {
        let d = dir("race");
        let db = d.join("a.db");
        let b = start(&db).unwrap().unwrap();
        let conn = crate::store::schema::open_building(b.path()).unwrap();
        std::fs::write(&db, b"theirs").unwrap();
        assert!(!b.publish(conn, &db).unwrap());
        assert_eq!(std::fs::read(&db).unwrap(), b"theirs");
        assert!(building_files(&d).is_empty());
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// A building file nobody holds (its run was killed) is removed by the next first store;
    /// one held by a run is left.
    #[test]
    fn abandoned_building_files_are_removed_held_ones_kept() {
        let d = dir("abandoned");
        let db = d.join("a.db");
        std::fs::write(d.join("a.db.building-1-5"), b"x").unwrap();
        std::fs::write(d.join("a.db.building-1-5-wal"), b"x").unwrap();
        let held = d.join("a.db.building-2-7");
        let f = File::create(&held).unwrap();
        f.lock().unwrap();
        // Another name's, and a name that is not a building file's, are not touched.
        std::fs::write(d.join("b.db.building-3"), b"x").unwrap();
        std::fs::write(d.join("a.db.building-x"), b"x").unwrap();
        let b = start(&db).unwrap().unwrap();
        let mine = b.path().file_name().unwrap().to_string_lossy().into_owned();
        let mut want = vec![
            "a.db.building-2-7".to_owned(),
            "a.db.building-x".to_owned(),
            "b.db.building-3".to_owned(),
            mine,
        ];
        want.sort();
        assert_eq!(building_files(&d), want);
        drop(b);
        drop(f);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
