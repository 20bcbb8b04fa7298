//! `skein.io/tolerations`: the Cluster taints an object tolerates, as a
//! JSON list of core/v1 Tolerations (`key`, `operator` `Equal`|`Exists`,
//! `value`, `effect`), matched as kube-scheduler matches a Pod's
//! tolerations against a Node's taints (`tolerationSeconds` is not used).

use serde_json::Value;

/// One toleration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Toleration {
    /// `key`; empty with `Exists` tolerates every key.
    pub key: String,
    /// `operator` is `Exists` (else `Equal`, the default).
    pub exists: bool,
    /// `value` (for `Equal`).
    pub value: String,
    /// `effect`; empty tolerates every effect.
    pub effect: String,
}

impl Toleration {
    /// Whether this toleration tolerates the taint `key=value:effect`.
    pub fn tolerates(&self, key: &str, value: &str, effect: &str) -> bool {
        if !self.effect.is_empty() && self.effect != effect {
            return false;
        }
        if self.key.is_empty() {
            return self.exists;
        }
        self.key == key && (self.exists || self.value == value)
    }
}

const EFFECTS: [&str; 3] = ["NoSchedule", "PreferNoSchedule", "NoExecute"];

/// Parses and checks the annotation value.
///
/// # Errors
///
/// The first problem, worded for the user.
pub fn parse(text: &str) -> Result<Vec<Toleration>, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("must be valid JSON: {e}"))?;
    let Value::Array(items) = v else {
        return Err("must be a JSON list of tolerations".into());
    };
    items
        .iter()
        .enumerate()
        .map(|(i, t)| one(t).map_err(|e| format!("[{i}]: {e}")))
        .collect()
}

fn one(t: &Value) -> Result<Toleration, String> {
    let Value::Object(m) = t else {
        return Err("must be an object".into());
    };
    for k in m.keys() {
        if !matches!(
            k.as_str(),
            "key" | "operator" | "value" | "effect" | "tolerationSeconds"
        ) {
            return Err(format!("unknown field {k:?}"));
        }
    }
    let text = |k: &str| -> Result<String, String> {
        match m.get(k) {
            None | Some(Value::Null) => Ok(String::new()),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(_) => Err(format!("{k:?} must be a string")),
        }
    };
    let (key, operator, value, effect) = (
        text("key")?,
        text("operator")?,
        text("value")?,
        text("effect")?,
    );
    let exists = match operator.as_str() {
        "" | "Equal" => false,
        "Exists" => true,
        other => {
            return Err(format!(
                "unsupported operator {other:?} (supported: \"Equal\", \"Exists\")"
            ));
        }
    };
    if exists && !value.is_empty() {
        return Err("value must be empty when operator is \"Exists\"".into());
    }
    if key.is_empty() && !exists {
        return Err("operator must be \"Exists\" when key is empty".into());
    }
    if !effect.is_empty() && !EFFECTS.contains(&effect.as_str()) {
        return Err(format!(
            "unsupported effect {effect:?} (supported: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\")"
        ));
    }
    Ok(Toleration {
        key,
        exists,
        value,
        effect,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matching_follows_kube_scheduler() {
        let t = parse(r#"[{"key":"maintenance","operator":"Exists","effect":"NoSchedule"}]"#)
            .expect("valid");
        assert!(t[0].tolerates("maintenance", "now", "NoSchedule"));
        assert!(!t[0].tolerates("maintenance", "now", "NoExecute"));
        let t = parse(r#"[{"key":"tier","value":"gold"}]"#).expect("valid");
        assert!(t[0].tolerates("tier", "gold", "NoExecute"));
        assert!(!t[0].tolerates("tier", "silver", "NoExecute"));
        let t = parse(r#"[{"operator":"Exists"}]"#).expect("valid");
        assert!(t[0].tolerates("anything", "x", "NoSchedule"));
    }

    #[test]
    fn bad_values_say_why() {
        assert!(parse("{}").expect_err("not a list").contains("JSON list"));
        assert!(
            parse(r#"[{"key":"a","operator":"In"}]"#)
                .expect_err("bad op")
                .contains("[0]: unsupported operator")
        );
        assert!(
            parse(r#"[{"value":"x"}]"#)
                .expect_err("no key")
                .contains("Exists")
        );
        assert!(
            parse(r#"[{"key":"a","effect":"Sometimes"}]"#)
                .expect_err("bad effect")
                .contains("effect")
        );
    }
}
