//! Async tasks (Midjourney through a midjourney-proxy server, Suno through a Suno API server):
//! which action a submit is, the model name that prices and routes it, the speed mode, and how
//! the upstreams' answers read.

use serde_json::Value;

/// The speed mode a Midjourney client asked for with a path prefix (`/mj-fast/...`,
/// `/mj-turbo/...`, `/mj-relax/...`); `Default` is plain `/mj/...`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MjMode {
    Default,
    Fast,
    Turbo,
    Relax,
}

impl MjMode {
    pub const ALL: [MjMode; 4] = [MjMode::Default, MjMode::Fast, MjMode::Turbo, MjMode::Relax];

    /// The relay's path prefix for this mode (`/mj`, `/mj-fast`, ...), the same on the upstream.
    pub const fn prefix(self) -> &'static str {
        match self {
            MjMode::Default => "/mj",
            MjMode::Fast => "/mj-fast",
            MjMode::Turbo => "/mj-turbo",
            MjMode::Relax => "/mj-relax",
        }
    }

    /// The word inserted in the model name (`mj_turbo_imagine`), `None` for default and fast
    /// (fast is Midjourney's normal speed and is priced as such).
    pub const fn price_word(self) -> Option<&'static str> {
        match self {
            MjMode::Turbo => Some("turbo"),
            MjMode::Relax => Some("relax"),
            MjMode::Default | MjMode::Fast => None,
        }
    }

    pub const fn as_str(self) -> &'static str {
        match self {
            MjMode::Default => "",
            MjMode::Fast => "fast",
            MjMode::Turbo => "turbo",
            MjMode::Relax => "relax",
        }
    }
}

/// The action of a Midjourney submit route (`/mj/submit/{kind}`), reading the body where the
/// route alone does not say (`action`, `simple-change`, `change`). `None`: unknown route or a
/// body that names no known action.
pub fn mj_action(kind: &str, body: &Value) -> Option<&'static str> {
    match kind {
        "imagine" => Some("IMAGINE"),
        "blend" => Some("BLEND"),
        "describe" => Some("DESCRIBE"),
        "modal" => Some("MODAL"),
        "shorten" => Some("SHORTEN"),
        "action" => body
            .get("customId")
            .and_then(Value::as_str)
            .and_then(mj_action_from_custom_id),
        "change" => body
            .get("action")
            .and_then(Value::as_str)
            .and_then(change_action),
        "simple-change" => {
            // "<task id> U2", "<task id> V1", "<task id> R"
            let content = body.get("content").and_then(Value::as_str)?;
            let word = content.split_whitespace().nth(1)?;
            match word.chars().next()?.to_ascii_uppercase() {
                'U' => Some("UPSCALE"),
                'V' => Some("VARIATION"),
                'R' => Some("REROLL"),
                _ => None,
            }
        }
        _ => None,
    }
}

fn change_action(a: &str) -> Option<&'static str> {
    match a.to_ascii_uppercase().as_str() {
        "UPSCALE" => Some("UPSCALE"),
        "VARIATION" => Some("VARIATION"),
        "REROLL" => Some("REROLL"),
        _ => None,
    }
}

/// The action behind a button's `customId` (`MJ::JOB::upsample::1::<hash>`, ...).
pub fn mj_action_from_custom_id(id: &str) -> Option<&'static str> {
    let has = |s: &str| id.contains(s);
    if !id.starts_with("MJ::") {
        return None;
    }
    Some(if has("::CustomZoom") {
        "CUSTOM_ZOOM"
    } else if has("::Inpaint") {
        "INPAINT"
    } else if has("::Outpaint") {
        "ZOOM"
    } else if has("::JOB::pan_") {
        "PAN"
    } else if has("::JOB::high_variation") {
        "HIGH_VARIATION"
    } else if has("::JOB::low_variation") {
        "LOW_VARIATION"
    } else if has("::JOB::reroll") {
        "REROLL"
    } else if has("::JOB::upsample") {
        "UPSCALE"
    } else if has("::JOB::variation") {
        "VARIATION"
    } else {
        return None;
    })
}

/// The model name that prices and routes a Midjourney action: `mj_imagine`, or with a mode word
/// `mj_turbo_imagine`. Callers fall back to the plain name when the mode name has no price or
/// no channel.
pub fn mj_model(action: &str, mode: MjMode) -> String {
    let a = action.to_ascii_lowercase();
    match mode.price_word() {
        Some(w) => format!("mj_{w}_{a}"),
        None => format!("mj_{a}"),
    }
}

/// The action of a Suno submit route (`/suno/submit/{kind}`).
pub fn suno_action(kind: &str) -> Option<&'static str> {
    match kind {
        "music" => Some("MUSIC"),
        "lyrics" => Some("LYRICS"),
        _ => None,
    }
}

/// `suno_music`, `suno_lyrics`.
pub fn suno_model(action: &str) -> String {
    format!("suno_{}", action.to_ascii_lowercase())
}

/// The action of a Kling video route (`/kling/v1/videos/{kind}`), upper case as task actions
/// are stored (`TEXT2VIDEO`, `IMAGE2VIDEO`; Kling's path is the lower-case word).
pub fn kling_action(kind: &str) -> Option<&'static str> {
    match kind {
        "text2video" => Some("TEXT2VIDEO"),
        "image2video" => Some("IMAGE2VIDEO"),
        _ => None,
    }
}

/// What prices a Kling video request: its model, mode and length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KlingVideo {
    /// `model_name` (default `kling-v1`).
    pub model: String,
    /// `std` or `pro` (default `std`).
    pub mode: String,
    /// Seconds: 5 or 10 (default 5).
    pub seconds: i64,
}

impl KlingVideo {
    /// The per-call price name, one-hub's: `kling-video_{model}_{mode}_{seconds}`.
    pub fn per_call_model(&self) -> String {
        format!("kling-video_{}_{}_{}", self.model, self.mode, self.seconds)
    }

    /// The per-second price name: `kling-video_{model}_{mode}` (charged once per second).
    pub fn per_second_model(&self) -> String {
        format!("kling-video_{}_{}", self.model, self.mode)
    }
}

/// Reads and checks a Kling video request body: `model_name` (letters, digits, `-`, `.`, `_`,
/// at most 64), `mode` (`std`/`pro`), `duration` (`"5"`/`"10"`, or the number), and what the
/// action needs (`prompt` for `TEXT2VIDEO`, `image` for `IMAGE2VIDEO`). The reason when refused.
pub fn kling_video(action: &str, body: &Value) -> Result<KlingVideo, String> {
    let text = |k: &str| match body.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.trim().to_owned()).filter(|s| !s.is_empty())),
        Some(_) => Err(format!("{k} must be a string")),
    };
    let model = text("model_name")?.unwrap_or_else(|| "kling-v1".into());
    let model_ok = model.len() <= 64
        && model
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'));
    if !model_ok {
        return Err("model_name must be letters, digits, '-', '.' or '_' (at most 64)".into());
    }
    let mode = text("mode")?.unwrap_or_else(|| "std".into());
    if mode != "std" && mode != "pro" {
        return Err("mode must be std or pro".into());
    }
    let seconds = match body.get("duration") {
        None | Some(Value::Null) => 5,
        Some(Value::String(s)) => s.trim().parse::<i64>().unwrap_or(0),
        Some(Value::Number(n)) => n.as_i64().unwrap_or(0),
        Some(_) => 0,
    };
    if seconds != 5 && seconds != 10 {
        return Err("duration must be 5 or 10".into());
    }
    match action {
        "TEXT2VIDEO" if text("prompt")?.is_none() => return Err("prompt is required".into()),
        "IMAGE2VIDEO" if text("image")?.is_none() => return Err("image is required".into()),
        _ => {}
    }
    Ok(KlingVideo {
        model,
        mode,
        seconds,
    })
}

/// Whether a midjourney-proxy submit answer accepted the task: code 1 (submitted), 21 (the task
/// exists already, e.g. a modal waiting) or 22 (queued).
pub fn mj_submit_accepted(code: i64) -> bool {
    matches!(code, 1 | 21 | 22)
}

/// Whether a task status is final.
pub fn is_final_status(status: &str) -> bool {
    matches!(status, "SUCCESS" | "FAILURE")
}

/// A status as stored: upper case, with the Suno API's lower-case and alias spellings mapped to
/// the midjourney-proxy set (`NOT_START`, `SUBMITTED`, `QUEUED`, `IN_PROGRESS`, `MODAL`,
/// `SUCCESS`, `FAILURE`). Unknown values stay as given (and count as unfinished).
pub fn normalize_status(s: &str) -> String {
    let u = s.trim().to_ascii_uppercase();
    match u.as_str() {
        "COMPLETE" | "COMPLETED" | "SUCCEEDED" | "SUCCEED" | "SUCCESS" => "SUCCESS".into(),
        "FAILED" | "FAIL" | "ERROR" | "FAILURE" | "CANCEL" | "CANCELLED" => "FAILURE".into(),
        "RUNNING" | "PROCESSING" | "STREAMING" | "IN_PROGRESS" => "IN_PROGRESS".into(),
        "PENDING" | "QUEUED" | "QUEUE" => "QUEUED".into(),
        _ => u,
    }
}

/// A progress value as stored: `"45%"`. Accepts `"45%"`, `"45"`, `45` or `0.45`-style numbers
/// (a fraction when below or equal to 1 and not an integer); clamps to 0..=100. `None` when the
/// value is not a progress at all.
pub fn normalize_progress(v: &Value) -> Option<String> {
    let n = match v {
        Value::String(s) => s.trim().trim_end_matches('%').trim().parse::<f64>().ok()?,
        Value::Number(n) => {
            let f = n.as_f64()?;
            if f > 0.0 && f < 1.0 {
                f * 100.0
            } else {
                f
            }
        }
        _ => return None,
    };
    if !n.is_finite() {
        return None;
    }
    Some(format!("{}%", n.clamp(0.0, 100.0).round() as i64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kling_requests() {
        use serde_json::json;
        let v = kling_video("TEXT2VIDEO", &json!({"prompt": "a cat"})).unwrap();
        assert_eq!(
            (v.model.as_str(), v.mode.as_str(), v.seconds),
            ("kling-v1", "std", 5)
        );
        assert_eq!(v.per_call_model(), "kling-video_kling-v1_std_5");
        assert_eq!(v.per_second_model(), "kling-video_kling-v1_std");
        let v = kling_video(
            "TEXT2VIDEO",
            &json!({"prompt": "x", "model_name": "kling-v2-master", "mode": "pro", "duration": "10"}),
        )
        .unwrap();
        assert_eq!(v.per_call_model(), "kling-video_kling-v2-master_pro_10");
        assert_eq!(
            kling_video("TEXT2VIDEO", &json!({"prompt": "x", "duration": 10}))
                .unwrap()
                .seconds,
            10
        );
        for bad in [
            json!({}),
            json!({"prompt": " "}),
            json!({"prompt": "x", "duration": "7"}),
            json!({"prompt": "x", "duration": true}),
            json!({"prompt": "x", "mode": "max"}),
            json!({"prompt": "x", "model_name": "a b"}),
            json!({"prompt": "x", "model_name": 3}),
            json!({"prompt": 3}),
        ] {
            assert!(kling_video("TEXT2VIDEO", &bad).is_err(), "{bad}");
        }
        assert!(kling_video("IMAGE2VIDEO", &json!({"prompt": "x"})).is_err());
        assert!(kling_video("IMAGE2VIDEO", &json!({"image": "https://x/y.png"})).is_ok());
        assert_eq!(kling_action("text2video"), Some("TEXT2VIDEO"));
        assert_eq!(kling_action("video-extend"), None);
        assert_eq!(normalize_status("succeed"), "SUCCESS");
        assert_eq!(normalize_status("submitted"), "SUBMITTED");
        assert_eq!(normalize_status("processing"), "IN_PROGRESS");
        assert_eq!(normalize_status("failed"), "FAILURE");
    }
    use serde_json::json;

    #[test]
    fn actions_from_routes_and_bodies() {
        let none = json!({});
        assert_eq!(mj_action("imagine", &none), Some("IMAGINE"));
        assert_eq!(mj_action("blend", &none), Some("BLEND"));
        assert_eq!(mj_action("describe", &none), Some("DESCRIBE"));
        assert_eq!(mj_action("nope", &none), None);
        assert_eq!(
            mj_action("action", &json!({"customId": "MJ::JOB::upsample::2::abc"})),
            Some("UPSCALE")
        );
        assert_eq!(
            mj_action("action", &json!({"customId": "MJ::JOB::variation::1::abc"})),
            Some("VARIATION")
        );
        assert_eq!(
            mj_action(
                "action",
                &json!({"customId": "MJ::JOB::reroll::0::abc::SOLO"})
            ),
            Some("REROLL")
        );
        assert_eq!(
            mj_action_from_custom_id("MJ::Outpaint::50::1::abc::SOLO"),
            Some("ZOOM")
        );
        assert_eq!(
            mj_action_from_custom_id("MJ::JOB::pan_left::1::abc::SOLO"),
            Some("PAN")
        );
        assert_eq!(mj_action_from_custom_id("other"), None);
        assert_eq!(mj_action("action", &none), None);
        assert_eq!(
            mj_action("change", &json!({"action": "upscale", "index": 1})),
            Some("UPSCALE")
        );
        assert_eq!(
            mj_action("simple-change", &json!({"content": "123 V3"})),
            Some("VARIATION")
        );
        assert_eq!(mj_action("simple-change", &json!({"content": "123"})), None);
        assert_eq!(suno_action("music"), Some("MUSIC"));
        assert_eq!(suno_action("video"), None);
    }

    #[test]
    fn model_names() {
        assert_eq!(mj_model("IMAGINE", MjMode::Default), "mj_imagine");
        assert_eq!(mj_model("IMAGINE", MjMode::Fast), "mj_imagine");
        assert_eq!(mj_model("UPSCALE", MjMode::Turbo), "mj_turbo_upscale");
        assert_eq!(
            mj_model("CUSTOM_ZOOM", MjMode::Relax),
            "mj_relax_custom_zoom"
        );
        assert_eq!(suno_model("LYRICS"), "suno_lyrics");
        assert_eq!(MjMode::Relax.prefix(), "/mj-relax");
    }

    #[test]
    fn codes_statuses_and_progress() {
        assert!(mj_submit_accepted(1) && mj_submit_accepted(21) && mj_submit_accepted(22));
        assert!(!mj_submit_accepted(4) && !mj_submit_accepted(24));
        assert_eq!(normalize_status("complete"), "SUCCESS");
        assert_eq!(normalize_status("failed"), "FAILURE");
        assert_eq!(normalize_status("in_progress"), "IN_PROGRESS");
        assert_eq!(normalize_status("MODAL"), "MODAL");
        assert!(is_final_status("SUCCESS") && !is_final_status("SUBMITTED"));
        assert_eq!(normalize_progress(&json!("45%")).as_deref(), Some("45%"));
        assert_eq!(normalize_progress(&json!(0.5)).as_deref(), Some("50%"));
        assert_eq!(normalize_progress(&json!(100)).as_deref(), Some("100%"));
        assert_eq!(normalize_progress(&json!("150")).as_deref(), Some("100%"));
        assert_eq!(normalize_progress(&json!(null)), None);
    }
}
