//! Where a value sits, built as the walks descend (no allocation) and
//! rendered only when an error or an unknown field needs it, in the three
//! spellings upstream uses.

/// A location: the root, or one step below another location.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Path<'a> {
    /// The object itself.
    Root,
    /// A property (a name from `properties`, or any field name when no
    /// schema distinguishes).
    Prop(&'a Path<'a>, &'a str),
    /// A key matched by `additionalProperties`.
    Extra(&'a Path<'a>, &'a str),
    /// A list item.
    Index(&'a Path<'a>, usize),
}

/// Which spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    /// kube-openapi's `Validation.Name`: `a.b`, `a.key` (`.key` at the
    /// root), `a[0]`.
    OpenApi,
    /// Pruning's unknown-field paths: `a.b`, `a.key`, `a[0]`.
    Pruning,
    /// `field.Path`: `a.b`, `a[key]`, `a[0]`.
    Field,
}

impl Path<'_> {
    /// Whether this is the root.
    pub(crate) fn is_root(&self) -> bool {
        matches!(self, Path::Root)
    }

    /// The path spelled in `style` (iterative: no recursion on depth).
    pub(crate) fn render(&self, style: Style) -> String {
        let mut steps = Vec::new();
        let mut at = self;
        loop {
            match at {
                Path::Root => break,
                Path::Prop(parent, _) | Path::Extra(parent, _) | Path::Index(parent, _) => {
                    steps.push(at);
                    at = parent;
                }
            }
        }
        let mut out = String::new();
        for step in steps.iter().rev() {
            match step {
                Path::Root => {}
                Path::Prop(_, name) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(name);
                }
                Path::Extra(_, key) => match style {
                    Style::OpenApi => {
                        out.push('.');
                        out.push_str(key);
                    }
                    Style::Pruning => {
                        if !out.is_empty() {
                            out.push('.');
                        }
                        out.push_str(key);
                    }
                    Style::Field => {
                        out.push('[');
                        out.push_str(key);
                        out.push(']');
                    }
                },
                Path::Index(_, i) => {
                    out.push('[');
                    out.push_str(&i.to_string());
                    out.push(']');
                }
            }
        }
        out
    }

    /// [`Style::OpenApi`].
    pub(crate) fn openapi(&self) -> String {
        self.render(Style::OpenApi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings() {
        let root = Path::Root;
        let spec = Path::Prop(&root, "spec");
        let map = Path::Prop(&spec, "map");
        let key = Path::Extra(&map, "k");
        let item = Path::Index(&key, 2);
        let leaf = Path::Prop(&item, "x");
        assert_eq!(leaf.render(Style::OpenApi), "spec.map.k[2].x");
        assert_eq!(leaf.render(Style::Pruning), "spec.map.k[2].x");
        assert_eq!(leaf.render(Style::Field), "spec.map[k][2].x");
        assert_eq!(Path::Extra(&root, "k").render(Style::OpenApi), ".k");
        assert_eq!(Path::Extra(&root, "k").render(Style::Pruning), "k");
        assert_eq!(root.render(Style::Field), "");
    }
}
