//! The modality split of upstream usage (text, image, audio tokens), which the text and image
//! extra ratios price.

use serde_json::json;
use switchboard_relay::providers::gemini;
use switchboard_relay::usage::Usage;

#[test]
fn gemini_modalities_fill_the_text_image_and_audio_buckets() {
    // An image-generation answer of gemini-2.5-flash-image: text and an image in, an image out.
    let m = json!({
        "promptTokenCount": 1300,
        "candidatesTokenCount": 1290,
        "totalTokenCount": 2590,
        "promptTokensDetails": [
            {"modality": "TEXT", "tokenCount": 42},
            {"modality": "IMAGE", "tokenCount": 1258}
        ],
        "candidatesTokensDetails": [{"modality": "IMAGE", "tokenCount": 1290}]
    });
    assert_eq!(
        gemini::usage_from(&m),
        Some(Usage {
            prompt_tokens: 1300,
            completion_tokens: 1290,
            input_text_tokens: 42,
            input_image_tokens: 1258,
            output_image_tokens: 1290,
            ..Usage::default()
        })
    );
    // Audio in, text out; unknown modalities (VIDEO, DOCUMENT) are plain tokens; junk is ignored.
    let m = json!({
        "promptTokenCount": 500, "candidatesTokenCount": 10,
        "promptTokensDetails": [
            {"modality": "AUDIO", "tokenCount": 300},
            {"modality": "VIDEO", "tokenCount": 150},
            {"modality": "TEXT", "tokenCount": 50},
            {"modality": "IMAGE", "tokenCount": "many"},
            "nonsense"
        ],
        "candidatesTokensDetails": [{"modality": "TEXT", "tokenCount": 10}]
    });
    let u = gemini::usage_from(&m).unwrap();
    assert_eq!(
        (
            u.input_audio_tokens,
            u.input_text_tokens,
            u.input_image_tokens,
            u.output_text_tokens
        ),
        (300, 50, 0, 10)
    );
    // No details: no buckets.
    let u = gemini::usage_from(&json!({"promptTokenCount": 5, "candidatesTokenCount": 1})).unwrap();
    assert_eq!(
        u.input_text_tokens + u.input_image_tokens + u.output_image_tokens,
        0
    );
}
