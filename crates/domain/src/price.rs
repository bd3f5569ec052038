//! Model prices and the cost formula (DOMAIN.md "Units and prices"; spec sections 5 and 9).
//!
//! A ratio of 1 is $0.002 per 1K tokens = 1 quota per token at the default quota_per_unit of
//! 500000. Ratios are stored as f64 (they are operator input), but every money computation is
//! done in [`Decimal`]: each f64 is converted with `Decimal::try_from`, which takes the shortest
//! decimal that round-trips (0.1 is exactly 0.1), and nothing is computed in floating point.

use crate::channel::validate_model_name;
use crate::DomainError;
use rust_decimal::prelude::ToPrimitive;
use rust_decimal::{Decimal, RoundingStrategy};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

/// How a model is billed: per token (`tokens`) or per call (`times`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PriceType {
    #[default]
    Tokens,
    Times,
}

impl PriceType {
    pub const fn as_str(self) -> &'static str {
        match self {
            PriceType::Tokens => "tokens",
            PriceType::Times => "times",
        }
    }
}

impl fmt::Display for PriceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for PriceType {
    type Err = DomainError;
    /// `tokens` or `times` (surrounding spaces ignored, case-sensitive like the stored value).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "tokens" => Ok(PriceType::Tokens),
            "times" => Ok(PriceType::Times),
            "" => Err(DomainError::Required { field: "type" }),
            other => Err(DomainError::invalid(
                "type",
                format!("'{other}' is neither tokens nor times"),
            )),
        }
    }
}

/// Multipliers applied to detailed token counts before pricing (`tokens += n * (ratio - 1)`).
/// Stored as JSON text; missing fields take the defaults (cache write 1.25, cache read 0.1,
/// every other ratio 1). The key names are one-hub's (`input_text_tokens`, ...), so its price
/// lists carry over.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ExtraRatios {
    /// OpenAI-style cached prompt tokens (`prompt_tokens_details.cached_tokens`).
    pub cached_tokens: f64,
    /// Anthropic-style cache creation tokens.
    pub cached_write_tokens: f64,
    /// Anthropic-style cache read tokens.
    pub cached_read_tokens: f64,
    pub input_audio_tokens: f64,
    pub output_audio_tokens: f64,
    pub reasoning_tokens: f64,
    /// Text tokens of the prompt (`prompt_tokens_details.text_tokens`, Gemini's `TEXT`
    /// modality): models that price text apart from the image or audio they also take.
    pub input_text_tokens: f64,
    /// Text tokens of the answer (`completion_tokens_details.text_tokens`).
    pub output_text_tokens: f64,
    /// Image tokens of the prompt (`prompt_tokens_details.image_tokens`, gpt-image-1's
    /// `input_tokens_details.image_tokens`, Gemini's `IMAGE` modality).
    pub input_image_tokens: f64,
    /// Image tokens of the answer (image generation: gpt-image-1's output tokens, Gemini's
    /// `IMAGE` modality of the candidates).
    pub output_image_tokens: f64,
}

impl Default for ExtraRatios {
    fn default() -> Self {
        ExtraRatios {
            cached_tokens: 1.0,
            cached_write_tokens: 1.25,
            cached_read_tokens: 0.1,
            input_audio_tokens: 1.0,
            output_audio_tokens: 1.0,
            reasoning_tokens: 1.0,
            input_text_tokens: 1.0,
            output_text_tokens: 1.0,
            input_image_tokens: 1.0,
            output_image_tokens: 1.0,
        }
    }
}

impl ExtraRatios {
    /// Parses the stored JSON text; empty text is the defaults. Field `extra_ratios`.
    pub fn parse(text: &str) -> Result<ExtraRatios, DomainError> {
        let text = text.trim();
        if text.is_empty() {
            return Ok(ExtraRatios::default());
        }
        let r: ExtraRatios = serde_json::from_str(text)
            .map_err(|e| DomainError::invalid("extra_ratios", format!("invalid JSON: {e}")))?;
        r.validate()?;
        Ok(r)
    }

    /// Every ratio finite and at least 0.
    pub fn validate(&self) -> Result<(), DomainError> {
        for (name, v) in [
            ("cached_tokens", self.cached_tokens),
            ("cached_write_tokens", self.cached_write_tokens),
            ("cached_read_tokens", self.cached_read_tokens),
            ("input_audio_tokens", self.input_audio_tokens),
            ("output_audio_tokens", self.output_audio_tokens),
            ("reasoning_tokens", self.reasoning_tokens),
            ("input_text_tokens", self.input_text_tokens),
            ("output_text_tokens", self.output_text_tokens),
            ("input_image_tokens", self.input_image_tokens),
            ("output_image_tokens", self.output_image_tokens),
        ] {
            if !v.is_finite() || v < 0.0 {
                return Err(DomainError::invalid(
                    "extra_ratios",
                    format!("{name} must be a number of at least 0"),
                ));
            }
        }
        Ok(())
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{}".to_owned())
    }
}

/// One price row. `model` may end with the `*` wildcard. JSON uses `type` for `price_type`
/// (as the one-api family's price lists do); `extra` and `locked` may be omitted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Price {
    pub model: String,
    #[serde(rename = "type")]
    pub price_type: PriceType,
    /// The owner (a channel type id, or a model-owner id from 1000 on).
    pub channel_type: i32,
    /// Input ratio; for `times` prices the per-call ratio (cost `1000 * input` quota).
    pub input: f64,
    /// Output (completion) ratio; unused for `times` prices.
    pub output: f64,
    #[serde(default)]
    pub extra: ExtraRatios,
    #[serde(default)]
    pub locked: bool,
    /// The model's output limit in tokens (0: unknown). Bounds what a request that sets no
    /// `max_tokens` reserves for its answer (see [`reservation_bounds`]).
    #[serde(default, rename = "max_output_tokens")]
    pub max_output: i64,
}

impl Price {
    /// A per-token price with default extra ratios, unlocked.
    pub fn tokens(model: &str, channel_type: i32, input: f64, output: f64) -> Price {
        Price {
            model: model.to_owned(),
            price_type: PriceType::Tokens,
            channel_type,
            input,
            output,
            extra: ExtraRatios::default(),
            locked: false,
            max_output: 0,
        }
    }

    /// This price with the model's output limit (tokens).
    pub fn with_max_output(mut self, tokens: i64) -> Price {
        self.max_output = tokens.max(0);
        self
    }

    /// A per-call price (`input` is the per-call ratio; output is 0), unlocked.
    pub fn times(model: &str, channel_type: i32, input: f64) -> Price {
        Price {
            price_type: PriceType::Times,
            ..Price::tokens(model, channel_type, input, 0.0)
        }
    }

    /// This price with other extra ratios.
    pub fn with_extra(mut self, extra: ExtraRatios) -> Price {
        self.extra = extra;
        self
    }

    /// This price with `extra.cached_tokens` set and the other extra ratios at their defaults.
    pub fn with_cached(self, cached_tokens: f64) -> Price {
        self.with_extra(ExtraRatios {
            cached_tokens,
            ..ExtraRatios::default()
        })
    }
}

/// Spec section 5 for a price row: model required and valid (wildcard only at the end), channel
/// type set (> 0), input and output ratios finite and at least 0, extra ratios likewise.
pub fn validate_price(price: &Price) -> Result<(), DomainError> {
    validate_model_name(price.model.trim())?;
    if price.channel_type <= 0 {
        return Err(DomainError::Required {
            field: "channel_type",
        });
    }
    for (field, v) in [("input", price.input), ("output", price.output)] {
        if !v.is_finite() {
            return Err(DomainError::invalid(field, "must be a number"));
        }
        if v < 0.0 {
            return Err(DomainError::TooSmall { field, min: 0 });
        }
    }
    price.extra.validate()
}

/// Token counts of one request, with OpenAI semantics: `prompt_tokens` INCLUDES the cached,
/// cache-write, cache-read, input-audio, input-text and input-image tokens; `completion_tokens`
/// INCLUDES the reasoning, output-audio, output-text and output-image tokens. The detail fields
/// are subsets, never additions. Providers that report
/// them separately (Anthropic's `input_tokens` excludes cache reads and writes) must be converted
/// to this shape by the relay. `cached_tokens` (OpenAI style) and `cached_read_tokens` (Anthropic
/// style) are different buckets: a provider fills one or the other for the same tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Usage {
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    pub cached_tokens: i64,
    pub cached_write_tokens: i64,
    pub cached_read_tokens: i64,
    pub input_audio_tokens: i64,
    pub output_audio_tokens: i64,
    pub reasoning_tokens: i64,
    pub input_text_tokens: i64,
    pub output_text_tokens: i64,
    pub input_image_tokens: i64,
    pub output_image_tokens: i64,
}

impl Usage {
    pub fn total_tokens(&self) -> i64 {
        self.prompt_tokens
            .max(0)
            .saturating_add(self.completion_tokens.max(0))
    }
}

const THOUSAND: Decimal = Decimal::from_parts(1000, 0, 0, false, 0);

/// A ratio as an exact decimal: NaN, negative values and zero are 0; +inf or values beyond
/// Decimal's range saturate at `Decimal::MAX` (validation keeps such ratios out anyway).
fn ratio(x: f64) -> Decimal {
    if x.is_nan() || x <= 0.0 {
        return Decimal::ZERO;
    }
    if x == 1.0 {
        return Decimal::ONE;
    }
    // The shortest-digits conversion is slow (it was ~3 % of the relay's CPU) and a gateway
    // prices with a handful of distinct ratios: the conversions are remembered per thread.
    thread_local! {
        static SEEN: std::cell::RefCell<foldhash::HashMap<u64, Decimal>> =
            std::cell::RefCell::default();
    }
    const KEPT: usize = 1024;
    SEEN.with_borrow_mut(|seen| {
        if let Some(d) = seen.get(&x.to_bits()) {
            return *d;
        }
        let d = Decimal::try_from(x).unwrap_or(Decimal::MAX);
        if seen.len() >= KEPT {
            seen.clear();
        }
        seen.insert(x.to_bits(), d);
        d
    })
}

fn mul(a: Decimal, b: Decimal) -> Decimal {
    a.checked_mul(b).unwrap_or(Decimal::MAX)
}

fn add(a: Decimal, b: Decimal) -> Decimal {
    // Most detail buckets are empty (`adjustment` is 0): a decimal addition costs ~80
    // instructions, ten of them a priced request for nothing; `a + 0` has the value of `a`.
    if b.is_zero() {
        return a;
    }
    a.checked_add(b).unwrap_or(Decimal::MAX)
}

fn count(n: i64) -> Decimal {
    Decimal::from(n.max(0))
}

/// `n * (ratio - 1)`: the adjustment of a detail bucket.
fn adjustment(n: i64, r: f64) -> Decimal {
    if n <= 0 {
        return Decimal::ZERO;
    }
    mul(count(n), ratio(r) - Decimal::ONE)
}

/// Prompt and completion counts after the extra ratios, never below 0.
fn adjusted_counts(usage: &Usage, extra: &ExtraRatios) -> (Decimal, Decimal) {
    let (prompt_side, completion_side) = detail_buckets(usage, extra);
    let adjusted = |count0: i64, buckets: &[Bucket]| {
        buckets
            .iter()
            .map(|&(n, r)| adjustment(n, r))
            .fold(count(count0), add)
            .max(Decimal::ZERO)
    };
    (
        adjusted(usage.prompt_tokens, &prompt_side),
        adjusted(usage.completion_tokens, &completion_side),
    )
}

/// A detail bucket's token count and its extra ratio.
type Bucket = (i64, f64);

/// Each detail bucket's count with its extra ratio: the prompt's parts, then the completion's.
fn detail_buckets(usage: &Usage, extra: &ExtraRatios) -> ([Bucket; 6], [Bucket; 4]) {
    (
        [
            (usage.cached_tokens, extra.cached_tokens),
            (usage.cached_write_tokens, extra.cached_write_tokens),
            (usage.cached_read_tokens, extra.cached_read_tokens),
            (usage.input_audio_tokens, extra.input_audio_tokens),
            (usage.input_text_tokens, extra.input_text_tokens),
            (usage.input_image_tokens, extra.input_image_tokens),
        ],
        [
            (usage.reasoning_tokens, extra.reasoning_tokens),
            (usage.output_audio_tokens, extra.output_audio_tokens),
            (usage.output_text_tokens, extra.output_text_tokens),
            (usage.output_image_tokens, extra.output_image_tokens),
        ],
    )
}

/// The prompt and completion counts (never below 0) when no extra ratio changes them: every
/// detail bucket is empty or priced at 1 (its [`adjustment`] is 0). `None` when one applies.
fn plain_counts(usage: &Usage, extra: &ExtraRatios) -> Option<(i64, i64)> {
    let (prompt_side, completion_side) = detail_buckets(usage, extra);
    let unchanged = prompt_side
        .iter()
        .chain(&completion_side)
        .all(|&(n, r)| n <= 0 || r == 1.0);
    unchanged.then(|| (usage.prompt_tokens.max(0), usage.completion_tokens.max(0)))
}

/// `ceil((prompt * input + completion * output) * group)` in integers, where the decimal
/// arithmetic of [`cost`] is exact: each product and the sum fit a decimal's 96-bit mantissa
/// and the final scale is at most 28, so `rust_decimal` rounded nowhere and both give the same
/// quota (a test holds them to it). `None` otherwise, and the decimals decide. A priced
/// request makes three `cost`s (the reservation's two bounds and the settlement): ~3,700
/// instructions a request in decimals, ~1,600 this way, most of it the ratios' look-ups
/// (bench/instructions.py).
fn exact_tokens_cost(
    prompt: i64,
    completion: i64,
    input: Decimal,
    output: Decimal,
    group: Decimal,
) -> Option<i64> {
    const FITS: u128 = 1 << 96;
    let parts = |d: Decimal| (d.mantissa().unsigned_abs(), d.scale());
    let ((mi, si), (mo, so), (mg, sg)) = (parts(input), parts(output), parts(group));
    let scale = si.max(so);
    if scale + sg > 28 {
        return None;
    }
    let term = |n: i64, m: u128, s: u32| -> Option<u128> {
        let v = u128::from(n.unsigned_abs()).checked_mul(m)?;
        (v < FITS).then_some(v)?.checked_mul(10u128.pow(scale - s))
    };
    let sum = term(prompt, mi, si)?.checked_add(term(completion, mo, so)?)?;
    let raw = sum.checked_mul(mg).filter(|&v| sum < FITS && v < FITS)?;
    let unit = 10u128.pow(scale + sg);
    let q = raw / unit + u128::from(raw % unit != 0);
    Some(i64::try_from(q).unwrap_or(i64::MAX))
}

/// `ceil((adj_prompt * input + adj_completion * output) * group)` in decimals.
fn decimal_tokens_cost(
    usage: &Usage,
    extra: &ExtraRatios,
    input: Decimal,
    output: Decimal,
    group: Decimal,
) -> i64 {
    let (prompt, completion) = adjusted_counts(usage, extra);
    ceil_quota(mul(add(mul(prompt, input), mul(completion, output)), group))
}

fn ceil_quota(d: Decimal) -> i64 {
    d.ceil()
        .to_i64()
        .unwrap_or(if d.is_sign_negative() { 0 } else { i64::MAX })
}

/// The quota a request costs.
///
/// - `tokens`: `ceil((adj_prompt * input + adj_completion * output) * group_ratio)`, where the
///   adjusted counts apply the extra ratios (`prompt += n * (ratio - 1)` for cached, cache-write,
///   cache-read, input-audio, input-text and input-image tokens; `completion += n * (ratio - 1)`
///   for reasoning, output-audio, output-text and output-image tokens). At least 1 when the input ratio and the group ratio are not zero and
///   any tokens were used; 0 when no tokens were used.
/// - `times`: `ceil(1000 * input * group_ratio)` per call, whatever the tokens.
///
/// Negative or NaN ratios and counts count as 0; the result saturates at `i64::MAX`.
pub fn cost(price: &Price, usage: &Usage, group_ratio: f64) -> i64 {
    let group = ratio(group_ratio);
    let input = ratio(price.input);
    match price.price_type {
        PriceType::Times => ceil_quota(mul(mul(THOUSAND, input), group)),
        PriceType::Tokens => {
            if usage.total_tokens() <= 0 {
                return 0;
            }
            let output = ratio(price.output);
            let q = plain_counts(usage, &price.extra)
                .and_then(|(p, c)| exact_tokens_cost(p, c, input, output, group))
                .unwrap_or_else(|| decimal_tokens_cost(usage, &price.extra, input, output, group));
            if q == 0 && !input.is_zero() && !group.is_zero() {
                1
            } else {
                q
            }
        }
    }
}

/// The quota reserved before calling upstream.
///
/// - `tokens`: the cost (same formula and minimum as [`cost`]) of `estimated_prompt_tokens` at
///   the input ratio plus, when the client set one, `max_completion_tokens` at the output ratio;
///   plus `pre_consumed` (the operator's pre-consumed quota setting). A free request (both
///   ratios 0, or group ratio 0) reserves nothing, so it never needs a balance.
/// - `times`: the per-call cost only.
///
/// Never negative (negative inputs count as 0); saturates at `i64::MAX`.
pub fn reservation(
    price: &Price,
    estimated_prompt_tokens: i64,
    max_completion_tokens: Option<i64>,
    group_ratio: f64,
    pre_consumed: i64,
) -> i64 {
    match price.price_type {
        PriceType::Times => cost(price, &Usage::default(), group_ratio),
        PriceType::Tokens => {
            let usage = Usage {
                prompt_tokens: estimated_prompt_tokens.max(0),
                completion_tokens: max_completion_tokens.unwrap_or(0).max(0),
                ..Usage::default()
            };
            let free = (ratio(price.input).is_zero() && ratio(price.output).is_zero())
                || ratio(group_ratio).is_zero();
            if free {
                return 0;
            }
            cost(price, &usage, group_ratio).saturating_add(pre_consumed.max(0))
        }
    }
}

/// What a relay request may reserve: at least `min` (else it is refused with 402), at most
/// `max` (its worst case). The ledger reserves as much of `max` as the balance allows, and the
/// request is then told to stop where its reservation ends (see [`covered_completion_tokens`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReserveBounds {
    pub min: i64,
    pub max: i64,
}

/// What a request asks for, as far as its reservation is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Demand {
    /// The estimated prompt tokens.
    pub prompt_tokens: i64,
    /// The client's output limit (`max_tokens` and its synonyms), if any.
    pub max_tokens: Option<i64>,
    /// Whether the endpoint generates text (chat, completions, responses, messages, Gemini).
    pub generates: bool,
    /// Units of a per-call price (images asked for with `n`); 1 otherwise.
    pub units: i64,
    /// The answers generated at once (chat and completions `n`, `best_of`; Gemini's
    /// `candidateCount`), each up to the output limit; 1 otherwise (0 counts as 1).
    pub answers: i64,
}

/// The output tokens a request that sets no limit is assumed to produce at most when the price
/// row does not know the model's limit (`max_output_tokens` 0).
pub const DEFAULT_OUTPUT_LIMIT: i64 = 4096;

/// The reservation bounds of a request (the balance rule of docs/billing.md).
///
/// - `times`: exactly the per-call cost times `units` (images asked for with `n`).
/// - `tokens`, free (both ratios 0 or group ratio 0): nothing.
/// - `tokens`: `min` covers the estimated prompt and one output token, `max` the prompt and the
///   most the answer may produce: the client's `max_tokens` capped by the model's output limit
///   (the price row's `max_output_tokens`, else `default_limit`), or that limit when the client
///   set none, times the answers asked for at once (`answers`: one token each at least for
///   `min`). Both include `pre_consumed`. Endpoints without generated text (`generates`
///   false: embeddings, moderations, audio, rerank) reserve the prompt only.
pub fn reservation_bounds(
    price: &Price,
    demand: &Demand,
    default_limit: i64,
    group_ratio: f64,
    pre_consumed: i64,
) -> ReserveBounds {
    let Demand {
        prompt_tokens: estimated_prompt_tokens,
        max_tokens: client_max_tokens,
        generates,
        units,
        answers,
    } = *demand;
    let answers = answers.max(1);
    let pre = pre_consumed.max(0);
    match price.price_type {
        PriceType::Times => {
            let c = cost_units(price, &Usage::default(), group_ratio, units);
            ReserveBounds { min: c, max: c }
        }
        PriceType::Tokens => {
            let free = (ratio(price.input).is_zero() && ratio(price.output).is_zero())
                || ratio(group_ratio).is_zero();
            if free {
                return ReserveBounds { min: 0, max: 0 };
            }
            let at = |completion: i64| {
                let usage = Usage {
                    prompt_tokens: estimated_prompt_tokens.max(0),
                    completion_tokens: completion.max(0),
                    ..Usage::default()
                };
                cost(price, &usage, group_ratio).saturating_add(pre)
            };
            if !generates {
                let c = at(0);
                return ReserveBounds { min: c, max: c };
            }
            let limit = if price.max_output > 0 {
                price.max_output
            } else {
                default_limit.max(1)
            };
            let most = client_max_tokens.map_or(limit, |m| m.clamp(1, limit));
            // Each of the answers may run to the limit, and needs one token at least.
            ReserveBounds {
                min: at(answers),
                max: at(most.saturating_mul(answers)),
            }
        }
    }
}

/// The output tokens that `reserved` quota pays for after the estimated prompt and
/// `pre_consumed`: the largest `c` with `cost(prompt, c) + pre_consumed <= reserved`. `i64::MAX`
/// when output is free (output ratio or group ratio 0); 0 when the prompt alone uses it up.
pub fn covered_completion_tokens(
    price: &Price,
    estimated_prompt_tokens: i64,
    reserved: i64,
    group_ratio: f64,
    pre_consumed: i64,
) -> i64 {
    let group = ratio(group_ratio);
    let out = ratio(price.output);
    if price.price_type == PriceType::Times || group.is_zero() || out.is_zero() {
        return i64::MAX;
    }
    let budget = Decimal::from(reserved.saturating_sub(pre_consumed.max(0)).max(0));
    // c <= (budget / group - prompt * input) / output
    let Some(per_group) = budget.checked_div(group) else {
        return i64::MAX;
    };
    let room = per_group - mul(count(estimated_prompt_tokens), ratio(price.input));
    if room <= Decimal::ZERO {
        return 0;
    }
    let Some(c) = room.checked_div(out) else {
        return i64::MAX;
    };
    let c = c.floor().to_i64().unwrap_or(i64::MAX);
    // Guard the rounding of the formula against the exact cost (at most a step or two).
    let fits = |c: i64| {
        let usage = Usage {
            prompt_tokens: estimated_prompt_tokens.max(0),
            completion_tokens: c,
            ..Usage::default()
        };
        cost(price, &usage, group_ratio).saturating_add(pre_consumed.max(0)) <= reserved
    };
    let mut c = c.max(0);
    while c > 0 && !fits(c) {
        c -= 1;
    }
    c
}

/// [`cost`] for `units` of a per-call price (`n` images): `units` times the per-call cost
/// (`units` below 1 count as 1). Token prices ignore `units`.
pub fn cost_units(price: &Price, usage: &Usage, group_ratio: f64, units: i64) -> i64 {
    match price.price_type {
        PriceType::Times => {
            let group = ratio(group_ratio);
            let input = ratio(price.input);
            ceil_quota(mul(
                mul(mul(THOUSAND, input), group),
                Decimal::from(units.max(1)),
            ))
        }
        PriceType::Tokens => cost(price, usage, group_ratio),
    }
}

/// Price rows indexed for lookup by requested model.
#[derive(Debug, Clone, Default)]
pub struct PriceTable {
    exact: foldhash::HashMap<String, Price>,
    /// Wildcard rows as (prefix, row), longest prefix first.
    wildcard: Vec<(String, Price)>,
}

impl PriceTable {
    /// Builds the table. A model ending in `*` after at least one character is a wildcard row;
    /// everything else matches exactly. If two rows name the same model, the later one wins.
    pub fn new(prices: Vec<Price>) -> PriceTable {
        let mut exact = foldhash::HashMap::default();
        let mut wild: HashMap<String, Price> = HashMap::new();
        for p in prices {
            match p
                .model
                .strip_suffix('*')
                .filter(|prefix| !prefix.is_empty())
            {
                Some(prefix) => {
                    wild.insert(prefix.to_owned(), p);
                }
                None => {
                    exact.insert(p.model.clone(), p);
                }
            }
        }
        let mut wildcard: Vec<(String, Price)> = wild.into_iter().collect();
        wildcard.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
        PriceTable { exact, wildcard }
    }

    /// The row for `model`: an exact match first, else the wildcard row with the longest prefix
    /// of `model`.
    pub fn lookup(&self, model: &str) -> Option<&Price> {
        self.exact.get(model).or_else(|| {
            self.wildcard
                .iter()
                .find(|(prefix, _)| model.starts_with(prefix.as_str()))
                .map(|(_, p)| p)
        })
    }

    pub fn len(&self) -> usize {
        self.exact.len() + self.wildcard.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every row, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &Price> {
        self.exact
            .values()
            .chain(self.wildcard.iter().map(|(_, p)| p))
    }
}

impl From<Vec<Price>> for PriceTable {
    fn from(prices: Vec<Price>) -> Self {
        PriceTable::new(prices)
    }
}

impl FromIterator<Price> for PriceTable {
    fn from_iter<I: IntoIterator<Item = Price>>(iter: I) -> Self {
        PriceTable::new(iter.into_iter().collect())
    }
}

/// The built-in price list: public list prices (USD per 1M tokens) converted to ratios
/// (`ratio = USD per 1M / 2`), per-call prices as `USD per call / 0.002`. Owners: 1 OpenAI,
/// 14 Anthropic, 25 Google Gemini, 28 DeepSeek (one-hub type ids). All rows unlocked.
///
/// Cached input: OpenAI's and Gemini's discounted cached tokens (reported as `cached_tokens`)
/// get their discount ratio; Anthropic rows keep the defaults (cache read 0.1, write 1.25);
/// DeepSeek's cache hits (mapped to `cached_tokens`) cost 0.1 of a miss.
pub fn default_prices() -> Vec<Price> {
    const OPENAI: i32 = 1;
    const ANTHROPIC: i32 = 14;
    const GEMINI: i32 = 25;
    const DEEPSEEK: i32 = crate::channel::TYPE_DEEPSEEK;
    const MJ: i32 = crate::channel::TYPE_MIDJOURNEY;
    const SUNO: i32 = crate::channel::TYPE_SUNO;
    let t = Price::tokens;
    vec![
        // OpenAI chat and reasoning models
        t("gpt-4o", OPENAI, 1.25, 5.0)
            .with_cached(0.5)
            .with_max_output(16384),
        t("gpt-4o-mini", OPENAI, 0.075, 0.3)
            .with_cached(0.5)
            .with_max_output(16384),
        t("chatgpt-4o-latest", OPENAI, 2.5, 7.5).with_max_output(16384),
        t("gpt-4.1", OPENAI, 1.0, 4.0)
            .with_cached(0.25)
            .with_max_output(32768),
        t("gpt-4.1-mini", OPENAI, 0.2, 0.8)
            .with_cached(0.25)
            .with_max_output(32768),
        t("gpt-4.1-nano", OPENAI, 0.05, 0.2)
            .with_cached(0.25)
            .with_max_output(32768),
        t("gpt-4-turbo", OPENAI, 5.0, 15.0).with_max_output(4096),
        t("gpt-3.5-turbo", OPENAI, 0.25, 0.75).with_max_output(4096),
        t("o1", OPENAI, 7.5, 30.0)
            .with_cached(0.5)
            .with_max_output(100000),
        t("o1-mini", OPENAI, 0.55, 2.2)
            .with_cached(0.5)
            .with_max_output(65536),
        t("o3", OPENAI, 1.0, 4.0)
            .with_cached(0.25)
            .with_max_output(100000),
        t("o3-mini", OPENAI, 0.55, 2.2)
            .with_cached(0.5)
            .with_max_output(100000),
        t("o4-mini", OPENAI, 0.55, 2.2)
            .with_cached(0.25)
            .with_max_output(100000),
        // OpenAI embeddings and moderation (output ratio = input: embeddings have no output)
        t("text-embedding-3-small", OPENAI, 0.01, 0.01),
        t("text-embedding-3-large", OPENAI, 0.065, 0.065),
        t("text-embedding-ada-002", OPENAI, 0.05, 0.05),
        t("omni-moderation-latest", OPENAI, 0.0, 0.0),
        t("text-moderation-latest", OPENAI, 0.0, 0.0),
        // OpenAI images (per image, standard 1024x1024; gpt-image-1 at medium quality)
        Price::times("dall-e-3", OPENAI, 20.0),
        Price::times("dall-e-2", OPENAI, 10.0),
        Price::times("gpt-image-1", OPENAI, 21.0),
        // OpenAI audio: TTS per input character counted as a token; Whisper per call (one minute)
        t("tts-1", OPENAI, 7.5, 7.5),
        t("tts-1-hd", OPENAI, 15.0, 15.0),
        Price::times("whisper-1", OPENAI, 3.0),
        // Anthropic
        t("claude-3-5-sonnet-latest", ANTHROPIC, 1.5, 7.5).with_max_output(8192),
        t("claude-3-5-haiku-latest", ANTHROPIC, 0.4, 2.0).with_max_output(8192),
        t("claude-3-7-sonnet-latest", ANTHROPIC, 1.5, 7.5).with_max_output(64000),
        t("claude-sonnet-4-0", ANTHROPIC, 1.5, 7.5).with_max_output(64000),
        t("claude-opus-4-0", ANTHROPIC, 7.5, 37.5).with_max_output(32000),
        // Google Gemini (prompts up to 128K / 200K tokens)
        t("gemini-1.5-pro", GEMINI, 0.625, 2.5)
            .with_cached(0.25)
            .with_max_output(8192),
        t("gemini-1.5-flash", GEMINI, 0.0375, 0.15)
            .with_cached(0.25)
            .with_max_output(8192),
        t("gemini-2.0-flash", GEMINI, 0.05, 0.2)
            .with_cached(0.25)
            .with_max_output(8192),
        t("gemini-2.5-pro", GEMINI, 0.625, 5.0)
            .with_cached(0.25)
            .with_max_output(65536),
        t("gemini-2.5-flash", GEMINI, 0.15, 1.25)
            .with_cached(0.25)
            .with_max_output(65536),
        // DeepSeek (V3.2 list prices: $0.28 cache miss, $0.028 cache hit, $0.42 output)
        t("deepseek-chat", DEEPSEEK, 0.14, 0.21)
            .with_cached(0.1)
            .with_max_output(8192),
        t("deepseek-reasoner", DEEPSEEK, 0.14, 0.21)
            .with_cached(0.1)
            .with_max_output(65536),
        // Midjourney (per task; ratio 50 = $0.1) and Suno (per song or lyrics). A mode-specific
        // row (`mj_turbo_imagine`, `mj_relax_imagine`) wins over these when the operator adds one.
        Price::times("mj_imagine", MJ, 50.0),
        Price::times("mj_variation", MJ, 50.0),
        Price::times("mj_reroll", MJ, 50.0),
        Price::times("mj_blend", MJ, 50.0),
        Price::times("mj_modal", MJ, 50.0),
        Price::times("mj_zoom", MJ, 50.0),
        Price::times("mj_custom_zoom", MJ, 50.0),
        Price::times("mj_shorten", MJ, 50.0),
        Price::times("mj_high_variation", MJ, 50.0),
        Price::times("mj_low_variation", MJ, 50.0),
        Price::times("mj_pan", MJ, 50.0),
        Price::times("mj_inpaint", MJ, 50.0),
        Price::times("mj_upscale", MJ, 25.0),
        Price::times("mj_describe", MJ, 25.0),
        Price::times("suno_music", SUNO, 50.0),
        Price::times("suno_lyrics", SUNO, 5.0),
    ]
}

const USD_PER_RATIO: Decimal = Decimal::from_parts(2, 0, 0, false, 3); // 0.002
const CNY_PER_RATIO: Decimal = Decimal::from_parts(14, 0, 0, false, 3); // 0.014

/// A ratio as a price for people (spec section 9).
///
/// - `0` (or a negative/NaN ratio) shows `Free`.
/// - Otherwise `$` + `ratio * 0.002`, or with `yuan` `¥` + `ratio * 0.014`. That base figure is
///   the price per 1K tokens for a `tokens` price, and the price per call for a `times` price
///   (a times price costs `1000 * ratio` quota = `ratio * 0.002` USD).
/// - `per_thousand` multiplies the figure by 1000: per 1K x 1000 = the price per 1M tokens (the
///   unit providers publish). Do not set it for `times` prices.
/// - Rounded half away from zero to 6 significant digits, trailing zeros dropped, never in
///   exponent notation: `display_price(1.25, false, true)` = `$2.5`,
///   `display_price(0.075, false, false)` = `$0.00015`, `display_price(1.0, true, false)` = `¥0.014`.
pub fn display_price(ratio_value: f64, yuan: bool, per_thousand: bool) -> String {
    let r = ratio(ratio_value);
    if r.is_zero() {
        return "Free".to_owned();
    }
    let (symbol, unit) = if yuan {
        ("¥", CNY_PER_RATIO)
    } else {
        ("$", USD_PER_RATIO)
    };
    let mut v = mul(r, unit);
    if per_thousand {
        v = mul(v, THOUSAND);
    }
    format!("{symbol}{}", significant(v, 6))
}

/// Rounds a positive decimal to `digits` significant digits and drops trailing zeros.
fn significant(v: Decimal, digits: u32) -> Decimal {
    if v.is_zero() {
        return v;
    }
    let mantissa_digits = v.mantissa().unsigned_abs().checked_ilog10().unwrap_or(0) + 1;
    // Position of the leading digit relative to the decimal point: value = m * 10^-scale.
    let lead = i64::from(mantissa_digits) - 1 - i64::from(v.scale());
    let dp = i64::from(digits) - 1 - lead;
    let rounded = if dp >= 0 {
        v.round_dp_with_strategy(
            u32::try_from(dp).unwrap_or(u32::MAX),
            RoundingStrategy::MidpointAwayFromZero,
        )
    } else {
        // Round to a multiple of 10^-dp (values of a million and more).
        let exp = u32::try_from(-dp).unwrap_or(0);
        let factor = Decimal::from_i128_with_scale(10_i128.pow(exp.min(28)), 0);
        match v.checked_div(factor) {
            Some(q) => mul(
                q.round_dp_with_strategy(0, RoundingStrategy::MidpointAwayFromZero),
                factor,
            ),
            None => v,
        }
    };
    rounded.normalize()
}

/// How a price list from a remote price server is merged into the local one. Locked local
/// prices are never changed or removed, whatever the mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncMode {
    /// Add the remote models that have no local price; leave every existing price alone.
    Add,
    /// Add the missing models and replace the unlocked local prices of models the list has.
    Update,
    /// Make the unlocked local prices equal to the list: add, replace, and delete unlocked
    /// prices of models the list does not have.
    Overwrite,
}

impl FromStr for SyncMode {
    type Err = DomainError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "add" => Ok(SyncMode::Add),
            "update" => Ok(SyncMode::Update),
            "overwrite" => Ok(SyncMode::Overwrite),
            _ => Err(DomainError::invalid(
                "mode",
                "must be \"add\", \"update\" or \"overwrite\"",
            )),
        }
    }
}

/// What a price sync changes; `unchanged` counts remote prices equal to the local ones and
/// `locked` the remote prices skipped because the local price is locked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SyncPlan {
    pub insert: Vec<Price>,
    pub update: Vec<Price>,
    pub delete: Vec<String>,
    pub unchanged: usize,
    pub locked: usize,
}

/// Plans merging `remote` into `local` in `mode`. Remote prices arrive unlocked (a lock is the
/// operator's own decision); a model listed twice remotely counts once (the first wins).
pub fn plan_sync(local: &[Price], remote: &[Price], mode: SyncMode) -> SyncPlan {
    use std::collections::{BTreeMap, BTreeSet};
    let by_model: BTreeMap<&str, &Price> = local.iter().map(|p| (p.model.as_str(), p)).collect();
    let mut seen = BTreeSet::new();
    let mut plan = SyncPlan::default();
    for r in remote {
        if !seen.insert(r.model.as_str()) {
            continue;
        }
        // A remote list that does not know the model's output limit keeps the local one.
        let max_output = match (r.max_output, by_model.get(r.model.as_str())) {
            (0, Some(l)) => l.max_output,
            (n, _) => n,
        };
        let incoming = Price {
            locked: false,
            max_output,
            ..r.clone()
        };
        match by_model.get(r.model.as_str()) {
            None => plan.insert.push(incoming),
            Some(l) if l.locked => plan.locked += 1,
            Some(l) if **l == incoming => plan.unchanged += 1,
            Some(_) if mode == SyncMode::Add => plan.unchanged += 1,
            Some(_) => plan.update.push(incoming),
        }
    }
    if mode == SyncMode::Overwrite {
        plan.delete = local
            .iter()
            .filter(|l| !l.locked && !seen.contains(l.model.as_str()))
            .map(|l| l.model.clone())
            .collect();
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn usage(prompt: i64, completion: i64) -> Usage {
        Usage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            ..Usage::default()
        }
    }

    #[test]
    fn decimal_conversion_is_shortest() {
        assert_eq!(Decimal::try_from(0.1_f64).unwrap(), Decimal::new(1, 1));
        assert_eq!(ratio(0.075), Decimal::new(75, 3));
        assert_eq!(ratio(1.25), Decimal::new(125, 2));
        assert_eq!(ratio(0.0375), Decimal::new(375, 4));
        assert_eq!(ratio(-1.0), Decimal::ZERO);
        assert_eq!(ratio(f64::NAN), Decimal::ZERO);
        assert_eq!(ratio(f64::INFINITY), Decimal::MAX);
        // Remembered conversions are the same, also across the memo being emptied when full.
        for round in 0..2 {
            for i in 1..=3000 {
                let x = f64::from(i) / 1000.0;
                assert_eq!(
                    ratio(x),
                    Decimal::try_from(x).unwrap(),
                    "{x} (round {round})"
                );
            }
        }
        assert_eq!(ratio(1.0), Decimal::ONE);
    }

    #[test]
    fn price_type_parse_and_serde() {
        assert_eq!("tokens".parse::<PriceType>(), Ok(PriceType::Tokens));
        assert_eq!(" times ".parse::<PriceType>(), Ok(PriceType::Times));
        assert!("Tokens".parse::<PriceType>().is_err());
        assert_eq!(
            "".parse::<PriceType>(),
            Err(DomainError::Required { field: "type" })
        );
        assert_eq!(
            serde_json::to_string(&PriceType::Times).unwrap(),
            "\"times\""
        );
        assert_eq!(PriceType::Tokens.to_string(), "tokens");
    }

    #[test]
    fn extra_ratios_json() {
        assert_eq!(ExtraRatios::parse("").unwrap(), ExtraRatios::default());
        let r = ExtraRatios::parse(r#"{"cached_tokens": 0.5}"#).unwrap();
        assert_eq!(r.cached_tokens, 0.5);
        assert_eq!(r.cached_write_tokens, 1.25);
        assert_eq!(r.cached_read_tokens, 0.1);
        assert_eq!(ExtraRatios::parse(&r.to_json()).unwrap(), r);
        assert!(ExtraRatios::parse(r#"{"cached_tokens": -1}"#).is_err());
        assert!(ExtraRatios::parse("[").is_err());
    }

    #[test]
    fn price_json_shape() {
        let p: Price = serde_json::from_str(
            r#"{"model":"gpt-4o","type":"tokens","channel_type":1,"input":1.25,"output":5}"#,
        )
        .unwrap();
        assert_eq!(p, Price::tokens("gpt-4o", 1, 1.25, 5.0));
        let back: Price = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
        assert_eq!(back, p);
    }

    /// Regression (the `price_text_round_trips` property): without serde_json's
    /// `float_roundtrip`, this ratio read back one unit in the last place off, so stored extra
    /// ratios drifted on every save and load.
    #[test]
    fn extra_ratios_survive_their_json_text() {
        let extra = ExtraRatios {
            cached_read_tokens: 93.192_486_103_085_19,
            ..ExtraRatios::default()
        };
        assert_eq!(ExtraRatios::parse(&extra.to_json()), Ok(extra));
    }

    #[test]
    fn price_validation() {
        assert!(validate_price(&Price::tokens("gpt-4*", 1, 0.0, 0.0)).is_ok());
        assert!(validate_price(&Price::tokens("", 1, 1.0, 1.0)).is_err());
        assert!(validate_price(&Price::tokens("*", 1, 1.0, 1.0)).is_err());
        assert!(validate_price(&Price::tokens("m", 0, 1.0, 1.0)).is_err());
        assert_eq!(
            validate_price(&Price::tokens("m", 1, -0.5, 1.0)),
            Err(DomainError::TooSmall {
                field: "input",
                min: 0
            })
        );
        assert!(validate_price(&Price::tokens("m", 1, 1.0, f64::NAN)).is_err());
        for p in default_prices() {
            assert!(validate_price(&p).is_ok(), "{}", p.model);
        }
    }

    #[test]
    fn ratio_one_is_one_quota_per_token() {
        let p = Price::tokens("m", 1, 1.0, 1.0);
        // 1K tokens at ratio 1 = $0.002 = 0.002 * 500000 quota = 1000 quota
        assert_eq!(cost(&p, &usage(1000, 0), 1.0), 1000);
    }

    #[test]
    fn token_costs() {
        let p = Price::tokens("gpt-4o", 1, 1.25, 5.0);
        assert_eq!(cost(&p, &usage(1000, 200), 1.0), 1250 + 1000);
        assert_eq!(cost(&p, &usage(1000, 200), 0.5), 1125);
        // ceil
        assert_eq!(cost(&p, &usage(1, 0), 1.0), 2);
        // 0.1 * 3 is exactly 0.3 (no float drift): ceil(3 * 0.1 * 10) = 3
        let q = Price::tokens("m", 1, 0.1, 0.0);
        assert_eq!(cost(&q, &usage(3, 0), 10.0), 3);
        // minimum 1 when anything was used and the input price is not zero
        let cheap = Price::tokens("m", 1, 0.0001, 0.0);
        assert_eq!(cost(&cheap, &usage(1, 0), 1.0), 1);
        assert_eq!(cost(&cheap, &usage(0, 5), 1.0), 1);
        assert_eq!(cost(&cheap, &usage(0, 0), 1.0), 0);
        // free models and free groups cost nothing
        let free = Price::tokens("m", 1, 0.0, 0.0);
        assert_eq!(cost(&free, &usage(100, 100), 1.0), 0);
        assert_eq!(cost(&p, &usage(100, 100), 0.0), 0);
    }

    #[test]
    fn extra_ratios_adjust_counts_without_double_counting() {
        // OpenAI: 1000 prompt of which 800 cached at 0.5; 500 completion of which 300 reasoning.
        let p = Price::tokens("gpt-4o", 1, 1.0, 2.0).with_cached(0.5);
        let u = Usage {
            prompt_tokens: 1000,
            completion_tokens: 500,
            cached_tokens: 800,
            reasoning_tokens: 300,
            ..Usage::default()
        };
        // prompt = 1000 - 800*0.5 = 600; completion = 500 (reasoning ratio 1)
        assert_eq!(cost(&p, &u, 1.0), 600 + 1000);

        // Anthropic: 100 fresh + 1000 cache read (0.1) + 200 cache write (1.25) = 1300 prompt.
        let a = Price::tokens("claude", 14, 1.0, 1.0);
        let u = Usage {
            prompt_tokens: 1300,
            cached_read_tokens: 1000,
            cached_write_tokens: 200,
            ..Usage::default()
        };
        // 100 + 1000*0.1 + 200*1.25 = 450
        assert_eq!(cost(&a, &u, 1.0), 450);

        // audio and reasoning ratios
        let r = Price::tokens("m", 1, 1.0, 1.0).with_extra(ExtraRatios {
            input_audio_tokens: 8.0,
            output_audio_tokens: 2.0,
            reasoning_tokens: 3.0,
            ..ExtraRatios::default()
        });
        let u = Usage {
            prompt_tokens: 110,
            input_audio_tokens: 10,
            completion_tokens: 40,
            output_audio_tokens: 10,
            reasoning_tokens: 5,
            ..Usage::default()
        };
        // prompt 100 + 10*8 = 180; completion 25 + 10*2 + 5*3 = 60
        assert_eq!(cost(&r, &u, 1.0), 240);

        // text and image ratios: each bucket moves the charge by exactly its own factor
        let base = Price::tokens("gpt-image-1", 1, 2.5, 20.0);
        let u = Usage {
            prompt_tokens: 150,
            input_text_tokens: 50,
            input_image_tokens: 100,
            completion_tokens: 300,
            output_text_tokens: 40,
            output_image_tokens: 260,
            ..Usage::default()
        };
        let plain = cost(&base, &u, 1.0);
        assert_eq!(plain, 150 * 5 / 2 + 300 * 20);
        let with = |extra: ExtraRatios| cost(&base.clone().with_extra(extra), &u, 1.0);
        let d = ExtraRatios::default();
        // input text x2: +50 tokens at 2.5
        assert_eq!(
            with(ExtraRatios {
                input_text_tokens: 2.0,
                ..d
            }) - plain,
            125
        );
        // input image x4: +300 tokens at 2.5
        assert_eq!(
            with(ExtraRatios {
                input_image_tokens: 4.0,
                ..d
            }) - plain,
            750
        );
        // output text x0.5: -20 tokens at 20
        assert_eq!(
            with(ExtraRatios {
                output_text_tokens: 0.5,
                ..d
            }) - plain,
            -400
        );
        // output image x2: +260 tokens at 20
        assert_eq!(
            with(ExtraRatios {
                output_image_tokens: 2.0,
                ..d
            }) - plain,
            5200
        );
        // all four at once add up
        let all = ExtraRatios {
            input_text_tokens: 2.0,
            input_image_tokens: 4.0,
            output_text_tokens: 0.5,
            output_image_tokens: 2.0,
            ..d
        };
        assert_eq!(with(all) - plain, 125 + 750 - 400 + 5200);

        // inconsistent details never make a negative count
        let u = Usage {
            prompt_tokens: 10,
            cached_read_tokens: 1000,
            ..Usage::default()
        };
        assert_eq!(cost(&a, &u, 1.0), 1);
    }

    #[test]
    fn per_call_costs() {
        let p = Price::times("dall-e-3", 1, 20.0);
        assert_eq!(cost(&p, &Usage::default(), 1.0), 20_000);
        assert_eq!(cost(&p, &usage(5000, 5000), 1.0), 20_000);
        assert_eq!(cost(&p, &usage(0, 0), 1.5), 30_000);
        assert_eq!(
            cost(&Price::times("m", 1, 0.0001), &Usage::default(), 1.0),
            1
        );
        assert_eq!(cost(&Price::times("m", 1, 0.0), &Usage::default(), 1.0), 0);
    }

    #[test]
    fn huge_numbers_saturate() {
        let p = Price::tokens("m", 1, 1e20, 1e20);
        assert_eq!(cost(&p, &usage(i64::MAX, i64::MAX), 1e20), i64::MAX);
        let t = Price::times("m", 1, f64::MAX);
        assert_eq!(cost(&t, &Usage::default(), f64::MAX), i64::MAX);
        assert_eq!(
            reservation(&p, i64::MAX, Some(i64::MAX), 1.0, i64::MAX),
            i64::MAX
        );
    }

    #[test]
    fn reservations() {
        let p = Price::tokens("gpt-4o", 1, 1.25, 5.0);
        assert_eq!(reservation(&p, 1000, None, 1.0, 500), 1250 + 500);
        assert_eq!(reservation(&p, 1000, Some(100), 1.0, 0), 1250 + 500);
        assert_eq!(reservation(&p, 1000, Some(100), 2.0, 10), 3510);
        assert_eq!(reservation(&p, -5, Some(-5), 1.0, -5), 0);
        assert_eq!(reservation(&p, 0, None, 1.0, 500), 500);
        // free requests reserve nothing
        assert_eq!(reservation(&p, 1000, Some(100), 0.0, 500), 0);
        let free = Price::tokens("m", 1, 0.0, 0.0);
        assert_eq!(reservation(&free, 1000, Some(100), 1.0, 500), 0);
        let t = Price::times("dall-e-3", 1, 20.0);
        assert_eq!(reservation(&t, 1000, Some(100), 1.0, 500), 20_000);
    }

    #[test]
    fn reservation_bounds_cover_every_answer_asked_for() {
        // 1000 prompt tokens at 1.25, output at 5.0; four answers of at most 100 tokens.
        let p = Price::tokens("gpt-4o", 1, 1.25, 5.0).with_max_output(16_384);
        let demand = |answers| Demand {
            prompt_tokens: 1000,
            max_tokens: Some(100),
            generates: true,
            units: 1,
            answers,
        };
        let b = reservation_bounds(&p, &demand(4), 4096, 1.0, 0);
        assert_eq!((b.min, b.max), (1250 + 4 * 5, 1250 + 4 * 100 * 5));
        let one = reservation_bounds(&p, &demand(1), 4096, 1.0, 0);
        assert_eq!(reservation_bounds(&p, &demand(0), 4096, 1.0, 0), one);
        assert_eq!((one.min, one.max), (1250 + 5, 1250 + 100 * 5));
    }

    #[test]
    fn reservation_bounds_cover_the_worst_case() {
        // 1000 prompt tokens at 1.25, output at 5.0, group 1, no pre-consumed quota.
        let p = Price::tokens("gpt-4o", 1, 1.25, 5.0).with_max_output(16_384);
        let b = reservation_bounds(
            &p,
            &Demand {
                prompt_tokens: 1000,
                max_tokens: None,
                generates: true,
                units: 1,
                answers: 1,
            },
            4096,
            1.0,
            0,
        );
        assert_eq!(b.min, 1250 + 5);
        assert_eq!(b.max, 1250 + 16_384 * 5, "no max_tokens: the model's limit");
        let b = reservation_bounds(
            &p,
            &Demand {
                prompt_tokens: 1000,
                max_tokens: Some(100),
                generates: true,
                units: 1,
                answers: 1,
            },
            4096,
            1.0,
            0,
        );
        assert_eq!(b.max, 1250 + 500, "the client's max_tokens");
        let b = reservation_bounds(
            &p,
            &Demand {
                prompt_tokens: 1000,
                max_tokens: Some(1_000_000),
                generates: true,
                units: 1,
                answers: 1,
            },
            4096,
            1.0,
            0,
        );
        assert_eq!(b.max, 1250 + 16_384 * 5, "capped by the model's limit");
        let unknown = Price::tokens("m", 1, 1.0, 2.0);
        let b = reservation_bounds(
            &unknown,
            &Demand {
                prompt_tokens: 10,
                max_tokens: None,
                generates: true,
                units: 1,
                answers: 1,
            },
            4096,
            1.0,
            7,
        );
        assert_eq!(
            b.max,
            10 + 4096 * 2 + 7,
            "the default limit, plus pre-consumed quota"
        );
        let b = reservation_bounds(
            &unknown,
            &Demand {
                prompt_tokens: 10,
                max_tokens: None,
                generates: false,
                units: 1,
                answers: 1,
            },
            4096,
            1.0,
            0,
        );
        assert_eq!((b.min, b.max), (10, 10), "embeddings reserve the prompt");
        let free = Price::tokens("m", 1, 0.0, 0.0);
        assert_eq!(
            reservation_bounds(
                &free,
                &Demand {
                    prompt_tokens: 10,
                    max_tokens: None,
                    generates: true,
                    units: 1,
                    answers: 1,
                },
                4096,
                1.0,
                9
            )
            .max,
            0
        );
    }

    #[test]
    fn reservation_bounds_multiply_per_call_prices_by_units() {
        let img = Price::times("dall-e-2", 1, 10.0);
        let one = reservation_bounds(
            &img,
            &Demand {
                prompt_tokens: 0,
                max_tokens: None,
                generates: false,
                units: 1,
                answers: 1,
            },
            4096,
            1.0,
            0,
        );
        assert_eq!((one.min, one.max), (10_000, 10_000));
        let ten = reservation_bounds(
            &img,
            &Demand {
                prompt_tokens: 0,
                max_tokens: None,
                generates: false,
                units: 10,
                answers: 1,
            },
            4096,
            1.0,
            0,
        );
        assert_eq!(
            (ten.min, ten.max),
            (100_000, 100_000),
            "ten images reserve ten calls"
        );
        assert_eq!(cost_units(&img, &Usage::default(), 1.0, 10), 100_000);
        assert_eq!(cost_units(&img, &Usage::default(), 1.5, 3), 45_000);
        assert_eq!(cost_units(&img, &Usage::default(), 1.0, 0), 10_000);
    }

    #[test]
    fn covered_completion_tokens_fit_the_reservation() {
        let p = Price::tokens("gpt-4o", 1, 1.25, 5.0);
        // 20 000 quota, 1000 prompt tokens (1250): (20000 - 1250) / 5 = 3750 output tokens.
        assert_eq!(covered_completion_tokens(&p, 1000, 20_000, 1.0, 0), 3750);
        assert_eq!(covered_completion_tokens(&p, 1000, 1250, 1.0, 0), 0);
        assert_eq!(covered_completion_tokens(&p, 1000, 100, 1.0, 0), 0);
        let free_out = Price::tokens("m", 1, 1.0, 0.0);
        assert_eq!(
            covered_completion_tokens(&free_out, 10, 100, 1.0, 0),
            i64::MAX
        );
        // Never more than what the reservation pays for, for awkward ratios.
        for (input, output, group, reserved) in [(0.3, 0.7, 1.3, 9_999), (0.075, 0.3, 0.9, 777)] {
            let p = Price::tokens("m", 1, input, output);
            let c = covered_completion_tokens(&p, 100, reserved, group, 3);
            let usage = Usage {
                prompt_tokens: 100,
                completion_tokens: c,
                ..Usage::default()
            };
            assert!(cost(&p, &usage, group) + 3 <= reserved);
            let more = Usage {
                completion_tokens: c + 1,
                ..usage
            };
            assert!(
                cost(&p, &more, group) + 3 > reserved,
                "the largest such count"
            );
        }
    }

    #[test]
    fn table_lookup() {
        let table = PriceTable::new(vec![
            Price::tokens("gpt-4*", 1, 1.0, 1.0),
            Price::tokens("gpt-4o*", 1, 2.0, 2.0),
            Price::tokens("gpt-4o", 1, 3.0, 3.0),
            Price::tokens("claude-3", 14, 4.0, 4.0),
        ]);
        assert_eq!(table.len(), 4);
        assert_eq!(table.lookup("gpt-4o").map(|p| p.input), Some(3.0));
        assert_eq!(table.lookup("gpt-4o-mini").map(|p| p.input), Some(2.0));
        assert_eq!(table.lookup("gpt-4-turbo").map(|p| p.input), Some(1.0));
        assert_eq!(table.lookup("gpt-4").map(|p| p.input), Some(1.0));
        assert!(table.lookup("gpt-3.5-turbo").is_none());
        assert!(table.lookup("claude-3-opus").is_none());
        assert_eq!(table.iter().count(), 4);
        // later duplicates win
        let t = PriceTable::new(vec![
            Price::tokens("m", 1, 1.0, 1.0),
            Price::tokens("m", 1, 2.0, 1.0),
        ]);
        assert_eq!(t.lookup("m").map(|p| p.input), Some(2.0));
    }

    #[test]
    fn default_price_list() {
        let prices = default_prices();
        let table = PriceTable::new(prices.clone());
        assert_eq!(table.len(), prices.len(), "model names are unique");
        let gpt4o = table.lookup("gpt-4o").unwrap();
        assert_eq!((gpt4o.input, gpt4o.output), (1.25, 5.0));
        assert_eq!(gpt4o.extra.cached_tokens, 0.5);
        assert!(prices.iter().all(|p| !p.locked));
        assert_eq!(
            table.lookup("dall-e-3").map(|p| p.price_type),
            Some(PriceType::Times)
        );
        let claude = table.lookup("claude-sonnet-4-0").unwrap();
        assert_eq!(claude.extra, ExtraRatios::default());
        assert_eq!(claude.channel_type, 14);
        assert_eq!(
            table.lookup("deepseek-chat").map(|p| p.channel_type),
            Some(28)
        );
        assert_eq!(
            table.lookup("gemini-2.5-pro").map(|p| p.channel_type),
            Some(25)
        );
        // gpt-4o: 1M prompt tokens cost $2.50 = 1_250_000 quota
        assert_eq!(cost(gpt4o, &usage(1_000_000, 0), 1.0), 1_250_000);
    }

    #[test]
    fn price_display() {
        assert_eq!(display_price(0.0, false, false), "Free");
        assert_eq!(display_price(0.0, true, true), "Free");
        assert_eq!(display_price(1.0, false, false), "$0.002");
        assert_eq!(display_price(1.0, true, false), "¥0.014");
        assert_eq!(display_price(1.25, false, true), "$2.5");
        assert_eq!(display_price(1.25, true, true), "¥17.5");
        assert_eq!(display_price(0.075, false, false), "$0.00015");
        assert_eq!(display_price(0.075, false, true), "$0.15");
        assert_eq!(display_price(1.0 / 3.0, false, true), "$0.666667");
        assert_eq!(display_price(123_456_789.0, false, true), "$246914000");
        assert_eq!(display_price(20.0, false, false), "$0.04");
    }

    /// Ratios as operators set them (a few decimals), as floats make them (a third), tiny,
    /// huge, zero and invalid ones.
    fn ratio_value() -> impl Strategy<Value = f64> {
        prop_oneof![
            4 => (0u32..2_000_000).prop_map(|n| f64::from(n) / 1e4),
            1 => (1u32..1000).prop_map(|n| 1.0 / f64::from(n)),
            1 => (0.0f64..1.0).prop_map(|x| x * 1e-9),
            1 => 1.0f64..1e12,
            1 => prop_oneof![Just(0.0), Just(1.0), Just(-1.0), Just(f64::NAN), Just(f64::INFINITY)],
        ]
    }

    /// Token counts: small, large, and at the ends of `i64`.
    fn counts() -> impl Strategy<Value = i64> {
        prop_oneof![
            4 => 0i64..100_000,
            1 => 0i64..1 << 50,
            1 => prop_oneof![Just(i64::MAX), Just(i64::MIN), Just(-5)],
        ]
    }

    proptest! {
        #[test]
        fn cost_is_monotonic_in_tokens(
            input in 0.0f64..100.0,
            output in 0.0f64..100.0,
            group in 0.0f64..10.0,
            p in 0i64..1_000_000,
            c in 0i64..1_000_000,
            dp in 0i64..1_000_000,
            dc in 0i64..1_000_000,
        ) {
            let price = Price::tokens("m", 1, input, output);
            let a = cost(&price, &usage(p, c), group);
            let b = cost(&price, &usage(p + dp, c + dc), group);
            prop_assert!(a <= b, "{} > {}", a, b);
        }

        #[test]
        fn cost_is_at_least_one_when_used(
            input in 0.000_001f64..100.0,
            output in 0.0f64..100.0,
            group in 0.000_001f64..10.0,
            p in 0i64..1_000_000,
            c in 0i64..1_000_000,
            cached in 0i64..1_000_000,
        ) {
            prop_assume!(p + c > 0);
            let price = Price::tokens("m", 1, input, output).with_cached(0.0);
            let u = Usage { prompt_tokens: p, completion_tokens: c, cached_tokens: cached.min(p), ..Usage::default() };
            prop_assert!(cost(&price, &u, group) >= 1);
        }

        /// The integer reading of a token price gives the decimal one's quota wherever it
        /// answers, and answers for the prices operators set (ratios of a few decimals).
        #[test]
        fn integer_cost_is_the_decimal_cost(
            input in ratio_value(),
            output in ratio_value(),
            group in ratio_value(),
            p in counts(),
            c in counts(),
        ) {
            let (ri, ro, rg) = (ratio(input), ratio(output), ratio(group));
            let plain = Usage { prompt_tokens: p, completion_tokens: c, ..Usage::default() };
            let want = decimal_tokens_cost(&plain, &ExtraRatios::default(), ri, ro, rg);
            if let Some(got) = exact_tokens_cost(p.max(0), c.max(0), ri, ro, rg) {
                prop_assert_eq!(got, want, "{} {} {} {} {}", input, output, group, p, c);
            }
            // Through `cost`: detail buckets priced at 1 change nothing, so they take the
            // integer path too; priced otherwise, the decimals.
            for extra in [1.0, 0.5] {
                let price = Price::tokens("m", 1, input, output).with_extra(ExtraRatios {
                    cached_tokens: extra,
                    reasoning_tokens: extra,
                    ..ExtraRatios::default()
                });
                let u = Usage {
                    prompt_tokens: p,
                    completion_tokens: c,
                    cached_tokens: p / 2,
                    reasoning_tokens: c / 3,
                    ..Usage::default()
                };
                let mut want = if u.total_tokens() <= 0 {
                    0
                } else {
                    decimal_tokens_cost(&u, &price.extra, ri, ro, rg)
                };
                if want == 0 && u.total_tokens() > 0 && !ri.is_zero() && !rg.is_zero() {
                    want = 1;
                }
                prop_assert_eq!(cost(&price, &u, group), want, "{} {} {} {} {} {}", extra, input, output, group, p, c);
            }
            let short = |x: f64| (x * 1e4).fract() == 0.0 && x < 1e6;
            if short(input) && short(output) && short(group) && p < 1 << 40 && c < 1 << 40 {
                prop_assert!(exact_tokens_cost(p.max(0), c.max(0), ri, ro, rg).is_some());
            }
        }

        #[test]
        fn cost_matches_formula_for_plain_usage(
            input_milli in 0u32..100_000,
            output_milli in 0u32..100_000,
            p in 0i64..10_000_000,
            c in 0i64..10_000_000,
        ) {
            // ratios with 3 decimals: the exact answer is computable in integers
            let price = Price::tokens("m", 1, f64::from(input_milli) / 1000.0, f64::from(output_milli) / 1000.0);
            let exact_milli = i128::from(p) * i128::from(input_milli) + i128::from(c) * i128::from(output_milli);
            let mut expected = i64::try_from((exact_milli + 999) / 1000).unwrap();
            if expected == 0 && input_milli > 0 && p + c > 0 {
                expected = 1;
            }
            prop_assert_eq!(cost(&price, &usage(p, c), 1.0), expected);
        }

        #[test]
        fn lookup_prefers_exact_then_longest_prefix(
            model in "[a-c]{1,6}",
            rows in proptest::collection::vec(("[a-c]{1,6}", any::<bool>()), 0..12),
        ) {
            let prices: Vec<Price> = rows
                .iter()
                .enumerate()
                .map(|(i, (name, wild))| {
                    let m = if *wild { format!("{name}*") } else { name.clone() };
                    Price::tokens(&m, 1, i as f64, 0.0)
                })
                .collect();
            let table = PriceTable::new(prices.clone());
            let found = table.lookup(&model).map(|p| p.model.clone());
            let expected = if prices.iter().any(|p| p.model == model) {
                Some(model.clone())
            } else {
                prices
                    .iter()
                    .filter_map(|p| p.model.strip_suffix('*').filter(|pre| model.starts_with(pre)))
                    .max_by_key(|pre| pre.len())
                    .map(|pre| format!("{pre}*"))
            };
            prop_assert_eq!(found, expected);
        }

        #[test]
        fn lookup_agrees_with_a_linear_reference(
            rows in proptest::collection::vec("[ab*é]{0,4}", 0..10),
            model in "[ab*é]{0,5}",
        ) {
            // Fuzzing of the price wildcards (docs/security.md, "Fuzzing"): names with `*`
            // anywhere, multi-byte characters and duplicates. The row is identified by its index
            // (its input ratio). Reference: the last exact row of that name, else among the rows
            // ending in `*` after at least one character whose prefix starts `model`, the longest,
            // the last one given for equal names.
            let prices: Vec<Price> = rows
                .iter()
                .enumerate()
                .map(|(i, name)| Price::tokens(name, 1, i as f64, 0.0))
                .collect();
            let wildcard = |m: &str| m.chars().count() >= 2 && m.ends_with('*');
            let expected = rows
                .iter()
                .rposition(|r| !wildcard(r) && *r == model)
                .or_else(|| {
                    rows.iter()
                        .enumerate()
                        .filter(|(_, r)| wildcard(r) && model.starts_with(&r[..r.len() - 1]))
                        .max_by_key(|(i, r)| (r.len(), *i))
                        .map(|(i, _)| i)
                });
            let table = PriceTable::new(prices);
            prop_assert_eq!(table.lookup(&model).map(|p| p.input as usize), expected);
        }

        #[test]
        fn price_wildcards_agree_with_model_allow_lists(
            name in "[ab*é]{0,4}|\\PC{0,6}",
            model in "[ab*é]{0,5}|\\PC{0,6}",
        ) {
            // One rule, one reading: a row of the price table matches the models a key's
            // allow-list entry of the same text allows.
            let table = PriceTable::new(vec![Price::tokens(&name, 1, 1.0, 1.0)]);
            prop_assert_eq!(
                table.lookup(&model).is_some(),
                crate::token::model_allowed(std::slice::from_ref(&name), &model)
            );
        }

        #[test]
        fn valid_model_names_are_exact_or_prefix_rows(name in "[ab*é ,]{0,5}|\\PC{0,8}", tail in "\\PC{0,4}") {
            if validate_model_name(name.trim()).is_ok() {
                let name = name.trim();
                let table = PriceTable::new(vec![Price::tokens(name, 1, 1.0, 1.0)]);
                match name.strip_suffix('*') {
                    Some(prefix) => {
                        prop_assert!(!prefix.is_empty() && !prefix.contains('*'));
                        let longer = format!("{prefix}{tail}");
                        prop_assert!(table.lookup(&longer).is_some());
                    }
                    None => {
                        prop_assert!(!name.contains('*'));
                        prop_assert!(table.lookup(name).is_some());
                        let longer = format!("{name}{tail}");
                        prop_assert_eq!(table.lookup(&longer).is_some(), tail.is_empty());
                    }
                }
            }
        }

        #[test]
        fn price_text_round_trips(
            input in 0.0f64..1e6,
            output in 0.0f64..1e6,
            extra in proptest::array::uniform10(0.0f64..100.0),
            times in any::<bool>(),
            max_output in 0i64..1_000_000,
            text in "\\PC{0,40}",
        ) {
            // Stored texts parse back to what was written; arbitrary text is refused with a
            // typed error, never a panic.
            let extra = ExtraRatios {
                cached_tokens: extra[0],
                cached_write_tokens: extra[1],
                cached_read_tokens: extra[2],
                input_audio_tokens: extra[3],
                output_audio_tokens: extra[4],
                reasoning_tokens: extra[5],
                input_text_tokens: extra[6],
                output_text_tokens: extra[7],
                input_image_tokens: extra[8],
                output_image_tokens: extra[9],
            };
            prop_assert_eq!(ExtraRatios::parse(&extra.to_json()), Ok(extra));
            let mut price = if times { Price::times("m*", 1, input) } else { Price::tokens("m", 1, input, output) };
            price = price.with_extra(extra).with_max_output(max_output);
            let json = serde_json::to_string(&price).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let back: Price = serde_json::from_str(&json).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(back, price.clone());
            prop_assert_eq!(price.price_type.to_string().parse::<PriceType>(), Ok(price.price_type));
            let _ = ExtraRatios::parse(&text);
            let _ = text.parse::<PriceType>();
            let _ = serde_json::from_str::<Price>(&text);
        }

        #[test]
        fn display_has_at_most_six_significant_digits(r in 0.000_001f64..1_000_000.0, yuan in any::<bool>(), k in any::<bool>()) {
            let s = display_price(r, yuan, k);
            let digits: String = s.chars().filter(char::is_ascii_digit).collect();
            let significant = digits.trim_start_matches('0').trim_end_matches('0');
            prop_assert!(significant.len() <= 6, "{}", s);
        }
    }

    fn p(model: &str, input: f64, locked: bool) -> Price {
        Price {
            model: model.into(),
            price_type: PriceType::Tokens,
            channel_type: 1,
            input,
            output: input * 2.0,
            extra: ExtraRatios::default(),
            locked,
            max_output: 0,
        }
    }

    #[test]
    fn sync_modes_respect_locks() {
        let local = vec![
            p("a", 1.0, false),
            p("b", 1.0, true),
            p("c", 1.0, false),
            p("d", 3.0, false),
        ];
        let remote = vec![
            p("a", 2.0, false),
            p("b", 2.0, false),
            p("d", 3.0, true),
            p("e", 5.0, false),
            p("e", 9.0, false),
        ];

        let add = plan_sync(&local, &remote, SyncMode::Add);
        assert_eq!(add.insert, vec![p("e", 5.0, false)]);
        assert!(add.update.is_empty() && add.delete.is_empty());
        assert_eq!((add.locked, add.unchanged), (1, 2));

        let update = plan_sync(&local, &remote, SyncMode::Update);
        assert_eq!(update.insert, vec![p("e", 5.0, false)]);
        assert_eq!(update.update, vec![p("a", 2.0, false)]);
        assert!(update.delete.is_empty());
        // "d" arrives locked remotely but is equal once the lock is dropped: unchanged.
        assert_eq!((update.locked, update.unchanged), (1, 1));

        let over = plan_sync(&local, &remote, SyncMode::Overwrite);
        assert_eq!(over.update, vec![p("a", 2.0, false)]);
        assert_eq!(over.delete, vec!["c".to_owned()]);

        assert_eq!(
            "overwrite".parse::<SyncMode>().unwrap(),
            SyncMode::Overwrite
        );
        assert!("replace".parse::<SyncMode>().is_err());
    }
}
