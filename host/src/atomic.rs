//! Files written whole or not at all: the contents go to a temporary file
//! beside the target, which replaces it only once complete. A run that
//! fails, or is stopped, at any point leaves an existing file as it was.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// A file being written: created before the work whose result it will
/// hold, so that a path that cannot be written fails before the work does.
pub struct Pending {
    path: PathBuf,
    temporary: PathBuf,
    file: Option<File>,
}

impl Pending {
    /// Creates the temporary file beside `path`; `path` itself is not
    /// touched.
    pub fn create(path: &Path) -> Result<Self> {
        let name = path
            .file_name()
            .ok_or_else(|| Error::write(path, std::io::ErrorKind::InvalidInput.into()))?;
        let mut temporary_name = std::ffi::OsString::from(".");
        temporary_name.push(name);
        temporary_name.push(format!(".{}.tmp", std::process::id()));
        let temporary = path.with_file_name(temporary_name);
        let file = File::create(&temporary).map_err(|source| Error::write(path, source))?;
        Ok(Self {
            path: path.to_path_buf(),
            temporary,
            file: Some(file),
        })
    }

    /// The path the file will have once finished.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes the contents with `write` and puts the file in place; on any
    /// error the temporary file is removed and `path` is left as it was.
    pub fn finish(
        mut self,
        write: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>,
    ) -> Result<()> {
        let file = self.file.take().expect("a pending file is finished once");
        let mut writer = BufWriter::new(file);
        write(&mut writer)
            .and_then(|()| writer.flush())
            .and_then(|()| writer.get_ref().sync_all())
            .and_then(|()| fs::rename(&self.temporary, &self.path))
            .map_err(|source| Error::write(&self.path, source))
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        // After a successful rename there is nothing left to remove.
        let _ = fs::remove_file(&self.temporary);
    }
}

/// Writes `contents` to `path` whole or not at all.
pub fn write(path: &Path, contents: &[u8]) -> Result<()> {
    Pending::create(path)?.finish(|writer| writer.write_all(contents))
}
