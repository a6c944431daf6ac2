//! Image prompt blocks (docs/CONTRACT.md#s3.2, edition `current`): a `type:"image"` block carrying
//! `data` is stored as an attachment first, which needs an attachment store (a `DSH_HOME`) and data
//! that decodes to an image. The released runtime refuses anything else before the message is queued.

use serde_json::Value;

/// Upstream's message for data it cannot decode as an image.
pub const MALFORMED: &str = "Unsupported or malformed image data.";
/// Upstream's message when there is nowhere to store the attachment.
pub const NO_STORE: &str = "SDK image prompt requires an attachment store";

/// Checks every image block of `blocks` that carries `data`.
pub fn check_blocks(blocks: &[Value], has_store: bool) -> Result<(), &'static str> {
    for b in blocks {
        if b.get("type").and_then(Value::as_str) != Some("image") {
            continue;
        }
        let Some(data) = b.get("data") else { continue };
        if !has_store {
            return Err(NO_STORE);
        }
        let bytes = data.as_str().and_then(decode_base64).ok_or(MALFORMED)?;
        if !looks_like_image(&bytes) {
            return Err(MALFORMED);
        }
    }
    Ok(())
}

/// Standard base64, padding optional, no whitespace (what the release's image reader and the
/// kit's recorder both accept); shared with the transcript importer.
pub(crate) const BASE64: base64::engine::GeneralPurpose = base64::engine::GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    base64::engine::GeneralPurposeConfig::new()
        .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

/// [`BASE64`]'s decoding; `None` when it is not base64.
pub(crate) fn decode_base64(s: &str) -> Option<Vec<u8>> {
    base64::Engine::decode(&BASE64, s).ok()
}

/// A PNG, JPEG, GIF or WebP whose header is complete enough to give its size.
fn looks_like_image(b: &[u8]) -> bool {
    let png = b.len() >= 24 && b.starts_with(b"\x89PNG\r\n\x1a\n") && &b[12..16] == b"IHDR";
    let jpeg = b.len() >= 4 && b.starts_with(&[0xFF, 0xD8, 0xFF]);
    let gif = b.len() >= 10 && (b.starts_with(b"GIF87a") || b.starts_with(b"GIF89a"));
    let webp = b.len() >= 16 && b.starts_with(b"RIFF") && &b[8..12] == b"WEBP";
    png || jpeg || gif || webp
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // A 1×1 PNG.
    const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

    #[test]
    fn a_signature_alone_or_text_is_malformed_and_a_real_png_is_accepted() {
        let img = |d: &str| json!([{"type":"image","mimeType":"image/png","data": d}]);
        assert_eq!(
            check_blocks(img("iVBORw0KGgo=").as_array().unwrap(), true),
            Err(MALFORMED)
        );
        assert_eq!(
            check_blocks(img("not base64!").as_array().unwrap(), true),
            Err(MALFORMED)
        );
        assert_eq!(
            check_blocks(img("aGVsbG8=").as_array().unwrap(), true),
            Err(MALFORMED)
        );
        assert_eq!(check_blocks(img(PNG).as_array().unwrap(), true), Ok(()));
        assert_eq!(
            check_blocks(img(PNG).as_array().unwrap(), false),
            Err(NO_STORE)
        );
        let no_data =
            json!([{"type":"image","attachment":{"id":"x"}}, {"type":"text","text":"hi"}]);
        assert_eq!(check_blocks(no_data.as_array().unwrap(), false), Ok(()));
        assert_eq!(
            check_blocks(json!([{"type":"image","data":5}]).as_array().unwrap(), true),
            Err(MALFORMED)
        );
    }
}
