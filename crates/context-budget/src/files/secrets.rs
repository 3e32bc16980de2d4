//! File names that usually hold credentials. Such files are skipped when a folder
//! or glob reaches them, and read only when a caller names the file itself: an
//! agent asking for `src/` should never pull a private key into a model's context
//! by accident.

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
];

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

/// The rule as one line, for answers and documentation.
pub fn describe() -> String {
    format!(
        "names {}; names starting with {}; extensions {} (except {})",
        SECRET_NAMES.join(", "),
        SECRET_PREFIXES.join(", "),
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
}
