//! Runs one bad-input case through `rigml_io::load` and judges the outcome.
//!
//! The load runs on its own thread (8 MiB stack, like a main thread) under `catch_unwind`, so a
//! panic is reported as a failed case instead of ending the test, and a load that does not
//! finish in time is reported as a hang.

use rigml_core::Character;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

/// How long one load may take before the case counts as a hang (debug builds are slow).
const TIMEOUT: Duration = Duration::from_secs(60);
const STACK: usize = 8 << 20;

/// What a case must produce.
#[derive(Debug, Clone, Copy)]
pub enum Expect {
    /// An error whose message contains at least one of these words (case-insensitive); an
    /// empty list accepts any error.
    Error(&'static [&'static str]),
    /// Damage that may be harmless: an error, or a character that validates.
    Either,
    /// Must load and validate.
    Ok,
}

/// Where a file beside the case comes from.
pub enum Source {
    Bytes(Vec<u8>),
    /// A real file, linked (or copied) beside the case.
    File(PathBuf),
}

/// One input: the file to load plus any files it needs beside it.
pub struct Case {
    pub label: String,
    pub file_name: String,
    pub bytes: Vec<u8>,
    pub companions: Vec<(String, Source)>,
    pub expect: Expect,
}

impl Case {
    pub fn new(label: impl Into<String>, file_name: &str, bytes: impl Into<Vec<u8>>, expect: Expect) -> Case {
        Case {
            label: label.into(),
            file_name: file_name.to_string(),
            bytes: bytes.into(),
            companions: Vec::new(),
            expect,
        }
    }

    pub fn beside(mut self, name: &str, source: Source) -> Case {
        self.companions.push((name.to_string(), source));
        self
    }
}

/// What `load` did.
pub enum Outcome {
    Loaded(Box<Character>),
    Failed(String),
    Panicked(String),
    Hung,
}

/// `rigml_io::load(path)` (plus `validate` and `problems` on success) isolated from panics.
pub fn load_isolated(path: &Path) -> Outcome {
    let (tx, rx) = mpsc::channel();
    let path = path.to_path_buf();
    let spawned = std::thread::Builder::new().stack_size(STACK).spawn(move || {
        let result = catch_unwind(AssertUnwindSafe(|| {
            let loaded = rigml_io::load(&path);
            if let Ok(c) = &loaded {
                let _ = c.problems();
            }
            loaded
        }));
        let _ = tx.send(result);
    });
    if let Err(e) = spawned {
        return Outcome::Panicked(format!("could not start the load thread: {e}"));
    }
    match rx.recv_timeout(TIMEOUT) {
        Ok(Ok(Ok(c))) => Outcome::Loaded(Box::new(c)),
        Ok(Ok(Err(e))) => Outcome::Failed(e.to_string()),
        Ok(Err(payload)) => Outcome::Panicked(panic_message(payload.as_ref())),
        Err(_) => Outcome::Hung,
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}

/// Runs cases and collects every failure, so one test reports all broken cases at once.
#[derive(Default)]
pub struct Report {
    failures: Vec<String>,
    pub checked: usize,
    pub errors: usize,
    pub loaded: usize,
}

impl Report {
    /// Write the case into `dir` (replacing an earlier case of the same name), load it and
    /// judge the outcome. Returns the character when it loaded.
    pub fn run(&mut self, dir: &Path, case: &Case) -> Option<Character> {
        self.checked += 1;
        if let Err(e) = write_case(dir, case) {
            self.fail(case, &format!("could not write the case: {e}"));
            return None;
        }
        let outcome = load_isolated(&dir.join(&case.file_name));
        if std::env::var_os("RIGML_BAD_INPUT_VERBOSE").is_some() {
            let what = match &outcome {
                Outcome::Loaded(_) => "loaded".to_string(),
                Outcome::Failed(m) => m.replace(&dir.display().to_string(), "<tmp>"),
                Outcome::Panicked(m) => format!("PANICKED: {m}"),
                Outcome::Hung => "HUNG".to_string(),
            };
            eprintln!("[{}] {what}", case.label);
        }
        match outcome {
            Outcome::Loaded(c) => {
                self.loaded += 1;
                if let Expect::Error(_) = case.expect {
                    self.fail(case, "loaded, but an error was expected");
                } else if let Err(e) = c.validate() {
                    self.fail(case, &format!("loaded a character that does not validate: {e}"));
                }
                Some(*c)
            }
            Outcome::Failed(message) => {
                self.errors += 1;
                self.judge_error(dir, case, &message);
                None
            }
            Outcome::Panicked(message) => {
                self.fail(case, &format!("PANICKED: {message}"));
                None
            }
            Outcome::Hung => {
                self.fail(case, &format!("did not finish within {TIMEOUT:?}"));
                None
            }
        }
    }

    fn judge_error(&mut self, dir: &Path, case: &Case, message: &str) {
        // Judge the words without the temporary folder, whose random name could contain them.
        let message = &message.replace(&dir.display().to_string(), "<tmp>");
        let names_file =
            message.contains(&case.file_name) || case.companions.iter().any(|(name, _)| message.contains(name));
        if !names_file {
            self.fail(case, &format!("error does not name the file: {message}"));
        }
        match case.expect {
            Expect::Ok => self.fail(case, &format!("expected to load, got: {message}")),
            Expect::Error(words) if !words.is_empty() => {
                let lower = message.to_lowercase();
                if !words.iter().any(|w| lower.contains(&w.to_lowercase())) {
                    self.fail(
                        case,
                        &format!("error does not name the problem (one of {words:?}): {message}"),
                    );
                }
            }
            _ => {}
        }
    }

    /// Record a failure found by the test itself (e.g. a wrong count after a successful load).
    pub fn fail(&mut self, case: &Case, problem: &str) {
        self.failures
            .push(format!("[{}] {}: {problem}", case.label, case.file_name));
    }

    /// Panic with every failure if there was any; print a one-line summary otherwise.
    pub fn finish(self, test: &str) {
        eprintln!(
            "{test}: {} cases, {} errors, {} loaded, {} failures",
            self.checked,
            self.errors,
            self.loaded,
            self.failures.len()
        );
        assert!(
            self.failures.is_empty(),
            "{test}: {} of {} cases failed:\n{}",
            self.failures.len(),
            self.checked,
            self.failures.join("\n")
        );
    }
}

fn write_case(dir: &Path, case: &Case) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join(&case.file_name), &case.bytes)?;
    for (name, source) in &case.companions {
        let target = dir.join(name);
        match source {
            Source::Bytes(bytes) => std::fs::write(&target, bytes)?,
            Source::File(real) => {
                if target.symlink_metadata().is_ok() {
                    std::fs::remove_file(&target)?;
                }
                link_or_copy(real, &target)?;
            }
        }
    }
    Ok(())
}

#[cfg(unix)]
fn link_or_copy(real: &Path, target: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(real, target).or_else(|_| std::fs::copy(real, target).map(|_| ()))
}

#[cfg(not(unix))]
fn link_or_copy(real: &Path, target: &Path) -> std::io::Result<()> {
    std::fs::copy(real, target).map(|_| ())
}
