//! Tests of compile and validate, many from upstream's validation_test.go
//! tables (facts: rules, data, expected paths and messages).

use serde_json::{Value, json};

use super::*;

fn obj(props: Value, rules: Value) -> Value {
    json!({"type": "object", "properties": props, "x-kubernetes-validations": rules})
}

fn messages(rules: &Rules, new: &Value, old: Option<&Value>) -> Vec<String> {
    rules
        .validate(new, old)
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn a_failed_rule_names_the_node_and_the_rule() {
    let schema = json!({"type": "object", "properties": {"spec": obj(
        json!({"x": {"type": "integer"}}),
        json!([{"rule": "self.x > 0"}])
    )}});
    let rules = compile(&schema, "spec.versions[0].schema.openAPIV3Schema").unwrap();
    assert!(!rules.is_empty());
    assert!(messages(&rules, &json!({"spec": {"x": 1}}), None).is_empty());
    assert_eq!(
        messages(&rules, &json!({"spec": {"x": 0}}), None),
        ["spec: Invalid value: \"object\": failed rule: self.x > 0"]
    );
}
