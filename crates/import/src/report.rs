//! What an import did (or, in a dry run, would do), per kind of row.

use std::fmt;

/// A row left out, with its id in the source and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skip {
    pub id: String,
    pub reason: String,
}

/// The outcome for one kind of row.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KindReport {
    pub kind: &'static str,
    pub inserted: usize,
    pub updated: usize,
    pub unchanged: usize,
    pub skipped: Vec<Skip>,
    /// What was converted with an assumption, or not converted, beyond single rows.
    pub notes: Vec<String>,
    /// Set when the kind as a whole failed: its transaction was rolled back (nothing of it was
    /// written) and the other kinds went on.
    pub failed: Option<String>,
}

impl KindReport {
    pub fn new(kind: &'static str) -> KindReport {
        KindReport {
            kind,
            ..KindReport::default()
        }
    }

    pub fn skip(&mut self, id: impl fmt::Display, reason: impl Into<String>) {
        self.skipped.push(Skip {
            id: id.to_string(),
            reason: reason.into(),
        });
    }
}

/// The whole import.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub from: crate::Origin,
    pub dry_run: bool,
    pub kinds: Vec<KindReport>,
}

impl Report {
    pub fn kind(&self, kind: &str) -> Option<&KindReport> {
        self.kinds.iter().find(|k| k.kind == kind)
    }

    /// Whether some kind failed as a whole (the command then exits non-zero).
    pub fn has_failures(&self) -> bool {
        self.kinds.iter().any(|k| k.failed.is_some())
    }

    /// Rows inserted or updated over every kind.
    pub fn changes(&self) -> usize {
        self.kinds.iter().map(|k| k.inserted + k.updated).sum()
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (ins, upd) = if self.dry_run {
            ("would insert", "would update")
        } else {
            ("inserted", "updated")
        };
        writeln!(
            f,
            "Import from {}{}",
            self.from,
            if self.dry_run {
                " (dry run: nothing was written)"
            } else {
                ""
            }
        )?;
        for k in &self.kinds {
            write!(
                f,
                "{:<12} {ins} {}, {upd} {}, unchanged {}, skipped {}",
                format!("{}:", k.kind),
                k.inserted,
                k.updated,
                k.unchanged,
                k.skipped.len()
            )?;
            match &k.failed {
                Some(e) => writeln!(f, " -- FAILED, nothing of this kind written: {e}")?,
                None => writeln!(f)?,
            }
            for s in &k.skipped {
                writeln!(f, "    skipped {} id={}: {}", k.kind, s.id, s.reason)?;
            }
            for n in &k.notes {
                writeln!(f, "    note: {n}")?;
            }
        }
        Ok(())
    }
}
