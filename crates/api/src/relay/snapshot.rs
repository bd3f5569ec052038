//! The dispatcher's in-memory view of the channels: which enabled channels serve a (group,
//! model), with their priority and weight, and how to reach each of them.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;
use switchboard_domain::channel::{parse_csv, ChannelStatus, ModelMapping};
use switchboard_domain::channel_settings::parse_disabled_stream;
use switchboard_domain::dispatch::Candidate;
use switchboard_relay::provider::{ChannelTarget, Provider};
use switchboard_store::channels::ChannelRow;

#[derive(Debug, Clone)]
pub struct ChannelInfo {
    pub id: i64,
    pub name: String,
    pub channel_type: i32,
    pub status: i32,
    pub auto_ban: bool,
    /// Whether root last set the destination; when not, upstream calls follow the outbound URL
    /// policy ([`super::channel_client`]).
    pub destination_by_root: bool,
    /// `None` when the channel's upstream family is not implemented yet.
    pub provider: Option<Provider>,
    pub target: ChannelTarget,
}

#[derive(Debug, Default)]
pub struct Snapshot {
    by_id: foldhash::HashMap<i64, Arc<ChannelInfo>>,
    /// group -> model -> enabled candidates (two maps, so that a look-up borrows the names
    /// rather than building a `(String, String)` key: two allocations a request).
    exact: foldhash::HashMap<String, foldhash::HashMap<String, Vec<Candidate>>>,
    /// group -> (model prefix of a `prefix*` entry, candidate), longest prefix first.
    wildcard: foldhash::HashMap<String, Vec<(String, Candidate)>>,
}

/// Upstream calls without a response within this time fail (and may retry elsewhere).
pub const UPSTREAM_TIMEOUT: Duration = Duration::from_secs(300);

impl Snapshot {
    pub fn build(rows: Vec<ChannelRow>) -> Snapshot {
        let mut s = Snapshot::default();
        for r in rows {
            let mapping = ModelMapping::parse(&r.model_mapping).unwrap_or_default();
            let headers: Vec<(String, String)> =
                serde_json::from_str::<HashMap<String, String>>(&r.custom_headers)
                    .map(|m| m.into_iter().collect())
                    .unwrap_or_default();
            let config = match serde_json::from_str(&r.config) {
                Ok(serde_json::Value::Object(o)) => o,
                _ => serde_json::Map::new(),
            };
            let info = ChannelInfo {
                id: r.id,
                name: r.name.clone(),
                channel_type: r.channel_type,
                status: r.status,
                auto_ban: r.auto_ban,
                destination_by_root: r.destination_by_root,
                provider: Provider::for_channel(r.channel_type, &config),
                target: ChannelTarget {
                    id: r.id,
                    channel_type: r.channel_type,
                    base_url: r.base_url.clone(),
                    key: r.key.clone(),
                    custom_headers: headers,
                    proxy: Some(r.proxy.clone()).filter(|p| !p.is_empty()),
                    model_mapping: mapping
                        .iter()
                        .map(|(a, b)| (a.to_owned(), b.to_owned()))
                        .collect(),
                    timeout: UPSTREAM_TIMEOUT,
                    config,
                    disabled_stream: parse_disabled_stream(&r.disabled_stream),
                    urls: Default::default(),
                },
            };
            if r.status == ChannelStatus::Enabled.as_i32() {
                let cand = Candidate {
                    id: r.id,
                    priority: r.priority,
                    weight: u32::try_from(r.weight).unwrap_or(1),
                };
                for g in parse_csv(&r.group_name) {
                    for m in parse_csv(&r.models) {
                        match m.strip_suffix('*') {
                            Some(prefix) => s
                                .wildcard
                                .entry(g.clone())
                                .or_default()
                                .push((prefix.to_owned(), cand)),
                            None => s
                                .exact
                                .entry(g.clone())
                                .or_default()
                                .entry(m)
                                .or_default()
                                .push(cand),
                        }
                    }
                }
            }
            s.by_id.insert(r.id, Arc::new(info));
        }
        for list in s.wildcard.values_mut() {
            list.sort_by_key(|e| std::cmp::Reverse(e.0.len()));
        }
        s
    }

    pub fn channel(&self, id: i64) -> Option<Arc<ChannelInfo>> {
        self.by_id.get(&id).cloned()
    }

    /// The enabled channels that serve `model` in `group`: exact entries, else the longest
    /// matching `prefix*` entries.
    pub fn candidates(&self, group: &str, model: &str) -> Vec<Candidate> {
        if let Some(c) = self.exact.get(group).and_then(|models| models.get(model)) {
            return c.clone();
        }
        let Some(w) = self.wildcard.get(group) else {
            return Vec::new();
        };
        let Some(best) = w
            .iter()
            .find(|(p, _)| model.starts_with(p.as_str()))
            .map(|(p, _)| p.len())
        else {
            return Vec::new();
        };
        w.iter()
            .filter(|(p, _)| p.len() == best && model.starts_with(p.as_str()))
            .map(|(_, c)| *c)
            .collect()
    }

    /// The concrete model names offered to a group (wildcard entries are not listed).
    pub fn models(&self, group: &str) -> Vec<String> {
        let set: BTreeSet<&String> = self
            .exact
            .get(group)
            .map(|models| models.keys().collect())
            .unwrap_or_default();
        set.into_iter().cloned().collect()
    }
}
