//! Paths that usually hold credentials. Such files are never read by the file
//! tools: not when a folder or glob reaches them, not when a caller names them, and
//! not through a symlink with an innocent name (the rule is applied to the link's
//! path and to its target's). A model's context is no place for a private key, and
//! a repository can plant `notes.md -> id_rsa` for an agent to follow.

/// Exact names (compared case-insensitively).
pub const SECRET_NAMES: &[&str] = &[
    ".npmrc",
    ".pypirc",
    ".netrc",
    "_netrc",
    ".git-credentials",
    ".pgpass",
    ".htpasswd",
    ".dockercfg",
    ".s3cfg",
    ".boto",
    "authorized_keys",
    "known_hosts",
    "secrets.yml",
    "secrets.yaml",
    "secrets.json",
    "secrets.toml",
    "terraform.tfstate",
    "terraform.tfstate.backup",
    // gcloud's login, Azure's and MSAL's token caches, Vault's and Terraform's tokens.
    "application_default_credentials.json",
    "accesstokens.json",
    "msal_token_cache.json",
    "msal_token_cache.bin",
    ".vault-token",
    ".terraformrc",
    "terraform.rc",
    // Firebase/GCP service account keys under their usual names.
    "serviceaccountkey.json",
    "service-account.json",
    "service_account.json",
    "kubeconfig",
    // Claude Code's account file; rclone's remotes; MySQL's client password; Yarn
    // Berry's npmAuthToken; Gradle's signing and repository passwords; Google API
    // clients' OAuth token.
    ".claude.json",
    "rclone.conf",
    ".my.cnf",
    ".yarnrc.yml",
    "gradle.properties",
    "token.json",
    // Shell and REPL histories: commands typed with tokens in them.
    ".bash_history",
    ".zsh_history",
    ".sh_history",
    ".history",
    "fish_history",
    ".python_history",
    ".node_repl_history",
    ".psql_history",
    ".mysql_history",
    ".sqlite_history",
    ".rediscli_history",
];

/// Files whose name alone is ordinary but whose folder makes them credentials
/// (`/`-separated path endings, compared case-insensitively): git's config can
/// carry a token in a remote URL, docker's and kubectl's configs hold registry and
/// cluster credentials, the GitHub CLI keeps its token in `hosts.yml`.
pub const SECRET_PATH_ENDINGS: &[&str] = &[
    ".git/config",
    ".docker/config.json",
    ".kube/config",
    "gh/hosts.yml",
    ".aws/config",
    // Claude Code's OAuth token, podman's registry logins, gcloud's token database,
    // Maven's server passwords.
    ".claude/.credentials.json",
    ".config/containers/auth.json",
    ".config/gcloud/access_tokens.db",
    ".m2/settings.xml",
];

/// Folders whose every file is treated as a credential (keys there often have
/// names of the user's choosing: `.ssh/github`, `.gnupg/private-keys-v1.d/...`).
pub const SECRET_FOLDERS: &[&str] = &[".ssh", ".gnupg", ".password-store"];

/// Name prefixes: `.env`, `.env.local`, `credentials.json`, `id_rsa.pub`, ...
pub const SECRET_PREFIXES: &[&str] = &[
    ".env",
    "credentials",
    // Google OAuth clients: client_secret_<id>.apps.googleusercontent.com.json.
    "client_secret",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
];

/// Extensions of key and keystore files.
pub const SECRET_EXTENSIONS: &[&str] = &[
    "pem", "key", "p12", "pfx", "jks", "keystore", "ppk", "kdbx", "tfvars", "asc",
];

/// Templates that look like env files but are meant to be shared.
pub const NOT_SECRET: &[&str] = &[
    ".env.example",
    ".env.sample",
    ".env.template",
    ".envrc.example",
];

/// Whether a file called `name` looks like it holds credentials.
///
/// This and [`looks_secret_path`] compare without lowercasing copies: they run for
/// every file a walk finds and again for the file it opens, and their copies (seven
/// allocations a path) were a sixth of the walk's CPU.
pub fn looks_secret(name: &str) -> bool {
    let is = |known: &&str| name.eq_ignore_ascii_case(known);
    if NOT_SECRET.iter().any(is) {
        return false;
    }
    if SECRET_NAMES.iter().any(is) {
        return true;
    }
    if SECRET_PREFIXES
        .iter()
        .any(|prefix| starts_with_ignoring_case(name, prefix))
    {
        return true;
    }
    name.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && SECRET_EXTENSIONS
                .iter()
                .any(|e| ext.eq_ignore_ascii_case(e))
    })
}

/// Whether the file at `relative` (`/`-separated, relative to its root; the path a
/// walk found, a caller named, or a symlink's target) looks like it holds
/// credentials: by its name, its path's ending, or a folder on its way.
pub fn looks_secret_path(relative: &str) -> bool {
    let path = relative.trim_start_matches("./");
    let (folders, name) = path.rsplit_once('/').unwrap_or(("", path));
    if looks_secret(name) {
        return true;
    }
    if SECRET_PATH_ENDINGS
        .iter()
        .any(|end| ends_at_folder(path, end))
    {
        return true;
    }
    !folders.is_empty()
        && folders.split('/').any(|folder| {
            SECRET_FOLDERS
                .iter()
                .any(|f| folder.eq_ignore_ascii_case(f))
        })
}

/// `text` starts with `prefix`, ASCII letters compared case-insensitively.
fn starts_with_ignoring_case(text: &str, prefix: &str) -> bool {
    text.as_bytes()
        .get(..prefix.len())
        .is_some_and(|start| start.eq_ignore_ascii_case(prefix.as_bytes()))
}

/// `path` is `end` or ends with `/` then `end`, ASCII letters compared
/// case-insensitively.
fn ends_at_folder(path: &str, end: &str) -> bool {
    let (path, end) = (path.as_bytes(), end.as_bytes());
    let Some(start) = path.len().checked_sub(end.len()) else {
        return false;
    };
    path[start..].eq_ignore_ascii_case(end) && (start == 0 || path[start - 1] == b'/')
}

/// The rule as one line, for answers and documentation.
pub fn describe() -> String {
    format!(
        "names {}; names starting with {}; paths ending {}; anything under {}; extensions {} (except {})",
        SECRET_NAMES.join(", "),
        SECRET_PREFIXES.join(", "),
        SECRET_PATH_ENDINGS.join(", "),
        SECRET_FOLDERS.join(", "),
        SECRET_EXTENSIONS
            .iter()
            .map(|e| format!(".{e}"))
            .collect::<Vec<_>>()
            .join(", "),
        NOT_SECRET.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_files_look_secret_and_code_does_not() {
        for secret in [
            ".env",
            ".env.local",
            ".ENV.production",
            "server.pem",
            "tls.key",
            "id_rsa",
            "id_ed25519.pub",
            ".npmrc",
            ".pypirc",
            "credentials",
            "credentials.json",
            ".netrc",
            "cert.p12",
            "cert.pfx",
            ".git-credentials",
            "prod.tfvars",
        ] {
            assert!(looks_secret(secret), "{secret}");
        }
        for ordinary in [
            "main.rs",
            "README.md",
            ".env.example",
            "keyboard.rs",
            "monkey.txt",
            "environment.ts",
            "key",
            ".pem",
            "Cargo.toml",
        ] {
            assert!(!looks_secret(ordinary), "{ordinary}");
        }
    }

    /// The rules as first written, on lowercased copies: the comparisons in place
    /// must decide every path the same way.
    fn looks_secret_path_by_copies(relative: &str) -> bool {
        let lower = relative.to_ascii_lowercase();
        let lower = lower.trim_start_matches("./");
        let name = lower.rsplit('/').next().unwrap_or(lower);
        let secret_name = !NOT_SECRET.contains(&name)
            && (SECRET_NAMES.contains(&name)
                || SECRET_PREFIXES.iter().any(|p| name.starts_with(p))
                || name.rsplit_once('.').is_some_and(|(stem, ext)| {
                    !stem.is_empty() && SECRET_EXTENSIONS.contains(&ext)
                }));
        let mut folders = lower.split('/');
        folders.next_back();
        secret_name
            || SECRET_PATH_ENDINGS
                .iter()
                .any(|end| lower == *end || lower.ends_with(&format!("/{end}")))
            || folders.any(|folder| SECRET_FOLDERS.contains(&folder))
    }

    #[test]
    fn comparing_in_place_decides_as_lowercased_copies_do() {
        let mut names: Vec<String> = [
            SECRET_NAMES,
            SECRET_PATH_ENDINGS,
            SECRET_FOLDERS,
            SECRET_PREFIXES,
            NOT_SECRET,
        ]
        .concat()
        .iter()
        .map(|s| s.to_string())
        .collect();
        names.extend(SECRET_EXTENSIONS.iter().map(|e| format!("file.{e}")));
        names.extend(SECRET_EXTENSIONS.iter().map(|e| format!(".{e}")));
        names.extend(
            [
                "",
                ".",
                "./",
                "main.rs",
                "config",
                "git/config",
                "xgit/config",
                ".git",
                "ssh",
                "é.env",
                ".envé",
                "ID_RSA",
                "Secrets.YML",
                "a.PEM.bak",
                ".ENV.EXAMPLE",
                "kubeconfig.yaml",
                "./././.env",
                "/.ssh",
                "a//b",
                "credentials",
                "creds",
                "K\u{212a}ey.pem",
            ]
            .map(String::from),
        );
        let mut cases = Vec::new();
        for name in &names {
            for shape in [
                "{}",
                "src/{}",
                "./{}",
                "a/.SSH/{}",
                "deep/er/{}",
                "{}/x",
                ".Git/{}",
            ] {
                let path = shape.replace("{}", name);
                cases.push(path.to_uppercase());
                cases.push(path);
            }
        }
        for path in &cases {
            assert_eq!(
                looks_secret_path(path),
                looks_secret_path_by_copies(path),
                "{path:?}"
            );
        }
    }

    #[test]
    fn credential_paths_look_secret_by_folder_and_ending() {
        for secret in [
            ".git/config",
            "vendor/lib/.git/config",
            ".docker/config.json",
            "home/.kube/config",
            ".config/gcloud/application_default_credentials.json",
            ".aws/credentials",
            ".ssh/github",
            "x/.gnupg/pubring.kbx",
            "./.env",
            "deploy/id_rsa",
            // Issue 40, M5: each one a file an agent was handed.
            ".claude/.credentials.json",
            "home/me/.claude.json",
            ".config/containers/auth.json",
            ".config/gcloud/access_tokens.db",
            ".config/rclone/rclone.conf",
            ".m2/settings.xml",
            "android/gradle.properties",
            ".my.cnf",
            ".yarnrc.yml",
            "client_secret_1234.apps.googleusercontent.com.json",
            "token.json",
            ".bash_history",
            ".zsh_history",
            ".local/share/fish/fish_history",
            ".python_history",
            ".psql_history",
            ".password-store/work/github.gpg",
        ] {
            assert!(looks_secret_path(secret), "{secret}");
        }
        for ordinary in [
            "src/config.rs",
            "config",
            "docs/git/config.md",
            ".github/workflows/ci.yml",
            "kube/config.yaml",
            "src/ssh/mod.rs",
            // Neighbours of the new rules that are ordinary.
            "src/token.rs",
            "docs/history.md",
            "pom.xml",
            "settings.xml",
            "claude.json",
            "build.gradle",
        ] {
            assert!(!looks_secret_path(ordinary), "{ordinary}");
        }
    }
}
