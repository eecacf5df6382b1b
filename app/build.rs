//! The browser bundles from one table (`bundles.txt`, design.md decision 38): sets
//! `cfg(island_<name>)` for each island the bundle being built carries (every island on the
//! server), and writes the pages' table `page_bundle` reads. A build with two bundle features
//! at once is refused.

use std::{collections::BTreeSet, env, fs, path::Path};

struct Bundle {
    name: String,
    feature: Option<String>,
    pages: Option<String>,
    islands: Vec<String>,
}

fn main() {
    let dir = env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let table = Path::new(&dir).join("bundles.txt");
    println!("cargo::rerun-if-changed={}", table.display());
    let text = fs::read_to_string(&table).unwrap_or_else(|e| panic!("{}: {e}", table.display()));
    let bundles: Vec<Bundle> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut f = l.split_whitespace().map(str::to_owned);
            let mut field = || {
                f.next()
                    .unwrap_or_else(|| panic!("bundles.txt: short line {l:?}"))
            };
            let named = |s: String| (s != "-").then_some(s);
            let (name, feature, pages) = (field(), named(field()), named(field()));
            Bundle {
                name,
                feature,
                pages,
                islands: f.collect(),
            }
        })
        .collect();
    let all: BTreeSet<&str> = bundles
        .iter()
        .flat_map(|b| b.islands.iter().map(String::as_str))
        .collect();
    let on = |feature: &str| {
        env::var_os(format!(
            "CARGO_FEATURE_{}",
            feature.to_uppercase().replace('-', "_")
        ))
        .is_some()
    };
    let chosen: Vec<&Bundle> = bundles
        .iter()
        .filter(|b| b.feature.as_deref().is_some_and(on))
        .collect();
    if chosen.len() > 1 {
        let names: Vec<&str> = chosen.iter().map(|b| b.name.as_str()).collect();
        panic!("one bundle at a time: features for {names:?} are all on");
    }
    let islands: BTreeSet<&str> = if on("ssr") {
        all.clone()
    } else {
        let bundle = chosen
            .first()
            .copied()
            .or_else(|| bundles.iter().find(|b| b.feature.is_none()));
        bundle
            .map(|b| b.islands.iter().map(String::as_str).collect())
            .unwrap_or_default()
    };
    let names: Vec<String> = all.iter().map(|i| format!("island_{i}")).collect();
    println!("cargo::rustc-check-cfg=cfg({})", names.join(", "));
    for island in &islands {
        println!("cargo::rustc-cfg=island_{island}");
    }
    let pages: Vec<String> = bundles
        .iter()
        .filter_map(|b| {
            let suffix = b.name.strip_prefix("seckill-")?;
            Some(format!("({:?}, {suffix:?})", b.pages.as_deref()?))
        })
        .collect();
    let out =
        Path::new(&env::var("OUT_DIR").unwrap_or_else(|_| ".".into())).join("page_bundles.rs");
    let code = format!(
        "/// The pages with a bundle of their own, from `bundles.txt`: (pages, bundle suffix).\n#[cfg(any(feature = \"ssr\", test))]\nconst PAGE_BUNDLES: &[(&str, &str)] = &[{}];\n",
        pages.join(", ")
    );
    fs::write(&out, code).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
}
