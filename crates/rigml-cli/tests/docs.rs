//! The project's docs live in the repository: every `docs/...` path named in the code, the tools
//! and the docs themselves, and every relative link of the README and of `docs/`, points at a
//! file of this checkout (a bare clone has no `../shared/docs`).

use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Files under `dir` (recursively) with one of `exts`, skipping build outputs and packages.
fn files(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if !["target", "node_modules", ".git", ".venv-bpy", "corpus", "artifacts"].contains(&name.as_str()) {
                files(&path, exts, out);
            }
        } else if path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| exts.contains(&e))
        {
            out.push(path);
        }
    }
}

/// `docs/...` paths in `text`: `docs/` followed by path characters, ending in a file extension.
fn docs_paths(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("docs/") {
        let before = rest[..at].chars().next_back();
        let tail = &rest[at..];
        let len = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || "_./-".contains(c)))
            .unwrap_or(tail.len());
        let path = tail[..len].trim_end_matches('.');
        // `shared/docs/...` and `../shared/docs` are the data set's, not ours.
        if !matches!(before, Some('/') | Some('_')) && path.rsplit('/').next().is_some_and(|f| f.contains('.')) {
            found.push(path.to_string());
        }
        rest = &tail[len.max(5)..];
    }
    found
}

#[test]
fn every_docs_path_named_in_the_code_exists() {
    let root = repo();
    let mut sources = Vec::new();
    for dir in ["crates", "tools", "docs", ".ci"] {
        files(&root.join(dir), &["rs", "py", "sh", "md", "toml"], &mut sources);
    }
    sources.push(root.join("README.md"));
    let mut missing = Vec::new();
    let mut checked = 0;
    for file in &sources {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        for path in docs_paths(&text) {
            checked += 1;
            if !root.join(&path).is_file() {
                missing.push(format!("{}: {path}", file.display()));
            }
        }
    }
    assert!(
        checked > 20,
        "only {checked} docs/ references found: is the scan broken?"
    );
    assert!(missing.is_empty(), "docs/ references to missing files: {missing:#?}");
}

#[test]
fn relative_links_of_the_readme_and_docs_resolve() {
    let root = repo();
    let mut pages = vec![root.join("README.md")];
    files(&root.join("docs"), &["md"], &mut pages);
    let mut missing = Vec::new();
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        for (i, _) in text.match_indices("](") {
            let target = &text[i + 2..];
            let Some(end) = target.find(')') else { continue };
            let link = target[..end].split('#').next().unwrap_or_default();
            if link.is_empty() || link.contains("://") || link.starts_with("mailto:") {
                continue;
            }
            let resolved = page.parent().unwrap_or(&root).join(link);
            if !resolved.exists() {
                missing.push(format!("{}: {link}", page.display()));
            }
        }
    }
    assert!(missing.is_empty(), "broken relative links: {missing:#?}");
}

#[test]
fn the_scan_finds_paths_and_skips_the_shared_docs() {
    assert_eq!(
        docs_paths("see docs/METRICS.md, and ../shared/docs/STYLE.md; docs/experiments/ too."),
        ["docs/METRICS.md"]
    );
}
