//! Where the bench's reports go: the JSON, the Markdown tables and the
//! plots, each opened before the sweep and written after it.

use std::fs;
use std::io::Write;
use std::path::PathBuf;

use crate::console::say;
use crate::error::{Error, Result};
use crate::output::{self, Pending};

use super::json::Report;
use super::markdown;
use super::plot;

/// Where the report goes.
#[derive(Clone, Debug, Default)]
pub struct Outputs {
    /// The JSON report.
    pub json: Option<PathBuf>,
    /// The directory of the plots.
    pub plots: Option<PathBuf>,
    /// The Markdown tables.
    pub markdown: Option<PathBuf>,
}

/// The outputs, created before the sweep so that a bad path fails at once
/// rather than after it, and written whole or not at all after it: an
/// existing report survives any failure.
pub(super) struct OpenOutputs {
    json: Option<Pending>,
    plots: Option<PathBuf>,
    markdown: Option<Pending>,
}

impl OpenOutputs {
    pub(super) fn open(outputs: &Outputs) -> Result<Self> {
        let json = outputs.json.as_deref().map(Pending::create).transpose()?;
        let markdown = outputs
            .markdown
            .as_deref()
            .map(Pending::create)
            .transpose()?;
        if let Some(dir) = &outputs.plots {
            fs::create_dir_all(dir).map_err(|source| Error::write(dir, source))?;
            // A plot's name is known only once the sweep has run; a probe
            // proves now that the folder takes files.
            drop(Pending::create(&dir.join("roofline.svg"))?);
        }
        Ok(Self {
            json,
            plots: outputs.plots.clone(),
            markdown,
        })
    }

    /// Writes every report, then says which: a closed standard output
    /// loses none of them.
    pub(super) fn write(self, report: &Report) -> Result<()> {
        let mut written = Vec::new();
        if let Some(json) = self.json {
            let path = json.path().to_path_buf();
            json.finish(|writer| {
                serde_json::to_writer_pretty(&mut *writer, report)?;
                writeln!(writer)
            })?;
            written.push(path);
        }
        if let Some(markdown) = self.markdown {
            let path = markdown.path().to_path_buf();
            markdown.finish(|writer| writer.write_all(markdown::render(report).as_bytes()))?;
            written.push(path);
        }
        if let Some(dir) = self.plots {
            for (name, svg) in plot::all(report)? {
                let path = dir.join(name);
                output::write(&path, svg.as_bytes())?;
                written.push(path);
            }
        }
        for path in written {
            say!("wrote {}", path.display())?;
        }
        Ok(())
    }
}
