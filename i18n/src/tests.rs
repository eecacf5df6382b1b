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
];

#[test]
fn every_sentence_is_translated() {
    let (en, zh) = (
        Lang::En.catalogue().entries(),
        Lang::ZhCn.catalogue().entries(),
    );
    assert_eq!(en.len(), zh.len());
    let mut untranslated = Vec::new();
    for ((key, e), (_, z)) in en.iter().zip(&zh) {
        if SAME_IN_BOTH.contains(key) {
            continue;
        }
        let has_chinese = z.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c));
        if e == z || !has_chinese {
            untranslated.push(format!("{key}: {z:?}"));
        }
    }
    assert!(
        untranslated.is_empty(),
        "left in English: {untranslated:#?}"
    );
}

#[test]
fn placeholders_agree() {
    let (en, zh) = (
        Lang::En.catalogue().entries(),
        Lang::ZhCn.catalogue().entries(),
    );
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
    assert_eq!(fill("剩 {0} / {1}", &[&3, &10]), "剩 3 / 10");
    // A value is put in once, not read again; other braces stay.
    assert_eq!(fill("“{0}”: {1} units", &[&"{1}", &5]), "“{1}”: 5 units");
    assert_eq!(fill("{voucher}:{0}:{9}", &[&"a"]), "{voucher}:a:{9}");
}
