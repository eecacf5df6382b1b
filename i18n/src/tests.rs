use super::*;

#[test]
fn a_browser_set_to_chinese_gets_chinese() {
    for header in [
        "zh-CN,zh;q=0.9,en;q=0.8",
        "zh",
        "zh-Hans-CN",
        "zh-TW;q=0.9, en;q=0.5",
        "fr-FR, zh-CN;q=0.7, en;q=0.3",
        "en;q=0.4, ZH-cn;q=0.6",
    ] {
        assert_eq!(
            Lang::from_accept_language(header),
            Some(Lang::ZhCn),
            "{header}"
        );
    }
    for header in [
        "en-US,en;q=0.9",
        "en-GB, zh;q=0.5",
        "zh;q=0, en",
        "de, en;q=0.1",
    ] {
        assert_eq!(
            Lang::from_accept_language(header),
            Some(Lang::En),
            "{header}"
        );
    }
    for header in ["", "fr-FR", "de;q=1", "zh;q=2", "zh;q=abc", "*"] {
        assert_eq!(Lang::from_accept_language(header), None, "{header}");
    }
}

#[test]
fn the_cookie_wins_over_the_browser_and_english_is_the_default() {
    assert_eq!(Lang::negotiate(Some("en"), Some("zh-CN")), Lang::En);
    assert_eq!(Lang::negotiate(Some("zh-CN"), Some("en-US")), Lang::ZhCn);
    assert_eq!(Lang::negotiate(Some("klingon"), Some("zh-CN")), Lang::ZhCn);
    assert_eq!(Lang::negotiate(None, None), Lang::En);
    assert_eq!(
        Lang::cookie_in("a=b; seckill_lang=zh-CN; seckill_session=x"),
        Some("zh-CN")
    );
    assert_eq!(Lang::cookie_in("seckill_language=en"), None);
    for lang in Lang::ALL {
        assert_eq!(Lang::from_tag(lang.tag()), Some(lang));
    }
}

/// Keys whose value reads the same in both languages, or is not words: names, symbols, the
/// month numbers.
const SAME_IN_BOTH: &[&str] = &[
    "brand",
    "lang_switch_label_en",
    "currency_sign",
    "months",
    "field_error",
    "zone_offset",
];

/// Keys whose Chinese is punctuation alone (full-width, where the English has half-width).
const PUNCTUATION: &[&str] = &["colon", "bracketed"];

#[test]
fn every_sentence_is_translated() {
    let (en, zh) = (Lang::En.entries(), Lang::ZhCn.entries());
    assert_eq!(en.len(), zh.len());
    let mut untranslated = Vec::new();
    for ((key, e), (_, z)) in en.iter().zip(&zh) {
        if SAME_IN_BOTH.contains(key) {
            continue;
        }
        let has_chinese = z.chars().any(is_chinese);
        if e == z || !(has_chinese || PUNCTUATION.contains(key)) {
            untranslated.push(format!("{key}: {z:?}"));
        }
    }
    assert!(
        untranslated.is_empty(),
        "left in English: {untranslated:#?}"
    );
}

fn is_chinese(c: char) -> bool {
    ('\u{4e00}'..='\u{9fff}').contains(&c)
}

/// Keys whose placeholder is a clock time or a countdown, which stands apart by a space
/// (`距开始 01:05:07`), or Latin text (a link to an address), which has a space where it meets
/// Chinese.
const SPACED_PLACEHOLDERS: &[&str] = &[
    "month_day_time",
    "year_month_day_time",
    "countdown_days",
    "card_opens_in",
    "card_ends_in",
    "sale_opens_in",
    "sale_draw_in",
    "sale_closes_in",
    "order_pay_within",
    "check_uses",
    "remind_set",
];

/// The words the glossary (`zh.rs`) says a Chinese sentence does not use.
const NOT_SAID: &[&str] = &[
    "件",
    "写入",
    "未成立",
    "重新开售",
    "商店",
    "本店",
    "支付服务商",
    "地址",
    "抢购中…",
    "排在第",
];

/// What the glossary at the top of `zh.rs` says: full-width punctuation, no space between
/// Chinese and a number (but a clock's or a Latin word's space), one word for each thing. The
/// check's steps are formulas and code, and are left out.
#[test]
fn chinese_reads_as_the_glossary_says() {
    let mut wrong = Vec::new();
    for (key, z) in Lang::ZhCn.entries() {
        if SAME_IN_BOTH.contains(&key) || key.starts_with("check_step_") {
            continue;
        }
        // Code is Latin whatever the language: one Latin word.
        let mut text = String::new();
        let mut rest = z;
        while let Some(at) = rest.find("<code>") {
            text.push_str(&rest[..at]);
            text.push('x');
            rest = rest[at..]
                .find("</code>")
                .map_or("", |end| &rest[at + end + "</code>".len()..]);
        }
        text.push_str(rest);
        let text = text.trim();
        if let Some(c) = text.chars().find(|c| ",;:!?()\"".contains(*c)) {
            wrong.push(format!("{key}: half-width {c:?} in {z:?}"));
        }
        if text.contains("...") {
            wrong.push(format!("{key}: ... for … in {z:?}"));
        }
        for word in NOT_SAID {
            if z.contains(word) {
                wrong.push(format!("{key}: {word:?} in {z:?}"));
            }
        }
        let chars: Vec<char> = text.chars().collect();
        for w in chars.windows(3) {
            let (a, space, b) = (w[0], w[1], w[2]);
            let number = |c: char| c.is_ascii_digit() || "{}¥".contains(c);
            let full_width = |c: char| "，。：；！？（）「」、".contains(c);
            if space == ' ' {
                let spaced_number = (is_chinese(a) && number(b)) || (number(a) && is_chinese(b));
                if spaced_number && !SPACED_PLACEHOLDERS.contains(&key) {
                    wrong.push(format!(
                        "{key}: a space between Chinese and a number in {z:?}"
                    ));
                }
                if full_width(a) || full_width(b) {
                    wrong.push(format!("{key}: a space beside {a:?}/{b:?} in {z:?}"));
                }
            }
        }
        for w in chars.windows(2) {
            let latin = |c: char| c.is_ascii_alphabetic();
            if (is_chinese(w[0]) && latin(w[1])) || (latin(w[0]) && is_chinese(w[1])) {
                wrong.push(format!(
                    "{key}: no space between Chinese and Latin in {z:?}"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn placeholders_agree() {
    let (en, zh) = (Lang::En.entries(), Lang::ZhCn.entries());
    let holes = |s: &str| {
        let mut h: Vec<usize> = (0..10)
            .filter(|i| s.contains(&format!("{{{i}}}")))
            .collect();
        h.sort_unstable();
        h
    };
    for ((key, e), (_, z)) in en.iter().zip(&zh) {
        assert_eq!(holes(e), holes(z), "{key}: {e:?} / {z:?}");
        assert!(!e.is_empty() && !z.is_empty(), "{key} is empty");
    }
}

#[test]
fn templates_are_filled_in_order() {
    assert_eq!(fill("{0} of {1} left", &[&3, &"10"]), "3 of 10 left");
    assert_eq!(fill("剩余{0}张，共{1}张", &[&3, &10]), "剩余3张，共10张");
    // A value is put in once, not read again; other braces stay.
    assert_eq!(fill("“{0}”: {1} units", &[&"{1}", &5]), "“{1}”: 5 units");
    assert_eq!(fill("{voucher}:{0}:{9}", &[&"a"]), "{voucher}:a:{9}");
}
