//! Every file the program writes (pictures, JSON, Markdown, plots) goes
//! through here, and what happens depends on what the path names:
//!
//! - a regular file, or nothing yet: the contents go to a temporary file
//!   beside it, which replaces it only once complete, with the old file's
//!   permissions; a run that fails or is stopped leaves it as it was;
//! - a symbolic link: the same, to the file the link leads to, so that the
//!   link stays a link (as `cp` and image tools write through it);
//! - a FIFO or a character device (`/dev/null`, a terminal), or `-` for
//!   standard output: written in place, as a stream, once the contents are
//!   ready; a write error (`/dev/full`) is an error, never success;
//! - anything else (a folder, a block device, a socket): refused before
//!   any work is done.
//!
//! No output ever replaces anything but a regular file. Temporary files
//! are removed on every path out, a second Ctrl-C included
//! ([`remove_temporaries`]).

use std::fs::{self, File, Permissions};
use std::io::{Cursor, Write};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::console;
use crate::error::{Error, Result};

/// The temporary files of the outputs being written, for
/// [`remove_temporaries`].
static TEMPORARIES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Symbolic links followed before a path is taken for a loop, as Linux's
/// own limit.
const MAX_LINKS: usize = 40;

/// Where an output's contents go.
enum Target {
    /// A regular file replaced whole: the temporary file beside it, and the
    /// file itself (the end of any symbolic links).
    Replace { temporary: PathBuf, file: PathBuf },
    /// A FIFO or character device, written in place.
    Stream(PathBuf),
    /// Standard output (`-`).
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
        let target = if is_stdout(path) {
            console::hand_stdout_over();
            Target::Stdout
        } else {
            let end = follow_links(path)?;
            match fs::metadata(&end) {
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                    replace(path, &end, None)?
                }
                Err(source) => return Err(Error::write(path, source)),
                Ok(metadata) => {
                    let kind = metadata.file_type();
                    if kind.is_file() {
                        replace(path, &end, Some(metadata.permissions()))?
                    } else if kind.is_fifo() || kind.is_char_device() {
                        Target::Stream(end)
                    } else {
                        return Err(Error::OutputKind {
                            path: path.to_path_buf(),
                            kind: describe(kind),
                        });
                    }
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
    /// error a regular file is left as it was and the error names the path.
    pub fn finish(
        self,
        write: impl FnOnce(&mut Cursor<Vec<u8>>) -> std::io::Result<()>,
    ) -> Result<()> {
        let mut contents = Cursor::new(Vec::new());
        write(&mut contents).map_err(|source| Error::write(&self.path, source))?;
        let contents = contents.into_inner();
        let written = match &self.target {
            Target::Replace { temporary, file } => fs::OpenOptions::new()
                .write(true)
                .open(temporary)
                .and_then(|mut out| {
                    out.write_all(&contents)?;
                    out.sync_all()
                })
                .and_then(|()| fs::rename(temporary, file)),
            Target::Stream(device) => fs::OpenOptions::new()
                .write(true)
                .open(device)
                .and_then(|mut out| out.write_all(&contents).and_then(|()| out.flush())),
            Target::Stdout => {
                let mut out = std::io::stdout().lock();
                out.write_all(&contents).and_then(|()| out.flush())
            }
        };
        written.map_err(|source| Error::write(&self.path, source))
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if let Target::Replace { temporary, .. } = &self.target {
            // After a successful rename there is nothing left to remove.
            let _ = fs::remove_file(temporary);
            forget_temporary(temporary);
        }
    }
}

/// Whether `path` names standard output.
pub fn is_stdout(path: &Path) -> bool {
    path == Path::new("-")
}

/// Writes `contents` to `path` as [`Pending`] does.
pub fn write(path: &Path, contents: &[u8]) -> Result<()> {
    Pending::create(path)?.finish(|writer| writer.write_all(contents))
}

/// Removes every temporary file still being written: for an exit that
/// skips the destructors (a second Ctrl-C).
pub fn remove_temporaries() {
    let temporaries = TEMPORARIES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    for temporary in temporaries.iter() {
        let _ = fs::remove_file(temporary);
    }
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

/// A temporary file beside `file` that will replace it, created now with
/// `permissions` (the old file's) where it had some.
fn replace(path: &Path, file: &Path, permissions: Option<Permissions>) -> Result<Target> {
    let name = file
        .file_name()
        .ok_or_else(|| Error::write(path, std::io::ErrorKind::InvalidInput.into()))?;
    let mut temporary_name = std::ffi::OsString::from(".");
    temporary_name.push(name);
    temporary_name.push(format!(".{}.tmp", std::process::id()));
    let temporary = file.with_file_name(temporary_name);
    let created = File::create(&temporary).map_err(|source| Error::write(path, source))?;
    remember_temporary(&temporary);
    if let Some(permissions) = permissions
        && let Err(source) = created.set_permissions(permissions)
    {
        let _ = fs::remove_file(&temporary);
        forget_temporary(&temporary);
        return Err(Error::write(path, source));
    }
    Ok(Target::Replace {
        temporary,
        file: file.to_path_buf(),
    })
}

fn remember_temporary(temporary: &Path) {
    let mut temporaries = TEMPORARIES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    temporaries.push(temporary.to_path_buf());
}

fn forget_temporary(temporary: &Path) {
    let mut temporaries = TEMPORARIES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    temporaries.retain(|known| known != temporary);
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
