//! The floor under `insights usage` on a home: walking its folders and reading every file
//! whole, on as many threads, with nothing done with the bytes. No crate, so that
//! `rustc -O benches/read_floor.rs` builds it (benches/usage.py does).
//!
//!     read_floor THREADS DIR...
//!
//! Prints the files and bytes read. The walk runs on a thread of its own while the files
//! are read, as `usage` does; each file is opened, read through a buffer of 256 KiB kept
//! from file to file until a read gives nothing, and closed.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};

fn walk(dir: &Path, out: &mpsc::Sender<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        match e.file_type() {
            Ok(t) if t.is_dir() => walk(&e.path(), out),
            Ok(t) if t.is_file() => {
                let _ = out.send(e.path());
            }
            _ => {}
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let threads: usize = args.next().and_then(|t| t.parse().ok()).unwrap_or(1);
    let dirs: Vec<PathBuf> = args.map(PathBuf::from).collect();
    let (tx, rx) = mpsc::channel::<PathBuf>();
    let rx = Arc::new(Mutex::new(rx));
    let files = Arc::new(AtomicU64::new(0));
    let bytes = Arc::new(AtomicU64::new(0));
    let lister = std::thread::spawn(move || {
        for d in &dirs {
            walk(d, &tx);
        }
    });
    let readers: Vec<_> = (0..threads.max(1))
        .map(|_| {
            let (rx, files, bytes) = (rx.clone(), files.clone(), bytes.clone());
            std::thread::spawn(move || {
                let mut buf = vec![0u8; 1 << 18];
                loop {
                    let next = rx.lock().map(|r| r.recv());
                    let Ok(Ok(path)) = next else {
                        return;
                    };
                    let Ok(mut f) = std::fs::File::open(&path) else {
                        continue;
                    };
                    loop {
                        match f.read(&mut buf) {
                            Ok(0) | Err(_) => break,
                            Ok(n) => {
                                bytes.fetch_add(n as u64, Ordering::Relaxed);
                            }
                        }
                    }
                    files.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    let _ = lister.join();
    for r in readers {
        let _ = r.join();
    }
    println!(
        "{} files, {} bytes",
        files.load(Ordering::Relaxed),
        bytes.load(Ordering::Relaxed)
    );
}
