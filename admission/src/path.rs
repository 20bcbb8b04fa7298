//! Field paths as upstream prints them (`field.Path`):
//! `spec.template.spec.containers[0].image`, `data[key.name]`.

use std::fmt;

/// A field path under construction. Cheap to clone; each step returns a new
/// path so callers can fan out from one parent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Path(String);

impl Path {
    /// A root path, e.g. `Path::new("spec")`; `""` for the whole object.
    pub fn new(root: &str) -> Self {
        Self(root.to_owned())
    }

    /// `self.name` (or `name` at the root).
    #[must_use]
    pub fn child(&self, name: &str) -> Self {
        if self.0.is_empty() {
            Self(name.to_owned())
        } else {
            Self(format!("{}.{name}", self.0))
        }
    }

    /// `self[i]`.
    #[must_use]
    pub fn index(&self, i: usize) -> Self {
        Self(format!("{}[{i}]", self.0))
    }

    /// `self[key]` (map keys are printed without quotes, as upstream).
    #[must_use]
    pub fn key(&self, key: &str) -> Self {
        Self(format!("{}[{key}]", self.0))
    }

    /// The rendered path.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<Path> for String {
    fn from(p: Path) -> String {
        p.0
    }
}

impl From<&Path> for String {
    fn from(p: &Path) -> String {
        p.0.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_like_upstream() {
        let p = Path::new("spec")
            .child("containers")
            .index(0)
            .child("image");
        assert_eq!(p.as_str(), "spec.containers[0].image");
        assert_eq!(Path::new("data").key("a.b").as_str(), "data[a.b]");
        assert_eq!(Path::new("").child("x").as_str(), "x");
    }
}
