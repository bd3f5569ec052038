//! Secrets at rest: channel keys and secret settings are stored sealed (`crate::crypto::SecretBox`)
//! and opened where they are used; API keys are sealed by `crate::crypto::KeyBox`. The store only
//! ever sees sealed text: this module and the handlers seal before writing and open after reading.
//!
//! [`seal_stored_secrets`] runs at every start, before the settings and channels are loaded:
//! it seals the channel keys and secret settings still stored in clear (written before sealing
//! existed, or by an older node), and re-seals under the current server secret what was sealed
//! under one of `SESSION_SECRET_PREVIOUS` (API keys too, when previous secrets are given). Every
//! write is conditional on the value read, so several nodes starting together, or a run cut
//! short, leave nothing half done: the pass is idempotent.

use crate::crypto::Reseal;
use crate::error::{ApiError, ApiResult};
use crate::AppState;
use actix_web::http::StatusCode;
use std::collections::HashSet;
use std::sync::Mutex;
use switchboard_domain::ErrorCode;
use switchboard_store::{channels, options, payments, tokens};

/// Whether the setting `key` is a secret one (write-only in the catalogue): stored sealed.
pub fn is_secret_option(key: &str) -> bool {
    switchboard_domain::options::find(key).is_some_and(|d| d.secret)
}

/// The refusal when a stored channel key cannot be opened: the relay leaves the channel out,
/// and the operations that would send it upstream answer this instead of sending garbage.
pub fn key_unavailable(id: i64) -> ApiError {
    ApiError::new(
        StatusCode::CONFLICT,
        ErrorCode::KeyUnavailable,
        format!(
            "the key of channel {id} cannot be opened: it was sealed under a server secret this \
             node does not know (SESSION_SECRET changed? list the old secret in \
             SESSION_SECRET_PREVIOUS) or it is damaged; enter the key again"
        ),
    )
}

/// What cannot be opened and was already reported, so that the periodic reloads log each
/// unreadable value once rather than every `SYNC_FREQUENCY`.
#[derive(Debug, Default)]
pub struct Reported(Mutex<HashSet<String>>);

impl Reported {
    /// True the first time `what` (a name and the stored value's digest) is seen.
    pub fn first_time(&self, what: &str, stored: &str) -> bool {
        let id = format!("{what}:{}", crate::crypto::key_digest(stored));
        match self.0.lock() {
            Ok(mut g) => g.insert(id),
            Err(p) => p.into_inner().insert(id),
        }
    }
}

/// Opens the keys of stored channel rows for the relay's snapshot. A row whose key cannot be
/// opened is left out (never sent upstream) and logged once.
pub fn open_channel_keys(
    state: &AppState,
    rows: Vec<channels::ChannelRow>,
) -> Vec<channels::ChannelRow> {
    rows.into_iter()
        .filter_map(|mut r| match state.secret_box.open(&r.key) {
            Ok(plain) => {
                r.key = plain;
                Some(r)
            }
            Err(e) => {
                if state
                    .unreadable
                    .first_time(&format!("channel {}", r.id), &r.key)
                {
                    tracing::error!(
                        channel = r.id,
                        name = %r.name,
                        "channel left out of the relay: its key is {e}; enter the key again"
                    );
                }
                None
            }
        })
        .collect()
}

/// The plain key of a stored channel row, or [`key_unavailable`].
pub fn channel_key(state: &AppState, row: &channels::ChannelRow) -> ApiResult<String> {
    state
        .secret_box
        .open(&row.key)
        .map_err(|_| key_unavailable(row.id))
}

/// What [`seal_stored_secrets`] did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SealReport {
    /// Channel keys sealed or re-sealed.
    pub channel_keys: usize,
    /// Secret settings sealed or re-sealed.
    pub settings: usize,
    /// Payment gateway configurations (merchant keys) re-sealed.
    pub payment_configs: usize,
    /// API keys re-sealed under the current secret.
    pub api_keys: usize,
    /// What no known secret opens: `channel 12`, `setting SMTPToken`, `API key 7`.
    pub unreadable: Vec<String>,
}

/// API keys handled per batch (each batch one read, then one conditional write per key).
const TOKEN_BATCH: i64 = 500;

/// Seals what is still stored in clear and re-seals what was sealed under a previous secret
/// (see the module documentation). Values no known secret opens are left as they are and
/// reported (and logged).
pub async fn seal_stored_secrets(state: &AppState) -> ApiResult<SealReport> {
    let rotating = !state.config.previous_secrets.is_empty();
    let (channel_rows, secret_rows, payment_rows) = state
        .db(|c| {
            Ok((
                channels::keys(c)?,
                options::all(c)?
                    .into_iter()
                    .filter(|(k, _)| is_secret_option(k))
                    .collect::<Vec<_>>(),
                payments::configs(c)?,
            ))
        })
        .await?;
    let mut out = SealReport::default();
    let mut channel_writes = Vec::new();
    for (id, key) in channel_rows {
        match state.secret_box.reseal(&key) {
            Reseal::Current => {}
            Reseal::Replace(new) => channel_writes.push((id, key, new)),
            Reseal::Unreadable => out.unreadable.push(format!("channel {id}")),
        }
    }
    let mut setting_writes = Vec::new();
    for (name, value) in secret_rows {
        match state.secret_box.reseal(&value) {
            Reseal::Current => {}
            Reseal::Replace(new) => setting_writes.push((name, value, new)),
            Reseal::Unreadable => out.unreadable.push(format!("setting {name}")),
        }
    }
    // Gateway configurations are written sealed from the start: only re-sealing applies.
    let mut payment_writes = Vec::new();
    for (id, config) in payment_rows {
        match state.secret_box.reseal(&config) {
            Reseal::Current => {}
            Reseal::Replace(new) => payment_writes.push((id, config, new)),
            Reseal::Unreadable => out.unreadable.push(format!("payment gateway {id}")),
        }
    }
    if !channel_writes.is_empty() || !setting_writes.is_empty() || !payment_writes.is_empty() {
        let (ch, st, pg) = state
            .db(move |c| {
                let mut ch = 0;
                for (id, old, new) in &channel_writes {
                    ch += usize::from(channels::replace_key(c, *id, old, new)?);
                }
                let mut st = 0;
                for (name, old, new) in &setting_writes {
                    st += usize::from(options::replace(c, name, old, new)?);
                }
                let mut pg = 0;
                for (id, old, new) in &payment_writes {
                    pg += usize::from(payments::replace_config(c, *id, old, new)?);
                }
                Ok((ch, st, pg))
            })
            .await?;
        out.channel_keys = ch;
        out.settings = st;
        out.payment_configs = pg;
    }
    if rotating {
        let mut after = 0;
        loop {
            let batch = state
                .db(move |c| Ok(tokens::ciphertexts_after(c, after, TOKEN_BATCH)?))
                .await?;
            let Some(last) = batch.last().map(|(id, _)| *id) else {
                break;
            };
            let full = batch.len() == usize::try_from(TOKEN_BATCH).unwrap_or(usize::MAX);
            let mut writes = Vec::new();
            for (id, sealed) in batch {
                match state.key_box.reseal(&sealed) {
                    Reseal::Current => {}
                    Reseal::Replace(new) => writes.push((id, sealed, new)),
                    // API keys keep working without it (lookup is by digest); only showing
                    // them again is lost.
                    Reseal::Unreadable => out.unreadable.push(format!("API key {id}")),
                }
            }
            if !writes.is_empty() {
                out.api_keys += state
                    .db(move |c| {
                        let mut n = 0;
                        for (id, old, new) in &writes {
                            n += usize::from(tokens::replace_ciphertext(c, *id, old, new)?);
                        }
                        Ok(n)
                    })
                    .await?;
            }
            if !full {
                break;
            }
            after = last;
        }
    }
    if out.channel_keys + out.settings + out.payment_configs + out.api_keys > 0 {
        tracing::info!(
            channel_keys = out.channel_keys,
            settings = out.settings,
            payment_configs = out.payment_configs,
            api_keys = out.api_keys,
            "secrets at rest sealed under the current server secret"
        );
    }
    if !out.unreadable.is_empty() {
        tracing::error!(
            count = out.unreadable.len(),
            which = %out.unreadable.iter().take(20).cloned().collect::<Vec<_>>().join(", "),
            "stored secrets no known server secret opens (SESSION_SECRET changed? list the old \
             secret in SESSION_SECRET_PREVIOUS): such channels are left out of the relay, such \
             settings are treated as unset, such API keys cannot be shown again"
        );
    }
    Ok(out)
}
