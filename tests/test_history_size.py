"""benchmarks/scripts/history_size.py: the history's growth since a commit, by folder, from git's own sizes."""

from __future__ import annotations

import os
import subprocess

from benchmarks.scripts.history_size import group, growth


def _git(repo, *args):
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True, env=env).stdout


def test_growth_counts_only_the_objects_after_the_commit_by_model_folder(tmp_path):
    _git(tmp_path, "init", "-q")
    (tmp_path / "README.md").write_text("old\n")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "base")
    model = tmp_path / "src/spandep/resources/xx/model.bin"
    model.parent.mkdir(parents=True)
    model.write_bytes(os.urandom(20_000))  # incompressible: about its size in the object store
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs/a.md").write_text("text\n")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "model")
    sizes = growth("HEAD~1", "HEAD", tmp_path)
    assert 20_000 <= sizes["src/spandep/resources/xx"] <= 21_000  # the blob and its folder's tree
    assert "README.md" not in sizes and 0 < sizes["docs/a.md"] < 1_000
    assert growth("HEAD", "HEAD", tmp_path) == {}


def test_group_names_a_model_folder_or_the_first_two_parts():
    assert group("src/spandep/resources/multilingual/tokenizers/de_gsd/config.json") == "src/spandep/resources/multilingual"
    assert group("src/spandep/resources/catalogue.json") == "src/spandep/resources/catalogue.json"
    assert group("benchmarks/results/raw/x.json") == "benchmarks/results" and group("README.md") == "README.md"
