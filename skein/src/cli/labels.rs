//! `--label key=value` flags, checked as the API server checks label keys
//! and values (upstream's messages, from `skein_admission::names`), so a
//! bad label fails before anything is created.

use std::collections::BTreeMap;

use skein_admission::names;

/// The labels of `flags` (`key=value` each; a later key wins).
///
/// # Errors
///
/// One line naming the first bad flag and why: no `=`, an invalid key
/// (a qualified name) or an invalid value.
pub fn parse(flags: &[String]) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    for flag in flags {
        let Some((key, value)) = flag.split_once('=') else {
            return Err(format!(
                "invalid --label {flag:?}: expected key=value (for example region=eu)"
            ));
        };
        let problems = names::qualified_name(key);
        if !problems.is_empty() {
            return Err(format!(
                "invalid --label {flag:?}: key {key:?}: {}",
                problems.join("; ")
            ));
        }
        let problems = names::label_value(value);
        if !problems.is_empty() {
            return Err(format!(
                "invalid --label {flag:?}: value {value:?}: {}",
                problems.join("; ")
            ));
        }
        out.insert(key.to_owned(), value.to_owned());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| (*x).to_owned()).collect()
    }

    #[test]
    fn good_labels() {
        let got = parse(&s(&["region=eu", "example.com/tier=", "region=us"])).expect("valid");
        assert_eq!(
            got.into_iter().collect::<Vec<_>>(),
            vec![
                ("example.com/tier".to_owned(), String::new()),
                ("region".to_owned(), "us".to_owned())
            ]
        );
    }

    #[test]
    fn bad_labels_name_the_flag() {
        assert_eq!(
            parse(&s(&["region"])),
            Err("invalid --label \"region\": expected key=value (for example region=eu)".into())
        );
        let e = parse(&s(&["-bad=x"])).err().unwrap_or_default();
        assert!(
            e.starts_with("invalid --label \"-bad=x\": key \"-bad\": name part must consist"),
            "{e}"
        );
        let e = parse(&s(&["ok=no way"])).err().unwrap_or_default();
        assert!(
            e.starts_with("invalid --label \"ok=no way\": value \"no way\": a valid label must"),
            "{e}"
        );
        assert!(!e.contains('\n'));
    }

    proptest::proptest! {
        #[test]
        fn accepted_labels_are_valid(flags in proptest::collection::vec("[a-z./=_-]{0,12}", 0..4)) {
            if let Ok(labels) = parse(&flags) {
                for (k, v) in labels {
                    proptest::prop_assert!(names::qualified_name(&k).is_empty());
                    proptest::prop_assert!(names::label_value(&v).is_empty());
                }
            }
        }
    }
}
