//! Property tests: the parsers never panic, and printing then parsing a
//! selector gives it back.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;

use super::{field, label};

/// Text made mostly of the characters selectors are built from.
fn selectorish() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z0-9=!(),<>./_ \\t\\\\-]{0,40}",
        "[a-z]{1,3}( ?(=|==|!=|<|>) ?[a-z0-9]{0,3}| (in|notin) \\(([a-z]{0,2},?){0,3}\\))?(,[a-z]{1,3}(=[a-z]?)?)*",
        "([a-z.]{0,4}(=|==|!=)([a-z!]|\\\\[\\\\,=])*,?){0,4}",
        any::<String>(),
    ]
}

fn label_key() -> impl Strategy<Value = String> {
    (
        proptest::option::of("[a-z0-9]([a-z0-9-]{0,5}[a-z0-9])?(\\.[a-z0-9]{1,4}){0,2}"),
        "[A-Za-z0-9]([A-Za-z0-9._-]{0,8}[A-Za-z0-9])?",
    )
        .prop_map(|(prefix, name)| match prefix {
            Some(p) => format!("{p}/{name}"),
            None => name,
        })
}

fn label_value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        "[A-Za-z0-9]([A-Za-z0-9._-]{0,8}[A-Za-z0-9])?"
    ]
}

fn label_requirement() -> impl Strategy<Value = label::Requirement> {
    use label::Operator::*;
    let one = prop_oneof![Just(Equals), Just(DoubleEquals), Just(NotEquals)];
    let set = prop_oneof![Just(In), Just(NotIn)];
    let none = prop_oneof![Just(Exists), Just(DoesNotExist)];
    let order = prop_oneof![Just(GreaterThan), Just(LessThan)];
    prop_oneof![
        (label_key(), one, label_value()).prop_map(|(k, op, v)| (k, op, vec![v])),
        (
            label_key(),
            set,
            proptest::collection::btree_set(label_value(), 1..4)
        )
            .prop_map(|(k, op, vs)| (k, op, vs.into_iter().collect())),
        (label_key(), none).prop_map(|(k, op)| (k, op, vec![])),
        (label_key(), order, "[0-9]{1,6}").prop_map(|(k, op, v)| (k, op, vec![v])),
    ]
    .prop_filter_map("valid requirement", |(k, op, vs)| {
        label::Requirement::new(k, op, vs).ok()
    })
}

fn labels() -> impl Strategy<Value = BTreeMap<String, String>> {
    proptest::collection::btree_map("[a-c]", prop_oneof!["[a-c]", "[0-9]{1,2}"], 0..4)
}

fn field_requirement() -> impl Strategy<Value = field::Requirement> {
    (
        "[A-Za-z][A-Za-z.]{0,12}",
        prop_oneof![
            Just(field::Operator::Equals),
            Just(field::Operator::NotEquals)
        ],
        prop_oneof![any::<String>(), "[a-z=,\\\\!]{0,6}"],
    )
        .prop_map(|(field, operator, value)| field::Requirement {
            field,
            operator,
            value,
        })
}

fn sorted(s: &field::Selector) -> Vec<field::Requirement> {
    let mut r = s.requirements().to_vec();
    r.sort_by(|a, b| (&a.field, &a.value).cmp(&(&b.field, &b.value)));
    r.sort_by_key(|r| r.operator == field::Operator::NotEquals);
    r
}

proptest! {
    #[test]
    fn label_parse_never_panics_and_reparses(input in selectorish()) {
        if let Ok(parsed) = label::Selector::parse(&input) {
            let again = label::Selector::parse(&parsed.to_string());
            prop_assert_eq!(again, Ok(parsed));
        }
    }

    #[test]
    fn label_display_parses_back(reqs in proptest::collection::vec(label_requirement(), 0..6)) {
        let selector = label::Selector::from_requirements(reqs);
        let printed = selector.to_string();
        prop_assert_eq!(label::Selector::parse(&printed), Ok(selector), "{}", printed);
    }

    #[test]
    fn label_match_is_conjunction(
        reqs in proptest::collection::vec(label_requirement(), 0..4),
        set in labels(),
    ) {
        let get = |k: &str| set.get(k).map(String::as_str);
        let selector = label::Selector::from_requirements(reqs.clone());
        prop_assert_eq!(selector.matches(&set), reqs.iter().all(|r| r.matches_with(get)));
    }

    #[test]
    fn field_parse_never_panics_and_reparses(input in selectorish()) {
        if let Ok(parsed) = field::Selector::parse(&input) {
            let again = field::Selector::parse(&parsed.to_string());
            prop_assert!(again.is_ok(), "{:?}", again);
            let again = again.unwrap_or_default();
            prop_assert_eq!(sorted(&again), sorted(&parsed));
        }
    }

    #[test]
    fn field_display_parses_back(reqs in proptest::collection::vec(field_requirement(), 0..5)) {
        let selector = field::Selector::from_requirements(reqs);
        let printed = selector.to_string();
        let parsed = field::Selector::parse(&printed);
        prop_assert!(parsed.is_ok(), "{:?} from {:?}", parsed, printed);
        let parsed = parsed.unwrap_or_default();
        prop_assert_eq!(sorted(&parsed), sorted(&selector));
    }

    #[test]
    fn field_escaping_round_trips(value in any::<String>()) {
        prop_assert_eq!(field::unescape_value(&field::escape_value(&value)), Ok(value));
    }

    #[test]
    fn label_selector_json_never_panics(
        keys in proptest::collection::btree_map(any::<String>(), any::<String>(), 0..3),
        ops in proptest::collection::vec(
            (any::<String>(), prop_oneof![Just("In".to_string()), Just("NotIn".to_string()),
                Just("Exists".to_string()), Just("DoesNotExist".to_string()), any::<String>()],
             proptest::collection::vec(any::<String>(), 0..3)),
            0..3),
    ) {
        let expressions: Vec<serde_json::Value> = ops
            .iter()
            .map(|(k, op, vs)| serde_json::json!({"key": k, "operator": op, "values": vs}))
            .collect();
        let value = serde_json::json!({"matchLabels": keys, "matchExpressions": expressions});
        if let Ok(selector) = label::Selector::from_label_selector_value(&value) {
            let distinct: BTreeSet<&String> = keys.keys().collect();
            prop_assert!(selector.requirements().len() >= distinct.len());
        }
    }
}
