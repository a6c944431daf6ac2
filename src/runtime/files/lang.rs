//! The `lang` hint of a `read` result's `meta`: the release's extension table
//! (`@deepseek-ai/dsh-util-code-language`, read in the 0.2.1rc2 executable), by the text after
//! the last dot of the path's last segment, lower-cased.

/// Extension → the hint, sorted by extension.
const BY_EXTENSION: &[(&str, &str)] = &[
    ("adoc", "adoc"),
    ("bash", "sh"),
    ("bat", "bat"),
    ("bib", "bib"),
    ("c", "c"),
    ("cc", "cpp"),
    ("cfg", "ini"),
    ("cjs", "js"),
    ("clj", "clj"),
    ("cljs", "clj"),
    ("cls", "tex"),
    ("cmake", "cmake"),
    ("cmd", "bat"),
    ("conf", "ini"),
    ("cpp", "cpp"),
    ("cs", "cs"),
    ("css", "css"),
    ("csv", "csv"),
    ("cts", "ts"),
    ("cxx", "cpp"),
    ("dart", "dart"),
    ("diff", "diff"),
    ("edn", "clj"),
    ("env", "env"),
    ("erl", "erl"),
    ("ex", "ex"),
    ("exs", "ex"),
    ("fish", "fish"),
    ("fs", "fs"),
    ("fsi", "fs"),
    ("fsx", "fs"),
    ("gemspec", "rb"),
    ("go", "go"),
    ("gql", "graphql"),
    ("gradle", "gradle"),
    ("graphql", "graphql"),
    ("groovy", "groovy"),
    ("h", "c"),
    ("hcl", "hcl"),
    ("hh", "cpp"),
    ("hpp", "cpp"),
    ("hrl", "erl"),
    ("hs", "hs"),
    ("htm", "html"),
    ("html", "html"),
    ("http", "http"),
    ("hxx", "cpp"),
    ("ini", "ini"),
    ("ipynb", "json"),
    ("java", "java"),
    ("jl", "jl"),
    ("js", "js"),
    ("json", "json"),
    ("jsonc", "json"),
    ("jsonl", "json"),
    ("jsx", "jsx"),
    ("kt", "kotlin"),
    ("kts", "kotlin"),
    ("less", "less"),
    ("log", "log"),
    ("lua", "lua"),
    ("makefile", "make"),
    ("markdown", "md"),
    ("md", "md"),
    ("mdx", "mdx"),
    ("mjs", "js"),
    ("mk", "make"),
    ("mts", "ts"),
    ("ndjson", "json"),
    ("nix", "nix"),
    ("patch", "diff"),
    ("php", "php"),
    ("pl", "pl"),
    ("plist", "xml"),
    ("pm", "pl"),
    ("properties", "ini"),
    ("proto", "proto"),
    ("ps1", "ps1"),
    ("psd1", "ps1"),
    ("psm1", "ps1"),
    ("py", "py"),
    ("pyi", "py"),
    ("pyw", "py"),
    ("r", "r"),
    ("rake", "rb"),
    ("rb", "rb"),
    ("rs", "rs"),
    ("rst", "rst"),
    ("scala", "scala"),
    ("scss", "scss"),
    ("sh", "sh"),
    ("sql", "sql"),
    ("sty", "tex"),
    ("sv", "sv"),
    ("svelte", "svelte"),
    ("svg", "xml"),
    ("svh", "sv"),
    ("swift", "swift"),
    ("tex", "tex"),
    ("tf", "tf"),
    ("tfvars", "tfvars"),
    ("toml", "toml"),
    ("ts", "ts"),
    ("tsx", "tsx"),
    ("v", "v"),
    ("vb", "vb"),
    ("vue", "vue"),
    ("xhtml", "html"),
    ("xml", "xml"),
    ("xsd", "xml"),
    ("xsl", "xml"),
    ("xslt", "xml"),
    ("yaml", "yaml"),
    ("yml", "yaml"),
    ("zsh", "sh"),
];

/// The hint for `path`, when its extension has one.
pub fn of(path: &str) -> Option<&'static str> {
    let base = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let ext = base.rsplit_once('.')?.1.to_lowercase();
    BY_EXTENSION
        .binary_search_by(|(e, _)| e.cmp(&ext.as_str()))
        .ok()
        .map(|i| BY_EXTENSION[i].1)
}

#[cfg(test)]
mod tests {
    /// Recorded: `main.rs` → `rs`, `.gitignore` → none (`sdk_tool_listings`).
    #[test]
    fn hints_follow_the_extension() {
        assert_eq!(super::of("/w/main.rs"), Some("rs"));
        assert_eq!(super::of("/w/.gitignore"), None);
        assert_eq!(super::of("/w/a.TSX"), Some("tsx"));
        assert_eq!(super::of("/w/a.txt"), None);
    }
}
