//! The read-only side: a connection to the one-api / one-hub database and a small reader that
//! works on all three backends. Every column is read as text (`CAST(.. AS TEXT)`, MySQL `CHAR`)
//! and parsed here, so booleans (PostgreSQL `boolean`, MySQL `tinyint`, SQLite integers),
//! numbers and JSON read the same way whatever the backend; columns a version of the schema
//! lacks read as NULL (their defaults apply).

use crate::ImportError;
use diesel::connection::SimpleConnection;
use diesel::sql_types::{Nullable, Text};
use diesel::{Connection, MysqlConnection, PgConnection, QueryableByName, RunQueryDsl};
use std::collections::{HashMap, HashSet};
use switchboard_store::conn::{Backend, Dsn};
use switchboard_store::DbConn;

/// The most columns one read may name (the width of [`Wide`]).
pub const MAX_COLUMNS: usize = 32;

/// Opens the source database read-only: SQLite with `mode=ro` (and `query_only`), PostgreSQL
/// and MySQL with read-only sessions. A SQLite path that does not exist is an error (nothing is
/// created).
pub fn connect(dsn: &str) -> Result<DbConn, ImportError> {
    let dsn = Dsn::parse(dsn).map_err(|e| ImportError::Source(format!("--dsn: {e}")))?;
    let fail = |e: &dyn std::fmt::Display| ImportError::Source(format!("cannot open --dsn: {e}"));
    match dsn.backend {
        Backend::Sqlite => {
            let path = std::path::Path::new(&dsn.url);
            if !path.is_file() {
                return Err(ImportError::Source(format!(
                    "--dsn: no SQLite database file at {}",
                    path.display()
                )));
            }
            let mut escaped = String::new();
            for ch in dsn.url.chars() {
                match ch {
                    '?' => escaped.push_str("%3f"),
                    '#' => escaped.push_str("%23"),
                    '%' => escaped.push_str("%25"),
                    c => escaped.push(c),
                }
            }
            let mut c = diesel::SqliteConnection::establish(&format!("file:{escaped}?mode=ro"))
                .map_err(|e| fail(&e))?;
            c.batch_execute("PRAGMA query_only = ON; PRAGMA busy_timeout = 5000;")
                .map_err(|e| fail(&e))?;
            Ok(DbConn::Sqlite(c))
        }
        Backend::Postgres => {
            let mut c = PgConnection::establish(&dsn.url).map_err(|e| fail(&e))?;
            c.batch_execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
                .map_err(|e| fail(&e))?;
            Ok(DbConn::Pg(c))
        }
        Backend::Mysql => {
            let mut c = MysqlConnection::establish(&dsn.url).map_err(|e| fail(&e))?;
            c.batch_execute("SET SESSION TRANSACTION READ ONLY")
                .map_err(|e| fail(&e))?;
            Ok(DbConn::Mysql(c))
        }
    }
}

#[derive(QueryableByName)]
struct ColumnName {
    #[diesel(sql_type = Text)]
    name: String,
}

/// One row of up to [`MAX_COLUMNS`] text columns, `c0`..`c31` (the reader aliases them).
#[derive(QueryableByName)]
#[rustfmt::skip]
struct Wide {
    #[diesel(sql_type = Nullable<Text>)] c0: Option<String>,
    #[diesel(sql_type = Nullable<Text>)] c1: Option<String>,
    #[diesel(sql_type = Nullable<Text>)] c2: Option<String>,
    #[diesel(sql_type = Nullable<Text>)] c3: Option<String>,
    #[diesel(sql_type = Nullable<Text>)] c4: Option<String>,
    #[diesel(sql_type = Nullable<Text>)] c5: Option<String>,
    #[diesel(sql_type = Nullable<Text>)] c6: Option<String>,
    #[diesel(sql_type = Nullable<Text>)] c7: Option<String>,
    #[diesel(sql_type = Nullable<Text>)] c8: Option<String>,
    #[diesel(sql_type = Nullable<Text>)] c9: Option<String>,
    #[diesel(sql_type = Nullable<Text>)] c10: Option<String>,
    #[diesel(sql_type = Nullable<Text>)] c11: Option<String>,
    #[diesel(sql_type = Nullable<Text>)] c12: Option<String>,
    #[diesel(sql_type = Nullable<Text>)] c13: Option<String>,
    #[diesel(sql_type = Nullable<Text>)] c14: Option<String>,
    #[diesel(sql_type = Nullable<Text>)] c15: Option<String>,
    #[diesel(sql_type = Nullable<Text>)] c16: Option<String>,
    #[diesel(sql_type = Nullable<Text>)] c17: Option<String>,
    #[diesel(sql_type = Nullable<Text>)] c18: Option<String>,
    #[diesel(sql_type = Nullable<Text>)] c19: Option<String>,
    #[diesel(sql_type = Nullable<Text>)] c20: Option<String>,
    #[diesel(sql_type = Nullable<Text>)] c21: Option<String>,
    #[diesel(sql_type = Nullable<Text>)] c22: Option<String>,
    #[diesel(sql_type = Nullable<Text>)] c23: Option<String>,
    #[diesel(sql_type = Nullable<Text>)] c24: Option<String>,
    #[diesel(sql_type = Nullable<Text>)] c25: Option<String>,
    #[diesel(sql_type = Nullable<Text>)] c26: Option<String>,
    #[diesel(sql_type = Nullable<Text>)] c27: Option<String>,
    #[diesel(sql_type = Nullable<Text>)] c28: Option<String>,
    #[diesel(sql_type = Nullable<Text>)] c29: Option<String>,
    #[diesel(sql_type = Nullable<Text>)] c30: Option<String>,
    #[diesel(sql_type = Nullable<Text>)] c31: Option<String>,
}

impl Wide {
    fn into_vec(self) -> Vec<Option<String>> {
        vec![
            self.c0, self.c1, self.c2, self.c3, self.c4, self.c5, self.c6, self.c7, self.c8,
            self.c9, self.c10, self.c11, self.c12, self.c13, self.c14, self.c15, self.c16,
            self.c17, self.c18, self.c19, self.c20, self.c21, self.c22, self.c23, self.c24,
            self.c25, self.c26, self.c27, self.c28, self.c29, self.c30, self.c31,
        ]
    }
}

/// The source database and what it holds.
pub struct Source {
    conn: DbConn,
    columns: HashMap<String, HashSet<String>>,
}

/// One source row: its columns by name (absent and NULL columns both read as `None`).
#[derive(Debug, Clone, Default)]
pub struct Row(HashMap<&'static str, String>);

impl Row {
    pub fn opt(&self, col: &str) -> Option<&str> {
        self.0.get(col).map(String::as_str)
    }

    pub fn str(&self, col: &str) -> String {
        self.opt(col).unwrap_or_default().to_owned()
    }

    /// An integer column; booleans read as 0/1 and decimals are truncated. `default` when NULL
    /// or absent (a value that is not a number is reported by [`Row::int_checked`]).
    pub fn int(&self, col: &str, default: i64) -> i64 {
        self.int_checked(col).ok().flatten().unwrap_or(default)
    }

    pub fn int_checked(&self, col: &str) -> Result<Option<i64>, String> {
        let Some(v) = self.opt(col).map(str::trim) else {
            return Ok(None);
        };
        match v {
            "true" | "t" => return Ok(Some(1)),
            "false" | "f" => return Ok(Some(0)),
            "" => return Ok(None),
            _ => {}
        }
        if let Ok(n) = v.parse::<i64>() {
            return Ok(Some(n));
        }
        match v.parse::<f64>() {
            Ok(f) if f.is_finite() => Ok(Some(f.trunc() as i64)),
            _ => Err(format!("{col} is not a number: {v:?}")),
        }
    }

    pub fn float(&self, col: &str, default: f64) -> f64 {
        self.opt(col)
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|f| f.is_finite())
            .unwrap_or(default)
    }

    pub fn bool(&self, col: &str, default: bool) -> bool {
        match self.opt(col).map(str::trim) {
            Some("1" | "true" | "t" | "TRUE") => true,
            Some("0" | "false" | "f" | "FALSE") => false,
            _ => default,
        }
    }

    /// The row's `id` as reported text.
    pub fn id(&self) -> String {
        self.str("id")
    }

    /// Whether GORM soft-deleted the row (`deleted_at` set).
    pub fn soft_deleted(&self) -> bool {
        self.opt("deleted_at").is_some_and(|v| !v.trim().is_empty())
    }
}

impl Source {
    pub fn open(dsn: &str) -> Result<Source, ImportError> {
        Ok(Source {
            conn: connect(dsn)?,
            columns: HashMap::new(),
        })
    }

    pub fn backend(&self) -> Backend {
        self.conn.backend()
    }

    /// The columns of `table` (empty when the table does not exist), lower case.
    pub fn columns(&mut self, table: &str) -> Result<&HashSet<String>, ImportError> {
        if !self.columns.contains_key(table) {
            let t = table.replace('\'', "''");
            let sql = match self.conn.backend() {
                Backend::Sqlite => format!("SELECT name AS name FROM pragma_table_info('{t}')"),
                Backend::Postgres => format!(
                    "SELECT CAST(column_name AS TEXT) AS name FROM information_schema.columns \
                     WHERE table_name = '{t}' AND table_schema = current_schema()"
                ),
                Backend::Mysql => format!(
                    "SELECT CAST(column_name AS CHAR) AS name FROM information_schema.columns \
                     WHERE table_name = '{t}' AND table_schema = DATABASE()"
                ),
            };
            let names: Vec<ColumnName> = diesel::sql_query(sql)
                .load(&mut self.conn)
                .map_err(|e| ImportError::Source(format!("reading the columns of {table}: {e}")))?;
            let set = names.into_iter().map(|n| n.name.to_lowercase()).collect();
            self.columns.insert(table.to_owned(), set);
        }
        Ok(&self.columns[table])
    }

    pub fn has_table(&mut self, table: &str) -> Result<bool, ImportError> {
        Ok(!self.columns(table)?.is_empty())
    }

    fn quote(&self, ident: &str) -> String {
        match self.conn.backend() {
            Backend::Mysql => format!("`{ident}`"),
            _ => format!("\"{ident}\""),
        }
    }

    /// Reads `cols` of every row of `table` (by id when it has one). `after_id` and `limit` page
    /// through big tables by id. Columns the table lacks read as `None`.
    pub fn read(
        &mut self,
        table: &'static str,
        cols: &[&'static str],
        page: Option<(i64, i64)>,
    ) -> Result<Vec<Row>, ImportError> {
        assert!(cols.len() <= MAX_COLUMNS, "at most {MAX_COLUMNS} columns");
        let present = self.columns(table)?.clone();
        if present.is_empty() {
            return Ok(Vec::new());
        }
        let text = match self.conn.backend() {
            Backend::Mysql => "CHAR",
            _ => "TEXT",
        };
        let mut select = Vec::with_capacity(MAX_COLUMNS);
        for i in 0..MAX_COLUMNS {
            match cols.get(i).filter(|c| present.contains(**c)) {
                Some(c) => select.push(format!("CAST({} AS {text}) AS c{i}", self.quote(c))),
                None => select.push(format!("CAST(NULL AS {text}) AS c{i}")),
            }
        }
        let mut sql = format!("SELECT {} FROM {}", select.join(", "), self.quote(table));
        if present.contains("id") {
            if let Some((after, _)) = page {
                sql.push_str(&format!(" WHERE {} > {after}", self.quote("id")));
            }
            sql.push_str(&format!(" ORDER BY {}", self.quote("id")));
            if let Some((_, limit)) = page {
                sql.push_str(&format!(" LIMIT {limit}"));
            }
        }
        let rows: Vec<Wide> = diesel::sql_query(sql)
            .load(&mut self.conn)
            .map_err(|e| ImportError::Source(format!("reading {table}: {e}")))?;
        Ok(rows
            .into_iter()
            .map(|w| {
                let mut m = HashMap::new();
                for (c, v) in cols.iter().zip(w.into_vec()) {
                    if let Some(v) = v {
                        m.insert(*c, v);
                    }
                }
                Row(m)
            })
            .collect())
    }
}
