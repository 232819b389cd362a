//! Files that make code run later (DESIGN §6, the config guardian's list): a change to one
//! decides what a command approved before will run, so the guard, the approvals and a command's
//! landing all judge writes by this one list.
//!
//! Rule: paths are matched workspace-relative and canonical, case-insensitively (macOS file
//! systems are), at any depth (a monorepo's `web/package.json` runs scripts too), build output
//! included: `node_modules/.bin/`, a `.pth` file or a virtualenv's `activate` script in an
//! ignored folder runs code as surely as a `Makefile`.

use std::sync::LazyLock;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// Files that make code run later, as workspace-relative globs.
pub const EXEC_CONFIG_FILES: &[&str] = &[
    "**/package.json",
    "**/.npmrc",
    "**/.yarnrc",
    "**/.yarnrc.yml",
    "**/bunfig.toml",
    "**/deno.json",
    "**/deno.jsonc",
    "**/pyproject.toml",
    "**/setup.py",
    "**/setup.cfg",
    "**/tox.ini",
    "**/noxfile.py",
    "**/Pipfile",
    "**/Cargo.toml",
    "**/build.rs",
    "**/.cargo/config",
    "**/.cargo/config.toml",
    "**/rust-toolchain",
    "**/rust-toolchain.toml",
    "**/Makefile",
    "**/makefile",
    "**/GNUmakefile",
    "**/*.mk",
    "**/CMakeLists.txt",
    "**/meson.build",
    "**/*.gradle",
    "**/*.gradle.kts",
    "**/pom.xml",
    "**/Gemfile",
    "**/Rakefile",
    "**/justfile",
    "**/.justfile",
    "**/Taskfile.yml",
    "**/Taskfile.yaml",
    "**/.git/hooks/**",
    "**/.husky/**",
    "**/lefthook.yml",
    "**/.lefthook.yml",
    "**/.pre-commit-config.yaml",
    "**/.github/workflows/**",
    "**/.github/actions/**",
    "**/.gitlab-ci.yml",
    "**/.circleci/**",
    "**/Jenkinsfile",
    "**/azure-pipelines.yml",
    "**/.envrc",
    "**/.mise.toml",
    "**/mise.toml",
    "**/.tool-versions",
    "**/.vscode/**",
    "**/docker-compose.yml",
    "**/docker-compose.yaml",
    "**/compose.yml",
    "**/compose.yaml",
    // Test runners and linters whose config is code, or names code to load.
    "**/conftest.py",
    "**/sitecustomize.py",
    "**/usercustomize.py",
    "**/*.pth",
    "**/pytest.ini",
    "**/.pylintrc",
    "**/pylintrc",
    "**/mypy.ini",
    "**/hatch.toml",
    "**/*.config.js",
    "**/*.config.cjs",
    "**/*.config.mjs",
    "**/*.config.ts",
    "**/*.config.cts",
    "**/*.config.mts",
    "**/.eslintrc.js",
    "**/.eslintrc.cjs",
    "**/.prettierrc.js",
    "**/.prettierrc.cjs",
    "**/.prettierrc.mjs",
    "**/.babelrc.js",
    "**/.mocharc.js",
    "**/.mocharc.cjs",
    "**/karma.conf.js",
    "**/gulpfile.js",
    "**/Gruntfile.js",
    "**/.pnpmfile.cjs",
    "**/.pnpmfile.js",
    "**/.pnp.cjs",
    "**/.yarn/plugins/**",
    "**/.yarn/releases/**",
    "**/turbo.json",
    "**/nx.json",
    "**/project.json",
    "**/go.mod",
    "**/go.work",
    "**/composer.json",
    "**/mix.exs",
    "**/*.cabal",
    "**/Setup.hs",
    "**/flake.nix",
    "**/shell.nix",
    "**/default.nix",
    "**/conanfile.py",
    "**/SConstruct",
    // (Bazel's `BUILD` and `WORKSPACE` are left out: matched without case they are `build/`.)
    "**/BUILD.bazel",
    "**/MODULE.bazel",
    "**/*.bzl",
    "**/Vagrantfile",
    "**/Tiltfile",
    "**/Earthfile",
    // What package managers put on a PATH or into an interpreter's start.
    "**/node_modules/.bin/**",
    "**/bin/activate",
    "**/bin/activate.*",
    "**/bin/activate_this.py",
    "**/Scripts/activate*",
    // Build wrappers: scripts checked in and run by name, and what they download.
    "**/gradlew",
    "**/gradlew.bat",
    "**/gradle/wrapper/gradle-wrapper.properties",
    "**/gradle.properties",
    "**/mvnw",
    "**/mvnw.cmd",
    "**/.mvn/**",
    // Editor, IDE and dev-container settings that run commands or choose interpreters.
    "**/*.code-workspace",
    "**/.idea/workspace.xml",
    "**/.idea/runConfigurations/**",
    "**/.devcontainer.json",
    "**/.devcontainer/**",
    "**/.zed/settings.json",
    "**/.zed/tasks.json",
    "**/.helix/languages.toml",
    "**/.nvim.lua",
    "**/.exrc",
    // git's own configuration (hooks paths, fsmonitor, filters run commands).
    "**/.git/config",
    // Instructions read into every later agent session's prompt, and agents' own settings.
    "**/AGENTS.md",
    "**/CLAUDE.md",
    "**/GEMINI.md",
    "**/.cursorrules",
    "**/.cursor/rules/**",
    "**/.clinerules",
    "**/.windsurfrules",
    "**/.github/copilot-instructions.md",
    "**/.claude/**",
    // Skills: instructions loaded into a later session and scripts it runs (DESIGN §13.1).
    "**/SKILL.md",
    "**/.agents/skills/**",
];

/// Standard-library modules a file at the top of a Python project would shadow (`json.py`,
/// `os/__init__.py`): every import of them anywhere would run it instead.
const SHADOWED_MODULES: &[&str] = &[
    "abc",
    "argparse",
    "ast",
    "asyncio",
    "base64",
    "builtins",
    "codecs",
    "collections",
    "contextlib",
    "copy",
    "csv",
    "ctypes",
    "dataclasses",
    "datetime",
    "decimal",
    "email",
    "enum",
    "functools",
    "getpass",
    "glob",
    "hashlib",
    "http",
    "importlib",
    "inspect",
    "io",
    "itertools",
    "json",
    "logging",
    "math",
    "multiprocessing",
    "os",
    "pathlib",
    "pickle",
    "platform",
    "pprint",
    "queue",
    "random",
    "re",
    "secrets",
    "select",
    "shlex",
    "shutil",
    "signal",
    "site",
    "socket",
    "sqlite3",
    "ssl",
    "stat",
    "string",
    "struct",
    "subprocess",
    "sys",
    "tempfile",
    "textwrap",
    "threading",
    "time",
    "traceback",
    "types",
    "typing",
    "unittest",
    "urllib",
    "uuid",
    "warnings",
    "weakref",
    "zipfile",
];

static EXEC_CONFIG: LazyLock<Option<GlobSet>> = LazyLock::new(|| {
    let mut builder = GlobSetBuilder::new();
    for pattern in EXEC_CONFIG_FILES {
        let glob = GlobBuilder::new(pattern).case_insensitive(true).literal_separator(true).build().ok()?;
        builder.add(glob);
    }
    // Module names are case-sensitive in Python; at the root and under `src/`, where a
    // project's own imports look first.
    let names = SHADOWED_MODULES.join(",");
    for pattern in ["{NAMES}.py", "{NAMES}/__init__.py", "src/{NAMES}.py", "src/{NAMES}/__init__.py"] {
        let glob = GlobBuilder::new(&pattern.replace("NAMES", &names)).literal_separator(true).build().ok()?;
        builder.add(glob);
    }
    builder.build().ok()
});

/// Whether a workspace-relative POSIX path is a file that makes code run later (the config
/// guardian's list). Approvals use it to forget command approvals when such a file changes.
pub fn is_exec_config(workspace_relative_posix_path: &str) -> bool {
    let path = workspace_relative_posix_path.trim_start_matches("./");
    match EXEC_CONFIG.as_ref() {
        Some(set) => set.is_match(path),
        // The list is fixed and a test proves it compiles; were it not to, every file counts.
        None => true,
    }
}
