//! Which project `clarify mcp` runs in: the git repository's top-level
//! folder (or the working directory) names the task, and the branch, when
//! there is one, goes in the session's description. Read from the files
//! alone: no program is run to find out.

use std::fs;
use std::path::{Path, PathBuf};

/// Where the agent works.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Project {
    /// The repository's (or the folder's) name.
    pub name: String,
    /// The checked-out branch, if known.
    pub branch: Option<String>,
}

impl Project {
    /// The project around `dir`: the nearest folder holding `.git` (a
    /// folder, or a file as in worktrees and submodules), else `dir`.
    #[must_use]
    pub fn around(dir: &Path) -> Self {
        let top = dir.ancestors().find(|d| d.join(".git").exists());
        let root = top.unwrap_or(dir);
        let name = root.file_name().map_or_else(
            || root.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let name = if name.trim().is_empty() {
            "project".to_owned()
        } else {
            name
        };
        Self {
            name,
            branch: top.and_then(|top| git_dir(top).and_then(|git| branch(&git))),
        }
    }
}

/// The repository's git folder: `.git` itself, or where a `.git` file's
/// `gitdir:` line points.
fn git_dir(top: &Path) -> Option<PathBuf> {
    let dot_git = top.join(".git");
    if dot_git.is_dir() {
        return Some(dot_git);
    }
    let text = fs::read_to_string(&dot_git).ok()?;
    let target = text.strip_prefix("gitdir:")?.trim();
    Some(top.join(target))
}

/// The branch `HEAD` names (`ref: refs/heads/NAME`); none when detached.
fn branch(git_dir: &Path) -> Option<String> {
    let head = fs::read_to_string(git_dir.join("HEAD")).ok()?;
    head.trim()
        .strip_prefix("ref: refs/heads/")
        .filter(|b| !b.is_empty())
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("clarify-project-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_repository_is_named_by_its_top_folder_with_its_branch() {
        let root = scratch("repo").join("my-service");
        fs::create_dir_all(root.join(".git")).unwrap();
        fs::write(root.join(".git/HEAD"), "ref: refs/heads/feature/login\n").unwrap();
        let inner = root.join("src/deep");
        fs::create_dir_all(&inner).unwrap();
        assert_eq!(
            Project::around(&inner),
            Project {
                name: "my-service".into(),
                branch: Some("feature/login".into())
            }
        );
    }

    #[test]
    fn a_worktree_follows_its_gitdir_and_a_detached_head_has_no_branch() {
        let base = scratch("worktree");
        let git = base.join("main/.git/worktrees/wt");
        fs::create_dir_all(&git).unwrap();
        fs::write(git.join("HEAD"), "ref: refs/heads/fix\n").unwrap();
        let tree = base.join("wt");
        fs::create_dir_all(&tree).unwrap();
        fs::write(tree.join(".git"), format!("gitdir: {}\n", git.display())).unwrap();
        assert_eq!(Project::around(&tree).branch.as_deref(), Some("fix"));

        fs::write(git.join("HEAD"), "3f1c0ffee\n").unwrap();
        assert_eq!(Project::around(&tree).branch, None);
    }

    #[test]
    fn outside_a_repository_the_folder_names_the_project() {
        let dir = scratch("plain").join("notes");
        fs::create_dir_all(&dir).unwrap();
        let project = Project::around(&dir);
        // The temp folder itself may sit inside a repository on some
        // machines; the name is then that repository's, never empty.
        assert!(!project.name.is_empty());
        if !dir.ancestors().any(|d| d.join(".git").exists()) {
            assert_eq!(project.name, "notes");
            assert_eq!(project.branch, None);
        }
    }
}
