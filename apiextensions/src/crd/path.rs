//! Field paths as upstream's `field.Path` prints them: `spec.names.plural`,
//! `spec.versions[0]`, `properties[spec]` (map keys unquoted).

/// `parent.name` (or `name` at the root).
pub(crate) fn child(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_owned()
    } else {
        format!("{parent}.{name}")
    }
}

/// `parent[i]`.
pub(crate) fn index(parent: &str, i: usize) -> String {
    format!("{parent}[{i}]")
}

/// `parent[key]`, the key unquoted as upstream's `Path.Key`.
pub(crate) fn key(parent: &str, k: &str) -> String {
    format!("{parent}[{k}]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_like_field_path() {
        let p = child(&index(&child("spec", "versions"), 0), "schema");
        assert_eq!(p, "spec.versions[0].schema");
        assert_eq!(
            key(&child(&p, "properties"), "spec"),
            "spec.versions[0].schema.properties[spec]"
        );
        assert_eq!(child("", "metadata"), "metadata");
    }
}
