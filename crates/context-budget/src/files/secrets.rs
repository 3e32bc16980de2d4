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
];

/// Folders whose every file is treated as a credential (keys there often have
/// names of the user's choosing: `.ssh/github`, `.gnupg/private-keys-v1.d/...`).
pub const SECRET_FOLDERS: &[&str] = &[".ssh", ".gnupg"];

/// Name prefixes: `.env`, `.env.local`, `credentials.json`, `id_rsa.pub`, ...
pub const SECRET_PREFIXES: &[&str] = &[
    ".env",
    "credentials",
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
pub fn looks_secret(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    if NOT_SECRET.contains(&name.as_str()) {
        return false;
    }
    if SECRET_NAMES.contains(&name.as_str()) {
        return true;
    }
    if SECRET_PREFIXES.iter().any(|p| name.starts_with(p)) {
        return true;
    }
    name.rsplit_once('.')
        .is_some_and(|(stem, ext)| !stem.is_empty() && SECRET_EXTENSIONS.contains(&ext))
}

/// Whether the file at `relative` (`/`-separated, relative to its root; the path a
/// walk found, a caller named, or a symlink's target) looks like it holds
/// credentials: by its name, its path's ending, or a folder on its way.
pub fn looks_secret_path(relative: &str) -> bool {
    let lower = relative.to_ascii_lowercase();
    let lower = lower.trim_start_matches("./");
    let name = lower.rsplit('/').next().unwrap_or(lower);
    if looks_secret(name) {
        return true;
    }
    if SECRET_PATH_ENDINGS
        .iter()
        .any(|end| lower == *end || lower.ends_with(&format!("/{end}")))
    {
        return true;
    }
    let mut folders = lower.split('/');
    folders.next_back();
    folders.any(|folder| SECRET_FOLDERS.contains(&folder))
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
        ] {
            assert!(!looks_secret_path(ordinary), "{ordinary}");
        }
    }
}
