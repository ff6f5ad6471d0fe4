//! Every file the program writes (pictures, JSON, Markdown, plots) goes
//! through here, and what happens depends on what the path names:
//!
//! - nothing yet: the contents are written under a temporary name in the
//!   same folder and renamed into place once complete;
//! - a regular file: the same, the new file given the old one's owner,
//!   group and permissions, so that it replaces the old one whole or not
//!   at all. Where the program may not give it the old owner (an ordinary
//!   user writing another user's file through their shared group) or may
//!   not create a file in its folder, the file is overwritten in place
//!   once the contents are ready, as `cp` does: owner, group, permissions
//!   and hard links stay, but a write that fails halfway (a full disk)
//!   leaves it damaged. A file that may not be written (read-only) is
//!   refused before any work;
//! - a symbolic link: the same, to the file the link leads to, so that the
//!   link stays a link (as `cp` and image tools write through it);
//! - a FIFO or a character device (`/dev/null`, a terminal, `/dev/fd/N` of
//!   a pipe), `-`, or any name of the program's own standard output
//!   (`/dev/stdout`): written in place, as a stream, once the contents are
//!   ready; a write error (`/dev/full`, a closed standard output) is an
//!   error, never success;
//! - anything else (a folder, a block device, a socket): refused before
//!   any work is done.
//!
//! Temporary names are `.NAME.XXXXXX.tmp` with a random part, created
//! exclusively, so that nothing planted under a name (a link to another
//! user's file) is ever followed. They are removed on every path out;
//! a signal removes them through [`cancel`], after which nothing is put in
//! place any more: a cancelled run writes nothing.

use std::ffi::{OsStr, OsString};
use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{Cursor, Write};
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

use tempfile::NamedTempFile;

use crate::console;
use crate::error::{Error, Result};

/// The temporary files being written, and whether the run was cancelled.
static LIVE: Mutex<Live> = Mutex::new(Live {
    temporaries: Vec::new(),
    cancelled: false,
});

struct Live {
    temporaries: Vec<PathBuf>,
    cancelled: bool,
}

fn live() -> MutexGuard<'static, Live> {
    LIVE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Symbolic links followed before a path is taken for a loop, as Linux's
/// own limit.
const MAX_LINKS: usize = 40;

/// The longest file name Linux takes, in bytes.
const NAME_MAX: usize = 255;

/// Where an output's contents go.
enum Target {
    /// A file replaced whole: the temporary file beside it, and the file
    /// itself (the end of any symbolic links).
    Replace { temporary: Temporary, file: PathBuf },
    /// A regular file overwritten in place, opened before the work.
    InPlace(File),
    /// A FIFO or character device, written in place.
    Stream(PathBuf),
    /// Standard output.
    Stdout,
}

/// An output being prepared: checked and, for a regular file, its
/// temporary file created before the work whose result it will hold, so
/// that a path that cannot be written fails before the work does.
pub struct Pending {
    path: PathBuf,
    target: Target,
}

impl Pending {
    /// Checks `path` and prepares to write it; `path` itself is not
    /// touched.
    pub fn create(path: &Path) -> Result<Self> {
        let fail = |source| Error::write(path, source);
        let target = if is_stdout(path) {
            console::hand_stdout_over();
            if console::stdout_was_closed() {
                return Err(fail(std::io::Error::other("standard output is closed")));
            }
            Target::Stdout
        } else {
            // Through the kernel, which follows /proc's links to pipes too.
            match fs::metadata(path) {
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                    let file = follow_links(path)?;
                    let temporary = Temporary::beside(&file, None).map_err(fail)?;
                    Target::Replace { temporary, file }
                }
                Err(source) => return Err(fail(source)),
                Ok(metadata) if metadata.is_file() => existing(path, &metadata)?,
                Ok(metadata)
                    if metadata.file_type().is_fifo() || metadata.file_type().is_char_device() =>
                {
                    Target::Stream(path.into())
                }
                Ok(metadata) => {
                    return Err(Error::OutputKind {
                        path: path.to_path_buf(),
                        kind: describe(metadata.file_type()),
                    });
                }
            }
        };
        Ok(Self {
            path: path.to_path_buf(),
            target,
        })
    }

    /// The path as it was given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Renders the contents with `write` and puts them in place; on any
    /// error, or once the run is cancelled, a regular file is left as it
    /// was and the error names the path.
    pub fn finish(
        self,
        write: impl FnOnce(&mut Cursor<Vec<u8>>) -> std::io::Result<()>,
    ) -> Result<()> {
        let Self { path, target } = self;
        let fail = |source| Error::write(&path, source);
        let mut contents = Cursor::new(Vec::new());
        write(&mut contents).map_err(fail)?;
        let contents = contents.into_inner();
        match target {
            Target::Replace {
                mut temporary,
                file,
            } => {
                let out = temporary.file();
                out.write_all(&contents)
                    .and_then(|()| out.sync_all())
                    .map_err(fail)?;
                temporary
                    .persist(&mut *unless_cancelled()?, &file)
                    .map_err(fail)
            }
            Target::InPlace(file) => {
                let _live = unless_cancelled()?;
                // The new contents over the old, then the old tail cut:
                // the file is never empty on the way.
                file.write_all_at(&contents, 0)
                    .and_then(|()| file.set_len(contents.len() as u64))
                    .and_then(|()| file.sync_all())
                    .map_err(fail)
            }
            // Not under the lock: a FIFO blocks until it has a reader, and
            // a signal must still be able to end the run meanwhile.
            Target::Stream(device) => {
                drop(unless_cancelled()?);
                OpenOptions::new()
                    .write(true)
                    .open(device)
                    .and_then(|mut out| out.write_all(&contents).and_then(|()| out.flush()))
                    .map_err(fail)
            }
            Target::Stdout => {
                drop(unless_cancelled()?);
                let mut out = std::io::stdout().lock();
                out.write_all(&contents)
                    .and_then(|()| out.flush())
                    .map_err(fail)
            }
        }
    }
}

/// A temporary file that will replace a file, known to [`cancel`] until it
/// is renamed into place or removed.
struct Temporary(Option<NamedTempFile>);

impl Temporary {
    /// A new temporary file beside `file`, created exclusively under a
    /// random name, with `old`'s owner, group and permissions where it
    /// replaces a file, else with the permissions a new file gets.
    fn beside(file: &Path, old: Option<&Metadata>) -> std::io::Result<Self> {
        let folder = match file.parent() {
            Some(folder) if !folder.as_os_str().is_empty() => folder,
            _ => Path::new("."),
        };
        let name = file
            .file_name()
            .ok_or(std::io::ErrorKind::InvalidInput)?
            .as_encoded_bytes();
        // `.` + name + `.` + six random characters + `.tmp` within NAME_MAX.
        let mut prefix = OsString::from(".");
        prefix.push(OsStr::from_bytes(&name[..name.len().min(NAME_MAX - 12)]));
        prefix.push(".");
        let created = tempfile::Builder::new()
            .prefix(&prefix)
            .suffix(".tmp")
            .rand_bytes(6)
            .permissions(fs::Permissions::from_mode(0o666))
            .tempfile_in(folder)
            // The folder's fault, said without the random name tried.
            .map_err(|error| {
                let cause = fs::metadata(folder)
                    .err()
                    .map_or_else(|| error.kind().to_string(), |missing| missing.to_string());
                let why = format!("no file can be made in {}: {cause}", folder.display());
                std::io::Error::new(error.kind(), why)
            })?;
        live().temporaries.push(created.path().to_path_buf());
        let mut temporary = Self(Some(created));
        if let Some(old) = old {
            keep_owner_and_mode(temporary.file(), old)?;
        }
        Ok(temporary)
    }

    fn file(&mut self) -> &mut File {
        self.0
            .as_mut()
            .expect("a temporary file in use")
            .as_file_mut()
    }

    /// Renames the temporary file to `file`, under the lock `live`.
    fn persist(mut self, live: &mut Live, file: &Path) -> std::io::Result<()> {
        let temporary = self.0.take().expect("a temporary file in use");
        live.temporaries.retain(|known| known != temporary.path());
        temporary
            .persist(file)
            .map(drop)
            .map_err(|failed| failed.error)
    }
}

impl Drop for Temporary {
    fn drop(&mut self) {
        if let Some(temporary) = self.0.take() {
            let path = temporary.path().to_path_buf();
            // Removed first: a signal in between still finds it listed.
            drop(temporary);
            live().temporaries.retain(|known| *known != path);
        }
    }
}

/// The lock under which outputs are put in place, once it is certain the
/// run was not cancelled: [`cancel`] takes it too, so a file is either in
/// place before the cancel or never.
fn unless_cancelled() -> Result<MutexGuard<'static, Live>> {
    let live = live();
    if live.cancelled {
        return Err(Error::Interrupted);
    }
    Ok(live)
}

/// Whether `path` names standard output: `-`, or another name of the file
/// or pipe it is (`/dev/stdout`, `/dev/fd/1`), which the program's own
/// messages must then keep out of. A terminal or `/dev/null` is written
/// through its name like any device, and the messages stay where they
/// are, unless standard output was closed (and so is `/dev/null` only in
/// name).
pub fn is_stdout(path: &Path) -> bool {
    if path == Path::new("-") {
        return true;
    }
    let stdout = std::io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .and_then(|fd| File::from(fd).metadata());
    match (fs::metadata(path), stdout) {
        (Ok(named), Ok(stdout)) => {
            (named.dev(), named.ino()) == (stdout.dev(), stdout.ino())
                && (!named.file_type().is_char_device() || console::stdout_was_closed())
        }
        _ => false,
    }
}

/// Writes `contents` to `path` as [`Pending`] does.
pub fn write(path: &Path, contents: &[u8]) -> Result<()> {
    Pending::create(path)?.finish(|writer| writer.write_all(contents))
}

/// Cancels every output: the temporary files are removed and nothing is
/// put in place from now on. For a signal, from any thread.
pub fn cancel() {
    let mut live = live();
    live.cancelled = true;
    for temporary in live.temporaries.drain(..) {
        let _ = fs::remove_file(temporary);
    }
}

/// How an existing regular file is written: replaced by a temporary file
/// that has its owner, group and permissions, or in place where no such
/// file can be made. Opening it for writing first refuses one that may not
/// be written, before the work.
fn existing(path: &Path, metadata: &Metadata) -> Result<Target> {
    let fail = |source| Error::write(path, source);
    let file = follow_links(path)?;
    let opened = OpenOptions::new().write(true).open(&file).map_err(fail)?;
    match Temporary::beside(&file, Some(metadata)) {
        Ok(temporary) => Ok(Target::Replace { temporary, file }),
        Err(error) if error.kind() == std::io::ErrorKind::PermissionDenied => {
            Ok(Target::InPlace(opened))
        }
        Err(source) => Err(fail(source)),
    }
}

/// Gives `new` the owner, group and mode of `old`, through its open file
/// rather than its name, which another user could swap for a link; the
/// mode last, since a change of owner clears the set-user-ID and
/// set-group-ID bits.
fn keep_owner_and_mode(new: &File, old: &Metadata) -> std::io::Result<()> {
    let ours = new.metadata()?;
    if (ours.uid(), ours.gid()) != (old.uid(), old.gid()) {
        std::os::unix::fs::fchown(new, Some(old.uid()), Some(old.gid()))?;
    }
    new.set_permissions(old.permissions())
}

/// The path at the end of any symbolic links from `path` (itself when it
/// is none); a link that leads nowhere yet ends at the file it names.
fn follow_links(path: &Path) -> Result<PathBuf> {
    let mut end = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match fs::symlink_metadata(&end) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                let next = fs::read_link(&end).map_err(|source| Error::write(path, source))?;
                end = match end.parent() {
                    Some(folder) => folder.join(next),
                    None => next,
                };
            }
            _ => return Ok(end),
        }
    }
    Err(Error::write(
        path,
        std::io::Error::other("too many levels of symbolic links"),
    ))
}

/// What a path that is no file, FIFO or character device is, for the
/// error that refuses it.
fn describe(kind: fs::FileType) -> &'static str {
    if kind.is_dir() {
        "a folder"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "neither a file nor a stream"
    }
}
