//! What one-api knows without its database: the completion ratios it applies to a model that its
//! `CompletionRatio` setting does not list.
//!
//! one-api prices output as `ModelRatio x CompletionRatio`, and its `CompletionRatio` setting
//! only holds what an administrator saved there: for most models the ratio comes from rules in
//! its code (`GetCompletionRatio` in relay/billing/ratio/model.go, one-api v0.6.x: gpt-4o
//! output is 4 x input, gpt-4 2 x, Claude 3 5 x, ...). An import that took a missing entry as 1
//! would bill output 2 to 5 times below what the source billed. [`completion_ratio`] restates
//! those rules (the rules, not their code), so an imported price bills what one-api billed.

/// one-api's built-in `CompletionRatio` map (AWS Llama 3 under channel type 33, Whisper,
/// DeepSeek): looked up before any rule.
const BUILT_IN_MAP: &[(&str, f64)] = &[
    ("llama3-8b-8192(33)", 0.0006 / 0.0003),
    ("llama3-70b-8192(33)", 0.0035 / 0.00265),
    ("whisper-1", 0.0),
    ("deepseek-chat", 0.28 / 0.14),
    ("deepseek-reasoner", 2.19 / 0.55),
];

/// The names one-api's rules answer one by one, after the OpenAI families.
const BY_NAME: &[(&str, f64)] = &[
    ("chatgpt-4o-latest", 3.0),
    ("llama2-70b-4096", 0.8 / 0.64),
    ("llama3-8b-8192", 2.0),
    ("llama3-70b-8192", 0.79 / 0.59),
    ("command", 2.0),
    ("command-light", 2.0),
    ("command-nightly", 2.0),
    ("command-light-nightly", 2.0),
    ("command-r", 3.0),
    ("command-r-plus", 5.0),
    ("grok-beta", 3.0),
    // Replicate models.
    ("ibm-granite/granite-20b-code-instruct-8k", 5.0),
    ("ibm-granite/granite-3.0-2b-instruct", 8.333333333333334),
    ("ibm-granite/granite-3.0-8b-instruct", 5.0),
    ("ibm-granite/granite-8b-code-instruct-128k", 5.0),
    ("meta/llama-2-13b", 5.0),
    ("meta/llama-2-13b-chat", 5.0),
    ("meta/llama-2-7b", 5.0),
    ("meta/llama-2-7b-chat", 5.0),
    ("meta/meta-llama-3-8b", 5.0),
    ("meta/meta-llama-3-8b-instruct", 5.0),
    ("meta/llama-2-70b", 2.75 / 0.65),
    ("meta/llama-2-70b-chat", 2.75 / 0.65),
    ("meta/meta-llama-3-70b", 2.75 / 0.65),
    ("meta/meta-llama-3-70b-instruct", 2.75 / 0.65),
    ("meta/meta-llama-3.1-405b-instruct", 1.0),
    ("mistralai/mistral-7b-instruct-v0.2", 5.0),
    ("mistralai/mistral-7b-v0.1", 5.0),
    ("mistralai/mixtral-8x7b-instruct-v0.1", 1.0 / 0.3),
];

/// Families one-api prices by the start of the name, after the OpenAI rules of
/// [`completion_ratio`]: the first prefix that matches.
const BY_PREFIX: &[(&str, f64)] = &[
    ("o1", 4.0),
    ("claude-3", 5.0),
    ("claude-", 3.0),
    ("mistral-", 3.0),
    ("gemini-", 3.0),
    ("deepseek-", 2.0),
];

/// The completion ratio one-api applies to `model` when its `CompletionRatio` setting has no
/// entry for it (1 when none of its rules names the model).
pub fn completion_ratio(model: &str) -> f64 {
    // `qwen-…-internet` is priced as the model without the suffix.
    let model = match model.strip_suffix("-internet") {
        Some(base) if model.starts_with("qwen-") => base,
        _ => model,
    };
    if let Some((_, r)) = BUILT_IN_MAP.iter().find(|(m, _)| *m == model) {
        return *r;
    }
    if model.starts_with("gpt-3.5") {
        return if model == "gpt-3.5-turbo" || model.ends_with("0125") {
            3.0
        } else if model.ends_with("1106") {
            2.0
        } else {
            4.0 / 3.0
        };
    }
    if model.starts_with("gpt-4") {
        return if model.starts_with("gpt-4o") {
            if model == "gpt-4o-2024-05-13" {
                3.0
            } else {
                4.0
            }
        } else if model.starts_with("gpt-4-turbo") || model.ends_with("preview") {
            3.0
        } else {
            2.0
        };
    }
    if model.starts_with("o1") {
        return 4.0;
    }
    if let Some((_, r)) = BY_NAME.iter().find(|(m, _)| *m == model) {
        return *r;
    }
    BY_PREFIX
        .iter()
        .find(|(p, _)| model.starts_with(p))
        .map_or(1.0, |(_, r)| *r)
}

#[cfg(test)]
mod tests {
    use super::completion_ratio;

    #[test]
    fn one_api_rules() {
        for (model, want) in [
            ("gpt-4o", 4.0),
            ("gpt-4o-2024-08-06", 4.0),
            ("gpt-4o-mini", 4.0),
            ("gpt-4o-2024-05-13", 3.0),
            ("gpt-4-turbo", 3.0),
            ("gpt-4-1106-preview", 3.0),
            ("gpt-4", 2.0),
            ("gpt-4-32k", 2.0),
            ("gpt-3.5-turbo", 3.0),
            ("gpt-3.5-turbo-0125", 3.0),
            ("gpt-3.5-turbo-1106", 2.0),
            ("gpt-3.5-turbo-16k", 4.0 / 3.0),
            ("o1-mini", 4.0),
            ("chatgpt-4o-latest", 3.0),
            ("claude-3-5-sonnet-20241022", 5.0),
            ("claude-2.1", 3.0),
            ("mistral-large-latest", 3.0),
            ("gemini-1.5-pro", 3.0),
            ("deepseek-chat", 2.0),
            ("deepseek-coder", 2.0),
            ("whisper-1", 0.0),
            ("command-r-plus", 5.0),
            ("qwen-max-internet", 1.0),
            ("my-own-model", 1.0),
        ] {
            assert_eq!(completion_ratio(model), want, "{model}");
        }
        assert!((completion_ratio("deepseek-reasoner") - 2.19 / 0.55).abs() < 1e-12);
    }
}
