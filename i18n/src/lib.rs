//! The shop's words in two languages: Simplified Chinese (`zh-CN`) and English (`en`).
//!
//! [`Lang`] is the language a request asks for: the shopper's choice (the `seckill_lang`
//! cookie the switch link sets) first, else the browser's `Accept-Language`, else English.
//! [`Catalogue`] is one struct with a field per sentence, one value of it per language
//! (`en.rs`, `zh.rs`), and [`AdminCatalogue`] the same for the admins' pages (`en_admin.rs`,
//! `zh_admin.rs`, apart so that each file stays short); [`Texts`] reads a sentence in a language (`t.buy_now()`). A key missing from either catalogue does not compile; a
//! sentence left in English in the Chinese one fails `tests::every_sentence_is_translated`;
//! a placeholder (`{0}`, `{1}`) lost in translation fails `tests::placeholders_agree`.
//! Sentences with values are templates filled by [`fill`] (design.md decision 44).

mod catalogue;
mod en;
mod en_admin;
mod zh;
mod zh_admin;

pub use catalogue::{AdminCatalogue, Catalogue, Texts};

/// A language the shop speaks.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
pub enum Lang {
    /// English, for browsers that ask for it and for programs that ask for nothing.
    #[default]
    En,
    /// Simplified Chinese.
    ZhCn,
}

impl Lang {
    /// Both, in the order the switch link offers them.
    pub const ALL: [Lang; 2] = [Lang::ZhCn, Lang::En];

    /// The cookie that keeps a shopper's choice.
    pub const COOKIE: &'static str = "seckill_lang";

    /// The BCP 47 tag (`<html lang>`, the cookie's value, `Content-Language`).
    pub fn tag(self) -> &'static str {
        match self {
            Self::En => "en",
            Self::ZhCn => "zh-CN",
        }
    }

    /// The language's name in itself, for the switch link.
    pub fn own_name(self) -> &'static str {
        match self {
            Self::En => "English",
            Self::ZhCn => "中文",
        }
    }

    /// The language a tag names: `zh`, `zh-CN`, `zh-Hans`, `zh-SG`… are Simplified Chinese
    /// (the only Chinese the shop writes), `en` and `en-*` English; case does not matter.
    pub fn from_tag(tag: &str) -> Option<Self> {
        let tag = tag.trim();
        let primary = tag.split(['-', '_']).next().unwrap_or("");
        if primary.eq_ignore_ascii_case("zh") {
            Some(Self::ZhCn)
        } else if primary.eq_ignore_ascii_case("en") {
            Some(Self::En)
        } else {
            None
        }
    }

    /// The language an `Accept-Language` header prefers among the shop's: the supported tag
    /// with the highest `q` (the first of equals; `q=0` is "not this"). `None` when it names
    /// neither.
    pub fn from_accept_language(header: &str) -> Option<Self> {
        let mut best: Option<(Self, u32)> = None;
        for item in header.split(',').take(32) {
            let mut parts = item.split(';');
            let Some(lang) = parts.next().and_then(Self::from_tag) else {
                continue;
            };
            let q = parts
                .find_map(|p| p.trim().strip_prefix("q="))
                .map_or(Some(1000), quality);
            let Some(q) = q.filter(|q| *q > 0) else {
                continue;
            };
            if best.is_none_or(|(_, b)| q > b) {
                best = Some((lang, q));
            }
        }
        best.map(|(lang, _)| lang)
    }

    /// The language of a request: its cookie's choice, else its `Accept-Language`, else
    /// English.
    pub fn negotiate(cookie: Option<&str>, accept_language: Option<&str>) -> Self {
        cookie
            .and_then(Self::from_tag)
            .or_else(|| accept_language.and_then(Self::from_accept_language))
            .unwrap_or_default()
    }

    /// The value of the language cookie in a `Cookie` header, if any.
    pub fn cookie_in(cookie_header: &str) -> Option<&str> {
        cookie_header.split(';').find_map(|pair| {
            let (name, value) = pair.trim().split_once('=')?;
            (name == Self::COOKIE).then_some(value.trim())
        })
    }

    /// This language's sentences (`lang.texts().buy_now()`).
    pub fn texts(self) -> Texts {
        Texts(self)
    }
}

/// A `q` value (`0`, `0.8`, `1.000`) in thousandths; `None` when it is not one.
fn quality(q: &str) -> Option<u32> {
    let (whole, frac) = q.trim().split_once('.').unwrap_or((q.trim(), ""));
    if frac.len() > 3 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let whole: u32 = match whole {
        "0" => 0,
        "1" => 1,
        _ => return None,
    };
    let frac: u32 = format!("{frac:0<3}").parse().ok()?;
    let q = whole * 1000 + frac;
    (q <= 1000).then_some(q)
}

/// `template` with each `{0}`…`{9}` replaced by that value, in one pass (a value that holds
/// `{1}` itself, a title say, is not read again); any other brace stays as written.
pub fn fill(template: &str, values: &[&dyn std::fmt::Display]) -> String {
    let mut out = String::with_capacity(template.len() + 16);
    let mut rest = template;
    while let Some(at) = rest.find('{') {
        out.push_str(&rest[..at]);
        let hole = rest.as_bytes().get(at + 1..at + 3);
        match hole {
            Some([d @ b'0'..=b'9', b'}']) => {
                match values.get(usize::from(d - b'0')) {
                    Some(v) => out.push_str(&v.to_string()),
                    None => out.push_str(&rest[at..at + 3]),
                }
                rest = &rest[at + 3..];
            }
            _ => {
                out.push('{');
                rest = &rest[at + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests;
